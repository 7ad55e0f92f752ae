"""Tests of the typed route record (fms_dgt/core/tools/openapi/route.py)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.openapi import (
    ArgumentSpec,
    BodySpec,
    Interner,
    ResponseSpec,
    Route,
    RouteError,
    SecurityScheme,
    route_of,
)
from fms_dgt.core.tools.openapi.route import path_problem
from fms_dgt.errors import ToolDefinitionError

ROUTE = Route(
    method="post",
    path="/pets/{petId}",
    base_url="https://api.example/v1",
    servers=("https://api.example/v1", "https://backup.example/v1"),
    arguments={
        "petId": ArgumentSpec(location="path", name="petId", style="simple", explode=False),
        "query_id": ArgumentSpec(location="query", name="id", renamed_from="id", allow_reserved=True),
        "photo": ArgumentSpec(location="body", name="photo", file=True, part_content_type="image/png"),
    },
    body=BodySpec(content_type="multipart/form-data", required=True, alternatives=("application/json",)),
    response=ResponseSpec(status="201", content_type="application/json"),
    security=({"bearer": ()}, {"key": ("read", "write")}, {}),
    security_schemes={
        "bearer": SecurityScheme(type="http", scheme="bearer", bearer_format="JWT"),
        "key": SecurityScheme(type="apiKey", location="header", name="X-Key"),
    },
    openapi_version="3.1",
)


def test_dict_form_is_json_in_the_spec_spelling() -> None:
    data = ROUTE.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["method"] == "POST"  # normalised to upper case
    assert data["arguments"]["petId"] == {"in": "path", "name": "petId", "style": "simple", "explode": False}
    assert data["arguments"]["query_id"] == {
        "in": "query",
        "name": "id",
        "allow_reserved": True,
        "renamed_from": "id",
    }
    assert data["security"] == [{"bearer": []}, {"key": ["read", "write"]}, {}]
    assert data["security_schemes"]["bearer"] == {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}
    assert data["security_schemes"]["key"] == {"type": "apiKey", "in": "header", "name": "X-Key"}
    assert data["body"] == {
        "content_type": "multipart/form-data",
        "required": True,
        "placement": "flattened",
        "alternatives": ["application/json"],
    }


def test_round_trip_and_equality() -> None:
    again = Route.from_dict(json.loads(json.dumps(ROUTE.to_dict())))
    assert again == ROUTE
    minimal = Route(method="GET", path="/", base_url="/")
    assert Route.from_dict(minimal.to_dict()) == minimal
    assert minimal.to_dict()["body"] is None and minimal.to_dict()["response"] is None


def test_frozen_all_the_way_down() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        ROUTE.path = "/other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        ROUTE.arguments["new"] = ArgumentSpec(location="query", name="new")  # type: ignore[index]
    with pytest.raises(TypeError):
        ROUTE.security[0]["other"] = ()  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ROUTE.arguments["petId"].name = "x"  # type: ignore[misc]


def _broken(change: dict[str, Any]) -> dict[str, Any]:
    data = ROUTE.to_dict()
    for dotted, value in change.items():
        *parents, last = dotted.split(".")
        node = data
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if value is KeyError:
            del node[last]
        else:
            node[last] = value
    return data


@pytest.mark.parametrize(
    ("change", "field", "why"),
    [
        ({"path": KeyError}, "path", "missing"),
        ({"method": 5}, "method", "expected str, got int"),
        ({"arguments.petId.in": "matrix"}, "arguments.petId.in", "'matrix' is not one of path"),
        ({"arguments.petId.explode": "yes"}, "arguments.petId.explode", "expected bool"),
        ({"arguments.petId.explod": True}, "arguments.petId", "unknown key(s) explod"),
        ({"arguments.petId": ["path"]}, "arguments.petId", "expected a mapping, got list"),
        ({"body.placement": "inline"}, "body.placement", "'inline' is not one of flattened, nested"),
        ({"response.status": 201}, "response.status", "expected str"),
        ({"security.1.key": "read"}, "security.1.key", "expected a list of scope names"),
        ({"security_schemes.key.in": 3}, "security_schemes.key.in", "expected str"),
        ({"servers": ["a", 2]}, "servers", "expected a list of strings"),
        ({"extra": 1}, "", "unknown key(s) extra"),
    ],
)
def test_malformed_routes_name_the_field(change: dict[str, Any], field: str, why: str) -> None:
    with pytest.raises(RouteError) as info:
        Route.from_dict(_broken(change), "pets::createPet")
    message = str(info.value)
    assert message.startswith("invalid route of pets::createPet")
    assert why in message and "Load the tool again with the rest loader" in message
    assert info.value.field == field and info.value.owner == "pets::createPet"
    assert isinstance(info.value, ToolDefinitionError)


def test_route_of_a_tool_without_a_route_says_so() -> None:
    tool = Tool("getPet", "pets", metadata={"kind": "file"})
    with pytest.raises(RouteError, match=r"no route for tool pets::getPet: metadata\['route'\] is missing"):
        route_of(tool)
    tool = Tool("getPet", "pets", metadata={"kind": "rest", "route": "GET /pets"})
    with pytest.raises(RouteError, match="invalid route of pets::getPet: expected a mapping, got str"):
        route_of(tool)
    tool = Tool("getPet", "pets", metadata={"route": ROUTE.to_dict()})
    assert route_of(tool) == ROUTE


def test_interner_shares_equal_specs_and_their_json() -> None:
    interner = Interner()
    first = interner.make(ArgumentSpec, location="query", name="limit", style="form", explode=True)
    again = interner.make(ArgumentSpec, location="query", name="limit", style="form", explode=True)
    other = interner.make(ArgumentSpec, location="query", name="limit", style="form", explode=False)
    assert first is again and first is not other and first != other
    assert first.shared_dict() is again.shared_dict()  # built once
    copy = first.to_dict()
    copy["name"] = "changed"  # a to_dict() result belongs to the caller
    assert first.shared_dict()["name"] == "limit" and first.to_dict()["name"] == "limit"
    route = Route(method="GET", path="/", base_url="/", arguments={"a": first, "b": again})
    shared = route.to_dict(shared=True)
    assert shared["arguments"]["a"] is shared["arguments"]["b"]
    fresh = route.to_dict()
    assert fresh == shared and fresh["arguments"]["a"] is not fresh["arguments"]["b"]


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("3/digits", "does not start with '/'"),
        ("@127.0.0.1:9999/x", "does not start with '/'"),
        ("", "does not start with '/'"),
        ("/../../outside", "dot segment '..'"),
        ("/a/./b", "dot segment '.'"),
        ("/a/%2e%2e/b", "dot segment '..'"),
        ("/a/%2E/b", "dot segment '.'"),
        ("/files/..%2Fetc", "dot segment '..'"),
        ("/a\\..\\b", "dot segment '..'"),
    ],
)
def test_path_templates_that_leave_the_base_path(path: str, why: str) -> None:
    assert why in (path_problem(path) or "")
    data = {**ROUTE.to_dict(), "path": path}
    with pytest.raises(RouteError, match="field path: unsafe path template") as info:
        Route.from_dict(data, "t::x")
    assert why in str(info.value)


@pytest.mark.parametrize(
    "path", ["/", "/pets/{petId}", "/.well-known/openid", "/v1/{name}:cancel", "/a..b/c."]
)
def test_ordinary_path_templates_are_fine(path: str) -> None:
    assert path_problem(path) is None
