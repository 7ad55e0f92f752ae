"""Tests for fms_dgt/core/tools/enrichments/embeddings.py."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fms_dgt.core.tools.artifacts import ToolEmbeddings
from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.enrichments._vectors import HashedEncoder, TextEncoder
from fms_dgt.core.tools.enrichments.embeddings import EmbeddingsEnrichment, tool_text
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.errors import ConfigError


class CountingEncoder(TextEncoder):
    """The hashed encoder, counting how many texts it was asked to encode."""

    def __init__(self, dim: int = 64) -> None:
        self.inner = HashedEncoder(dim=dim)
        self.encoded: list[str] = []

    def identity(self) -> dict[str, Any]:
        return {"encoder": "counting", **self.inner.identity()}

    def encode(self, texts: Sequence[str]) -> Any:
        self.encoded.extend(texts)
        return self.inner.encode(texts)


def test_tool_text_covers_parameters_and_outputs(travel_tools: list[Tool]) -> None:
    text = tool_text(next(t for t in travel_tools if t.name == "book_flight"))
    assert "flight_id Identifier of the flight to book." in text
    assert "booking_id Identifier of the new booking." in text


def test_artifact_has_a_row_per_tool_including_overloads(travel_registry: ToolRegistry) -> None:
    artifact = EmbeddingsEnrichment(dim=64).enrich(travel_registry)
    assert isinstance(artifact, ToolEmbeddings)
    assert artifact.matrix.shape == (11, 64)
    first, second = travel_registry.overloads("flights::get_booking")
    assert artifact.row(first) != artifact.row(second)
    assert not artifact.matrix.flags.writeable


def test_cache_encodes_only_new_tools(travel_tools: list[Tool], tmp_path: Path) -> None:
    encoder = CountingEncoder()
    EmbeddingsEnrichment(encoder=encoder, cache_dir=tmp_path).enrich(ToolRegistry(travel_tools[:6]))
    assert len(encoder.encoded) == 6
    cold = EmbeddingsEnrichment(encoder=CountingEncoder()).enrich(ToolRegistry(travel_tools))
    encoder.encoded.clear()
    warm = EmbeddingsEnrichment(encoder=encoder, cache_dir=tmp_path).enrich(ToolRegistry(travel_tools))
    assert len(encoder.encoded) == 5
    assert set(encoder.encoded) == {tool_text(t) for t in travel_tools[6:]}
    assert np.array_equal(warm.matrix, cold.matrix)


def test_cache_is_keyed_by_content_and_settings(travel_tools: list[Tool], tmp_path: Path) -> None:
    encoder = CountingEncoder()
    EmbeddingsEnrichment(encoder=encoder, cache_dir=tmp_path).enrich(ToolRegistry(travel_tools))
    encoder.encoded.clear()
    edited = [
        dataclasses.replace(travel_tools[0], description="Look a customer up by e-mail."),
        *travel_tools[1:],
    ]
    EmbeddingsEnrichment(encoder=encoder, cache_dir=tmp_path).enrich(ToolRegistry(edited))
    assert encoder.encoded == [tool_text(edited[0])]
    other = CountingEncoder(dim=32)
    EmbeddingsEnrichment(encoder=other, cache_dir=tmp_path).enrich(ToolRegistry(travel_tools))
    assert len(other.encoded) == 11


def test_force_recomputes_everything(travel_tools: list[Tool], tmp_path: Path) -> None:
    encoder = CountingEncoder()
    EmbeddingsEnrichment(encoder=encoder, cache_dir=tmp_path).enrich(ToolRegistry(travel_tools))
    EmbeddingsEnrichment(encoder=encoder, cache_dir=tmp_path, force=True).enrich(ToolRegistry(travel_tools))
    assert len(encoder.encoded) == 22


def test_registry_with_config_style_enrichment(travel_tools: list[Tool], tmp_path: Path) -> None:
    registry = ToolRegistry(travel_tools, enrichments=[EmbeddingsEnrichment(cache_dir=tmp_path)])
    assert isinstance(registry.artifacts["embeddings"], ToolEmbeddings)
    assert list((tmp_path / "embeddings").glob("*/vectors/shard-*.npz"))


def test_openai_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="needs model and base_url"):
        EmbeddingsEnrichment(encoder="openai")
    with pytest.raises(ConfigError, match="unknown encoder 'bert'"):
        EmbeddingsEnrichment(encoder="bert")


def test_refresh_reruns_enrichments_on_new_tools_only(tmp_path: Path) -> None:
    import yaml

    from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment
    from fms_dgt.core.tools.loaders.file import FileToolLoader

    source = tmp_path / "tools.yaml"
    produce = {"type": "object", "properties": {"order_id": {"type": "string", "description": "The order."}}}
    consume = {"type": "object", "properties": {"order_id": {"type": "string", "description": "The order."}}}
    tools = [{"name": "create_order", "description": "Create an order.", "output_parameters": produce}]
    source.write_text(yaml.safe_dump({"shop": tools}))
    encoder = CountingEncoder()
    registry = ToolRegistry.from_loaders(
        [FileToolLoader(source)],
        enrichments=[
            DataflowEnrichment(cache_dir=tmp_path),
            EmbeddingsEnrichment(encoder=encoder, cache_dir=tmp_path),
        ],
    )
    assert len(registry.artifacts["dataflow"]) == 0
    tools.append({"name": "ship_order", "description": "Ship an order.", "parameters": consume})
    source.write_text(yaml.safe_dump({"shop": tools}))
    registry.refresh()
    assert len(encoder.encoded) == 2, "the second run encoded only the new tool"
    graph = registry.artifacts["dataflow"]
    assert [(e.source.name, e.target.name) for e in graph.edges_from(0)] == [("create_order", "ship_order")]
    assert registry.artifacts["embeddings"].matrix.shape[0] == 2
