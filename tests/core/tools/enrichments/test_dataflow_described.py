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


def _linking(
    tmp_path: Path,
    see: str,
    result: dict[str, Any],
    schema: dict[str, Any] | None = None,
    op: str = "getSource",
) -> list[Any]:
    """The tools of a spec where ``takeIt``'s ``videoFileToken`` (of type ``schema``, a string by
    default) is described by ``see``, and ``op`` returns ``result``."""
    folder = tmp_path / f"spec{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    kind = schema or {"type": "string"}
    taken = {"name": "videoFileToken", "in": "query", "description": see, "schema": kind}
    paths = {
        "/source": operation(op, (), result),
        "/take/{id}": operation("takeIt", ["id", taken], {"type": "object"}),
    }
    return RESTToolLoader(str(write_spec(folder, paths)), namespace="v").load()


def _declared(tools: list[Any]) -> set[str]:
    """The outputs of the linked operation wired into ``videoFileToken`` at the declared score."""
    graph = DataflowEnrichment().enrich(ToolRegistry(tools))
    return {
        e.output
        for n in range(len(graph.tools))
        for e in graph.edges_from(n)
        if e.target.name == "takeIt" and e.input == "videoFileToken" and e.score == 1.0
    }


_TOKEN = {"type": "object", "properties": {"token": {"type": "string"}, "size": {"type": "integer"}}}


def test_an_anchor_ending_a_sentence_or_percent_encoded_is_read(tmp_path: Path) -> None:
    assert _declared(_linking(tmp_path, "A token. See #operation/getSource.", _TOKEN)) == {"token"}
    assert _declared(_linking(tmp_path, "From (#operation/getSource), or;", _TOKEN)) == {"token"}
    spaced = _linking(tmp_path, "A token (see #operation/get%20Source).", _TOKEN, op="get Source")
    assert _declared(spaced) == {"token"}
    quoted = _linking(tmp_path, "A token, see \u201c#operation/getSource\u201d.", _TOKEN)
    assert _declared(quoted) == {"token"}
    assert _declared(_linking(tmp_path, "A token (see #operation/getSourceX).", _TOKEN)) == set()


def test_an_anchor_is_read_whole_or_not_at_all(tmp_path: Path) -> None:
    # An anchor starting just inside the part of the description read is read whole...
    whole = _linking(tmp_path, "x" * 3990 + " #operation/getSource", _TOKEN)
    assert _declared(whole) == {"token"}
    # ... and one the part read cuts is not read: cut, it would name the operation "A" * 200.
    cut = "x" * 3998 + " #operation/" + "%41" * 200 + "." * 5 + "B"
    assert _declared(_linking(tmp_path, cut, _TOKEN, op="A" * 200)) == set()
    too_long = "see #operation/" + "A" * 201
    assert _declared(_linking(tmp_path, too_long, _TOKEN, op="A" * 201)) == set()


def test_only_an_output_whose_type_fits_the_input_is_declared(tmp_path: Path) -> None:
    see = "A token (see #operation/getSource)."
    both = {"type": "object", "properties": {
        "token": {"type": "object", "properties": {"value": {"type": "integer"}}},
        "files": {"type": "object", "properties": {"token": {"type": "string"}}}}}  # fmt: skip
    assert _declared(_linking(tmp_path, see, both)) == {"files.token"}
    untyped = {"type": "object", "properties": {"token": {"description": "The token."}}}
    assert _declared(_linking(tmp_path, see, untyped)) == {"token"}
    labels = {"type": "array", "items": {"type": "string"}}
    assert _declared(_linking(tmp_path, see, labels, {"type": "integer"})) == {"[]"}
    listed = {"type": "array", "items": {"oneOf": [{"type": "integer"}, {"type": "string"}]}}
    assert _declared(_linking(tmp_path, see, labels, listed)) == {"[]"}
    an_object = {"allOf": [{"type": "object", "properties": {"value": {"type": "string"}}}]}
    assert _declared(_linking(tmp_path, see, labels, an_object)) == set()


def test_a_result_of_scalars_of_several_types_or_nullable_is_read(tmp_path: Path) -> None:
    see = "A token (see #operation/getSource)."
    union = {"type": "array", "items": {"oneOf": [{"type": "integer"}, {"type": "string"}]}}
    assert _declared(_linking(tmp_path, see, union)) == {"[]"}
    nullable = {"type": "array", "nullable": True, "items": {"type": "string"}}
    assert _declared(_linking(tmp_path, see, nullable)) == {"[]"}
    assert _declared(_linking(tmp_path, see, {"type": "string"})) == {""}  # the whole result


def test_the_least_nested_outputs_named_as_the_input_are_taken(tmp_path: Path) -> None:
    video = {"type": "object", "properties": {
        "token": {"type": "string"},
        "channel": {"type": "object", "properties": {"token": {"type": "string"}}},
        "account": {"type": "object", "properties": {"token": {"type": "string"}}}}}  # fmt: skip
    assert _declared(_linking(tmp_path, "See #operation/getSource.", video)) == {"token"}


def test_one_operation_linked_in_several_spellings_counts_once(tmp_path: Path) -> None:
    from fms_dgt.core.tools.enrichments._dataflow_links import describing_link

    three = " ".join(f"#operation/op{n}" for n in range(3))
    five = f"{three} #operation/op3 #operation/getSource"
    spelled = f"#operation/getSource, #operation/getSource. #operation/get%53ource {three}"
    assert _declared(_linking(tmp_path, spelled, _TOKEN)) == {"token"}  # 4 operations
    tools = _linking(tmp_path, five, _TOKEN)  # 5 operations: documentation, none declared
    assert _declared(tools) == set()
    source, target = sorted(tools, key=lambda t: t.name)[0], sorted(tools, key=lambda t: t.name)[1]
    assert (source.name, target.name) == ("getSource", "takeIt")
    assert describing_link(source, target, "token", "videoFileToken") is None
    linked = _linking(tmp_path, "See #operation/getSource.", _TOKEN)
    source, target = sorted(linked, key=lambda t: t.name)
    assert describing_link(source, target, "token", "videoFileToken") == "getSource"
    assert describing_link(source, target, "size", "videoFileToken") is None


def test_a_numeric_operation_id_is_linked_by_its_digits(tmp_path: Path) -> None:
    # A YAML ``operationId: 1234`` is read as a number; the anchor names it by its digits.
    tools = _linking(tmp_path, "A token (see #operation/1234).", _TOKEN)
    source = next(t for t in tools if t.name != "takeIt")
    source.metadata["operation_id"] = 1234
    assert _declared(tools) == {"token"}


def test_a_malformed_schema_beside_all_of_is_no_crash() -> None:
    # Tools built in code may carry what the loaders drop: a non-object ``properties`` beside ``allOf``.
    from fms_dgt.core.tools.data_objects import Tool

    broken = {"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}}], "properties": "oops"}

    def rest(name: str, params: dict[str, Any], result: dict[str, Any]) -> Tool:
        meta = {"kind": "rest", "source": f"spec.yaml#/paths/~1{name}/get", "operation_id": name}
        parameters = {"type": "object", "properties": params}
        return Tool(name=name, namespace="v", parameters=parameters, output_parameters=result, metadata=meta)

    tools = [
        rest("getSource", {}, {"type": "object", "properties": {"token": {"type": "string"}, "odd": broken}}),
        rest("takeIt", {"token": {"description": "A token (see #operation/getSource).", **broken}}, {}),
    ]
    edges = _edges(tools)
    assert ("v::getSource", "odd.a", "v::takeIt", "token") not in edges  # an object fits no scalar
    assert ("v::getSource", "token", "v::takeIt", "token") in edges  # the exact match stays
