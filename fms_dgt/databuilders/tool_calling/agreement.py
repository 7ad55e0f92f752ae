"""Simulated results that agree with what the record already said about the same entity.

A mock result is synthesised from the call alone: after ``add_pet(name="Luna")`` gave
``{"id": "pet-45868", "name": "Luna"}``, a later ``get_pet(id="pet-45868")`` echoes the id but
makes up the rest (``"name": "Milo"``). A reader sees one pet with two names. :func:`agree` takes
such a result and, for every object in it whose id an earlier result of the record named, copies
the earlier object's values for the fields both have (same name, same JSON type). Only simulated
results are changed (a real server's answer is what it is), and only when the agreed value still
validates against the tool's output schema.

:func:`same_weather` does the same for the weather of one place: a made-up reading for a city or a
coordinate an earlier result gave the weather of takes that temperature (on its own scale) and sky.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fms_dgt.core.tools.engines.results import asks_fahrenheit

__all__ = ["AGREEING", "agree", "alike", "distinctive", "same_weather"]

#: The mock sources (``metadata["mock"]``) whose values were made up, so may be brought to agree.
AGREEING = frozenset({"example", "synthesised", "shaped"})

# ``id``, ``pet_id``, ``petId``, ``order-id``: the fields that name an entity.
_ID = re.compile(r"^(?:id|Id|ID)$|[_\-.](?:id|Id|ID)$|(?<=[a-z0-9])(?:Id|ID)$")
_NOT_ALNUM = re.compile(r"[^a-z0-9]")


def agree(value: Any, earlier: Iterable[Any], arguments: Mapping[str, Any]) -> tuple[Any, list[str]]:
    """``value`` with each object that names an earlier object's id taking that object's fields.

    A field named like one of the call's ``arguments`` keeps its value: the call set it (an
    update's new start time is not the old one).

    Returns:
        The agreed value (``value`` itself when nothing changed) and the paths of the fields
        that changed (JSON pointers).
    """
    known: dict[Any, Mapping[str, Any]] = {}
    for result in earlier:
        for item in _objects(result):
            for ident in _ids(item):
                known.setdefault(ident, item)
            updated = _updated(item)
            if updated:  # a stock's new price is its price from then on
                known[(_SYMBOLED, updated[0])] = updated[1]
    if not known:
        return value, []
    changed: list[str] = []
    given = frozenset(_plain(k) for k in arguments)
    asked = next((known[k] for k in _asked(arguments) if k in known), None)
    return _agreed(value, _Scope(known, given, changed, asked), ""), changed


#: The key under which an entity named by a symbol (a ticker) is known: only what an update set.
_SYMBOLED = "symbol"
_SYMBOLS = frozenset({"symbol", "ticker", "stocksymbol", "tickersymbol"})
_TICKER = re.compile(r"^[A-Z][A-Z.]{0,5}$")


def _updated(item: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The symbol an update names and the values it set, as the fields they are
    (``{"symbol": "AAPL", "new_price": 325.83}`` -> ``("AAPL", {"price": 325.83})``)."""
    symbol = next((v for k, v in item.items() if _plain(str(k)) in _SYMBOLS and isinstance(v, str)), None)
    if symbol is None or not _TICKER.match(symbol):
        return None
    new = {str(k)[4:]: v for k, v in item.items() if str(k).startswith("new_") and len(str(k)) > 4}
    return (symbol, new) if new else None


def _asked(arguments: Mapping[str, Any]) -> list[Any]:
    """The keys of the updated stocks a call asks about by their symbol. (An id a call is given
    names no result: a pet's owner found by the pet's id is no pet.)"""
    return [(_SYMBOLED, v) for k, v in arguments.items() if _plain(str(k)) in _SYMBOLS and isinstance(v, str)]


class _Scope:
    """What one :func:`agree` walk knows: earlier objects by id, the call's own fields, changes."""

    __slots__ = ("asked", "changed", "given", "known")

    def __init__(
        self,
        known: Mapping[Any, Mapping[str, Any]],
        given: frozenset[str],
        changed: list[str],
        asked: Mapping[str, Any] | None = None,
    ) -> None:
        self.known, self.given, self.changed = known, given, changed
        self.asked = asked  # the entity the call's arguments name, for a result that names none


def _agreed(value: Any, scope: _Scope, path: str) -> Any:
    if isinstance(value, list):
        return [_agreed(v, scope, f"{path}/{i}") for i, v in enumerate(value)]
    if not isinstance(value, Mapping):
        return value
    out = {k: _agreed(v, scope, f"{path}/{k}") for k, v in value.items()}
    source = next((scope.known[i] for i in _ids(value) if i in scope.known), None)
    if source is None and not path and not _ids(value):
        source = scope.asked  # get_stock_info(symbol="AAPL") answers of AAPL, whose price was set
    if source is None:
        return out
    for key, mine in value.items():
        theirs = source.get(key)
        if key not in source or _ID.search(key) or _plain(key) in scope.given:
            continue
        if _same_kind(mine, theirs) and mine != theirs:
            out[key] = theirs
            scope.changed.append(f"{path}/{_escaped(key)}")
    return out


def _escaped(key: str) -> str:
    """``key`` as one JSON-pointer token."""
    return key.replace("~", "~0").replace("/", "~1")


def _plain(name: str) -> str:
    return _NOT_ALNUM.sub("", name.lower())


def _objects(value: Any) -> Iterable[Mapping[str, Any]]:
    """Every object inside ``value``, outermost first."""
    if isinstance(value, Mapping):
        yield value
        for item in value.values():
            yield from _objects(item)
    elif isinstance(value, list):
        for item in value:
            yield from _objects(item)


def _ids(item: Mapping[str, Any]) -> list[Any]:
    """The values of an object's id fields distinctive enough to name one entity.

    A short number (``1``, ``42``) names a different thing in every API; a string of four
    characters or more, or a number from 1,000, does not.
    """
    return [v for k, v in item.items() if isinstance(k, str) and _ID.search(k) and distinctive(v)]


def distinctive(ident: Any) -> bool:
    """Whether an id names one entity: a string of four characters or more, or a number from
    1,000 (``1`` and ``42`` name a different thing in every API)."""
    if isinstance(ident, bool):
        return False
    return (isinstance(ident, str) and len(ident) >= 4) or (isinstance(ident, int) and abs(ident) >= 1000)


def _same_kind(mine: Any, theirs: Any) -> bool:
    """Both plain values of one JSON type (a number for a number, never a list for a string)."""
    if isinstance(mine, bool) or isinstance(theirs, bool):
        return isinstance(mine, bool) and isinstance(theirs, bool)
    if isinstance(mine, (int, float)) and isinstance(theirs, (int, float)):
        return True
    return isinstance(mine, str) and isinstance(theirs, str)


#: Where a weather result is for: these keys' values, and a latitude with a longitude.
_PLACE_KEYS = frozenset({"city", "cityname", "location", "locationname", "place", "town", "address", "q"})
#: A weather result's temperatures (the first is its reading; the others move with it).
_HEAT_KEYS = frozenset({"temperature", "temp", "celsius", "fahrenheit", "tempc", "tempf", "feelslike"})
_SKY_KEYS = frozenset({"condition", "conditions", "weather", "sky", "summary"})


def same_weather(
    value: Any,
    earlier: Sequence[tuple[Mapping[str, Any], Any]],
    arguments: Mapping[str, Any],
    schema: Mapping[str, Any],
) -> tuple[Any, list[str]]:
    """A made-up weather reading for a place an earlier result of the record gave the weather of,
    brought to that weather: today's forecast for Seattle said 9.1 °C and partly cloudy, so the
    current weather there is not 16.5 °C and fog. A place is its name or its coordinates, and a
    call that found one from the other (a geocoder) makes them one place.

    Args:
        value: the result (a weather reading is an object with a temperature).
        earlier: ``(arguments, result)`` of the record's earlier calls, oldest first.
        arguments: the call's arguments (its place; Fahrenheit when it asks so).
        schema: the tool's output schema (a condition it does not allow is not copied).

    Returns:
        The agreed value (``value`` itself when nothing changed) and the JSON pointers changed.
    """
    if not isinstance(value, Mapping) or (heat := _key(value, _HEAT_KEYS)) is None:
        return value, []
    here = _places(arguments) | _places(value)
    for their_args, theirs in earlier if here else ():  # a geocoded city's coordinates are that city
        found = _places(their_args) | _places(theirs)
        if here & found:
            here |= found
    for their_args, theirs in reversed(earlier if here else ()):
        their_heat = _key(theirs, _HEAT_KEYS) if isinstance(theirs, Mapping) else None
        if their_heat is None or theirs is value or not here & (_places(their_args) | _places(theirs)):
            continue
        celsius = _celsius(theirs[their_heat], their_heat, their_args)
        shift = _on_scale(celsius, heat, arguments) - float(value[heat])
        out = dict(value)
        changed = []
        if abs(shift) >= 0.05:  # feels-like moves with the reading
            for key in [k for k in value if _is_heat(value, k)]:
                out[key] = round(float(value[key]) + shift, 1)
                changed.append(f"/{_escaped(key)}")
        sky, their_sky = _key(value, _SKY_KEYS, text=True), _key(theirs, _SKY_KEYS, text=True)
        said = _sky_allowed(schema, sky, theirs[their_sky]) if sky and their_sky else None
        if sky and said is not None and said != value[sky]:
            out[sky] = said
            changed.append(f"/{_escaped(sky)}")
        return (out, changed) if changed else (value, [])
    return value, []


def _key(value: Mapping[str, Any], keys: frozenset[str], *, text: bool = False) -> str | None:
    """The first key of ``value`` among ``keys`` (by its letters) holding a number, or text."""
    for key, held in value.items():
        fits = (isinstance(held, str) and bool(held)) if text else _is_number(held)
        if fits and isinstance(key, str) and _plain(key) in keys:
            return key
    return None


def _is_heat(value: Mapping[str, Any], key: Any) -> bool:
    return isinstance(key, str) and _plain(key) in _HEAT_KEYS and _is_number(value[key])


def _is_number(value: Any) -> bool:
    """A finite number a float holds: a real server's reading may be 10**400 or Infinity, which
    would stop the record (OverflowError) or land in its answer."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int past a float's range
        return False


def _places(value: Any) -> set[Any]:
    """Where an object says it is: its place names (lower-cased), and its coordinates (rounded)."""
    if not isinstance(value, Mapping):
        return set()
    found: set[Any] = set()
    lat = lon = None
    for key, held in value.items():
        name = _plain(key) if isinstance(key, str) else ""
        if name in _PLACE_KEYS and isinstance(held, str) and held.strip():
            found.add(held.strip().lower())
        elif name in ("lat", "latitude") and _is_number(held):
            lat = held
        elif name in ("lon", "lng", "long", "longitude") and _is_number(held):
            lon = held
    if lat is not None and lon is not None:
        found.add((round(float(lat), 2), round(float(lon), 2)))
    return found


def _celsius(reading: float, key: str, arguments: Mapping[str, Any]) -> float:
    return (float(reading) - 32) * 5 / 9 if _fahrenheit(key, arguments) else float(reading)


def _on_scale(celsius: float, key: str, arguments: Mapping[str, Any]) -> float:
    return celsius * 9 / 5 + 32 if _fahrenheit(key, arguments) else celsius


def _fahrenheit(key: str, arguments: Mapping[str, Any]) -> bool:
    """Whether a temperature under ``key`` is in Fahrenheit: its name says so, or, for a name
    without a scale, its call asked for Fahrenheit."""
    name = _plain(key)
    if "fahrenheit" in name or name == "tempf":
        return True
    return "celsius" not in name and name != "tempc" and asks_fahrenheit(arguments)


#: Skies of one kind, so a schema's own word stands for another's ("showers" is "rain").
_SKIES = (
    ("clear", "sunny", "fair", "clear sky", "mostly sunny"),
    ("clouds", "cloudy", "partly cloudy", "mostly cloudy", "overcast", "broken clouds", "few clouds"),
    ("rain", "showers", "light rain", "heavy rain", "drizzle", "thunderstorm", "thunderstorms"),
    ("snow", "light snow", "heavy snow", "sleet", "blizzard", "snow showers"),
    ("fog", "mist", "haze", "foggy"),
)


def _sky_allowed(schema: Mapping[str, Any], key: str, said: str) -> str | None:
    """``said`` as the output schema's property ``key`` takes it: itself when there is no enum or
    the enum has it, else the enum's word for the same kind of sky, else ``None``."""
    own = (schema.get("properties") or {}).get(key) if isinstance(schema, Mapping) else None
    allowed = own.get("enum") if isinstance(own, Mapping) else None
    if not isinstance(allowed, list) or said in allowed:
        return said
    kind = next((skies for skies in _SKIES if said.lower() in skies), ())
    return next((word for word in allowed if isinstance(word, str) and word.lower() in kind), None)


_NUMBERED = re.compile(r"^[#A-Za-z]{0,4}[-_]?0*(\d+)$")


def alike(one: Any, other: Any) -> bool:
    """Whether two arguments' values name one thing: equal, or an id's number bare in one and
    dressed in the other (``82642`` and ``"#W0082642"`` are one order); two dressed ids are one
    only in one dress (``"pet-3"`` and ``"cat-3"`` are two)."""
    if one == other:
        return True
    mine, theirs = _dress(one), _dress(other)
    if mine is None or theirs is None or mine[1] != theirs[1]:
        return False
    return not (mine[0] and theirs[0]) or mine[0] == theirs[0]


def _dress(value: Any) -> tuple[str, str] | None:
    """An id's dress (``"#w"``, ``"ord-"``, ``""`` when bare) and number, None for another value."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    found = _NUMBERED.match(str(value))
    return (str(value)[: found.start(1)].lower().rstrip("0"), found.group(1)) if found else None
