"""Tests for fms_dgt/core/tools/enrichments/_dataflow_local.py: the places of an output's own API."""

from __future__ import annotations

from support.schemas import schema

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.enrichments._dataflow_local import LOCAL_SLOTS
from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment
from fms_dgt.core.tools.registry import ToolRegistry


def test_identifiers_of_the_outputs_entity_in_its_api_keep_their_places_beyond_the_reserved_ones() -> None:
    video = Tool(
        "get_video", "tube", parameters=schema(q="string"), output_parameters=schema(videoId="integer")
    )
    own = [
        Tool(
            f"video_op{i}",
            "tube",
            parameters=schema(id={"type": "integer", "description": "ID of the video"}),
        )
        for i in range(LOCAL_SLOTS + 2)
    ]
    crowd = [Tool(f"t{i}", f"api{i}", parameters=schema(video_id="integer")) for i in range(20)]
    graph = DataflowEnrichment(max_neighbors=8).enrich(ToolRegistry([video, *own, *crowd]))
    targets = [e.target.qualified_name for e in graph.edges_from(graph.node(video))]
    assert sorted(t for t in targets if t.startswith("tube::")) == [f"tube::{t.name}" for t in own]
    assert len(targets) == 8
