"""Results that agree with themselves: paired bounds in order, dated items consecutive with
temperatures that move as weather does, and a sky that fits the temperature and the units asked
for. Used by the mock engine's synthesis hooks (:mod:`~fms_dgt.core.tools.engines.results`)."""

from __future__ import annotations

import functools
import itertools
import math
import random
import re
from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta
from typing import Any

from fms_dgt.core.tools._json import scalars
from fms_dgt.core.tools.engines._verbs import plain as _plain
from fms_dgt.core.tools.fakes import tokens, types_of

__all__ = [
    "asks_fahrenheit",
    "flags_hold_their_details",
    "order_dates",
    "order_pairs",
    "set_values",
    "sky_fits_temperature",
    "total_covers_items",
    "within_bounds",
]

_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


_LOW_HIGH = {
    "low": "high",
    "lowest": "highest",
    "min": "max",
    "minimum": "maximum",
    "start": "end",
    "begin": "end",
    "from": "to",
    "earliest": "latest",
    "in": "out",
    "departure": "arrival",
    "open": "close",
    "first": "last",
    "created": "updated",  # PeerTube's videos were updated before they were created
    "execution": "end",  # an Airflow run ended before its execution date
    "new": "total",  # COVID's new deaths (2,163) were more than its total deaths (162)
    "newly": "total",
    "daily": "total",
    "bid": "ask",  # Alpha Vantage's bid of 184.86 was above its ask of 180.24
}


#: Plain names (lower case, no separators) of a count of what a listing holds.
_TOTALS = frozenset(
    {"total", "count", "totalcount", "totalitems", "totalresults", "totalrecords", "results"}
    | {"totalentries", "totalelements", "totalhits", "totalrows", "numresults", "resultcount", "itemcount"}
)


def flags_hold_their_details(value: dict[str, Any], schema: Mapping[str, Any]) -> None:
    """A flag that is off has no reason or date of its own: PeerTube's videos said ``blacklisted:
    false`` with a ``blacklistedReason``. The detail goes (or is null) where the schema lets it."""
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return
    listed = schema.get("required")
    required = listed if isinstance(listed, list) else []
    details: dict[tuple[str, ...], list[str]] = {}  # by the flag's words: one pass, not one per flag
    for key in value:
        words = tokens(key)
        if len(words) > 1 and words[-1] in ("reason", "at", "date"):
            details.setdefault(words[:-1], []).append(key)
    for key in [k for k, v in value.items() if v is False]:
        for detail in details.get(tokens(key), ()):
            sub = props.get(detail)
            if "null" in (types_of(sub) or ()):
                value[detail] = None
            elif detail not in required:
                del value[detail]


def total_covers_items(value: dict[str, Any], schema: Mapping[str, Any]) -> None:
    """A listing's total is at least the number of items it holds (PeerTube's ``{"total": 1,
    "data": [15 videos]}``), as far as the total's own schema allows."""
    lists = [v for v in value.values() if isinstance(v, list)]
    if len(lists) != 1:
        return
    held = len(lists[0])
    props = schema.get("properties")
    for key, count in value.items():
        if _plain(key) not in _TOTALS or type(count) is not int or count >= held:
            continue
        own = props.get(key) if isinstance(props, Mapping) else None
        ceiling = own.get("maximum") if isinstance(own, Mapping) else None
        if not isinstance(ceiling, (int, float)) or ceiling >= held:
            value[key] = held


def duration_spans(value: dict[str, Any], schema: Mapping[str, Any]) -> None:
    """A ``duration`` beside a start and an end moment is the time between them (an Airflow task
    instance ran 16:30 to 18:30 with a duration of 51.79): the end moves to the start plus the
    duration, in seconds or in the minutes, hours or milliseconds its description names. The
    duration is kept, as the call's filters and the schema's bounds made it (``duration_lte``);
    nothing changes when the moments do not parse."""
    duration = value.get("duration")
    if not isinstance(duration, (int, float)) or isinstance(duration, bool) or duration < 0:
        return
    pair = next(((a, b) for a, b in _SPANS if a in value and b in value), None)
    if pair is None or not isinstance(value[pair[0]], str) or not isinstance(value[pair[1]], str):
        return
    start = _parse(value[pair[0]])
    if start is None or _parse(value[pair[1]]) is None:
        return
    props = schema.get("properties")
    own = props.get("duration") if isinstance(props, Mapping) else None
    said = str(own.get("description") or "").lower() if isinstance(own, Mapping) else ""
    unit = next((seconds for word, seconds in _UNITS if word in said), 1.0)
    try:
        end = start + timedelta(seconds=duration * unit)
    except OverflowError:  # a duration of 10**300 seconds ends at no moment
        return
    written = value[pair[1]]
    offset = _OFFSET.search(written)  # "Z" or "+02:00", as the end was written
    moment = end.isoformat(timespec="seconds") + (offset[0] if offset else "")
    value[pair[1]] = end.date().isoformat() if len(written) == 10 else moment


_OFFSET = re.compile(r"(?:Z|[+-]\d{2}:\d{2})$")


#: The start and end moments a duration spans, by their keys.
_SPANS = (
    ("start_date", "end_date"),
    ("start_time", "end_time"),
    ("started_at", "ended_at"),
    ("started_at", "finished_at"),
    ("startTime", "endTime"),
    ("startDate", "endDate"),
    ("start", "end"),
)
#: Units a duration's description may name, in seconds (milliseconds before minutes: "ms").
_UNITS = (("millisecond", 0.001), ("minute", 60.0), ("hour", 3600.0))


def set_under(arguments: Mapping[str, Any], name: str) -> Any:
    """The value an action set, when its result names it with a word before the argument's name
    (``adjustClimateControl(mode="auto", temperature=31.4)`` answers ``climateMode`` and
    ``currentTemperature``: "auto" and 31.4, not "cool" and 22.5); None when no scalar argument's
    words end the name. Names too short to tell (an id, a type, ``to``) are not read so."""
    words = tokens(name)
    for key, value in arguments.items():
        if value is None or isinstance(value, (bool, dict, list)):
            continue
        own = tokens(key)
        if own and len(words) > len(own) and words[-len(own) :] == own and not set(own) & _VAGUE:
            return value
    return None


#: Argument names that say too little to be read inside a longer one (a replyTo is no ``to``).
_VAGUE = frozenset(
    {"id", "ids", "uuid", "key", "type", "name", "value", "to", "from", "by", "at", "on", "in"}
)
#: What is counted of a thing by others (replies, likes, views): none yet when it was just made.
_COUNTED_BY_OTHERS = frozenset(
    {"replies", "likes", "dislikes", "views", "comments", "followers", "shares", "votes", "plays"}
    | {"downloads", "reactions", "favorites", "favourites", "subscribers", "retweets", "reposts"}
)


def counted_by_others(name: str) -> bool:
    """Whether ``name`` counts what others did to a thing (``totalReplies``, ``likes_count``): a
    thread just started has 447 replies no more."""
    return bool(set(tokens(name)) & _COUNTED_BY_OTHERS)


def holds_named(example: Any, arguments: Mapping[str, Any]) -> bool:
    """Whether ``example`` holds every value by which the call names what it is about (an id, a
    code, a year), somewhere in it."""
    named = [str(v) for k, v in arguments.items() if _NAMING.search(str(k)) and isinstance(v, (str, int))]
    if not named:
        return True
    leaves = {str(v) for v in scalars(example, 5_000) if v is not None}  # a spec's example, to a bound
    return all(v in leaves or any(v in leaf for leaf in leaves if len(v) >= 4) for v in named)


#: Names of arguments that say which thing (or which year) a call is about.
_NAMING = re.compile(r"(?:[iI]d|IDs?|_ids?|[uU]uid|[cC]ode|[kK]ey|^year)$")


def order_pairs(value: dict[str, Any]) -> None:
    """Swap the values of paired keys (``low``/``high``, ``check_in``/``check_out``) that are reversed."""
    if len(value) < 2:
        return
    for low_key, high_key in _pairs(tuple(value)):
        if _after(value[low_key], value[high_key]):
            value[low_key], value[high_key] = value[high_key], value[low_key]


@functools.lru_cache(maxsize=4096)
def _pairs(keys: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """The (lower, upper) key pairs among ``keys``: ``temp_min``/``temp_max``, ``check_in``/``check_out``."""
    by_words = {tokens(k): k for k in keys}
    found = []
    for words, low_key in by_words.items():
        for i, word in enumerate(words):
            partner = _LOW_HIGH.get(word)
            high_key = by_words.get((*words[:i], partner, *words[i + 1 :])) if partner else None
            if high_key is not None:
                found.append((low_key, high_key))
    return tuple(found)


def _after(low: Any, high: Any) -> bool:
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (low, high))
    if numbers:
        return bool(low > high)
    if isinstance(low, str) and isinstance(high, str) and len(low) == len(high) and low[:1].isdigit():
        return low > high
    return False


# Weather words by the temperatures they go with (Celsius): snow below freezing, no snow or
# thunderstorms in the cold or heat they never come with.
_SNOW = frozenset({"snow", "sleet", "blizzard", "snow showers", "light snow", "heavy snow"})
_WARM_ONLY = frozenset({"thunderstorms", "thunderstorm", "showers"})
_CONDITION_KEYS = frozenset({"condition", "conditions", "weather", "sky", "summary", "description"})
_TEMPERATURE_KEYS = frozenset({"temperature", "temp", "celsius", "fahrenheit", "feels_like"})
#: What a sky turns into when it does not fit: the first one the schema allows.
_COLD_SKY = ("snow", "light snow", "fog", "overcast", "cloudy", "clouds")
_MILD_SKY = ("light rain", "rain", "cloudy", "clouds", "overcast", "partly cloudy", "clear")


def sky_fits_temperature(value: dict[str, Any], schema: Mapping[str, Any], given: Mapping[str, Any]) -> None:
    """A weather result agrees with itself and its call: a temperature made up for a call in
    imperial units is in Fahrenheit, and a condition that contradicts the temperature (snow at
    25 °C) becomes one that fits, among the ones the schema allows."""
    heat_key = next((k for k in value if k.lower() in _TEMPERATURE_KEYS and _number(value[k])), None)
    if heat_key is None:
        return
    celsius = float(value[heat_key])
    if "fahrenheit" in heat_key.lower():
        celsius = (celsius - 32) * 5 / 9
    elif _plain(heat_key) not in given and asks_fahrenheit(given):
        value[heat_key] = round(celsius * 9 / 5 + 32, 1)  # made up on the Celsius scale
    sky_key = next((k for k in value if k.lower() in _CONDITION_KEYS and isinstance(value[k], str)), None)
    if sky_key is None or not _wrong_sky(value[sky_key].lower(), celsius):
        return
    props = schema.get("properties") or {}
    own = props.get(sky_key)
    allowed = own.get("enum") if isinstance(own, Mapping) else None
    fits = [c for c in (_COLD_SKY if celsius < 0 else _MILD_SKY) if allowed is None or c in allowed]
    if fits:
        value[sky_key] = fits[0]


def _wrong_sky(sky: str, celsius: float) -> bool:
    if sky in _SNOW:
        return celsius > 3
    if sky in _WARM_ONLY:
        return celsius < 5
    return celsius < -3 and sky in ("rain", "light rain", "showers", "drizzle")


_IMPERIAL = frozenset({"imperial", "fahrenheit"})


def asks_fahrenheit(arguments: Mapping[str, Any]) -> bool:
    """Whether a call asks for Fahrenheit: a value ``imperial`` or ``fahrenheit`` (a unit, not a
    grade "F" or a country "us"). The mock engine makes temperatures so, and answers say so."""
    return any(isinstance(v, str) and v.lower() in _IMPERIAL for v in arguments.values())


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def order_dates(items: list[Any], name: str) -> None:
    """Sort a list of dates; give a list of dated objects consecutive dates from the first."""
    if all(isinstance(v, str) and _ISO_DATE.match(v) for v in items):
        items.sort()
        return
    if not all(isinstance(v, dict) for v in items):
        return
    key = next((k for k, v in items[0].items() if isinstance(v, str) and _ISO_DATE.match(v)), None)
    if key is None or not all(isinstance(v.get(key), str) and _ISO_DATE.match(v[key]) for v in items):
        return
    start = _parse(items[0][key])
    if start is None:
        return
    hourly = bool({"hour", "hourly", "time"} & {*tokens(key), *tokens(name)}) and "T" in items[0][key]
    step = timedelta(hours=1) if hourly else timedelta(days=1)
    for i, item in enumerate(items):
        item[key] = _render_like(start + i * step, item[key])
    _gradual(items)


#: The most a temperature of a dated series moves from one item to the next (a forecast's days).
_STEP = 4.0


def _gradual(items: list[dict[str, Any]]) -> None:
    """Temperatures of consecutive days that change as weather does (a few degrees a day), not
    from 0.6 to 32.4 overnight. Each value moves towards the one before it, so it stays between
    values the schema already accepted; paired bounds are ordered again after."""
    keys = [k for k, v in items[0].items() if _number(v) and _TEMPERATURE_WORDS & set(tokens(k))]
    for item in items:
        _narrow(item, keys)
    for before, item in itertools.pairwise(items):
        for key in keys:
            if _number(before.get(key)) and _number(item.get(key)):
                moved = item[key] - before[key]
                if abs(moved) > _STEP:
                    value = before[key] + math.copysign(_STEP, moved)
                    item[key] = round(value) if isinstance(item[key], int) else round(value, 1)
        order_pairs(item)
        _narrow(item, keys)


#: The widest a day's low and high temperatures lie apart.
_SPREAD = 15.0


def _narrow(item: dict[str, Any], keys: list[str]) -> None:
    """A day's low raised to within :data:`_SPREAD` of its high (towards it: a value between
    two the schema accepted)."""
    for low, high in _pairs(tuple(keys)):
        if _number(item.get(low)) and _number(item.get(high)) and item[high] - item[low] > _SPREAD + 0.05:
            value = item[high] - _SPREAD
            item[low] = round(value) if isinstance(item[low], int) else round(value, 1)


_TEMPERATURE_WORDS = frozenset({"temp", "temperature", "high", "low", "max", "min", "celsius", "fahrenheit"})


def set_values(arguments: Mapping[str, Any]) -> dict[tuple[str, ...], Any]:
    """The values a call set inside its arguments, by path and by path inside its body, for a
    result to echo: ``data.attributes.url`` of a JSON:API body is the created resource's
    ``data.attributes.url``, and the second account of a list of accounts given (Codat's bank
    feed accounts) is the second account created (``1.accountName``)."""
    found: dict[tuple[str, ...], Any] = {}
    for at, value in _nested(arguments, ()):
        found.setdefault(at, value)
        found.setdefault(at[1:], value)
    for key, items in arguments.items():
        if isinstance(items, list) and items and all(isinstance(i, Mapping) for i in items[:_LISTED]):
            for i, item in enumerate(items[:_LISTED]):
                for at, value in _nested(item, (str(i),)):
                    found.setdefault(at, value)
                    found.setdefault((str(key), *at), value)
    return found


def _nested(value: Mapping[str, Any], at: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    """The values inside objects of ``value`` (below its top level, not in lists, at most
    :data:`_NESTED_DEPTH` levels down: a call's arguments may come from anywhere), by path."""
    for key, item in value.items():
        here = (*at, str(key))
        if isinstance(item, Mapping):
            if len(here) < _NESTED_DEPTH:
                yield from _nested(item, here)
        elif at and not isinstance(item, list):
            yield here, item


_NESTED_DEPTH = 32
_LISTED = 50


#: How a call's argument bounds a listed item's field (``duration_lte``, ``min_price``...).
_UPPER_ENDS = ("lte", "lt", "max", "maximum", "before", "until", "to")
_LOWER_ENDS = ("gte", "gt", "min", "minimum", "after", "since", "from")


def within_bounds(given: Mapping[str, Any], plain: str, integer: bool, rng: random.Random) -> Any:
    """A value for a listed item's field ``plain`` (a plain name) inside the bounds the call set
    on it (Airflow's task instances with ``duration_lte`` 39.03 were 52.18 long; runs filtered
    ``start_date_gte`` started before it), or None when the call sets none. Numbers and ISO
    moments are bounded; a moment is drawn within three days of its one bound."""
    low = next(
        (given[k] for e in _LOWER_ENDS if (k := plain + e) in given or (k := e + plain) in given), None
    )
    high = next(
        (given[k] for e in _UPPER_ENDS if (k := plain + e) in given or (k := e + plain) in given), None
    )
    if _number(low) or _number(high):
        try:
            bottom, top = (
                float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None
                for v in (low, high)
            )
        except OverflowError:
            return None  # an integer past any float (a 401-digit bound)
        lowest = bottom if bottom is not None else min(0.0, 2 * (top or 0.0))
        highest = top if top is not None else lowest + max(abs(lowest), 10.0)
        if lowest > highest or not math.isfinite(highest - lowest):
            return None  # no room, or bounds no number can sit between (1e308 and its double)
        drawn = rng.uniform(lowest, highest)
        return math.ceil(drawn) if integer and math.ceil(drawn) <= highest else round(drawn, 2)
    first = _parse(low) if isinstance(low, str) and _ISO_DATE.match(low) else None
    last = _parse(high) if isinstance(high, str) and _ISO_DATE.match(high) else None
    if first is None and last is None:
        return None
    example = str(low) if first is not None else str(high)  # the form of a bound that was read
    try:
        first = first or (last - timedelta(days=3) if last else None)
        last = last or (first + timedelta(days=3) if first else None)
    except OverflowError:
        return None  # a bound at the calendar's very end (9999-12-31) leaves no three days
    if first is None or last is None or first > last:
        return None
    moment = first + timedelta(minutes=15 * rng.randint(0, int((last - first).total_seconds() // 900)))
    return _render_like(moment, example)


def _parse(text: str) -> datetime | None:
    """A moment as written (its offset dropped, so that moments of any form compare)."""
    try:
        return datetime.fromisoformat(text.replace("Z", "")[:19]).replace(tzinfo=None)
    except ValueError:
        return None


def _render_like(moment: datetime, example: str) -> str:
    if len(example) == 10:
        return moment.date().isoformat()
    rendered = moment.isoformat(timespec="seconds")
    return rendered + ("Z" if example.endswith("Z") else "")
