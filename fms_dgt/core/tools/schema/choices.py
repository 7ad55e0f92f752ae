"""The values a parameter's description says it takes, when its schema has no ``enum``.

Tool sets written by hand often list a parameter's values in prose instead of an ``enum``:
BFCL's multi-turn docs write ``The mode of the headlights. [Enum]: ["on", "off", "auto"]``,
API-Bank's ``ForgotPassword`` takes ``'Forgot Password' for first call, ... again with
'Verification Code'``, and OpenAPI descriptions say ``Sort order: `asc` or `desc` ``. A value
outside such a list fails the call as surely as one outside an ``enum``, so argument synthesis
draws from it and the dataflow enrichment wires nothing into it that cannot be one of its values.

Only a list that reads as closed counts: BFCL's ``[Enum]: [...]`` tag; a description that is
nothing but two to four bare words joined by ``or`` (API-Bank's ``success or failed``); quoted
values after a cue that introduces the choices (``can be``, ``either``, ``one of``, ``options``,
``supported values``...), run together with commas and ``or``, or each followed by what it
means (``'gas' refers to ...``). A description that marks its list as open (``etc.``, ``e.g.``,
``such as``, ``including``) or quotes names that are no alternatives gives none; nor does one
longer than 2,000 characters. One value is read from a description that names a resource's
type and nothing else (JSON:API's ``The type of this resource: `webhooks` ``). The schema shown
to the model is never changed.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_DESCRIBED", "described_choices", "described_default", "described_values", "free_text"]

#: The most values read from one description; a longer list reads as open.
MAX_DESCRIBED = 64
#: Longest description read (a longer one is documentation, not a parameter's note).
_MAX_TEXT = 2000

_ANY_QUOTE = re.compile(r"['\"`]|\sor\s")
#: A description that is only two to four bare words joined by "or" ("success or failed").
_BARE_ALTERNATIVES = re.compile(r"[a-z_]{1,40}(?:, [a-z_]{1,40}){0,2},? or [a-z_]{1,40}\.?")
_BARE_SEPARATOR = re.compile(r",? or |, ")
#: The same alternatives in parentheses at a description's end ("Transaction type (deposit or
#: withdrawal).").
_ASIDE = re.compile(r"\(([a-z_]{1,40}(?:, [a-z_]{1,40}){0,2},? or [a-z_]{1,40})\)\.?\s*$")
_ENUM_TAG = re.compile(r"\[Enum\]\s*:?\s*(\[[^\]]{0,4000}\])", re.IGNORECASE)
_OPEN = re.compile(
    r"\betc\b|\be\.?g\.?(?=[\s:,])|\beg\s*:|\bsuch as\b|\bfor (?:example|instance)\b|\blike\b|\bexamples?\b"
    r"|\bincludes?\b|\bincluding\b|\bamong\b|\band (?:so on|more)\b|\.\.\.|…"
    r"|\bfor a (?:full|complete) list\b",
    re.IGNORECASE,
)
_BRACKETED = re.compile(r"\[[^\]]*\]")
_Q = r"(?:'([^'\n]{1,40})'|\"([^\"\n]{1,40})\"|`([^`\n]{1,40})`)"
_QUOTED = re.compile(_Q)
# A run of two or more quoted values joined by commas, slashes, "or" (and "and" before the last).
_RUN = re.compile(rf"{_Q}(?:\s*(?:,\s*(?:or\s+|and\s+)?|/|\bor\b)\s*{_Q})+")
#: Longest description whose bare quoted alternatives count without a cue.
_SHORT = 200
_WORDY = re.compile(r"[^\W_]")
# "One of `name` or `selector` must be set": names of fields, not values.
_NAMED = re.compile(r"\s*(?:must|should|is|are|needs?|has|have|can|may|will|set|field|parameter|key)\b")
# Without a cue, a list stands on its own: at the start, after a comma, colon or parenthesis
# (not "the order status is `paid` or ...", "plans with `month` or `year` intervals").
_OPENS = re.compile(r"(?:^|[,:;(]|\.)\s*$")
_ALTERNATIVE = re.compile(r"\bor\b|/")
_CUE = re.compile(
    r"\b(?:can be|could be|may be|must be|should be|either|one of|options?|choices?|possible values?"
    r"|allowed values?|accepted values?|supported values?|valid values?|values? (?:is|are)"
    r"|(?:options?|choices?) (?:is|are)"
    r"|supports?|accepts?|use|set to|pass)\b[\s:,-]{0,4}(?=['\"`])",
    re.IGNORECASE,
)
#: A description that names the one value a resource's type takes, at its end.
_CONSTANT = re.compile(
    rf"^The (?:type|kind) of this (?:resource|object|record|entity)\s*(?:is\s*)?:?\s*{_Q}\.?\s*$"
)
# 'gas' refers to a gasoline vehicle, 'diesel' refers to ...; 'asc' for ascending, 'desc' for ...
_GLOSS = re.compile(rf"{_Q}\s*(?:\(|:|=|-|\bfor\b|\bto\b|\bmeans\b|\brefers to\b|\bif\b|\bwhen\b)")


@functools.lru_cache(maxsize=8192)
def described_values(description: str) -> tuple[str, ...] | None:
    """The closed list of values ``description`` gives, in its order (None when it gives none)."""
    if not description or len(description) > _MAX_TEXT or not _ANY_QUOTE.search(description):
        return None  # most descriptions quote nothing: one scan says so
    tagged = _ENUM_TAG.search(description)
    if tagged is not None:
        return _tagged(tagged.group(1))
    constant = _CONSTANT.search(description)
    if constant is not None:  # JSON:API's "The type of this resource: `webhooks`"
        return (_first(constant),)
    bare = _BARE_ALTERNATIVES.fullmatch(description.strip())
    if bare is not None:  # API-Bank's "success or failed": the whole description is the values
        return tuple(dict.fromkeys(w for w in _BARE_SEPARATOR.split(bare.group(0).rstrip(".")) if w))
    if _OPEN.search(description):
        return None
    aside = _ASIDE.search(description)
    if aside is not None:  # "Transaction type (deposit or withdrawal)."
        return tuple(dict.fromkeys(w for w in _BARE_SEPARATOR.split(aside.group(1)) if w))
    # A bracketed list is a default or an example of a list (``default is ['strengths']``).
    text = _BRACKETED.sub(" ", description)
    found: list[str] = []
    for cue in _CUE.finditer(text):
        run = _RUN.match(text, cue.end()) or _QUOTED.match(text, cue.end())
        sentence = text[: cue.start()].rsplit(". ", 1)[-1]
        # "The file's `purpose` must be one of ...", "`type` is ...": the list is another field's.
        if run is not None and not _QUOTED.search(sentence) and not _NAMED.match(text, run.end()):
            found += _quoted(run.group(0))
    if not found and len(text) <= _SHORT:
        runs = [
            m
            for m in _RUN.finditer(text)
            if _OPENS.search(text[: m.start()]) and not _NAMED.match(text, m.end())
        ]
        if len(runs) == 1 and _ALTERNATIVE.search(runs[0].group(0)):
            found = _quoted(runs[0].group(0))
        glossed = [_first(m) for m in _GLOSS.finditer(text)]
        if not found and len(glossed) >= 2 and len(glossed) == len(_QUOTED.findall(text)):
            found = glossed
    values = list(dict.fromkeys(v.strip() for v in found if _WORDY.search(v)))
    if {v.lower() for v in values} <= {"true", "false"}:
        return None  # a boolean written as text
    return tuple(values) if 2 <= len(values) <= MAX_DESCRIBED else None


def described_choices(schema: Any, parent: Any = None) -> tuple[str, ...] | None:
    """The values a string parameter's description lists, when its schema lists none itself; for
    a list, its items' (read from the list's description when they have none, as BFCL writes
    them).

    ``parent``: the array whose items ``schema`` is.
    """
    if not isinstance(schema, Mapping) or "enum" in schema or "const" in schema:
        return None
    kind = schema.get("type", "string")
    if kind == "array":
        items = schema.get("items")
        return described_choices(items, schema) if parent is None and isinstance(items, Mapping) else None
    if kind != "string" and not (isinstance(kind, list) and "string" in kind):
        return None
    description = schema.get("description")
    if not isinstance(description, str) and isinstance(parent, Mapping):
        description = parent.get("description")
    return described_values(description) if isinstance(description, str) else None


def _tagged(listed: str) -> tuple[str, ...] | None:
    try:
        values = json.loads(listed)
    except ValueError:
        return None
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        return None
    unique = tuple(dict.fromkeys(values))
    return unique if 1 <= len(unique) <= MAX_DESCRIBED else None


def _quoted(text: str) -> list[str]:
    return [_first(m) for m in _QUOTED.finditer(text)]


def _first(match: re.Match[str]) -> str:
    return next(g for g in match.groups() if g is not None)


#: "Default is 'hoyts'", "Defaults to `0`", "Default: True", "(default 0.95)": the value a
#: description says a parameter takes when it is left out.
_DEFAULT = re.compile(
    r"(?:\bdefaults?\s+(?:is|to|value is|value)\s*:?|\bdefault\s*:|\(default)\s*"
    rf"(?:{_Q}|(-?\d+(?:\.\d+)?|[A-Za-z][\w.:+-]{{0,39}}))(?=[\s,;)]|\.(?:\s|$)|$)",
    re.IGNORECASE,
)
#: Words after "default" that name no value ("Default is None", "default: empty").
_NO_VALUE = frozenset({"none", "null", "nil", "empty", "unset", "all", "the", "a", "an", "not", "no"})


@functools.lru_cache(maxsize=8192)
def described_default(description: str) -> tuple[Any] | None:
    """The value a description says a parameter defaults to, as the one item of a tuple
    (``("hoyts",)``, ``(0,)``, ``(True,)``, ``(0.95,)``), or None when it names none. Tools
    written without a schema type (ToolMind's When2Call pool) say their defaults in prose, and
    such a value is a real one where nothing else says what the parameter holds. A value in
    backticks or bare is read as a number or a yes-or-no when it is one; a quoted one is text."""
    if not description or len(description) > _MAX_TEXT or "default" not in description.lower():
        return None
    found = _DEFAULT.search(description)
    if found is None:
        return None
    single, double, code, bare = found.group(1), found.group(2), found.group(3), found.group(4)
    text = single if single is not None else double
    if text is not None:
        return (text,) if _WORDY.search(text) else None
    word = (code if code is not None else bare).strip().rstrip(".:")
    if not word or word.lower() in _NO_VALUE:
        return None
    if word.lower() in ("true", "false"):
        return (word.lower() == "true",)
    for parse in (int, float):
        try:
            return (parse(word),)
        except ValueError:
            pass
    return (word,)


def free_text(schema: Any) -> bool:
    """Whether a schema asks for a string and constrains it no further (no list of values,
    pattern, format, reference or combination): a value a caller may choose, such as a class name."""
    if not isinstance(schema, Mapping) or schema.get("type", "string") != "string":
        return False
    return not _CONSTRAINING & schema.keys()


_CONSTRAINING = frozenset({"enum", "const", "pattern", "format", "$ref", "allOf", "anyOf", "oneOf", "not"})
