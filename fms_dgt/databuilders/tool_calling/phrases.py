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
    "date_words",
    "error_words",
    "intended_values",
    "plain",
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
#: Control characters, and the invisible ones that reorder or hide text (bidi overrides, zero
#: widths): a reply's "Rex\u202e(json)" is read as it was written, not backwards.
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
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
    if isinstance(value, int) and value.bit_length() > 1000:  # past a float (a hostile total)
        return "a number of over 300 digits"
    if isinstance(value, int | float) and abs(value) >= 1e15:  # 5.55e+50, not fifty digits
        return f"{value:.3g}"
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
_BOUNDS = word_set("gte gt lte lt")
_NAMING = word_set("id ids index number no code offset start page key position")
_COUNTED = word_set("days hours minutes seconds weeks months years nights adults children guests people")
_COUNTED |= word_set("persons passengers tickets rooms items results pages words servings players seats kids")
_PLAIN_LISTS = word_set("numbers values elements data items list")
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
        named = _identifier(value)
        if named is not None:  # Up's category {"id": "cate-60937", "type": "categories"}
            return f"with the {singular(label(named[1]))} {named[0]}"
        if name.lower() in _WRAPPERS:  # JSON:API's data.attributes: its values, not "the data attributes"
            inner = schema.get("properties")
            return join_words(value_phrases(inner if isinstance(inner, Mapping) else {}, value, rng))
        said = _pairs(value)
        return f"with {_label(words)} {said}" if said else ""
    if isinstance(value, (int, float)):
        return _number_phrase(words, last, value, rng)
    text = str(value)
    if words.lower() in _CREDENTIALS and _SECRET.match(text):  # "using my key 82f2...", a user's own
        shown = "key" if words.lower() in ("apikey", "api key") else words  # (no "API": a request names none)
        return rng.choice((f"using my {shown} {text}", f"with my {shown} {text}"))
    if (
        words.lower() in _UNIT_ENDS
    ):  # "from pound to kilogram", not "with the unit in pound for unit out kilogram"
        return f"{_UNIT_ENDS[words.lower()]} {text}"
    when = date_words(text, rng.randrange(4))
    if when is not None:
        return _date_phrase(words, last, when, rng)
    return _text_phrase(words, last, plain(text, VALUE_LIMIT), "enum" in schema, rng)


#: Names of a credential a user holds (a pagination or file token is no credential).
_CREDENTIALS = frozenset(
    {"apikey", "api key", "key", "access key", "secret key", "token", "access token", "auth token"}
    | {"session token", "bearer token"}
)
_SECRET = re.compile(r"^[A-Za-z0-9_\-.]{16,}$")


#: A conversion's unit arguments, by how a person says them.
_UNIT_ENDS = {
    **dict.fromkeys(("unit in", "from unit", "unit from", "source unit", "input unit", "in unit"), "from"),
    **dict.fromkeys(("unit out", "to unit", "unit to", "target unit", "output unit", "out unit"), "to"),
}


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
    field = words.rsplit(" ", 1)[0]
    if last in _BOUNDS and " " in words and not _STARTS.match(field):
        # a bound of another moment than the start says which: Airflow's end_date_gte beside
        # start_date_gte read "from May 16 at 12:45 from May 16 at 12:45 up to ..."
        return f"with {article(field)} {'up to' if last in ('lte', 'lt') else 'from'} {when}"
    if last in ("lte", "lt", "before", "until"):  # Airflow's start_date_lte: started by then, not "starting"
        return rng.choice((f"until {when}", f"up to {when}"))
    if _STARTS.search(words):
        return rng.choice((f"from {when}", f"starting {when}"))
    if _ENDS.search(words):
        return rng.choice((f"until {when}", f"up to {when}"))
    if last in ("date", "day", "time", "datetime", "when", "at", "on") or not words:
        return f"on {when}" if " at " not in when else rng.choice((f"on {when}", f"for {when}"))
    return f"with {_label(words)} {when}"


def _text_phrase(words: str, last: str, text: str, enum: bool, rng: random.Random) -> str:
    first = words.split(" ")[0].lower() if words else ""
    if last in _QUOTED or (_SENTENCE_LIKE.search(text) and last not in _PLACES):
        # a sentence is quoted whatever it is called: not 'translate from Could you send me ...?'
        return _quoted(last, words, text, rng)
    if words.lower() in _SORTINGS and _FIELD.match(text):
        return _sort_phrase(text)
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


#: Names of what a listing is sorted by, and a value that names a field ("-created_at").
_SORTINGS = frozenset(
    {"sort", "order", "ordering", "sorting", "sort by", "order by", "sort order", "sort field"}
)
_FIELD = re.compile(r"^[-+]?[A-Za-z][A-Za-z_]{0,40}$")
_MADE = re.compile(r"\b(?:created|updated|modified|published|posted)\b")
_MOMENTS = re.compile(r"\b(?:date|time|at|on|start|end|timestamp)\b")


def _sort_phrase(text: str) -> str:
    """How a listing is sorted, as a person asks for it, with the value as the API takes it (a
    request states every value): ``-created_at`` is "sorted by -created_at, newest first", not
    "for order by -created_at"; ``name`` "sorted by name"; ``desc`` "sorted desc"."""
    if text.lower() in ("asc", "ascending", "desc", "descending"):
        return f"sorted {text}"
    descending, field = text.startswith("-"), label(text.lstrip("-+")).lower()
    if _MADE.search(field):
        return f"sorted by {text}, {'newest' if descending else 'oldest'} first"
    if _MOMENTS.search(field):
        return f"sorted by {text}, {'latest' if descending else 'earliest'} first"
    return f"sorted by {text}"


#: Text that reads as a sentence: four words or more ending in a sentence's mark.
_SENTENCE_LIKE = re.compile(r"^\S+(?:\s+\S+){3,}[.!?]$")


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
    named = [_identifier(i) for i in items]
    kinds = {n[1] for n in named if n is not None}
    if None not in named and len(kinds) == 1:  # Up's tags: "the tags tag-1 and tag-2", not "2 data: ID..."
        noun = label(kinds.pop())
        return (
            f"with the {noun if len(items) > 1 else singular(noun)} {join_words([n[0] for n in named if n])}"
        )
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


#: Objects that only wrap a request's values (JSON:API's ``data`` and ``attributes``, a body).
_WRAPPERS = frozenset({"data", "attributes", "body", "payload", "request", "params"})


def _identifier(value: Any) -> tuple[str, str] | None:
    """A JSON:API resource identifier, ``{"id": "tag-1", "type": "tags"}``: its id and its type."""
    if not isinstance(value, dict) or set(value) != {"id", "type"} or not isinstance(value["type"], str):
        return None
    return (str(value["id"]), value["type"]) if _scalar(value["id"]) and value["type"] else None


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
