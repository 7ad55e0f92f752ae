"""Chat-template families: what each family's template needs of an ``hf`` record, and adapting to it.

Measured on the templates of ``shared/chat-templates`` (see docs/training.md):

============  ==============================================================================
family        rules
============  ==============================================================================
qwen          none beyond the hf layout (content a string on call turns; parallel calls kept)
hermes        no type lists and only JSON's six value types in tool schemas (its type macro
              recurses forever on ``"null"``); a call turn prints no text
llama3        one call per assistant turn ("only supports single tool-calls at once"); a call
              turn prints no text; a result is handed over as its JSON value, which the
              template encodes once (a text would be encoded a second time)
llama3-json   vLLM's Llama 3.1 JSON template: as llama3, but results stay text (the template
              wraps them in ``{"output": ...}`` itself)
mistral       call ids of exactly 9 letters and digits; a call turn prints no text
granite       the template prints ``content`` only: calls are written into it as
              ``<|tool_call|>[{"name": ..., "arguments": {...}}]``
============  ==============================================================================

:func:`adapt` applies the rules that concern turns (parallel calls become consecutive call and
result turns, each result paired with its call by id; ids are rewritten to the family's form,
consistently in calls and results); :func:`adapt_tools` and :func:`finish` apply those that concern
the written ``hf`` layout. A record the family cannot express (a call turn with text where the
template drops it, a result the template would print as a Python literal, a result that answers
no call) raises :class:`~fms_dgt.errors.RejectedRecord` with the reason; nothing is dropped
silently. :func:`detect` tells the family of a template file from its text.
"""

from __future__ import annotations

import hashlib
import json
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fms_dgt.core.tools.data_objects import ToolCall, ToolResult
from fms_dgt.core.tools.wire.base import Message
from fms_dgt.core.tools.wire.schemas import hygienic_schema
from fms_dgt.errors import RejectedRecord, WireError

__all__ = ["FAMILIES", "Family", "adapt", "adapt_tools", "detect", "finish", "get_family"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Family:
    """What one family of chat templates needs of a record.

    Attributes:
        name: the family's name (``--template-family``).
        parallel: the template accepts several calls in one assistant turn.
        call_text: the template prints the text of a turn that calls tools.
        calls_in_content: calls are written into ``content`` after this marker (Granite).
        results_as_values: tool contents are handed over as JSON values, not text (Llama 3).
        call_id_length: call ids must be exactly this many letters and digits (Mistral).
        single_types: tool schemas may hold only single JSON types (Hermes).
    """

    name: str
    parallel: bool = True
    call_text: bool = True
    calls_in_content: str = ""
    results_as_values: bool = False
    call_id_length: int = 0
    single_types: bool = False


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family(name="qwen"),
        Family(name="hermes", call_text=False, single_types=True),
        Family(name="llama3", parallel=False, call_text=False, results_as_values=True),
        Family(name="llama3-json", parallel=False, call_text=False),
        Family(name="mistral", call_text=False, call_id_length=9),
        Family(name="granite", calls_in_content="<|tool_call|>"),
    )
}


def get_family(family: str | Family) -> Family:
    """The family named ``family`` (a :class:`Family` is returned as is).

    Raises:
        WireError: no family has that name (the message lists them).
    """
    if isinstance(family, Family):
        return family
    try:
        return FAMILIES[family]
    except KeyError:
        raise WireError(
            f"unknown template family {family!r}: use one of {', '.join(FAMILIES)}, or give a template "
            "file to tell it from."
        ) from None


def detect(template: str) -> Family:
    """The family of a chat template, from its text.

    Raises:
        WireError: the template matches no known family.
    """
    if "<|tool_call|>" in template and "start_of_role" in template:
        return FAMILIES["granite"]
    if "[TOOL_CALLS]" in template:
        return FAMILIES["mistral"]
    if "<|start_header_id|>" in template and "ipython" in template:
        return FAMILIES["llama3-json" if '"output"' in template else "llama3"]
    if "<tool_call>" in template and "<|im_start|>" in template:
        hermes = "json_to_python_type" in template or "function calling AI model" in template
        return FAMILIES["hermes" if hermes else "qwen"]
    raise WireError(
        "cannot tell the family of this chat template: it has none of the tool-call markers of "
        f"{', '.join(FAMILIES)}. Name the family with --template-family."
    )


# ---------------------------------------------------------------------------------- turns


def adapt(messages: Sequence[Message], family: str | Family) -> list[Message]:
    """The conversation as ``family``'s templates can print it (see the module docstring).

    Raises:
        RejectedRecord: the conversation cannot be expressed in the family.
    """
    rules = get_family(family)
    turns = list(messages)
    if rules.call_id_length:
        turns = _with_ids(turns, rules.call_id_length)
    if not rules.call_text:
        _check_call_text(turns, rules.name)
    return turns if rules.parallel else _one_call_per_turn(turns, rules.name)


def _check_call_text(turns: Sequence[Message], family: str) -> None:
    for i, m in enumerate(turns):
        if m.tool_calls and m.content:
            raise RejectedRecord(
                f"record cannot be written for the {family} template family: turn {i} says something and "
                "calls tools, and the family's templates print no text on a turn with calls"
            )


def _one_call_per_turn(turns: Sequence[Message], family: str) -> list[Message]:
    out: list[Message] = []
    i = 0
    while i < len(turns):
        m = turns[i]
        if len(m.tool_calls) <= 1:
            out.append(m)
            i += 1
            continue
        follow = turns[i + 1] if i + 1 < len(turns) else None
        if follow is None or follow.role != "tool":
            raise RejectedRecord(
                f"record cannot be written for the {family} template family: turn {i} calls "
                f"{len(m.tool_calls)} tools at once and no results follow to pair with each call"
            )
        out.extend(_split(m, follow, family))
        i += 2
    return out


def _split(calls: Message, results: Message, family: str) -> list[Message]:
    by_id: dict[str | None, ToolResult] = {}
    for r in results.results:
        if r.call_id is None or r.call_id in by_id:
            raise RejectedRecord(
                f"record cannot be written for the {family} template family: parallel calls must be "
                "split into one turn each, and their results cannot be paired by id (missing or repeated)"
            )
        by_id[r.call_id] = r
    out: list[Message] = []
    for n, call in enumerate(calls.tool_calls):
        result = by_id.pop(call.call_id, None)
        if result is None:
            raise RejectedRecord(
                f"record cannot be written for the {family} template family: call {call.call_id!r} has "
                "no result to pair it with after splitting parallel calls"
            )
        out.append(Message("assistant", calls.content if n == 0 else "", [call]))
        out.append(Message("tool", results=[result]))
    if by_id:
        raise RejectedRecord(
            f"record cannot be written for the {family} template family: results {sorted(map(str, by_id))} "
            "answer no call of the turn before"
        )
    return out


_ALNUM = string.ascii_letters + string.digits


def _with_ids(turns: Sequence[Message], length: int) -> list[Message]:
    pattern = re.compile(rf"^[A-Za-z0-9]{{{length}}}$")
    calls = [c for m in turns for c in m.tool_calls]
    if all(c.call_id and pattern.match(c.call_id) for c in calls):
        return list(turns)
    # Ids are opaque labels: rewriting them consistently in calls and results keeps every pairing.
    mapping: dict[str | None, str] = {}
    taken: set[str | None] = {c.call_id for c in calls if c.call_id and pattern.match(c.call_id)}
    for n, c in enumerate(calls):
        if c.call_id in mapping or (c.call_id in taken):
            continue
        mapping[c.call_id] = _fresh_id(f"{n}:{c.call_id}", length, taken)
    return [_relabel(m, mapping) for m in turns]


def _fresh_id(seed: str, length: int, taken: set[str | None]) -> str:
    salt = 0
    while True:
        digest = hashlib.sha256(f"{seed}:{salt}".encode()).digest()
        label = "".join(_ALNUM[b % len(_ALNUM)] for b in digest[:length])
        if label not in taken:
            taken.add(label)
            return label
        salt += 1


def _relabel(m: Message, mapping: dict[str | None, str]) -> Message:
    if not m.tool_calls and not m.results:
        return m
    calls = [ToolCall(c.name, c.arguments, mapping.get(c.call_id, c.call_id)) for c in m.tool_calls]
    results = [
        ToolResult(mapping.get(r.call_id, r.call_id), r.name, r.result, r.error, r.metadata)
        for r in m.results
    ]
    return Message(m.role, m.content, calls, results)


# ---------------------------------------------------------------------------------- the hf layout

_JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object"})


def adapt_tools(tools: list[dict[str, Any]], family: str | Family) -> list[dict[str, Any]]:
    """Projected ``hf`` tools as ``family``'s templates can print them.

    Raises:
        RejectedRecord: a schema the family's templates cannot print.
    """
    rules = get_family(family)
    if not rules.single_types:
        return tools
    out = []
    for tool in tools:
        function = tool["function"]
        parameters = hygienic_schema(function["parameters"])
        _check_types(parameters, f"{function['name']}.parameters", rules.name)
        out.append({**tool, "function": {**function, "parameters": parameters}})
    return out


def _check_types(schema: Any, where: str, family: str) -> None:
    if isinstance(schema, list):
        for i, item in enumerate(schema):
            _check_types(item, f"{where}[{i}]", family)
        return
    if not isinstance(schema, dict):
        return
    kind = schema.get("type")
    if kind is not None and kind not in _JSON_TYPES:
        raise RejectedRecord(
            f"record cannot be written for the {family} template family: {where} has type {kind!r}, "
            "and the family's templates print only string, number, integer, boolean, array and object"
        )
    for key, value in schema.items():
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            for name, sub in value.items():
                _check_types(sub, f"{where}.{name}", family)
        elif key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf", "prefixItems"):
            _check_types(value, f"{where}.{key}", family)


def finish(body: dict[str, Any], family: str | Family) -> dict[str, Any]:
    """An ``hf`` conversation (``{"messages": [...]}``) with the family's layout rules applied.

    Raises:
        RejectedRecord: a result the family's templates would print as a Python literal.
    """
    rules = get_family(family)
    if not rules.calls_in_content and not rules.results_as_values:
        return body
    messages = []
    for turn in body["messages"]:
        if rules.calls_in_content and turn.get("tool_calls"):
            turn = {**turn, "content": turn["content"] + rules.calls_in_content + _calls_text(turn)}
        elif rules.results_as_values and turn["role"] == "tool":
            turn = {**turn, "content": _value(turn["content"], rules.name)}
        messages.append(turn)
    return {**body, "messages": messages}


def _calls_text(turn: dict[str, Any]) -> str:
    calls = [
        {"name": c["function"]["name"], "arguments": c["function"]["arguments"]} for c in turn["tool_calls"]
    ]
    return json.dumps(calls, ensure_ascii=False)


def _value(text: str, family: str) -> Any:
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if value is None:
        # No result (a REST operation's 204 No Content): the empty result the template can print.
        return ""
    if isinstance(value, bool):
        raise RejectedRecord(
            f"record cannot be written for the {family} template family: a result is {text}, which the "
            "family's templates print as a Python literal (True)"
        )
    return text if isinstance(value, str) else value
