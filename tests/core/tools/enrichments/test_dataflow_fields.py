"""Tests for fms_dgt/core/tools/enrichments/_dataflow_fields.py: inputs and nested outputs."""

from __future__ import annotations

from typing import Any

from support.schemas import schema

from fms_dgt.core.tools.artifacts import read_path
from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.enrichments._dataflow_fields import (
    MAX_DEPTH,
    MAX_NESTED,
    find_field,
    input_fields,
    output_fields,
)
from fms_dgt.core.tools.enrichments._dataflow_params import signature
from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment
from fms_dgt.core.tools.registry import ToolRegistry


def tool(output: dict[str, Any], name: str = "t") -> Tool:
    return Tool(
        name,
        "ns",
        parameters={"type": "object", "properties": {"q": {"type": "string"}}},
        output_parameters=output,
    )


def names(output: dict[str, Any]) -> list[str]:
    return [f.name for f in output_fields(tool(output))]


def test_nested_objects_and_arrays_are_outputs_named_by_paths() -> None:
    output = {
        "type": "object",
        "properties": {
            "location": {"type": "object", "properties": {"name": {"type": "string"}}},
            "author": {
                "type": "array",
                "items": {"type": "object", "properties": {"id": {"type": "string"}}},
            },
            "tags": {"type": "array", "items": {"type": "string"}},
        },
    }
    assert names(output) == ["location", "author", "tags", "location.name", "author[].id", "tags[]"]
    found = find_field(tool(output), "author[].id", output=True)
    assert found is not None and found.leaf == "id" and found.holders == ("author",)
    item = find_field(tool(output), "tags[]", output=True)
    assert item is not None and item.leaf == "tags" and item.holders == ()  # an item of tags is a tag
    result = {"location": {"name": "Lisbon"}, "author": [{"id": "a1"}], "tags": ["x"]}
    assert [read_path(result, n) for n in names(output)][3:] == ["Lisbon", "a1", "x"]


def test_a_result_that_is_an_array_or_a_scalar_is_the_whole_result() -> None:
    listing = {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}}}}
    assert names(listing) == ["", "[].id"]
    assert names({"type": "array", "items": {"type": "integer"}}) == ["", "[]"]
    assert names({"type": "string"}) == [""]
    assert names({}) == []


def test_refs_allof_and_nullable_objects_are_followed() -> None:
    output = {
        "$ref": "#/$defs/Pet",
        "$defs": {
            "Pet": {
                "allOf": [
                    {"$ref": "#/$defs/Named"},
                    {"type": "object", "properties": {"id": {"type": "string"}}},
                ]
            },
            "Named": {"type": "object", "properties": {"name": {"type": "string"}}},
            "Owner": {"type": "object", "title": "Owner", "properties": {"id": {"type": "string"}}},
        },
    }
    assert names(output) == ["name", "id"]
    wrapped = {
        "type": "object",
        "properties": {"owner": {"anyOf": [{"$ref": "#/definitions/Owner"}, {"type": "null"}]}},
        "definitions": output["$defs"],
    }
    assert names(wrapped) == ["owner", "owner.id"]
    owner_id = find_field(tool(wrapped), "owner.id", output=True)
    assert owner_id is not None and owner_id.places == ("owner", "Owner")


def test_depth_and_count_are_bounded() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for level in range(MAX_DEPTH + 3):
        deep = {"type": "object", "properties": {f"l{level}": deep}}
    assert max(n.count(".") for n in names(deep)) == MAX_DEPTH
    wide = {
        "type": "object",
        "properties": {
            f"p{i}": {"type": "object", "properties": {f"c{j}": {"type": "string"} for j in range(10)}}
            for i in range(20)
        },
    }
    found = names(wide)
    assert len(found) == 20 + MAX_NESTED
    assert all("." not in n for n in found[:20])


def test_property_names_with_path_characters_round_trip() -> None:
    output = {
        "type": "object",
        "properties": {"a.b": {"type": "object", "properties": {"c": {"type": "string"}}}},
    }
    paths = names(output)
    assert paths == ["a\\.b", "a\\.b.c"]
    assert read_path({"a.b": {"c": "v"}}, paths[1]) == "v"


def test_inputs_are_the_top_level_parameters() -> None:
    assert [f.name for f in input_fields(tool({}))] == ["q"]
    assert input_fields(Tool("x", "ns")) == []


def test_an_array_without_items_schema_has_items_of_any_type() -> None:
    output = {
        "type": "object",
        "properties": {
            "post_ids": {"type": "array", "description": "List of post IDs."},
            "tags": {"type": "array", "items": {"type": "string", "description": "A tag."}},
        },
    }
    assert names(output) == ["post_ids", "tags", "post_ids[]", "tags[]"]
    item = find_field(tool(output), "post_ids[]", output=True)
    assert item is not None and dict(item.schema) == {"description": "List of post IDs."}
    tag = find_field(tool(output), "tags[]", output=True)
    assert tag is not None and tag.schema["description"] == "A tag."  # its own description wins


def test_a_nested_id_takes_the_entity_of_the_nearest_object_holding_it() -> None:
    comment = schema(id="integer", text="string")
    tree = {
        "$ref": "#/$defs/Tree",
        "$defs": {
            "Tree": {
                "type": "object",
                "title": "Tree",
                "properties": {
                    "comment": comment,
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}},
                    "owner": {"$ref": "#/$defs/Account"},
                },
            },
            "Account": schema(id="integer", name="string"),
        },
    }
    thread = Tool("get_thread", "tube", parameters=schema(threadId="integer"), output_parameters=tree)
    roles = {f.name: signature(thread, f, True) for f in output_fields(thread)}
    # inside the tree, each comment's id is a comment's; the owner's is an account's, and an
    # owner's (the property holding an Account)
    assert roles["comment.id"][3] == roles["children[].comment.id"][3] == "id:|comment"
    assert roles["owner.id"][3] == "id:owner|account" and roles["owner.name"][0] == "account name"
    reply = Tool("delete_comment", "tube", parameters=schema(commentId="integer"))
    graph = DataflowEnrichment(threshold=0.01).enrich(ToolRegistry([thread, reply]))
    found = {(e.output, e.input) for e in graph.edges_from(0)}
    assert ("children[].comment.id", "commentId") in found and ("owner.id", "commentId") not in found


def test_an_action_that_only_says_how_it_went_has_no_outputs() -> None:
    # API-Bank's DeleteAlarm answers {"status": "success"}: "take the status and send an email"
    # wired it into ForgotPassword's status. A lookup's status is its answer.
    status = {"type": "object", "properties": {"status": {"type": "string"}, "message": {"type": "string"}}}
    assert output_fields(Tool("DeleteAlarm", "bank", output_parameters=status)) == []
    assert output_fields(Tool("add_reminder", "bank", output_parameters=status)) == []
    assert [f.name for f in output_fields(Tool("TravelStatus", "bank", output_parameters=status))] == [
        "status",
        "message",
    ]
    deleted = {"type": "object", "properties": {"petId": {"type": "string"}, "status": {"type": "string"}}}
    assert [f.name for f in output_fields(Tool("deletePet", "pets", output_parameters=deleted))] == [
        "petId",
        "status",
    ]  # an action that also says what it acted on keeps all of it
    for method, kept in (("GET", ["status", "message"]), ("POST", [])):
        route = {"route": {"method": method, "path": "/health"}}
        probe = Tool("health", "api", output_parameters=status, metadata=route)
        assert [f.name for f in output_fields(probe)] == kept
    graph = DataflowEnrichment(threshold=0.05).enrich(
        ToolRegistry(
            [
                Tool("DeleteAlarm", "bank", output_parameters=status),
                Tool("ForgotPassword", "bank", parameters={"type": "object", "properties": {"status": {}}}),
            ]
        )
    )
    assert len(graph) == 0
