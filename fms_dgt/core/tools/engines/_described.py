"""Output shapes a tool states in prose: the schema its description draws, read into the schema.

API-Bank's catalogue declares ``Dictionary``'s result as ``{"results": {"type": "list"}}`` and
puts the shape of each result in the description: ``The list of results. Format be like
[{"partOfSpeech": "xxx", "definitions": [{"definition": "xxx", "example": "xxx", "synonyms":
["xxx", "xxx"]}, ...]``. A synthesiser that only reads the schema answers ``{"results":
["signal-673", "atlas-953"]}``: a list of placeholders where the description promised entries
with a part of speech and definitions. :func:`described` reads such descriptions and returns the
output schema with the shapes they state:

* an array with no ``items`` (or a node with no type) whose description shows ``[{...}]`` gets
  items of type object with the keys shown; values are read the same way, so the definitions
  above are an array of objects with ``definition``, ``example`` and ``synonyms``, and
  ``["xxx", "xxx"]`` is an array of strings. A value in prose (``"name": possible disease name``)
  becomes that key's description, for the vocabulary to classify;
* an object with no properties whose description shows ``{...}`` gets the keys shown (Wiki's
  ``{"url": "xxx", "summary": "xxx", "content": "xxx"}``);
* a map described as "from appointment_id to a list like ["patient_name": xxx, "date": xxx]" is
  an array of objects, each holding ``appointment_id`` and the keys listed. The catalogue
  declares it a list; an object keyed by made-up ids would leave the id with no schema and no
  name to be classified by, while an item holding its ``appointment_id`` keeps id and record
  together, and a final answer can name both;
* an untyped object of a query (``QueryMeeting``'s ``meeting_info``: "meeting info") is the thing
  the query found: its properties are the tool's inputs (topic, times, location, attendees), but
  credentials (a ``token``). "alarm info including username, time, content and location" names
  its properties itself; those that are inputs take the input's schema.

A node that states its own shape (``type`` with ``items`` or ``properties``, ``enum``, ``$ref``,
combinators) is left alone: the description only fills in what the schema does not say. A list
of plain values (``[Enum]: ["asc", "desc"]``) states no shape, and an object whose keys all hold
digits is keyed by data, not fields (BFCL's ``{"USR001": ["Hello"], "USR002": ["World"]}``): it
gets no properties.

Some described values are words the vocabulary does not hold (a part of speech, a condition, a
first-aid step, a definition): small word lists at the end of this module give them, as an
``enum`` the synthesiser draws from, marked :data:`DISTINCT` so that the items of one list
differ (a search for a symptom finds influenza and a cold, not influenza twice). The enriched
schema only steers synthesis: results are still validated against the tool's own schema.

Descriptions come from whatever catalogue was loaded, so reading them is bounded: at most
:data:`MAX_TEXT` characters of a description, :data:`MAX_DEPTH` levels of nesting,
:data:`MAX_KEYS` keys in an object and :data:`MAX_NODES` schema nodes visited per tool. Text that
breaks a bound or does not parse (a closing bracket of the wrong kind, a key with spaces) leaves
the node as it was; reading never raises. A format cut short at the very end of its description
is closed there: Dictionary's own ends ``..., ...]`` with its outer object and list still open.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from fms_dgt.core.tools.engines._verbs import QUERIES
from fms_dgt.core.tools.engines._verbs import plain as _plain
from fms_dgt.core.tools.fakes import tokens

__all__ = [
    "DISTINCT",
    "MAX_DEPTH",
    "MAX_KEYS",
    "MAX_NODES",
    "MAX_TEXT",
    "described",
    "found_by_query",
    "shown",
]

#: Marks a value the words of :data:`_WORD_LISTS` give: one per item of a list, as far as they go
#: (a dictionary's entries are a noun and a verb, not two nouns).
DISTINCT = "x-dgt-distinct"
#: Characters of a description read for a format.
MAX_TEXT = 2_000
#: Levels of nesting of a format (``[{"definitions": [{...}]}]`` is four).
MAX_DEPTH = 8
#: Keys of one object in a format, and properties an "info" object takes from the inputs.
MAX_KEYS = 32
#: Schema nodes looked at per output schema (an OpenAPI response may hold thousands).
MAX_NODES = 5_000

#: Keywords by which a node states its own shape.
_SHAPED = frozenset(
    {"items", "prefixItems", "properties", "additionalProperties", "patternProperties", "enum", "const"}
    | {"anyOf", "oneOf", "allOf", "not", "if", "$ref", "contains"}
)
#: Bare values of a format that stand for "some value": ``"partOfSpeech": "xxx"``.
_PLACEHOLDERS = frozenset({"", "x", "xx", "xxx", "xxxx", "...", "…", "value", "string", "str", "text", "etc"})
_ELLIPSIS = frozenset({"...", "…", "etc", "etc."})
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]{0,63}")
_NUMBER = re.compile(r"-?\d+(\.\d+)?")
_DIGIT = re.compile(r"\d")
_MAX_VALUE = 200  # characters of one value or key in a format
# "The dict where from appointment_id to a list like [...]": the key each record is found by.
_KEYED = re.compile(
    r"\bfrom\s+(?:an?\s+|the\s+|each\s+)?([A-Za-z_][A-Za-z0-9_]{0,63})\s+to\s+(?:an?\s+|the\s+)?"
    r"(?:list|dict|dictionary|object|record|map)\b[^\[{]{0,40}"
)
# "meeting info", "alarm info including username, time, content and location".
_INFO = re.compile(
    r"\s*([A-Za-z]+(?:\s+[A-Za-z]+)?)\s+info(?:rmation)?"
    r"(?:\s+(?:including|with|containing)\s+([A-Za-z_][A-Za-z0-9_,\s]{0,400}?))?\s*\.?\s*"
)
#: Inputs a call needs that are no part of what it finds (plain names).
_CREDENTIALS = frozenset(
    {"token", "accesstoken", "authtoken", "apikey", "key", "secret", "password", "auth", "authorization"}
    | {"sessionid", "session", "credentials", "signature"}
)


class _Malformed(Exception):
    """A format that does not parse or breaks a bound."""


def described(schema: Mapping[str, Any], tool: str = "", inputs: Mapping[str, Any] | None = None) -> Any:
    """``schema`` with the shapes its descriptions state, or ``schema`` itself when none does.

    Args:
        schema: a tool's output schema (never modified: an enriched schema is a deep copy).
        tool: the tool's name (``QueryMeeting``): a query's untyped "meeting info" is what it found.
        inputs: the tool's input schema, whose properties such an object takes.

    The identity tells a caller whether anything was read: ``described(s) is s`` when the
    schema already says all it can, which costs a caller with a plain schema nothing more.
    """
    if not isinstance(schema, Mapping):
        return schema
    node: Mapping[str, Any] = schema
    found = found_by_query(schema, tool)
    if found:
        props = schema["properties"]
        infos = {name: info for name in found if (info := _info(props[name], inputs)) is not None}
        node = {**schema, "properties": {**props, **infos}} if infos else schema
    node = _walk(node, 0, [MAX_NODES])
    return schema if node is schema else copy.deepcopy(node)


def found_by_query(schema: Mapping[str, Any], tool: str) -> frozenset[str]:
    """The top-level properties of ``schema`` that hold what a query found: untyped objects
    described as "<thing> info" where the tool's name asks for the thing (``QueryReminder``'s
    ``reminder_info``, "remind info"). A result echoes the call's arguments into them.

    ``GetUserInfo``'s "user info" is one; ``AddMeeting``'s would not be (adding finds nothing),
    nor ``QueryMeeting``'s "weather info" (not the meeting asked about).
    """
    words = [w for w in tokens(tool.rsplit(".", 1)[-1]) if w]
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    if not words or words[0] not in QUERIES or not isinstance(props, Mapping):
        return frozenset()
    asked = words[1:]
    found = set()
    for name, node in props.items():
        if not isinstance(node, Mapping) or not _shapeless(node) or node.get("type") not in (None, "object"):
            continue
        said = node.get("description")
        match = _INFO.fullmatch(said[:MAX_TEXT]) if isinstance(said, str) else None
        if match and any(_akin(w.lower(), a) for w in match.group(1).split() for a in asked):
            found.add(str(name))
    return frozenset(found)


def shown(description: str) -> dict[str, Any] | None:
    """The schema of the first format a description shows (``[{...}]``, ``{...}`` or a keyed
    map), or None when it shows none or the text is malformed.

    ``shown('Format be like [{"name": possible disease name, "aid": first-aid method}, ...]')``
    is an array of objects with ``name`` (described "possible disease name") and ``aid``.
    """
    text, complete = description[:MAX_TEXT], len(description) <= MAX_TEXT
    keyed = _KEYED.search(text)
    if keyed is not None:
        record = _parsed(text, keyed.end(), complete)
        if record is None or record.get("type") != "object":
            return None
        key = keyed.group(1)
        props = {key: {"type": "string"}, **{k: v for k, v in record["properties"].items() if k != key}}
        return {"type": "array", "items": {"type": "object", "properties": props, "required": list(props)}}
    start = next((i for i, c in enumerate(text) if c in "[{"), -1)
    if start < 0:
        return None
    found = _parsed(text, start, complete)
    if found is None:
        return None
    if found.get("type") == "array" and (found.get("items") or {}).get("type") != "object":
        return None  # a list of plain values ("[Enum]: ['asc', 'desc']") says no shape
    return found if found.get("items") or found.get("properties") else None


# ---------------------------------------------------------------- the schema walk


def _walk(node: Mapping[str, Any], depth: int, budget: list[int]) -> Mapping[str, Any]:
    """``node`` with described shapes filled in, sharing what did not change (the caller copies)."""
    budget[0] -= 1
    if budget[0] < 0 or depth > 32:
        return node
    if _shapeless(node):
        said = node.get("description")
        found = shown(said) if isinstance(said, str) and said else None
        filled = _filled(node, found) if found is not None else None
        if filled is not None:
            return filled
    out: dict[str, Any] | None = None
    props = node.get("properties")
    if isinstance(props, Mapping):
        new_props = {
            k: _walk(v, depth + 1, budget) if isinstance(v, Mapping) else v for k, v in props.items()
        }
        if any(new_props[k] is not props[k] for k in props):
            out = {**node, "properties": new_props}
    items = node.get("items")
    if isinstance(items, Mapping):
        new_items = _walk(items, depth + 1, budget)
        if new_items is not items:
            out = {**(out or node), "items": new_items}
    return out if out is not None else node


def _shapeless(node: Mapping[str, Any]) -> bool:
    """Whether ``node`` states no shape of its own: no type, or an array or object type alone."""
    return _SHAPED.isdisjoint(node) and node.get("type") in (None, "array", "object")


def _filled(node: Mapping[str, Any], found: Mapping[str, Any]) -> dict[str, Any] | None:
    """``node`` given the shape ``found``, when its declared type admits it."""
    declared = node.get("type")
    if found["type"] == "object" and declared == "array":
        return {**node, "items": dict(found)}  # "a list of results, each like {...}"
    if declared not in (None, found["type"]):
        return None  # a dict shown as a list of records: the declared type wins
    return {**node, **found}


def _info(node: Mapping[str, Any], inputs: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A query's "<thing> info" object: the inputs (or the names the description lists)."""
    given = inputs.get("properties") if isinstance(inputs, Mapping) else None
    given = given if isinstance(given, Mapping) else {}
    match = _INFO.fullmatch(str(node.get("description"))[:MAX_TEXT])
    if match is None:
        return None
    listed = match.group(2)
    if listed:
        names = [n.strip() for n in re.split(r",|\band\b", listed) if n.strip()]
        if not names or len(names) > MAX_KEYS or not all(_KEY.fullmatch(n) for n in names):
            return None
        props = {n: given[n] if isinstance(given.get(n), Mapping) else {} for n in names}
    else:
        props = {
            str(k): v
            for k, v in given.items()
            if isinstance(v, Mapping) and _plain(str(k)) not in _CREDENTIALS
        }
        if not props or len(props) > MAX_KEYS:
            return None
    return {**node, "type": "object", "properties": props, "required": list(props)}


def _akin(word: str, asked: str) -> bool:
    """Whether ``word`` names what ``asked`` does: one starts the other ("remind", "reminder")."""
    return min(len(word), len(asked)) >= 4 and (word.startswith(asked) or asked.startswith(word))


# ---------------------------------------------------------------- reading a format


def _parsed(text: str, start: int, complete: bool) -> dict[str, Any] | None:
    """The schema of the format at ``text[start]``, or None. ``complete``: whether ``text`` is the
    whole description (a format still open at its end is closed there, not where reading stopped)."""
    reader = _Reader(text, complete)
    try:
        reader.space(start)
        return reader.value(0)
    except (_Malformed, IndexError):
        return None


class _Reader:
    """A forgiving reader of the JSON-like formats catalogues write: keys quoted or not, values
    quoted, bare words or prose, ``...`` for "more of the same", a list of ``key: value`` pairs
    for a record, and containers still open where the text ends."""

    __slots__ = ("at", "complete", "nodes", "text")

    def __init__(self, text: str, complete: bool) -> None:
        self.text = text
        self.complete = complete  # whether the text is the whole description
        self.at = 0
        self.nodes = 0

    def space(self, at: int | None = None) -> None:
        if at is not None:
            self.at = at
        while self.at < len(self.text) and self.text[self.at].isspace():
            self.at += 1

    def peek(self) -> str:
        return self.text[self.at] if self.at < len(self.text) else ""

    def value(self, depth: int) -> dict[str, Any]:
        self.nodes += 1
        if depth > MAX_DEPTH or self.nodes > MAX_KEYS * 8:
            raise _Malformed("too deep or too many values")
        self.space()
        head = self.peek()
        if head in ("[", "{"):
            return self.container(depth)
        if head in ('"', "'"):
            return _leaf(self.quoted(), quoted=True)
        return _leaf(self.bare(), quoted=False)

    def container(self, depth: int) -> dict[str, Any]:
        """An object, an array, or a record written as a list of pairs."""
        close = "]" if self.text[self.at] == "[" else "}"
        self.at += 1
        props: dict[str, Any] = {}
        elements: list[dict[str, Any]] = []
        while True:
            self.space()
            head = self.peek()
            if head == "":
                if not self.complete:
                    raise _Malformed("the text was cut before the format ended")
                break  # the description ends with the format still open
            if head == close:
                self.at += 1
                break
            if head in "]}":
                raise _Malformed(f"{head} closes {close}")
            if self.text.startswith(("...", "…"), self.at):
                self.at += 3 if self.text[self.at] == "." else 1
            else:
                key = self.key() if close == "}" else self.pair_key()
                if key is None:
                    elements.append(self.value(depth + 1))
                elif key not in props:
                    props[key] = self.value(depth + 1)
                    if len(props) > MAX_KEYS:
                        raise _Malformed("too many keys")
            self.space()
            if self.peek() == ",":
                self.at += 1
            elif self.peek() not in (close, ""):
                raise _Malformed(f"unexpected {self.peek()!r}")
        if props and elements:
            raise _Malformed("pairs and plain values in one list")
        if len(props) > 1 and all(_DIGIT.search(k) for k in props):
            # keys that are data, not fields: BFCL's messages "{"USR001": [...], "USR002": [...]}"
            return {"type": "object"}
        if props or close == "}":
            around = {w for key in props for w in tokens(key)}
            props = {key: _worded(key, value, around) for key, value in props.items()}
            return {"type": "object", "properties": props, "required": list(props)}
        items = next((e for e in elements if e), None)
        return {"type": "array", "items": items} if items is not None else {"type": "array"}

    def key(self) -> str:
        """An object's key and the colon after it."""
        found = self.pair_key()
        if found is None:
            raise _Malformed("an object's member without a key")
        return found

    def pair_key(self) -> str | None:
        """The key of a ``key: value`` pair starting here (the colon read), or None (nothing read)."""
        start = self.at
        if self.peek() in ('"', "'"):
            name = self.quoted()
        else:
            match = _KEY.match(self.text, self.at)
            name = match.group() if match else ""
            self.at = match.end() if match else self.at
        self.space()
        if self.peek() != ":" or not _KEY.fullmatch(name):
            self.at = start
            return None
        self.at += 1
        return name

    def quoted(self) -> str:
        quote = self.text[self.at]
        end = self.at + 1
        while end < len(self.text) and self.text[end] != quote:
            end += 2 if self.text[end] == "\\" else 1
        if end >= len(self.text) or end - self.at > _MAX_VALUE:
            raise _Malformed("an unclosed or overlong string")
        found = self.text[self.at + 1 : end]
        self.at = end + 1
        return found

    def bare(self) -> str:
        """Words up to the next separator: ``xxx``, ``42``, ``possible disease name``."""
        end = self.at
        while end < len(self.text) and self.text[end] not in ",]}":
            if self.text[end] in "[{\"':" or end - self.at > _MAX_VALUE:
                raise _Malformed("a value that is neither a word nor a container")
            end += 1
        found = self.text[self.at : end].strip()
        self.at = end
        if found in _ELLIPSIS:
            return "..."
        return found


def _worded(key: str, schema: dict[str, Any], around: set[str]) -> dict[str, Any]:
    """A format's string (or list of strings) that the vocabulary has no words for, given some:
    a dictionary entry's ``partOfSpeech`` is a noun or a verb, not ``alpha-266``; the ``aid`` of
    "first-aid method" is a first-aid step, not an id. The words are what the key and the prose
    shown for its value say together (``"name": possible disease name`` is a condition); some
    lists also need a sibling key (an ``example`` is a usage beside a ``definition``, and
    ``around`` holds the words of the object's keys)."""
    target = schema.get("items") if schema.get("type") == "array" else schema
    if not isinstance(target, dict) or target.get("type") not in (None, "string") or "enum" in target:
        return schema
    said = [*tokens(key), *tokens(str(target.get("description") or ""))]
    words = {*said, *(w[:-1] for w in said if w.endswith("s"))}
    listed = next(
        (values for need, beside, values in _WORD_LISTS if need <= words and beside <= around), None
    )
    if listed is None:
        return schema
    worded = {**target, "type": "string", "enum": list(listed), DISTINCT: True}
    return {**schema, "items": worded} if target is not schema else worded


def _leaf(text: str, *, quoted: bool) -> dict[str, Any]:
    """The schema of a scalar a format shows: ``"xxx"`` a string, ``42`` an integer, ``true`` a
    yes or no, prose the description of a value of no stated type."""
    word = text.strip()
    if quoted:
        return {"type": "string"}
    if word.lower() in _PLACEHOLDERS:
        return {}
    if _NUMBER.fullmatch(word):
        return {"type": "number" if "." in word else "integer"}
    if word.lower() in ("true", "false"):
        return {"type": "boolean"}
    if word.lower() in ("null", "none"):
        return {}
    return {"description": word}


# ---------------------------------------------------------------- words for described values

_PARTS_OF_SPEECH = ("noun", "verb", "adjective", "adverb")
_DEFINITIONS = (
    "The state of being calm and at ease.",
    "A short trip taken for pleasure.",
    "To move quickly from one place to another.",
    "Pleasant to look at or to be with.",
    "A statement that explains what something means.",
    "In a careful and deliberate way.",
)
_USAGES = (
    "She found it by chance on the walk home.",
    "They took a short break before the final push.",
    "It was the best decision the team made all year.",
    "He talked about it at length over dinner.",
    "We read the letter twice before replying.",
)
_SYNONYMS = ("chance", "fortune", "journey", "outing", "pleasant", "agreeable", "swiftly", "carefully")
_CONDITIONS = (
    "Common cold",
    "Influenza",
    "Strep throat",
    "Sinusitis",
    "Migraine",
    "Gastroenteritis",
    "Bronchitis",
    "Seasonal allergies",
    "Dehydration",
    "Tension headache",
)
# Details and first aid that hold for any of the conditions above.
_CONDITION_DETAILS = (
    "Usually mild; it clears up within one or two weeks with rest and fluids.",
    "Often comes with tiredness; see a doctor if it lasts more than three days.",
    "Common and rarely serious; over-the-counter remedies ease the symptoms.",
    "Symptoms can come and go; a note of when they started helps a doctor.",
    "See a doctor promptly if breathing becomes difficult or the pain gets worse.",
    "Most people recover at home with rest and plenty of water.",
)
_FIRST_AID = (
    "Rest and drink plenty of fluids.",
    "Sit the person down, loosen tight clothing and keep them calm.",
    "Take paracetamol or ibuprofen as directed on the pack.",
    "Keep the person warm and watch their breathing.",
    "Call the emergency services if the symptoms get worse.",
    "Stay with the person and note when the symptoms started.",
)
_NOTHING: frozenset[str] = frozenset()
#: Words for described values the vocabulary has none for: the words of the key and its prose
#: that ask for them, the words of sibling keys they need, the words (first match wins).
_WORD_LISTS: tuple[tuple[frozenset[str], frozenset[str], tuple[str, ...]], ...] = (
    (frozenset({"part", "speech"}), _NOTHING, _PARTS_OF_SPEECH),
    (frozenset({"definition"}), _NOTHING, _DEFINITIONS),
    (frozenset({"synonym"}), _NOTHING, _SYNONYMS),
    (frozenset({"example"}), frozenset({"definition"}), _USAGES),
    (frozenset({"aid"}), _NOTHING, _FIRST_AID),
    (frozenset({"disease", "name"}), _NOTHING, _CONDITIONS),
    (frozenset({"disease", "detail"}), _NOTHING, _CONDITION_DETAILS),
)
