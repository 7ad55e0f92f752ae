from __future__ import annotations

import copy
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from fms_dgt.core.tools.schema import (
    get_validator,
    is_flat_parameter_map,
    normalise_parameters,
    normalise_schema,
    type_from_name,
)


def _norm(raw: Any) -> dict[str, Any]:
    schema, _ = normalise_parameters(raw)
    Draft202012Validator.check_schema(schema)
    return schema


@pytest.mark.parametrize(
    ("dialect", "expected"),
    [
        ("dict", "object"),
        ("float", "number"),
        ("tuple", "array"),
        ("str", "string"),
        ("int", "integer"),
        ("bool", "boolean"),
        ("list", "array"),
        ("STRING", "string"),
        ("NUMBER", "number"),
        ("String", "string"),
        ("HashMap", "object"),
        ("ArrayList", "array"),
        ("long", "integer"),
        ("double", "number"),
        ("Boolean", "boolean"),
        ("Object", "object"),
    ],
)
def test_dialect_type_names(dialect: str, expected: str) -> None:
    schema = _norm({"type": "object", "properties": {"p": {"type": dialect}}})
    assert schema["properties"]["p"]["type"] == expected


@pytest.mark.parametrize("dialect", ["any", "", "json", "Enum", "who knows"])
def test_any_and_unknown_types_mean_no_constraint(dialect: str) -> None:
    schema, notes = normalise_parameters({"type": "object", "properties": {"p": {"type": dialect}}})
    assert "type" not in schema["properties"]["p"]
    assert any("/properties/p/type" in n for n in notes)


def test_parametrised_python_and_java_types() -> None:
    assert type_from_name("list(str)")[0] == {"type": "array", "items": {"type": "string"}}
    assert type_from_name("List[int]")[0] == {"type": "array", "items": {"type": "integer"}}
    assert type_from_name("ArrayList<String>")[0] == {"type": "array", "items": {"type": "string"}}
    assert type_from_name("Dict[str, float]")[0] == {
        "type": "object",
        "additionalProperties": {"type": "number"},
    }
    assert type_from_name("Optional[int]")[0] == {"type": ["integer", "null"]}
    assert type_from_name("str | None")[0] == {"type": ["string", "null"]}
    assert type_from_name("Date (yyyy-mm-dd)") == ({"type": "string"}, True)


def test_missing_type_stays_unconstrained_below_the_root() -> None:
    schema = _norm({"type": "dict", "properties": {"p": {"description": "anything"}}})
    assert schema == {"type": "object", "properties": {"p": {"description": "anything"}}}


def test_per_parameter_required_flags_become_a_list() -> None:
    schema = _norm(
        {
            "type": "object",
            "properties": {
                "a": {"type": "string", "required": True},
                "b": {"type": "string", "required": False},
                "c": {"type": "string", "required": True},
            },
        }
    )
    assert schema["required"] == ["a", "c"]
    assert all("required" not in p for p in schema["properties"].values())


def test_optional_list_and_optional_flags() -> None:
    schema = _norm({"type": "object", "properties": {"a": {}, "b": {}, "c": {}}, "optional": ["b"]})
    assert schema["required"] == ["a", "c"]
    schema = _norm(
        {"type": "object", "required": ["a", "b"], "properties": {"a": {}, "b": {"optional": True}}}
    )
    assert schema["required"] == ["a"]


def test_required_null_and_string_required() -> None:
    assert "required" not in _norm({"type": "object", "properties": {}, "required": None})
    assert _norm({"type": "object", "properties": {"a": {}}, "required": "a"})["required"] == ["a"]


def test_allowed_values_become_enum() -> None:
    schema = _norm({"type": "object", "properties": {"u": {"type": "str", "allowed_values": ["c", "f"]}}})
    assert schema["properties"]["u"] == {"type": "string", "enum": ["c", "f"]}


def test_nullable_and_boolean_exclusive_bounds() -> None:
    schema = _norm(
        {
            "type": "object",
            "properties": {
                "n": {"type": "integer", "nullable": True, "minimum": 0, "exclusiveMinimum": True}
            },
        }
    )
    assert schema["properties"]["n"] == {"type": ["integer", "null"], "exclusiveMinimum": 0}


def test_invalid_keyword_values_are_repaired_or_dropped() -> None:
    schema = _norm(
        {
            "type": "object",
            "properties": {
                "a": {"type": "string", "minLength": "2", "maxLength": -1, "pattern": "(", "enum": "x"},
                "b": {"type": "array", "items": ["string", {"type": "int"}]},
                "c": "str",
                "d": {"type": "number", "description": ["not", "text"], "minimum": "abc"},
            },
        }
    )
    props = schema["properties"]
    assert props["a"] == {"type": "string", "minLength": 2, "enum": ["x"]}
    assert props["b"]["prefixItems"] == [{"type": "string"}, {"type": "integer"}]
    assert props["c"] == {"type": "string"}
    assert props["d"] == {"type": "number", "description": '["not", "text"]'}


def test_flat_maps_become_object_schemas() -> None:
    flat = {"city": {"type": "str", "description": "City", "required": True}, "days": {"type": "int"}}
    assert is_flat_parameter_map(flat)
    schema = _norm(flat)
    assert schema == {
        "type": "object",
        "required": ["city"],
        "properties": {"city": {"type": "string", "description": "City"}, "days": {"type": "integer"}},
    }
    # A flat map with a parameter literally named "properties" or "type" is still a flat map.
    assert is_flat_parameter_map({"type": {"type": "string"}, "properties": {"type": "string"}})
    assert not is_flat_parameter_map({"type": "object", "properties": {"type": {"type": "string"}}})


def test_a_python_signatures_parameters_are_required_unless_described_optional() -> None:
    # API-Bank's maps say nothing of what is required; its tools take their parameters
    # positionally, and their descriptions mark the ones they do without.
    flat = {
        "status": {"type": "str", "description": "'Forgot Password' for first call."},
        "username": {"type": "str", "description": "The username. Only needed for the first call."},
        "tgt_lang": {"type": "str", "description": "[Optional] the target language. Default is en."},
        "attendees": {"type": "list(str)", "description": "The attendees."},
        "code": {"type": "int", "description": "The code."},
    }
    schema, notes = normalise_parameters(flat)
    assert schema["required"] == ["status", "attendees", "code"]
    assert any("required unless described as optional" in note for note in notes)
    # JSON Schema's names, or any required flag, leave the default alone: nothing is required.
    assert "required" not in _norm({"city": {"type": "string"}, "days": {"type": "integer"}})
    assert (
        _norm({"city": {"type": "str", "required": False}, "days": {"type": "int"}}).get("required") is None
    )


def test_draft07_dialect_is_translated() -> None:
    schema, notes = normalise_parameters(
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "dependencies": {"a": ["b"]},
        }
    )
    assert "$schema" not in schema
    assert schema["dependentRequired"] == {"a": ["b"]}
    Draft202012Validator.check_schema(schema)
    assert notes


def test_normalisation_does_not_mutate_its_input() -> None:
    raw = {"type": "dict", "properties": {"a": {"type": "float", "required": True}}}
    before = copy.deepcopy(raw)
    normalise_parameters(raw)
    assert raw == before


def test_a_javascript_regex_literal_is_unwrapped() -> None:
    # PeerTube writes usernames as "/^[a-z0-9._]+$/": as a pattern it asks for a slash before the
    # start of the text, which no value has, so every call and result failed to synthesise.
    schema, notes = normalise_schema({"type": "string", "pattern": "/^[a-z0-9._]+$/"}, "#/username")
    assert schema["pattern"] == "^[a-z0-9._]+$"
    assert notes and "#/username/pattern" in notes[0] and "JavaScript" in notes[0]
    insensitive, _ = normalise_schema({"type": "string", "pattern": "/^ab$/i"})
    assert get_validator(insensitive).is_valid("AB") and not get_validator(insensitive).is_valid("ABC")
    # Flags after the closing slash make it a literal even unanchored (PeerTube's magnet URIs).
    magnet, _ = normalise_schema({"type": "string", "pattern": "/magnet:\\?xt=urn:[a-z0-9]+/i"})
    assert magnet["pattern"] == "(?i)magnet:\\?xt=urn:[a-z0-9]+"
    for kept in ("^/api/v1/.*$", "/path/", "a/b"):  # slashes that are part of the pattern
        assert normalise_schema({"type": "string", "pattern": kept})[0]["pattern"] == kept
