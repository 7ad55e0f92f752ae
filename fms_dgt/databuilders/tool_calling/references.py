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
from fms_dgt.databuilders.tool_calling.wording import humanize, join_words, label, purpose_of

__all__ = ["fresh", "named_again", "reference"]

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


def reference(plan: RecordPlan, index: int, call: PlannedCall, rng: random.Random) -> str:
    """How the request names the values ``call`` takes from results only ("the latitude and
    longitude", "the ID from that", "the first of the IDs")."""
    wires = fresh(call)
    sources = {wire.source for wire in wires.values()}
    outputs = [humanize(leaf_name(wire.output)) for wire in wires.values()]
    outputs = [o for o in outputs if o and o != "(result)" and "result" not in o]
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
            match = re.search(rf"\b(?:a|an|the|some|one)\s+{re.escape(said)}\b", core, re.IGNORECASE)
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
