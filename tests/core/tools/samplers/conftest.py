"""Fixtures for the sampler tests: the travel tools, replicated, with every enrichment."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment
from fms_dgt.core.tools.enrichments.embeddings import EmbeddingsEnrichment
from fms_dgt.core.tools.enrichments.neighbors import NeighborsEnrichment
from fms_dgt.core.tools.loaders.file import FileToolLoader
from fms_dgt.core.tools.registry import ToolRegistry

TRAVEL = Path(__file__).resolve().parents[4] / "data" / "sampling" / "travel.yaml"


def enriched(tools: list[Tool]) -> ToolRegistry:
    """A registry of ``tools`` with embeddings, neighbors and dataflow artifacts."""
    return ToolRegistry(
        tools,
        enrichments=[
            EmbeddingsEnrichment(dim=64),
            NeighborsEnrichment(k=6),
            DataflowEnrichment(threshold=0.25),
        ],
    )


@pytest.fixture(scope="session")
def make_registry() -> Callable[[list[Tool]], ToolRegistry]:
    """:func:`enriched`, as a fixture."""
    return enriched


@pytest.fixture(scope="session")
def travel_tools() -> list[Tool]:
    return FileToolLoader(TRAVEL).load()


@pytest.fixture(scope="session")
def travel(travel_tools: list[Tool]) -> ToolRegistry:
    """11 travel tools in 4 namespaces (one overload, one single-tool namespace, one tool without params)."""
    return enriched(travel_tools)


@pytest.fixture(scope="session")
def pool(travel_tools: list[Tool]) -> ToolRegistry:
    """The travel tools copied into 6 namespace groups (66 tools): many chains, ties and hubs."""
    copies = [dataclasses.replace(t, namespace=f"{t.namespace}{c}") for c in range(6) for t in travel_tools]
    return enriched(copies)
