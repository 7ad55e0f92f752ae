"""Finding the operations of a spec: every ``(path, method)`` pair under ``paths``.

:func:`iter_operations` walks ``paths`` in document order (path-level ``$ref`` followed, OpenAPI
3.2's ``query`` method and ``additionalOperations`` included) and yields one :class:`Operation`
per pair; :class:`~fms_dgt.core.tools.openapi.converter.OperationConverter` turns each into a
tool's fields.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fms_dgt.core.tools.openapi.documents import DocumentStore, RefError, escape_pointer
from fms_dgt.errors import OperationError

__all__ = ["METHODS", "Operation", "OperationError", "iter_operations", "spec_version"]

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace", "query")


@dataclass(slots=True)
class Operation:
    """Where one operation sits in the spec.

    Attributes:
        path: the path template (the key under ``paths``).
        method: the method, lower case as written in the spec.
        node: the operation object.
        item: the path item holding it (for path-level parameters and servers).
        uri: the document the operation was read in (relative ``$ref`` values resolve against it).
        pointer: the JSON pointer of the operation in the root document.
    """

    path: str
    method: str
    node: dict[str, Any]
    item: dict[str, Any]
    uri: str
    pointer: str


def spec_version(root: Mapping[str, Any]) -> str | None:
    """``2.0``, ``3.0``, ``3.1``, ``3.2`` (major.minor) or None when the document is no OpenAPI spec."""
    if str(root.get("swagger", "")).startswith("2."):
        return "2.0"
    version = root.get("openapi")
    if isinstance(version, str) and re.match(r"^3\.[0-2](\.|$)", version):
        return version[:3]
    return None


def iter_operations(store: DocumentStore) -> Iterable[Operation | tuple[str, str]]:
    """Every operation under ``paths`` in document order; path-level ``$ref`` followed.

    A path item that cannot be read yields ``(pointer, reason)`` for the caller to report.
    """
    paths = store.root.get("paths") or {}
    for path, raw in paths.items():
        pointer = f"/paths/{escape_pointer(str(path))}"
        uri = store.root_uri
        item = raw
        if isinstance(raw, dict) and isinstance(raw.get("$ref"), str):
            try:
                target, item = store.resolve(raw["$ref"], uri)
            except RefError as exc:
                yield pointer, exc.reason
                continue
            uri = target.uri
        if not isinstance(item, dict):
            yield pointer, f"path item is a {type(item).__name__}, not an object"
            continue
        yield from _item_operations(str(path), item, uri, pointer)


def _item_operations(path: str, item: dict[str, Any], uri: str, pointer: str) -> Iterable[Operation]:
    for method in METHODS:
        node = item.get(method)
        if node is not None:
            yield Operation(path, method, node, item, uri, f"{pointer}/{method}")
    extra = item.get("additionalOperations")
    if isinstance(extra, dict):
        for method, node in extra.items():
            yield Operation(
                path, str(method).lower(), node, item, uri, f"{pointer}/additionalOperations/{method}"
            )
