from __future__ import annotations

import dataclasses
import json

import pytest

from fms_dgt.core.tools.constants import TOOL_NAMESPACE_SEP
from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult, split_qualified_name
from fms_dgt.errors import ToolDefinitionError


def _tool() -> Tool:
    return Tool(
        "get_weather",
        "weather_api",
        description="Weather now.",
        parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        output_parameters={"type": "object", "properties": {"t": {"type": "number"}}},
        metadata={"kind": "file", "source": "x.yaml#/0", "nested": {"a": [1, 2.5, None]}},
    )


def test_qualified_name_uses_separator() -> None:
    assert TOOL_NAMESPACE_SEP == "::"
    assert _tool().qualified_name == "weather_api::get_weather"


@pytest.mark.parametrize(("name", "namespace"), [("a::b", "ns"), ("a", "n::s"), ("", "ns"), ("a", "")])
def test_names_with_separator_or_empty_are_rejected(name: str, namespace: str) -> None:
    with pytest.raises(ToolDefinitionError):
        Tool(name, namespace)


def test_parameters_must_be_an_object_schema() -> None:
    with pytest.raises(ToolDefinitionError, match="not 'object'"):
        Tool("a", "ns", parameters={"type": "array"})
    with pytest.raises(ToolDefinitionError, match="expected a JSON Schema object"):
        Tool("a", "ns", parameters=["x"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "obj",
    [
        _tool(),
        ToolCall("ns::t", {"x": [1, {"y": None}]}, "c1"),
        ToolResult("c1", "ns::t", {"ok": True}, None, {"status": 200}),
        ToolResult(None, "ns::t", error="boom"),
    ],
)
def test_json_round_trip_is_lossless(obj: Tool | ToolCall | ToolResult) -> None:
    text = json.dumps(obj.to_dict())
    back = type(obj).from_dict(json.loads(text))
    assert back == obj
    assert back.to_dict() == obj.to_dict()


def test_to_dict_is_a_copy() -> None:
    tool = _tool()
    data = tool.to_dict()
    data["parameters"]["properties"]["city"]["type"] = "integer"
    assert tool.parameters["properties"]["city"]["type"] == "string"


def test_tool_is_immutable_and_hashable() -> None:
    tool = _tool()
    with pytest.raises(dataclasses.FrozenInstanceError):
        tool.name = "other"  # type: ignore[misc]
    assert len({tool, _tool()}) == 1


def test_fingerprint_is_memoised() -> None:
    tool = _tool()
    first = tool.fingerprint
    assert tool._fingerprint == first
    assert tool.fingerprint is first


def test_calls_and_results_need_qualified_names() -> None:
    with pytest.raises(ToolDefinitionError, match="unqualified"):
        ToolCall("get_weather")
    with pytest.raises(ToolDefinitionError, match="unqualified"):
        ToolResult("c", "::x")
    assert split_qualified_name("a::b::c") == ("a", "b::c")


def test_from_dict_reports_missing_fields() -> None:
    with pytest.raises(ToolDefinitionError, match="missing namespace"):
        Tool.from_dict({"name": "x"})
