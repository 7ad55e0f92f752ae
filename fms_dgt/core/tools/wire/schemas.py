"""Schema shapes providers ask for: hygiene, OpenAI strict mode, Gemini's OpenAPI subset, bound arguments.

``hygienic_schema`` is what every consumer gets unless strict mode is asked for: no type lists (a
list with ``null`` becomes the other type plus ``nullable: true``, several other types become
``anyOf``) and ``required`` on every object schema; chat templates and evaluators that read
``type`` as one string (Hermes, BFCL) and checkers that index ``required`` then work on every tool.
``strict_schema`` closes every object (``additionalProperties: false``), requires every property and
makes optional ones nullable. ``gemini_schema`` inlines ``$ref`` (recursion cut at a depth and
marked), writes type lists as one type plus ``nullable``, turns ``const`` into ``enum`` and drops
keywords Gemini's schema subset lacks. Arguments bound at call time are removed from the schema a
model sees (:func:`input_schema`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from fms_dgt.core.tools.data_objects import Tool

__all__ = ["gemini_schema", "hygienic_schema", "input_schema", "strict_schema"]


def _without_bound(schema: dict[str, Any], bound: Iterable[str]) -> dict[str, Any]:
    names = set(bound)
    if not names:
        return schema
    out = dict(schema)
    out["properties"] = {k: v for k, v in schema.get("properties", {}).items() if k not in names}
    if "required" in schema:
        out["required"] = [r for r in schema["required"] if r not in names]
    return out


def _nullable(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema
    kind = schema.get("type")
    if isinstance(kind, str):
        return {**schema, "type": [kind, "null"]} if kind != "null" else schema
    if isinstance(kind, list):
        return schema if "null" in kind else {**schema, "type": [*kind, "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def strict_schema(schema: Any) -> Any:
    """OpenAI strict-mode shape: closed objects, all properties required, optional ones nullable."""
    if isinstance(schema, list):
        return [strict_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {
        k: strict_schema(v) if k in ("items", "anyOf", "allOf", "oneOf", "prefixItems") else v
        for k, v in schema.items()
    }
    if "$defs" in schema:
        out["$defs"] = {k: strict_schema(v) for k, v in schema["$defs"].items()}
    if schema.get("type") == "object" or "properties" in schema:
        props = schema.get("properties", {})
        required = set(schema.get("required", ()))
        out["properties"] = {
            k: strict_schema(v) if k in required else _nullable(strict_schema(v)) for k, v in props.items()
        }
        out["required"] = list(props)
        out["additionalProperties"] = False
    return out


_GEMINI_KEYS = frozenset(
    {
        "type",
        "format",
        "description",
        "nullable",
        "enum",
        "properties",
        "required",
        "items",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "anyOf",
        "title",
        "default",
        "propertyOrdering",
        "minProperties",
        "maxProperties",
    }
)
_GEMINI_MAX_DEPTH = 8


def gemini_schema(schema: Any, defs: Mapping[str, Any] | None = None, depth: int = 0) -> Any:
    """A schema in Gemini's OpenAPI subset: ``$ref`` inlined (recursion cut and marked), single
    types with ``nullable``, ``const`` as ``enum``, unsupported keywords dropped."""
    if not isinstance(schema, dict):
        return {} if schema is True or schema is None else schema
    defs = {**(defs or {}), **schema.get("$defs", {}), **schema.get("definitions", {})}
    if "$ref" in schema:
        return _gemini_ref(schema, defs, depth)
    if depth > _GEMINI_MAX_DEPTH:
        return {"type": "object", "description": "(nested schema cut at depth limit)"}
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties":
            out[key] = {k: gemini_schema(v, defs, depth + 1) for k, v in value.items()}
        elif key == "items":
            out[key] = gemini_schema(value, defs, depth + 1)
        elif key in ("anyOf", "oneOf"):
            out["anyOf"] = [gemini_schema(v, defs, depth + 1) for v in value]
        elif key == "const":
            out["enum"] = [value]
        elif key in _GEMINI_KEYS:
            out[key] = value
    return _gemini_type(out)


def _gemini_ref(schema: dict[str, Any], defs: Mapping[str, Any], depth: int) -> Any:
    ref = str(schema["$ref"])
    target = defs.get(ref.rsplit("/", 1)[-1]) if ref.startswith("#/") else None
    if target is None or depth > _GEMINI_MAX_DEPTH:
        return {"type": "object", "description": f"(recursive reference {ref} cut)"}
    merged = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    return gemini_schema(merged, defs, depth + 1)


def _gemini_type(out: dict[str, Any]) -> dict[str, Any]:
    kind = out.get("type")
    if isinstance(kind, list):
        others = [k for k in kind if k != "null"]
        if "null" in kind:
            out["nullable"] = True
        if len(others) == 1:
            out["type"] = others[0]
        else:
            del out["type"]
            if others:
                out["anyOf"] = [{"type": k} for k in others]
    if out.get("enum") is not None and out.get("type") != "string":
        # Gemini accepts enums of strings only.
        out["enum"] = [str(v) for v in out["enum"]]
        out["type"] = "string"
    return out


_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_SCHEMA_ONE = ("items", "additionalProperties", "not", "contains", "if", "then", "else", "propertyNames")


def hygienic_schema(schema: Any) -> Any:
    """A schema every consumer reads: single types (``nullable`` for null) and ``required`` on objects.

    Keywords that hold subschemas are walked; the meaning is kept for every consumer that knows
    ``nullable`` (OpenAPI, Gemini, chat templates), and validation of non-null values is unchanged.
    Strict-mode schemas keep their type lists instead (OpenAI strict mode has no ``nullable``).
    """
    if isinstance(schema, list):
        return [hygienic_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {k: hygienic_schema(v) for k, v in value.items()}
        elif key in _SCHEMA_LISTS or key in _SCHEMA_ONE:
            out[key] = hygienic_schema(value)
        else:
            out[key] = value
    if isinstance(out.get("type"), list):
        _single_type(out)
    if (out.get("type") == "object" or "properties" in out) and "required" not in out:
        out["required"] = []
    return out


def _single_type(out: dict[str, Any]) -> None:
    kinds = out.pop("type")
    others = [k for k in kinds if k != "null"]
    if "null" in kinds:
        out["nullable"] = True
    if len(others) == 1 or not others:
        out["type"] = others[0] if others else "null"
        return
    choice = {"anyOf": [{"type": k} for k in others]}
    if "anyOf" in out:
        # Both say what the value may be: keep both conditions.
        out["allOf"] = [*out.get("allOf", []), choice]
    else:
        out.update(choice)


def input_schema(tool: Tool, bindings: Mapping[str, Any] | None, strict: bool) -> dict[str, Any]:
    """The tool's input schema as a model sees it: bound arguments hidden, strict mode or hygiene."""
    # A JSON round trip copies plain JSON data several times faster than copy.deepcopy.
    schema = _without_bound(json.loads(json.dumps(tool.parameters)), (bindings or {}).keys())
    shaped: dict[str, Any] = strict_schema(schema) if strict else hygienic_schema(schema)
    return shaped
