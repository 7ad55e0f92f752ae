"""A wire format is one class behind a small protocol: adding one touches one new module."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from fms_dgt.cli import _parser
from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.wire import (
    Message,
    NameCodec,
    WireError,
    WireFormat,
    convert_messages,
    project_tools,
    wire_formats,
)
from fms_dgt.plugins import WIRE_FORMATS


class Plain(WireFormat):
    """A made-up provider: tools as name -> schema, turns as ``role: text`` lines."""

    def tool(self, tool: Tool, name: str, schema: dict[str, Any], *, strict: bool) -> dict[str, Any]:
        return {"name": name, "schema": schema}

    def tools(self, projected: list[dict[str, Any]]) -> Any:
        return {p["name"]: p["schema"] for p in projected}

    def messages(self, messages: Sequence[Message], codec: NameCodec) -> dict[str, Any]:
        lines = [f"{m.role}: {m.content or [codec.encode(c.name) for c in m.tool_calls]}" for m in messages]
        return {"lines": lines}


@pytest.fixture
def plain() -> Iterator[None]:
    WIRE_FORMATS.add("plain-test", Plain)
    yield
    WIRE_FORMATS.remove("plain-test")


def test_a_registered_format_is_used_everywhere(plain: None) -> None:
    tool = Tool("t", "ns", parameters={"type": "object", "properties": {"a": {"type": "integer"}}})
    payload, codec = project_tools([tool], "plain-test")
    # Projection adds `required` to every object schema (schema hygiene), in every format.
    assert payload == {"ns__t": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": []}}
    turns = [Message("user", "hi"), Message("assistant", tool_calls=[ToolCall("ns::t", {"a": 1})])]
    assert convert_messages(turns, "plain-test", codec) == {"lines": ["user: hi", "assistant: ['ns__t']"]}
    assert "plain-test" in wire_formats()
    export = _parser().parse_args(["tools", "export", "x.yaml", "--format", "plain-test"])
    assert export.format == "plain-test"


def test_every_builtin_format_is_a_plugin_of_its_own_module() -> None:
    assert set(wire_formats()) >= {"openai", "openai-responses", "anthropic", "gemini"}
    for name in ("openai", "openai-responses", "anthropic", "gemini"):
        cls = WIRE_FORMATS.get(name)
        assert cls.__module__ == f"fms_dgt.core.tools.wire.{name.replace('-', '_')}"


def test_an_unknown_format_lists_the_known_ones() -> None:
    with pytest.raises(WireError, match=r"unknown wire format 'nope': use one of .*anthropic.*openai"):
        project_tools([], "nope")
    with pytest.raises(WireError, match="unknown wire format"):
        convert_messages([Message("user", "x")], "nope", NameCodec([]))


def test_results_of_a_failed_call_keep_their_error_in_every_format() -> None:
    result = ToolResult("c1", "ns::t", error="boom")
    turns = [
        Message("assistant", tool_calls=[ToolCall("ns::t", {}, "c1")]),
        Message("tool", results=[result]),
    ]
    for fmt in ("openai", "openai-responses", "anthropic", "gemini"):
        assert "boom" in str(convert_messages(turns, fmt, NameCodec(["ns::t"])))


def test_no_tools_means_no_tools_key() -> None:
    for fmt in ("openai", "openai-responses", "anthropic", "gemini"):
        payload, codec = project_tools([], fmt)
        assert payload is None and codec.name_map == {}


def test_anthropic_message_content_is_always_a_list_of_blocks() -> None:
    turns = [
        Message("system", "be brief"),
        Message("user", "hi"),
        Message("assistant", tool_calls=[ToolCall("ns::t", {"a": 1}, "c1")]),
        Message("tool", results=[ToolResult("c1", "ns::t", result={"v": 2})]),
        Message("assistant", "done"),
    ]
    body = convert_messages(turns, "anthropic", NameCodec(["ns::t"]))
    assert body["system"] == "be brief"
    assert all(isinstance(m["content"], list) and m["content"] for m in body["messages"])
    assert body["messages"][0]["content"] == [{"type": "text", "text": "hi"}]
    result_block = body["messages"][2]["content"][0]
    assert result_block["type"] == "tool_result" and result_block["content"][0]["type"] == "text"
