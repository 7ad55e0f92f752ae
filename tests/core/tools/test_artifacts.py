"""Tests for fms_dgt/core/tools/artifacts.py: the artifacts enrichments write and samplers read."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest

from fms_dgt.core.tools.artifacts import (
    GRAPH_ARRAYS,
    MISSING,
    DataflowGraph,
    Edge,
    ToolEmbeddings,
    ToolNeighbors,
    item_path,
    join_path,
    read_path,
    split_path,
)
from fms_dgt.core.tools.data_objects import Tool


def tools() -> list[Tool]:
    """Four tools; ``a::b`` is overloaded (two input schemas)."""
    one = {"type": "object", "properties": {"x": {"type": "string"}}}
    two = {"type": "object", "properties": {"y": {"type": "integer"}}}
    return [Tool("a", "a"), Tool("b", "a", parameters=one), Tool("b", "a", parameters=two), Tool("c", "z")]


def graph() -> DataflowGraph:
    """Edges 0->1 (0.9), 0->3 (0.5), 2->1 (0.7), 1->3 (0.4) in the layout the enrichment builds."""
    src = np.array([0, 0, 1, 2], dtype=np.int64)
    arrays = {
        "src": src,
        "dst": np.array([1, 3, 3, 1], dtype=np.int64),
        "output": np.array([0, 0, 1, 1], dtype=np.int64),
        "input": np.array([2, 2, 2, 3], dtype=np.int64),
        "score": np.array([0.9, 0.5, 0.4, 0.7], dtype=np.float32),
        "out_ptr": np.array([0, 2, 3, 4, 4], dtype=np.int64),
        "in_order": np.array([0, 3, 1, 2], dtype=np.int64),
        "in_ptr": np.array([0, 0, 2, 2, 4], dtype=np.int64),
    }
    return DataflowGraph(tools(), arrays, ["id", "", "x", "y"], {"threshold": 0.3})


def test_graph_reads_edges_forward_and_backward() -> None:
    g = graph()
    a, b1, b2, c = g.tools
    assert len(g) == 4 and g.settings == {"threshold": 0.3}
    assert g.edges_from(0) == [Edge(a, "id", b1, "x", pytest.approx(0.9)), Edge(a, "id", c, "x", 0.5)]
    assert [(e.source, e.score) for e in g.edges_to(1)] == [(a, pytest.approx(0.9)), (b2, pytest.approx(0.7))]
    assert g.edge(2) == Edge(b1, "", c, "x", pytest.approx(0.4))
    assert g.successors(0) == [1, 3] and g.predecessors(3) == [0, 1]
    assert g.edges_from(3) == [] and g.predecessors(0) == []


def test_graph_nodes_are_found_by_name_and_schema() -> None:
    g = graph()
    assert [g.node(t) for t in tools()] == [0, 1, 2, 3]
    with pytest.raises(KeyError):
        g.node(Tool("b", "a", parameters={"type": "object", "properties": {"q": {}}}))


def test_graph_arrays_are_read_only() -> None:
    g = graph()
    for name in GRAPH_ARRAYS:
        array = getattr(g, name)
        assert not array.flags.writeable, name
        with pytest.raises(ValueError):
            array[0] = 0


def test_edges_are_frozen_and_hashable() -> None:
    edge = graph().edge(0)
    assert edge in {edge} and hash(edge) == hash(dataclasses.replace(edge))
    with pytest.raises(dataclasses.FrozenInstanceError):
        edge.score = 1.0  # type: ignore[misc]


def test_embeddings_rows_and_vectors() -> None:
    matrix = np.eye(4, dtype=np.float32)
    artifact = ToolEmbeddings(tools(), matrix, {"encoder": "test"})
    assert len(artifact) == 4 and artifact.encoder == {"encoder": "test"}
    assert artifact.row(tools()[2]) == 2
    assert artifact.vector(tools()[3]).tolist() == [0, 0, 0, 1]
    assert not artifact.matrix.flags.writeable
    with pytest.raises(KeyError):
        artifact.row(Tool("missing", "a"))


def test_neighbors_skip_padding() -> None:
    indices = np.array([[3, -1], [0, 3], [-1, -1], [0, 1]], dtype=np.int64)
    scores = np.array([[0.5, 0], [0.8, 0.2], [0, 0], [0.5, 0.2]], dtype=np.float32)
    artifact = ToolNeighbors(tools(), indices, scores)
    a, b1, _, c = tools()
    assert artifact.k == 2
    assert artifact.neighbors(a) == [(c, 0.5)]
    assert artifact.neighbors(b1) == [(a, pytest.approx(0.8)), (c, pytest.approx(0.2))]
    assert artifact.neighbors(tools()[2]) == []
    assert not artifact.indices.flags.writeable and not artifact.scores.flags.writeable


def test_importing_the_artifacts_loads_neither_numpy_nor_an_enrichment() -> None:
    code = (
        "import json, sys; import fms_dgt.core.tools.artifacts;"
        "print(json.dumps([m for m in sys.modules if m == 'numpy' or 'enrichments' in m]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []


RESULT = {
    "location": {"name": "Lisbon", "lat": 38.7},
    "author": [{"id": "a1", "name": "Ann"}, {"id": "a2"}],
    "tags": ["x", "y"],
    "empty": [],
    "none": None,
    "a.b": {"c[d]": 5},
}


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("", RESULT),
        ("location.name", "Lisbon"),
        ("author[].id", "a1"),
        ("author[1].id", "a2"),
        ("tags[]", "x"),
        ("none", None),
        (join_path(join_path("", "a.b"), "c[d]"), 5),
    ],
)
def test_read_path_reads_nested_values_and_first_items(path: str, value: object) -> None:
    assert read_path(RESULT, path) == value


@pytest.mark.parametrize(
    "path",
    [
        "missing",
        "location.zip",
        "author[].email",
        "author[5].id",
        "empty[]",
        "tags.x",
        "location[]",
        "author[",
        "a[x]",
    ],
)
def test_read_path_gives_the_sentinel_when_there_is_no_value(path: str) -> None:
    assert read_path(RESULT, path) is MISSING
    assert not MISSING and repr(MISSING) == "MISSING"


def test_read_path_of_an_array_result() -> None:
    assert read_path([{"id": 7}], "[].id") == 7
    assert read_path([], "[].id") is MISSING
    assert read_path("text", "") == "text"


def test_paths_split_and_join() -> None:
    assert split_path("filings[].accessionNumber") == ("filings", 0, "accessionNumber")
    assert split_path("[].id") == (0, "id")
    assert split_path("") == ()
    assert item_path(join_path("", "user_ids")) == "user_ids[]"
    assert split_path(join_path("x", "weird.name[0]\\")) == ("x", "weird.name[0]\\")
    with pytest.raises(ValueError, match="not closed"):
        split_path("a[")


def test_the_leaf_of_an_output_path_is_its_last_property_name() -> None:
    from fms_dgt.core.tools.artifacts import leaf_name

    assert leaf_name("data[].attributes.name") == "name"
    assert leaf_name("[].id") == "id" and leaf_name("watchlist[]") == "watchlist" and leaf_name("") == ""
    assert leaf_name("meta.rate\\.limit") == "rate.limit"  # an escaped dot is part of the name
    assert leaf_name("broken[x.id") == "id"  # malformed: its text after the last dot
