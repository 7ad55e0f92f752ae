"""Tests of the ``rest`` loader plug-in: configuration, the load loop, names, and the corpus.

What the loader builds from a spec (schemas, arguments, bodies, servers, the route) is tested
per module under tests/core/tools/openapi/.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.openapi_specs import METHODS, PETSTORE, REST, check_schemas, count_operations, load

from fms_dgt.core.tools.loaders.rest import RESTToolLoader
from fms_dgt.core.tools.openapi import parse_text, route_of
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.errors import ConfigError, LoadError
from fms_dgt.plugins import get_tool_loader_class

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


def test_base_url_option_reaches_every_route() -> None:
    tools, _ = load(PETSTORE, base_url="http://127.0.0.1:9/x/")
    assert {route_of(t).base_url for t in tools.values()} == {"http://127.0.0.1:9/x"}


# ---------------------------------------------------------------------------- names and clashes


def test_duplicate_names_get_a_deterministic_suffix_warning_and_metadata() -> None:
    tools, loader = load(REST / "features.yaml")
    assert "getShape" in tools and "getShape_2" in tools
    assert tools["getShape_2"].metadata["name_collision"] == {
        "original": "getShape",
        "first_at": "/paths/~1shapes/get",
    }
    assert route_of(tools["getShape_2"]).method == "POST"
    warnings = [w for w in loader.report.warnings if "getShape" in w.message]
    assert len(warnings) == 1
    assert warnings[0].pointer == "/paths/~1shapes/post"


# ---------------------------------------------------------------------------- options


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
    registry = ToolRegistry.from_config(config)
    names = {t.name for t in registry.tools("shop")}
    assert names == {"listPets", "getPet", "echo", "flaky", "secureEcho", "slow", "getText", "badOutput"}


# ---------------------------------------------------------------------------- bad input


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
        assert all(route_of(t).path for t in tools), rel  # every route reads back
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
    bodies = [route_of(t).body for t in tools]
    assert all("*" not in b.content_type for b in bodies if b is not None)
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


def test_paths_that_would_leave_the_base_are_skipped_with_their_pointers() -> None:
    tools, loader = load(REST / "hostile.yaml")
    assert {"redirect", "getItem", "reservedSecure"} <= set(tools)  # the rest of the spec loads
    skipped = {p.pointer: p.message for p in loader.report.skipped}
    assert sorted(skipped) == sorted(
        [
            "/paths/3~1digits/get",
            "/paths/@127.0.0.1:9~1x/get",
            "/paths/~1..~1..~1outside/get",
            "/paths/~1a~1.~1b/get",
            "/paths/~1%2e%2e~1x/get",
            "/paths/~1a\\..\\b/get",
        ]
    )
    assert "does not start with '/'" in skipped["/paths/3~1digits/get"]
    assert "dot segment '..'" in skipped["/paths/~1%2e%2e~1x/get"]
    assert all(m.startswith("operation GET ") and "unsafe path" in m for m in skipped.values())
