"""Tests of reading OpenAPI documents and following ``$ref`` (fms_dgt/core/tools/openapi/documents.py)."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from support.openapi_specs import REST, check_schemas, deep_spec, load, routes
from support.rest_server import serve

from fms_dgt.core.tools.loaders.rest import RESTToolLoader
from fms_dgt.core.tools.openapi import (
    CircularRefError,
    DocumentStore,
    RefError,
    Target,
    parse_text,
    route_of,
)
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


# ---------------------------------------------------------------------------- hostile documents


@pytest.mark.parametrize(
    ("ref", "says"),
    [
        ("#/a/²", "no '²' there"),  # a digit to str.isdigit, not an index
        ("#/paths/~2x", "'~' not followed by 0 or 1"),
        ("#/list/" + "9" * 5000, "no '9999"),  # more digits than int() converts
        ("#/list/01x", "no '01x' there"),
    ],
)
def test_bad_json_pointers_are_clear_ref_errors(tmp_path: Path, ref: str, says: str) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("a: {b: 1}\npaths: {}\nlist: [1, 2]\n")
    store = DocumentStore(str(spec))
    with pytest.raises(RefError, match=re.escape(says)) as info:
        store.resolve(ref, store.root_uri)
    assert "#/" in str(info.value)  # the pointer is named


def test_an_operation_with_a_bad_pointer_is_skipped_with_its_pointer(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    bad = {"responses": {"200": {"description": "x", "content": {"application/json": {"schema": {}}}}}}
    spec.write_text(
        json.dumps(
            {
                "openapi": "3.0.0",
                "info": {"title": "t", "version": "1"},
                "paths": {
                    "/a": {"get": {"parameters": [{"$ref": "#/components/x/²"}], "responses": {}}},
                    "/b": {"get": {"parameters": [{"$ref": "#/paths/~2x"}], "responses": {}}},
                    "/c": {"get": {"parameters": [{"$ref": "#/tags/" + "1" * 5000}], "responses": {}}},
                    "/d": {"get": bad},
                },
                "tags": [],
                "components": {"x": {}},
            }
        )
    )
    tools, loader = load(spec)
    assert set(tools) == {"get_d"}
    assert sorted(p.pointer or "" for p in loader.report.skipped) == [
        "/paths/~1a/get",
        "/paths/~1b/get",
        "/paths/~1c/get",
    ]


def test_a_json_spec_with_a_huge_integer_is_a_load_error(tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text('{"openapi": "3.0.0", "x": ' + "1" * 5000 + ', "paths": {}}')
    with pytest.raises(LoadError, match="unusable JSON: Exceeds the limit") as info:
        RESTToolLoader(str(spec)).load()
    assert info.value.source == str(spec)


def test_credentials_in_a_spec_url_never_show(file_server: str, caplog: pytest.LogCaptureFixture) -> None:
    host = file_server.removeprefix("http://")
    url = f"http://spec-user:spec-pass-5521@{host}/multi/openapi.yaml?token=tok-8812&ref=main"
    tools, loader = load(url, allow_remote_refs=True)
    assert tools
    shown = f"{file_server}/multi/openapi.yaml?token=***&ref=***"
    assert loader.describe() == shown and loader.report.source == shown
    assert tools["listPets"].metadata["source"].startswith(shown + "#/paths/")
    assert route_of(tools["listPets"]).base_url == f"{file_server}/"  # joined without userinfo
    missing = url.replace("openapi.yaml", "absent.yaml")
    with pytest.raises(LoadError) as info:
        RESTToolLoader(missing).load()
    text = json.dumps([t.to_dict() for t in tools.values()]) + str(info.value) + caplog.text
    for secret in ("spec-pass-5521", "tok-8812", "spec-user:"):
        assert secret not in text


def test_a_compressed_spec_is_capped_after_decompression() -> None:
    with serve() as state:
        url = f"{state.base_url}/gzip-bomb"
        with pytest.raises(LoadError, match=r"too large: more than 1000000 bytes \(decompressed\)"):
            RESTToolLoader(url, max_bytes=1_000_000).load()


def test_a_spec_download_has_one_deadline() -> None:
    with serve() as state:
        started = time.perf_counter()
        with pytest.raises(LoadError, match="took longer than the timeout"):
            RESTToolLoader(f"{state.base_url}/trickle", timeout=0.5).load()
        assert time.perf_counter() - started < 2.0


def test_a_spec_holding_a_lone_surrogate_is_refused_with_its_pointer(tmp_path: Path) -> None:
    from fms_dgt.core.tools.loaders.rest import RESTToolLoader

    spec = tmp_path / "spec.json"
    # json.dumps writes the half pair as the escape \ud83d, as a broken generator would
    get = {"operationId": "smile", "summary": "Smile \ud83d", "responses": {"200": {"description": "ok"}}}
    head = {"openapi": "3.0.3", "info": {"title": "t", "version": "1"}}
    spec.write_text(json.dumps({**head, "paths": {"/smile": {"get": get}}}), encoding="utf-8")
    with pytest.raises(LoadError, match=r"lone surrogate \(\\ud83d\)") as info:
        RESTToolLoader(str(spec), namespace="s").load()
    assert info.value.pointer == "/paths/~1smile/get/summary"
