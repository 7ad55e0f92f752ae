"""Tests for fms_dgt/core/tools/enrichments/neighbors.py."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fms_dgt.core.tools.artifacts import ToolEmbeddings, ToolNeighbors
from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.enrichments import neighbors as module
from fms_dgt.core.tools.enrichments._vectors import quantise
from fms_dgt.core.tools.enrichments.embeddings import EmbeddingsEnrichment
from fms_dgt.core.tools.enrichments.neighbors import NeighborsEnrichment, nearest
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.errors import ConfigError, EnrichmentError


def brute_force(matrix: Any, qnames: list[str], k: int) -> list[list[int]]:
    """Every pair scored; ties ordered by the tool identity (hash of name and rounded vector)."""
    vectors, inverse = quantise(matrix)
    scores = (vectors @ vectors.T) * inverse[None, :]
    ident = [
        hashlib.sha256(q.encode() + b"\x1f" + v.tobytes()).hexdigest()[:32]
        for q, v in zip(qnames, vectors, strict=True)
    ]
    rows = []
    for r in range(len(matrix)):
        allowed = [c for c in range(len(matrix)) if qnames[c] != qnames[r]]
        rows.append(sorted(allowed, key=lambda c: (-scores[r, c], ident[c]))[:k])
    return rows


def test_nearest_is_exact_with_ties_and_overloads(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(7)
    matrix = rng.normal(size=(700, 16)).astype(np.float32)
    matrix[10] = matrix[20] = matrix[30] = matrix[40]
    qnames = [f"ns::t{i}" for i in range(700)]
    qnames[20] = qnames[10]
    monkeypatch.setattr(module, "_CHUNK_CELLS", 5000)
    indices, scores = nearest(matrix, qnames, 5)
    assert indices.tolist() == brute_force(matrix, qnames, 5)
    assert set(indices[10][:2].tolist()) == {30, 40}
    assert np.all(np.diff(scores, axis=1) <= 1e-6)


def test_ties_do_not_depend_on_registry_order() -> None:
    matrix = np.ones((6, 8), dtype=np.float32)
    qnames = [f"ns::t{i}" for i in range(6)]
    forward, _ = nearest(matrix, qnames, 2)
    backward, _ = nearest(matrix[::-1].copy(), qnames[::-1], 2)
    assert [[qnames[i] for i in row] for row in forward] == [
        [qnames[::-1][i] for i in row] for row in backward[::-1]
    ]


def test_small_pools_are_padded() -> None:
    indices, scores = nearest(np.eye(3, dtype=np.float32), ["a::x", "a::y", "a::z"], 5)
    assert (indices[:, 2:] == -1).all() and (scores[:, 2:] == 0).all()
    assert nearest(np.zeros((1, 4), dtype=np.float32), ["a::x"], 3)[0].tolist() == [[-1, -1, -1]]


def test_registry_artifact_and_lookup(travel_tools: list[Tool], tmp_path: Path) -> None:
    registry = ToolRegistry(
        travel_tools, enrichments=[NeighborsEnrichment(k=3), EmbeddingsEnrichment(cache_dir=tmp_path)]
    )
    artifact = registry.artifacts["neighbors"]
    assert isinstance(artifact, ToolNeighbors) and artifact.k == 3
    found = artifact.neighbors(registry.get("flights::book_flight"))
    assert len(found) == 3 and all(t.qualified_name != "flights::book_flight" for t, _ in found)
    overload_a, overload_b = registry.overloads("flights::get_booking")
    assert overload_b not in [t for t, _ in artifact.neighbors(overload_a)]


def test_needs_the_embeddings_enrichment(travel_tools: list[Tool]) -> None:
    with pytest.raises(EnrichmentError, match=r"'neighbors'.*embeddings.*Add the enrichment"):
        ToolRegistry(travel_tools, enrichments=[NeighborsEnrichment()])
    with pytest.raises(EnrichmentError, match="missing artifact 'embeddings'"):
        NeighborsEnrichment().enrich(ToolRegistry(travel_tools))


def counting(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Record (rows, columns) of every scoring call."""
    calls: list[tuple[int, int]] = []
    original = module._Search.rows

    def rows(self: Any, rows: Any, cols: Any, floor: Any = None) -> Any:
        calls.append((len(rows), self.count if cols is None else len(cols)))
        return original(self, rows, cols, floor)

    monkeypatch.setattr(module._Search, "rows", rows)
    return calls


def test_cache_reuses_the_result(
    travel_tools: list[Tool], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = ToolRegistry(travel_tools, enrichments=[EmbeddingsEnrichment()])
    first = NeighborsEnrichment(cache_dir=tmp_path, k=3).enrich(registry)
    calls = counting(monkeypatch)
    second = NeighborsEnrichment(cache_dir=tmp_path, k=3).enrich(registry)
    assert second.indices.tolist() == first.indices.tolist()
    assert sum(r * c for r, c in calls) == 0, "nothing was scored"
    calls.clear()
    edited = [dataclasses.replace(travel_tools[0], description="changed"), *travel_tools[1:]]
    registry = ToolRegistry(edited, enrichments=[EmbeddingsEnrichment()])
    warm = NeighborsEnrichment(cache_dir=tmp_path, k=3).enrich(registry)
    scored = sum(r * c for r, c in calls)
    cold = NeighborsEnrichment(k=3).enrich(registry)
    assert warm.indices.tolist() == cold.indices.tolist()
    assert 0 < scored < 11 * 11, "only the changed tool and the rows that listed it are rescored"


def test_incremental_runs_equal_cold_runs(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    matrix = np.round(rng.normal(size=(400, 12)), 1).astype(np.float32)
    names = [f"ns{i % 7}::tool{i}" for i in range(400)]
    names[5] = names[6]
    tools = [Tool(n.split("::")[1] + ("_" if i == 6 else ""), n.split("::")[0]) for i, n in enumerate(names)]
    tools[6] = Tool(tools[5].name, tools[5].namespace, parameters={"type": "object", "properties": {"x": {}}})

    def run(rows: list[int], cache: Path | None) -> list[list[str]]:
        embeddings = ToolEmbeddings([tools[i] for i in rows], matrix[rows], {"encoder": "test"})
        registry = ToolRegistry([tools[i] for i in rows])
        registry._index.artifacts["embeddings"] = embeddings
        result = NeighborsEnrichment(k=4, cache_dir=cache).enrich(registry)
        return [[result.tools[i].qualified_name for i in row if i >= 0] for row in result.indices]

    pools = [list(range(300)), list(range(350)), [i for i in range(350) if i % 10], list(range(400))[::-1]]
    for rows in pools:
        assert run(rows, tmp_path) == run(rows, None)


def test_invalid_k() -> None:
    with pytest.raises(ConfigError, match="invalid k 0"):
        NeighborsEnrichment(k=0)
