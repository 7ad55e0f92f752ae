"""Tests of OpenAPI schemas as self-contained Draft 2020-12 (fms_dgt/core/tools/openapi/schemas.py)."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from support.openapi_specs import PETSTORE, REST, check_schemas, deep_spec, load

from fms_dgt.core.tools.engines.results import mock_result
from fms_dgt.errors import LoadError


def test_recursive_schemas_stay_finite_under_defs() -> None:
    tools, _ = load(REST / "features.yaml")
    tool = tools["plantTree"]
    params = tool.parameters
    assert params["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert set(params["$defs"]) == {"Node", "Partner"}
    json.dumps(params)  # finite: serialisable without recursion errors
    validator = Draft202012Validator(params)
    tree = {"value": 1, "children": [{"value": None, "children": [{"partner": {"of": {"value": 3}}}]}]}
    assert validator.is_valid(tree)
    assert not validator.is_valid({"children": [{"children": [{"value": "deep"}]}]})
    assert tool.output_parameters["$ref"] == "#/$defs/Node"
    assert "$id" not in params["$defs"]["Partner"]  # would re-base the "#/$defs/Node" inside it
    check_schemas(list(tools.values()))


def test_small_acyclic_refs_are_inlined_and_inline_limit_zero_keeps_defs() -> None:
    tools, _ = load(PETSTORE)
    assert "$defs" not in tools["listPets"].output_parameters
    tools, _ = load(PETSTORE, inline_limit=0)
    output = tools["listPets"].output_parameters
    assert output["items"] == {"$ref": "#/$defs/Pet"}
    assert set(output["$defs"]) == {"Pet", "NewPet"}
    assert Draft202012Validator(output).is_valid([{"id": "1", "name": "a"}])


def test_openapi_keywords_are_translated_or_dropped() -> None:
    tools, _ = load(REST / "features.yaml")
    shape = tools["getShape"].output_parameters
    text = json.dumps(shape)
    assert "discriminator" not in text and "x-vendor" not in text
    circle = shape["oneOf"][0]
    assert circle["type"] == ["object", "null"]
    assert circle["properties"]["radius"] == {"type": "number", "examples": [2.5], "exclusiveMinimum": 0}


def test_read_only_properties_are_not_sent_and_write_only_ones_not_answered() -> None:
    # Airflow's PATCH /dags/{dag_id} takes a DAG whose fields but is_paused are readOnly: the
    # generated calls sent a DAG's fileloc, next_dagrun and scheduler_lock, which no client sets.
    tools, _ = load(REST / "features.yaml")
    params = tools["putThing"].parameters
    assert "created" not in params["properties"] and "created" not in params["required"]
    assert {"body_id", "label"} <= set(params["required"]) and "secret" in params["properties"]
    tree = tools["plantTree"]
    node = tree.parameters["$defs"]["Node"]  # a readOnly $ref counts as readOnly
    assert "planted" not in node["properties"] and "keeper_pin" in node["properties"]
    answered = tree.output_parameters["$defs"]["Node"]
    assert "planted" in answered["properties"] and "keeper_pin" not in answered["properties"]
    check_schemas(list(tools.values()))


def test_absurdly_deep_schema_is_skipped_not_a_crash(tmp_path: Path) -> None:
    path = deep_spec(tmp_path, 2000)
    original = sys.getrecursionlimit()
    sys.setrecursionlimit(3000)  # the JSON parser copes; converting the schema would not
    try:
        tools, loader = load(path)
    finally:
        sys.setrecursionlimit(original)
    assert set(tools) == {"get_fine"}
    assert "nested too deeply" in loader.report.skipped[0].message


def test_self_referencing_yaml_alias_is_a_load_error_not_a_hang(tmp_path: Path) -> None:
    spec = tmp_path / "alias.yaml"
    spec.write_text(
        "openapi: 3.1.0\ninfo: {title: a, version: '1'}\npaths:\n  /a:\n    get:\n      responses:\n"
        "        '200':\n          description: x\n          content:\n            application/json:\n"
        "              schema: {$ref: /s/thing}\n"
        "components:\n  schemas:\n    Thing: &t\n      $id: /s/thing\n      properties:\n        self: *t\n"
    )
    # The parser refuses an alias inside the collection it names, before anything walks it.
    with pytest.raises(LoadError, match=r"alias \*t .*self-reference") as info:
        load(spec)
    assert info.value.line == 17


def test_an_inlined_response_component_keeps_its_name_as_title(tmp_path: Path) -> None:
    # Inlining drops the $ref, the only word saying that a movie's mainDirector is a staff member.
    movie = {"application/json": {"schema": {"$ref": "#/components/schemas/Movie"}}}
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/movies": {
                "post": {
                    "operationId": "addMovie",
                    "requestBody": {"content": movie},
                    "responses": {"200": {"description": "ok", "content": movie}},
                }
            }
        },
        "components": {
            "schemas": {
                "Movie": {
                    "type": "object",
                    "properties": {
                        "mainDirector": {"$ref": "#/components/schemas/StaffHeader"},
                        "studio": {"$ref": "#/components/schemas/Titled"},
                        "rating": {"$ref": "#/components/schemas/age~1rating"},
                    },
                },
                "StaffHeader": {"type": "object", "properties": {"uid": {"type": "string"}}},
                "Titled": {"type": "object", "title": "Company", "properties": {"uid": {"type": "string"}}},
                "age/rating": {"type": "object", "properties": {"min": {"type": "integer"}}},
            }
        },
    }
    path = tmp_path / "movies.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    tools, _ = load(path)
    tool = tools["addMovie"]
    movie = tool.output_parameters
    assert movie["title"] == "Movie"
    assert movie["properties"]["mainDirector"]["title"] == "StaffHeader"
    assert movie["properties"]["studio"]["title"] == "Company"  # its own title is kept
    assert movie["properties"]["rating"]["title"] == "age/rating"  # the name, not its pointer token
    # Request schemas stay as written: a title there would be one more word in every prompt.
    request = json.dumps(tool.parameters)
    assert "StaffHeader" not in request and '"title": "Movie"' not in request
    check_schemas(list(tools.values()))


def test_a_discriminator_names_the_branch_each_object_takes(tmp_path: Path) -> None:
    # Airflow's schedule interval is a TimeDelta, a RelativeDelta or a CronExpression, told apart
    # by "__type"; with the discriminator dropped, generated intervals carried "__type": "river-4".
    def shape(*props: str) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {p: {"type": "string"} for p in props},
            "required": list(props),
        }

    union = {
        "oneOf": [{"$ref": f"#/components/schemas/{n}"} for n in ("Cron", "Delta", "Listed")]
        + [shape("__type", "inline")],
        "discriminator": {
            "propertyName": "__type",
            "mapping": {"delta": "#/components/schemas/Delta", "timedelta": "Delta", "n": 7, "7": None},
        },
    }
    dag = {"type": "object", "properties": {"schedule_interval": union}, "required": ["schedule_interval"]}
    body = {"application/json": {"schema": dag}}
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/s": {
                "get": {
                    "operationId": "getSchedule",
                    "responses": {"200": {"description": "ok", "content": body}},
                }
            }
        },
        "components": {
            "schemas": {
                "Cron": shape("__type", "value"),
                "Delta": shape("__type", "days"),
                # a branch whose property lists its own values keeps them ("Listed" fits none)
                "Listed": {**shape("days"), "properties": {"__type": {"enum": ["listed"]}}},
            }
        },
    }
    path = tmp_path / "schedule.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    tools, _ = load(path)
    check_schemas(list(tools.values()))
    interval = tools["getSchedule"].output_parameters["properties"]["schedule_interval"]
    validator = Draft202012Validator(interval)
    assert validator.is_valid({"__type": "Cron", "value": "0 6 * * *"})
    assert not validator.is_valid({"__type": "Delta", "value": "0 6 * * *"})  # a Delta has days
    assert validator.is_valid({"__type": "timedelta", "days": "2"})  # both values mapped to it
    assert not validator.is_valid({"__type": "Delta", "days": "2"})  # mapped: its name is no value
    assert validator.is_valid({"__type": "listed", "days": "2"})
    assert validator.is_valid({"__type": "anything", "inline": "x"})  # an inline branch is untagged
    # and the generated objects say which branch they are
    for seed in range(12):
        value = mock_result(tools["getSchedule"], {}, random.Random(seed))[0]["schedule_interval"]
        assert validator.is_valid(value)
        if "value" in value:
            assert value["__type"] == "Cron" and value["value"].count(" ") == 4  # a cron expression


@pytest.mark.parametrize(
    "tag",
    [
        {"$ref": "#/components/schemas/PetType"},  # an enum reached through a reference
        {"type": "integer"},  # a tag typed as a number
        {"type": "string", "pattern": "^[a-z]+$"},  # a name no component has
    ],
)
def test_a_discriminator_tags_no_branch_whose_tag_property_may_not_take_the_name(
    tmp_path: Path, tag: dict[str, Any]
) -> None:
    # Tagging these made the schema one no value satisfies: every simulated result failed.
    def pet() -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"petType": tag, "name": {"type": "string"}},
            "required": ["petType"],
        }

    union = {"oneOf": [{"$ref": "#/components/schemas/Cat"}, {"$ref": "#/components/schemas/Dog"}]}
    body = {"application/json": {"schema": {**union, "discriminator": {"propertyName": "petType"}}}}
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/s": {
                "get": {"operationId": "getPet", "responses": {"200": {"description": "ok", "content": body}}}
            }
        },
        "components": {
            "schemas": {"PetType": {"type": "string", "enum": ["cat", "dog"]}, "Cat": pet(), "Dog": pet()}
        },
    }
    path = tmp_path / "pets.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    tools, _ = load(path)
    assert '"const": "Cat"' not in json.dumps(tools["getPet"].output_parameters)  # no branch tagged
    for seed in range(4):  # (the branches are alike, so a value fits both: oneOf cannot hold)
        assert isinstance(mock_result(tools["getPet"], {}, random.Random(seed))[0]["petType"], str | int)
