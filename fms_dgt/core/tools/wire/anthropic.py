"""Anthropic Messages (``anthropic``): ``input_schema`` tools, ``tool_use`` and ``tool_result`` blocks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fms_dgt.core.tools.data_objects import Tool, ToolCall
from fms_dgt.core.tools.wire.base import Message, WireFormat, call_id, result_text, split_system
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
