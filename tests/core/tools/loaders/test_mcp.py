"""Tests of fms_dgt/core/tools/loaders/mcp.py: our server (stdio, SSE, streamable HTTP) and the
reference server ``@modelcontextprotocol/server-everything``."""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from support.mcp_harness import (
    SERVER_SCRIPT,
    everything_command,
    everything_http_server,
    free_port,
    http_server,
    listening_addresses,
    stdio_kwargs,
    wait_until,
)

from fms_dgt.core.tools.data_objects import ToolCall
from fms_dgt.core.tools.engines.mcp import MCPToolEngine
from fms_dgt.core.tools.loaders.mcp import MCPToolLoader
from fms_dgt.core.tools.mcp import clear_connections, get_connection
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.errors import ConfigError, LoadError

OUR_TOOLS = {
    "forecast",
    "add",
    "echo",
    "raw_json",
    "media",
    "fail",
    "sleep",
    "pid",
    "request_header",
    "add_tool",
    "remove_tool",
}


@pytest.fixture(autouse=True)
def _no_leftover_connections() -> Iterator[None]:
    yield
    clear_connections()


@pytest.fixture(scope="module")
def stdio_registry() -> Iterator[ToolRegistry]:
    loader = MCPToolLoader(server="ours", **stdio_kwargs())
    with ToolRegistry(loaders=[loader]) as registry:
        yield registry


# --------------------------------------------------------------------------- conversion


def test_loads_every_page_over_stdio(stdio_registry: ToolRegistry) -> None:
    assert {t.name for t in stdio_registry} == OUR_TOOLS  # 11 tools over 3 pages of 4
    assert stdio_registry.namespaces() == ["ours"]
    [loader] = stdio_registry.loaders
    assert loader.report.tools == len(OUR_TOOLS) and not loader.report.problems


def test_input_and_output_schemas(stdio_registry: ToolRegistry) -> None:
    forecast = stdio_registry.get("ours::forecast")
    assert forecast.parameters["required"] == ["city"]
    assert forecast.parameters["properties"]["days"]["type"] == "integer"
    assert set(forecast.output_parameters["properties"]) == {"city", "celsius", "conditions"}
    assert stdio_registry.get("ours::raw_json").output_parameters == {}


def test_title_annotations_and_meta_kept_in_metadata(stdio_registry: ToolRegistry) -> None:
    metadata = stdio_registry.get("ours::forecast").metadata
    assert metadata["kind"] == "mcp" and metadata["server"] == "ours" and metadata["transport"] == "stdio"
    assert metadata["title"] == "Weather forecast"
    assert metadata["annotations"]["readOnlyHint"] is True
    assert metadata["meta"] == {"category": "weather"}
    assert metadata["source"].startswith("mcp:ours#/tools/")


def test_namespace_from_config() -> None:
    loader = MCPToolLoader(
        server="ns-test", namespace="weather_api", **stdio_kwargs(argv=["--page-size", "50"])
    )
    try:
        tools = loader.load()
    finally:
        loader.close()
    assert {t.namespace for t in tools} == {"weather_api"}
    assert {t.metadata["server"] for t in tools} == {"ns-test"}


def test_cursor_that_does_not_advance_is_an_error() -> None:
    loader = MCPToolLoader(server="looping", **stdio_kwargs(argv=["--bad-cursor"]))
    try:
        with pytest.raises(LoadError, match="pagination does not advance") as info:
            loader.load()
    finally:
        loader.close()
    assert info.value.source == "looping"


def test_unreachable_server_is_a_load_error_naming_it() -> None:
    loader = MCPToolLoader(server="down", transport="sse", url="http://127.0.0.1:9/sse", connect_timeout=5)
    with pytest.raises(LoadError, match=r"MCP connect failed for server 'down' \(sse\)"):
        loader.load()
    loader.close()


def test_bad_tool_definitions_are_skipped_and_reported() -> None:
    loader = MCPToolLoader(server="conv", command="unused")
    raw: list[dict[str, Any]] = [
        {"name": "ok", "inputSchema": {"type": "object", "properties": {"x": {"type": "int"}}}},
        {"name": "bad::name", "inputSchema": {"type": "object"}},
        {"name": "not_object", "inputSchema": {"type": "array"}},
    ]
    tools = [t for i, r in enumerate(raw) if (t := loader._convert(r, i)) is not None]
    assert [t.name for t in tools] == ["ok"]
    assert tools[0].parameters["properties"]["x"] == {"type": "integer"}
    assert tools[0].metadata["normalised"]  # the dialect fix is recorded
    assert [p.pointer for p in loader.report.skipped] == ["/tools/1", "/tools/2"]


# --------------------------------------------------------------------------- config


def test_config_entry_builds_an_mcp_loader(tmp_path: Path) -> None:
    config = {
        "tools": {
            "registry": [
                {
                    "type": "mcp",
                    "server": "cfg",
                    "command": sys.executable,
                    "args": [str(SERVER_SCRIPT), "--page-size", "3"],
                    "cwd": str(tmp_path),
                }
            ]
        }
    }
    with ToolRegistry.from_config(config) as registry:
        assert {t.name for t in registry} == OUR_TOOLS


@pytest.mark.parametrize(
    ("entry", "fragment"),
    [
        ({"type": "mcp", "server": "x", "command": "c", "port": 1}, "unknown key 'port'"),
        ({"type": "mcp", "command": "c"}, "missing server name"),
        ({"type": "mcp", "namespace": "n"}, "missing command or url"),
        ({"type": "mcp", "url": "ftp://h/mcp"}, "invalid url"),
        ({"type": "mcp", "server": "x", "transport": "sse"}, "missing url"),
        ({"type": "mcp", "server": "x", "command": "c", "args": "a b"}, "invalid args"),
    ],
)
def test_bad_config_entries(entry: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment) as info:
        ToolRegistry.from_config({"tools": {"registry": [entry]}})
    assert info.value.yaml_path is not None and info.value.yaml_path.startswith("tools.registry[0]")


# --------------------------------------------------------------------------- a URL alone


@pytest.mark.parametrize("transport", ["sse", "streamable_http"])
def test_the_seed_entry_loads_verbatim_over_either_transport(transport: str) -> None:
    # {type: mcp, url: http://localhost:8080, namespace: hr_api}: no server, no transport, bare URL.
    with http_server(transport, path="/") as url:
        entry = {"type": "mcp", "url": url, "namespace": "hr_api"}
        with ToolRegistry.from_config({"tools": {"registry": [entry]}}) as registry:
            assert {t.name for t in registry} == OUR_TOOLS
            assert registry.namespaces() == ["hr_api"]
            forecast = registry.get("hr_api::forecast")
            assert forecast.metadata["server"] == "hr_api"
            assert forecast.metadata["transport"] == transport  # the one actually used
            [loader] = registry.loaders
            assert isinstance(loader, MCPToolLoader) and loader.transport == transport
            assert loader.report.source == f"mcp server hr_api (auto -> {transport}: {url})"
            with MCPToolEngine(registry) as engine:
                engine.setup("s")
                [result] = engine.execute("s", [ToolCall("hr_api::add", {"a": 1, "b": 2})])
            assert result.result == {"total": 3.0}


def test_without_a_namespace_the_server_is_named_after_host_and_port() -> None:
    with http_server("streamable_http") as url:
        loader = MCPToolLoader(url=url)
        with ToolRegistry(loaders=[loader]) as registry:
            name = url.removeprefix("http://").removesuffix("/mcp")
            assert loader.server == name and registry.namespaces() == [name]
            assert registry.get(f"{name}::echo").metadata["transport"] == "streamable_http"


def test_a_url_ending_in_sse_uses_sse_without_asking() -> None:
    loader = MCPToolLoader(url="http://127.0.0.1:1/sse", namespace="n")
    assert loader.spec.transport == "sse" and loader.transport == "sse"
    assert MCPToolLoader(command="run", namespace="n").transport == "stdio"


def test_an_unreachable_url_is_a_load_error_naming_server_url_and_what_was_tried() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    loader = MCPToolLoader(url=url, namespace="hr_api", connect_timeout=5)
    started = time.monotonic()
    with pytest.raises(LoadError) as info:
        loader.load()
    loader.close()
    assert time.monotonic() - started < 5
    message = str(info.value)
    assert "MCP connect failed for server 'hr_api' (auto)" in message
    assert f"cannot reach {url}" in message and "POST initialize (streamable HTTP)" in message
    assert "Traceback" not in message and info.value.source == "hr_api"


def test_a_url_that_is_neither_protocol_is_a_load_error_saying_what_each_request_got() -> None:
    # An ordinary web server: a socket answering every request with a small HTML page.
    with _html_server() as url:
        loader = MCPToolLoader(url=url, namespace="web", connect_timeout=5)
        with pytest.raises(LoadError) as info:
            loader.load()
        loader.close()
    message = str(info.value)
    assert "server 'web' (auto)" in message and f"{url} speaks neither MCP transport" in message
    assert "POST initialize (streamable HTTP) answered 200 OK with content type text/html" in message
    assert "GET with Accept: text/event-stream (SSE) answered 200 OK with content type text/html" in message


def test_a_silent_url_is_a_load_error_within_connect_timeout() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        loader = MCPToolLoader(url=url, namespace="mute", connect_timeout=1)
        started = time.monotonic()
        with pytest.raises(LoadError, match=rf"no answer from {url} within 1 s \(tried POST initialize"):
            loader.load()
        loader.close()
    assert time.monotonic() - started < 4


@contextmanager
def _html_server() -> Iterator[str]:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Page(BaseHTTPRequestHandler):
        def _page(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            body = b"<html><body>hello</body></html>"
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _page

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


# --------------------------------------------------------------------------- sessions, refresh, staleness


def test_refresh_reuses_the_session_and_picks_up_a_list_change() -> None:
    loader = MCPToolLoader(server="changing", **stdio_kwargs())
    with ToolRegistry(loaders=[loader]) as registry:
        client = loader.client
        assert client is not None and not registry.stale
        client.call_tool("add_tool", {"name": "brand_new"})
        assert wait_until(lambda: registry.stale), "list_changed did not mark the registry stale"
        report = registry.refresh()
        assert list(report.added) == ["changing::brand_new"]
        assert not registry.stale
        assert registry.get("changing::brand_new").description == "Added at run time: brand_new."
        assert loader.client is client and client.connects == 1


def test_auto_refresh_updates_the_bound_registry() -> None:
    loader = MCPToolLoader(server="auto", auto_refresh=True, **stdio_kwargs())
    with ToolRegistry(loaders=[loader]) as registry:
        loader.bind_registry(registry)
        assert loader.client is not None
        loader.client.call_tool("add_tool", {"name": "appears_by_itself"})
        assert wait_until(lambda: "auto::appears_by_itself" in registry), "the registry was not refreshed"
        loader.client.call_tool("remove_tool", {"name": "echo"})
        assert wait_until(lambda: "auto::echo" not in registry)


def test_loaders_naming_the_same_server_share_one_session() -> None:
    first = MCPToolLoader(server="twin", namespace="a", **stdio_kwargs())
    second = MCPToolLoader(server="twin", namespace="b", **stdio_kwargs())
    with ToolRegistry(loaders=[first, second]) as registry:
        assert first.client is second.client
        assert first.client is not None and first.client.connects == 1
        assert registry.namespaces() == ["a", "b"]
    assert get_connection("twin") is None  # the last release closed and unregistered it


@pytest.mark.parametrize("transport", ["sse", "streamable_http"])
def test_network_transports_load_and_notify(transport: str) -> None:
    with http_server(transport) as url:
        loader = MCPToolLoader(server=f"net-{transport}", transport=transport, url=url)
        with ToolRegistry(loaders=[loader]) as registry:
            assert {t.name for t in registry} == OUR_TOOLS
            assert registry.get(f"net-{transport}::forecast").metadata["transport"] == transport
            assert loader.client is not None
            loader.client.call_tool("add_tool", {"name": "over_http"})
            assert wait_until(lambda: registry.stale)
            assert list(registry.refresh().added) == [f"net-{transport}::over_http"]


@pytest.mark.parametrize("protocol", ["legacy"])
def test_handshake_era_protocol_also_notifies(protocol: str) -> None:
    loader = MCPToolLoader(server="legacy", protocol=protocol, **stdio_kwargs())
    with ToolRegistry(loaders=[loader]) as registry:
        assert loader.client is not None and loader.client.protocol_version == "2025-11-25"
        loader.client.call_tool("add_tool", {"name": "legacy_tool"})
        assert wait_until(lambda: registry.stale)


# --------------------------------------------------------------------------- the reference server


@pytest.fixture(scope="module")
def everything() -> Path:
    command = everything_command()
    if command is None:
        pytest.skip("server-everything is not in .cache/node and npm is absent or could not install it")
    return command


def _check_everything(registry: ToolRegistry, namespace: str) -> None:
    names = {t.name for t in registry}
    assert {"echo", "get-sum", "get-structured-content", "get-tiny-image"} <= names
    structured = registry.get(f"{namespace}::get-structured-content")
    assert structured.output_parameters["type"] == "object"
    with MCPToolEngine(registry) as engine:
        engine.setup("s")
        echo, total = engine.execute(
            "s",
            [
                ToolCall(f"{namespace}::echo", {"message": "hello"}),
                ToolCall(f"{namespace}::get-sum", {"a": 2, "b": 5}),
            ],
        )
    assert echo.ok and "hello" in str(echo.result)
    assert total.ok and "7" in str(total.result)


def test_reference_server_over_stdio(everything: Path) -> None:
    loader = MCPToolLoader(server="everything", command=str(everything), args=["stdio"])
    with ToolRegistry(loaders=[loader]) as registry:
        _check_everything(registry, "everything")
        metadata = registry.get("everything::echo").metadata
        assert metadata["title"] == "Echo Tool" and "readOnlyHint" in metadata["annotations"]


@pytest.mark.parametrize("transport", ["sse", "streamable_http"])
def test_reference_server_over_http_bound_to_loopback(
    everything: Path, transport: str, tmp_path: Path
) -> None:
    with everything_http_server(transport, tmp_path) as url:
        port = urlparse(url).port
        assert port is not None and listening_addresses(port) == {"127.0.0.1"}
        loader = MCPToolLoader(server=f"everything-{transport}", transport=transport, url=url)
        with ToolRegistry(loaders=[loader]) as registry:
            _check_everything(registry, f"everything-{transport}")
