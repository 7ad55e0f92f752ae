"""Tests of fms_dgt/core/tools/mcp/probe.py: which transport a URL speaks.

Our MCP test server runs as a real subprocess (SSE and streamable HTTP, at their usual paths and at
the root); the servers that are not MCP are small standard-library HTTP servers on loopback.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from support.mcp_harness import free_port, http_server

from fms_dgt.core.tools.mcp import MCPClient, MCPClientError, MCPServerSpec, MCPTimeoutError, get_bridge
from fms_dgt.core.tools.mcp.probe import TransportProbe

# path -> method -> (status, headers, body)
Routes = dict[str, dict[str, tuple[int, dict[str, str], bytes]]]


def _probe(url: str, **spec: object) -> tuple[str, TransportProbe]:
    probe = TransportProbe(MCPServerSpec(name="probed", url=url, **spec))  # type: ignore[arg-type]
    return get_bridge().run(probe.run()), probe


class _Plain:
    """A plain HTTP server on 127.0.0.1 answering fixed responses, recording what it was sent."""

    def __init__(self, routes: Routes) -> None:
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler(routes))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _handler(self, routes: Routes) -> type[BaseHTTPRequestHandler]:
        plain = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                plain.requests.append((self.command, self.path, dict(self.headers)))
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                status, headers, body = routes.get(self.path, {}).get(self.command, (404, {}, b"no"))
                self.send_response(status)
                for key, value in {"content-length": str(len(body)), **headers}.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_DELETE = _answer

            def log_message(self, *args: object) -> None:
                pass

        return Handler

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def plain() -> Iterator[Callable[[Routes], _Plain]]:
    servers: list[_Plain] = []

    def start(routes: Routes) -> _Plain:
        servers.append(_Plain(routes))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


HTML = {"content-type": "text/html"}
JSON = {"content-type": "application/json"}


# --------------------------------------------------------------------------- MCP servers


@pytest.mark.parametrize(
    ("transport", "path"), [("sse", "/"), ("streamable_http", "/"), ("streamable_http", None)]
)
def test_finds_the_transport_of_our_server(transport: str, path: str | None) -> None:
    with http_server(transport, path=path) as url:
        found, probe = _probe(url)
    assert found == transport
    assert probe.tried[0].startswith("POST initialize (streamable HTTP) answered")
    if transport == "sse":
        assert "405 Method Not Allowed" in probe.tried[0]
        assert probe.tried[1].endswith("an event stream whose first event is 'endpoint'")
    else:
        assert len(probe.tried) == 1 and "200" in probe.tried[0]


def test_the_probe_sends_the_configured_headers(plain: Callable[[Routes], _Plain]) -> None:
    server = plain({})
    with pytest.raises(MCPClientError):
        _probe(server.url, headers={"X-Token": "t-1"})
    assert [(method, headers.get("X-Token")) for method, _, headers in server.requests] == [
        ("POST", "t-1"),
        ("GET", "t-1"),
    ]
    post = server.requests[0][2]
    assert post["Accept"] == "application/json, text/event-stream"


# --------------------------------------------------------------------------- not MCP


def test_a_url_that_speaks_neither_names_what_each_request_got(plain: Callable[[Routes], _Plain]) -> None:
    server = plain({"/": {"GET": (200, HTML, b"<html></html>")}})
    with pytest.raises(MCPClientError) as info:
        _probe(server.url)
    message = str(info.value)
    assert info.value.server == "probed" and info.value.transport == "auto"
    assert f"{server.url} speaks neither MCP transport" in message
    assert "POST initialize (streamable HTTP) answered 404 Not Found" in message
    assert "GET with Accept: text/event-stream (SSE) answered 200 OK with content type text/html" in message


def test_an_event_stream_must_open_with_the_endpoint_event(plain: Callable[[Routes], _Plain]) -> None:
    stream = {"content-type": "text/event-stream"}
    server = plain({"/": {"GET": (200, stream, b"event: message\ndata: hello\n\n")}})
    with pytest.raises(MCPClientError, match="first event is 'message', not 'endpoint'"):
        _probe(server.url)


def test_a_2xx_that_is_not_an_mcp_answer_is_not_streamable_http(plain: Callable[[Routes], _Plain]) -> None:
    server = plain({"/": {"POST": (200, HTML, b"ok"), "GET": (200, HTML, b"ok")}})
    with pytest.raises(MCPClientError, match="200 OK with content type text/html, not an MCP answer"):
        _probe(server.url)


def test_a_jsonrpc_error_answer_means_streamable_http(plain: Callable[[Routes], _Plain]) -> None:
    refusal = json.dumps({"jsonrpc": "2.0", "id": 0, "error": {"code": -32022, "message": "no"}}).encode()
    server = plain(
        {"/new": {"POST": (400, JSON, refusal)}, "/old": {"POST": (307, {"location": "/new"}, b"")}}
    )
    found, probe = _probe(f"{server.url}/old")  # a redirect within the origin is followed
    assert found == "streamable_http" and "JSON-RPC error" in probe.tried[0]
    assert [(method, path) for method, path, _ in server.requests] == [("POST", "/old"), ("POST", "/new")]


def test_a_redirect_to_another_origin_is_not_followed(plain: Callable[[Routes], _Plain]) -> None:
    target = plain({})
    elsewhere = target.url.replace("127.0.0.1", "localhost") + "/mcp"  # another host: another origin
    away = {"POST": (307, {"location": elsewhere}, b""), "GET": (302, {"location": elsewhere}, b"")}
    server = plain({"/mcp": away})
    with pytest.raises(MCPClientError, match=r"answered 307 Temporary Redirect to .*\(not followed\)"):
        _probe(f"{server.url}/mcp", headers={"Authorization": "Bearer secret"})
    assert target.requests == []  # the credentials never went to the other origin


def test_an_unreachable_url_fails_at_once_without_the_sse_request() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    started = time.monotonic()
    with pytest.raises(MCPClientError) as info:
        _probe(url, connect_timeout=5)
    assert time.monotonic() - started < 5
    message = str(info.value)
    assert f"cannot reach {url}" in message and "SSE was not tried" in message
    assert "POST initialize (streamable HTTP)" in message


# --------------------------------------------------------------------------- through the client


def test_the_client_records_the_transport_it_found_and_keeps_it_across_reconnects() -> None:
    port = free_port()
    with http_server("sse", port=port, path="/") as url:
        client = MCPClient(MCPServerSpec(name="found", url=url, reconnect_backoff=0.1))
        assert client.transport == "auto"
        try:
            assert client.call_tool("echo", {"text": "a"})["structuredContent"] == {"result": "a"}
            assert client.transport == "sse" and client.spec.transport == "auto"
            assert "auto -> sse" in repr(client)
        finally:
            client.close()
    with http_server("sse", port=port, path="/"):
        try:
            assert client.call_tool("echo", {"text": "b"})["structuredContent"] == {"result": "b"}
            assert client.connects == 2 and client.transport == "sse"
        finally:
            client.close()


def test_a_server_that_never_answers_is_bounded_by_connect_timeout() -> None:
    # A socket that listens but never accepts: the TCP handshake completes (backlog), no HTTP answer.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/mcp"
        client = MCPClient(MCPServerSpec(name="mute", url=url, connect_timeout=1))
        started = time.monotonic()
        with pytest.raises(MCPTimeoutError) as info:
            client.connect()
        elapsed = time.monotonic() - started
    assert elapsed < 4, f"connecting took {elapsed:.1f} s with connect_timeout=1"
    message = str(info.value)
    assert f"no answer from {url} within 1 s" in message
    assert "tried POST initialize (streamable HTTP): no answer yet" in message
    assert "(auto)" in message and "connect_timeout" in message
