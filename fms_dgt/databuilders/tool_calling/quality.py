"""The quality report of a run: figures a person training on the records would check first.

:class:`QualityReport` reads written records back (the same way for records of this run and for
records a resumed run finds in the file, so the report always covers the whole file) and gives the
``quality`` block of ``summary.json`` (``fms-dgt inspect OUT_DIR`` prints it):

* ``records``, ``error_result_rate`` (tool results that are errors, over every result), and the
  records kept as error-handling examples;
* ``distractor_ratio``: records that offer at least one tool they do not call; ``mean_offered``;
* ``no_call``: the share of records that call nothing, in total and per category;
* ``wired_argument_share``: arguments taken from an earlier result, over every argument, and
  ``fresh_wired_share``: those whose value only that result held (the others repeat an argument
  an earlier step's call was given, such as the city a forecast answers for);
* ``distinct_tool_sets`` (offered sets) and ``distinct_called_sets``;
* ``distinct_user_turns`` (share of records whose request is unique) and ``distinct_2`` (distinct
  word pairs over all word pairs of the requests);
* ``duplicate_records``: records with the same offered tools, turns, calls and answer as an
  earlier one;
* ``coverage``: tools called at least once, over the pool, and the Gini coefficient of calls per
  tool (0: every tool called as often; near 1: a few tools take every call);
* ``entity_conflicts``: records where two calls give one entity-like argument (``user_id``,
  ``email``, ``city``, ``date``...) different values, neither taken from a result;
* ``json_final_answers``: final answers that contain a JSON object instead of words.

The report reads records in every layout the job writes (read back by the format's reader where it
loses nothing, else from the layout's turns).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fms_dgt.core.tools._json import STABLE
from fms_dgt.core.tools.data_objects import split_qualified_name
from fms_dgt.core.tools.wire import Message, NameCodec, WireFormat, get_wire_format
from fms_dgt.core.tools.wire.hf import HFChat
from fms_dgt.core.tools.wire.openai import OpenAIChat
from fms_dgt.databuilders.tool_calling.agreement import alike
from fms_dgt.errors import ToolDefinitionError, WireError
from fms_dgt.export.layout import from_arrow_safe

__all__ = ["QualityReport", "RecordFacts", "facts_of", "gini"]

# Argument names that denote one entity of the record wherever they appear (a bare ``id`` or
# ``name`` does not: two tools' ``id`` are usually different things).
_ENTITY = re.compile(
    r"(^|_)(user|username|user_id|account|account_id|customer|customer_id|email|phone|city|country|"
    r"country_code|date|company|owner|order_id|booking_id|currency|language|timezone)$"
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_JSON_OBJECT = re.compile(r"\{\s*\"[^\"]*\"\s*:")
_WORD = re.compile(r"\w+", re.UNICODE)


# The plain counts of a report, added as they are when reports merge.
_SUMS = (
    "records",
    "results",
    "error_results",
    "error_handling",
    "with_distractors",
    "offered",
    "arguments",
    "wired",
    "fresh_wired",
    "bigram_count",
    "duplicates",
    "conflicts",
    "json_finals",
)


@dataclass(slots=True, kw_only=True)
class RecordFacts:
    """What the report needs from one record."""

    user_turns: list[str]
    final: str
    calls: list[tuple[str, dict[str, Any]]]
    results: int
    error_results: int


@dataclass(slots=True)
class QualityReport:
    """Accumulates the figures of written records (see the module docstring).

    Args:
        pool: the number of tools records could be made from (for coverage and Gini).
    """

    pool: int = 0
    records: int = 0
    results: int = 0
    error_results: int = 0
    error_handling: int = 0
    with_distractors: int = 0
    offered: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    arguments: int = 0
    wired: int = 0
    fresh_wired: int = 0
    tool_sets: set[str] = field(default_factory=set)
    called_sets: set[str] = field(default_factory=set)
    user_turns: Counter[str] = field(default_factory=Counter)
    bigrams: set[tuple[str, str]] = field(default_factory=set)
    bigram_count: int = 0
    contents: set[str] = field(default_factory=set)
    duplicates: int = 0
    calls_per_tool: Counter[str] = field(default_factory=Counter)
    conflicts: int = 0
    json_finals: int = 0

    def add(self, record: Mapping[str, Any]) -> None:
        """Count one written record (as written: provider layout plus ``metadata``)."""
        meta: Mapping[str, Any] = record.get("metadata") or {}
        facts = facts_of(record)
        self.records += 1
        self.results += facts.results
        self.error_results += facts.error_results
        self.error_handling += bool(meta.get("error_handling"))
        offered = list(meta.get("tools") or [])
        called = list(meta.get("called") or [])
        self.offered += len(offered)
        self.with_distractors += bool(set(offered) - set(called))
        self.kinds[str(meta.get("kind", "calls"))] += 1
        self._arguments(facts, meta)
        self.tool_sets.add("\n".join(sorted(offered)))
        self.called_sets.add("\n".join(sorted(set(called))))
        self.calls_per_tool.update(called)
        self._text(facts)
        self._duplicate(facts, offered)
        self.conflicts += bool(entity_conflicts(facts.calls, meta.get("wired") or []))

    def _arguments(self, facts: RecordFacts, meta: Mapping[str, Any]) -> None:
        self.arguments += sum(len(args) for _, args in facts.calls)
        wires = [wire for w in meta.get("wired") or [] if _is_mapping(w) for wire in w.values()]
        self.wired += len(wires)
        self.fresh_wired += sum(1 for wire in wires if not (_is_mapping(wire) and wire.get("echoes")))

    def _text(self, facts: RecordFacts) -> None:
        request = facts.user_turns[0] if facts.user_turns else ""
        self.user_turns[request] += 1
        # ASCII words lower-cased are the lower-cased text's words (not so for every letter).
        words = (
            _WORD.findall(request.lower())
            if request.isascii()
            else [w.lower() for w in _WORD.findall(request)]
        )
        pairs = list(itertools.pairwise(words))
        self.bigram_count += len(pairs)
        self.bigrams.update(pairs)
        self.json_finals += bool(_JSON_OBJECT.search(facts.final))

    def _duplicate(self, facts: RecordFacts, offered: Sequence[str]) -> None:
        """Same offered tools, turns, calls and answer as an earlier record (metadata aside)."""
        key = STABLE([offered, facts.user_turns, facts.calls, facts.final])
        digest = hashlib.blake2b(key.encode(), digest_size=16).hexdigest()
        if digest in self.contents:
            self.duplicates += 1
        self.contents.add(digest)

    def merge(self, other: QualityReport) -> None:
        """Add the figures of records counted elsewhere (a Ray worker's shard), exactly.

        Sets and counters are joined, so distinct counts stay exact across shards; a record of
        ``other`` that repeats one counted here is a duplicate like any other.
        """
        for name in _SUMS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.kinds.update(other.kinds)
        self.tool_sets |= other.tool_sets
        self.called_sets |= other.called_sets
        self.user_turns.update(other.user_turns)
        self.bigrams |= other.bigrams
        self.calls_per_tool.update(other.calls_per_tool)
        self.duplicates += len(self.contents & other.contents)
        self.contents |= other.contents

    def to_dict(self) -> dict[str, Any]:
        """The ``quality`` block."""
        n = self.records or 1
        kinds = {k: v for k, v in sorted(self.kinds.items()) if k != "calls"}
        unique_requests = sum(1 for count in self.user_turns.values() if count == 1)
        called_tools = len(self.calls_per_tool)
        return {
            "records": self.records,
            "error_result_rate": _share(self.error_results, self.results),
            "error_handling_records": self.error_handling,
            "distractor_ratio": _share(self.with_distractors, self.records),
            "mean_offered": round(self.offered / n, 3),
            "no_call": {
                "share": _share(sum(kinds.values()), self.records),
                **{k: _share(v, self.records) for k, v in kinds.items()},
            },
            "wired_argument_share": _share(self.wired, self.arguments),
            "fresh_wired_share": _share(self.fresh_wired, self.arguments),
            "distinct_tool_sets": len(self.tool_sets),
            "distinct_called_sets": len(self.called_sets),
            "distinct_user_turns": _share(unique_requests, self.records),
            "distinct_2": _share(len(self.bigrams), self.bigram_count),
            "duplicate_records": self.duplicates,
            "coverage": {
                "tools_called": called_tools,
                "pool": self.pool,
                "share": _share(called_tools, self.pool),
                "gini": round(gini(self.calls_per_tool.values(), self.pool), 4),
            },
            "entity_conflicts": self.conflicts,
            "json_final_answers": self.json_finals,
        }


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def gini(counts: Iterable[int], pool: int = 0) -> float:
    """The Gini coefficient of ``counts``, with tools of the pool never counted as zeros."""
    values = sorted(counts)
    values = [0] * max(0, pool - len(values)) + values
    total = sum(values)
    if not values or not total:
        return 0.0
    weighted = sum((i + 1) * v for i, v in enumerate(values))
    n = len(values)
    return (2 * weighted) / (n * total) - (n + 1) / n


def entity_conflicts(calls: Sequence[tuple[str, dict[str, Any]]], wired: Sequence[Any]) -> list[str]:
    """Entity-like argument names two calls of a record give different values (wired ones aside)."""
    seen: dict[str, Any] = {}
    clashes: list[str] = []
    for position, (_, arguments) in enumerate(calls):
        from_results = wired[position] if position < len(wired) and _is_mapping(wired[position]) else {}
        for name, value in arguments.items():
            key = _entity_key(name)
            if name in from_results or key is None or isinstance(value, (dict, list)):
                continue
            if key in seen and not alike(seen[key], value):
                clashes.append(name)
            seen.setdefault(key, value)
    return clashes


def _is_mapping(value: Any) -> bool:
    """``isinstance(value, Mapping)``, without the ABC check for the dicts records are made of."""
    return type(value) is dict or isinstance(value, Mapping)


@functools.lru_cache(maxsize=4096)
def _entity_key(name: str) -> str | None:
    """The entity an argument name denotes (``userId`` -> ``user_id``), None for other names
    (records use the same few names again and again)."""
    key = _CAMEL.sub("_", name).lower()
    return key if _ENTITY.search(key) else None


# --------------------------------------------------------------------------- reading records


def facts_of(record: Mapping[str, Any]) -> RecordFacts:
    """The user turns, final answer, calls (qualified names) and result counts of a written record,
    in any layout: read back by its format's reader where the format loses nothing, else from the
    layout's turns (Gemini, a chat-template family's adaptation, xLAM and BFCL entries)."""
    plain = from_arrow_safe(record)
    found = plain.get("metadata")
    meta: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    mapped = meta.get("name_map")
    names: Mapping[str, Any] = mapped if isinstance(mapped, Mapping) else {}
    try:
        wire = get_wire_format(str(meta.get("format", "openai")))
    except WireError:
        wire = None
    if wire is not None and not wire.lossy and not meta.get("template_family") and names:
        codec = NameCodec.from_name_map(names)
        read = _chat_facts(plain, codec, wire)
        if read is not None:
            return read
        try:
            _, messages = wire.read(_turns_only(plain, wire), codec)
            return _canonical(messages)
        except WireError:
            pass  # fall through to the layout's turns
    facts = _layouts(plain)
    facts.calls = [(str(names.get(name, name)), args) for name, args in facts.calls]
    return facts


def _turns_only(record: dict[str, Any], wire: WireFormat) -> dict[str, Any]:
    """The record without its tools for a chat layout's reader, which then reads only the turns:
    the report counts no tool definition, and reading them back costs half as much as the turns."""
    return {**record, "tools": None} if isinstance(wire, OpenAIChat) else record


# ------------------------------------------------------------------ the chat layout, read for facts


def _chat_facts(record: Mapping[str, Any], codec: NameCodec, wire: WireFormat) -> RecordFacts | None:
    """What reading a chat-layout record back (``openai``, ``hf``) and :func:`_canonical` give,
    without building the turns or decoding results that cannot be errors: the report reads every
    record a run writes. None for another format, and wherever the reader could find something
    amiss (it then reads the record and says what)."""
    kind = type(wire)
    messages = record.get("messages")
    if (kind is not OpenAIChat and kind is not HFChat) or type(messages) is not list:
        return None
    out = _facts()
    ids: set[str | None] = set()
    for m in messages:
        if not _is_mapping(m) or not _chat_turn(m, codec, ids, out, kind is OpenAIChat):
            return None
    return out


def _chat_turn(
    m: Mapping[str, Any], codec: NameCodec, ids: set[str | None], out: RecordFacts, text_arguments: bool
) -> bool:
    """Count one turn into ``out``; False where the reader could refuse it."""
    role = m.get("role")
    if not isinstance(role, str):
        return False
    if role == "tool":
        return _chat_result(m, codec, ids, out)
    content = m.get("content")
    if content is not None and not isinstance(content, str):
        return False
    calls = _chat_calls(m.get("tool_calls") or [], codec, ids, text_arguments)
    if calls is None:
        return False
    if role == "user":
        out.user_turns.append(content or "")
    elif role == "assistant":
        out.calls.extend(calls)
        if not calls:
            out.final = content or ""
    return True


def _chat_calls(
    calls: Any, codec: NameCodec, ids: set[str | None], text_arguments: bool
) -> list[tuple[str, dict[str, Any]]] | None:
    """A turn's calls (qualified name, arguments), the ids remembered; None where the reader
    could refuse one."""
    if type(calls) is not list:
        return None
    out = []
    for call in calls:
        function = call.get("function") if _is_mapping(call) else None
        if not isinstance(function, dict) or "arguments" not in function:
            return None
        arguments = _arguments_of(function["arguments"], text_arguments)
        name = _qualified(codec, function.get("name"))
        call_id = call.get("id")
        if arguments is None or name is None or not (call_id is None or isinstance(call_id, str)):
            return None
        ids.add(call_id)
        out.append((name, dict(arguments)))
    return out


def _arguments_of(raw: Any, text: bool) -> dict[str, Any] | None:
    if text:
        if not isinstance(raw, str):
            return None
        try:
            raw = json.loads(raw)
        except ValueError:
            return None
    return raw if isinstance(raw, dict) else None


def _chat_result(m: Mapping[str, Any], codec: NameCodec, ids: set[str | None], out: RecordFacts) -> bool:
    """Count one result; False where the reader could refuse it (no content, no known tool)."""
    if "content" not in m:
        return False
    name, call_id = m.get("name"), m.get("tool_call_id")
    if name is not None:
        if _qualified(codec, name) is None:
            return False
    elif not (call_id is None or isinstance(call_id, str)) or call_id not in ids:
        return False
    out.results += 1
    out.error_results += _error_result(m["content"])
    return True


def _qualified(codec: NameCodec, name: Any) -> str | None:
    """The qualified name a provider name decodes to, None where reading the call would fail."""
    if not isinstance(name, str):
        return None
    try:
        qualified = codec.decode(name)
        if not isinstance(qualified, str):
            return None
        split_qualified_name(qualified)
    except (WireError, ToolDefinitionError):
        return None
    return qualified


def _error_result(content: Any) -> bool:
    """Whether the reader takes a result's content for a failed call (``{"error": text}``, see
    ``read_result``). A text whose JSON could not hold the key ``error`` is not decoded."""
    if isinstance(content, str):
        if not content.lstrip(" \t\n\r").startswith("{") or (
            '"error"' not in content and "\\u" not in content
        ):
            return False
        try:
            content = json.loads(content)
        except ValueError:
            return False
    return isinstance(content, dict) and len(content) == 1 and isinstance(content.get("error"), str)


def _canonical(messages: Sequence[Message]) -> RecordFacts:
    out = _facts()
    for m in messages:
        if m.role == "user":
            out.user_turns.append(m.content)
        elif m.role == "tool":
            out.results += len(m.results)
            out.error_results += sum(1 for r in m.results if r.error is not None)
        elif m.role == "assistant":
            out.calls.extend((c.name, dict(c.arguments)) for c in m.tool_calls)
            if not m.tool_calls:
                out.final = m.content
    return out


def _layouts(record: Mapping[str, Any]) -> RecordFacts:
    if "contents" in record:
        return _gemini(record["contents"])
    if "input" in record:
        return _responses(record["input"])
    if "conversations" in record:
        return _sharegpt(record["conversations"])
    if "query" in record or "question" in record:
        return _entry(record)
    messages = record.get("messages") or []
    if any(isinstance(m.get("content"), list) for m in messages if isinstance(m, Mapping)):
        return _anthropic(messages)
    return _chat(messages)


def _sharegpt(turns: Sequence[Any]) -> RecordFacts:
    out = _facts()
    for turn in turns:
        role, value = turn.get("from"), turn.get("value", "")
        if role == "human":
            out.user_turns.append(str(value))
        elif role == "function_call":
            parsed = _arguments_list(value)
            out.calls.extend((str(c.get("name")), _arguments(c.get("arguments"))) for c in parsed)
        elif role == "observation":
            out.results += 1
            out.error_results += _is_error(value)
        elif role == "gpt":
            out.final = str(value)
    return out


def _entry(record: Mapping[str, Any]) -> RecordFacts:
    """xLAM (``query``, ``answers``) and BFCL (``question``, ``possible_answer``) entries."""
    out = _facts()
    query = record.get("query")
    if query is None:
        question = record.get("question") or []
        turns = question[0] if question and isinstance(question[0], list) else question
        query = next(
            (t.get("content") for t in turns if isinstance(t, Mapping) and t.get("role") == "user"), ""
        )
    out.user_turns.append(str(query or ""))
    for call in _arguments_list(record.get("answers")):
        out.calls.append((str(call.get("name")), _arguments(call.get("arguments"))))
    return out


def _arguments_list(value: Any) -> list[Mapping[str, Any]]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    if isinstance(value, Mapping):
        value = [value]
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _facts() -> RecordFacts:
    return RecordFacts(user_turns=[], final="", calls=[], results=0, error_results=0)


def _arguments(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return dict(value) if isinstance(value, Mapping) else {}


def _is_error(text: Any) -> bool:
    if not isinstance(text, str) or not text.startswith('{"error"'):
        return False
    try:
        parsed = json.loads(text)
    except ValueError:
        return False
    return isinstance(parsed, dict) and set(parsed) == {"error"}


def _chat(messages: Sequence[Any]) -> RecordFacts:
    out = _facts()
    for m in messages:
        role, content = m.get("role"), m.get("content")
        if role == "user":
            out.user_turns.append(str(content or ""))
        elif role == "tool":
            out.results += 1
            out.error_results += _is_error(content)
        elif role == "assistant":
            for call in m.get("tool_calls") or []:
                function = call.get("function") or {}
                out.calls.append((str(function.get("name")), _arguments(function.get("arguments"))))
            if not m.get("tool_calls"):
                out.final = str(content or "")
    return out


def _responses(items: Sequence[Any]) -> RecordFacts:
    out = _facts()
    for item in items:
        kind = item.get("type")
        if kind == "function_call":
            out.calls.append((str(item.get("name")), _arguments(item.get("arguments"))))
        elif kind == "function_call_output":
            out.results += 1
            out.error_results += _is_error(item.get("output"))
        elif item.get("role") == "user":
            out.user_turns.append(str(item.get("content") or ""))
        elif item.get("role") == "assistant":
            out.final = str(item.get("content") or "")
    return out


def _anthropic(messages: Sequence[Any]) -> RecordFacts:
    out = _facts()
    for m in messages:
        blocks = m.get("content") if isinstance(m.get("content"), list) else []
        texts = [b.get("text", "") for b in blocks if b.get("type") == "text"]
        uses = [b for b in blocks if b.get("type") == "tool_use"]
        results = [b for b in blocks if b.get("type") == "tool_result"]
        out.calls.extend((str(b.get("name")), _arguments(b.get("input"))) for b in uses)
        out.results += len(results)
        out.error_results += sum(1 for b in results if b.get("is_error"))
        if m.get("role") == "user" and not results:
            out.user_turns.append("".join(texts))
        elif m.get("role") == "assistant" and not uses:
            out.final = "".join(texts)
    return out


def _gemini(contents: Sequence[Any]) -> RecordFacts:
    out = _facts()
    for turn in contents:
        parts = turn.get("parts") or []
        texts = [p["text"] for p in parts if "text" in p]
        calls = [p.get("functionCall") or p.get("function_call") for p in parts]
        answers = [p.get("functionResponse") or p.get("function_response") for p in parts]
        calls, answers = [c for c in calls if c], [a for a in answers if a]
        out.calls.extend((str(c.get("name")), _arguments(c.get("args"))) for c in calls)
        out.results += len(answers)
        out.error_results += sum(1 for a in answers if "error" in (a.get("response") or {}))
        if turn.get("role") == "user" and not answers:
            out.user_turns.append("".join(texts))
        elif turn.get("role") == "model" and not calls:
            out.final = "".join(texts)
    return out
