"""OpenAI Responses (``openai-responses``): flat function tools and ``function_call`` items."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.wire.base import Message, WireFormat, arguments_text, call_id, result_text
from fms_dgt.core.tools.wire.names import NameCodec
from fms_dgt.plugins import register_wire_format

__all__ = ["OpenAIResponses"]


@register_wire_format("openai-responses")
class OpenAIResponses(WireFormat):
    """Responses API: an ``input`` list of messages, ``function_call`` and ``function_call_output``."""

    def tool(self, tool: Tool, name: str, schema: dict[str, Any], *, strict: bool) -> dict[str, Any]:
        return {
            "type": "function",
            "name": name,
            "description": tool.description,
            "parameters": schema,
            "strict": strict,
        }

    def messages(self, messages: Sequence[Message], codec: NameCodec) -> dict[str, Any]:
        out: list[dict[str, Any]] = []
        for m in messages:
            if m.role == "tool":
                out.extend(
                    {"type": "function_call_output", "call_id": r.call_id, "output": result_text(r)}
                    for r in m.results
                )
                continue
            if m.content or not m.tool_calls:
                out.append({"role": m.role, "content": m.content})
            out.extend(
                {
                    "type": "function_call",
                    "call_id": call_id(c, i),
                    "name": codec.encode(c.name),
                    "arguments": arguments_text(c),
                }
                for i, c in enumerate(m.tool_calls)
            )
        return {"input": out}
