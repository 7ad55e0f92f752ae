"""Semantic fingerprints of schemas.

:func:`fingerprint` hashes a canonical form that ignores what cannot change which arguments
validate: key order, the order of ``required``, ``enum`` and ``type`` lists, annotations
(``description``, ``title``, ``examples``, ``$comment``, ``default``, ``deprecated``, ``readOnly``,
``writeOnly``) and ``x-`` extension keys.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from fms_dgt.core.tools.schema._keywords import (
    ANNOTATION_KEYS,
    SCHEMA_KEYWORDS,
    SCHEMA_LIST_KEYWORDS,
    SCHEMA_MAP_KEYWORDS,
)

__all__ = ["canonical_form", "fingerprint"]


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
        if key in SCHEMA_MAP_KEYWORDS and isinstance(value, dict):
            if value:
                out[key] = {k: canonical_form(v) for k, v in value.items()}
        elif key in SCHEMA_KEYWORDS:
            out[key] = canonical_form(value)
        elif key in ("anyOf", "oneOf") and isinstance(value, list):
            out[key] = sorted((canonical_form(v) for v in value), key=_dump)
        elif key in SCHEMA_LIST_KEYWORDS and isinstance(value, list):
            out[key] = [canonical_form(v) for v in value]
        elif key in ("required", "enum") and isinstance(value, list):
            _canon_set(out, key, value)
        elif key == "type" and isinstance(value, list):
            if all(type(v) is str for v in value):
                kinds = sorted(set(value))
                out[key] = kinds[0] if len(kinds) == 1 else kinds
            else:  # a malformed list (``["string", 5]``): kept in a canonical order, for validation
                _canon_set(out, key, value)
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
