"""Tests of parameters as tool arguments (fms_dgt/core/tools/openapi/parameters.py)."""

from __future__ import annotations

from pathlib import Path

from support.openapi_specs import PETSTORE, REST, load, routes

from fms_dgt.core.tools.openapi import ArgumentSpec
from fms_dgt.core.tools.openapi.parameters import ArgumentsBuilder


def test_parameters_and_argument_specs() -> None:
    tools, _ = load(PETSTORE)
    assert tools["echo"].parameters["required"] == ["value"]
    args = routes(PETSTORE)["echo"].arguments
    assert args["value"] == ArgumentSpec(location="path", name="value", style="simple", explode=False)
    assert args["words"].style == "pipeDelimited"
    assert args["filter"] == ArgumentSpec(location="query", name="filter", style="deepObject", explode=True)
    assert args["X-Trace"].location == "header"
    assert args["session"].location == "cookie"


def test_path_level_parameters_are_merged() -> None:
    tools, _ = load(PETSTORE)
    assert tools["getPet"].parameters["required"] == ["petId"]
    assert routes(PETSTORE)["deletePet"].arguments["petId"].location == "path"


def test_swagger2_collection_format_becomes_a_style() -> None:
    tools, _ = load(REST / "swagger2.yaml")
    listing = tools["listItems"]
    assert routes(REST / "swagger2.yaml")["listItems"].arguments["ids"].style == "pipeDelimited"
    assert listing.parameters["properties"]["limit"] == {"type": "integer", "minimum": 1}


def test_argument_name_clashes_are_renamed_by_location() -> None:
    tools, _ = load(REST / "features.yaml")
    args = routes(REST / "features.yaml")["putThing"].arguments
    assert args["id"].location == "path"
    assert args["query_id"] == ArgumentSpec(
        location="query", name="id", style="form", explode=True, renamed_from="id"
    )
    assert args["query_id"].to_dict() == {
        "in": "query",
        "name": "id",
        "style": "form",
        "explode": True,
        "renamed_from": "id",
    }
    assert args["body_id"].location == "body" and args["body_id"].name == "id"
    assert "Accept" not in args  # reserved header parameter, ignored per OpenAPI 3
    assert any("Accept" in n for n in tools["putThing"].metadata["normalised"])


def test_builder_numbers_repeated_clashes() -> None:
    builder = ArgumentsBuilder()
    names = [builder.add("id", where, {}, {}, False) for where in ("path", "query", "query", "body")]
    assert names == ["id", "query_id", "query_id_2", "body_id"]
    assert builder.arguments["query_id_2"].renamed_from == "id"
    assert builder.arguments["id"].renamed_from is None


def test_a_shared_parameter_is_renamed_only_where_it_clashes(tmp_path: Path) -> None:
    """Parameter nodes shared by $ref are translated once; what one operation does to the
    argument (a rename) must not leak into another."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "openapi: 3.0.0\ninfo: {title: t, version: '1'}\n"
        "components:\n  parameters:\n    IdQuery: {name: id, in: query, schema: {type: integer}}\n"
        "paths:\n"
        "  /a/{id}:\n    get:\n      parameters:\n"
        "        - {name: id, in: path, required: true, schema: {type: string}}\n"
        "        - {$ref: '#/components/parameters/IdQuery'}\n      responses: {}\n"
        "  /b:\n    get:\n      parameters: [{$ref: '#/components/parameters/IdQuery'}]\n"
        "      responses: {}\n"
    )
    tools, _ = load(spec)
    found = routes(spec)
    assert found["get_a_by_id"].arguments["query_id"].renamed_from == "id"
    assert found["get_b"].arguments["id"] == ArgumentSpec(
        location="query", name="id", style="form", explode=True
    )
    assert tools["get_a_by_id"].parameters["properties"]["query_id"] == {"type": "integer"}
    assert tools["get_b"].parameters["properties"]["id"] == {"type": "integer"}
