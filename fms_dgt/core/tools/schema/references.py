"""References inside a tool's schema: each must stay in the schema and resolve there.

Tool schemas are untrusted. A ``$ref`` to a URL or a file would make a validator fetch it, so
:func:`check_references` refuses any reference that is not ``#...`` and any whose JSON pointer (or
anchor) reaches nothing in the schema.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from fms_dgt.errors import InvalidSchemaError

__all__ = ["check_references"]


def check_references(schema: Any, refs: list[tuple[str, Any]]) -> None:
    """Refuse a reference that leaves the schema or does not resolve inside it.

    Tool schemas are untrusted: a ``$ref`` to a URL or a file would make a validator fetch it.
    Only ``#...`` references whose JSON pointer reaches a node of ``schema`` are kept.

    Raises:
        InvalidSchemaError: naming the reference, where it is, and why.
    """
    for pointer, target in refs:
        if not isinstance(target, str) or not target.startswith("#"):
            raise InvalidSchemaError(
                f"reference {target!r} leaves the schema (remote and file references are never fetched)",
                pointer=pointer,
                fix=_LOCAL_ONLY,
            )
        if not _resolves(schema, target[1:]):
            raise InvalidSchemaError(
                f"reference {target!r} points to nothing in the schema", pointer=pointer, fix=_LOCAL_ONLY
            )


_LOCAL_ONLY = "Refer only inside the schema ('#/$defs/<name>'): copy the referenced schema under $defs"


def _resolves(schema: Any, pointer: str) -> bool:
    if pointer == "":
        return True
    if not pointer.startswith("/"):
        return _has_anchor(schema, pointer)
    node = schema
    for raw in pointer[1:].split("/"):
        part = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and len(part) < 10 and int(part) < len(node):
            node = node[int(part)]
        else:
            return False
    return True


def _has_anchor(schema: Any, anchor: str) -> bool:
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("$anchor") == anchor or node.get("$dynamicAnchor") == anchor:
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False
