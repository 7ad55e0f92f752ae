"""Tests for fms_dgt/core/tools/enrichments/_dataflow_local.py: the places of an output's own API."""

from __future__ import annotations

from support.schemas import rest_tool, schema

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


def test_exact_matches_of_the_outputs_own_tag_come_first_when_places_run_out() -> None:
    # Airflow: a run's dag_run_id feeds the DAGRun operations and the TaskInstance ones alike (all
    # exact matches); with fewer places than inputs, the run's own tag comes first.
    def op(name: str, tag: str) -> Tool:
        path = f"/dags/{{dag_id}}/dagRuns/{{dag_run_id}}/{name}"
        return rest_tool(
            name, path, {"dag_id": "string", "dag_run_id": "string"}, namespace="flow", tags=[tag]
        )

    run = rest_tool(
        "get_dag_run",
        "/dags/{dag_id}/dagRuns/{dag_run_id}",
        {"dag_id": "string", "dag_run_id": "string"},
        schema(dag_run_id="string"),
        namespace="flow",
        tags=["DAGRun"],
    )
    tasks = [op(f"task_op{i}", "TaskInstance") for i in range(6)]
    runs = [op(f"run_op{i}", "DAGRun") for i in range(3)]
    graph = DataflowEnrichment(max_neighbors=4).enrich(ToolRegistry([run, *tasks, *runs]))
    targets = [e.target.name for e in graph.edges_from(graph.node(run))]
    assert len(targets) == 4
    assert {"run_op0", "run_op1", "run_op2"} <= set(targets)
