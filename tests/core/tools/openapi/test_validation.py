"""Tests of the checks run before conversion (fms_dgt/core/tools/openapi/validation.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from support.openapi_specs import PETSTORE, REST, load

from fms_dgt.core.tools.loaders.rest import RESTToolLoader
from fms_dgt.core.tools.openapi import DocumentStore, check_root
from fms_dgt.errors import LoadError


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


def test_check_root_says_whether_there_are_paths(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("openapi: 3.1.0\ninfo: {title: x, version: '1'}\n")
    assert check_root(DocumentStore(str(spec))) is False
    tools, loader = load(spec)
    assert tools == {}
    assert any("no paths" in w.message for w in loader.report.warnings)
    assert check_root(DocumentStore(str(PETSTORE))) is True


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
    # openapi-spec-validator quotes the type as jsonschema does ('string') or as jsonschema-rs does
    # ("string"), whichever backend it picked.
    with pytest.raises(LoadError, match=r"5 is not of type ['\"]string['\"]") as info:
        RESTToolLoader(str(path), validate=True).load()
    assert info.value.pointer == "/paths/~1a/get/summary"
    assert "Failed validating" not in str(info.value)
    tools, _ = load(PETSTORE, validate=True)
    assert len(tools) == 14


def test_validation_obeys_the_reference_policy() -> None:
    spec = REST / "multi" / "openapi.yaml"
    with pytest.raises(LoadError, match="outside the spec's directory refused"):
        RESTToolLoader(str(spec), validate=True).load()
    tools, _ = load(spec, validate=True, allow_outside_refs=True)
    assert "outside" in tools


@pytest.mark.corpus
def test_validate_accepts_yaml_with_integer_status_codes(corpus: Path) -> None:
    spec = corpus / "openapi" / "spec-validator-fixtures" / "v3.0" / "petstore.yaml"
    assert 200 in yaml.safe_load(spec.read_text())["paths"]["/pets"]["get"]["responses"]
    assert len(RESTToolLoader(str(spec), validate=True).load()) == 3
