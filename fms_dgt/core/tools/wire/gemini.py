"""Gemini (``gemini``): function declarations in Gemini's schema subset, ``functionCall`` parts.

The layout is the one the Gemini REST API takes, camelCase throughout: ``tools`` is
``[{"functionDeclarations": [...]}]``, the system prompt is ``systemInstruction``, calls are
``functionCall`` parts and results ``functionResponse`` parts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fms_dgt.core.tools.data_objects import Tool, ToolResult
from fms_dgt.core.tools.wire.base import Message, WireFormat, result_value, split_system
from fms_dgt.core.tools.wire.names import NameCodec
from fms_dgt.core.tools.wire.schemas import gemini_schema
from fms_dgt.plugins import register_wire_format

__all__ = ["Gemini"]


@register_wire_format("gemini")
class Gemini(WireFormat):
    """``generateContent``: ``contents`` with ``user``/``model`` roles, results as user parts."""

    lossy = (
        "Gemini's schema subset drops keywords (references, const, numeric enums) and its calls carry no ids"
    )

    def tool(self, tool: Tool, name: str, schema: dict[str, Any], *, strict: bool) -> dict[str, Any]:
        return {"name": name, "description": tool.description, "parameters": gemini_schema(schema)}

    def tools(self, projected: list[dict[str, Any]]) -> Any:
        return [{"functionDeclarations": projected}]

    def messages(self, messages: Sequence[Message], codec: NameCodec) -> dict[str, Any]:
        system, turns = split_system(messages)
        out: list[dict[str, Any]] = []
        for m in turns:
            if m.role == "tool":
                out.append({"role": "user", "parts": [_response(r, codec) for r in m.results]})
            elif m.role == "assistant":
                parts: list[dict[str, Any]] = [{"text": m.content}] if m.content else []
                parts.extend(
                    {"functionCall": {"name": codec.encode(c.name), "args": c.arguments}}
                    for c in m.tool_calls
                )
                out.append({"role": "model", "parts": parts})
            else:
                out.append({"role": "user", "parts": [{"text": m.content}]})
        payload: dict[str, Any] = {"contents": out}
        if system:
            payload["systemInstruction"] = {"parts": [{"text": system}]}
        return payload


def _response(result: ToolResult, codec: NameCodec) -> dict[str, Any]:
    value = result_value(result)
    response = value if result.error is not None else {"result": value}
    return {"functionResponse": {"name": codec.encode(result.name), "response": response}}
