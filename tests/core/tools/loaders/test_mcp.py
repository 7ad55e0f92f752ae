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
    hostile_kwargs,
    http_server,
    listening_addresses,
    stdio_kwargs,
    wait_until,
)

from fms_dgt.core.tools.data_objects import Tool, ToolCall
from fms_dgt.core.tools.engines.mcp import MCPToolEngine
from fms_dgt.core.tools.loaders._mcp_tools import MCPToolBuilder
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
    builder = MCPToolBuilder("conv", "conv", "stdio", "first", loader.report)
    for i, r in enumerate(raw):
        builder.add(i, r)
    tools = builder.tools
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


# --------------------------------------------------------------------------- servers that misbehave

GOOD_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}


def _hostile_load(scenario: dict[str, Any], **extra: Any) -> tuple[list[Tool], MCPToolLoader]:
    loader = MCPToolLoader(server="hostile", **hostile_kwargs(scenario, **extra))
    try:
        return loader.load(), loader
    finally:
        loader.close()


def test_each_malformed_tool_is_skipped_and_named_the_rest_load() -> None:
    tools: list[Any] = [
        {"name": "good", "inputSchema": GOOD_SCHEMA},
        {"description": "no name", "inputSchema": {"type": "object"}},
        {"name": "schema_is_a_list", "inputSchema": ["city"]},
        {"name": "no_schema"},
        {"name": "dangling", "inputSchema": _ref_to("#/$defs/gone")},
        {"name": "bell\u0007name", "inputSchema": {"type": "object"}},
        {"name": "rtl\u202eeman", "inputSchema": {"type": "object"}},
        {"name": "a::b", "inputSchema": {"type": "object"}},
        {"name": "deep", "inputSchema": _nested(200)},
        {
            "name": "bad_output",
            "inputSchema": {"type": "object"},
            "outputSchema": _ref_to("file:///etc/passwd"),
        },
        {"name": "also_good", "inputSchema": {"type": "object"}},
    ]
    loaded, loader = _hostile_load({"tools": tools})
    assert [t.name for t in loaded] == ["good", "also_good"]
    assert loaded[1].metadata["source"] == "mcp:hostile#/tools/10"
    skipped = {p.pointer: p.message for p in loader.report.skipped}
    assert sorted(skipped) == [f"/tools/{i}" for i in range(1, 10)]
    assert all("of server 'hostile' skipped" in m for m in skipped.values())
    assert "name: Field required" in skipped["/tools/1"] and "(index 1)" in skipped["/tools/1"]
    assert "'schema_is_a_list' (index 2)" in skipped["/tools/2"]
    assert "inputSchema" in skipped["/tools/3"]
    assert (
        "'#/$defs/gone' points to nothing" in skipped["/tools/4"]
        and "'#/$defs/<name>'" in skipped["/tools/4"]
    )
    assert "U+0007" in skipped["/tools/5"] and "U+202E" in skipped["/tools/6"]
    assert "namespace separator" in skipped["/tools/7"]
    assert "nested more than 128 levels" in skipped["/tools/8"]
    assert "outputSchema cannot be used" in skipped["/tools/9"]
    assert loader.report.tools == 2


def test_a_remote_ref_is_never_fetched() -> None:
    with _counting_server() as (url, requests):
        tools = [
            {"name": "remote", "inputSchema": _ref_to(f"{url}/a.json")},
            {"name": "remote_output", "inputSchema": GOOD_SCHEMA, "outputSchema": _ref_to(f"{url}/b.json")},
            {"name": "file", "inputSchema": _ref_to("file:///etc/passwd")},
            {"name": "local", "inputSchema": {**_ref_to("#/$defs/c"), "$defs": {"c": {"type": "string"}}}},
        ]
        loaded, loader = _hostile_load({"tools": tools})
    assert [t.name for t in loaded] == ["local"]
    assert [p.pointer for p in loader.report.skipped] == ["/tools/0", "/tools/1", "/tools/2"]
    assert "never fetched" in loader.report.skipped[0].message
    assert requests == []


def test_repeats_fold_overload_or_follow_on_conflict() -> None:
    other = {"type": "object", "properties": {"days": {"type": "integer"}}}
    tools = [
        {"name": "forecast", "inputSchema": GOOD_SCHEMA},
        {"name": "forecast", "inputSchema": GOOD_SCHEMA},  # the same again: folds
        {"name": "forecast", "inputSchema": other},  # another schema: an overload
        {"name": "forecast", "description": "reworded", "inputSchema": GOOD_SCHEMA},  # annotations differ
    ]
    loaded, loader = _hostile_load({"tools": tools})
    assert [t.parameters for t in loaded] == [GOOD_SCHEMA, other]
    assert loader.report.folded == 1
    [warning] = loader.report.warnings
    assert warning.pointer == "/tools/3" and "repeats the input schema of index 0" in warning.message
    with ToolRegistry(loaders=[MCPToolLoader(server="ovl", **hostile_kwargs({"tools": tools}))]) as registry:
        assert len(registry.overloads("ovl::forecast")) == 2
    with pytest.raises(LoadError, match=r"\(index 3\) of server 'hostile' repeats.*on_conflict: first"):
        _hostile_load({"tools": tools}, on_conflict="error")


def test_pagination_that_cycles_is_an_error() -> None:
    pages = {
        "": {"tools": [{"name": "a", "inputSchema": {"type": "object"}}], "next": "p1"},
        "p1": {"tools": [{"name": "b", "inputSchema": {"type": "object"}}], "next": "p2"},
        "p2": {"tools": [{"name": "c", "inputSchema": {"type": "object"}}], "next": "p1"},
    }
    with pytest.raises(LoadError, match="pagination does not advance: the server returned cursor 'p1' again"):
        _hostile_load({"pages": pages})


def test_a_page_with_too_many_tools_is_an_error() -> None:
    with pytest.raises(LoadError, match=r"lists more than max_tools=1000 tools \(20000 so far\)"):
        _hostile_load({"tool_count": 20_000}, max_tools=1000)
    loaded, _ = _hostile_load({"tool_count": 3000}, max_tools=5000)
    assert len(loaded) == 3000


def test_a_page_over_max_message_bytes_is_an_error_naming_the_limit() -> None:
    tools = [{"name": f"t{i}", "description": "d" * 1000, "inputSchema": GOOD_SCHEMA} for i in range(100)]
    with pytest.raises(LoadError, match=r"tools/list failed .*over max_message_bytes \(65536\)"):
        _hostile_load({"tools": tools}, max_message_bytes=65536, list_timeout=20)


def test_secrets_stay_out_of_reports_and_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOSTILE_DEPLOY_TOKEN", "ld-secret-0001-zz")
    tools = [{"name": "ok", "inputSchema": {"type": "object"}}, {"inputSchema": {}}]
    kwargs = hostile_kwargs({"tools": tools})
    kwargs["args"] += ["--token=ld-secret-0002-zz", "ld-secret-0001-zz"]
    loader = MCPToolLoader(server="sec", env={"SERVICE_API_KEY": "ld-secret-0003-zz"}, **kwargs)
    with ToolRegistry(loaders=[loader]) as registry:
        problems = [str(p) for p in loader.report.problems]
        metadata = [str(t.metadata) for t in registry]
        text = " ".join([loader.describe(), loader.report.source, repr(loader.spec), *problems, *metadata])
    assert "--token=***" in text
    for secret in ("ld-secret-0001-zz", "ld-secret-0002-zz", "ld-secret-0003-zz"):
        assert secret not in text


@pytest.mark.parametrize(
    ("key", "value"),
    [("max_tools", 0), ("max_pages", "many"), ("on_conflict", "last"), ("max_message_bytes", 10)],
)
def test_bad_bounds_are_config_errors(key: str, value: object) -> None:
    with pytest.raises(ConfigError, match=f"invalid {key}"):
        MCPToolLoader(server="b", command="c", **{key: value})


def _ref_to(ref: str) -> dict[str, Any]:
    return {"type": "object", "properties": {"a": {"$ref": ref}}}


def _nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


@contextmanager
def _counting_server() -> Iterator[tuple[str, list[str]]]:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    requests: list[str] = []

    class Schema(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            body = b'{"type": "string"}'
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Schema)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", requests
    finally:
        server.shutdown()
        server.server_close()


def test_a_tool_holding_a_lone_surrogate_is_skipped_with_where() -> None:
    # A JSON escape can write half of an emoji's pair; no record or encoder can hold it.
    tools: list[Any] = [
        {"name": "half_emoji", "description": "Smile \ud83d.", "inputSchema": {"type": "object"}},
        {"name": "bad_key", "inputSchema": {"type": "object", "properties": {"a\udc00": {}}}},
        {"name": "whole_emoji", "description": "Smile \U0001f600.", "inputSchema": {"type": "object"}},
    ]
    loaded, loader = _hostile_load({"tools": tools})
    assert [(t.name, t.description) for t in loaded] == [("whole_emoji", "Smile \U0001f600.")]
    skipped = {p.pointer: p.message for p in loader.report.skipped}
    assert sorted(skipped) == ["/tools/0", "/tools/1"]
    assert "lone surrogate (\\ud83d)" in skipped["/tools/0"] and "at /description" in skipped["/tools/0"]
    assert "(in a key)" in skipped["/tools/1"] and "/inputSchema/properties/a\\udc00" in skipped["/tools/1"]
    str(loader.report).encode("utf-8")  # the report itself can be printed and written
