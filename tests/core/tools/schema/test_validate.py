from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from fms_dgt.core.tools.schema import CompiledValidator, get_validator

BASE = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "City"},
        "units": {"type": "string", "enum": ["c", "f"], "default": "c"},
    },
    "required": ["city", "units"],
}


SCHEMAS: list[dict[str, Any]] = [
    BASE,
    {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 1, "exclusiveMaximum": 10},
            "xs": {"type": "array", "items": {"type": "number"}, "maxItems": 2},
        },
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {
            "s": {"type": "string", "pattern": "^a", "maxLength": 3},
            "u": {"anyOf": [{"type": "null"}, {"type": "boolean"}]},
            "c": {"const": 1},
        },
    },
    {
        "type": "object",
        "properties": {
            "o": {"type": "object", "required": ["k"], "additionalProperties": {"type": "string"}}
        },
    },
]
VALUES = [
    None,
    True,
    False,
    0,
    1,
    1.0,
    1.5,
    10,
    -3,
    "",
    "a",
    "abcd",
    "b",
    [],
    [1, 2],
    [1, 2, 3],
    ["x"],
    {},
    {"k": "v"},
    {"k": 1},
    "c",
    "f",
]


def _instances(schema: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    names = [*schema.get("properties", {}), "zzz"]
    out = []
    for _ in range(300):
        keys = rng.sample(names, rng.randint(0, len(names)))
        out.append({k: rng.choice(VALUES) for k in keys})
    return out


@pytest.mark.parametrize("schema", SCHEMAS)
def test_compiled_validator_agrees_with_jsonschema(schema: dict[str, Any]) -> None:
    rng = random.Random(7)
    compiled = CompiledValidator(schema)
    assert compiled._fast is not None
    reference = Draft202012Validator(schema)
    for instance in itertools.chain(_instances(schema, rng), [[], "x", None]):
        assert compiled.is_valid(instance) == reference.is_valid(instance), instance


def test_unsupported_keywords_fall_back_to_jsonschema() -> None:
    schema = {"type": "object", "patternProperties": {"^x": {"type": "integer"}}}
    compiled = CompiledValidator(schema)
    assert compiled._fast is None
    assert compiled.is_valid({"x1": 1}) and not compiled.is_valid({"x1": "a"})


def test_validators_are_cached_by_fingerprint_and_explain() -> None:
    reordered = {"required": ["units", "city"], "type": "object", "properties": BASE["properties"]}
    assert get_validator(BASE) is get_validator(reordered)
    reason = get_validator(BASE).explain({"city": 3, "units": "c"})
    assert reason is not None and "3 is not of type 'string'" in reason and "/city" in reason
    assert get_validator(BASE).explain({"city": "x", "units": "c"}) is None
