"""The fast path's reader and body writers agree with the wire formats' own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.canonical import TOOLS, conversation
from support.runs import read_records

from fms_dgt.core.tools.data_objects import ToolCall, ToolResult
from fms_dgt.core.tools.wire import Message, wire_formats
from fms_dgt.core.tools.wire.base import get_wire_format
from fms_dgt.core.tools.wire.names import NameCodec
from fms_dgt.errors import RejectedRecord
from fms_dgt.export import export_record, read_record
from fms_dgt.export.bodies import BODIES, TEXT_TOOLS, chat_turns, tools_text

CODEC = NameCodec(t.qualified_name for t in TOOLS)
NAMES = {t.qualified_name: CODEC.encode(t.qualified_name) for t in TOOLS}


def _conversations() -> list[list[Message]]:
    rich = conversation()
    speaking = [Message("user", "u"), Message("assistant", "one moment", [ToolCall("net::ping", {}, "A1")])]
    unusual = [
        Message("developer", "d"),
        Message("user", "u", [ToolCall("net::ping", {"x": [1, {"y": None}]}, None)]),
        Message("assistant", "", [ToolCall("calc::add", {"a": 1}, "")]),
        Message("tool", results=[ToolResult("", "calc::add", '{"not": "decoded"}')]),
        Message(
            "tool", results=[ToolResult(None, "calc::add", None), ToolResult("b", "calc::add", [1, "x"])]
        ),
        Message("system", "late"),
    ]
    return [rich, rich[1:], speaking, unusual, [], [Message("assistant", "")]]


@pytest.mark.parametrize("fmt", sorted(wire_formats()))
def test_each_body_writer_writes_what_its_format_writes(fmt: str) -> None:
    wire = get_wire_format(fmt)
    write = BODIES[type(wire)]
    for turns in _conversations():
        try:
            expected: Any = wire.messages(turns, CODEC)
        except RejectedRecord:
            with pytest.raises(ValueError, match="the reference path says why"):
                write(turns, NAMES)
            continue
        assert json.dumps(write(turns, NAMES)) == json.dumps(expected)


def test_a_name_the_record_does_not_offer_is_a_lookup_error() -> None:
    for write in BODIES.values():
        with pytest.raises(LookupError):
            write([Message("assistant", "", [ToolCall("x::y", {}, "1")])], NAMES)


def test_tools_as_text_are_the_json_text_of_the_list() -> None:
    for fmt in ("sharegpt", "xlam"):
        wire = get_wire_format(fmt)
        assert type(wire) in TEXT_TOOLS
        projected = [wire.tool(t, NAMES[t.qualified_name], dict(t.parameters), strict=False) for t in TOOLS]
        assert tools_text([json.dumps(p, ensure_ascii=False) for p in projected]) == wire.tools(projected)
        assert tools_text([]) == wire.tools([])


@pytest.mark.parametrize("fmt", ["openai", "hf"])
def test_chat_turns_are_the_turns_the_format_reads_back(demo_run: Path, fmt: str) -> None:
    records = [export_record(TOOLS, conversation(), {}, fmt=fmt)]
    records += [
        export_record(r.tools, r.messages, r.metadata, fmt=fmt)
        for r in map(read_record, read_records(demo_run))
    ]
    for record in records:
        turns = chat_turns(record["messages"], record["metadata"]["name_map"], text_arguments=fmt == "openai")
        assert turns == read_record(record).messages


def test_a_record_of_another_shape_is_a_plain_error() -> None:
    name_map = {"net__ping": "net::ping"}
    for messages in (
        {"not": "a list"},
        [{"content": "no role"}],
        [{"role": "assistant", "content": 5}],
        [{"role": "assistant", "tool_calls": [{"function": {"name": "net__ping", "arguments": "[]"}}]}],
        [{"role": "assistant", "tool_calls": [{"function": {"name": "nope", "arguments": "{}"}}]}],
        [{"role": "tool", "content": "x", "tool_call_id": "never called"}],
    ):
        with pytest.raises((ValueError, LookupError, TypeError)):
            chat_turns(messages, name_map, text_arguments=True)
