"""A call's result in words: the clause an answer says for what a call returned.

A record's fields read "the x is 1 and the y is 2" (a few, then how many more), a list its count
and a few items by name, a number with its unit ("it's 14.34 °C", "3.4 MB"), a temperature or a
wind speed in the units the call asked for; nothing reads as a JSON dump.
"""

from __future__ import annotations

import functools
import itertools
import random
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from fms_dgt.databuilders.tool_calling.agreement import distinctive
from fms_dgt.databuilders.tool_calling.envelopes import unwrapped
from fms_dgt.databuilders.tool_calling.phrases import date_words, plain, scalar_words
from fms_dgt.databuilders.tool_calling.wording import (
    ACTION,
    GET,
    Purpose,
    humanize,
    join_facts,
    past,
    plural,
    singular,
    unstopped,
    word_set,
)

__all__ = ["byte_words", "name_of", "named_record", "result_clause", "success"]

_MASS = word_set("data media people children men women staff news info information series feedback")
_IDENTIFIER_WORDS = word_set("id ids number code pin zip")
_NAME_KEYS = (
    "name", "title", "label", "city", "display_name", "full_name", "username", "filename", "file_name", "id",
)  # fmt: skip
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


#: Keys that name the record they sit in (a city is where a record is, not its name).
_OWN_NAMES = ("name", "title", "label", "display_name", "full_name", "username")


def named_record(
    value: Any, rng: random.Random, *, heat: str = "", style: int | None = None
) -> tuple[str, list[str]] | None:
    """A record that has a name, as its name and a few of its other facts in brief (``("Daisy",
    ["tag personal", "ID pet-33737"])``), so an answer can lead with what the thing is called;
    None for anything else (a list, a record without a name or with nothing else to say)."""
    if not isinstance(value, dict):
        return None
    key = _name_key(value, _OWN_NAMES, _said)
    if key is None or not isinstance(value[key], str):
        return None
    others = [k for k, v in value.items() if k != key and _told(k, v) and _simple(v)]
    if not others or _measured(value, others) is not None:
        return None
    style = rng.randrange(4) if style is None else style
    facts = [unstopped(_field(str(k), value[k], rng, True, heat, style)) for k in _ranked(value, others)[:3]]
    return _short(value[key], rng, name=str(key)), facts


def name_of(ident: Any, noun: str, results: Sequence[Any]) -> str | None:
    """The name an earlier result gave the ``noun`` whose id is ``ident`` (the pet a record added
    as Daisy, with id pet-3, is Daisy when it is deleted), else None. Only a record's own id
    counts (``id``, ``uuid``, ``pet_id`` for a pet: not its ``owner_id``); the results' records
    and the records they list are read, three levels down at most."""
    if not distinctive(ident):
        return None  # a category's id 1 names no pet
    own = {"id", "uuid", f"{noun}_id", f"{noun}_uuid"}
    stack = [(r, 0) for r in reversed(results)]
    for _ in range(_MOST_READ):  # a hostile result may hold millions of records: a few are read
        if not stack:
            break
        value, depth = stack.pop()
        if isinstance(value, dict):
            key = _name_key(value, _OWN_NAMES, _said) if len(value) <= _WIDEST else None
            found = key is not None and isinstance(value[key], str) and value[key] != ident
            if found and any(v == ident and _spelled(k) in own for k, v in value.items()):
                return plain(value[key], 80)  # a name from a reply, made safe like every other
            items = list(itertools.islice(value.values(), _WIDEST))
        else:
            items = value[:_WIDEST] if isinstance(value, list) else []
        if depth < 3:
            stack.extend((v, depth + 1) for v in reversed(items) if isinstance(v, dict | list))
    return None


_MOST_READ = 2_000
_WIDEST = 200  # keys of a record, items of a list


def _spelled(key: Any) -> str:
    return humanize(str(key)).lower().replace(" ", "_")


def _said(value: Any) -> bool:
    """Whether a field has something to say (not null, empty text or an empty container)."""
    return value is not None and value != "" and value != {} and value != []


def _told(key: Any, value: Any) -> bool:
    """Whether an answer tells a field: one with something to say that is no secret (a result
    that echoes the call's ``apikey`` or holds an access token is not read out)."""
    return _said(value) and not _secret(str(key))


@functools.lru_cache(maxsize=4096)
def _secret(key: str) -> bool:
    words = {singular(w) for w in humanize(key).lower().split()}  # "tokens" are tokens too
    return bool(words & _SECRET_WORDS) or {"api", "key"} <= words or "apikey" in key.lower()


#: Words of a field's name that make it a secret.
_SECRET_WORDS = frozenset({"password", "passwd", "secret", "token", "credential"})


def _fields(record: Mapping[str, Any], rng: random.Random, heat: str = "") -> str:
    keys = [k for k, v in record.items() if _told(k, v)]
    keys.sort(key=lambda k: isinstance(record[k], (dict, list)))  # plain values first
    sky = _weather(record, keys, heat)
    if sky is not None:  # "it's 19.3 °C and showers in Mexico City", not "city Mexico City, ..."
        said, used = sky
        others = [k for k in keys if k not in used]
        return ", ".join([said, *(_field(str(k), record[k], rng, True, heat) for k in others[:2])])
    paged = _paged(record, keys, rng, heat)
    if (
        paged is not None
    ):  # "2,526 DAGs in all; the first 100: ...", not "the total is 2526 and there are 100"
        return paged
    compact = rng.random() < 0.3  # "temperature 21.5, condition clear" rather than "the x is ..."
    style = rng.randrange(4)  # the dates of one answer all written alike
    measured = _measured(record, keys)
    if measured is not None:  # "it's 14.34 °C", not "the value is 14.34 and the unit is celsius"
        number, unit, said = measured
        keys = [k for k in keys if k != unit]
    parts = [
        said if measured is not None and k == number else _field(str(k), record[k], rng, compact, heat, style)
        for k in _ranked(record, keys)[:_MAX_FIELDS]
    ]
    return join_facts([p for p in parts if p])


def _paged(record: Mapping[str, Any], keys: list[Any], rng: random.Random, heat: str) -> str | None:
    """A page of a listing said as a page: its one list against the total beside it, when the
    total is more than the page holds (Airflow's ``{"dags": [100 DAGs], "total_entries": 2526}``)."""
    lists = [k for k in keys if isinstance(record[k], list)]
    totals = [k for k in keys if type(record[k]) is int and humanize(str(k)).lower() in _TOTAL_NAMES]
    if (
        len(lists) != 1
        or len(totals) != 1
        or record[totals[0]] <= len(record[lists[0]])
        or not record[lists[0]]
    ):
        return None
    listed = _items(record[lists[0]], humanize(str(lists[0])), rng, heat)
    count, _, rest = listed.partition(" ")
    noun, _, shown = rest.partition(":")
    return f"there are {record[totals[0]]:,} {noun} in all, and the first {count} are{shown}"


#: Names of a listing's total (of all its pages).
_TOTAL_NAMES = frozenset({"total", "total entries", "total count", "total items", "total results", "count"})


def _ranked(record: Mapping[str, Any], keys: list[Any]) -> list[Any]:
    """The keys an answer tells first: what a person asked for (a status, an amount, a date, a
    name) before an entity's other ids, yes-or-no flags and the machine's own fields (a UUID, a
    file token, a path, a link); objects and lists last, the record's order kept within each.
    The rest goes unsaid: an answer is no list of "32 more details" (Airflow's DAG details)."""
    ranked = sorted(keys, key=lambda k: _rank(str(k), record[k]))
    told = [k for k in ranked if _rank(str(k), record[k]) != 3]  # no short UUID beside the id
    return told or ranked


def _rank(key: str, value: Any) -> int:
    if isinstance(value, (dict, list)):
        return 4
    words = set(humanize(key).lower().split())
    if words & _MACHINE or key.startswith(("_", "@")):
        return 3
    if isinstance(value, bool) or (words & {"id", "ids"} and key.lower() not in ("id", "ids")):
        return 2
    return 0 if words & _TOLD_FIRST else 1


#: Words of a field's name that are the machine's, not a person's (said last, if at all).
_MACHINE = frozenset({"uuid", "short", "token", "hash", "checksum", "etag", "path", "file", "fileloc"})
_MACHINE |= frozenset(
    {"url", "urls", "uri", "link", "links", "href", "mime", "encoding", "version", "pickle"}
)
#: Words of a field's name that a person is told first.
_TOLD_FIRST = frozenset({"name", "title", "status", "state", "total", "amount", "price", "balance", "count"})


#: Field names (humanized) of a weather reading's sky, and of the place it is for.
_SKY_WORDS = frozenset({"condition", "conditions", "weather", "sky", "summary", "description", "outlook"})
_PLACE_WORDS = frozenset({"city", "location", "place", "city name", "location name"})
#: A sky said as a noun: "with rain" (an adjective follows "and": "and partly cloudy").
_SKY_NOUNS = re.compile(
    r"\b(?:rain|showers?|snow|sleet|hail|fog|mist|drizzle|thunderstorms?|storms?|clouds)$"
)


def _weather(record: Mapping[str, Any], keys: list[Any], heat: str) -> tuple[str, set[Any]] | None:
    """A weather reading said as a person says it ("it's 19.3 °C and showers in Mexico City",
    with the wind when there is one) and the keys it says; None for anything else, or when the
    call says no unit (``heat``)."""
    words = {k: humanize(str(k)).lower() for k in keys}
    numbers = [k for k in keys if isinstance(record[k], int | float) and not isinstance(record[k], bool)]
    heats = [k for k in numbers if words[k] in _HEAT_WORDS or words[k] in ("celsius", "fahrenheit")]
    skies = [k for k in keys if words[k] in _SKY_WORDS and isinstance(record[k], str) and len(record[k]) < 40]
    if not heat or len(heats) != 1 or len(skies) != 1:
        return None
    degrees, sky = heats[0], skies[0]
    unit = {"celsius": " °C", "fahrenheit": " °F"}.get(words[degrees], heat)
    told = plain(record[sky], 40).lower()
    joint = "with" if _SKY_NOUNS.search(told) else "and"  # "12.6 °C with rain", not "and rain"
    said = f"it's {scalar_words(record[degrees], 0)}{unit} {joint} {told}"
    used = {degrees, sky}
    winds = [k for k in numbers if _wind_unit(words[k], record[k], heat)]
    if winds:
        wind = f"wind at {scalar_words(record[winds[0]], 0)}{_wind_unit(words[winds[0]], 1, heat)}"
        said += f" and {wind}" if joint == "with" else f", with {wind}"
        used.add(winds[0])
    places = [k for k in keys if words[k] in _PLACE_WORDS and isinstance(record[k], str)]
    if places:
        said += f" in {plain(record[places[0]], 60)}"
        used.add(places[0])
    return said, used


def _field(
    name: str, value: Any, rng: random.Random, compact: bool = False, heat: str = "", style: int | None = None
) -> str:
    words = humanize(name) or "value"
    if isinstance(value, list):
        return f"there {'are' if len(value) != 1 else 'is'} {_items(value, words, rng, heat)}"
    if isinstance(value, dict):
        named = named_record(value, rng, heat=heat, style=style)
        if named is not None:  # "the company is Benitez-Long (CIK 0001161539, ticker META)"
            return f"the {words} {_be(words)} {named[0]} ({', '.join(named[1])})"
        simple = [k for k, v in value.items() if _simple(v) and _told(k, v)]  # its secret unsaid too
        inner = [
            f"{humanize(str(k))} {_short(value[k], rng, style, name=str(k))}"
            for k in _ranked(value, simple)[:3]
        ]
        # "the files: expires 22 July 2026", not "the files are expires 22 July 2026"
        return f"the {words}: {join_facts(inner)}" if inner else f"the {words} has {len(value)} details"
    if isinstance(value, bool) and words.startswith("can "):  # BFCL's canDrive: not "the can drive is no"
        return f"it {'can' if value else 'cannot'} {words[4:]}"
    if isinstance(value, bool):  # "it is not blacklisted", "download enabled: yes"; not "the x is no"
        if " " not in words and (words.endswith("ed") or words in _STATES):
            return f"it is {'' if value else 'not '}{words}"
        return f"{words}: {'yes' if value else 'no'}"
    if words in _BYTES and type(value) is int and value >= 1000:
        return f"{'' if compact else 'the '}{words} {'' if compact else _be(words) + ' '}{byte_words(value)}"
    head, _, tail = words.rpartition(" ")
    if tail in ("at", "on") and head.endswith("ed") and isinstance(value, str) and date_words(value):
        return f"{head} on {_short(value, rng, style)}"  # "created on 20 March 2026", not "the created at is"
    unit = _UNITS.get(words.split(" ")[-1], "")
    if unit and " " not in words:
        return f"it's {_short(value, rng, style, name=name)}{unit}"
    words = words.rsplit(" ", 1)[0] if unit else words
    unit = unit or _heat_unit(words, value, heat) or _wind_unit(words, value, heat)
    if compact:
        return f"{words} {_short(value, rng, style, name=name)}{unit}"
    return f"the {words} {_be(words)} {_short(value, rng, style, name=name)}{unit}"


#: One-word yes-or-no names said as what a thing is ("it is live").
_STATES = frozenset(
    {"live", "active", "public", "private", "available", "open", "online", "visible", "nsfw", "valid"}
    | {"ready", "free", "busy", "paid", "new", "default", "primary", "official", "premium", "pending"}
)
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
    own = f"{singular(noun).lower().replace(' ', '_')}_id"  # Airflow's tasks are named by task_id
    named = [_item_name(i, rng, style, heat, own=own) for i in items[:_MAX_ITEMS]]
    shown = join_facts([n for n in named if n])
    if not noun.endswith("s") and noun not in _MASS and _COLLECTION.search(noun):  # not "2 watchlist"
        things = "items" if count > 1 else "item"
        noun = things if noun in ("list", "array", "collection") else f"{things} in the {noun}"
    elif not noun.endswith("s") and noun not in _MASS:  # a list named by its thing: "2 regions"
        noun = plural(noun) if count > 1 else noun
    elif noun.endswith("news"):  # not "3 news"
        noun = f"{noun} items" if count > 1 else f"{noun} item"
    elif noun.endswith(("us", "ss", "is")):  # a status, a class, an analysis: "2 webpage statuses"
        noun = plural(noun) if count > 1 else noun
    elif count == 1:
        noun = singular(noun)
    more = f", plus {count - _MAX_ITEMS} more" if count > _MAX_ITEMS else ""
    return f"{count} {noun}" + (f": {shown}{more}" if shown else "")


#: Names of a list that hold things ("3 items in the watchlist"); other singular names are the
#: things themselves ("1 place: Rome, Italy", not "1 item in the place"). Whole words but for a
#: list (a watchlist): an asset, an offset or a blog holds nothing.
_COLLECTION = re.compile(
    r"(?:list|(?:^|\s)(?:array|collection|set|queue|history|log|basket|cart|feed|catalog|catalogue|"
    r"inventory|portfolio|group|batch|bundle|library|album|folder))$"
)


def _item_name(
    item: Any, rng: random.Random, style: int, heat: str = "", depth: int = 0, own: str = ""
) -> str:
    """An item by its name; else by its first fields: a dated item as "3 March 2026 (high 21 °C,
    low 12 °C)", another as "size 3 with colour red"."""
    if not isinstance(item, dict):
        return _short(item, rng, style) if _simple(item) else ""
    # By the name keys however the API spells them (an Up account's ``displayName``), then by a
    # name one level down (PeerTube's follow: its follower's name) before its bare id.
    key = _name_key(item, _NAME_KEYS[:-1])
    if key is not None:
        return _short(item[key], rng, style, name=str(key))
    for inner in item.values():
        found = _name_key(inner, _NAME_KEYS[:-1]) if isinstance(inner, dict) else None
        if found is not None:
            return _short(inner[found], rng, style, name=str(found))
    key = _name_key(item, (*_NAME_KEYS, own) if own else _NAME_KEYS)
    if key is not None:
        return _short(item[key], rng, style, name=str(key))
    wrapped = next(iter(item.values())) if len(item) == 1 else None
    if isinstance(wrapped, dict) and depth < 4:  # SureVoIP's {"announcement": {...}}: the item is inside
        return _item_name(wrapped, rng, style, heat, depth + 1)
    simple = [(humanize(str(k)), v) for k, v in item.items() if _simple(v) and _told(k, v)]
    said = [f"{words} {_short(v, rng, style, words)}{_heat_unit(words, v, heat)}" for words, v in simple]
    dated = next((i for i, (_, v) in enumerate(simple) if isinstance(v, str) and date_words(v)), None)
    if dated is None:
        return " with ".join(said[:2])
    others = [phrase for i, phrase in enumerate(said) if i != dated][:2]
    when = _short(simple[dated][1], rng, style)
    return f"{when} ({', '.join(others)})" if others else when


def _name_key(item: dict[Any, Any], keys: Sequence[str], fits: Callable[[Any], bool] = _simple) -> Any:
    """The key of ``item``'s name: the first of ``keys`` it has, however spelled
    (``displayName`` is ``display_name``), whose value ``fits``; None when none does."""
    spelled = {_spelled(k): k for k in item}
    return next((spelled[k] for k in keys if k in spelled and fits(item[spelled[k]])), None)


# ------------------------------------------------------------------------- one call's sentence


_LEADING_WORD = re.compile(r"^(?:for|about|of|on|if|whether|to) ")


#: Keys of a result that only wraps its value (an MCP tool's ``{"result": 1}``).
_WRAPPERS = frozenset({"result", "value", "output"})


def _bare_count(value: Any) -> bool:
    """Whether an action's result is a bare number under a wrapper key (``add_note`` answering
    ``{"result": 1}``, how many notes there are): "I've stored a note; result 1" says nothing a
    person would, so the answer leaves it out."""
    if not isinstance(value, dict) or len(value) != 1:
        return False
    key, inner = next(iter(value.items()))
    return str(key).lower() in _WRAPPERS and isinstance(inner, (int, float)) and not isinstance(inner, bool)


def success(purpose: Purpose, value: Any, rng: random.Random, heat: str = "", computed: bool = False) -> str:
    """The sentence saying a call did ``purpose`` and what it returned (``value``): "I've added a
    pet: Daisy (tag personal, ID pet-3).", "I looked up the current weather: ...". ``heat`` is
    the unit of its temperatures; ``computed`` says the call computed a number from numbers
    alone (its bare number is the answer)."""
    value = unwrapped(value)  # a JSON:API document says its resources, not "the data is ..."
    clause = result_clause(value, _noun(purpose), rng, heat=heat)
    did = f"{past(purpose.verb)} {purpose.core}"
    topic = _LEADING_WORD.sub("", purpose.core)
    if purpose.kind == ACTION and _bare_count(value) and computed:  # the sum of two numbers is the answer
        number = result_clause(next(iter(value.values())), "", rng)
        return rng.choice((f"I've {did}: the result is {number}.", f"I've {did}, which comes to {number}."))
    named = named_record(value, rng, heat=heat)
    if purpose.kind == ACTION and _only_done(value):  # not "I've added a reminder; the status is success"
        return f"I've {did}."
    if purpose.kind == ACTION:
        if named is not None and not _bare_count(value):  # "I've added a pet: Daisy (tag personal)"
            return _led(f"I've {did}", *named, rng)
        return f"I've {did}; {clause}." if clause and not _bare_count(value) else f"I've {did}."
    if not clause:
        if purpose.kind != GET:
            return rng.choice((f"I {did}, but found nothing.", f"Nothing came back when I {did}."))
        return rng.choice(
            (f"I checked {topic}, but there was nothing to report.", f"Nothing came back for {topic}.")
        )
    if isinstance(value, list):
        return rng.choice((f"For {topic}, I found {clause}.", f"I {did} and found {clause}."))
    if (only := _named_as(value, topic)) is not None:  # not "I queried the stock price; the stock price is 4"
        said = result_clause(only, "", rng, heat=heat)
        return rng.choice((f"{topic} is {said}.", f"I {did}: it's {said}."))
    colon = "; " if ":" in clause else ": "  # not "I searched: there are 2 documents: a and b"
    if purpose.kind != GET and named is not None:  # "I found a pet: Buddy (tag finance, ID pet-7)"
        return _led(f"I {did}", *named, rng)
    if purpose.kind != GET:
        return rng.choice((f"I {did}{colon}{clause}.", f"I {did}; {clause}."))
    if isinstance(value, dict):
        found = f"I found {topic}" if topic.startswith(("a ", "an ")) else f"I looked up {topic}"
        if named is not None:  # "I looked up the ticket: Product launch rehearsal (ID 77469, ...)"
            return _led(found, *named, rng)
        # "The daily forecast; there are 3 days: ..." is no sentence: the topic alone leads only a colon.
        bare = (f"{topic}{colon}{clause}.",) if colon == ": " else ()
        options: tuple[str, ...] = (f"For {topic}, {clause}.", f"{found}{colon}{clause}.", *bare)
        return rng.choice(options)
    if topic.startswith("the "):
        return rng.choice((f"{topic} is {clause}.", f"I got {clause} for {topic}."))
    return rng.choice((f"I got {clause} for {topic}.", f"The answer is {clause}."))


#: Fields of an action's result that only say it went well, and the words they say it with.
_DONE_KEYS = frozenset({"status", "success", "ok", "result", "message", "msg", "state"})
_DONE_WORDS = frozenset(
    {
        "success", "successful", "succeeded", "ok", "done", "true", "completed", "complete",
        "updated", "created", "deleted", "removed", "added", "saved", "sent", "accepted", "confirmed",
    }
)  # fmt: skip


def _only_done(value: Any) -> bool:
    """Whether an action's result only says it went well (``{"status": "success"}``,
    ``{"success": true}``): the answer says what was done, not "the status is success"."""
    if not isinstance(value, dict) or not value:
        return False
    return all(str(k).lower() in _DONE_KEYS and _done(v) for k, v in value.items())


def _done(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() in _DONE_WORDS)


def _led(opening: str, name: str, facts: list[str], rng: random.Random) -> str:
    """A record said by its name first: "I've added a pet: Daisy (tag personal, ID pet-3)"."""
    if any(f.startswith("it ") for f in facts):  # not "a video: X, with it is not blacklisted"
        return f"{opening}: {name} ({', '.join(facts)})."
    return rng.choice(
        (f"{opening}: {name} ({', '.join(facts)}).", f"{opening}: {name}, with {join_facts(facts)}.")
    )


def _named_as(value: Any, topic: str) -> Any:
    """The one value of a result whose only field is named as what the call looked for (the
    stock price's ``stock_price``), else ``None``."""
    if not isinstance(value, dict) or len(value) != 1 or not topic.startswith("the "):
        return None
    key, inner = next(iter(value.items()))
    plain = inner is not None and not isinstance(inner, (dict, list, bool))
    return inner if plain and humanize(str(key)).lower() == topic[4:].lower() else None


def _noun(purpose: Purpose) -> str:
    last = purpose.core.split(" ")[-1] if purpose.core else ""
    return last if last.endswith("s") and len(last) > 3 else "results"
