"""Anthropic Messages (``anthropic``): ``input_schema`` tools, ``tool_use`` and ``tool_result`` blocks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.wire._read import Calls, field, items, wire_tool
from fms_dgt.core.tools.wire.base import (
    Message,
    WireFormat,
    WireTool,
    call_id,
    result_text,
    split_system,
)
from fms_dgt.core.tools.wire.names import NameCodec
from fms_dgt.plugins import register_wire_format

__all__ = ["AnthropicMessages"]


@register_wire_format("anthropic")
class AnthropicMessages(WireFormat):
    """Messages API: results go back in one user turn; the system prompt is a top-level field."""

    def tool(self, tool: Tool, name: str, schema: dict[str, Any], *, strict: bool) -> dict[str, Any]:
        return {"name": name, "description": tool.description, "input_schema": schema}

    def messages(self, messages: Sequence[Message], codec: NameCodec) -> dict[str, Any]:
        """Messages whose ``content`` is always a list of blocks (text, tool_use, tool_result)."""
        system, turns = split_system(messages)
        out: list[dict[str, Any]] = []
        for m in turns:
            if m.role == "tool":
                out.append({"role": "user", "content": [_result_block(r) for r in m.results]})
                continue
            blocks: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
            blocks.extend(_use_block(c, i, codec) for i, c in enumerate(m.tool_calls))
            out.append({"role": m.role, "content": blocks or [{"type": "text", "text": ""}]})
        return {"system": system, "messages": out} if system else {"messages": out}

    def read(self, record: Mapping[str, Any], codec: NameCodec) -> tuple[list[WireTool], list[Message]]:
        tools = [
            wire_tool(
                field(t, "name", f"tools[{i}]"),
                t.get("description", ""),
                t.get("input_schema"),
                f"tools[{i}]",
            )
            for i, t in enumerate(items(record, "tools", "record") if record.get("tools") is not None else [])
        ]
        calls = Calls(codec)
        system = record.get("system")
        if system:
            calls.add(Message("system", field(record, "system", "record", str)))
        for i, m in enumerate(items(record, "messages", "record")):
            _read_turn(m, f"messages[{i}]", calls)
        return tools, calls.turns


def _read_turn(message: Mapping[str, Any], where: str, calls: Calls) -> None:
    role = field(message, "role", where, str)
    blocks = items(message, "content", where)
    if blocks and all(b.get("type") == "tool_result" for b in blocks):
        for j, block in enumerate(blocks):
            _read_result(block, f"{where}.content[{j}]", calls)
        return
    turn = Message(role, "".join(b.get("text", "") for b in blocks if b.get("type") == "text"))
    for j, block in enumerate(blocks):
        if block.get("type") == "tool_use":
            at = f"{where}.content[{j}]"
            turn.tool_calls.append(
                calls.call(field(block, "name", at, str), field(block, "input", at), block.get("id"), at)
            )
    calls.add(turn)


def _read_result(block: Mapping[str, Any], where: str, calls: Calls) -> None:
    text = "".join(field(part, "text", where, str) for part in items(block, "content", where))
    call = block.get("tool_use_id")
    result = calls.result(text, call, None, where)
    if block.get("is_error") and result.error is None:
        # An error block whose text is not {"error": ...}: keep the text as the error.
        calls.turns[-1].results[-1] = ToolResult(call, result.name, error=text)


def _use_block(call: ToolCall, index: int, codec: NameCodec) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": call_id(call, index),
        "name": codec.encode(call.name),
        "input": call.arguments,
    }


def _result_block(result: Any) -> dict[str, Any]:
    block = {
        "type": "tool_result",
        "tool_use_id": result.call_id,
        "content": [{"type": "text", "text": result_text(result)}],
    }
    if result.error is not None:
        block["is_error"] = True
    return block
