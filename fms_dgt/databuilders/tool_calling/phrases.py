"""Values in sentences: the arguments a request states and the results an answer reports.

Dates read as dates, lists are joined ("a, b and c"), names are said as names and text is quoted;
argument names become words ("city_name" -> "city name") and never appear as identifiers; nothing
reads as a JSON dump (:func:`plain` makes any text safe inside a sentence).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping
from typing import Any

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.synth import synthesise
from fms_dgt.databuilders.tool_calling.plan import RecordPlan
from fms_dgt.databuilders.tool_calling.wording import (
    article,
    humanize,
    join_words,
    label,
    plural,
    singular,
    word_set,
)
from fms_dgt.errors import DGTError

__all__ = [
    "VALUE_LIMIT",
    "byte_words",
    "date_words",
    "error_words",
    "intended_values",
    "plain",
    "result_clause",
    "scalar_words",
    "value_phrases",
]


def plain(text: str, limit: int = 0) -> str:
    """``text`` safe inside a sentence: no brackets or braces (which read as a JSON dump), no control
    characters, shortened at a word boundary to ``limit`` characters when ``limit`` is set."""
    text = _UNSAFE.sub(" ", text.translate(_BRACKETS)).strip()
    text = _SPACES.sub(" ", text)
    if limit and len(text) > limit:
        text = text[: limit - 1].rsplit(" ", 1)[0].rstrip(" ,;:.") + "…"
    return text


_BRACKETS = str.maketrans({"{": "(", "}": ")", "[": "(", "]": ")"})
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_SPACES = re.compile(r"\s+")


# ---------------------------------------------------------------------------------------------- values

#: Longest text value a request says in full (a longer one is shortened at a word boundary).
VALUE_LIMIT = 200
_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
    "November", "December",
)  # fmt: skip
_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_DATETIME = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$"
)
_TIME = re.compile(r"^(\d{2}):(\d{2})(?::\d{2})?$")
_DATE_STYLES = ("{d} {m} {y}", "{m} {d}, {y}", "{ms} {d}, {y}", "{d} {ms} {y}")


def date_words(text: str, style: int = 0) -> str | None:
    """An ISO date or date-time as a person writes it ("12 March 2025", "March 12, 2025 at 14:30"),
    or None when ``text`` is neither."""
    match = _DATE.match(text) or _DATETIME.match(text)
    if match is None or not 1 <= int(match.group(2)) <= 12:
        return None
    year, month, day = match.group(1), _MONTHS[int(match.group(2)) - 1], str(int(match.group(3)))
    words = _DATE_STYLES[style % len(_DATE_STYLES)].format(d=day, m=month, ms=month[:3], y=year)
    if match.re is _DATETIME:
        words += f" at {match.group(4)}:{match.group(5)}" + (" UTC" if match.group(6) == "Z" else "")
    return words


def scalar_words(value: object, style: int = 0, *, exact: bool = False) -> str:
    """A scalar as words: dates as dates, booleans as yes/no, numbers as written, text made safe.

    ``exact`` keeps numbers exactly as given (a request states the values the call uses); otherwise
    they are rounded for reading (an answer).
    """
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)) and exact:
        return str(value)
    if isinstance(value, float):
        if abs(value) < 0.01:
            return f"{value:.3g}"
        return (
            f"{value:,.2f}".rstrip("0").rstrip(".")
            if abs(value) >= 1000
            else f"{value:.2f}".rstrip("0").rstrip(".")
        )
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10000 else str(value)
    if value is None:
        return "none"
    text = str(value)
    return date_words(text, style) or plain(text, VALUE_LIMIT if exact else 160)


# What kind of thing an argument names (by its last word), which decides how its value is said.
_PLACES = word_set("city location place country region area state town venue address county province")
_ORIGINS = word_set("origin source from departure start have")
_TARGETS = word_set("destination target arrival to end recipient receiver want")
_PEOPLE = word_set(
    "name username user artist author player person patient doctor customer team company actor"
)
_PEOPLE |= word_set("director owner sender contact employee club brand band singer composer creator")
_QUOTED = word_set("text content message body note comment description summary sentence review feedback")
_QUOTED |= word_set("caption subject prompt question expression reason instructions paragraph passage title")
_SEARCHES = word_set("query keyword keywords search term phrase topic q")
_LIMITS = word_set("limit max top size count n")
_MASS = word_set("data media people children men women staff news info information series feedback")
_BOUNDS = word_set("gte gt lte lt")
_NAMING = word_set("id ids index number no code offset start page key position")
_COUNTED = word_set("days hours minutes seconds weeks months years nights adults children guests people")
_COUNTED |= word_set("persons passengers tickets rooms items results pages words servings players seats kids")
_PLAIN_LISTS = word_set("numbers values elements data items list")
_IDENTIFIER_WORDS = word_set("id ids number code pin zip")
_RESULT_WORDS = word_set("results result items count n k hits records entries rows number matches")
_LIMIT_PHRASES = ("limited to {number} results", "with {words} of {number}", "(at most {number})")
#: Words before a limit's last word that keep it a limit ("page size", "result count").
_LIMITED = _RESULT_WORDS | word_set("page max top per")


def _is_limit(words: str, value: Any) -> bool:
    """A number that bounds how many results come back (``limit``, ``max_results``, ``top_n``)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    parts = words.lower().split(" ") if words else [""]
    if parts[-1] in _LIMITS:  # not "room count" or "adult count": how many of a thing to book
        return all(p in _LIMITED for p in parts[:-1])
    # "max results", "top k"; not "max price" or "max distance" (a bound of a value, not a count)
    counted = all(p in _RESULT_WORDS for p in parts[1:])
    return parts[0] in ("max", "top", "limit") and counted and isinstance(value, int)


# Names that carry no meaning a person would say ("a", "x", "num1"): the value alone is said.
_BARE = re.compile(r"^(?:[a-z]|[a-z]?\d|num\d*|number\d*|value\d*|n\d+|x\d*|y\d*|arg\d*|input\d*)$", re.I)


def value_phrases(properties: Mapping[str, Any], values: Mapping[str, Any], rng: random.Random) -> list[str]:
    """How each of ``values`` (argument -> value) is said in a request, each with its preposition
    ("at 38.72, -9.14", "on 12 March 2025", 'saying "Running late"'); bare values come first, joined.

    Args:
        properties: the tool's ``parameters.properties`` (formats and enums help).
        values: the arguments to state.
        rng: picks among phrasings.
    """
    values = {k: v for k, v in values.items() if v is not None}
    phrases = _coordinates(values)
    bare = [
        scalar_words(values.pop(k), exact=True)
        for k in list(values)
        if _BARE.match(k) and k.lower() not in _SEARCHES and _scalar(values[k])
    ]
    if bare:
        phrases.insert(0, join_words(bare))
    bounds: list[str] = []  # a limit reads last: "pets tagged travel (at most 2)"
    for name, value in values.items():
        schema = properties.get(name) if isinstance(properties.get(name), dict) else {}
        said = _phrase(name, value, schema or {}, rng)
        (bounds if _is_limit(label(name), value) else phrases).append(said)
    return [p for p in phrases + bounds if p]


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool))


def _coordinates(values: dict[str, Any]) -> list[str]:
    """A latitude and a longitude read as one place ("at 38.72, -9.14"); both are taken out."""
    lat = next((k for k in values if humanize(k) == "latitude"), None)
    lon = next((k for k in values if humanize(k) == "longitude"), None)
    if lat is None or lon is None or not all(isinstance(values[k], (int, float)) for k in (lat, lon)):
        return []
    return [f"at {values.pop(lat)}, {values.pop(lon)}"]


def _phrase(name: str, value: Any, schema: Mapping[str, Any], rng: random.Random) -> str:
    words = label(name)
    last = words.split(" ")[-1].lower() if words else ""
    if isinstance(value, bool):
        return _flag(words, value)
    if isinstance(value, list):
        return _list_phrase(words, last, value, rng)
    if isinstance(value, dict):
        said = _pairs(value)
        return f"with {_label(words)} {said}" if said else ""
    if isinstance(value, (int, float)):
        return _number_phrase(words, last, value, rng)
    text = str(value)
    when = date_words(text, rng.randrange(4))
    if when is not None:
        return _date_phrase(words, last, when, rng)
    return _text_phrase(words, last, plain(text, VALUE_LIMIT), "enum" in schema, rng)


def _label(words: str) -> str:
    return words if words.startswith(("the ", "my ")) else f"the {words}"


_FLAG_VERB = re.compile(r"^(?:include|with|use|enable|show|allow|return|get|do) ")
_COUNT_OF = re.compile(r"^(?:number of|num|count of) ")


def _flag(words: str, value: bool) -> str:
    if words in ("on", "power"):  # a switch: not "without on"
        return "switched on" if value else "switched off"
    if words in ("enabled", "enable", "active"):
        return "enabled" if value else "disabled"
    words = _FLAG_VERB.sub("", words)
    return f"{'with' if value else 'without'} {words}"


def _number_phrase(words: str, last: str, value: float, rng: random.Random) -> str:
    number = scalar_words(value, exact=True)
    if last == "year" and isinstance(value, int):
        return rng.choice((f"in {number}", f"for {number}"))
    if last in _COUNTED:
        return f"for {number} {last if value != 1 else singular(last)}"  # "for 1 day"
    if _is_limit(words, value):
        said = rng.choice(_LIMIT_PHRASES).format(number=number, words=article(words))
        return said.replace(" results", " result") if value == 1 else said
    if _COUNT_OF.match(words):
        return f"for {number} {words.split(' ', 2)[-1]}"
    if last in _BOUNDS and " " in words:  # Airflow's duration_lte: "with a duration of at most 39"
        what = words.rsplit(" ", 1)[0]
        return f"with {article(what)} of {'at most' if last in ('lte', 'lt') else 'at least'} {number}"
    if last == "count" and words.count(" ") == 1 and isinstance(value, int):  # "for 2 adults"
        noun = words.split(" ")[0]
        return f"for {number} {noun if value == 1 else plural(noun)}"
    if last in _NAMING:  # a number that names or places something: "with ID 42", not "the ID at 42"
        return rng.choice((f"with {words} {number}", f"for {words} {number}"))
    return rng.choice(
        (f"with {article(words)} of {number}", f"with the {words} at {number}", f"with {words} {number}")
    )


_STARTS = re.compile(r"\b(?:start|from|since|begin|check in|checkin|departure|depart|after|gte|gt)\b")
_ENDS = re.compile(r"\b(?:end|to|until|till|finish|check out|checkout|return|before|lte|lt)\b")


def _date_phrase(words: str, last: str, when: str, rng: random.Random) -> str:
    if _STARTS.search(words):
        return rng.choice((f"from {when}", f"starting {when}"))
    if _ENDS.search(words):
        return rng.choice((f"until {when}", f"up to {when}"))
    if last in ("date", "day", "time", "datetime", "when", "at", "on") or not words:
        return f"on {when}" if " at " not in when else rng.choice((f"on {when}", f"for {when}"))
    return f"with {_label(words)} {when}"


def _text_phrase(words: str, last: str, text: str, enum: bool, rng: random.Random) -> str:
    first = words.split(" ")[0].lower() if words else ""
    if last in _QUOTED:
        return _quoted(last, words, text, rng)
    if last in ("tag", "label"):
        return rng.choice((f"tagged {text}", f"with the {last} {text}"))
    if last in _SEARCHES:
        return rng.choice((f'for "{text}"', f"about {text}", f'matching "{text}"'))
    if first in _ORIGINS or last in _ORIGINS:
        return f"from {text}"
    if first in _TARGETS or last in _TARGETS:
        return f"to {text}"
    if last in ("state", "status") and enum:  # Airflow's task state: "with state failed", not "in failed"
        return f"with {words} {text}"
    if last in _PLACES:
        return rng.choice((f"in {text}", f"for {text}")) if last != "address" else f"at {text}"
    if last in _PEOPLE and not text[:1].isdigit():
        return f"by {text}" if first in ("artist", "author") and rng.random() < 0.5 else f"for {text}"
    if last in ("unit", "units", "language", "lang", "currency", "format"):
        return f"in {text}" + (f" {last}" if last in ("format", "units") and not text.endswith(last) else "")
    if enum:
        return rng.choice((f"with {words} {text}", f"using {text} as the {words}"))
    return rng.choice((f"for {words} {text}", f"with {words} {text}", f"with the {words} {text}"))


def _quoted(last: str, words: str, text: str, rng: random.Random) -> str:
    if last in ("title", "subject", "caption"):
        return rng.choice((f'titled "{text}"', f'called "{text}"'))
    if last in ("question", "prompt"):
        return f'asking "{text}"'
    if last in ("expression", "formula", "equation"):
        return f"for {text}"
    return rng.choice((f'saying "{text}"', f'with the {words} "{text}"', f'that reads "{text}"'))


def _list_phrase(words: str, last: str, items: list[Any], rng: random.Random) -> str:
    if not items:
        return f"with no {words}"
    if all(isinstance(i, dict) for i in items):
        said = "; ".join(p for p in (_pairs(i) for i in items) if p)
        return f"with {len(items)} {words if len(items) > 1 else singular(words)}: {said}"
    said = join_words([_item_words(i, rng.randrange(4)) for i in items])
    if last in ("tags", "tag", "labels", "label"):
        return f"tagged {said}"
    if last in ("coordinates", "coordinate", "location", "point") and len(items) == 2:
        return f"at {items[0]}, {items[1]}"
    if _BARE.match(words.replace(" ", "")) or last in _PLAIN_LISTS:
        return rng.choice((f"for {said}", f"of {said}", f"using {said}"))
    return rng.choice((f"for the {words} {said}", f"with {words} {said}"))


def _item_words(item: Any, style: int) -> str:
    if isinstance(item, dict):
        return _pairs(item)
    return scalar_words(item, style, exact=True) if _scalar(item) else plain(str(item))


def _pairs(record: Mapping[str, Any]) -> str:
    """A record inside a request: its fields as "name value" pairs ("first name Ada, zip 1000")."""
    pairs = []
    for key, value in record.items():
        if isinstance(value, dict):
            inner = _pairs(value)
            pairs.append(f"{label(str(key))} {inner}" if inner else "")
        elif isinstance(value, list):
            pairs.append(f"{label(str(key))} " + join_words([_item_words(v, 0) for v in value]))
        elif value is not None:
            pairs.append(f"{label(str(key))} {scalar_words(value, exact=True)}")
    return ", ".join(p for p in pairs if p)


# --------------------------------------------------------------------------------------------- results

_NAME_KEYS = ("name", "title", "label", "city", "display_name", "full_name", "username", "id")
_MAX_FIELDS = 4
_MAX_ITEMS = 3


def result_clause(value: Any, noun: str, rng: random.Random, *, heat: str = "") -> str:
    """A result as a clause without JSON: a record's fields as "the x is 1 and the y is 2", a list as
    its count and a few items, long text shortened.

    Args:
        value: the decoded result.
        noun: what the items of a list result are called ("events").
        rng: picks among phrasings.
        heat: the unit of the call's temperatures (" °C", " °F"), said after each one; empty when
            the call does not say (a thermostat's setting).
    """
    if isinstance(value, dict):
        return _fields(value, rng, heat)
    if isinstance(value, list):
        return _items(value, noun, rng, heat)
    if value is None or value == "":
        return ""
    return scalar_words(value, rng.randrange(4))


def _fields(record: Mapping[str, Any], rng: random.Random, heat: str = "") -> str:
    keys = [k for k, v in record.items() if v is not None and v != {} and v != []]
    keys.sort(key=lambda k: isinstance(record[k], (dict, list)))  # plain values first
    compact = rng.random() < 0.3  # "temperature 21.5, condition clear" rather than "the x is ..."
    measured = _measured(record, keys)
    if measured is not None:  # "it's 14.34 °C", not "the value is 14.34 and the unit is celsius"
        number, unit, said = measured
        keys = [k for k in keys if k != unit]
    parts = [
        said if measured is not None and k == number else _field(str(k), record[k], rng, compact, heat)
        for k in keys[:_MAX_FIELDS]
    ]
    rest = len(keys) - _MAX_FIELDS
    if rest > 0:
        parts.append(f"{rest} more detail{'s' if rest > 1 else ''}")
    return join_words([p for p in parts if p])


def _field(name: str, value: Any, rng: random.Random, compact: bool = False, heat: str = "") -> str:
    words = humanize(name) or "value"
    if isinstance(value, list):
        return f"there {'are' if len(value) != 1 else 'is'} {_items(value, words, rng, heat)}"
    if isinstance(value, dict):
        inner = [
            f"{humanize(str(k))} {_short(v, rng, name=str(k))}"
            for k, v in list(value.items())[:3]
            if _simple(v)
        ]
        return (
            f"the {words} {_be(words)} {join_words(inner)}"
            if inner
            else f"the {words} has {len(value)} details"
        )
    if isinstance(value, bool) and words.startswith("can "):  # BFCL's canDrive: not "the can drive is no"
        return f"it {'can' if value else 'cannot'} {words[4:]}"
    if words in _BYTES and type(value) is int and value >= 1000:
        return f"{'' if compact else 'the '}{words} {'' if compact else _be(words) + ' '}{byte_words(value)}"
    head, _, tail = words.rpartition(" ")
    if tail in ("at", "on") and head.endswith("ed") and isinstance(value, str) and date_words(value):
        return f"{head} on {_short(value, rng)}"  # "created on 20 March 2026", not "the created at is"
    unit = _UNITS.get(words.split(" ")[-1], "")
    if unit and " " not in words:
        return f"it's {_short(value, rng, name=name)}{unit}"
    words = words.rsplit(" ", 1)[0] if unit else words
    unit = unit or _heat_unit(words, value, heat) or _wind_unit(words, value, heat)
    if compact:
        return f"{words} {_short(value, rng, name=name)}{unit}"
    return f"the {words} {_be(words)} {_short(value, rng, name=name)}{unit}"


#: Names of a result's field that says the unit of its one number; and unit systems, which are not.
_UNIT_KEYS = frozenset({"unit", "units", "uom"})
_SYSTEMS = frozenset({"metric", "imperial", "standard", "si"})
#: Names of the number a unit goes with that need no name of their own ("it's 14.34 °C").
_PLAIN_NUMBERS = frozenset({"value", "result", "output", "converted value", "converted", "answer"})


def _measured(record: Mapping[str, Any], keys: list[Any]) -> tuple[Any, Any, str] | None:
    """A record holding one number and the unit it is in (a converter's ``{"value": 14.34,
    "unit": "celsius"}``): the number's key, the unit's key, and the number said with its unit."""
    units = [k for k in keys if str(k).lower() in _UNIT_KEYS and isinstance(record[k], str)]
    numbers = [k for k in keys if isinstance(record[k], int | float) and not isinstance(record[k], bool)]
    if len(units) != 1 or len(numbers) != 1:
        return None
    unit = record[units[0]].strip()
    if not unit or len(unit) > 24 or unit.lower() in _SYSTEMS:
        return None
    suffix = _UNITS.get(unit.lower(), f" {plain(unit, 24)}")
    amount = scalar_words(record[numbers[0]], 0) + suffix
    words = humanize(str(numbers[0])) or "value"
    said = f"it's {amount}" if words in _PLAIN_NUMBERS else f"the {words} {_be(words)} {amount}"
    return numbers[0], units[0], said


#: Field names (humanized) that hold a temperature in a weather result.
_HEAT_WORDS = frozenset({"temperature", "temp", "high", "low", "feels like", "min", "max", "dew point"})


def _heat_unit(words: str, value: Any, heat: str) -> str:
    """The unit said after a temperature: ``heat`` for a number whose field names one."""
    if not heat or not isinstance(value, int | float) or isinstance(value, bool):
        return ""
    last = words.split(" ")[-1]
    return heat if words in _HEAT_WORDS or last in ("temperature", "temp", "celsius") else ""


def _wind_unit(words: str, value: Any, heat: str) -> str:
    """A weather result's wind speed in the units the call asked for: mph with Fahrenheit, km/h
    with Celsius (none when the call does not say, as for Kelvin)."""
    if words not in ("wind speed", "wind", "windspeed") or not isinstance(value, int | float):
        return ""
    return {" °F": " mph", " °C": " km/h"}.get(heat, "")


def _be(noun: str) -> str:
    last = noun.split(" ")[-1]
    plural = last.endswith("s") and not last.endswith(("ss", "us", "is")) and last not in ("news", "series")
    return "are" if plural else "is"


#: Fields whose whole number is a count of bytes (a file's size), said as kB, MB or GB.
_BYTES = frozenset({"size", "file size", "bytes", "size bytes", "size in bytes", "content length"})


def byte_words(count: int) -> str:
    """``1834209`` as ``1.8 MB``: a size as a person says it (decimal units, as file managers do)."""
    # Whole-number arithmetic: a server may answer with a number no float holds.
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if count >= scale:
            tenths = (count * 10 + scale // 2) // scale
            return (
                f"{tenths // 10}.{tenths % 10} {unit}"
                if tenths < 100
                else f"{(count + scale // 2) // scale} {unit}"
            )
    return f"{count} bytes"


_UNITS = {"celsius": " °C", "fahrenheit": " °F", "percent": "%", "percentage": "%", "km": " km", "kg": " kg"}


def _simple(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool))


def _short(value: Any, rng: random.Random, style: int | None = None, name: str = "") -> str:
    """A value in a few words; ``style`` fixes how dates are written (one style per list). The
    number of an identifier named ``name`` is written as it is (ID 11538, not 11,538)."""
    if isinstance(value, (dict, list)):
        return f"{len(value)} entries"
    if type(value) is int and _IDENTIFIER_WORDS & set(humanize(name).lower().split(" ")[-1:]):
        return str(value)
    style = rng.randrange(4) if style is None else style
    return scalar_words(value, style) if not isinstance(value, str) else _text(value, style)


def _text(value: str, style: int) -> str:
    return date_words(value, style) or plain(value, 80)


def _items(items: list[Any], noun: str, rng: random.Random, heat: str = "") -> str:
    count = len(items)
    if not count:
        return f"no {noun}"
    style = rng.randrange(4)  # the dates of one list are all written alike
    named = [_item_name(i, rng, style, heat) for i in items[:_MAX_ITEMS]]
    shown = join_words([n for n in named if n])
    if not noun.endswith("s") and noun not in _MASS:  # not "2 list" or "3 watchlist"
        things = "items" if count > 1 else "item"
        noun = things if noun in ("list", "array", "collection") else f"{things} in the {noun}"
    elif count == 1:
        noun = singular(noun)
    more = f", plus {count - _MAX_ITEMS} more" if count > _MAX_ITEMS else ""
    return f"{count} {noun}" + (f": {shown}{more}" if shown else "")


def _item_name(item: Any, rng: random.Random, style: int, heat: str = "") -> str:
    """An item by its name; else by its first fields: a dated item as "3 March 2026 (high 21 °C,
    low 12 °C)", another as "size 3 with colour red"."""
    if not isinstance(item, dict):
        return _short(item, rng, style) if _simple(item) else ""
    # By the name keys however the API spells them (an Up account's ``displayName``), then by a
    # name one level down (PeerTube's follow: its follower's name) before its bare id.
    key = _name_key(item, with_id=False)
    if key is not None:
        return _short(item[key], rng, style, name=str(key))
    for inner in item.values():
        found = _name_key(inner, with_id=False) if isinstance(inner, dict) else None
        if found is not None:
            return _short(inner[found], rng, style, name=str(found))
    key = _name_key(item, with_id=True)
    if key is not None:
        return _short(item[key], rng, style, name=str(key))
    simple = [(humanize(str(k)), v) for k, v in item.items() if _simple(v)]
    said = [f"{words} {_short(v, rng, style, words)}{_heat_unit(words, v, heat)}" for words, v in simple]
    dated = next((i for i, (_, v) in enumerate(simple) if isinstance(v, str) and date_words(v)), None)
    if dated is None:
        return " with ".join(said[:2])
    others = [phrase for i, phrase in enumerate(said) if i != dated][:2]
    when = _short(simple[dated][1], rng, style)
    return f"{when} ({', '.join(others)})" if others else when


def _name_key(item: dict[Any, Any], *, with_id: bool) -> Any:
    """The key of ``item``'s name (:data:`_NAME_KEYS`, however spelled), its ``id`` only when
    ``with_id``; None when it has none with a plain value."""
    spelled = {humanize(str(k)).lower().replace(" ", "_"): k for k in item}
    keys = _NAME_KEYS if with_id else _NAME_KEYS[:-1]
    return next((spelled[k] for k in keys if k in spelled and _simple(item[spelled[k]])), None)


def error_words(error: str) -> str:
    """What a failure says, fit for a sentence: the message of a JSON error body, without exception
    class names or notes in parentheses, shortened."""
    text = error.strip()
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        text = _json_message(text[start : end + 1]) or text[:start] + text[end + 1 :]
    text = re.sub(r"^(?:\w+\.)*\w*(?:Error|Exception)\s*:\s*", "", text.strip())
    text = re.sub(r"\s*\((?:injected|simulated|mock)[^)]*\)", "", text)
    return plain(text, 140).rstrip(".") or "no reason given"


def _json_message(text: str) -> str | None:
    try:
        body = json.loads(text)
    except ValueError:
        return None
    while isinstance(body, dict):
        found = next((body[k] for k in ("message", "error", "detail", "reason", "msg") if k in body), None)
        if isinstance(found, str):
            return found
        body = found
    return None


def intended_values(plan: RecordPlan, tool: Tool, rng: random.Random) -> dict[str, Any]:
    """The values a no-call request states: a planned call's, else the ones the executor made for
    the request (``plan.stated``: realistic values of the record's context), else synthesised ones
    for the tool's required arguments."""
    for call in plan.calls:
        if call.tool.qualified_name == tool.qualified_name:
            return dict(call.given)
    if plan.stated:
        return dict(plan.stated)
    required = tool.parameters.get("required") or []
    properties = tool.parameters.get("properties") or {}
    try:
        made = synthesise(tool.parameters, rng, optional_probability=0.0, fingerprint=tool.fingerprint)
    except DGTError:
        made = {}
    values = {k: v for k, v in (made if isinstance(made, dict) else {}).items() if k in required}
    for key, value in plan.context.items():
        if key in properties and isinstance(value, (str, int, float)):
            values[key] = value
    return values
