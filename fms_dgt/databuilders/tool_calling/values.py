"""Arguments for the calls of one record that agree with each other.

A record is about *someone* doing *something*: one user (name, email, user id), one city with its
country and code, one trip from a start date to a later end date, one order, one amount. An
:class:`EntityContext`, seeded per record, holds those entities; :func:`arguments` synthesises a
tool's arguments from it:

* an argument that names an entity the context already fixed reuses its value (``user_id`` in the
  second call is the ``user_id`` of the first, ``city`` and ``country_code`` agree, ``check_in``
  comes before ``check_out``), rendered for the argument's schema (``usr-48213`` or ``48213``);
* an entity seen for the first time is drawn from :mod:`fms_dgt.core.tools.fakes` and added;
* ``fixed`` arguments (wired from earlier results by the job) win, and become the context's
  entities when it had none for them;
* everything else is a realistic value for its name, or schema-valid synthesis.

Arguments always validate against the tool's schema
(:func:`fms_dgt.core.tools.schema.get_validator`): a value the schema refuses is synthesised again,
never sent. :meth:`EntityContext.conflicts` lists calls that disagree on an entity (the run's
quality report counts them; the target is none).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.engines.implementations import dimension, implementation_for, is_setting
from fms_dgt.core.tools.engines.mock import call_seed
from fms_dgt.core.tools.fakes import (
    FakeHooks,
    Kind,
    Scope,
    canonical,
    place_named,
    remembers,
    tokens,
    types_of,
)
from fms_dgt.core.tools.schema import get_validator
from fms_dgt.core.tools.synth import Path, SynthesisError, synthesise
from fms_dgt.databuilders.tool_calling.plan import PlannedCall
from fms_dgt.databuilders.tool_calling.wiring import apart, classify_at, property_of

__all__ = ["OPTIONAL_BUDGET", "EntityContext", "arguments"]

#: Attempts at repairing an argument the schema refuses before plain synthesis takes over.
_REPAIRS = 8


class EntityContext:
    """The entities of one record: people, places, dates, ids, amounts...

    Args:
        rng: the record's random source for entities (seed it from the run seed and the record
            index; :meth:`for_record` does).
    """

    __slots__ = ("scope",)

    def __init__(self, rng: random.Random) -> None:
        self.scope = Scope(rng)

    @classmethod
    def for_record(cls, seed: int, index: int) -> EntityContext:
        """The context of record ``index`` of a run seeded ``seed`` (the same in any process)."""
        return cls(random.Random(call_seed("entities", seed, index)))

    def kind(self, tool: Tool, name: str) -> Kind | None:
        """What argument ``name`` of ``tool`` stands for (None when nothing says)."""
        schema = property_of(tool.parameters, name)
        return classify_at(tool, name, schema)

    def apart(self, source: Tool, output: str, target: Tool, name: str) -> bool:
        """Whether output ``output`` of ``source`` stands for another kind of thing than argument
        ``name`` of ``target`` (see :func:`apart`)."""
        return apart(source, output, target, name)

    def adopt(self, tool: Tool, values: Mapping[str, Any]) -> None:
        """Take given argument values (wired from results) as entities the context lacks."""
        for name, value in values.items():
            kind = self.kind(tool, name)
            if kind is not None:
                self.scope.adopt(kind, value)

    def learn(self, tool: Tool, result: Any) -> None:
        """Take the entities a call's result names (a created order's id) for later calls."""
        if not isinstance(result, Mapping):
            return
        for name, value in result.items():
            kind = classify_at(tool, str(name), property_of(tool.output_parameters, str(name)))
            if kind is not None and remembers(kind) and not isinstance(value, (Mapping, list)):
                self.scope.adopt(kind, value)

    def conflicts(self, calls: Iterable[PlannedCall | tuple[Tool, Mapping[str, Any]]]) -> list[str]:
        """Every disagreement between the calls on an entity, as sentences (empty when coherent).

        Two calls giving different values for one entity (two user ids, two check-in dates), a
        city and a country code of different countries, or an end before its start are listed.
        A value wired from an earlier result counts only when it names a person (a user id, an
        email): the record has one user, whatever call found them. Other wired values are what a
        call returned (the booking just made, the amount just converted) and may rightly differ
        from the ones the user stated.
        """
        seen: list[_Seen] = []
        for i, call in enumerate(calls):
            tool, args = (call.tool, call.call.arguments) if isinstance(call, PlannedCall) else call
            wired = call.wired if isinstance(call, PlannedCall) else {}
            for name, value in args.items():
                for kind, found in _walk(tool, {name: value}, tool.parameters, ""):
                    if name not in wired or _names_a_person(kind):
                        seen.append(_Seen(i, tool.qualified_name, kind, found))
        found = [*_disagreements(seen), *_places_apart(seen), *_ends_before_starts(seen)]
        return list(dict.fromkeys(found))

    def values(self) -> dict[str, Any]:
        """The entities fixed so far, JSON-ready (for :attr:`RecordPlan.context`)."""
        return self.scope.snapshot()


def arguments(
    tool: Tool,
    context: EntityContext,
    rng: random.Random,
    *,
    fixed: Mapping[str, Any] | None = None,
    optional_probability: float = 0.5,
) -> dict[str, Any]:
    """Arguments for one call of ``tool`` that agree with the record's ``context``.

    Args:
        tool: the tool called.
        context: the record's entities (read and extended).
        rng: the call's random source (which optional arguments, which free values).
        fixed: arguments already decided (wired from earlier results); they win.
        optional_probability: chance that an optional argument is given, lowered for a tool
            with many so that about :data:`OPTIONAL_BUDGET` of them are (a person asking to
            search PeerTube's videos names a filter or two, not twenty).

    Raises:
        SynthesisError: no valid arguments exist, or a fixed value does not validate.
    """
    fixed = dict(fixed or {})
    props = tool.parameters.get("properties")
    if isinstance(props, Mapping) and props:
        required = tool.parameters.get("required")
        optional = len(set(props) - set(required if isinstance(required, list) else ()))
        if optional:
            optional_probability = min(optional_probability, OPTIONAL_BUDGET / optional)
    context.adopt(tool, fixed)
    validator = get_validator(tool.parameters, tool.fingerprint)
    hooks = _ArgumentHooks(context.scope, topic=tool.name, fixed=fixed, kinds=_leaf_kinds(tool))
    try:
        args = synthesise(
            tool.parameters,
            rng,
            optional_probability=optional_probability,
            fingerprint=tool.fingerprint,
            hooks=hooks,
            attempts=1,
        )
    except SynthesisError:
        args = {}
    args = {**args, **fixed} if isinstance(args, dict) else dict(fixed)
    subject = _subject(tool) if not args else None
    if subject is not None:  # When2Call's by_city_name({}): "fetch weather data" for nowhere
        try:
            found = synthesise(
                {**tool.parameters, "required": [subject]},
                rng,
                optional_probability=optional_probability,
                validator=validator,  # the tool's own: no fingerprint of a schema made per call
                hooks=hooks,
                attempts=1,
            )
        except SynthesisError:
            found = {}
        args = found if isinstance(found, dict) else args
    if not validator.is_valid(args):
        args = _repaired(tool, args, fixed, rng, optional_probability)
    ordered = _in_order(args, fixed)
    args = ordered if ordered is not args and validator.is_valid(ordered) else args
    alike = _one_measure(args, fixed, rng, props if isinstance(props, Mapping) else {})
    return alike if alike is not args and validator.is_valid(alike) else args


#: Units a conversion's target is drawn from when it measured another thing than its source.
_UNITS: tuple[str, ...] = ("meter", "kilometer", "foot", "mile", "inch", "yard", "kilogram", "pound", "gram")
_UNITS += ("ounce",)
_UNITS += ("liter", "gallon", "milliliter", "celsius", "fahrenheit", "kelvin", "hour", "minute")


def _one_measure(
    args: dict[str, Any], fixed: Mapping[str, Any], rng: random.Random, props: Mapping[str, Any]
) -> dict[str, Any]:
    """A conversion's two units of one measure: ``si_unit_conversion(unit_in="pound",
    unit_out="foot")`` has no answer; its target is drawn again among the units of the source's
    measure it allows, else its source among those of the target's (a unit wired or given is
    kept). ``args`` itself when there is nothing to change."""
    units = {k: dimension(v) for k, v in args.items() if isinstance(v, str) and len(v) < 20 and dimension(v)}
    source = next((k for k in units if set(tokens(k)) & {"from", "in", "source", "input"}), None)
    target = next((k for k in units if set(tokens(k)) & {"to", "out", "target", "output"}), None)
    if source is None or target is None or units[source] == units[target]:
        return args
    for changed, kept in ((target, source), (source, target)):  # the target first; else the source
        if changed in fixed:
            continue
        own = props.get(changed)
        offered = own.get("enum") if isinstance(own, Mapping) else None  # the units it allows
        pool = [u for u in offered if isinstance(u, str)] if isinstance(offered, list) else list(_UNITS)
        kept_unit = str(args[kept]).lower()
        others = [u for u in pool if dimension(u) == units[kept] and u.lower() != kept_unit]
        if others:
            return {**args, changed: rng.choice(others)}
    return args


def _subject(tool: Tool) -> str | None:
    """The argument that says what a call of a tool whose every argument is optional is about
    (a city, a query, a symbol, an id), if it has one: such a call is made with it."""
    props = tool.parameters.get("properties")
    required = tool.parameters.get("required")
    if not isinstance(props, Mapping) or not props or (isinstance(required, list) and required):
        return None
    return next((n for n in props if set(tokens(str(n))[-1:]) & _SUBJECTS), None)


#: Last words of an argument that says what a call is about.
_SUBJECTS = frozenset({"q", "query", "search", "keyword", "keywords", "term", "city", "location", "name"})
_SUBJECTS |= frozenset({"symbol", "ticker", "id", "address", "url", "text", "country", "username", "email"})
_SUBJECTS |= frozenset({"title", "word", "topic", "isbn", "code", "ids", "user", "domain", "zipcode"})


#: About how many optional arguments a call gives when its tool has many.
OPTIONAL_BUDGET = 2.0
#: A name that bounds a range from below or above: ``duration_gte``, ``priceMax``, ``min_price``,
#: or, inside an object, a bare ``gte`` (Stripe's ``created: {gte, lte}``).
_BOUNDS = "gte|gt|lte|lt|min|max|from|to|after|before|since|until"
_BOUND = re.compile(
    rf"^(?:(?P<stem>.+?)(?:_|(?=[A-Z]))(?P<end>(?i:{_BOUNDS}))"
    rf"|(?P<pre>(?i:min|max))(?:_|(?=[A-Z]))(?P<rest>.+)|(?P<bare>(?i:{_BOUNDS})))$"
)
_LOWER = frozenset({"gte", "gt", "min", "from", "after", "since"})
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}")


def _in_order(args: dict[str, Any], fixed: Mapping[str, Any]) -> dict[str, Any]:
    """``args`` with each range's bounds in order (``duration_gte`` 99.69 and ``duration_lte``
    3.31 swapped: a filter whose lower bound is above its upper one finds nothing), also inside
    objects; wired values stay. ``args`` itself when every range is in order."""
    ranges: dict[str, dict[bool, list[str]]] = {}
    for name in args:
        found = _BOUND.match(name)
        if found:
            stem = (found["stem"] or found["rest"] or "").lower().replace("_", "")
            bound = (found["end"] or found["pre"] or found["bare"]).lower()
            ranges.setdefault(stem, {True: [], False: []})[bound in _LOWER].append(name)
    out = args
    for bounds in ranges.values():
        if len(bounds[True]) == 1 and len(bounds[False]) == 1:
            low, high = bounds[True][0], bounds[False][0]
            if not _above(args[low], args[high]) or (low in fixed and high in fixed):
                continue
            if low in fixed or high in fixed:  # a wired bound stays; the other moves past it
                out = {**out, **_past_wired(args, low, high, low in fixed)}
            else:
                out = {**out, low: args[high], high: args[low]}
    for name, value in args.items():
        if isinstance(value, dict) and name not in fixed:
            inner = _in_order(value, {})
            out = out if inner is value else {**out, name: inner}
    return out


def _past_wired(args: Mapping[str, Any], low: str, high: str, low_wired: bool) -> dict[str, Any]:
    """The bound of a range that was not wired, moved to its side of the wired one (a random
    number 'at most 3' from a wired minimum of 44.49 becomes at most 88.98); dates stay."""
    wired, other = (args[low], args[high]) if low_wired else (args[high], args[low])
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (wired, other)):
        return {}
    gap = max(abs(wired - other), 1)
    moved = wired + gap if low_wired else wired - gap
    moved = round(moved) if isinstance(other, int) else round(moved, 2)
    return {high if low_wired else low: moved}


def _above(low: Any, high: Any) -> bool:
    """Whether a range's lower bound is above its upper one (numbers, or ISO dates of one form)."""
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (low, high))
    if numbers:
        return bool(low > high)
    dates = all(isinstance(v, str) and _ISO.match(v) for v in (low, high))
    return dates and len(low) == len(high) and low > high


class _ArgumentHooks(FakeHooks):
    """Leaves from the record's context; wired arguments are taken as given."""

    def __init__(
        self,
        scope: Scope,
        *,
        topic: str,
        fixed: Mapping[str, Any],
        kinds: dict[tuple[int, str], tuple[Mapping[str, Any], Kind | None]],
    ) -> None:
        super().__init__(scope, topic=topic, kinds=kinds)
        self.fixed = fixed
        self.computes = implementation_for(topic) is not None

    def leaf(self, schema: Mapping[str, Any], name: str, path: Path) -> Any:
        if len(path) == 1 and path[0] in self.fixed:
            return self.fixed[str(path[0])]
        return super().leaf(schema, name, path)

    def include(self, schema: Mapping[str, Any], name: str, path: Path) -> bool | None:
        """Every operand of a tool the engine computes (glaive's multiply was asked for "two
        numbers: 99.3"); how to compute (a precision) stays optional."""
        if len(path) != 1 or not self.computes or is_setting(name):
            return None
        kinds = (types_of(schema) or frozenset()) | (types_of(schema.get("items")) or frozenset())
        return True if {"number", "integer"} & kinds else None

    def count(self, schema: Mapping[str, Any], name: str, path: Path, low: int, high: int) -> int | None:
        """A list of numbers, of any tool, holds a few (When2Call summed "the numbers [6]")."""
        numeric = bool({"number", "integer"} & (types_of(schema.get("items")) or frozenset()))
        return self.scope.rng.randint(max(low, 2), max(low, 2, min(high, 5))) if numeric else None


_LEAF_KINDS: dict[Tool, dict[tuple[int, str], tuple[Mapping[str, Any], Kind | None]]] = {}


def _leaf_kinds(tool: Tool) -> dict[tuple[int, str], tuple[Mapping[str, Any], Kind | None]]:
    """The kinds of a tool's argument leaves, worked out once per tool."""
    kinds = _LEAF_KINDS.get(tool)
    if kinds is None:
        if len(_LEAF_KINDS) >= 20_000:
            _LEAF_KINDS.clear()  # registries refreshed many times over: start afresh
        kinds = _LEAF_KINDS[tool] = {}
    return kinds


def _repaired(
    tool: Tool, args: dict[str, Any], fixed: Mapping[str, Any], rng: random.Random, optional: float
) -> dict[str, Any]:
    """``args`` with what the schema refuses replaced by plain synthesis, argument by argument."""
    validator = get_validator(tool.parameters, tool.fingerprint)
    plain, impossible = _plain_arguments(tool, rng, optional)
    for _ in range(_REPAIRS):
        found = validator.locate(args)
        if found is None:
            return args
        top = _top_level(found[1])
        if top is not None and top not in fixed:
            if top in plain:
                args[top] = plain[top]
            else:
                args.pop(top, None)
            continue
        # The whole object is refused (``not``, ``dependentRequired``...): one argument less or
        # one more from plain synthesis may be enough.
        retried = _one_less_or_more(tool, args, plain, fixed)
        if retried is None:
            break
        args = retried
    args = {**plain, **fixed}
    found = validator.locate(args)
    if found is None:
        return args
    if impossible is not None:  # the schema itself admits no value: say why, not what is missing
        raise impossible
    raise SynthesisError(
        f"cannot give {tool.qualified_name} valid arguments with the values wired into "
        f"{', '.join(sorted(fixed)) or 'none'}: {found[0]} (at {found[1] or '/'}). Wire only "
        "values that validate against the argument's schema"
    )


def _plain_arguments(
    tool: Tool, rng: random.Random, optional: float
) -> tuple[dict[str, Any], SynthesisError | None]:
    """Plain schema-valid synthesis, or no arguments and the reason when even that finds nothing."""
    try:
        value = synthesise(
            tool.parameters, rng, optional_probability=optional, fingerprint=tool.fingerprint, attempts=10
        )
    except SynthesisError as exc:
        return {}, exc
    return (value if isinstance(value, dict) else {}), None


def _one_less_or_more(
    tool: Tool, args: dict[str, Any], plain: Mapping[str, Any], fixed: Mapping[str, Any]
) -> dict[str, Any] | None:
    validator = get_validator(tool.parameters, tool.fingerprint)
    required = set(tool.parameters.get("required") or ())
    for name in args:
        if name not in required and name not in fixed:
            fewer = {k: v for k, v in args.items() if k != name}
            if validator.is_valid(fewer):
                return fewer
    for name, value in plain.items():
        if name not in args and validator.is_valid({**args, name: value}):
            return {**args, name: value}
    return None


def _top_level(pointer: str) -> str | None:
    if not pointer.startswith("/"):
        return None
    return pointer[1:].split("/", 1)[0].replace("~1", "/").replace("~0", "~")


#: Entities of an id that stand for a person (see :meth:`EntityContext.conflicts`).
_PEOPLE_IDS = frozenset({"user", "customer", "account", "member", "person", "client", "patient", "employee"})


def _names_a_person(kind: Kind) -> bool:
    return kind.family == "person" or (kind.family == "id" and kind.field in _PEOPLE_IDS)


def _walk(
    tool: Tool, values: Mapping[str, Any], schema: Mapping[str, Any], parent: str
) -> Iterator[tuple[Kind, Any]]:
    """``(kind, value)`` of every entity value among ``values`` (nested objects included)."""
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    for name, value in values.items():
        sub = props.get(name)
        sub = sub if isinstance(sub, Mapping) else {}
        if isinstance(value, Mapping):
            yield from _walk(tool, value, sub, str(name))
        elif not isinstance(value, list) and value is not None:
            kind = classify_at(tool, str(name), sub, parent)
            if kind is not None and remembers(kind):
                yield kind, value


class _Seen:
    """One entity value in one call."""

    __slots__ = ("call", "form", "kind", "style", "tool", "value")

    def __init__(self, call: int, tool: str, kind: Kind, value: Any) -> None:
        self.call, self.tool, self.kind, self.value = call, tool, kind, value
        self.style, self.form = canonical(kind, value)

    def where(self) -> str:
        return f"call {self.call} ({self.tool})"

    def pair(self, other: _Seen) -> str:
        """``call 0 (a::x) and call 2 (b::y)``, or ``call 0 (a::x)`` within one call."""
        return self.where() if other.call == self.call else f"{self.where()} and {other.where()}"


def _disagreements(seen: list[_Seen]) -> Iterator[str]:
    first: dict[tuple[str, str], _Seen] = {}
    for item in seen:
        earlier = first.setdefault((item.kind.key, item.style), item)
        if earlier.form != item.form:
            yield f"{earlier.pair(item)}: {item.kind.key} is {earlier.value!r} and {item.value!r}"


def _places_apart(seen: list[_Seen]) -> Iterator[str]:
    """A city and a country (or code) of one role that belong to different countries."""
    cities = [s for s in seen if s.kind.family == "place" and s.kind.field in ("city", "location")]
    countries = [s for s in seen if s.kind.family == "place" and s.kind.field in ("country", "country_code")]
    for city in cities:
        place = place_named(city.value)
        if place is None or place.city.lower() != city.form:
            continue
        for country in countries:
            if country.kind.role == city.kind.role and country.form not in (
                place.code,
                place.country.lower(),
            ):
                yield (
                    f"{city.pair(country)}: {city.value!r} is in {place.country} ({place.code}), "
                    f"not {country.value!r}"
                )


def _ends_before_starts(seen: list[_Seen]) -> Iterator[str]:
    starts = [s for s in seen if s.kind.family == "date" and s.kind.field == "start"]
    ends = [s for s in seen if s.kind.family == "date" and s.kind.field == "end"]
    for start in starts:
        for end in ends:
            if end.style == start.style and end.style != "text" and end.form < start.form:
                yield f"{start.pair(end)}: the end {end.value!r} comes before the start {start.value!r}"
