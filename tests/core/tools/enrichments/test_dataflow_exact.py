"""Tests for fms_dgt/core/tools/enrichments/_dataflow_exact.py: exact matches within one API."""

from __future__ import annotations

from typing import Any

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment
from fms_dgt.core.tools.registry import ToolRegistry


def schema(**props: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {n: p if isinstance(p, dict) else {"type": p} for n, p in props.items()},
    }


def test_bare_labels_match_exactly_only_within_one_entity() -> None:
    tools = [
        Tool(
            "get_pool", "flow", parameters=schema(pool_name="string"), output_parameters=schema(name="string")
        ),
        Tool("rename_pool", "flow", parameters=schema(name="string")),
        Tool("create_role", "flow", parameters=schema(name="string")),
    ]
    graph = DataflowEnrichment(threshold=0.01).enrich(ToolRegistry(tools))
    scores = {(e.target.name, e.input): e.score for e in graph.edges_from(0)}
    assert scores[("rename_pool", "name")] == 1.0  # a pool's name into a pool's name: the API's own wiring
    assert scores.get(("create_role", "name"), 0.0) < 1.0  # a pool's name is no name for a new role
