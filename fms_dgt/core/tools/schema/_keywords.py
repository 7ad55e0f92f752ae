"""Keyword tables and dialect type names shared by the normaliser and the fingerprint.

:mod:`fms_dgt.core.tools.schema.normalise` re-exports the public names; this module exists so the
normaliser's parts and the fingerprint can share the tables without importing each other.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "ANNOTATION_KEYS",
    "BOOL_KEYWORDS",
    "COUNT_KEYWORDS",
    "JSON_TYPES",
    "NUMBER_KEYWORDS",
    "SCHEMA_KEYWORDS",
    "SCHEMA_LIST_KEYWORDS",
    "SCHEMA_MAP_KEYWORDS",
    "STRING_KEYWORDS",
    "json_type",
    "type_from_name",
]

JSON_TYPES = ("string", "integer", "number", "boolean", "array", "object", "null")

# Lower-cased dialect type name -> JSON Schema type; None means "no type constraint".
_TYPE_ALIASES: dict[str, str | None] = {
    **{t: t for t in JSON_TYPES},
    **dict.fromkeys(
        (
            "str",
            "text",
            "char",
            "character",
            "varchar",
            "date",
            "datetime",
            "date-time",
            "time",
            "uuid",
            "email",
            "url",
            "uri",
            "bytes",
            "byte[]",
        ),
        "string",
    ),
    **dict.fromkeys(
        (
            "int",
            "long",
            "short",
            "byte",
            "int32",
            "int64",
            "bigint",
            "uint",
            "integer32",
            "integer64",
        ),
        "integer",
    ),
    **dict.fromkeys(("float", "double", "decimal", "real", "numeric", "float32", "float64"), "number"),
    **dict.fromkeys(("bool",), "boolean"),
    **dict.fromkeys(("list", "tuple", "arraylist", "set", "sequence", "collection", "vector"), "array"),
    **dict.fromkeys(("dict", "dictionary", "map", "hashmap", "record", "struct", "mapping"), "object"),
    **dict.fromkeys(("none", "nonetype", "void"), "null"),
    **dict.fromkeys(("any", "json", "mixed", "enum", "", "object|any", "unknown"), None),
}

_GENERIC = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*[\[(<]\s*(.*?)\s*[\])>]\s*$")
_LEADING_WORD = re.compile(r"^\s*([A-Za-z_-]+)")

#: Keywords whose value is one subschema.
SCHEMA_KEYWORDS = frozenset(
    {
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contentSchema",
    }
)
#: Keywords whose value maps names to subschemas.
SCHEMA_MAP_KEYWORDS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
#: Keywords whose value is a list of subschemas.
SCHEMA_LIST_KEYWORDS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})


def json_type(value: Any) -> str:
    """The JSON Schema type name of a JSON value (``integer`` for ints, never for booleans)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, (list, tuple)):
        return "array"
    return "object" if isinstance(value, Mapping) else "string"


#: Keywords whose value is a number (bounds).
NUMBER_KEYWORDS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
#: Keywords whose value is a non-negative integer (lengths and counts).
COUNT_KEYWORDS = frozenset(
    {
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "minContains",
        "maxContains",
    }
)
#: Keywords whose value is a boolean.
BOOL_KEYWORDS = frozenset({"uniqueItems", "deprecated", "readOnly", "writeOnly"})
#: Keywords whose value is a string.
STRING_KEYWORDS = frozenset(
    {
        "format",
        "title",
        "description",
        "$comment",
        "$id",
        "$anchor",
        "$ref",
        "contentEncoding",
        "contentMediaType",
        "$dynamicRef",
        "$dynamicAnchor",
    }
)
#: Keywords that annotate without changing which instances validate.
ANNOTATION_KEYS = frozenset(
    {
        "description",
        "title",
        "examples",
        "example",
        "$comment",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
    }
)


def type_from_name(name: str) -> tuple[dict[str, Any] | None, bool]:
    """Map a dialect type name to a JSON Schema fragment.

    Returns:
        ``(fragment, recognised)``: ``fragment`` is ``{"type": ...}`` possibly with ``items`` or
        ``additionalProperties``, or ``None`` for "no constraint"; ``recognised`` is False when the
        name was unknown and dropped.
    """
    key = name.strip().lower()
    if key in _TYPE_ALIASES:
        mapped = _TYPE_ALIASES[key]
        return ({"type": mapped} if mapped else None), True
    if "|" in key or " or " in key:
        return _union_from_name(re.split(r"\s*\|\s*|\s+or\s+", key))
    generic = _GENERIC.match(name)
    if generic:
        return _generic_from_name(generic.group(1).lower(), generic.group(2))
    word = _LEADING_WORD.match(name)
    if word and word.group(1).lower() in _TYPE_ALIASES and word.group(1).lower() != key:
        fragment, _ = type_from_name(word.group(1))
        return fragment, True
    return None, False


def _union_from_name(parts: list[str]) -> tuple[dict[str, Any] | None, bool]:
    types: list[str] = []
    for part in parts:
        fragment, known = type_from_name(part)
        if fragment is None:
            return None, known
        if fragment["type"] not in types:
            types.append(fragment["type"])
    return {"type": types[0] if len(types) == 1 else types}, True


def _generic_from_name(outer: str, inner: str) -> tuple[dict[str, Any] | None, bool]:
    if outer in ("optional",):
        fragment, known = type_from_name(inner)
        if fragment is None:
            return None, known
        return {**fragment, "type": [fragment["type"], "null"]}, known
    container = _TYPE_ALIASES.get(outer.rsplit(".", 1)[-1])
    if container == "array":
        item, _ = type_from_name(inner) if inner else (None, True)
        return ({"type": "array", "items": item} if item else {"type": "array"}), True
    if container == "object":
        value_name = inner.split(",", 1)[1] if "," in inner else ""
        value, _ = type_from_name(value_name) if value_name else (None, True)
        return ({"type": "object", "additionalProperties": value} if value else {"type": "object"}), True
    return type_from_name(outer) if outer in _TYPE_ALIASES else (None, False)
