"""Tests for fms_dgt/core/tools/enrichments/_dataflow_links.py: edges an input's description
declares by linking to the operation its values come from (``#operation/<operationId>``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.openapi_specs import operation, write_spec

from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment
from fms_dgt.core.tools.enrichments.dataflow_view import explain
from fms_dgt.core.tools.loaders.rest import RESTToolLoader
from fms_dgt.core.tools.registry import ToolRegistry

_SEE = "category id of the video (see [/videos/categories](#operation/{op}))"
_LABELS = {"type": "array", "items": {"type": "string"}}


def _query(name: str, description: str, kind: str = "integer") -> dict[str, Any]:
    return {"name": name, "in": "query", "description": description, "schema": {"type": kind}}


def _video_spec(tmp_path: Path, see: str, crowd: int = 0, name: str = "spec.json") -> Path:
    """``getCategories`` lists labels, ``putVideo`` takes a ``category`` id, and ``crowd`` searches
    a ``category`` text."""
    paths: dict[str, Any] = {
        "/videos/categories": operation("getCategories", (), _LABELS),
        "/videos/{id}": operation(
            "putVideo", ["id", _query("category", see)], {"type": "object"}, method="put"
        ),
        # A label of the same type as the categories, which the input's words match better.
        "/videos/categories/top": operation(
            "topCategory", (), {"type": "object", "properties": {"category_label": {"type": "integer"}}}
        ),
    }
    for n in range(crowd):  # string inputs the labels' words and type fit better than an integer id
        paths[f"/search{n}"] = operation(f"search{n}", [_query("category", "a category", "string")], _LABELS)
    return write_spec(tmp_path, paths, name=name)


def _edges(tools: list[Any], **options: Any) -> set[tuple[str, str, str, str]]:
    graph = DataflowEnrichment(**options).enrich(ToolRegistry(tools))
    return {
        (e.source.qualified_name, e.output, e.target.qualified_name, e.input)
        for n in range(len(graph.tools))
        for e in graph.edges_from(n)
    }


def test_an_input_linking_to_an_operation_takes_its_list_items_first(tmp_path: Path) -> None:
    linked = RESTToolLoader(
        str(_video_spec(tmp_path, _SEE.format(op="getCategories"), crowd=6)), namespace="v"
    )
    edges = _edges(linked.load(), max_neighbors=1)
    assert ("v::getCategories", "[]", "v::putVideo", "category") in edges
    # six string inputs of the same name compete for the one place: the declared edge keeps it
    assert sum(1 for e in edges if e[:2] == ("v::getCategories", "[]")) == 1
    plain = RESTToolLoader(str(_video_spec(tmp_path, "category id of the video", crowd=6)), namespace="v")
    assert ("v::getCategories", "[]", "v::putVideo", "category") not in _edges(plain.load(), max_neighbors=1)


def test_the_output_named_as_the_input_ends_is_taken(tmp_path: Path) -> None:
    token = {"type": "object", "properties": {"files": {"type": "object", "properties": {
        "token": {"type": "string"}, "expires": {"type": "string"}}}}}  # fmt: skip
    see = "Video file token [generated](#operation/requestVideoToken)"
    paths = {
        "/videos/{id}/token": operation("requestVideoToken", ["id"], token, method="post"),
        "/files/{id}": operation(
            "getFile", ["id", _query("videoFileToken", see, "string")], {"type": "object"}
        ),
    }
    for n in range(4):  # exact matches of the token's name, which rank before text similarity
        paths[f"/use{n}"] = operation(f"use{n}", [_query("token", "a token", "string")], {"type": "object"})
    tools = RESTToolLoader(str(write_spec(tmp_path, paths)), namespace="v").load()
    edges = _edges(tools, max_neighbors=1)
    assert ("v::requestVideoToken", "files.token", "v::getFile", "videoFileToken") in edges
    assert ("v::requestVideoToken", "files.expires", "v::getFile", "videoFileToken") not in edges


def test_a_description_link_wires_only_its_own_spec_and_namespace(tmp_path: Path) -> None:
    see = _SEE.format(op="getCategories")
    one = RESTToolLoader(str(_video_spec(tmp_path, see)), namespace="one").load()
    two = RESTToolLoader(str(_video_spec(tmp_path, see)), namespace="two").load()
    other_file = RESTToolLoader(str(_video_spec(tmp_path, see, name="b.json")), namespace="one").load()
    lists = [t for t in other_file if t.name == "getCategories"]
    takers = [t for t in one if t.name != "getCategories"]
    declared = {e for e in _edges(takers + lists + two) if e[0].endswith("getCategories") and e[1] == "[]"}
    assert declared == {("two::getCategories", "[]", "two::putVideo", "category")}


def test_links_to_nothing_and_hostile_descriptions_give_no_edge_and_no_error(tmp_path: Path) -> None:
    hostile = "x" * 100_000 + "".join(f"(#operation/op{n})" for n in range(10_000))
    for see in ("see (#operation/noSuchOperation)", "(#operation/putVideo)", hostile, "#operation/"):
        tools = RESTToolLoader(str(_video_spec(tmp_path, see)), namespace="v").load()
        edges = _edges(tools)
        assert ("v::getCategories", "[]", "v::putVideo", "category") not in edges
        assert not any(e[0] == e[2] for e in edges)  # a link to its own operation is no hand-off


def test_the_graph_view_says_the_description_declared_the_edge(tmp_path: Path) -> None:
    tools = RESTToolLoader(str(_video_spec(tmp_path, _SEE.format(op="getCategories"))), namespace="v").load()
    graph = DataflowEnrichment().enrich(ToolRegistry(tools))
    whys = {
        (e.output, e.input): str(explain(e)) for n in range(len(graph.tools)) for e in graph.edges_from(n)
    }
    assert (
        "declared by the input's description (a link to operation 'getCategories')"
        in whys[("[]", "category")]
    )
    assert all("description" not in why for (output, _), why in whys.items() if output != "[]")


def test_an_input_linking_to_more_than_four_operations_declares_none(tmp_path: Path) -> None:
    def spec(linked: int) -> list[Any]:
        see = " ".join(f"[list {n}](#operation/list{n})" for n in range(linked))
        paths: dict[str, Any] = {f"/lists/{n}": operation(f"list{n}", (), _LABELS) for n in range(linked)}
        paths["/videos/{id}"] = operation("putVideo", ["id", _query("category", see)], {"type": "object"})
        folder = tmp_path / str(linked)
        folder.mkdir()
        return RESTToolLoader(str(write_spec(folder, paths)), namespace="v").load()

    declared = {e for e in _edges(spec(4), max_neighbors=1) if e[1:] == ("[]", "v::putVideo", "category")}
    assert {e[0] for e in declared} == {f"v::list{n}" for n in range(4)}
    # five links: documentation, not a source (the type-mismatched lists then score too low to keep)
    assert not {e for e in _edges(spec(5), max_neighbors=1) if e[1:] == ("[]", "v::putVideo", "category")}
