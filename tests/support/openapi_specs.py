"""Helpers shared by the OpenAPI tests: spec locations, loading, schema checks, corpus walking."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.loaders.rest import RESTToolLoader
from fms_dgt.core.tools.openapi import Route, parse_text, route_of

REPO = Path(__file__).resolve().parents[2]
REST = REPO / "tests" / "data" / "rest"
PETSTORE = REPO / "data" / "rest" / "petstore.yaml"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace", "query")


def load(spec: Path | str, **kwargs: Any) -> tuple[dict[str, Tool], RESTToolLoader]:
    """The tools of a spec by name, and the loader (for its report)."""
    loader = RESTToolLoader(str(spec), **kwargs)
    return {t.name: t for t in loader.load()}, loader


def routes(spec: Path | str, **kwargs: Any) -> dict[str, Route]:
    """The checked routes of a spec's tools, by tool name."""
    tools, _ = load(spec, **kwargs)
    return {name: route_of(tool) for name, tool in tools.items()}


def check_schemas(tools: list[Tool]) -> None:
    """Every parameters / output_parameters schema passes the Draft 2020-12 meta-schema.

    The meta-schema checks each subschema independently, so checking every distinct ``$defs``
    entry once (tools of one load share them) plus each distinct schema without its ``$defs``
    is the same check, only much faster on large specs.
    """
    seen: set[str] = set()
    for tool in tools:
        for schema in (tool.parameters, tool.output_parameters):
            parts = [{k: v for k, v in schema.items() if k != "$defs"}, *schema.get("$defs", {}).values()]
            for part in parts:
                key = json.dumps(part, sort_keys=True)
                if key not in seen:
                    seen.add(key)
                    Draft202012Validator.check_schema(part)


def count_operations(spec: Path) -> int:
    """Operations counted independently: (path, method) pairs, path-level $ref followed."""
    root = parse_text(spec.read_text(encoding="utf-8"), str(spec))
    total = 0
    for item in (root.get("paths") or {}).values():
        if isinstance(item, dict) and isinstance(item.get("$ref"), str):
            ref_file, _, pointer = item["$ref"].partition("#")
            item = (
                parse_text((spec.parent / ref_file).read_text(encoding="utf-8"), ref_file)
                if ref_file
                else root
            )
            for token in [t for t in pointer.split("/") if t]:
                item = item[token.replace("~1", "/").replace("~0", "~")]
        total += sum(1 for method in METHODS if method in item)
        total += len(item.get("additionalOperations") or {})
    return total


def deep_spec(tmp_path: Path, depth: int) -> Path:
    """A JSON spec whose ``/deep`` response schema nests ``depth`` arrays; ``/fine`` is ordinary."""
    schema = '{"type": "array", "items": ' * depth + '{"type": "string"}' + "}" * depth
    deep_op = '{"responses": {"200": {"description": "x", "content": {"application/json": {"schema": %s}}}}}'
    text = (
        '{"openapi": "3.0.0", "info": {"title": "t", "version": "1"}, "paths": {"/deep": {"get": '
        + deep_op % schema
        + '}, "/fine": {"get": {"responses": {"200": {"description": "ok"}}}}}}'
    )
    path = tmp_path / "deep.json"
    path.write_text(text)
    return path


def write_spec(
    folder: Path, paths: dict[str, Any], components: dict[str, Any] | None = None, name: str = "spec.json"
) -> Path:
    """An OpenAPI 3.0 spec of ``paths`` (and ``components``) written as JSON in ``folder``."""
    spec = folder / name
    head = {"openapi": "3.0.3", "info": {"title": "t", "version": "1"}}
    spec.write_text(json.dumps({**head, "paths": paths, "components": components or {}}), encoding="utf-8")
    return spec


def operation(
    op_id: str,
    params: Sequence[str | dict[str, Any]] = (),
    result: dict[str, Any] | None = None,
    links: Any = None,
    method: str = "get",
) -> dict[str, Any]:
    """A path item of one operation: ``params`` are path parameter names (strings) or parameter
    objects, ``result`` the 200 response's JSON schema and ``links`` its links (``None``: none)."""
    response: dict[str, Any] = {"description": "ok"}
    if result is not None:
        response["content"] = {"application/json": {"schema": result}}
    if links is not None:
        response["links"] = links
    parameters = [
        p
        if isinstance(p, dict)
        else {"name": p, "in": "path", "required": True, "schema": {"type": "string"}}
        for p in params
    ]
    return {method: {"operationId": op_id, "parameters": parameters, "responses": {"200": response}}}
