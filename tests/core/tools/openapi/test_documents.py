"""Tests of reading OpenAPI documents and following ``$ref`` (fms_dgt/core/tools/openapi/documents.py)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from support.openapi_specs import REST, check_schemas, deep_spec, load, routes

from fms_dgt.core.tools.loaders.rest import RESTToolLoader
from fms_dgt.core.tools.openapi import CircularRefError, DocumentStore, RefError, Target, parse_text
from fms_dgt.errors import LoadError

# ---------------------------------------------------------------------------- the store itself


def test_resolve_follows_chains_and_reports_cycles(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "a: {$ref: '#/b'}\nb: {$ref: '#/c'}\nc: {type: string}\nx: {$ref: '#/y'}\ny: {$ref: '#/x'}\n"
    )
    store = DocumentStore(str(spec))
    target, node = store.resolve("#/a", store.root_uri)
    assert target == Target(str(spec.resolve()), "/c")
    assert node == {"type": "string"}
    with pytest.raises(CircularRefError, match="circular") as info:
        store.resolve("#/x", store.root_uri)
    assert info.value.target.pointer == "/x"  # where the chain started
    with pytest.raises(RefError, match="missing \\$ref target"):
        store.resolve("#/nowhere", store.root_uri)


def test_parse_text_prefers_json_and_rejects_multi_document_yaml() -> None:
    assert parse_text('{"a": 1}', "x.json") == {"a": 1}
    assert parse_text("a: 1\n", "x.yaml") == {"a": 1}
    with pytest.raises(LoadError, match="expected one YAML document"):
        parse_text("a: 1\n---\nb: 2\n", "x.yaml")
    with pytest.raises(LoadError, match="invalid JSON") as info:
        parse_text('{"a": }', "x.json")
    assert info.value.line == 1


# ---------------------------------------------------------------------------- $ref through a load


def test_relative_file_refs_and_path_item_refs() -> None:
    tools, _ = load(REST / "multi" / "openapi.yaml")
    assert sorted(tools) == ["addPet", "listPets"]
    add = tools["addPet"].parameters
    assert add["required"] == ["name"]
    owner = add["properties"]["owner"]
    validator = Draft202012Validator(add)
    assert validator.is_valid({"name": "a", "owner": {"name": "o", "pets": [{"name": "b", "owner": None}]}})
    assert not validator.is_valid({"name": "a", "owner": {"pets": [{"owner": None}]}})
    assert owner == {"$ref": "#/$defs/Owner"}
    check_schemas(list(tools.values()))


def test_openapi31_refs_by_id_and_anchor() -> None:
    tools, loader = load(REST / "ids.yaml")
    assert loader.report.problems == []
    assert tools["getOwnerName"].output_parameters == {"type": "string", "minLength": 1}
    pets = Draft202012Validator(tools["listPets"].output_parameters)
    assert pets.is_valid([{"name": "a", "owner": {"name": "o"}}])
    assert not pets.is_valid([{"name": "a", "owner": {"name": ""}}])


def test_file_ref_outside_the_spec_directory_is_refused_unless_allowed() -> None:
    _, loader = load(REST / "multi" / "openapi.yaml")
    (problem,) = loader.report.skipped
    assert problem.pointer == "/paths/~1outside/get"
    assert "allow_outside_refs" in problem.message
    tools, loader = load(REST / "multi" / "openapi.yaml", allow_outside_refs=True)
    assert "outside" in tools
    assert loader.report.skipped == []


def test_remote_ref_is_refused_by_default() -> None:
    _, loader = load(REST / "features.yaml")
    remote = [p for p in loader.report.skipped if p.pointer == "/paths/~1remote/get"]
    assert len(remote) == 1
    assert "allow_remote_refs" in remote[0].message


def test_unresolvable_ref_skips_only_that_operation_with_its_pointer() -> None:
    tools, loader = load(REST / "features.yaml")
    assert "broken" not in tools
    broken = [p for p in loader.report.skipped if p.pointer == "/paths/~1broken/get"]
    assert len(broken) == 1
    assert "DoesNotExist" in broken[0].message
    assert "plantTree" in tools


# ---------------------------------------------------------------------------- unreadable documents


def test_unparseable_file_names_file_and_line(tmp_path: Path) -> None:
    spec = tmp_path / "broken.yaml"
    spec.write_text("openapi: 3.0.0\npaths:\n  /a: {get: [\n")
    with pytest.raises(LoadError) as info:
        RESTToolLoader(str(spec)).load()
    assert info.value.source == str(spec)
    assert info.value.line is not None
    missing = tmp_path / "missing.json"
    with pytest.raises(LoadError, match="not found"):
        RESTToolLoader(str(missing)).load()


def test_document_too_deep_to_parse_is_a_load_error(tmp_path: Path) -> None:
    path = deep_spec(tmp_path, 100_000)
    with pytest.raises(LoadError, match="nested too deeply"):
        RESTToolLoader(str(path)).load()


# ---------------------------------------------------------------------------- loading by URL


@pytest.fixture
def file_server() -> Iterator[str]:
    """A real static file server on loopback serving tests/data/rest."""
    handler = partial(_QuietHandler, directory=str(REST))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


def test_spec_by_url_with_remote_refs_only_when_allowed(file_server: str) -> None:
    url = f"{file_server}/multi/openapi.yaml"
    tools, loader = load(url)
    assert tools == {}
    assert all("allow_remote_refs" in p.message for p in loader.report.skipped)
    tools, loader = load(url, allow_remote_refs=True)
    assert {"listPets", "addPet", "outside"} <= set(tools)
    assert tools["addPet"].parameters["required"] == ["name"]
    # the default server "/" is resolved against the spec's URL
    assert routes(url, allow_remote_refs=True)["listPets"].base_url == f"{file_server}/"


def test_spec_by_url_has_a_size_cap_and_reports_http_errors(file_server: str) -> None:
    with pytest.raises(LoadError, match="too large"):
        RESTToolLoader(f"{file_server}/features.yaml", max_bytes=100).load()
    with pytest.raises(LoadError, match="HTTP 404"):
        RESTToolLoader(f"{file_server}/nothing.yaml").load()
