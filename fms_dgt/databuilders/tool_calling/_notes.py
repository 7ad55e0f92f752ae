"""Implementation notes in a text: what a description says for a model and a person never asks.

Defaults, fallbacks, notes, internals, provider names ("Note: other cities get a default."): the
purpose of a tool is read without them (:mod:`~fms_dgt.databuilders.tool_calling.wording`), and a
request that holds one fails the offline checks. Split from ``wording`` to keep each module short.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["implementation_notes"]

# Sentences and clauses a person would never say when asking: defaults, fallbacks, notes, examples,
# internals, limits, provider names. The same patterns drop them from purposes and find them in turns.
# Beside each pattern, lower-case words every match of it holds (one of them at least): a text with
# none of them holds no note, and a substring test costs far less than running the patterns over it.
_NOTE_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (r"\bby default\b", ("default",)),
    (r"\bdefaults? (?:to|is|value)\b", ("default",)),
    (r"\bdefault\b(?=\s*(?:[).,;]|$))", ("default",)),
    (r"\bfalls? back\b", ("fall",)),
    (r"\bbelongs to\b", ("belongs to",)),
    (r"\bapis?\b", ("api",)),
    (
        r"\bother \w+(?: \w+)? (?:get|gets|return|returns|receive|receives|use|uses|fall back|default)\b",
        ("other ",),
    ),
    (r"\bnote\s*:", ("note",)),
    (r"(?:^|[.!?]\s+)note that\b", ("note that",)),
    (r"\bimportant\s*:", ("important",)),
    (r"\be\.\s?g\.", ("g.",)),
    (r"\bi\.\s?e\.", ("i.",)),
    (r"\bfor (?:example|instance)\b", ("for example", "for instance")),
    (r"\bexamples?\s*:", ("example",)),
    (r"\binternal(?:ly)?\b", ("internal",)),
    (r"\bimplementation\b", ("implementation",)),
    (r"\bdeprecated\b", ("deprecated",)),
    (r"\brapid\s?api\b", ("rapid",)),
    (r"\btoolbench\b", ("toolbench",)),
    (r"\bendpoint\b", ("endpoint",)),
    (r"\brate[- ]limit", ("rate-", "rate ")),
    (
        r"\bthis (?:api|tool|function|method|endpoint)\b",
        ("this api", "this tool", "this function", "this method", "this endpoint"),
    ),
    (r"\bthe (?:api|tool|endpoint)\b", ("the api", "the tool", "the endpoint")),
    (r"\b(?:returns?|will return|raises?) (?:an? )?(?:error|exception)\b", ("error", "exception")),
    (r"\bthe agent (?:needs|should|must|will|can|has)\b", ("the agent ",)),
    (r"\bexplicit (?:user )?confirmation\b", ("confirmation",)),
    (r"\bonly (?:be )?(?:call|called|use|used) (?:it |this )?(?:once|if|when)\b", ("only ",)),
    (r"\bcan only be called\b", ("can only be called",)),
    (r"\bbe careful\b", ("be careful",)),
    (r"\b(?:if|when) (?:the )?\w+ (?:is|are) not (?:found|given|provided|specified|set)\b", (" not ",)),
    (r"\bhttps?://", ("://",)),
    (r"(?:^|\s)/[\w{}:.-]+/[\w{}:./-]+", ("/",)),
    (r"%[YmdHMS]", ("%",)),
    (r"\bin (?:\.\w+|json|xml|html|csv|mp3) format\b", (" format",)),
    (r"\bafter approximately\b", ("after approximately",)),
    (r"\bfor approx\b", ("for approx",)),
    (
        r"\bthe (?:input|output|response|result) (?:is|will be)\b",
        ("input ", "output ", "response ", "result "),
    ),
    (r"\bmocked\b|\bmock (?:data|results?|responses?)\b", ("mock",)),
    (r"\bsimulated\b", ("simulated",)),
    (
        r"\b(?:since|until) the (?:server|service|process|program|app|application|system|session) "
        r"(?:started|was started|launched|began|restarted|stops|ends|exits|restarts)\b",
        ("since the ", "until the "),
    ),
)
_NOTE_PATTERNS = tuple(pattern for pattern, _ in _NOTE_RULES)
_NOTE_WORDS = tuple(dict.fromkeys(word for _, words in _NOTE_RULES for word in words))


def _alternation(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One regex of every pattern. Those that start at a word boundary share it, so the engine
    tries their words only where a word starts, not at every character (3x faster on a request)."""
    words = [p.removeprefix(r"\b") for p in patterns if p.startswith(r"\b")]
    others = [p for p in patterns if not p.startswith(r"\b")]
    shared = [r"\b(?:" + "|".join(f"(?:{p})" for p in words) + ")"] if words else []
    parts = [*shared, *(f"(?:{p})" for p in others)]
    return re.compile("|".join(parts), re.IGNORECASE)


_NOTES = _alternation(_NOTE_PATTERNS)


@lru_cache(maxsize=256)
def _some_notes(rules: tuple[int, ...]) -> re.Pattern[str]:
    """The alternation of some of the patterns, in their order. It finds what the whole one finds
    in a text where the others cannot match: an alternative that never matches takes no part."""
    return _alternation(tuple(_NOTE_PATTERNS[i] for i in rules))


def implementation_notes(text: str) -> list[str]:
    """The implementation-note phrases found in ``text`` (empty when it reads as a request)."""
    notes = _notes_for(text)
    return [] if notes is None else [m.group(0).strip() for m in notes.finditer(text)]


def _notes_for(text: str) -> re.Pattern[str] | None:
    """The patterns that can match ``text`` (None: not one). Only ASCII text is sorted by its
    words: there, matching without case is matching the lower-cased text, whereas elsewhere case
    folding pairs more letters (a dotless i with i, a long s with s), and every pattern is tried."""
    if not text.isascii():
        return _NOTES
    lowered = text.lower()
    found = tuple(word for word in _NOTE_WORDS if word in lowered)
    return _notes_with(found) if found else None


@lru_cache(maxsize=256)
def _notes_with(found: tuple[str, ...]) -> re.Pattern[str]:
    """The patterns one of whose words is among ``found``, worked out once per set of words."""
    return _some_notes(tuple(i for i, (_, words) in enumerate(_NOTE_RULES) if any(w in found for w in words)))
