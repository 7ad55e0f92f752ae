"""Tests for fms_dgt/core/tools/enrichments/neighbors.py."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.enrichments import neighbors as module
from fms_dgt.core.tools.enrichments.embeddings import EmbeddingsEnrichment, quantise
from fms_dgt.core.tools.enrichments.neighbors import NeighborsEnrichment, ToolNeighbors, nearest
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.errors import EnrichmentError


def brute_force(matrix: Any, qnames: list[str], k: int) -> list[list[int]]:
    vectors, inverse = quantise(matrix)
    scores = (vectors @ vectors.T) * inverse[None, :]
    rows = []
    for r in range(len(matrix)):
        allowed = [c for c in range(len(matrix)) if qnames[c] != qnames[r]]
        rows.append(sorted(allowed, key=lambda c: (-scores[r, c], c))[:k])
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
    assert indices[10][:2].tolist() == [30, 40]
    assert np.all(np.diff(scores, axis=1) <= 1e-6)


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


def test_cache_reuses_the_result(
    travel_tools: list[Tool], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = ToolRegistry(travel_tools, enrichments=[EmbeddingsEnrichment()])
    first = NeighborsEnrichment(cache_dir=tmp_path).enrich(registry)
    monkeypatch.setattr(module, "nearest", lambda *a: pytest.fail("recomputed despite the cache"))
    second = NeighborsEnrichment(cache_dir=tmp_path).enrich(registry)
    assert second.indices.tolist() == first.indices.tolist()
    edited = [dataclasses.replace(travel_tools[0], description="changed"), *travel_tools[1:]]
    with pytest.raises(pytest.fail.Exception):
        NeighborsEnrichment(cache_dir=tmp_path).enrich(
            ToolRegistry(edited, enrichments=[EmbeddingsEnrichment()])
        )


def test_invalid_k() -> None:
    with pytest.raises(EnrichmentError, match="invalid k 0"):
        NeighborsEnrichment(k=0)
