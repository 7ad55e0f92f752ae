"""The fast path's halves of a conversion: chat-layout turns read, and bodies of the built-in formats.

:func:`chat_turns` reads the ``messages`` of an ``openai`` or ``hf`` record into canonical
:class:`~fms_dgt.core.tools.wire.Message` turns, as the formats' own reader does, without its
per-field error reporting: anything it does not expect raises a plain ``ValueError``,
``LookupError`` or ``TypeError`` and the caller leaves the record to the reference path
(:func:`~fms_dgt.export.records.convert_record`), which raises the error a user should see.

:data:`BODIES` writes the conversation of each built-in format exactly as its ``messages`` method
does, from a map of qualified name -> provider name instead of a codec, and with the encoders of
:mod:`fms_dgt.core.tools._json` (a record holds many arguments and results, and ``json.dumps``
builds an encoder per call). A turn a format cannot express raises ``ValueError``, for the same
reason. ``tests/export/test_fast.py`` holds every writer to its format's bytes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from fms_dgt.core.tools._json import PLAIN, SORTED
from fms_dgt.core.tools.data_objects import ToolCall, ToolResult
from fms_dgt.core.tools.wire.anthropic import AnthropicMessages
from fms_dgt.core.tools.wire.base import Message, WireFormat, call_id, read_result, result_value, split_system
from fms_dgt.core.tools.wire.bfcl import BFCL
from fms_dgt.core.tools.wire.gemini import Gemini
from fms_dgt.core.tools.wire.hf import HFChat
from fms_dgt.core.tools.wire.openai import OpenAIChat
from fms_dgt.core.tools.wire.openai_responses import OpenAIResponses
from fms_dgt.core.tools.wire.sharegpt import ShareGPT
from fms_dgt.core.tools.wire.xlam import XLAM

__all__ = ["BODIES", "TEXT_TOOLS", "Body", "chat_turns", "tools_text"]


_DECODE = json.JSONDecoder().raw_decode
_SPACE = " \t\n\r"
#: A body writer: the turns and the provider name of each qualified name -> the format's body.
Body = Callable[[Sequence[Message], Mapping[str, str]], dict[str, Any]]


def chat_turns(messages: Any, name_map: Mapping[str, str], *, text_arguments: bool) -> list[Message]:
    """The turns of a chat-layout record (``arguments`` as JSON text when ``text_arguments``).

    Raises:
        ValueError, LookupError, TypeError: the record is not of the usual shape (see the module).
    """
    if type(messages) is not list:
        raise ValueError("messages is not a list")
    turns: list[Message] = []
    called: dict[Any, str] = {}
    for message in messages:
        role = message["role"]
        if type(role) is not str:
            raise ValueError("a role is not text")
        if role != "tool":
            turns.append(_spoken(message, role, name_map, called, text_arguments))
        elif turns and turns[-1].role == "tool":
            turns[-1].results.append(_result(message, name_map, called))
        else:
            turns.append(Message("tool", results=[_result(message, name_map, called)]))
    return turns


def _result(message: dict[str, Any], name_map: Mapping[str, str], called: dict[Any, str]) -> ToolResult:
    content = message["content"]
    call = message.get("tool_call_id")
    name = message.get("name")
    qualified = name_map[name] if name is not None else called[call]
    if type(content) is str:
        try:
            value = _loads(content)
        except ValueError:
            return ToolResult(call, qualified, content)
        # What read_result does with the decoded value, without decoding it a second time.
        return read_result(value, call, qualified, text=False)
    return read_result(content, call, qualified)


def _loads(text: str) -> Any:
    """``json.loads(text)``, a little faster for text without surrounding space (most JSON text)."""
    if text[:1] not in _SPACE:
        try:
            value, end = _DECODE(text)
        except ValueError:
            return json.loads(text)  # the same outcome, with json.loads's own error
        if end == len(text):
            return value
    return json.loads(text)


def _spoken(
    message: dict[str, Any], role: str, name_map: Mapping[str, str], called: dict[Any, str], text: bool
) -> Message:
    content = message.get("content")
    if content is None:
        content = ""
    elif type(content) is not str:
        raise ValueError("a content is not text")
    turn = Message(role, content)
    for call in message.get("tool_calls") or ():
        function = call["function"]
        if type(function) is not dict:
            raise ValueError("a call has no function object")
        arguments = _loads(function["arguments"]) if text else function["arguments"]
        name = function["name"]
        if type(arguments) is not dict or type(name) is not str:
            raise ValueError("a call's name or arguments are not of the usual shape")
        qualified = name_map[name]
        turn.tool_calls.append(ToolCall(qualified, arguments, call.get("id")))
        called[call.get("id")] = qualified
    return turn


def _result_text(result: ToolResult) -> str:
    value = result_value(result)
    return value if isinstance(value, str) else SORTED(value)


def _chat(turns: Sequence[Message], names: Mapping[str, str], text_arguments: bool) -> dict[str, Any]:
    out: list[dict[str, Any]] = []
    for m in turns:
        if m.role == "tool":
            out.extend(
                {"role": "tool", "tool_call_id": r.call_id, "name": names[r.name], "content": _result_text(r)}
                for r in m.results
            )
        elif m.tool_calls:
            calls = [
                {
                    "id": call_id(c, i),
                    "type": "function",
                    "function": {
                        "name": names[c.name],
                        "arguments": SORTED(c.arguments) if text_arguments else c.arguments,
                    },
                }
                for i, c in enumerate(m.tool_calls)
            ]
            out.append({"role": "assistant", "content": m.content, "tool_calls": calls})
        else:
            out.append({"role": m.role, "content": m.content})
    return {"messages": out}


def _openai(turns: Sequence[Message], names: Mapping[str, str]) -> dict[str, Any]:
    return _chat(turns, names, True)


def _hf(turns: Sequence[Message], names: Mapping[str, str]) -> dict[str, Any]:
    return _chat(turns, names, False)


def _responses(turns: Sequence[Message], names: Mapping[str, str]) -> dict[str, Any]:
    out: list[dict[str, Any]] = []
    for m in turns:
        if m.role == "tool":
            out.extend(
                {"type": "function_call_output", "call_id": r.call_id, "output": _result_text(r)}
                for r in m.results
            )
            continue
        if m.content or not m.tool_calls:
            out.append({"role": m.role, "content": m.content})
        out.extend(
            {
                "type": "function_call",
                "call_id": call_id(c, i),
                "name": names[c.name],
                "arguments": SORTED(c.arguments),
            }
            for i, c in enumerate(m.tool_calls)
        )
    return {"input": out}


def _anthropic(turns: Sequence[Message], names: Mapping[str, str]) -> dict[str, Any]:
    system, rest = split_system(turns)
    out: list[dict[str, Any]] = []
    for m in rest:
        if m.role == "tool":
            out.append({"role": "user", "content": [_anthropic_result(r) for r in m.results]})
            continue
        blocks: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
        blocks.extend(
            {"type": "tool_use", "id": call_id(c, i), "name": names[c.name], "input": c.arguments}
            for i, c in enumerate(m.tool_calls)
        )
        out.append({"role": m.role, "content": blocks or [{"type": "text", "text": ""}]})
    return {"system": system, "messages": out} if system else {"messages": out}


def _anthropic_result(result: ToolResult) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": result.call_id,
        "content": [{"type": "text", "text": _result_text(result)}],
    }
    if result.error is not None:
        block["is_error"] = True
    return block


def _gemini(turns: Sequence[Message], names: Mapping[str, str]) -> dict[str, Any]:
    system, rest = split_system(turns)
    out: list[dict[str, Any]] = []
    for m in rest:
        if m.role == "tool":
            out.append({"role": "user", "parts": [_gemini_response(r, names) for r in m.results]})
        elif m.role == "assistant":
            parts: list[dict[str, Any]] = [{"text": m.content}] if m.content else []
            parts.extend({"functionCall": {"name": names[c.name], "args": c.arguments}} for c in m.tool_calls)
            out.append({"role": "model", "parts": parts})
        else:
            out.append({"role": "user", "parts": [{"text": m.content}]})
    payload: dict[str, Any] = {"contents": out}
    if system:
        payload["systemInstruction"] = {"parts": [{"text": system}]}
    return payload


def _gemini_response(result: ToolResult, names: Mapping[str, str]) -> dict[str, Any]:
    value = result_value(result)
    response = value if result.error is not None else {"result": value}
    return {"functionResponse": {"name": names[result.name], "response": response}}


def _sharegpt(turns: Sequence[Message], names: Mapping[str, str]) -> dict[str, Any]:
    system, rest = split_system(turns)
    conversation = [_sharegpt_turn(m, names) for m in rest]
    for position, turn in enumerate(conversation):
        if (turn["from"] in ("gpt", "function_call")) != position % 2:
            raise ValueError("the conversation does not alternate: the reference path says why")
    body: dict[str, Any] = {"conversations": conversation}
    if system:
        body["system"] = system
    body["call_ids"] = [c.call_id for m in rest for c in m.tool_calls]
    return body


def _sharegpt_turn(message: Message, names: Mapping[str, str]) -> dict[str, str]:
    if message.role == "tool":
        results = message.results
        value = _result_text(results[0]) if len(results) == 1 else SORTED([result_value(r) for r in results])
        return {"from": "observation", "value": value}
    if message.role == "user":
        return {"from": "human", "value": message.content}
    if not message.tool_calls:
        return {"from": "gpt", "value": message.content}
    if message.content:
        raise ValueError("a turn both speaks and calls: the reference path says why")
    calls = [{"name": names[c.name], "arguments": c.arguments} for c in message.tool_calls]
    return {"from": "function_call", "value": SORTED(calls[0] if len(calls) == 1 else calls)}


def _xlam(turns: Sequence[Message], names: Mapping[str, str]) -> dict[str, Any]:
    query = "\n\n".join(m.content for m in turns if m.role == "user")
    answers = [{"name": names[c.name], "arguments": c.arguments} for m in turns for c in m.tool_calls]
    return {"query": query, "answers": PLAIN(answers)}


def _bfcl(turns: Sequence[Message], names: Mapping[str, str]) -> dict[str, Any]:
    question: list[dict[str, str]] = []
    for m in turns:
        if m.role not in ("system", "user"):
            break
        question.append({"role": m.role, "content": m.content})
    calls = [{"name": names[c.name], "arguments": c.arguments} for m in turns for c in m.tool_calls]
    return {"question": [question], "calls": calls}


#: The body writer of each built-in format, by its class (a subclass may lay records out otherwise).
BODIES: dict[type[WireFormat], Body] = {
    OpenAIChat: _openai,
    HFChat: _hf,
    OpenAIResponses: _responses,
    AnthropicMessages: _anthropic,
    Gemini: _gemini,
    ShareGPT: _sharegpt,
    XLAM: _xlam,
    BFCL: _bfcl,
}
#: Built-in formats whose ``tools`` value is the JSON text of the projected list (see :func:`tools_text`).
TEXT_TOOLS: frozenset[type[WireFormat]] = frozenset({ShareGPT, XLAM})


def tools_text(texts: Sequence[str]) -> str:
    """``json.dumps(projected, ensure_ascii=False)`` from each projected tool's own text.

    A list's text is its items' texts joined by the default separator, so each tool is encoded
    once per export instead of once per record.
    """
    return "[" + ", ".join(texts) + "]"
