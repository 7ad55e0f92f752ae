"""Dialect normalisation: any schema a tool source writes -> valid Draft 2020-12 JSON Schema.

Public tool datasets write schemas in many dialects (``type: dict``, ``float``, ``list(str)``,
``String``, per-parameter ``required: true``, ``allowed_values``, flat parameter maps).
:func:`normalise_parameters` turns any of them into valid Draft 2020-12 JSON Schema in one pass and
returns notes saying what it changed; loaders store the notes in ``Tool.metadata["normalised"]``.
The pass knows the value type of every 2020-12 keyword, so its output passes ``check_schema``
without running the (slow) meta-schema validation per tool.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from fms_dgt.core.tools.schema._clean import JS_LITERAL, is_clean
from fms_dgt.core.tools.schema._keywords import (
    ANNOTATION_KEYS,
    BOOL_KEYWORDS,
    COUNT_KEYWORDS,
    JSON_TYPES,
    NUMBER_KEYWORDS,
    SCHEMA_KEYWORDS,
    SCHEMA_LIST_KEYWORDS,
    SCHEMA_MAP_KEYWORDS,
    STRING_KEYWORDS,
    json_type,
    type_from_name,
)
from fms_dgt.core.tools.schema.references import check_references

__all__ = [
    "ANNOTATION_KEYS",
    "JSON_TYPES",
    "SCHEMA_KEYWORDS",
    "SCHEMA_LIST_KEYWORDS",
    "SCHEMA_MAP_KEYWORDS",
    "is_flat_parameter_map",
    "json_type",
    "normalise_parameters",
    "normalise_schema",
    "type_from_name",
]


class _Normaliser:
    """One pass over a schema; collects notes about every change and every reference."""

    __slots__ = ("notes", "refs")

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.refs: list[tuple[str, Any]] = []

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


def _h_ref(
    n: _Normaliser, out: dict[str, Any], extra: dict[str, Any], key: str, value: Any, ptr: str
) -> None:
    n.refs.append((ptr, value))
    out[key] = value


def _h_pattern(
    n: _Normaliser, out: dict[str, Any], extra: dict[str, Any], key: str, value: Any, ptr: str
) -> None:
    literal = JS_LITERAL.fullmatch(value) if isinstance(value, str) else None
    if literal is not None:
        # PeerTube's usernames: "/^[a-z0-9._]+$/" asks for a slash before the start of the text,
        # which no value has; the slashes are JavaScript's regex literal, not the pattern.
        body = literal.group(1) if literal.group(1) is not None else literal.group(3)
        flags = literal.group(2) if literal.group(1) is not None else literal.group(4)
        inline = "".join(sorted(set(flags) & set("ims")))  # the flags that change a match
        value = f"(?{inline}){body}" if inline else body
        n.note(ptr, f"pattern written as a JavaScript regex literal: slashes removed, {value!r}")
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
    **dict.fromkeys(SCHEMA_MAP_KEYWORDS - {"properties"}, _h_schema_map),
    **dict.fromkeys(SCHEMA_KEYWORDS, _h_schema),
    **dict.fromkeys(SCHEMA_LIST_KEYWORDS, _h_schema_list),
    **dict.fromkeys(NUMBER_KEYWORDS, _h_number),
    **dict.fromkeys(COUNT_KEYWORDS, _h_count),
    **dict.fromkeys(BOOL_KEYWORDS, _h_bool),
    **dict.fromkeys(STRING_KEYWORDS, _h_string),
    "$ref": _h_ref,
    "$dynamicRef": _h_ref,
}


def normalise_schema(schema: Any, pointer: str = "") -> tuple[Any, list[str]]:
    """Normalise one schema (any position) to Draft 2020-12.

    Returns:
        ``(schema, notes)``, where each note reads ``<pointer>: <what changed>``.
    """
    if is_clean(schema):
        return schema, []
    normaliser = _Normaliser()
    # A fragment's references are its caller's to resolve (the OpenAPI compiler rewrites them).
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


#: Python's type names: a flat map typed so was written from a function's signature (API-Bank).
_PYTHON_TYPE = re.compile(r"(?:str|int|float|bool|list|dict|tuple)(?:\((?:str|int|float|bool|dict)\))?")
#: How such a map's descriptions mark a parameter the function does not need.
_OPTIONAL = re.compile(
    r"\boptional\b|\bonly (?:needed|required|used)\b|\bdefaults? (?:is|to|value)\b"
    r"|\bif (?:not )?(?:provided|given|specified)\b|\bcan be (?:empty|omitted|null|none)\b",
    re.IGNORECASE,
)


def _signature_required(flat: Mapping[str, Any]) -> list[str] | None:
    """The required parameters of a flat map typed with Python's type names and saying nothing of
    what is required: every one its description does not mark optional ("[Optional] The source
    language", "Only needed for the second call", "Default is auto"). API-Bank's tools take
    their parameters positionally, so ``HotelAvailability`` needs its destination and dates;
    None for any other map (JSON Schema's default stands: nothing required)."""
    specs = list(flat.values())
    if not all(isinstance(v, Mapping) and _PYTHON_TYPE.fullmatch(str(v.get("type"))) for v in specs):
        return None
    if any("required" in v or "optional" in v for v in specs):
        return None
    return [
        str(name) for name, spec in flat.items() if not _OPTIONAL.search(str(spec.get("description") or ""))
    ]


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

    Raises:
        InvalidSchemaError: a ``$ref`` leaves the schema or resolves to nothing in it.
    """
    if raw is None or (isinstance(raw, dict) and not raw):
        return {"type": "object", "properties": {}}, []
    if isinstance(raw, Mapping) and not isinstance(raw, dict):
        raw = json.loads(json.dumps(raw, default=dict))
    if type(raw) is dict and raw.get("type") == "object" and is_clean(raw):
        return raw, []
    normaliser = _Normaliser()
    if isinstance(raw, dict) and is_flat_parameter_map(raw):
        normaliser.note(pointer, "flat parameter map written as an object schema")
        required = _signature_required(raw)
        raw = {"type": "object", "properties": raw}
        if required:
            raw["required"] = required
            normaliser.note(
                pointer, "a Python signature's parameters are required unless described as optional"
            )
    schema = normaliser.schema(raw, pointer)
    if isinstance(schema, dict) and "type" not in schema:
        schema["type"] = "object"
        normaliser.note(pointer, "missing top-level type set to 'object'")
    check_references(schema, normaliser.refs)
    return schema, normaliser.notes
