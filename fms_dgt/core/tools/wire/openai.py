"""OpenAI Chat Completions (``openai``): ``tools`` of ``{"type": "function", "function": ...}``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fms_dgt.core.tools.data_objects import Tool, ToolCall
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
from fms_dgt.errors import WireError
from fms_dgt.plugins import register_wire_format

__all__ = ["OpenAIChat", "read_chat_tools"]


@register_wire_format("openai")
class OpenAIChat(WireFormat):
    """Chat Completions: one ``tool`` message per result; parallel calls in one assistant turn.

    Call turns carry ``content: ""`` (never null: several chat templates concatenate it) and every
    tool message names its tool, so templates that print ``name`` find it.
    """

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
                    {
                        "role": "tool",
                        "tool_call_id": r.call_id,
                        "name": codec.encode(r.name),
                        "content": result_text(r),
                    }
                    for r in m.results
                )
            elif m.tool_calls:
                out.append({"role": "assistant", "content": m.content, "tool_calls": self._calls(m, codec)})
            else:
                out.append({"role": m.role, "content": m.content})
        return {"messages": out}

    def arguments(self, call: ToolCall) -> Any:
        """A call's ``arguments`` as this layout writes them (JSON text)."""
        return arguments_text(call)

    def _calls(self, message: Message, codec: NameCodec) -> list[dict[str, Any]]:
        return [
            {
                "id": call_id(c, i),
                "type": "function",
                "function": {"name": codec.encode(c.name), "arguments": self.arguments(c)},
            }
            for i, c in enumerate(message.tool_calls)
        ]

    def read(self, record: Mapping[str, Any], codec: NameCodec) -> tuple[list[WireTool], list[Message]]:
        return read_chat_tools(record), read_chat_messages(record, codec, arguments_as_text=True)


def read_chat_tools(record: Mapping[str, Any]) -> list[WireTool]:
    """The tools of a record in the chat layout (``{"type": "function", "function": {...}}``)."""
    out = []
    for i, tool in enumerate(items(record, "tools", "record") if record.get("tools") is not None else []):
        where = f"tools[{i}].function"
        function = field(tool, "function", f"tools[{i}]", dict)
        out.append(
            wire_tool(
                field(function, "name", where),
                function.get("description", ""),
                field(function, "parameters", where),
                where,
            )
        )
    return out


def read_chat_messages(
    record: Mapping[str, Any], codec: NameCodec, *, arguments_as_text: bool
) -> list[Message]:
    """The turns of a record in the chat layout (``openai``, and ``hf`` with object arguments)."""
    calls = Calls(codec)
    for i, m in enumerate(items(record, "messages", "record")):
        where = f"messages[{i}]"
        role = field(m, "role", where, str)
        if role == "tool":
            content = field(m, "content", where)
            calls.result(content, m.get("tool_call_id"), m.get("name"), where)
            continue
        turn = Message(role, _text(m.get("content"), where))
        for j, c in enumerate(m.get("tool_calls") or []):
            at = f"{where}.tool_calls[{j}]"
            function = field(c, "function", at, dict)
            raw = field(function, "arguments", at)
            arguments = loads(raw, f"{at}.arguments") if arguments_as_text else raw
            turn.tool_calls.append(calls.call(field(function, "name", at, str), arguments, c.get("id"), at))
        calls.add(turn)
    return calls.turns


def _text(content: Any, where: str) -> str:
    if content is None:
        return ""
    if not isinstance(content, str):
        raise WireError(f"malformed record at {where}.content: expected text, got {type(content).__name__}.")
    return content
