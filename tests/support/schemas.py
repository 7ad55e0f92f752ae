"""Small JSON Schemas for tests that build tools inline."""

from __future__ import annotations

from typing import Any

from fms_dgt.core.tools.data_objects import Tool


def schema(**props: Any) -> dict[str, Any]:
    """An object schema of ``props``: a type name (``"string"``) or a whole property schema each."""
    return {
        "type": "object",
        "properties": {n: p if isinstance(p, dict) else {"type": p} for n, p in props.items()},
    }


def rest_tool(
    name: str,
    path: str,
    inputs: dict[str, Any],
    outputs: dict[str, Any] | None = None,
    *,
    namespace: str = "tube",
    tags: list[str] | None = None,
) -> Tool:
    """A tool as the REST loader makes it: its route (path parameters marked) and its tags."""
    arguments = {n: {"in": "path", "name": n} for n in inputs if "{" + n + "}" in path}
    metadata: dict[str, Any] = {
        "kind": "rest",
        "route": {"method": "GET", "path": path, "arguments": arguments},
    }
    if tags:
        metadata["tags"] = tags
    return Tool(
        name=name,
        namespace=namespace,
        description="",
        parameters=schema(**inputs),
        output_parameters=outputs or {},
        metadata=metadata,
    )
