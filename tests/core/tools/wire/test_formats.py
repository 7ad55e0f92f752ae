from __future__ import annotations

import re
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.wire import (
    FORMATS,
    Message,
    NameCodec,
    WireError,
    apply_bindings,
    convert_messages,
    gemini_schema,
    get_wire_format,
    project_tools,
    strict_schema,
)

PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def test_codec_is_readable_reversible_and_collision_free() -> None:
    names = [
        "weather_api::get_weather",
        "bfcl::math.gcd",
        "bfcl::math_gcd",
        "x::" + "long_" * 30,
        "ns::héllo wörld",
        "1ns::t",
    ]
    codec = NameCodec(names)
    encoded = [codec.encode(n) for n in names]
    assert encoded[0] == "weather_api__get_weather"
    assert len(set(encoded)) == len(names)
    assert all(PATTERN.match(e) for e in encoded)
    assert [codec.decode(e) for e in encoded] == names
    # The two names that sanitise alike both carry a hash, independent of load order.
    assert encoded[1] != "bfcl__math_gcd" and encoded[2] != "bfcl__math_gcd"
    assert NameCodec(reversed(names)).name_map == codec.name_map
    assert NameCodec.from_name_map(codec.name_map).decode(encoded[3]) == names[3]
    with pytest.raises(WireError, match="invented"):
        codec.decode("nope")


def test_codec_of_one_name_does_not_depend_on_unrelated_names() -> None:
    alone = NameCodec(["a::t"]).encode("a::t")
    assert NameCodec(["a::t", "b::u", "c::v"]).encode("a::t") == alone


def test_a_format_shares_one_codec_per_set_of_names() -> None:
    names = ["weather_api::get_weather", "bfcl::math.gcd", "bfcl::math_gcd"]
    codec = get_wire_format("openai").codec(names)
    assert get_wire_format("anthropic").codec(reversed(names)) is codec
    assert codec.name_map == NameCodec(names).name_map
    assert get_wire_format("openai").codec(names[:2]) is not codec


def test_codec_scales_without_collisions() -> None:
    names = [f"ns{i % 50}::tool.{i}" for i in range(5000)] + [f"ns{i % 50}::tool_{i}" for i in range(5000)]
    codec = NameCodec(names)
    assert len(codec.name_map) == len(names)


TOOL = Tool(
    "lookup",
    "kb",
    description="Look up.",
    parameters={
        "type": "object",
        "properties": {
            "q": {"type": "string"},
            "limit": {"type": "integer"},
            "token": {"type": "string"},
            "node": {"$ref": "#/$defs/node"},
        },
        "required": ["q"],
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"child": {"$ref": "#/$defs/node"}, "kind": {"const": 3}},
            }
        },
    },
)


def _keys(node: Any) -> set[str]:
    if isinstance(node, dict):
        return set(node).union(*(_keys(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_keys(v) for v in node))
    return set()


# The provider layouts whose tool schemas stay JSON Schema (the trainer and evaluator layouts,
# sharegpt, xlam and bfcl, have their own tests in test_trainer_formats.py).
API_FORMATS = ["openai", "openai-responses", "anthropic", "gemini", "hf"]


def test_every_format_is_covered() -> None:
    assert set(FORMATS) == {*API_FORMATS, "sharegpt", "xlam", "bfcl"}


@pytest.mark.parametrize("fmt", API_FORMATS)
def test_projection_per_provider(fmt: str) -> None:
    payload, codec = project_tools([TOOL], fmt, bindings={"kb::lookup": {"token": "secret"}})
    tools: Any = payload[0]["functionDeclarations"] if fmt == "gemini" else payload
    [tool] = tools
    function = tool.get("function", tool)
    assert codec.decode(function["name"]) == "kb::lookup"
    schema = function.get("parameters", function.get("input_schema"))
    assert "token" not in schema["properties"]
    if fmt == "gemini":
        assert not {"$ref", "$defs"} & _keys(schema) and "cut" in str(schema)
        assert schema["properties"]["node"]["properties"]["kind"] == {"enum": ["3"], "type": "string"}
    else:
        Draft202012Validator.check_schema(schema)


def test_strict_mode_closes_objects_and_makes_optional_nullable() -> None:
    schema = strict_schema(TOOL.parameters)
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["q", "limit", "token", "node"]
    assert schema["properties"]["limit"]["type"] == ["integer", "null"]
    assert schema["properties"]["q"]["type"] == "string"
    validator = Draft202012Validator(schema)
    assert validator.is_valid({"q": "x", "limit": None, "token": None, "node": None})
    assert not validator.is_valid({"q": "x", "limit": None, "token": None, "node": None, "extra": 1})


def test_gemini_single_types_and_nullable() -> None:
    out = gemini_schema({"type": ["string", "null"], "additionalProperties": False, "examples": [1]})
    assert out == {"type": "string", "nullable": True}


def test_bindings_are_injected_at_call_time() -> None:
    call = apply_bindings(
        ToolCall("kb::lookup", {"q": "x", "token": "model-made"}, "c1"), {"kb::lookup": {"token": "secret"}}
    )
    assert call.arguments == {"q": "x", "token": "secret"} and call.call_id == "c1"


def _conversation() -> list[Message]:
    calls = [ToolCall("kb::lookup", {"q": "a"}, "c1"), ToolCall("kb::lookup", {"q": "b"}, "c2")]
    results = [ToolResult("c1", "kb::lookup", {"hits": 1}), ToolResult("c2", "kb::lookup", error="boom")]
    return [
        Message("system", "Be brief."),
        Message("user", "Find a and b."),
        Message("assistant", "", calls),
        Message("tool", results=results),
        Message("assistant", "Found a; b failed."),
    ]


def test_parallel_calls_stay_in_one_assistant_message() -> None:
    codec = NameCodec(["kb::lookup"])
    openai = convert_messages(_conversation(), "openai", codec)["messages"]
    assert [m["role"] for m in openai] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert [c["id"] for c in openai[2]["tool_calls"]] == ["c1", "c2"]
    assert openai[4] == {
        "role": "tool",
        "tool_call_id": "c2",
        "name": "kb__lookup",
        "content": '{"error": "boom"}',
    }

    anthropic = convert_messages(_conversation(), "anthropic", codec)
    assert anthropic["system"] == "Be brief."
    roles = [m["role"] for m in anthropic["messages"]]
    assert roles == ["user", "assistant", "user", "assistant"]
    assert [b["type"] for b in anthropic["messages"][1]["content"]] == ["tool_use", "tool_use"]
    assert anthropic["messages"][2]["content"][1]["is_error"] is True

    gemini = convert_messages(_conversation(), "gemini", codec)
    assert [m["role"] for m in gemini["contents"]] == ["user", "model", "user", "model"]
    assert len(gemini["contents"][1]["parts"]) == 2

    responses = convert_messages(_conversation(), "openai-responses", codec)["input"]
    kinds = [item.get("type", item.get("role")) for item in responses]
    assert kinds == [
        "system",
        "user",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
        "assistant",
    ]


def test_unknown_format_is_an_error() -> None:
    with pytest.raises(WireError, match="unknown wire format"):
        project_tools([TOOL], "cohere")
