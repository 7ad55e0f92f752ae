"""Tests of OpenAPI response links kept in tool metadata (fms_dgt/core/tools/openapi/links.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.openapi_specs import load, operation, write_spec
from support.rest_server import serve

from fms_dgt.core.tools.openapi.links import MAX_LINKS

_ID_RESULT = {"type": "object", "properties": {"id": {"type": "string"}}}


def _spec(tmp_path: Path, paths: dict[str, Any], components: dict[str, Any] | None = None) -> Path:
    return write_spec(tmp_path, paths, components)


def _op(op_id: str, links: Any = None, params: tuple[str, ...] = ()) -> dict[str, Any]:
    return operation(op_id, params, _ID_RESULT, links)


def test_links_by_operation_id_operation_ref_and_component_ref(tmp_path: Path) -> None:
    links = {
        "ById": {"operationId": "getUser", "parameters": {"id": "$response.body#/id"}},
        "ByRef": {
            "operationRef": "#/paths/~1users~1{id}/get",
            "parameters": {"path.id": "$response.body#/id"},
        },
        "Shared": {"$ref": "#/components/links/Whole"},
    }
    spec = _spec(
        tmp_path,
        {"/users": _op("addUser", links), "/users/{id}": _op("getUser", params=("id",))},
        {"links": {"Whole": {"operationId": "getUser", "parameters": {"id": "$response.body"}}}},
    )
    tools, _ = load(spec)
    assert tools["addUser"].metadata["links"] == [
        {"name": "ById", "operation_id": "getUser", "parameters": {"id": "/id"}},
        {"name": "ByRef", "operation_ref": "/paths/~1users~1{id}/get", "parameters": {"path.id": "/id"}},
        {"name": "Shared", "operation_id": "getUser", "parameters": {"id": ""}},
    ]
    assert "links" not in tools["getUser"].metadata


def test_values_that_are_not_the_response_body_are_left_out_with_a_note(tmp_path: Path) -> None:
    links = {
        "Mixed": {
            "operationId": "getSquare",
            "parameters": {
                "row": "$request.path.row",  # this call's own request: no value of its result
                "etag": "$response.header.ETag",
                "fixed": 3,
                "column": "$response.body#/column",
                "bad": "$response.body#column",  # not a JSON pointer
                "ctl": "$response.body#/a\u0001b",
            },
        },
        "Nothing": {"operationId": "getSquare", "parameters": {"row": "$request.path.row"}},
        "NoTarget": {"parameters": {"id": "$response.body#/id"}},
        "NotALink": ["operationId", "getSquare"],
    }
    spec = _spec(
        tmp_path, {"/squares": _op("listSquares", links), "/s/{row}": _op("getSquare", params=("row",))}
    )
    tools, _ = load(spec)
    tool = tools["listSquares"]
    assert tool.metadata["links"] == [
        {"name": "Mixed", "operation_id": "getSquare", "parameters": {"column": "/column"}}
    ]
    notes = "\n".join(tool.metadata["normalised"])
    for part in ("links.Mixed.parameters.row", "links.Mixed.parameters.etag", "links.Mixed.parameters.bad"):
        assert part in notes
    assert "links.NoTarget: neither operationId nor operationRef" in notes
    assert "links.NotALink is not a Link Object" in notes


def test_hostile_links_are_bounded_and_never_crash(tmp_path: Path) -> None:
    malformed = {
        "Ipv6": {"operationRef": "http://[::1/x#/paths/~1a/get", "parameters": {"id": "$response.body#/id"}},
        "Nul": {"operationRef": "x%00.json#/paths/~1a/get", "parameters": {"id": "$response.body#/id"}},
        "NulRef": {"$ref": "a\u0000b.json#/x"},
        "BodyOnly": {"operationId": "getUser", "requestBody": "$response.body"},
        "NumberId": {"operationId": 12, "parameters": {"id": "$response.body#/id"}},
        "CtlName": {"operationId": "getUser", "parameters": {"i\u0000d": "$response.body#/id"}},
    }
    many = {
        f"L{n}": {"operationId": "getUser", "parameters": {"id": "$response.body#/id"}} for n in range(5000)
    }
    spec = _spec(
        tmp_path,
        {
            "/many": _op("many", many),
            "/odd": _op("odd", "not a map"),
            "/long": _op(
                "long",
                {"X": {"operationId": "getUser", "parameters": {"id": "$response.body#/" + "a" * 5000}}},
            ),
            "/bad": _op("bad", malformed),
            "/users/{id}": _op("getUser", params=("id",)),
        },
    )
    tools, loader = load(spec)
    notes = "\n".join(tools["bad"].metadata["normalised"])
    assert "links" not in tools["bad"].metadata
    assert "links.Ipv6: malformed $ref" in notes and "links.Nul: malformed $ref" in notes
    assert "links.NulRef: malformed $ref" in notes
    assert "links.BodyOnly: no parameter takes a value of the response body" in notes
    assert "links.NumberId: operationId is a int, not a string" in notes
    assert "links.CtlName.parameters.i\\x00d: a name with control characters" in notes
    assert len(tools["many"].metadata["links"]) == MAX_LINKS
    assert any("only the first" in n for n in tools["many"].metadata["normalised"])
    assert "links" not in tools["odd"].metadata and "links is a str" in tools["odd"].metadata["normalised"][0]
    assert "links" not in tools["long"].metadata
    assert loader.report.skipped == []  # a bad link never costs its operation


@pytest.fixture
def logging_server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """The project's loopback REST server (tests/support/rest_server.py): it records every request."""
    with serve() as state:
        yield state.base_url.removesuffix("/v1"), state.requests


def test_an_operation_ref_is_never_fetched_even_with_remote_refs_allowed(
    tmp_path: Path, logging_server: tuple[str, list[dict[str, Any]]]
) -> None:
    url, seen = logging_server
    links = {
        "RemoteOp": {
            "operationRef": f"{url}/spec.json#/paths/~1x/get",
            "parameters": {"id": "$response.body#/id"},
        }
    }
    spec = _spec(tmp_path, {"/users": _op("addUser", links), "/users/{id}": _op("getUser", params=("id",))})
    tools, _ = load(spec, allow_remote_refs=True)
    assert seen == []
    assert "links.RemoteOp: operationRef" in "\n".join(tools["addUser"].metadata["normalised"])


def test_links_into_other_documents_send_no_request(
    tmp_path: Path, logging_server: tuple[str, list[dict[str, Any]]]
) -> None:
    url, seen = logging_server
    links = {
        "Remote": {"$ref": f"{url}/link.json"},
        "RemoteOp": {
            "operationRef": f"{url}/spec.json#/paths/~1x/get",
            "parameters": {"id": "$response.body#/id"},
        },
        "Outside": {"$ref": "../elsewhere.json#/link"},
        "OtherFile": {
            "operationRef": "other.json#/paths/~1x/get",
            "parameters": {"id": "$response.body#/id"},
        },
    }
    spec = _spec(tmp_path, {"/users": _op("addUser", links), "/users/{id}": _op("getUser", params=("id",))})
    tools, loader = load(spec, allow_remote_refs=False)
    assert seen == []  # nothing was fetched
    assert "links" not in tools["addUser"].metadata
    notes = "\n".join(tools["addUser"].metadata["normalised"])
    assert "links.Remote: remote $ref refused" in notes
    assert "links.Outside: file $ref outside the spec's directory refused" in notes
    assert (
        "links.OtherFile: operationRef 'other.json#/paths/~1x/get' is not an operation of this document"
        in notes
    )
    assert "links.RemoteOp" in notes
    assert loader.report.skipped == []


def test_the_link_example_spec_keeps_every_link(corpus: Path) -> None:
    tools, _ = load(corpus / "openapi" / "oai-examples" / "v3.0" / "link-example.yaml")
    declared = {name: tool.metadata.get("links", []) for name, tool in tools.items()}
    assert [link["operation_id"] for link in declared["getPullRequestsById"]] == ["mergePullRequest"]
    assert declared["getPullRequestsById"][0]["parameters"] == {
        "username": "/author/username",
        "slug": "/repository/slug",
        "pid": "/id",
    }
    assert sum(len(links) for links in declared.values()) == 4


def test_notes_on_links_never_show_a_references_secrets(tmp_path: Path) -> None:
    bad = "http://user:pw@[::1/x?token=SECRET1#/p"  # no valid URL: masked by pattern
    away = "https://user:pw@h.example/s.json?key=SECRET2#/paths/~1x/get"
    body = {"id": "$response.body#/id"}
    links = {
        "Bad": {"operationRef": bad, "parameters": body},
        "Away": {"operationRef": away, "parameters": body},
    }
    spec = _spec(tmp_path, {"/users": _op("addUser", links)})
    for allow in (False, True):  # an operationRef is never fetched either way
        tools, _ = load(spec, allow_remote_refs=allow)
        notes = "\n".join(tools["addUser"].metadata["normalised"])
        assert "links.Bad: malformed $ref" in notes and "links.Away" in notes
        assert not any(secret in notes for secret in ("SECRET1", "SECRET2", "pw@"))
    component = {"Component": {"$ref": "https://h.example/l.json?api_key=SECRET3#/x"}}
    tools, _ = load(_spec(tmp_path, {"/users": _op("addUser", component)}))
    notes = "\n".join(tools["addUser"].metadata["normalised"])
    assert "links.Component: remote $ref refused" in notes and "SECRET3" not in notes
