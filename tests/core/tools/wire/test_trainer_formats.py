"""The trainer and evaluator layouts (hf, sharegpt, xlam, bfcl), Gemini's REST layout, and reading
records back: canonical -> format -> read -> the same canonical, for every format that loses nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.canonical import TOOLS, conversation

from fms_dgt.core.tools.data_objects import ToolCall, ToolResult
from fms_dgt.core.tools.wire import Message, NameCodec, get_wire_format, project_tools, wire_formats
from fms_dgt.errors import RejectedRecord, WireError

LOSSLESS = ["openai", "openai-responses", "anthropic", "hf", "sharegpt"]
LOSSY = ["gemini", "xlam", "bfcl"]


def _record(fmt: str, messages: list[Message] | None = None) -> tuple[dict[str, Any], NameCodec]:
    wire = get_wire_format(fmt)
    codec = wire.codec(t.qualified_name for t in TOOLS)
    payload, _ = project_tools(TOOLS, fmt, codec=codec)
    body = wire.messages(messages or conversation(), codec)
    record = wire.assemble(payload, body, {"index": 4, "format": fmt, "name_map": codec.name_map})
    # What a run writes is JSON text: read back what a file would hold.
    return json.loads(json.dumps(record)), codec


def test_every_format_is_lossless_or_says_why_not() -> None:
    assert set(wire_formats()) == set(LOSSLESS + LOSSY)
    for fmt in LOSSY:
        assert get_wire_format(fmt).lossy
    for fmt in LOSSLESS:
        assert not get_wire_format(fmt).lossy


@pytest.mark.parametrize("fmt", LOSSLESS)
def test_records_read_back_to_the_same_conversation_and_tools(fmt: str) -> None:
    record, codec = _record(fmt)
    tools, messages = get_wire_format(fmt).read(record, codec)
    assert messages == conversation()
    assert [codec.decode(t.name) for t in tools] == [t.qualified_name for t in TOOLS]
    assert [t.description for t in tools] == [t.description for t in TOOLS]
    assert tools[0].parameters["properties"]["limit"] == {"type": "integer", "nullable": True}


@pytest.mark.parametrize("fmt", LOSSY)
def test_lossy_formats_refuse_to_be_read_back(fmt: str) -> None:
    record, codec = _record(fmt)
    with pytest.raises(WireError, match=f"cannot read records of format '{fmt}' back: .+Export from"):
        get_wire_format(fmt).read(record, codec)


@pytest.mark.parametrize("fmt", LOSSLESS)
def test_a_malformed_record_names_the_place(fmt: str) -> None:
    record, codec = _record(fmt)
    key = next(k for k in ("messages", "input", "conversations") if k in record)
    record[key][1] = "not an object"
    with pytest.raises(WireError, match=rf"malformed record at {key}"):
        get_wire_format(fmt).read(record, codec)


def test_hf_layout_is_what_chat_templates_take() -> None:
    record, _ = _record("hf")
    calls = record["messages"][2]
    assert calls["content"] == "" and calls["tool_calls"][0]["function"]["arguments"] == {
        "q": 'café "x"',
        "filters": {"lang": "fr"},
        "tags": ["a", "b"],
    }
    assert calls["tool_calls"][0]["id"] == "Ab3dE6gH9" and calls["tool_calls"][0]["type"] == "function"
    tool = record["messages"][3]
    assert tool == {
        "role": "tool",
        "tool_call_id": "Ab3dE6gH9",
        "name": "kb__lookup",
        "content": '{"hits": [{"id": 1, "title": "Café"}], "total": 1}',
    }
    assert "tool_calls" not in record["messages"][-1]
    assert record["tools"][1] == {
        "type": "function",
        "function": {
            "name": "calc__add",
            "description": "Add two numbers.",
            "parameters": TOOLS[1].parameters,
        },
    }


def test_openai_call_turns_have_text_content_and_tool_messages_a_name() -> None:
    record, _ = _record("openai")
    assert record["messages"][2]["content"] == ""
    assert all(m["name"] for m in record["messages"] if m["role"] == "tool")
    assert json.loads(record["messages"][2]["tool_calls"][1]["function"]["arguments"]) == {"a": 1, "b": 2.5}


def test_gemini_is_laid_out_as_the_rest_api_takes_it() -> None:
    record, _ = _record("gemini")
    assert list(record["tools"][0]) == ["functionDeclarations"] and len(record["tools"]) == 1
    assert record["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    parts = record["contents"][1]["parts"]
    assert parts[0] == {
        "functionCall": {"name": "kb__lookup", "args": conversation()[2].tool_calls[0].arguments}
    }
    responses = record["contents"][2]["parts"]
    assert responses[1] == {
        "functionResponse": {"name": "calc__add", "response": {"error": "overflow: a is too large"}}
    }
    text = json.dumps(record)
    assert "function_declarations" not in text and "system_instruction" not in text


def test_sharegpt_is_llama_factory_layout() -> None:
    record, _ = _record("sharegpt")
    assert record["system"] == "Be brief."
    roles = [t["from"] for t in record["conversations"]]
    assert roles == ["human", "function_call", "observation", "function_call", "observation", "gpt"]
    parallel = json.loads(record["conversations"][1]["value"])
    assert [c["name"] for c in parallel] == ["kb__lookup", "calc__add"]
    assert json.loads(record["conversations"][2]["value"])[1] == {"error": "overflow: a is too large"}
    assert json.loads(record["conversations"][3]["value"]) == {"name": "net__ping", "arguments": {}}
    assert record["conversations"][4]["value"] == "pong"
    assert [t["name"] for t in json.loads(record["tools"])] == ["kb__lookup", "calc__add", "net__ping"]
    assert record["metadata"]["call_ids"] == ["Ab3dE6gH9", "Zz9Yy8Xx7", "Qq1Ww2Ee3"]


def test_sharegpt_rejects_what_llama_factory_cannot_hold() -> None:
    codec = NameCodec(["net::ping"])
    speaking = [Message("user", "hi"), Message("assistant", "let me see", [ToolCall("net::ping", {}, "c")])]
    with pytest.raises(RejectedRecord, match="both speaks and calls"):
        get_wire_format("sharegpt").messages(speaking, codec)
    twice = [Message("user", "hi"), Message("user", "again")]
    with pytest.raises(RejectedRecord, match="alternation"):
        get_wire_format("sharegpt").messages(twice, codec)


def test_xlam_is_the_apigen_layout() -> None:
    record, _ = _record("xlam")
    assert record["id"] == 4 and record["query"] == "Find café and add 1 and 2.5."
    answers = json.loads(record["answers"])
    assert answers == [
        {"name": "kb__lookup", "arguments": {"q": 'café "x"', "filters": {"lang": "fr"}, "tags": ["a", "b"]}},
        {"name": "calc__add", "arguments": {"a": 1, "b": 2.5}},
        {"name": "net__ping", "arguments": {}},
    ]
    lookup = json.loads(record["tools"])[0]["parameters"]
    assert lookup["q"] == {"description": "the query", "type": "str"}
    assert lookup["limit"]["type"] == "int, optional" and lookup["tags"]["type"] == "List[str], optional"
    assert lookup["filters"]["type"] == "Dict, optional"


def test_bfcl_entry_is_in_bfcls_type_dialect_with_its_possible_answer() -> None:
    record, _ = _record("bfcl")
    assert record["id"] == "parallel_multiple_4" and record["possible_answer"]["id"] == record["id"]
    assert record["question"] == [
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Find café and add 1 and 2.5."},
        ]
    ]
    lookup = record["function"][0]["parameters"]
    assert lookup["type"] == "dict" and lookup["required"] == ["q"]
    assert lookup["properties"]["limit"] == {"type": "integer"}
    assert lookup["properties"]["filters"]["type"] == "dict"
    assert lookup["properties"]["tags"] == {"type": "array", "items": {"type": "string"}}
    assert record["function"][1]["parameters"]["properties"]["a"]["type"] == "float"
    assert record["function"][2]["parameters"] == {"type": "dict", "properties": {}, "required": []}
    truth = record["possible_answer"]["ground_truth"]
    assert truth[0] == {
        "kb__lookup": {"q": ['café "x"'], "filters": [{"lang": ["fr"]}], "tags": [["a", "b"]]}
    }
    assert truth[2] == {"net__ping": {}}
    dialect = {"dict", "float", "integer", "string", "array", "boolean", "tuple", "any"}
    assert {t for f in record["function"] for t in _types(f["parameters"])} <= dialect


def _types(node: Any) -> set[str]:
    if isinstance(node, dict):
        own = {node["type"]} if isinstance(node.get("type"), str) else set()
        return own.union(*(_types(v) for k, v in node.items() if k != "enum"))
    if isinstance(node, list):
        return set().union(*(_types(v) for v in node))
    return set()


def test_bfcl_names_drop_the_namespace_when_a_record_has_one() -> None:
    codec = get_wire_format("bfcl").codec(["bfcl::math.factorial", "bfcl::math.hypot"])
    assert codec.encode("bfcl::math.factorial") == "math.factorial"
    assert codec.name_map == {"math.factorial": "bfcl::math.factorial", "math.hypot": "bfcl::math.hypot"}
    mixed = get_wire_format("bfcl").codec(["bfcl::math.factorial", "calc::add"])
    assert mixed.encode("calc::add") == "calc__add"
    # Built once per set of names, whatever their order: records offer the same sets again and again.
    assert get_wire_format("bfcl").codec(["calc::add", "bfcl::math.factorial"]) is mixed


@pytest.mark.parametrize(
    ("calls", "tools", "category"),
    [
        (0, 2, "irrelevance"),
        (1, 1, "simple"),
        (1, 3, "multiple"),
        (2, 1, "parallel"),
        (3, 2, "parallel_multiple"),
    ],
)
def test_bfcl_categories_follow_the_call_pattern(calls: int, tools: int, category: str) -> None:
    from fms_dgt.core.tools.wire.bfcl import bfcl_category

    assert bfcl_category(calls, tools) == category


def test_a_string_result_that_is_json_reads_back_as_the_same_text() -> None:
    codec = NameCodec(["net::ping"])
    turns = [
        Message("user", "x"),
        Message("assistant", "", [ToolCall("net::ping", {}, "c1")]),
        Message("tool", results=[ToolResult("c1", "net::ping", "42")]),
    ]
    wire = get_wire_format("openai")
    body = wire.messages(turns, codec)
    _, back = wire.read({"tools": [], **body}, codec)
    assert back[2].results[0].result == 42
    assert wire.messages(back, codec) == body
