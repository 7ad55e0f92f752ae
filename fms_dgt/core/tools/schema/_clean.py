"""Whether a schema is already clean Draft 2020-12 (the normaliser's fast path).

Most schemas in the wild are already valid Draft 2020-12. Checking that is several times cheaper
than rebuilding them with pointers and notes, so the normaliser only runs on schemas that need it
(and clean ones are used as they are, without a copy).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from typing import Any

from fms_dgt.core.tools.schema._keywords import (
    BOOL_KEYWORDS,
    COUNT_KEYWORDS,
    JSON_TYPES,
    NUMBER_KEYWORDS,
    SCHEMA_KEYWORDS,
    SCHEMA_LIST_KEYWORDS,
    SCHEMA_MAP_KEYWORDS,
    STRING_KEYWORDS,
)

__all__ = ["JS_LITERAL", "is_clean"]

_JSON_TYPE_SET = frozenset(JSON_TYPES)
# Keywords only dialects use: a schema holding one always goes through the normaliser.
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
    """A pattern the normaliser keeps as it is: one that compiles and is no JavaScript regex
    literal (``/^[a-z]+$/``, which the normaliser unwraps)."""
    if JS_LITERAL.fullmatch(pattern):
        return False
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


#: A regex written as JavaScript's literal: anchored inside the slashes (``/^[a-z]+$/``), or
#: with flags after them (PeerTube's ``/magnet:\?xt=urn:[a-z0-9]+:[a-z0-9]{32}/i``); a path
#: pattern such as ``/api/v1/`` is neither.
JS_LITERAL = re.compile(r"/(\^.*|.*\$)/([dgimsuy]*)|/(.+)/([dgimsuy]+)", re.DOTALL)


def _clean_required(value: Any) -> bool:
    return type(value) is list and all(type(v) is str for v in value) and len(set(value)) == len(value)


def _clean_schema_map(value: Any) -> bool:
    return type(value) is dict and all(is_clean(v) for v in value.values())


def _clean_schema_list(value: Any) -> bool:
    return type(value) is list and bool(value) and all(is_clean(v) for v in value)


_CLEAN_CHECKS: dict[str, Callable[[Any], bool]] = {
    "type": _clean_type,
    "required": _clean_required,
    "multipleOf": lambda v: _clean_number(v) and v > 0,
    "enum": lambda v: type(v) is list,
    "examples": lambda v: type(v) is list,
    "pattern": lambda v: type(v) is str and _compiles(v),
    **dict.fromkeys(SCHEMA_MAP_KEYWORDS, _clean_schema_map),
    **dict.fromkeys(SCHEMA_KEYWORDS, lambda v: is_clean(v)),
    "items": lambda v: type(v) is not list and is_clean(v),
    **dict.fromkeys(SCHEMA_LIST_KEYWORDS, _clean_schema_list),
    **dict.fromkeys(NUMBER_KEYWORDS, _clean_number),
    **dict.fromkeys(COUNT_KEYWORDS, lambda v: type(v) is int and v >= 0),
    **dict.fromkeys(STRING_KEYWORDS, lambda v: type(v) is str),
    **dict.fromkeys(BOOL_KEYWORDS, lambda v: type(v) is bool),
    # Rare or dialect-only keywords: always let the normaliser look at them. References too: the
    # normaliser checks that each stays inside the schema and resolves there.
    **dict.fromkeys((*_DIALECT_ONLY, "dependentRequired", "$ref", "$dynamicRef"), lambda v: False),
}


def is_clean(node: Any) -> bool:
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
                if not is_clean(child):
                    return False
        else:
            check = checks.get(key)
            if check is not None and not check(value):
                return False
    return True
