"""Tests of request bodies as tool arguments (fms_dgt/core/tools/openapi/bodies.py)."""

from __future__ import annotations

from support.openapi_specs import PETSTORE, REST, check_schemas, load, routes

from fms_dgt.core.tools.openapi import ArgumentSpec, BodySpec


def test_json_body_is_flattened_from_a_ref_and_keyword_translation_applies() -> None:
    tools, _ = load(PETSTORE)
    tool = tools["createPet"]
    assert tool.parameters["properties"]["name"] == {"type": "string"}
    assert tool.parameters["properties"]["tag"] == {"type": ["string", "null"]}  # nullable: true
    assert tool.parameters["required"] == ["name"]
    route = routes(PETSTORE)["createPet"]
    assert route.body is not None and route.body.placement == "flattened"
    assert route.arguments["name"] == ArgumentSpec(
        location="body", name="name", content_type="application/json"
    )
    assert route.arguments["name"].to_dict() == {
        "in": "body",
        "name": "name",
        "content_type": "application/json",
    }


def test_multipart_and_form_bodies() -> None:
    tools, _ = load(PETSTORE)
    upload = tools["uploadPhoto"]
    assert upload.parameters["properties"]["file"] == {"type": "string", "format": "binary"}
    found = routes(PETSTORE)
    assert found["uploadPhoto"].arguments["file"].file is True
    assert found["uploadPhoto"].body is not None
    assert found["uploadPhoto"].body.content_type == "multipart/form-data"
    form = found["submitForm"].arguments["meta"]
    assert form.style == "deepObject"
    assert form.content_type == "application/x-www-form-urlencoded"


def test_swagger2_body_and_form_data() -> None:
    tools, _ = load(REST / "swagger2.yaml")
    assert sorted(tools) == ["addItem", "get_ping", "listItems", "uploadPicture"]
    add = tools["addItem"]
    assert add.parameters["required"] == ["name"]
    assert add.parameters["properties"]["price"] == {"type": "number", "exclusiveMinimum": 0}
    assert add.parameters["properties"]["name"]["examples"] == ["widget"]
    assert "x-internal" in add.parameters["properties"]  # a property name, not an extension key
    upload = tools["uploadPicture"]
    assert upload.parameters["properties"]["picture"] == {"type": "string", "format": "binary"}
    route = routes(REST / "swagger2.yaml")["uploadPicture"]
    assert route.arguments["picture"].file is True
    assert route.body == BodySpec(content_type="multipart/form-data", required=True, placement="flattened")
    assert upload.parameters["required"] == ["id", "picture"]
    check_schemas(list(tools.values()))


def test_nested_body_mode_and_non_json_bodies() -> None:
    tools, _ = load(PETSTORE, body="nested")
    create = tools["createPet"]
    assert list(create.parameters["properties"]) == ["body"]
    assert routes(PETSTORE, body="nested")["createPet"].arguments["body"].whole_body is True
    assert create.parameters["required"] == ["body"]
    assert create.parameters["properties"]["body"]["required"] == ["name"]
    tools, _ = load(REST / "features.yaml")
    found = routes(REST / "features.yaml")
    assert found["postText"].arguments["body"].content_type == "text/plain"
    assert tools["emptyForm"].parameters == {"type": "object", "properties": {}}  # nothing to send
    assert found["emptyForm"].body is not None and found["emptyForm"].body.placement == "flattened"
