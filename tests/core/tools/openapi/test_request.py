"""Tests of building a call's HTTP request from its route (fms_dgt/core/tools/openapi/request.py).

End-to-end behaviour against a real server is in tests/core/tools/engines/test_rest.py; these pin
the serialisation rules one by one.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qs

import pytest

from fms_dgt.core.tools.openapi import (
    ArgumentSpec,
    BodySpec,
    Request,
    RESTCallError,
    Route,
    body_content,
    build_request,
    resolve_base_url,
)
from fms_dgt.core.tools.openapi.request import encoded_template, path_value, place, query_pairs


def spec(location: str, name: str = "ids", **fields: Any) -> ArgumentSpec:
    return ArgumentSpec(location=location, name=name, **fields)


@pytest.mark.parametrize(
    ("style", "explode", "value", "expected"),
    [
        ("simple", False, [3, 4, 5], "3,4,5"),
        ("simple", True, {"role": "admin", "n": 5}, "role=admin,n=5"),
        ("simple", False, {"role": "admin", "n": 5}, "role,admin,n,5"),
        ("label", False, [3, 4], ".3,4"),
        ("label", True, [3, 4], ".3.4"),
        ("matrix", False, 5, ";id=5"),
        ("matrix", True, [3, 4], ";id=3;id=4"),
        ("matrix", True, {"a": 1, "b": 2}, ";a=1;b=2"),
        ("simple", False, "a/b", "a%2Fb"),
        ("simple", False, True, "true"),
    ],
)
def test_path_styles(style: str, explode: bool, value: Any, expected: str) -> None:
    assert path_value("id", value, style, explode) == expected


@pytest.mark.parametrize(
    ("fields", "value", "expected"),
    [
        ({"style": "form", "explode": False}, [1, 2], ["ids=1,2"]),
        ({"style": "form", "explode": True}, {"a": 1, "b": "x y"}, ["a=1", "b=x%20y"]),
        ({"style": "form", "explode": False}, {"a": 1}, ["ids=a,1"]),
        ({"style": "spaceDelimited", "explode": False}, [1, 2], ["ids=1%202"]),
        ({"style": "form", "explode": True, "allow_reserved": True}, "a/b?c", ["ids=a/b?c"]),
        # allowReserved never lets a value end the query or add pairs
        ({"allow_reserved": True}, "a#b&c=d+e", ["ids=a%23b%26c%3Dd%2Be"]),
        ({"allow_reserved": True}, ["x&y", "#"], ["ids=x%26y", "ids=%23"]),
        (
            {"style": "deepObject", "explode": True, "allow_reserved": True},
            {"k": "v#w"},
            ["ids%5Bk%5D=v%23w"],
        ),
        ({"style": "form", "explode": True}, "a/b?c", ["ids=a%2Fb%3Fc"]),
        ({"style": "deepObject", "explode": True}, {"a": {"b": 1}}, ["ids%5Ba%5D%5Bb%5D=1"]),
        ({"content_type": "application/json"}, {"a": 1}, ["ids=%7B%22a%22%3A%201%7D"]),
        ({}, [1, 2], ["ids=1", "ids=2"]),  # no style given: form, exploded
    ],
)
def test_query_styles(fields: dict[str, Any], value: Any, expected: list[str]) -> None:
    assert query_pairs("ids", value, spec("query", **fields)) == expected


def test_parameters_with_content_are_sent_as_json() -> None:
    request = Request("GET", "http://h", "/a")
    place(request, spec("header", "X-Filter", content_type="application/json"), {"x": [1]})
    assert request.headers == {"X-Filter": '{"x":[1]}'}


def test_path_placeholder_must_exist() -> None:
    request = Request("GET", "http://h", "/a/{id}")
    with pytest.raises(RESTCallError, match=r"path parameter 'other' has no \{other\} placeholder"):
        place(request, spec("path", "other"), 1)


ROUTE = Route(
    method="GET",
    path="/things/{id}",
    base_url="/relative",
    arguments={
        "id": spec("path", "id"),
        "query_id": spec("query", "id", renamed_from="id"),
        "tags": spec("query", "tags", style="form", explode=False),
    },
)


def test_build_request_places_every_argument_under_its_own_name() -> None:
    request = build_request(ROUTE, {"id": "a b", "query_id": 7, "tags": ["x", "y"]}, "http://h", "t::x")
    assert request.full_url() == "http://h/things/a%20b?id=7&tags=x,y"


def test_build_request_errors_name_the_tool() -> None:
    with pytest.raises(
        RESTCallError, match="unknown argument 'nope' for t::x: accepted are id, query_id, tags"
    ):
        build_request(ROUTE, {"id": 1, "nope": 2}, "http://h", "t::x")
    with pytest.raises(RESTCallError, match=re.escape("missing path parameter for t::x: /things/{id}")):
        build_request(ROUTE, {"query_id": 1}, "http://h", "t::x")


def test_base_url_must_be_absolute() -> None:
    with pytest.raises(RESTCallError, match="no absolute base URL for t::x: the spec gives '/relative'"):
        resolve_base_url(ROUTE, None, "t::x")
    assert resolve_base_url(ROUTE, "https://h/v1/", "t::x") == "https://h/v1"


# ---------------------------------------------------------------------------- bodies


def request_with(
    fields: dict[str, tuple[Any, ArgumentSpec]], body: Any = None, has_body: bool = False
) -> Request:
    return Request("POST", "http://h", "/", fields=fields, body=body, has_body=has_body)


def test_no_body_unless_given_or_required() -> None:
    json_body = BodySpec(content_type="application/json")
    assert body_content(request_with({}), json_body) == {}
    assert body_content(request_with({}), None) == {}
    required = BodySpec(content_type="application/json", required=True)
    request = request_with({})
    assert body_content(request, required) == {"content": b"{}"}
    assert request.headers["Content-Type"] == "application/json"


def test_json_and_text_bodies() -> None:
    field_spec = spec("body", "name", content_type="application/json")
    kwargs = body_content(
        request_with({"name": ("Rëx", field_spec)}), BodySpec(content_type="application/json")
    )
    assert json.loads(kwargs["content"]) == {"name": "Rëx"}
    text = request_with({}, body="plain words", has_body=True)
    assert body_content(text, BodySpec(content_type="text/plain", placement="nested")) == {
        "content": b"plain words"
    }


def test_form_urlencoded_rules() -> None:
    form = "application/x-www-form-urlencoded"
    fields = {
        "tags": (["a", "b"], spec("body", "tags", content_type=form)),
        "csv": (["a", "b"], spec("body", "csv", content_type=form, explode=False)),
        "meta": ({"k": "v"}, spec("body", "meta", content_type=form)),
        "spread": ({"x": 1}, spec("body", "spread", content_type=form, style="form", explode=True)),
        "skip": (None, spec("body", "skip", content_type=form)),
    }
    request = request_with(fields)
    kwargs = body_content(request, BodySpec(content_type=form))
    assert parse_qs(kwargs["content"].decode()) == {
        "tags": ["a", "b"],
        "csv": ["a,b"],
        "meta[k]": ["v"],
        "x": ["1"],
    }
    assert request.headers["Content-Type"] == form


def test_multipart_parts() -> None:
    fields = {
        "photo": ("bytes", spec("body", "photo", file=True, part_content_type="image/png")),
        "tags": (["a", "b"], spec("body", "tags")),
    }
    kwargs = body_content(request_with(fields), BodySpec(content_type="multipart/form-data"))
    assert kwargs == {
        "files": [("photo", ("photo", b"bytes", "image/png")), ("tags", (None, b"a")), ("tags", (None, b"b"))]
    }


def test_template_text_is_encoded_and_placeholders_kept() -> None:
    assert encoded_template("/a b?c#d/{x}.json") == "/a%20b%3Fc%23d/{x}.json"
    assert encoded_template("/v1/{name}:cancel") == "/v1/{name}:cancel"
    assert encoded_template("/%7Bx%7D/100%") == "/%7Bx%7D/100%25"
    route = Route(
        method="GET", path="/search?q={term}", base_url="http://h", arguments={"term": spec("path", "term")}
    )
    request = build_request(route, {"term": "a&b"}, "http://h", "t::x")
    assert request.full_url() == "http://h/search%3Fq=a%26b"  # a "?" of the spec stays in the path


def test_a_route_built_in_code_with_an_unsafe_path_is_refused() -> None:
    for path in ("@evil.example/x", "/../admin"):
        route = Route(method="GET", path=path, base_url="http://h")
        with pytest.raises(RESTCallError, match=r"unsafe path template .* for t::x"):
            build_request(route, {}, "http://h", "t::x")
