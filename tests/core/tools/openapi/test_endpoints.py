"""Tests of servers and security per operation (fms_dgt/core/tools/openapi/endpoints.py)."""

from __future__ import annotations

from pathlib import Path

from support.openapi_specs import PETSTORE, REST, routes

from fms_dgt.core.tools.openapi import SecurityScheme


def test_server_from_the_spec() -> None:
    assert routes(PETSTORE)["echo"].base_url == "http://127.0.0.1:8765/v1"


def test_relative_servers_with_variables_and_base_url_override() -> None:
    assert routes(REST / "features.yaml")["plantTree"].base_url == "/base/v2"
    route = routes(REST / "features.yaml", base_url="http://localhost:9000/x/")["plantTree"]
    assert route.base_url == "http://localhost:9000/x"
    assert route.servers == ("/base/v2",)


def test_innermost_servers_win(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "openapi: 3.0.0\ninfo: {title: t, version: '1'}\nservers: [{url: 'https://root.example'}]\n"
        "paths:\n  /a:\n    servers: [{url: 'https://item.example'}]\n"
        "    get:\n      servers: [{url: 'https://op.example'}, {url: 'https://op2.example'}]\n"
        "      responses: {}\n    put: {responses: {}}\n  /b:\n    get: {responses: {}}\n"
    )
    found = routes(spec)
    assert found["get_a"].servers == ("https://op.example", "https://op2.example")
    assert found["get_a"].base_url == "https://op.example"
    assert found["put_a"].base_url == "https://item.example"
    assert found["get_b"].base_url == "https://root.example"


def test_security_requirements_and_schemes() -> None:
    found = routes(PETSTORE)
    assert found["createPet"].security == ({"bearerAuth": ()},)
    assert found["createPet"].security_schemes == {"bearerAuth": SecurityScheme(type="http", scheme="bearer")}
    assert found["secureEcho"].security_schemes["apiKeyQuery"].to_dict() == {
        "type": "apiKey",
        "in": "query",
        "name": "api_key",
    }
    assert found["listPets"].security == ()


def test_swagger2_servers_and_security_schemes() -> None:
    found = routes(REST / "swagger2.yaml")
    assert found["listItems"].base_url == "https://shop.example.com/api"  # https preferred
    assert found["addItem"].security_schemes == {"basic": SecurityScheme(type="http", scheme="basic")}
    assert found["listItems"].security_schemes["key"].to_dict() == {
        "type": "apiKey",
        "in": "header",
        "name": "X-Key",
    }
