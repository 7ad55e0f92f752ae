"""The validator the package used before jsonschema-rs: schemas compiled to Python closures.

Kept only as the baseline of ``bench_registry.py`` (it is not imported by the package). It checks
the common subset of JSON Schema (type, properties, required, additionalProperties, items, enum,
const, bounds, lengths, pattern, anyOf, allOf) with plain closures and hands anything else to
``jsonschema``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from fms_dgt.core.tools.schema import ANNOTATION_KEYS

__all__ = ["ClosureValidator"]

_NUMBER_KEYS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})

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


class ClosureValidator:
    """One schema compiled to closures, with ``jsonschema`` for what the closures do not cover."""

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

    @property
    def compiled(self) -> bool:
        """True when the closures cover the whole schema."""
        return self._fast is not None

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
