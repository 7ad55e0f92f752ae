"""Schema hygiene: single types, ``nullable`` and ``required`` for every consumer; strict mode kept."""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.wire import project_tools
from fms_dgt.core.tools.wire.schemas import hygienic_schema, strict_schema


def _types(node: Any) -> list[Any]:
    if isinstance(node, dict):
        own = [node["type"]] if "type" in node else []
        return own + [t for v in node.values() for t in _types(v)]
    if isinstance(node, list):
        return [t for v in node for t in _types(v)]
    return []


def test_a_type_list_with_null_becomes_the_type_and_nullable() -> None:
    assert hygienic_schema({"type": ["string", "null"], "minLength": 2}) == {
        "type": "string",
        "minLength": 2,
        "nullable": True,
    }


def test_several_types_become_any_of_and_keep_null() -> None:
    out = hygienic_schema({"type": ["string", "integer", "null"]})
    assert out == {"anyOf": [{"type": "string"}, {"type": "integer"}], "nullable": True}
    both = hygienic_schema({"type": ["string", "integer"], "anyOf": [{"minLength": 1}, {"minimum": 0}]})
    assert both["anyOf"] == [{"minLength": 1}, {"minimum": 0}]
    assert both["allOf"] == [{"anyOf": [{"type": "string"}, {"type": "integer"}]}]


def test_every_object_schema_gets_required_at_any_depth() -> None:
    schema = {
        "type": "object",
        "properties": {
            "o": {"type": "object", "properties": {"x": {"type": ["number", "null"]}}},
            "items": {"type": "array", "items": {"properties": {"y": {"type": "string"}}}},
        },
        "$defs": {"d": {"type": "object"}},
    }
    out = hygienic_schema(schema)
    assert out["required"] == [] and out["properties"]["o"]["required"] == []
    assert out["properties"]["items"]["items"]["required"] == [] and out["$defs"]["d"]["required"] == []
    assert not [t for t in _types(out) if isinstance(t, list)]
    Draft202012Validator.check_schema(out)
    assert schema["properties"]["o"]["properties"]["x"]["type"] == ["number", "null"], "input untouched"


def test_projection_applies_hygiene_but_strict_mode_keeps_type_lists() -> None:
    tool = Tool(
        "t",
        "ns",
        parameters={
            "type": "object",
            "properties": {"a": {"type": ["string", "null"]}, "b": {"type": "integer"}},
        },
    )
    plain, _ = project_tools([tool], "openai")
    assert plain[0]["function"]["parameters"] == {
        "type": "object",
        "properties": {"a": {"type": "string", "nullable": True}, "b": {"type": "integer"}},
        "required": [],
    }
    strict, _ = project_tools([tool], "openai", strict=True)
    parameters = strict[0]["function"]["parameters"]
    assert parameters == strict_schema(tool.parameters)
    assert parameters["properties"]["b"]["type"] == ["integer", "null"]
    assert parameters["required"] == ["a", "b"] and parameters["additionalProperties"] is False
