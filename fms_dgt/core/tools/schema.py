"""JSON Schema handling for tools: dialect normalisation, semantic fingerprints, compiled validators.

**Normalisation.** Public tool datasets write schemas in many dialects (``type: dict``, ``float``,
``list(str)``, ``String``, per-parameter ``required: true``, ``allowed_values``, flat parameter maps).
:func:`normalise_parameters` turns any of them into valid Draft 2020-12 JSON Schema in one pass and
returns notes saying what it changed; loaders store the notes in ``Tool.metadata["normalised"]``.
The pass knows the value type of every 2020-12 keyword, so its output passes ``check_schema``
without running the (slow) meta-schema validation per tool.

**Fingerprint.** :func:`fingerprint` hashes a canonical form that ignores what cannot change which
arguments validate: key order, the order of ``required``, ``enum`` and ``type`` lists, annotations
(``description``, ``title``, ``examples``, ``$comment``, ``default``, ``deprecated``, ``readOnly``,
``writeOnly``) and ``x-`` extension keys.

**Validators.** :func:`get_validator` returns a :class:`CompiledValidator` cached by fingerprint. It
checks the common subset of JSON Schema with plain Python closures and falls back to ``jsonschema``
for anything else; explanations always come from ``jsonschema`` (``best_match``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

__all__ = [
    "SCHEMA_KEYWORDS",
    "SCHEMA_LIST_KEYWORDS",
    "SCHEMA_MAP_KEYWORDS",
    "CompiledValidator",
    "canonical_form",
    "fingerprint",
    "get_validator",
    "is_flat_parameter_map",
    "json_type",
    "normalise_parameters",
    "normalise_schema",
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
_SCHEMA_KEYS = SCHEMA_KEYWORDS
_SCHEMA_MAP_KEYS = SCHEMA_MAP_KEYWORDS
_SCHEMA_LIST_KEYS = SCHEMA_LIST_KEYWORDS


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


_NUMBER_KEYS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
_COUNT_KEYS = frozenset(
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
_BOOL_KEYS = frozenset({"uniqueItems", "deprecated", "readOnly", "writeOnly"})
_STRING_KEYS = frozenset(
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


class _Normaliser:
    """One pass over a schema; collects notes about every change."""

    __slots__ = ("notes",)

    def __init__(self) -> None:
        self.notes: list[str] = []

    def note(self, pointer: str, message: str) -> None:
        self.notes.append(f"{pointer or '/'}: {message}")

    def schema(self, node: Any, ptr: str) -> Any:
        if isinstance(node, bool):
            return node
        if isinstance(node, str):
            fragment, known = type_from_name(node)
            self.note(
                ptr,
                f"bare type name {node!r} written as a schema"
                + ("" if known else " (unrecognised: no type constraint)"),
            )
            return dict(fragment) if fragment else {}
        if not isinstance(node, dict):
            self.note(ptr, f"{type(node).__name__} value is not a schema: replaced by {{}}")
            return {}
        return self._object(node, ptr)

    def _object(self, node: Mapping[str, Any], ptr: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in node.items():
            handler = _HANDLERS.get(key)
            if handler is None:
                out[key] = value
            else:
                handler(self, out, extra, key, value, f"{ptr}/{_escape(key)}")
        if extra:
            self._finish(out, extra, ptr)
        return out

    def _finish(self, out: dict[str, Any], extra: dict[str, Any], ptr: str) -> None:
        for key in ("items", "additionalProperties"):
            if key in extra and key not in out:
                out[key] = extra[key]
        if extra.get("nullable"):
            _add_null(out)
        required = _merge_required(out, extra)
        if required is not None:
            if required:
                out["required"] = required
            else:
                out.pop("required", None)
        if "exclusive_bool" in extra:
            self._exclusive(out, extra["exclusive_bool"], ptr)

    def _exclusive(self, out: dict[str, Any], flags: dict[str, bool], ptr: str) -> None:
        for key, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            if flags.get(key) and bound in out:
                out[key] = out.pop(bound)
                self.note(ptr, f"boolean {key} turned into a numeric bound")


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _add_null(out: dict[str, Any]) -> None:
    kind = out.get("type")
    if isinstance(kind, str) and kind != "null":
        out["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        out["type"] = [*kind, "null"]
    if isinstance(out.get("enum"), list) and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]


def _merge_required(out: dict[str, Any], extra: dict[str, Any]) -> list[str] | None:
    listed = extra.get("required_list")
    flagged = extra.get("required_flags")
    optional = extra.get("optional")
    if listed is None and flagged is None and optional is None:
        return None
    flagged = flagged or {}
    names = [n for n in listed or [] if flagged.get(n, True)]
    for name, is_required in flagged.items():
        if is_required and name not in names:
            names.append(name)
    if optional is not None:
        if listed is None and not any(flagged.values()):
            names = [p for p in out.get("properties", {}) if p not in optional]
        names = [n for n in names if n not in optional]
    return names


Handler = Callable[[_Normaliser, dict[str, Any], dict[str, Any], str, Any, str], None]


def _h_type(
    n: _Normaliser, out: dict[str, Any], extra: dict[str, Any], key: str, value: Any, ptr: str
) -> None:
    if isinstance(value, str):
        if value in JSON_TYPES:
            out["type"] = value
            return
        fragment, known = type_from_name(value)
        _apply_type_fragment(n, out, extra, value, fragment, known, ptr)
    elif isinstance(value, list):
        _h_type_list(n, out, value, ptr)
    else:
        n.note(ptr, f"type {value!r} is not a type name: no type constraint")


def _apply_type_fragment(
    n: _Normaliser,
    out: dict[str, Any],
    extra: dict[str, Any],
    value: str,
    fragment: dict[str, Any] | None,
    known: bool,
    ptr: str,
) -> None:
    if fragment is None:
        n.note(
            ptr,
            f"type {value!r} " + ("means any value" if known else "is unrecognised") + ": no type constraint",
        )
        return
    out["type"] = fragment["type"]
    n.note(ptr, f"type {value!r} -> {fragment['type']!r}")
    for sub in ("items", "additionalProperties"):
        if sub in fragment:
            extra[sub] = fragment[sub]


def _h_type_list(n: _Normaliser, out: dict[str, Any], value: list[Any], ptr: str) -> None:
    types: list[str] = []
    for item in value:
        fragment, _ = type_from_name(item) if isinstance(item, str) else (None, False)
        if fragment is None:
            n.note(ptr, f"type list {value!r} admits any value: no type constraint")
            return
        if isinstance(fragment["type"], str) and fragment["type"] not in types:
            types.append(fragment["type"])
    if types != value:
        n.note(ptr, f"type {value!r} -> {types!r}")
    if types:
        out["type"] = types[0] if len(types) == 1 else types


def _h_properties(
    n: _Normaliser, out: dict[str, Any], extra: dict[str, Any], key: str, value: Any, ptr: str
) -> None:
    if isinstance(value, list):
        value = _properties_from_list(n, value, ptr)
    if not isinstance(value, dict):
        n.note(ptr, f"properties is a {type(value).__name__}, not a map: dropped")
        return
    props: dict[str, Any] = {}
    flags: dict[str, bool] = {}
    for name, child in value.items():
        child_ptr = f"{ptr}/{_escape(str(name))}"
        if isinstance(child, dict):
            child = _pop_required_flags(n, child, str(name), flags, child_ptr)
        props[str(name)] = n.schema(child, child_ptr)
    out["properties"] = props
    if flags:
        extra["required_flags"] = flags


def _pop_required_flags(
    n: _Normaliser, child: Mapping[str, Any], name: str, flags: dict[str, bool], ptr: str
) -> Mapping[str, Any]:
    required = child.get("required")
    optional = child.get("optional")
    if not isinstance(required, bool) and not isinstance(optional, bool):
        return child
    child = dict(child)
    if isinstance(required, bool):
        del child["required"]
        flags[name] = required
        n.note(ptr, f"per-parameter required: {str(required).lower()} moved to the parent's list")
    if isinstance(optional, bool):
        del child["optional"]
        if optional:
            flags[name] = False
        n.note(ptr, f"per-parameter optional: {str(optional).lower()} folded into required")
    return child


def _properties_from_list(n: _Normaliser, items: list[Any], ptr: str) -> dict[str, Any]:
    props: dict[str, Any] = {}
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            props[item["name"]] = {k: v for k, v in item.items() if k != "name"}
    n.note(ptr, "list of named parameters turned into a properties map")
    return props


def _h_schema_map(
    n: _Normaliser, out: dict[str, Any], extra: dict[str, Any], key: str, value: Any, ptr: str
) -> None:
    if not isinstance(value, dict):
        n.note(ptr, f"{key} is not a map of schemas: dropped")
        return
    out[key] = {str(k): n.schema(v, f"{ptr}/{_escape(str(k))}") for k, v in value.items()}


def _h_schema(
    n: _Normaliser, out: dict[str, Any], extra: dict[str, Any], key: str, value: Any, ptr: str
) -> None:
    if key == "items" and isinstance(value, list):
        out["prefixItems"] = [n.schema(v, f"{ptr}/{i}") for i, v in enumerate(value)]
        n.note(ptr, "array form of items written as prefixItems (Draft 2020-12)")
        return
    out[key] = n.schema(value, ptr)


def _h_schema_list(
    n: _Normaliser, out: dict[str, Any], extra: dict[str, Any], key: str, value: Any, ptr: str
) -> None:
    if isinstance(value, dict):
        value = [value]
        n.note(ptr, f"single schema under {key} wrapped in a list")
    if not isinstance(value, list) or not value:
        n.note(ptr, f"{key} must be a non-empty list of schemas: dropped")
        return
    out[key] = [n.schema(v, f"{ptr}/{i}") for i, v in enumerate(value)]


def _h_required(
    n: _Normaliser, out: dict[str, Any], extra: dict[str, Any], key: str, value: Any, ptr: str
) -> None:
    if isinstance(value, str):
        value = [value]
        n.note(ptr, "required given as a string: made a list")
    if isinstance(value, list):
        names = [v for v in dict.fromkeys(value) if isinstance(v, str)]
        if len(names) != len(value):
            n.note(ptr, "required list had duplicates or non-strings: removed")
        extra["required_list"] = names
        return
    n.note(ptr, f"required: {json.dumps(value)} is not a list of names: dropped")


def _h_optional(
    n: _Normaliser, out: dict[str, Any], extra: dict[str, Any], key: str, value: Any, ptr: str
) -> None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        extra["optional"] = set(value)
        n.note(ptr, "optional list folded into required")
    else:
        out[key] = value


def _h_enum(
    n: _Normaliser, out: dict[str, Any], extra: dict[str, Any], key: str, value: Any, ptr: str
) -> None:
    if key == "allowed_values":
        if "enum" in out:
            out[key] = value
            return
        n.note(ptr, "allowed_values written as enum")
    if not isinstance(value, list):
        value = [value]
        n.note(ptr, "enum given as a single value: made a list")
    out["enum"] = value


def _h_number(
    n: _Normaliser, out: dict[str, Any], extra: dict[str, Any], key: str, value: Any, ptr: str
) -> None:
    if isinstance(value, bool) and key.startswith("exclusive"):
        extra.setdefault("exclusive_bool", {})[key] = value
        return
    number = _as_number(value)
    if number is None or (key == "multipleOf" and number <= 0):
        n.note(ptr, f"{key}: {value!r} is not a valid number: dropped")
        return
    if number is not value:
        n.note(ptr, f"{key}: {value!r} -> {number!r}")
    out[key] = number


def _h_count(
    n: _Normaliser, out: dict[str, Any], extra: dict[str, Any], key: str, value: Any, ptr: str
) -> None:
    number = _as_number(value)
    if number is None or number < 0 or number != int(number):
        n.note(ptr, f"{key}: {value!r} is not a non-negative integer: dropped")
        return
    if number is not value or not isinstance(value, int):
        n.note(ptr, f"{key}: {value!r} -> {int(number)}")
    out[key] = int(number)


def _as_number(value: Any) -> int | float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        if not math.isfinite(number):
            return None
        return int(number) if number.is_integer() and "." not in value else number
    return None


def _h_bool(
    n: _Normaliser, out: dict[str, Any], extra: dict[str, Any], key: str, value: Any, ptr: str
) -> None:
    if isinstance(value, bool):
        out[key] = value
    elif isinstance(value, str) and value.lower() in ("true", "false"):
        out[key] = value.lower() == "true"
        n.note(ptr, f"{key}: {value!r} -> {out[key]}")
    else:
        n.note(ptr, f"{key}: {value!r} is not a boolean: dropped")


def _h_string(
    n: _Normaliser, out: dict[str, Any], extra: dict[str, Any], key: str, value: Any, ptr: str
) -> None:
    if isinstance(value, str):
        out[key] = value
    elif key in ("description", "title", "$comment") and value is not None:
        out[key] = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        n.note(ptr, f"{key} was not a string: written as JSON text")
    else:
        n.note(ptr, f"{key}: {value!r} is not a string: dropped")


def _h_pattern(
    n: _Normaliser, out: dict[str, Any], extra: dict[str, Any], key: str, value: Any, ptr: str
) -> None:
    try:
        re.compile(value)
    except (re.error, TypeError):
        n.note(ptr, f"pattern {value!r} is not a valid regular expression: dropped")
        return
    out[key] = value


def _h_examples(
    n: _Normaliser, out: dict[str, Any], extra: dict[str, Any], key: str, value: Any, ptr: str
) -> None:
    if not isinstance(value, list):
        value = [value]
        n.note(ptr, "examples given as a single value: made a list")
    out[key] = value


def _h_nullable(
    n: _Normaliser, out: dict[str, Any], extra: dict[str, Any], key: str, value: Any, ptr: str
) -> None:
    if value is True:
        extra["nullable"] = True
        n.note(ptr, "nullable: true written as a null type")


def _h_dialect(
    n: _Normaliser, out: dict[str, Any], extra: dict[str, Any], key: str, value: Any, ptr: str
) -> None:
    n.note(ptr, f"$schema {value!r} removed: schemas are read as Draft 2020-12")


def _h_dependent_required(
    n: _Normaliser, out: dict[str, Any], extra: dict[str, Any], key: str, value: Any, ptr: str
) -> None:
    if isinstance(value, dict) and all(
        isinstance(v, list) and all(isinstance(s, str) for s in v) for v in value.values()
    ):
        out[key] = {k: list(dict.fromkeys(v)) for k, v in value.items()}
    else:
        n.note(ptr, f"{key} is not a map of name lists: dropped")


def _h_dependencies(
    n: _Normaliser, out: dict[str, Any], extra: dict[str, Any], key: str, value: Any, ptr: str
) -> None:
    if not isinstance(value, dict):
        n.note(ptr, "dependencies is not a map: dropped")
        return
    names = {k: v for k, v in value.items() if isinstance(v, list)}
    schemas = {k: v for k, v in value.items() if not isinstance(v, list)}
    if names:
        _h_dependent_required(n, out, extra, "dependentRequired", names, ptr)
    if schemas:
        _h_schema_map(n, out, extra, "dependentSchemas", schemas, ptr)
    n.note(ptr, "draft-07 dependencies split into dependentRequired/dependentSchemas")


_HANDLERS: dict[str, Handler] = {
    "type": _h_type,
    "properties": _h_properties,
    "required": _h_required,
    "optional": _h_optional,
    "enum": _h_enum,
    "allowed_values": _h_enum,
    "multipleOf": _h_number,
    "pattern": _h_pattern,
    "examples": _h_examples,
    "nullable": _h_nullable,
    "$schema": _h_dialect,
    "dependentRequired": _h_dependent_required,
    "dependencies": _h_dependencies,
    **dict.fromkeys(_SCHEMA_MAP_KEYS - {"properties"}, _h_schema_map),
    **dict.fromkeys(_SCHEMA_KEYS, _h_schema),
    **dict.fromkeys(_SCHEMA_LIST_KEYS, _h_schema_list),
    **dict.fromkeys(_NUMBER_KEYS, _h_number),
    **dict.fromkeys(_COUNT_KEYS, _h_count),
    **dict.fromkeys(_BOOL_KEYS, _h_bool),
    **dict.fromkeys(_STRING_KEYS, _h_string),
}


# ---------------------------------------------------------------- fast path for clean schemas
#
# Most schemas in the wild are already valid Draft 2020-12. Checking that is several times cheaper
# than rebuilding them with pointers and notes, so the normaliser only runs on schemas that need it
# (and clean ones are used as they are, without a copy).

_JSON_TYPE_SET = frozenset(JSON_TYPES)
_DIALECT_ONLY = frozenset({"optional", "allowed_values", "nullable", "$schema", "dependencies"})


def _clean_type(value: Any) -> bool:
    if type(value) is str:
        return value in _JSON_TYPE_SET
    return (
        type(value) is list
        and len(set(value)) == len(value)
        and all(type(v) is str and v in _JSON_TYPE_SET for v in value)
    )


def _clean_number(value: Any) -> bool:
    return (type(value) is int) or (type(value) is float and math.isfinite(value))


@functools.lru_cache(maxsize=4096)
def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


def _clean_required(value: Any) -> bool:
    return type(value) is list and all(type(v) is str for v in value) and len(set(value)) == len(value)


def _clean_schema_map(value: Any) -> bool:
    return type(value) is dict and all(_clean(v) for v in value.values())


def _clean_schema_list(value: Any) -> bool:
    return type(value) is list and bool(value) and all(_clean(v) for v in value)


_CLEAN_CHECKS: dict[str, Callable[[Any], bool]] = {
    "type": _clean_type,
    "required": _clean_required,
    "multipleOf": lambda v: _clean_number(v) and v > 0,
    "enum": lambda v: type(v) is list,
    "examples": lambda v: type(v) is list,
    "pattern": lambda v: type(v) is str and _compiles(v),
    **dict.fromkeys(_SCHEMA_MAP_KEYS, _clean_schema_map),
    **dict.fromkeys(_SCHEMA_KEYS, lambda v: _clean(v)),
    "items": lambda v: type(v) is not list and _clean(v),
    **dict.fromkeys(_SCHEMA_LIST_KEYS, _clean_schema_list),
    **dict.fromkeys(_NUMBER_KEYS, _clean_number),
    **dict.fromkeys(_COUNT_KEYS, lambda v: type(v) is int and v >= 0),
    **dict.fromkeys(_STRING_KEYS, lambda v: type(v) is str),
    **dict.fromkeys(_BOOL_KEYS, lambda v: type(v) is bool),
    # Rare or dialect-only keywords: always let the normaliser look at them.
    **dict.fromkeys((*_DIALECT_ONLY, "dependentRequired"), lambda v: False),
}


def _clean(node: Any) -> bool:
    """True when ``node`` is already a valid Draft 2020-12 schema the normaliser would not change."""
    if type(node) is not dict:
        return type(node) is bool
    checks = _CLEAN_CHECKS
    for key, value in node.items():
        # The two most common keywords are checked inline: this runs once per schema node.
        if key == "description" or key == "title":
            if type(value) is not str:
                return False
        elif key == "type" and type(value) is str:
            if value not in _JSON_TYPE_SET:
                return False
        elif key == "properties" and type(value) is dict:
            for child in value.values():
                if not _clean(child):
                    return False
        else:
            check = checks.get(key)
            if check is not None and not check(value):
                return False
    return True


def normalise_schema(schema: Any, pointer: str = "") -> tuple[Any, list[str]]:
    """Normalise one schema (any position) to Draft 2020-12.

    Returns:
        ``(schema, notes)``, where each note reads ``<pointer>: <what changed>``.
    """
    if _clean(schema):
        return schema, []
    normaliser = _Normaliser()
    return normaliser.schema(schema, pointer), normaliser.notes


def is_flat_parameter_map(value: Mapping[str, Any]) -> bool:
    """True when ``value`` is a ``{name: {type, description, required}}`` map, not a schema."""
    if not value:
        return False
    kind = value.get("type")
    if isinstance(kind, (str, list)):
        return False
    props = value.get("properties")
    if (
        isinstance(props, dict)
        and all(isinstance(v, dict) for v in props.values())
        and (not props or not any(isinstance(v, str) for v in props.values()))
        and _props_look_like_schemas(props)
    ):
        return False
    if any(isinstance(value.get(k), list) for k in ("anyOf", "oneOf", "allOf")) or "$ref" in value:
        return False
    return all(isinstance(v, (dict, str)) for v in value.values())


def _props_look_like_schemas(props: Mapping[str, Any]) -> bool:
    # A properties map's values are schemas; a flat map that happens to have a parameter called
    # "properties" has a single parameter spec there instead (its "type" is a string).
    return not isinstance(props.get("type"), str)


def normalise_parameters(raw: Any, pointer: str = "") -> tuple[dict[str, Any], list[str]]:
    """Normalise a tool's ``parameters`` (or ``output_parameters``) to an object schema.

    Accepts a JSON Schema in any dialect, a flat ``{name: {type, description, required}}`` map, a
    ``{name: "type name"}`` map, or nothing (``None``/``{}``: no arguments).

    Returns:
        ``(schema, notes)``. ``schema["type"]`` is ``"object"`` unless the input declared another
        type, which the caller reports.
    """
    if raw is None or (isinstance(raw, dict) and not raw):
        return {"type": "object", "properties": {}}, []
    if isinstance(raw, Mapping) and not isinstance(raw, dict):
        raw = json.loads(json.dumps(raw, default=dict))
    if type(raw) is dict and raw.get("type") == "object" and _clean(raw):
        return raw, []
    normaliser = _Normaliser()
    if isinstance(raw, dict) and is_flat_parameter_map(raw):
        normaliser.note(pointer, "flat parameter map written as an object schema")
        raw = {"type": "object", "properties": raw}
    schema = normaliser.schema(raw, pointer)
    if isinstance(schema, dict) and "type" not in schema:
        schema["type"] = "object"
        normaliser.note(pointer, "missing top-level type set to 'object'")
    return schema, normaliser.notes


# --------------------------------------------------------------------------- fingerprints


def canonical_form(schema: Any) -> Any:
    """The part of a schema that decides which instances validate, in a canonical shape."""
    if isinstance(schema, dict):
        return _canon_schema(schema)
    return _canon_value(schema)


def _canon_schema(node: Mapping[str, Any]) -> Any:
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ANNOTATION_KEYS or key.startswith("x-"):
            continue
        if key in _SCHEMA_MAP_KEYS and isinstance(value, dict):
            if value:
                out[key] = {k: canonical_form(v) for k, v in value.items()}
        elif key in _SCHEMA_KEYS:
            out[key] = canonical_form(value)
        elif key in ("anyOf", "oneOf") and isinstance(value, list):
            out[key] = sorted((canonical_form(v) for v in value), key=_dump)
        elif key in _SCHEMA_LIST_KEYS and isinstance(value, list):
            out[key] = [canonical_form(v) for v in value]
        elif key in ("required", "enum") and isinstance(value, list):
            _canon_set(out, key, value)
        elif key == "type" and isinstance(value, list):
            kinds = sorted(set(value))
            out[key] = kinds[0] if len(kinds) == 1 else kinds
        else:
            out[key] = _canon_value(value)
    return out


def _canon_set(out: dict[str, Any], key: str, value: list[Any]) -> None:
    if all(type(v) is str for v in value):
        if value or key != "required":
            out[key] = sorted(set(value))
        return
    unique = {_dump(_canon_value(v)): v for v in value}
    if key == "required" and not unique:
        return
    out[key] = [_canon_value(unique[k]) for k in sorted(unique)]


def _canon_value(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _canon_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_canon_value(v) for v in value]
    return value


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def fingerprint(schema: Any) -> str:
    """Semantic fingerprint of a schema: 32 hex digits of SHA-256 over :func:`canonical_form`."""
    return hashlib.sha256(_dump(canonical_form(schema)).encode()).hexdigest()[:32]


# --------------------------------------------------------------------------- validators

Check = Callable[[Any], bool]

_PY_TYPES: dict[str, Check] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())
    ),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}

_FAST_KEYS = (
    frozenset(
        {
            "type",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "enum",
            "const",
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "minLength",
            "maxLength",
            "minItems",
            "maxItems",
            "pattern",
            "anyOf",
            "allOf",
            "format",
        }
    )
    | ANNOTATION_KEYS
)


class _Unsupported(Exception):
    """The fast compiler does not handle this schema; use jsonschema."""


def _json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and bool(a == b)


def _compile(schema: Any) -> Check:
    if schema is True or schema == {}:
        return lambda v: True
    if schema is False:
        return lambda v: False
    if not isinstance(schema, dict) or any(k not in _FAST_KEYS and not k.startswith("x-") for k in schema):
        raise _Unsupported
    checks = [c for c in _compile_parts(schema) if c is not None]
    if len(checks) == 1:
        return checks[0]
    return lambda v: all(check(v) for check in checks)


def _compile_parts(schema: Mapping[str, Any]) -> Iterable[Check | None]:
    yield _compile_type(schema.get("type"))
    if "properties" in schema or "required" in schema or "additionalProperties" in schema:
        yield _compile_object(schema)
    if "items" in schema or "minItems" in schema or "maxItems" in schema:
        yield _compile_array(schema)
    yield _compile_string(schema)
    yield _compile_number(schema)
    if "enum" in schema:
        options = list(schema["enum"])
        yield lambda v: any(_json_equal(v, o) for o in options)
    if "const" in schema:
        const = schema["const"]
        yield lambda v: _json_equal(v, const)
    if "anyOf" in schema:
        alts = [_compile(s) for s in schema["anyOf"]]
        yield lambda v: any(a(v) for a in alts)
    if "allOf" in schema:
        parts = [_compile(s) for s in schema["allOf"]]
        yield lambda v: all(p(v) for p in parts)


def _compile_type(kind: Any) -> Check | None:
    if kind is None:
        return None
    if isinstance(kind, str):
        return _PY_TYPES[kind]
    checks = [_PY_TYPES[k] for k in kind]
    return lambda v: any(c(v) for c in checks)


def _compile_object(schema: Mapping[str, Any]) -> Check:
    props = {k: _compile(v) for k, v in schema.get("properties", {}).items()}
    required = tuple(schema.get("required", ()))
    extra_schema = schema.get("additionalProperties", True)
    extra = None if extra_schema is True else _compile(extra_schema)

    def check(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        for name in required:
            if name not in value:
                return False
        for name, item in value.items():
            prop = props.get(name)
            if prop is not None:
                if not prop(item):
                    return False
            elif extra is not None and not extra(item):
                return False
        return True

    return check


def _compile_array(schema: Mapping[str, Any]) -> Check:
    item = _compile(schema.get("items", True))
    low = schema.get("minItems", 0)
    high = schema.get("maxItems")

    def check(value: Any) -> bool:
        if not isinstance(value, list):
            return True
        if len(value) < low or (high is not None and len(value) > high):
            return False
        return all(item(v) for v in value)

    return check


def _compile_string(schema: Mapping[str, Any]) -> Check | None:
    low = schema.get("minLength", 0)
    high = schema.get("maxLength")
    pattern = re.compile(schema["pattern"]) if "pattern" in schema else None
    if not low and high is None and pattern is None:
        return None

    def check(value: Any) -> bool:
        if not isinstance(value, str):
            return True
        if len(value) < low or (high is not None and len(value) > high):
            return False
        return pattern is None or pattern.search(value) is not None

    return check


def _compile_number(schema: Mapping[str, Any]) -> Check | None:
    bounds = [(k, schema[k]) for k in sorted(_NUMBER_KEYS) if k in schema]
    if not bounds:
        return None
    tests = {
        "minimum": lambda v, b: v >= b,
        "maximum": lambda v, b: v <= b,
        "exclusiveMinimum": lambda v, b: v > b,
        "exclusiveMaximum": lambda v, b: v < b,
    }

    def check(value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return True
        return all(tests[k](value, b) for k, b in bounds)

    return check


class CompiledValidator:
    """A reusable validator for one schema.

    ``is_valid`` runs a closure compiled from the schema when the schema only uses common keywords
    (type, properties, required, additionalProperties, items, enum, const, bounds, lengths,
    pattern, anyOf, allOf) and ``jsonschema`` otherwise; ``explain`` always uses ``jsonschema``.
    """

    __slots__ = ("_fast", "_full", "schema")

    def __init__(self, schema: Mapping[str, Any]):
        self.schema = schema
        self._full: Draft202012Validator | None = None
        try:
            self._fast: Check | None = _compile(schema)
        except (_Unsupported, KeyError, TypeError, re.error):
            self._fast = None

    @property
    def full(self) -> Draft202012Validator:
        """The ``jsonschema`` validator (built on first use)."""
        if self._full is None:
            self._full = Draft202012Validator(self.schema)
        return self._full

    def is_valid(self, instance: Any) -> bool:
        """True when ``instance`` validates."""
        if self._fast is not None:
            return self._fast(instance)
        return bool(self.full.is_valid(instance))

    def explain(self, instance: Any) -> str | None:
        """Why ``instance`` does not validate (the best match), or None when it does."""
        error = best_match(self.full.iter_errors(instance))
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path)
        return f"{error.message} (at /{where})" if where else error.message


_VALIDATORS: dict[str, CompiledValidator] = {}
_VALIDATORS_LOCK = threading.Lock()


def get_validator(schema: Mapping[str, Any], fp: str | None = None) -> CompiledValidator:
    """The cached :class:`CompiledValidator` of ``schema`` (keyed by its fingerprint)."""
    key = fp or fingerprint(schema)
    validator = _VALIDATORS.get(key)
    if validator is None:
        with _VALIDATORS_LOCK:
            validator = _VALIDATORS.get(key)
            if validator is None:
                validator = CompiledValidator(schema)
                _VALIDATORS[key] = validator
    return validator
