"""Tests of one operation as one tool's fields (fms_dgt/core/tools/openapi/converter.py)."""

from __future__ import annotations

import json
from pathlib import Path

from jsonschema import Draft202012Validator
from support.openapi_specs import PETSTORE, REST, load, routes

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.openapi import ResponseSpec, Route, route_of, slug


def test_output_schema_from_the_success_response() -> None:
    tools, _ = load(PETSTORE)
    output = tools["createPet"].output_parameters
    assert route_of(tools["createPet"]).response == ResponseSpec(
        status="201", content_type="application/json"
    )
    validator = Draft202012Validator(output)
    assert validator.is_valid({"id": "1", "name": "Rex", "tag": None})
    assert not validator.is_valid({"name": "Rex"})  # id is required in responses
    assert tools["deletePet"].output_parameters == {}


def test_success_status_order(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n"
        "  /a:\n    get:\n      responses: {'404': {description: x}, '204': {description: x}, "
        "'200': {description: x}}\n"
        "  /b:\n    get:\n      responses: {'2XX': {description: x}, default: {description: x}}\n"
        "  /c:\n    get:\n      responses: {default: {description: x}}\n"
        "  /d:\n    get:\n      responses: {'500': {description: x}}\n"
    )
    found = routes(spec)
    assert [found[f"get_{p}"].response for p in "abcd"] == [
        ResponseSpec(status="200"),
        ResponseSpec(status="2XX"),
        ResponseSpec(status="default"),
        None,
    ]


def test_operation_without_parameters_is_a_tool() -> None:
    tools, _ = load(PETSTORE)
    assert tools["getText"].parameters == {"type": "object", "properties": {}}
    route = route_of(tools["getText"])
    assert route.arguments == {} and route.body is None


def test_slug_names_without_operation_id() -> None:
    tools, _ = load(REST / "features.yaml")
    assert "get_plain_by_a_items" in tools
    assert slug("GET", "/pets/{petId}/toys") == "get_pets_by_petId_toys"
    assert slug("delete", "/") == "delete"


def test_metadata_keeps_human_keys_on_top_and_the_route_under_one_key() -> None:
    tools, _ = load(PETSTORE)
    tool = tools["echo"]
    assert set(tool.metadata) == {"kind", "source", "operation_id", "tags", "deprecated", "route"}
    assert tool.metadata["kind"] == "rest" and tool.kind == "rest"
    assert tool.metadata["source"].endswith("petstore.yaml#/paths/~1echo~1{value}/get")
    assert tool.metadata["tags"] == ["debug"]
    assert tool.metadata["operation_id"] == "echo" and tool.metadata["deprecated"] is False
    route = route_of(tool)
    assert (route.method, route.path, route.openapi_version) == ("GET", "/echo/{value}", "3.0")


def test_route_survives_the_json_round_trip_of_tools_list() -> None:
    """``fms-dgt tools list --json`` writes ``Tool.to_dict()``; tools read back keep a usable route."""
    tools, _ = load(PETSTORE)
    for tool in tools.values():
        text = json.dumps(tool.to_dict())
        again = Tool.from_dict(json.loads(text))
        assert route_of(again) == route_of(tool)
        assert Route.from_dict(route_of(tool).to_dict()) == route_of(tool)


def test_success_response_examples_are_kept_for_the_mock_engine(tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    pet = {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}
    spec.write_text(
        json.dumps(
            {
                "openapi": "3.0.0",
                "info": {"title": "t", "version": "1"},
                "components": {"examples": {"rex": {"value": {"id": 2, "name": "Rex"}}}},
                "paths": {
                    "/one": {
                        "get": {
                            "operationId": "one",
                            "responses": {
                                "200": {
                                    "description": "x",
                                    "content": {"application/json": {"schema": pet, "example": {"id": 1}}},
                                },
                                "404": {
                                    "description": "x",
                                    "content": {"application/json": {"example": {"error": "no"}}},
                                },
                            },
                        }
                    },
                    "/many": {
                        "get": {
                            "operationId": "many",
                            "responses": {
                                "200": {
                                    "description": "x",
                                    "content": {
                                        "application/json": {
                                            "schema": pet,
                                            "examples": {
                                                "rex": {"$ref": "#/components/examples/rex"},
                                                "far": {"externalValue": "https://example.com/x.json"},
                                                "tom": {"summary": "s", "value": {"id": 3, "name": "Tom"}},
                                            },
                                        }
                                    },
                                }
                            },
                        }
                    },
                    "/none": {"get": {"operationId": "none", "responses": {"200": {"description": "x"}}}},
                },
            }
        )
    )
    tools, _ = load(spec)
    assert tools["one"].metadata["result_examples"] == [{"id": 1}], "the success response's, not the 404's"
    assert tools["many"].metadata["result_examples"] == [{"id": 2, "name": "Rex"}, {"id": 3, "name": "Tom"}]
    assert "result_examples" not in tools["none"].metadata


def test_swagger_response_examples_for_the_chosen_media_type(tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "swagger": "2.0",
                "info": {"title": "t", "version": "1"},
                "produces": ["application/json"],
                "paths": {
                    "/a": {
                        "get": {
                            "operationId": "a",
                            "responses": {
                                "200": {
                                    "description": "x",
                                    "schema": {"type": "object"},
                                    "examples": {"application/json": {"ok": True}, "text/plain": "ok"},
                                }
                            },
                        }
                    }
                },
            }
        )
    )
    tools, _ = load(spec)
    assert tools["a"].metadata["result_examples"] == [{"ok": True}]
