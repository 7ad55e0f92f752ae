"""Tests for fms_dgt/core/tools/enrichments/_dataflow_links.py: edges a spec's response links declare."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fms_dgt.core.tools.enrichments._dataflow_links import pointer_steps
from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment
from fms_dgt.core.tools.enrichments.dataflow_view import explain
from fms_dgt.core.tools.loaders.rest import RESTToolLoader
from fms_dgt.core.tools.registry import ToolRegistry


def _get(
    op_id: str, path_params: tuple[str, ...], result: dict[str, Any], links: Any = None
) -> dict[str, Any]:
    response: dict[str, Any] = {"description": "ok", "content": {"application/json": {"schema": result}}}
    if links:
        response["links"] = links
    return {
        "get": {
            "operationId": op_id,
            "parameters": [
                {"name": p, "in": "path", "required": True, "schema": {"type": "string"}} for p in path_params
            ],
            "responses": {"200": response},
        }
    }


def _spec(tmp_path: Path, crowd: int) -> Path:
    """A PR's ``id`` linked to ``pid`` of the merge, among ``crowd`` operations taking a ``pull_id``."""
    pull = {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "author": {"type": "object", "properties": {"name": {"type": "string"}}},
        },
    }
    repos = {"type": "array", "items": {"type": "object", "properties": {"slug": {"type": "string"}}}}
    paths: dict[str, Any] = {
        "/pulls/{pull_id}": _get(
            "getPull",
            ("pull_id",),
            pull,
            {"Merge": {"operationId": "merge", "parameters": {"path.pid": "$response.body#/id"}}},
        ),
        "/merge/{pid}": _get("merge", ("pid",), {"type": "object"}),
        # A pointer into a list result written without the item step (the OpenAPI link example's way).
        "/repos": _get(
            "listRepos",
            (),
            repos,
            {"One": {"operationId": "getRepo", "parameters": {"code": "$response.body#/slug"}}},
        ),
        "/repo/{code}": _get("getRepo", ("code",), {"type": "object"}),
    }
    for n in range(crowd):
        paths[f"/pulls/{{pull_id}}/part{n}"] = _get(f"part{n}", ("pull_id",), {"type": "object"})
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": paths}))
    return spec


def _edges(registry: ToolRegistry, **options: Any) -> set[tuple[str, str, str, str]]:
    graph = DataflowEnrichment(**options).enrich(registry)
    return {
        (
            graph.tools[int(a)].qualified_name,
            graph.names[o],
            graph.tools[int(b)].qualified_name,
            graph.names[i],
        )
        for a, o, b, i in zip(graph.src, graph.output, graph.dst, graph.input, strict=True)
    }


def test_a_declared_link_ranks_first_however_crowded_the_list(tmp_path: Path) -> None:
    tools = RESTToolLoader(str(_spec(tmp_path, crowd=12)), namespace="git").load()
    edges = _edges(ToolRegistry(tools), max_neighbors=3)
    # pid shares neither name nor words with id, and twelve exact matches (pull_id) compete.
    assert ("git::getPull", "id", "git::merge", "pid") in edges
    assert ("git::listRepos", "[].slug", "git::getRepo", "code") in edges
    unlinked = RESTToolLoader(str(_spec(tmp_path, crowd=12)), namespace="git").load()
    for tool in unlinked:
        tool.metadata.pop("links", None)
    assert ("git::getPull", "id", "git::merge", "pid") not in _edges(ToolRegistry(unlinked), max_neighbors=3)


def test_a_link_wires_only_its_own_spec_in_its_own_namespace(tmp_path: Path) -> None:
    spec = str(_spec(tmp_path, crowd=0))
    first = RESTToolLoader(spec, namespace="one").load()
    second = RESTToolLoader(spec, namespace="two").load()
    edges = _edges(ToolRegistry(first + second), max_neighbors=8)
    assert ("one::getPull", "id", "one::merge", "pid") in edges
    assert ("one::getPull", "id", "two::merge", "pid") not in edges


def test_pointer_steps() -> None:
    assert pointer_steps("") == ()
    assert pointer_steps("/user/id") == ("user", "id")
    assert pointer_steps("/items/3/a~1b~0c") == ("items", 0, "a/b~c")


def test_the_graph_view_says_which_link_declared_an_edge(tmp_path: Path) -> None:
    tools = RESTToolLoader(str(_spec(tmp_path, crowd=2)), namespace="git").load()
    graph = DataflowEnrichment(max_neighbors=8).enrich(ToolRegistry(tools))
    whys = {
        (e.target.name, e.input): str(explain(e))
        for n in range(len(graph.tools))
        for e in graph.edges_from(n)
    }
    assert "declared by the spec's response link 'Merge'" in whys[("merge", "pid")]
    assert "declared" not in whys[("part0", "pull_id")]
