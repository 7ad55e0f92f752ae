"""OpenAI Chat Completions (``openai``): ``tools`` of ``{"type": "function", "function": ...}``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.wire.base import Message, WireFormat, arguments_text, call_id, result_text
from fms_dgt.core.tools.wire.names import NameCodec
from fms_dgt.plugins import register_wire_format

__all__ = ["OpenAIChat"]


@register_wire_format("openai")
class OpenAIChat(WireFormat):
    """Chat Completions: one ``tool`` message per result; parallel calls in one assistant turn."""

    def tool(self, tool: Tool, name: str, schema: dict[str, Any], *, strict: bool) -> dict[str, Any]:
        function: dict[str, Any] = {"name": name, "description": tool.description, "parameters": schema}
        if strict:
            function["strict"] = True
        return {"type": "function", "function": function}

    def renamed(self, projected: dict[str, Any], name: str) -> dict[str, Any]:
        return {**projected, "function": {**projected["function"], "name": name}}

    def messages(self, messages: Sequence[Message], codec: NameCodec) -> dict[str, Any]:
        out: list[dict[str, Any]] = []
        for m in messages:
            if m.role == "tool":
                out.extend(
                    {"role": "tool", "tool_call_id": r.call_id, "content": result_text(r)} for r in m.results
                )
            elif m.tool_calls:
                out.append(
                    {"role": "assistant", "content": m.content or None, "tool_calls": _calls(m, codec)}
                )
            else:
                out.append({"role": m.role, "content": m.content})
        return {"messages": out}


def _calls(message: Message, codec: NameCodec) -> list[dict[str, Any]]:
    return [
        {
            "id": call_id(c, i),
            "type": "function",
            "function": {"name": codec.encode(c.name), "arguments": arguments_text(c)},
        }
        for i, c in enumerate(message.tool_calls)
    ]
