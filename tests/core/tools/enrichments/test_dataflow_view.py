"""Tests for fms_dgt/core/tools/enrichments/dataflow_view.py: a tool's edges with why, and DOT."""

from __future__ import annotations

import pytest
from support.schemas import rest_tool, schema

from fms_dgt.core.tools.artifacts import Edge
from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment
from fms_dgt.core.tools.enrichments.dataflow_view import describe_tool, explain, graph_of, to_dot
from fms_dgt.core.tools.registry import ToolRegistry


def test_graph_of_builds_the_default_graph_when_none_is_configured(travel_registry: ToolRegistry) -> None:
    assert "dataflow" not in travel_registry.artifacts
    graph = graph_of(travel_registry)
    assert len(graph) > 0
    travel_registry.artifacts["dataflow"] = graph
    assert graph_of(travel_registry) is graph


def test_explain_names_the_type_fit_the_names_and_the_entity(travel_registry: ToolRegistry) -> None:
    graph = DataflowEnrichment().enrich(travel_registry)
    edges = graph.edges_from(graph.node(travel_registry.get("accounts::find_user")))
    same_space = next(e for e in edges if e.target.qualified_name == "accounts::get_loyalty_status")
    why = explain(same_space)
    assert (why.types, why.fit, why.entity) == ("string -> string", 1.0, "user")
    assert str(why) == "type string -> string 1.00; exact name, same namespace; entity user"
    elsewhere = next(e for e in edges if e.target.namespace == "flights")
    assert "text similarity" in explain(elsewhere).names


def test_describe_tool_lists_both_directions_of_every_overload(travel_registry: ToolRegistry) -> None:
    graph = DataflowEnrichment().enrich(travel_registry)
    lines = describe_tool(graph, "flights::get_booking", top=2)
    assert sum("(overload" in line for line in lines) == 2
    assert sum(line.startswith("  incoming") for line in lines) == 2
    assert any("flights::book_flight.booking_id -> booking_id" in line for line in lines)
    with pytest.raises(KeyError):
        describe_tool(graph, "nope::nothing")


def test_dot_keeps_one_namespace_and_escapes_labels() -> None:
    out = {"type": "object", "properties": {'say "hi"': {"type": "string"}}}
    tools = [
        Tool(
            "a",
            "ns",
            parameters={"type": "object", "properties": {"x": {"type": "string"}}},
            output_parameters=out,
        ),
        Tool("b", "ns", parameters={"type": "object", "properties": {'say "hi"': {"type": "string"}}}),
        Tool("c", "other", parameters={"type": "object", "properties": {'say "hi"': {"type": "string"}}}),
    ]
    text = to_dot(DataflowEnrichment().enrich(ToolRegistry(tools)), "ns")
    assert text.startswith("digraph dataflow {") and text.endswith("}\n")
    assert 'label="ns::a"' in text and "other::c" not in text
    assert 'n0 -> n1 [label="say \\"hi\\" -> say \\"hi\\" 1.00"];' in text


def test_explain_names_the_list_match_and_the_floor_between_identifiers_of_one_entity() -> None:
    rates = {"type": "array", "items": schema(id="string")}
    ids = {"type": "array", "items": {"type": "string"}}
    described = {"type": "string", "description": "Unique identifier for the object."}
    tools = [
        rest_tool("get_item", "/v1/items/{item}", {"item": "string"}, {**schema(tax_rates=rates)}),
        rest_tool("update_item", "/v1/items/{item}/update", {"item": "string", "tax_rates": ids}),
        rest_tool(
            "create_code", "/v1/promotion_codes", {}, {**schema(id=described), "title": "promotion_code"}
        ),
        rest_tool("read_code", "/v1/promotion_codes/{code_token}", {"code_token": "string"}),
        rest_tool("update_code", "/v1/promotion_codes/{promotion_code}", {"promotion_code": "string"}),
    ]
    graph = DataflowEnrichment().enrich(ToolRegistry(tools))
    why = {(e.output, e.input): explain(e).names for n in range(len(tools)) for e in graph.edges_from(n)}
    assert why[("tax_rates[].id", "tax_rates")] == "exact name, same namespace"
    assert why[("id", "code_token")] == "identifiers of one entity"
    # named for the whole name of the object the id sits in: an exact match
    assert why[("id", "promotion_code")] == "input named for the promotion code, same namespace"


def test_explain_names_the_search_floor_only_within_a_namespace() -> None:
    posts = Tool("top_posts", "reddit", output_parameters=schema(title="string"))
    search = Tool("search_posts", "reddit", parameters=schema(query="string"))
    elsewhere = Tool("search_news", "news", parameters=schema(query="string"))
    assert explain(Edge(posts, "title", search, "query", 0.5)).names == "label into a search input"
    # A label feeds another namespace's search input by its text alone.
    assert explain(Edge(posts, "title", elsewhere, "query", 0.35)).names == "text similarity 0.35"
