"""Tests of fms_dgt/core/tools/mcp/spec.py: validation, transport inference, default names."""

from __future__ import annotations

import pytest

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.mcp import AUTO, MCPServerSpec, default_server_name
from fms_dgt.core.tools.mcp.spec import normalised_url
from fms_dgt.errors import ConfigError


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"transport": "stdio"}, "missing command"),
        ({"transport": "sse"}, "missing url"),
        ({}, "missing command or url"),
        ({"transport": "websocket", "url": "ws://x"}, "invalid transport 'websocket'"),
        ({"url": "ftp://x/mcp"}, "invalid url 'ftp://x/mcp'"),
        ({"url": "http://x:99999/mcp"}, "its port is not a number"),
        ({"command": "x", "url": "http://x/mcp"}, "apply to sse and streamable_http"),
        ({"transport": "sse", "url": "http://x/sse", "command": "x"}, "apply to stdio only"),
        ({"command": "x", "call_timeout": 0}, "invalid call_timeout 0"),
        ({"command": "x", "reconnect_attempts": -1}, "invalid reconnect_attempts"),
        ({"command": "x", "protocol": "2026"}, "invalid protocol"),
    ],
)
def test_spec_rejects_bad_settings(kwargs: dict[str, object], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment) as info:
        MCPServerSpec(name="bad", **kwargs)  # type: ignore[arg-type]
    assert "bad" in str(info.value) or "transport" in str(info.value) or "url" in str(info.value)


def test_spec_folds_transport_aliases() -> None:
    assert MCPServerSpec(name="a", transport="http", url="http://h/mcp").transport == "streamable_http"
    assert (
        MCPServerSpec(name="a", transport="streamable-http", url="http://h/mcp").transport
        == "streamable_http"
    )


@pytest.mark.parametrize(
    ("endpoint", "transport"),
    [
        ({"command": "server"}, "stdio"),
        ({"url": "http://h:8080/sse"}, "sse"),
        ({"url": "http://h:8080/events/sse/?key=1"}, "sse"),
        ({"url": "http://h:8080/mcp"}, AUTO),
        ({"url": "http://localhost:8080"}, AUTO),
        ({"url": "https://h/ssemble"}, AUTO),
    ],
)
def test_transport_is_inferred_when_left_out(endpoint: dict[str, str], transport: str) -> None:
    assert MCPServerSpec(name="s", **endpoint).transport == transport  # type: ignore[arg-type]


def test_an_explicit_transport_wins_over_the_url() -> None:
    spec = MCPServerSpec(name="s", transport="streamable_http", url="http://h/sse")
    assert spec.transport == "streamable_http"
    assert MCPServerSpec(name="s", transport="auto", url="http://h/sse").transport == AUTO


def test_describe_shows_the_transport_a_client_found() -> None:
    spec = MCPServerSpec(name="hr", url="http://h:1")
    assert spec.describe() == "hr (auto: http://h:1)"
    assert spec.describe("sse") == "hr (auto -> sse: http://h:1)"
    assert MCPServerSpec(name="s", command="run", args=("a",)).describe("stdio") == "s (stdio: run a)"


@pytest.mark.parametrize(
    ("given", "name"),
    [
        ({"server": "weather", "namespace": "ns", "url": "http://h:1"}, "weather"),
        ({"namespace": "hr_api", "url": "http://localhost:8080"}, "hr_api"),
        ({"url": "http://localhost:8080"}, "localhost:8080"),
        ({"url": "HTTPS://Mcp.Example.com/mcp"}, "mcp.example.com:443"),
        ({"url": "http://[::1]:9000/mcp"}, "__1:9000"),
    ],
)
def test_default_server_name(given: dict[str, str], name: str) -> None:
    assert default_server_name(**given) == name
    Tool("t", name)  # always usable as a namespace (no "::")


@pytest.mark.parametrize(
    ("given", "fragment"),
    [
        ({}, "missing server name"),
        ({"url": "not a url"}, "invalid url 'not a url'"),
        ({"url": "localhost:8080"}, "invalid url 'localhost:8080'"),
        ({"server": 7}, "invalid server 7"),
    ],
)
def test_default_server_name_errors(given: dict[str, object], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        default_server_name(**given)


def test_normalised_url_equates_spellings_of_one_endpoint() -> None:
    assert normalised_url("HTTP://LocalHost/mcp/") == normalised_url("http://localhost:80/mcp")
    assert normalised_url("http://h:8080") == normalised_url("http://h:8080/")
    assert normalised_url("http://h:8080/mcp") != normalised_url("http://h:8080/sse")
    assert normalised_url("http://h/mcp?a=1") != normalised_url("http://h/mcp")
