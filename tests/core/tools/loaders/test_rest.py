"""Tests of the ``rest`` loader (OpenAPI / Swagger specs as tools)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from fms_dgt.config import build_registry
from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.loaders.rest import RESTToolLoader
from fms_dgt.errors import ConfigError, LoadError
from fms_dgt.plugins import get_tool_loader_class

REPO = Path(__file__).resolve().parents[4]
REST = REPO / "tests" / "data" / "rest"
PETSTORE = REPO / "data" / "rest" / "petstore.yaml"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace", "query")


def load(spec: Path | str, **kwargs: Any) -> tuple[dict[str, Tool], RESTToolLoader]:
    loader = RESTToolLoader(str(spec), **kwargs)
    return {t.name: t for t in loader.load()}, loader


def check_schemas(tools: list[Tool]) -> None:
    """Every parameters / output_parameters schema passes the Draft 2020-12 meta-schema.

    The meta-schema checks each subschema independently, so checking every distinct ``$defs``
    entry once (tools of one load share them) plus each distinct schema without its ``$defs``
    is the same check, only much faster on large specs.
    """
    seen: set[str] = set()
    for tool in tools:
        for schema in (tool.parameters, tool.output_parameters):
            parts = [{k: v for k, v in schema.items() if k != "$defs"}, *schema.get("$defs", {}).values()]
            for part in parts:
                key = json.dumps(part, sort_keys=True)
                if key not in seen:
                    seen.add(key)
                    Draft202012Validator.check_schema(part)


# ---------------------------------------------------------------------------- basics


def test_registered_as_rest_plugin() -> None:
    assert get_tool_loader_class("rest") is RESTToolLoader


def test_one_tool_per_operation_with_names_and_descriptions() -> None:
    tools, loader = load(PETSTORE, namespace="pets")
    spec = yaml.safe_load(PETSTORE.read_text())
    expected = [
        op["operationId"] for item in spec["paths"].values() for m, op in item.items() if m in METHODS
    ]
    assert sorted(tools) == sorted(expected)
    assert loader.report.tools == len(expected)
    assert loader.report.problems == []
    assert tools["listPets"].namespace == "pets"
    assert tools["listPets"].description == "List pets"
    assert tools["listPets"].kind == "rest"


def test_default_namespace_comes_from_the_title() -> None:
    tools, _ = load(PETSTORE)
    assert {t.namespace for t in tools.values()} == {"loopback_pet_store"}


def test_parameters_and_argument_metadata() -> None:
    tools, _ = load(PETSTORE)
    tool = tools["echo"]
    assert tool.parameters["required"] == ["value"]
    args = tool.metadata["arguments"]
    assert args["value"] == {"in": "path", "name": "value", "style": "simple", "explode": False}
    assert args["words"]["style"] == "pipeDelimited"
    assert args["filter"] == {"in": "query", "name": "filter", "style": "deepObject", "explode": True}
    assert args["X-Trace"]["in"] == "header"
    assert args["session"]["in"] == "cookie"
    assert tool.metadata["method"] == "GET"
    assert tool.metadata["path"] == "/echo/{value}"
    assert tool.metadata["base_url"] == "http://127.0.0.1:8765/v1"
    assert tool.metadata["tags"] == ["debug"]


def test_path_level_parameters_are_merged() -> None:
    tools, _ = load(PETSTORE)
    assert tools["getPet"].parameters["required"] == ["petId"]
    assert tools["deletePet"].metadata["arguments"]["petId"]["in"] == "path"


def test_json_body_is_flattened_from_a_ref_and_keyword_translation_applies() -> None:
    tools, _ = load(PETSTORE)
    tool = tools["createPet"]
    assert tool.parameters["properties"]["name"] == {"type": "string"}
    assert tool.parameters["properties"]["tag"] == {"type": ["string", "null"]}  # nullable: true
    assert tool.parameters["required"] == ["name"]
    assert tool.metadata["body"]["placement"] == "flattened"
    assert tool.metadata["arguments"]["name"] == {
        "in": "body",
        "name": "name",
        "content_type": "application/json",
    }


def test_output_schema_from_the_success_response() -> None:
    tools, _ = load(PETSTORE)
    output = tools["createPet"].output_parameters
    assert tools["createPet"].metadata["response"] == {"status": "201", "content_type": "application/json"}
    validator = Draft202012Validator(output)
    assert validator.is_valid({"id": "1", "name": "Rex", "tag": None})
    assert not validator.is_valid({"name": "Rex"})  # id is required in responses
    assert tools["deletePet"].output_parameters == {}


def test_operation_without_parameters_is_a_tool() -> None:
    tools, _ = load(PETSTORE)
    assert tools["getText"].parameters == {"type": "object", "properties": {}}


def test_security_requirements_and_schemes_in_metadata() -> None:
    tools, _ = load(PETSTORE)
    assert tools["createPet"].metadata["security"] == [{"bearerAuth": []}]
    assert tools["createPet"].metadata["security_schemes"] == {
        "bearerAuth": {"type": "http", "scheme": "bearer"}
    }
    assert tools["secureEcho"].metadata["security_schemes"]["apiKeyQuery"] == {
        "type": "apiKey",
        "in": "query",
        "name": "api_key",
    }
    assert tools["listPets"].metadata["security"] == []


def test_multipart_and_form_bodies() -> None:
    tools, _ = load(PETSTORE)
    upload = tools["uploadPhoto"]
    assert upload.parameters["properties"]["file"] == {"type": "string", "format": "binary"}
    assert upload.metadata["arguments"]["file"]["file"] is True
    assert upload.metadata["body"]["content_type"] == "multipart/form-data"
    form = tools["submitForm"].metadata["arguments"]["meta"]
    assert form["style"] == "deepObject"
    assert form["content_type"] == "application/x-www-form-urlencoded"


# ---------------------------------------------------------------------------- Swagger 2.0


def test_swagger2_body_form_data_and_servers() -> None:
    tools, _ = load(REST / "swagger2.yaml")
    assert sorted(tools) == ["addItem", "get_ping", "listItems", "uploadPicture"]
    add = tools["addItem"]
    assert add.parameters["required"] == ["name"]
    assert add.parameters["properties"]["price"] == {"type": "number", "exclusiveMinimum": 0}
    assert add.parameters["properties"]["name"]["examples"] == ["widget"]
    assert "x-internal" in add.parameters["properties"]  # a property name, not an extension key
    upload = tools["uploadPicture"]
    assert upload.parameters["properties"]["picture"] == {"type": "string", "format": "binary"}
    assert upload.metadata["arguments"]["picture"]["file"] is True
    assert upload.metadata["body"]["content_type"] == "multipart/form-data"
    assert upload.parameters["required"] == ["id", "picture"]
    listing = tools["listItems"]
    assert listing.metadata["arguments"]["ids"]["style"] == "pipeDelimited"
    assert listing.parameters["properties"]["limit"] == {"type": "integer", "minimum": 1}
    assert listing.metadata["base_url"] == "https://shop.example.com/api"
    assert add.metadata["security_schemes"] == {"basic": {"type": "http", "scheme": "basic"}}
    assert listing.metadata["security_schemes"]["key"] == {"type": "apiKey", "in": "header", "name": "X-Key"}
    check_schemas(list(tools.values()))


# ---------------------------------------------------------------------------- $ref and schemas


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


def test_read_only_properties_are_not_required_in_requests() -> None:
    tools, _ = load(REST / "features.yaml")
    params = tools["putThing"].parameters
    assert "body_id" not in params["required"]
    assert "label" in params["required"]


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


# ---------------------------------------------------------------------------- names and clashes


def test_duplicate_names_get_a_deterministic_suffix_warning_and_metadata() -> None:
    tools, loader = load(REST / "features.yaml")
    assert "getShape" in tools and "getShape_2" in tools
    assert tools["getShape_2"].metadata["name_collision"] == {
        "original": "getShape",
        "first_at": "/paths/~1shapes/get",
    }
    assert tools["getShape_2"].metadata["method"] == "POST"
    warnings = [w for w in loader.report.warnings if "getShape" in w.message]
    assert len(warnings) == 1
    assert warnings[0].pointer == "/paths/~1shapes/post"


def test_slug_names_without_operation_id() -> None:
    tools, _ = load(REST / "features.yaml")
    assert "get_plain_by_a_items" in tools


def test_argument_name_clashes_are_renamed_by_location() -> None:
    tools, _ = load(REST / "features.yaml")
    args = tools["putThing"].metadata["arguments"]
    assert args["id"]["in"] == "path"
    assert args["query_id"] == {
        "in": "query",
        "name": "id",
        "style": "form",
        "explode": True,
        "renamed_from": "id",
    }
    assert args["body_id"]["in"] == "body" and args["body_id"]["name"] == "id"
    assert "Accept" not in args  # reserved header parameter, ignored per OpenAPI 3
    assert any("Accept" in n for n in tools["putThing"].metadata["normalised"])


def test_nested_body_mode_and_non_json_bodies() -> None:
    tools, _ = load(PETSTORE, body="nested")
    create = tools["createPet"]
    assert list(create.parameters["properties"]) == ["body"]
    assert create.metadata["arguments"]["body"]["whole_body"] is True
    assert create.parameters["required"] == ["body"]
    assert create.parameters["properties"]["body"]["required"] == ["name"]
    tools, _ = load(REST / "features.yaml")
    assert tools["postText"].metadata["arguments"]["body"]["content_type"] == "text/plain"
    assert tools["emptyForm"].parameters == {"type": "object", "properties": {}}  # nothing to send
    assert tools["emptyForm"].metadata["body"]["placement"] == "flattened"


# ---------------------------------------------------------------------------- servers and options


def test_relative_servers_with_variables_and_base_url_override() -> None:
    tools, _ = load(REST / "features.yaml")
    assert tools["plantTree"].metadata["base_url"] == "/base/v2"
    tools, _ = load(REST / "features.yaml", base_url="http://localhost:9000/x/")
    assert tools["plantTree"].metadata["base_url"] == "http://localhost:9000/x"
    assert tools["plantTree"].metadata["servers"] == ["/base/v2"]


@pytest.mark.parametrize(
    ("include", "exclude", "expected"),
    [
        ({"tags": ["pets"]}, None, {"listPets", "createPet", "getPet", "deletePet", "uploadPhoto"}),
        ({"tags": "pets", "methods": ["GET"]}, None, {"listPets", "getPet"}),
        ({"paths": "/pets/*"}, {"operation_ids": ["delete*"]}, {"getPet", "uploadPhoto"}),
        (None, {"tags": ["debug"], "methods": ["post"]}, {"listPets", "getPet", "deletePet"}),
    ],
)
def test_include_and_exclude_filters(
    include: dict[str, Any] | None, exclude: dict[str, Any] | None, expected: set[str]
) -> None:
    tools, loader = load(PETSTORE, include=include, exclude=exclude)
    assert set(tools) == expected
    assert any("filters" in w.message for w in loader.report.warnings)


def test_unknown_filter_key_and_bad_options_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="unknown key 'tag'"):
        RESTToolLoader(str(PETSTORE), include={"tag": ["pets"]})
    with pytest.raises(ConfigError, match="body"):
        RESTToolLoader(str(PETSTORE), body="inline")


def test_config_entry_resolves_the_spec_against_the_config_directory(tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "pets.yaml").write_text(PETSTORE.read_text())
    config = tmp_path / "tools.yaml"
    config.write_text(
        "tools:\n  registry:\n    - type: rest\n      spec: specs/pets.yaml\n      namespace: shop\n"
        "      include: {methods: [get]}\n"
    )
    registry = build_registry(config)
    names = {t.name for t in registry.tools("shop")}
    assert names == {"listPets", "getPet", "echo", "flaky", "secureEcho", "slow", "getText", "badOutput"}


# ---------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("text", "pointer", "match"),
    [
        ("- just\n- a list\n", "", "not an OpenAPI document"),
        ("info: {title: x}\npaths: {}\n", "", "neither 'openapi' nor 'swagger'"),
        ("openapi: 4.0.0\npaths: {}\n", "/openapi", "unsupported OpenAPI version"),
        ("openapi: 3.0.0\ninfo: {title: x, version: '1'}\npaths: [1, 2]\n", "/paths", "not a mapping"),
        ("swagger: '2.0'\ninfo: {title: x, version: '1'}\n", "/paths", "'paths' is missing"),
    ],
)
def test_invalid_documents_raise_load_error_with_pointer(
    tmp_path: Path, text: str, pointer: str, match: str
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    with pytest.raises(LoadError, match=match) as info:
        RESTToolLoader(str(spec)).load()
    assert info.value.source == str(spec)
    assert info.value.pointer == pointer


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


def test_unconvertible_operations_are_reported_never_dropped_silently(tmp_path: Path) -> None:
    spec = {
        "openapi": "3.0.0",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/a": {"get": {"parameters": [{"in": "query"}], "responses": {}}},
            "/b": {"get": "not an operation"},
            "/c": {"$ref": "#/nowhere"},
            "/d": {"post": {"parameters": [{"name": "x", "in": "body"}], "responses": {}}},
            "/e": {"get": {"responses": {}}},
        },
    }
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    tools, loader = load(path)
    assert set(tools) == {"get_e"}
    pointers = sorted(p.pointer or "" for p in loader.report.skipped)
    assert pointers == ["/paths/~1a/get", "/paths/~1b/get", "/paths/~1c", "/paths/~1d/post"]
    assert all(p.message for p in loader.report.skipped)


def deep_spec(tmp_path: Path, depth: int) -> Path:
    schema = '{"type": "array", "items": ' * depth + '{"type": "string"}' + "}" * depth
    deep_op = '{"responses": {"200": {"description": "x", "content": {"application/json": {"schema": %s}}}}}'
    text = (
        '{"openapi": "3.0.0", "info": {"title": "t", "version": "1"}, "paths": {"/deep": {"get": '
        + deep_op % schema
        + '}, "/fine": {"get": {"responses": {"200": {"description": "ok"}}}}}}'
    )
    path = tmp_path / "deep.json"
    path.write_text(text)
    return path


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


def test_self_referencing_yaml_alias_is_skipped_not_a_hang(tmp_path: Path) -> None:
    spec = tmp_path / "alias.yaml"
    spec.write_text(
        "openapi: 3.1.0\ninfo: {title: a, version: '1'}\npaths:\n  /a:\n    get:\n      responses:\n"
        "        '200':\n          description: x\n          content:\n            application/json:\n"
        "              schema: {$ref: /s/thing}\n"
        "components:\n  schemas:\n    Thing: &t\n      $id: /s/thing\n      properties:\n        self: *t\n"
    )
    tools, loader = load(spec)
    assert tools == {}
    assert "nested too deeply" in loader.report.skipped[0].message


def test_document_too_deep_to_parse_is_a_load_error(tmp_path: Path) -> None:
    path = deep_spec(tmp_path, 100_000)
    with pytest.raises(LoadError, match="nested too deeply"):
        RESTToolLoader(str(path)).load()


def test_validate_option_reports_schema_violations_with_pointer(tmp_path: Path) -> None:
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {"/a": {"get": {"responses": {"200": {"description": "ok"}}, "summary": 5}}},
    }
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    tools, _ = load(path)
    assert list(tools) == ["get_a"]  # lenient by default
    with pytest.raises(LoadError, match="not of type 'string'") as info:
        RESTToolLoader(str(path), validate=True).load()
    assert info.value.pointer == "/paths/~1a/get/summary"
    tools, _ = load(PETSTORE, validate=True)
    assert len(tools) == 14


def test_validation_obeys_the_reference_policy() -> None:
    spec = REST / "multi" / "openapi.yaml"
    with pytest.raises(LoadError, match="outside the spec's directory refused"):
        RESTToolLoader(str(spec), validate=True).load()
    tools, _ = load(spec, validate=True, allow_outside_refs=True)
    assert "outside" in tools


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
    assert tools["listPets"].metadata["base_url"] == f"{file_server}/"  # default server "/", resolved


def test_spec_by_url_has_a_size_cap_and_reports_http_errors(file_server: str) -> None:
    with pytest.raises(LoadError, match="too large"):
        RESTToolLoader(f"{file_server}/features.yaml", max_bytes=100).load()
    with pytest.raises(LoadError, match="HTTP 404"):
        RESTToolLoader(f"{file_server}/nothing.yaml").load()


# ---------------------------------------------------------------------------- imports


def test_openapi_and_http_libraries_are_imported_lazily() -> None:
    code = (
        "import sys, fms_dgt\n"
        "import fms_dgt.core.tools.loaders.rest, fms_dgt.core.tools.engines.rest\n"
        "bad = [m for m in ('prance', 'openapi_core', 'openapi_spec_validator', 'httpx2', 'httpx') "
        "if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


# ---------------------------------------------------------------------------- real-world corpus


def count_operations(spec: Path) -> int:
    """Operations counted independently: (path, method) pairs, path-level $ref followed."""
    from fms_dgt.core.tools.openapi.documents import parse_text

    root = parse_text(spec.read_text(encoding="utf-8"), str(spec))
    total = 0
    for item in (root.get("paths") or {}).values():
        if isinstance(item, dict) and isinstance(item.get("$ref"), str):
            ref_file, _, pointer = item["$ref"].partition("#")
            item = (
                parse_text((spec.parent / ref_file).read_text(encoding="utf-8"), ref_file)
                if ref_file
                else root
            )
            for token in [t for t in pointer.split("/") if t]:
                item = item[token.replace("~1", "/").replace("~0", "~")]
        total += sum(1 for method in METHODS if method in item)
        total += len(item.get("additionalOperations") or {})
    return total


#: Found by running openapi-spec-validator over the corpus: these fixtures violate the spec
#: (on purpose, or by mistake upstream). They must raise LoadError or load with reported problems.
INVALID = {
    "readme-oas-examples/3.0/openapi-workshop/post.json",
    "readme-oas-examples/3.0/schema-validation.json",
    "readme-oas-examples/3.1/schema-validation-local.json",
    "readme-oas-examples/3.1/schema-validation-top-level.json",
    "spec-validator-fixtures/v2.0/empty.yaml",
    "spec-validator-fixtures/v3.0/empty.yaml",
    "spec-validator-fixtures/v3.0/property-missing-reference.yaml",
    "swagger-petstore3/petstore-3.1-design-first.yaml",
    "spec-validator-fixtures/v2.0/missing-reference.yaml",
}
BIG = {"stripe/spec3.json", "kubernetes/swagger.json"}


def corpus_specs(corpus: Path) -> list[Path]:
    """Root documents (a mapping with ``openapi`` or ``swagger``) under corpus/openapi."""
    from fms_dgt.core.tools.openapi.documents import parse_text

    found = []
    for path in sorted((corpus / "openapi").rglob("*")):
        if path.suffix in (".json", ".yaml", ".yml"):
            doc = parse_text(path.read_text(encoding="utf-8"), str(path))
            if isinstance(doc, dict) and ("openapi" in doc or "swagger" in doc):
                found.append(path)
    return found


#: Specs whose schemas take seconds to meta-validate; their check_schema pass runs in the slow test.
HEAVY = BIG | {
    "apis-guru/apache.org_airflow.json",
    "apis-guru/codat.io_bank-feeds.json",
    "apis-guru/cpy.re_peertube.json",
    "apis-guru/up.com.au.json",
    "readme-oas-examples/3.0/star-trek.json",
    "readme-oas-examples/3.1/readme.json",
}


def valid_corpus_specs(corpus: Path) -> list[tuple[str, Path]]:
    specs = [(p.relative_to(corpus / "openapi").as_posix(), p) for p in corpus_specs(corpus)]
    assert len(specs) > 100
    return [(rel, p) for rel, p in specs if rel not in INVALID]


@pytest.mark.corpus
def test_every_valid_corpus_spec_loads_every_operation(corpus: Path) -> None:
    specs = valid_corpus_specs(corpus)
    assert {rel for rel, _ in specs} >= BIG
    for rel, spec in specs:
        loader = RESTToolLoader(str(spec))
        tools = loader.load()
        assert len(tools) == count_operations(spec), (rel, loader.report.problems)
        assert loader.report.skipped == [], rel
        assert len({t.name for t in tools}) == len(tools), rel
        if rel not in HEAVY:
            check_schemas(tools)


@pytest.mark.corpus
@pytest.mark.slow
def test_every_corpus_schema_passes_check_schema(corpus: Path) -> None:
    for rel, spec in valid_corpus_specs(corpus):
        if rel in HEAVY:
            check_schemas(RESTToolLoader(str(spec)).load())


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("name", "expected"), [("stripe/spec3.json", 417), ("kubernetes/swagger.json", 1067)]
)
def test_stripe_and_kubernetes(corpus: Path, name: str, expected: int) -> None:
    spec = corpus / "openapi" / name
    tools = RESTToolLoader(str(spec)).load()
    assert len(tools) == expected == count_operations(spec)
    assert all("*" not in ((t.metadata["body"] or {}).get("content_type") or "") for t in tools)
    with_defs = [t for t in tools if "$defs" in t.output_parameters]
    assert with_defs  # circular references are kept under $defs
    for tool in with_defs[:5]:
        refs = {
            r[len("#/$defs/") :]
            for r in re.findall(r'"(#/\$defs/[^"]+)"', json.dumps(tool.output_parameters))
        }
        assert refs <= set(tool.output_parameters["$defs"])  # self-contained


@pytest.mark.corpus
def test_invalid_corpus_specs_fail_cleanly_or_report(corpus: Path) -> None:
    for rel in sorted(INVALID):
        spec = corpus / "openapi" / rel
        loader = RESTToolLoader(str(spec))
        try:
            tools = loader.load()
        except LoadError as exc:
            assert exc.source == str(spec)
            continue
        missing = count_operations(spec) - len(tools)
        assert len(loader.report.problems) >= missing, rel
        with pytest.raises(LoadError):  # and validate: true says what is wrong
            RESTToolLoader(str(spec), validate=True).load()


@pytest.mark.corpus
def test_validate_accepts_yaml_with_integer_status_codes(corpus: Path) -> None:
    spec = corpus / "openapi" / "spec-validator-fixtures" / "v3.0" / "petstore.yaml"
    assert 200 in yaml.safe_load(spec.read_text())["paths"]["/pets"]["get"]["responses"]
    assert len(RESTToolLoader(str(spec), validate=True).load()) == 3
