"""LLaMA-Factory's ShareGPT layout (``sharegpt``): ``conversations`` of ``from``/``value`` turns.

Roles are ``human``, ``gpt``, ``function_call`` (the call, or a list of parallel calls, as JSON text
``{"name", "arguments"}``) and ``observation`` (the result text; the results of parallel calls as a
JSON list); ``system`` is a top-level string and ``tools`` the JSON text of the list of
``{name, description, parameters}`` LLaMA-Factory's ``tools`` column takes. Human and observation
turns must stand at odd positions, gpt and function_call turns at even ones, so a conversation that
does not alternate, or a call turn that also says something, cannot be written and is rejected.
ShareGPT has no call ids: they travel in ``metadata.call_ids`` so the record reads back exactly.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.wire._read import Calls, field, items, loads, mapping, wire_tool
from fms_dgt.core.tools.wire.base import (
    Message,
    WireFormat,
    WireTool,
    read_result,
    result_text,
    result_value,
    split_system,
)
from fms_dgt.core.tools.wire.names import NameCodec
from fms_dgt.errors import RejectedRecord, WireError
from fms_dgt.plugins import register_wire_format

__all__ = ["ShareGPT"]

_SIDE = {"human": 0, "observation": 0, "gpt": 1, "function_call": 1}


@register_wire_format("sharegpt")
class ShareGPT(WireFormat):
    """LLaMA-Factory's ``sharegpt`` formatting with tool calls."""

    def tool(self, tool: Tool, name: str, schema: dict[str, Any], *, strict: bool) -> dict[str, Any]:
        return {"name": name, "description": tool.description, "parameters": schema}

    def tools(self, projected: list[dict[str, Any]]) -> Any:
        return json.dumps(projected, ensure_ascii=False)

    def messages(self, messages: Sequence[Message], codec: NameCodec) -> dict[str, Any]:
        system, turns = split_system(messages)
        conversation = [_turn(m, codec) for m in turns]
        for position, turn in enumerate(conversation):
            if _SIDE[turn["from"]] != position % 2:
                raise RejectedRecord(
                    f"record cannot be written as sharegpt: turn {position} ({turn['from']}) breaks the "
                    "alternation LLaMA-Factory requires (human/observation, then gpt/function_call). "
                    "Use the hf format for this conversation"
                )
        body: dict[str, Any] = {"conversations": conversation}
        if system:
            body["system"] = system
        body["call_ids"] = [c.call_id for m in turns for c in m.tool_calls]
        return body

    def assemble(self, tools: Any, body: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any]:
        body = dict(body)
        call_ids = body.pop("call_ids", [])
        return {**body, "tools": tools, "metadata": {**metadata, "call_ids": call_ids}}

    def read(self, record: Mapping[str, Any], codec: NameCodec) -> tuple[list[WireTool], list[Message]]:
        listed = loads(field(record, "tools", "record", str), "tools")
        if not isinstance(listed, list):
            raise WireError("malformed record at tools: expected the JSON text of a list of tools.")
        tools = []
        for i, item in enumerate(listed):
            tool = mapping(item, f"tools[{i}]")
            tools.append(
                wire_tool(
                    tool.get("name"), tool.get("description", ""), tool.get("parameters"), f"tools[{i}]"
                )
            )
        ids = iter(record.get("metadata", {}).get("call_ids") or ())
        calls = Calls(codec)
        if record.get("system"):
            calls.add(Message("system", field(record, "system", "record", str)))
        pending: list[Any] = []
        for i, turn in enumerate(items(record, "conversations", "record")):
            pending = _read_turn(turn, f"conversations[{i}]", calls, ids, pending)
        return tools, calls.turns


def _turn(message: Message, codec: NameCodec) -> dict[str, str]:
    if message.role == "tool":
        results = message.results
        value = result_text(results[0]) if len(results) == 1 else _dumps([result_value(r) for r in results])
        return {"from": "observation", "value": value}
    if message.role == "user":
        return {"from": "human", "value": message.content}
    if not message.tool_calls:
        return {"from": "gpt", "value": message.content}
    if message.content:
        raise RejectedRecord(
            "record cannot be written as sharegpt: an assistant turn both speaks and calls tools, and a "
            "function_call turn holds only the calls. Use the hf format for this conversation"
        )
    calls = [{"name": codec.encode(c.name), "arguments": c.arguments} for c in message.tool_calls]
    return {"from": "function_call", "value": _dumps(calls[0] if len(calls) == 1 else calls)}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _read_turn(turn: Mapping[str, Any], where: str, calls: Calls, ids: Any, pending: list[Any]) -> list[Any]:
    role = field(turn, "from", where, str)
    value = field(turn, "value", where, str)
    if role == "function_call":
        listed = loads(value, f"{where}.value")
        listed = listed if isinstance(listed, list) else [listed]
        message = Message("assistant")
        for j, item in enumerate(listed):
            at = f"{where}.value[{j}]"
            c = mapping(item, at)
            call = calls.call(field(c, "name", at, str), field(c, "arguments", at), next(ids, None), at)
            message.tool_calls.append(call)
        calls.add(message)
        return message.tool_calls
    if role == "observation":
        _read_observation(value, where, calls, pending)
        return []
    if role not in _SIDE:
        raise WireError(f"malformed record at {where}.from: unknown role {role!r}.")
    calls.add(Message("user" if role == "human" else "assistant", value))
    return []


def _read_observation(value: str, where: str, calls: Calls, pending: list[Any]) -> None:
    if len(pending) <= 1:
        name = pending[0].name if pending else None
        call_id = pending[0].call_id if pending else None
        calls.add_result(read_result(value, call_id, name or _unknown(where)))
        return
    listed = loads(value, f"{where}.value")
    if not isinstance(listed, list) or len(listed) != len(pending):
        raise WireError(f"malformed record at {where}: expected one result per call of the turn before.")
    for call, item in zip(pending, listed, strict=True):
        calls.add_result(read_result(item, call.call_id, call.name, text=False))


def _unknown(where: str) -> str:
    raise WireError(f"malformed record at {where}: an observation without a function_call before it.")
