"""Tests for the per-namespace memo: content keys, pack files, and warm runs that skip per-tool work."""

from __future__ import annotations

import copy
import dataclasses
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fms_dgt.core.tools.artifacts import DataflowGraph
from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.enrichments import _dataflow_params, embeddings
from fms_dgt.core.tools.enrichments._cache import MemoStore, _read_arrays, _write_arrays
from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment
from fms_dgt.core.tools.enrichments.embeddings import EmbeddingsEnrichment
from fms_dgt.core.tools.enrichments.neighbors import NeighborsEnrichment
from fms_dgt.core.tools.registry import ToolRegistry


def replicate(tools: list[Tool], copies: int) -> list[Tool]:
    return [
        dataclasses.replace(copy.deepcopy(t), namespace=f"{t.namespace}{c}")
        for c in range(copies)
        for t in tools
    ]


def renamed(tools: list[Tool], namespace: str) -> list[Tool]:
    """New tools in a new namespace: new names and descriptions, so new texts and signatures."""
    return [
        dataclasses.replace(t, namespace=namespace, name=f"{t.name}_v2", description=f"{t.description} (v2)")
        for t in tools
    ]


def build(tools: list[Tool], cache: Path | None) -> ToolRegistry:
    return ToolRegistry(
        tools,
        enrichments=[
            EmbeddingsEnrichment(cache_dir=cache),
            DataflowEnrichment(cache_dir=cache, threshold=0.2),
            NeighborsEnrichment(cache_dir=cache, k=4),
        ],
    )


def artifacts(registry: ToolRegistry) -> list[Any]:
    graph: DataflowGraph = registry.artifacts["dataflow"]
    return [
        registry.artifacts["embeddings"].matrix.tobytes(),
        *(a.tolist() for a in (graph.src, graph.dst, graph.output, graph.input, graph.score, graph.in_order)),
        list(graph.names),
        registry.artifacts["neighbors"].indices.tolist(),
        registry.artifacts["neighbors"].scores.tolist(),
    ]


# --------------------------------------------------------------------------- content keys


def test_namespace_keys_follow_content_not_identity(travel_tools: list[Tool]) -> None:
    first = ToolRegistry(travel_tools).namespace_keys()
    again = ToolRegistry(copy.deepcopy(travel_tools)).namespace_keys()
    assert first == again and all(first.values())
    assert len(set(first.values())) == len(first)  # namespaces differ, so do their keys
    target = travel_tools[0]
    edited = [
        dataclasses.replace(t, description=t.description + "!") if t is target else t for t in travel_tools
    ]
    changed = ToolRegistry(edited).namespace_keys()
    assert [ns for ns in first if first[ns] != changed[ns]] == [target.namespace]


def test_a_namespace_that_cannot_be_serialised_has_no_key(travel_tools: list[Tool]) -> None:
    odd = Tool(
        "odd",
        "strange",
        parameters={"type": "object", "properties": {"n": {"type": "number", "default": threading.Lock()}}},
    )
    keys = ToolRegistry([*travel_tools, odd]).namespace_keys()
    assert keys["strange"] is None
    assert all(keys[t.namespace] for t in travel_tools)


# --------------------------------------------------------------------------- pack files


def test_pack_files_round_trip_every_shape(tmp_path: Path) -> None:
    arrays = {
        "keys": np.asarray(["a" * 32, "b"], dtype="U32"),
        "bytes": np.asarray([b"x" * 32], dtype="S32"),
        "empty": np.zeros(0, dtype=np.int32),
        "flat": np.zeros((3, 0), dtype=np.float32),
        "scalar": np.asarray(2.5),
        "matrix": np.arange(24, dtype=np.int8).reshape(4, 6),
        "strided": np.arange(20, dtype=np.int64)[::2],
    }
    _write_arrays(tmp_path / "p.pack", arrays)
    read = _read_arrays(tmp_path / "p.pack", ["keys"])
    assert read is not None
    for name, array in arrays.items():
        assert read[name].dtype == array.dtype and read[name].shape == array.shape, name
        assert np.array_equal(read[name], array), name
    assert _read_arrays(tmp_path / "p.pack", ["missing"]) is None
    data = (tmp_path / "p.pack").read_bytes()
    (tmp_path / "short.pack").write_bytes(data[:-7])
    (tmp_path / "junk.pack").write_bytes(b"\x10" + bytes(40))
    assert _read_arrays(tmp_path / "short.pack", []) is None
    assert _read_arrays(tmp_path / "junk.pack", []) is None
    assert not list(tmp_path.glob(".*"))  # no temporary file left behind


def test_memo_adds_shards_then_compacts(tmp_path: Path) -> None:
    memo = MemoStore(tmp_path, ("ptr",))
    memo.max_shards = 3
    for i in range(3):
        memo.add({"keys": np.asarray([f"k{i}"]), "ptr": np.asarray([0, i])})
    assert memo.crowded() and len(memo.read()) == 3
    memo.replace({"keys": np.asarray(["all"]), "ptr": np.asarray([0, 9])})
    shards = memo.read()
    assert [s["keys"].tolist() for s in shards] == [["all"]]


# --------------------------------------------------------------------------- warm runs


def test_warm_runs_equal_cold_runs_through_growth_edits_and_shrinking(
    travel_tools: list[Tool], tmp_path: Path
) -> None:
    pool = replicate(travel_tools, 3)
    grown = [*pool, *renamed(travel_tools, "fresh")]
    edited = [
        dataclasses.replace(t, description="now does something else") if t.name == "search_flights" else t
        for t in grown
    ]
    shrunk = [t for t in edited if not t.namespace.startswith("accounts")]
    interleaved = [*shrunk[1::2], *shrunk[::2]]  # namespaces no longer contiguous
    for tools in (pool, grown, grown, edited, shrunk, interleaved, pool):
        assert artifacts(build(tools, tmp_path)) == artifacts(build(tools, None))
    assert list((tmp_path / "dataflow").glob("*/memo/memo-*.pack"))
    assert list((tmp_path / "embeddings").glob("*/memo/memo-*.pack"))
    assert list((tmp_path / "neighbors").glob("*/memo/memo-*.pack"))


def test_known_namespaces_skip_per_tool_work(
    travel_tools: list[Tool], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = replicate(travel_tools, 4)
    build(pool, tmp_path)
    texts: list[str] = []
    fields: list[str] = []
    original_text, original_inputs = embeddings.tool_text, _dataflow_params.input_fields
    monkeypatch.setattr(embeddings, "tool_text", lambda t: texts.append(t.namespace) or original_text(t))
    monkeypatch.setattr(
        _dataflow_params, "input_fields", lambda t: fields.append(t.namespace) or original_inputs(t)
    )
    fresh = renamed(travel_tools[:3], "fresh")
    warm = build([*pool, *fresh], tmp_path)
    assert texts == ["fresh"] * 3 and fields == ["fresh"] * 3
    texts.clear()
    fields.clear()
    build([*pool, *fresh], tmp_path)
    assert texts == [] and fields == [], "an unchanged pool does no per-tool work at all"
    assert artifacts(warm) == artifacts(build([*pool, *fresh], None))


def test_broken_memo_files_are_recomputed_not_trusted(travel_tools: list[Tool], tmp_path: Path) -> None:
    pool = replicate(travel_tools, 2)
    build(pool, tmp_path)
    packs = list(tmp_path.glob("*/*/memo/memo-*.pack"))
    assert len(packs) == 3
    for number, pack in enumerate(packs):
        data = pack.read_bytes()
        pack.write_bytes(data[: len(data) // 2] if number % 2 else b"not a pack at all")
    assert artifacts(build(pool, tmp_path)) == artifacts(build(pool, None))


def test_a_memo_that_disagrees_with_its_settings_is_ignored(travel_tools: list[Tool], tmp_path: Path) -> None:
    build(travel_tools, tmp_path)
    [pack] = list((tmp_path / "dataflow").glob("*/memo/memo-*.pack"))
    arrays = _read_arrays(pack, [])
    assert arrays is not None
    shrunk = {**arrays, "out_vectors": np.asarray(arrays["out_vectors"])[:, :8]}
    _write_arrays(pack, shrunk)
    enrichment = DataflowEnrichment(cache_dir=tmp_path, threshold=0.2)
    assert enrichment._read_memo() is None
    assert artifacts(build(travel_tools, tmp_path)) == artifacts(build(travel_tools, None))


def test_a_memo_key_that_is_no_digest_is_read_as_bytes(travel_tools: list[Tool], tmp_path: Path) -> None:
    # A signature key is a hex digest when written, but a memo's bytes are not trusted: the order
    # among ties reads them as they are, and a key edited on disk costs its reuse, not the run.
    build(travel_tools, tmp_path)
    [pack] = list((tmp_path / "dataflow").glob("*/memo/memo-*.pack"))
    arrays = _read_arrays(pack, [])
    assert arrays is not None
    keys = np.array(arrays["out_keys"]).copy()
    keys[0] = b"g" * 32
    _write_arrays(pack, {**arrays, "out_keys": keys})
    assert len(build(travel_tools, tmp_path).artifacts["dataflow"].src) > 0


def test_new_namespaces_extend_the_dataflow_memo_without_rewriting_it(
    travel_tools: list[Tool], tmp_path: Path
) -> None:
    pool = replicate(travel_tools, 2)
    build(pool, tmp_path)
    memo_dir = next((tmp_path / "dataflow").glob("*/memo"))
    [base] = list(memo_dir.glob("memo-*.pack"))
    written = base.stat().st_mtime_ns
    steps = [pool]
    for step in range(3):
        steps.append([*steps[-1], *renamed(travel_tools, f"step{step}")])
        assert artifacts(build(steps[-1], tmp_path)) == artifacts(build(steps[-1], None))
    packs = list(memo_dir.glob("memo-*.pack"))
    assert len(packs) == 4 and base.stat().st_mtime_ns == written, "deltas are added, the base is kept"
    enrichment = DataflowEnrichment(cache_dir=tmp_path, threshold=0.2)
    memo = enrichment._read_memo()
    assert memo is not None and len(memo.shards) == 4
    base.unlink()  # a chain that lost its base is not used
    assert enrichment._read_memo() is None
    assert artifacts(build(steps[-1], tmp_path)) == artifacts(build(steps[-1], None))
    [rebuilt] = list(memo_dir.glob("memo-*.pack"))
    assert _read_arrays(rebuilt, ["keys"]) is not None
