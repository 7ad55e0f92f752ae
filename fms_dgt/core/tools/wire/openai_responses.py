"""OpenAI Responses (``openai-responses``): flat function tools and ``function_call`` items."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.wire._read import Calls, field, items, loads, wire_tool
from fms_dgt.core.tools.wire.base import (
    Message,
    WireFormat,
    WireTool,
    arguments_text,
    call_id,
    result_text,
)
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

    def read(self, record: Mapping[str, Any], codec: NameCodec) -> tuple[list[WireTool], list[Message]]:
        tools = [
            wire_tool(
                field(t, "name", f"tools[{i}]"), t.get("description", ""), t.get("parameters"), f"tools[{i}]"
            )
            for i, t in enumerate(items(record, "tools", "record") if record.get("tools") is not None else [])
        ]
        calls = Calls(codec)
        for i, item in enumerate(items(record, "input", "record")):
            _read_item(item, f"input[{i}]", calls)
        return tools, calls.turns


def _read_item(item: Mapping[str, Any], where: str, calls: Calls) -> None:
    kind = item.get("type")
    if kind == "function_call_output":
        calls.result(field(item, "output", where, str), item.get("call_id"), None, where)
    elif kind == "function_call":
        arguments = loads(field(item, "arguments", where), f"{where}.arguments")
        call = calls.call(field(item, "name", where, str), arguments, item.get("call_id"), where)
        # The writer puts a turn's text (if any) right before its calls: they belong to it.
        if not calls.turns or calls.turns[-1].role != "assistant":
            calls.add(Message("assistant"))
        calls.turns[-1].tool_calls.append(call)
    else:
        calls.add(Message(field(item, "role", where, str), field(item, "content", where, str)))
