"""How a later request names the values its calls take from earlier calls.

A wired value reaches the conversation in one of two ways:

* only through an earlier result (a created pet's id, a geocoded latitude): the request points at
  that result, "use the ID from that", "once you have the latitude and longitude";
* through an earlier call's own argument too, which its result repeats (a forecast answers the
  ``city`` it was asked for, a looked-up pet its ``petId``): the user said it already, so the
  request names the thing again, "get the current weather for that city", "delete that pet",
  never "take the city from that" (:attr:`~fms_dgt.databuilders.tool_calling.plan.Wire.echoes`).
"""

from __future__ import annotations

import random
import re

from fms_dgt.core.tools.artifacts import leaf_name
from fms_dgt.databuilders.tool_calling import templates
from fms_dgt.databuilders.tool_calling.plan import PlannedCall, RecordPlan, Wire
from fms_dgt.databuilders.tool_calling.wording import (
    humanize,
    implementation_notes,
    join_words,
    label,
    purpose_of,
)

__all__ = ["fresh", "named_again", "pointed", "reference"]

#: Trailing words that name how a thing is referred to, not the thing ("pet ID" -> "pet").
_HANDLE_WORDS = frozenset(
    {"id", "ids", "identifier", "key", "code", "name", "number", "no", "uuid", "slug", "handle"}
)
_COORDINATES = ("latitude", "longitude")
#: Things said as "that city", "the same customer" (a US state is a filter's state as often).
_ENTITIES = frozenset(
    {"city", "town", "country", "location", "place", "region", "area", "venue", "address", "county"}
    | {"province", "user", "customer", "patient", "person", "player", "team", "company", "artist"}
    | {"author", "doctor", "employee", "owner", "contact", "account", "symbol", "ticker", "stock"}
)


def fresh(call: PlannedCall) -> dict[str, Wire]:
    """The wired arguments of ``call`` whose values only an earlier result holds."""
    return {name: wire for name, wire in call.wired.items() if not wire.echoes}


def pointed(call: PlannedCall) -> dict[str, Wire]:
    """The wired arguments of ``call`` that the request points at a result for ("use the ID from
    that"): those only an earlier result holds, except an identifier of the very thing the call
    acts on, which its object names instead ("add a pet for Daisy. Then delete that pet.")."""
    said = _said_in_object(call)
    return {name: wire for name, wire in fresh(call).items() if name not in said}


def _said_in_object(call: PlannedCall) -> list[str]:
    """The fresh identifier arguments whose thing the call's object names ("a pet" for ``petId``
    of "delete a pet") and the tool it comes from is about ("add a pet", "list pets"), one per
    place the object names a thing."""
    core = purpose_of(call.tool).core
    found: dict[int, str] = {}  # where the object names the thing -> the argument
    for name, wire in fresh(call).items():
        words = label(name).split()
        if len(words) < 2 or words[-1].lower() not in _ID_HANDLES:
            continue
        thing = _thing(name)
        source = wire.source.rpartition("::")[2]
        if not re.search(rf"\b{re.escape(thing)}(?:s|es)?\b", humanize(source), re.IGNORECASE):
            continue  # a geocoded place's id is no pet: the request points at the result
        match = _named_thing(core, thing)
        if match is not None:
            found.setdefault(match.start(), name)
    return list(found.values())


def _named_thing(core: str, thing: str) -> re.Match[str] | None:
    """Where ``core`` names ``thing`` with an article ("delete a pet" names a pet)."""
    return re.search(rf"\b(?:a|an|the|some|one)\s+{re.escape(thing)}\b", core, re.IGNORECASE)


#: Handle words of an identifier (a name or a number may be a value of its own: a pet's name).
_ID_HANDLES = frozenset({"id", "identifier", "uuid", "key", "slug"})


def reference(plan: RecordPlan, index: int, call: PlannedCall, rng: random.Random) -> str:
    """How the request names the values ``call`` takes from results only ("the latitude and
    longitude", "the ID from that", "the first of the IDs")."""
    wires = pointed(call)
    sources = {wire.source for wire in wires.values()}
    outputs = [humanize(leaf_name(wire.output)) for wire in wires.values()]
    # an output named like an implementation note (SureVoIP's file_internal) is no name to say
    outputs = [o for o in outputs if o and "result" not in o and not implementation_notes(o)]
    previous = {c.tool.qualified_name for c in plan.steps[index - 1]}
    if not outputs:
        return rng.choice(templates.REFS)
    said = f"the {join_words(list(dict.fromkeys(outputs)))}"
    listed = [wire.output for wire in wires.values() if "[]" in wire.output]
    if listed:  # a wire reads a list's first item: "remove a pet" must say which pet
        said = f"the first of {said}" if all(o.endswith("[]") for o in listed) else f"{said} of the first one"
    if sources <= previous:
        return said if rng.random() < 0.6 else f"{said} from that"
    source = next(c for c in plan.calls if c.tool.qualified_name in sources)
    return f"{said} from {purpose_of(source.tool).core}"


def named_again(core: str, call: PlannedCall, rng: random.Random) -> tuple[str, list[str]]:
    """The object ``core`` of ``call``'s request with the things its echoed values name said again,
    and the phrases to add after it.

    The thing is named in the object when it is there ("delete a pet" -> "delete that pet" for an
    echoed ``petId``), else after it: a place, a person or a thing named by an id is "for that
    city", "for the same dag"; another value is "with the same amount", or "with that new price
    as the selling price" when the earlier call called it something else. A latitude and a
    longitude are "at the same coordinates", a bare ``id`` "with the same ID".
    """
    echoed = {name: wire.echoes for name, wire in call.wired.items() if wire.echoes}
    phrases: list[str] = []
    for name in _said_in_object(call):  # a fresh id of what the call acts on: "delete that pet"
        wire = call.wired[name]
        which = "the first" if wire.output.endswith("[]") or "[]." in wire.output else "that"
        match = _named_thing(core, _thing(name))
        if match is not None:
            core = f"{core[: match.start()]}{which} {_thing(name)}{core[match.end() :]}"
    place = [name for name in echoed if humanize(name).lower() in _COORDINATES]
    if len(place) == 2:
        phrases.append("at the same coordinates")
        echoed = {name: earlier for name, earlier in echoed.items() if name not in place}
    for name, earlier in echoed.items():
        thing = _thing(name)
        if thing.lower() in _HANDLE_WORDS:
            phrases.append(f"with the same {thing}")
            continue
        which = rng.choice(("that", "the same"))
        for said in dict.fromkeys((thing, _thing(earlier))):
            match = _named_thing(core, said)
            if match is not None:
                core = f"{core[: match.start()]}{which} {said}{core[match.end() :]}"
                break
        else:
            phrases.append(_again(name, earlier, thing, which))
    return core, phrases


def _again(name: str, earlier: str, thing: str, which: str) -> str:
    """The phrase naming an echoed value the object does not hold."""
    last = thing.split()[-1].lower()
    if thing != label(name) or last in _ENTITIES:  # "for that dag", "for the same city"
        return f"for {which} {thing}"
    if label(earlier).lower() == label(name).lower():
        return f"with the same {thing}"
    return f"with that {label(earlier)} as the {thing}"  # new_price into selling_price


def _thing(name: str) -> str:
    """What an argument names, without the word for how ("pet ID" -> "pet", "city name" -> "city")."""
    words = label(name).split()
    while len(words) > 1 and words[-1].lower() in _HANDLE_WORDS:
        words.pop()
    return " ".join(words)
