"""Tests for fms_dgt/core/tools/enrichments/_dataflow_links.py: edges a spec's response links declare."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.openapi_specs import operation, write_spec

from fms_dgt.core.tools.enrichments._dataflow_links import pointer_steps
from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment
from fms_dgt.core.tools.enrichments.dataflow_view import explain
from fms_dgt.core.tools.loaders.rest import RESTToolLoader
from fms_dgt.core.tools.registry import ToolRegistry


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
        "/pulls/{pull_id}": operation(
            "getPull",
            ("pull_id",),
            pull,
            {"Merge": {"operationId": "merge", "parameters": {"path.pid": "$response.body#/id"}}},
        ),
        "/merge/{pid}": operation("merge", ("pid",), {"type": "object"}),
        # A pointer into a list result written without the item step (the OpenAPI link example's way).
        "/repos": operation(
            "listRepos",
            (),
            repos,
            {"One": {"operationId": "getRepo", "parameters": {"code": "$response.body#/slug"}}},
        ),
        "/repo/{code}": operation("getRepo", ("code",), {"type": "object"}),
    }
    for n in range(crowd):
        paths[f"/pulls/{{pull_id}}/part{n}"] = operation(f"part{n}", ("pull_id",), {"type": "object"})
    return write_spec(tmp_path, paths)


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
    assert pointer_steps("") == [()]
    assert pointer_steps("/user/id") == [("user", "id"), (0, "user", "id")]
    # a number is first a property of that name, then an array item; ~1 and ~0 are / and ~
    assert pointer_steps("/items/3/a~1b~0c") == [
        ("items", "3", "a/b~c"),
        ("items", 0, "a/b~c"),
        (0, "items", "3", "a/b~c"),
        (0, "items", 0, "a/b~c"),
    ]


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


def _spec_of(tmp_path: Path, paths: dict[str, Any]) -> list[Any]:
    return RESTToolLoader(str(write_spec(tmp_path, paths)), namespace="u").load()


def _param(name: str, where: str = "path") -> dict[str, Any]:
    return {"name": name, "in": where, "required": where == "path", "schema": {"type": "string"}}


_TOKEN_RESULT = {"type": "object", "properties": {"user_id": {"type": "string"}, "token": {"type": "string"}}}


def _op(op_id: str, params: list[dict[str, Any]], links: Any = None, method: str = "get") -> dict[str, Any]:
    return operation(op_id, params, _TOKEN_RESULT, links or None, method)


def test_declared_edges_come_before_exact_matches(tmp_path: Path) -> None:
    audit = {"Audit": {"operationId": "audit", "parameters": {"subject": "$response.body#/user_id"}}}
    tools = _spec_of(
        tmp_path,
        {
            "/users": _op("addUser", [], audit, method="post"),
            "/users/{user_id}": _op("deleteUser", [_param("user_id")], method="delete"),
            "/audit/{subject}": _op("audit", [_param("subject")]),
        },
    )
    graph = DataflowEnrichment(max_neighbors=1).enrich(ToolRegistry(tools))
    (only,) = [(e.output, e.target.name, e.input) for e in graph.edges_from(0) if e.output == "user_id"]
    assert only == ("user_id", "audit", "subject")  # the link, though deleteUser.user_id is an exact match


def test_link_parameters_name_the_request_parameter_with_its_location(tmp_path: Path) -> None:
    links = {
        "ByPath": {"operationId": "find", "parameters": {"path.id": "$response.body#/token"}},
        "Ambiguous": {"operationId": "find", "parameters": {"id": "$response.body#/user_id"}},
        "Named": {"operationId": "find", "parameters": {"query_id": "$response.body#/user_id"}},
        "Self": {"operationId": "make", "parameters": {"seed": "$response.body#/token"}},
    }
    tools = _spec_of(
        tmp_path,
        {
            "/things": _op("make", [_param("seed", "query")], links, method="post"),
            # path id, query id (renamed query_id) and a query parameter literally named query_id
            "/find/{id}": _op("find", [_param("id"), _param("id", "query"), _param("query_id", "query")]),
        },
    )
    find = next(t for t in tools if t.name == "find")
    arguments = {k: (v["in"], v["name"]) for k, v in find.metadata["route"]["arguments"].items()}
    renamed = next(k for k, v in arguments.items() if v == ("query", "query_id"))
    edges = {
        (e.output, e.target.name, e.input)
        for e in DataflowEnrichment().enrich(ToolRegistry(tools)).edges_from(0)
    }
    assert ("token", "find", "id") in edges  # path.id: the path's id
    assert ("user_id", "find", renamed) in edges  # the spec's query_id, whatever its argument's name
    assert ("user_id", "find", "query_id") not in edges  # that argument is the query's id
    assert not any(target == "make" for _, target, _ in edges)  # a link back into its own operation
    why = [
        str(explain(e))
        for e in DataflowEnrichment().enrich(ToolRegistry(tools)).edges_from(0)
        if e.input == "id"
    ]
    assert why and "declared by the spec's response link 'ByPath'" in why[0]
