"""Tests of fms_dgt/core/tools/mcp/client.py against our test server as a real subprocess."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from support.mcp_harness import SERVER_SCRIPT, free_port, http_server, wait_until

from fms_dgt.core.tools.mcp import (
    MCPClient,
    MCPClientError,
    MCPServerSpec,
    MCPTimeoutError,
    clear_connections,
)


def _stdio_spec(name: str = "srv", **extra: object) -> MCPServerSpec:
    return MCPServerSpec(name=name, command=sys.executable, args=(str(SERVER_SCRIPT),), **extra)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def client() -> Iterator[MCPClient]:
    """One stdio session to our server, shared by this module's tests."""
    c = MCPClient(_stdio_spec("client-tests", call_timeout=20.0))
    yield c
    c.close()


@pytest.fixture(autouse=True)
def _empty_registry() -> Iterator[None]:
    yield
    clear_connections()


# --------------------------------------------------------------------------- stdio session


def test_list_and_call_over_stdio(client: MCPClient) -> None:
    page = client.list_tools_page()
    assert [t["name"] for t in page.tools] == ["forecast", "add", "echo", "raw_json"]
    assert page.next_cursor == "4"
    assert page.tools[0]["outputSchema"]["properties"]["celsius"] == {"title": "Celsius", "type": "number"}
    result = client.call_tool("add", {"a": 2, "b": 3})
    assert result["structuredContent"] == {"total": 5.0}
    assert result["isError"] is False
    assert client.connected and client.protocol_version is not None


def test_tool_error_is_a_result_not_an_exception(client: MCPClient) -> None:
    result = client.call_tool("fail", {"message": "nope"})
    assert result["isError"] is True
    assert "nope" in result["content"][0]["text"]


def test_call_timeout_names_server_transport_and_operation(client: MCPClient) -> None:
    with pytest.raises(MCPTimeoutError) as info:
        client.call_tool("sleep", {"seconds": 5}, timeout=0.3)
    message = str(info.value)
    assert "'client-tests'" in message and "(stdio)" in message and "tools/call sleep" in message
    assert info.value.operation == "tools/call sleep"
    # The session survives a timed-out request.
    assert client.call_tool("echo", {"text": "still here"})["structuredContent"] == {"result": "still here"}


def test_concurrent_calls_from_many_threads(client: MCPClient) -> None:
    def work(i: int) -> object:
        return client.call_tool("add", {"a": i, "b": 1000})["structuredContent"]["total"]

    with ThreadPoolExecutor(max_workers=16) as pool:
        totals = list(pool.map(work, range(64)))
    assert totals == [float(i + 1000) for i in range(64)]
    assert client.connects == 1


@pytest.mark.anyio
async def test_sync_api_inside_a_running_event_loop(client: MCPClient) -> None:
    # A sync call from a coroutine blocks this loop briefly but never needs it: the work runs on
    # the bridge's own loop, so there is no "event loop is already running" error.
    sync = client.call_tool("echo", {"text": "sync"})["structuredContent"]
    native = (await client.call_tool_async("echo", {"text": "async"}))["structuredContent"]
    assert (sync, native) == ({"result": "sync"}, {"result": "async"})


def test_list_changed_reaches_listeners(client: MCPClient) -> None:
    heard = threading.Event()
    remove = client.add_listener(heard.set)
    try:
        client.call_tool("add_tool", {"name": "listener_probe"})
        assert heard.wait(20), "no tools/list_changed notification arrived"
    finally:
        remove()
        client.call_tool("remove_tool", {"name": "listener_probe"})


def test_killed_stdio_server_is_restarted_on_next_use() -> None:
    c = MCPClient(_stdio_spec("killed", reconnect_backoff=0.1))
    try:
        first_pid = c.call_tool("pid", {})["structuredContent"]["result"]
        os.kill(first_pid, signal.SIGKILL)
        assert wait_until(lambda: not c.connected), "the client did not notice the server died"
        second_pid = c.call_tool("pid", {})["structuredContent"]["result"]
        assert second_pid != first_pid
        assert c.connects == 2
    finally:
        c.close()


def test_calls_work_on_a_server_whose_listing_loops() -> None:
    c = MCPClient(
        MCPServerSpec(name="loops", command=sys.executable, args=(str(SERVER_SCRIPT), "--bad-cursor"))
    )
    try:
        for text in ("one", "two"):
            assert c.call_tool("echo", {"text": text})["structuredContent"] == {"result": text}
    finally:
        c.close()


def test_bad_command_fails_naming_server_and_operation() -> None:
    c = MCPClient(MCPServerSpec(name="ghost", command="/nonexistent/mcp-server", connect_timeout=10))
    with pytest.raises(MCPClientError) as info:
        c.connect()
    assert info.value.operation == "connect"
    assert (
        "'ghost'" in str(info.value) and "(stdio)" in str(info.value) and "Check `command`" in str(info.value)
    )


def test_connect_timeout_when_the_process_never_answers() -> None:
    silent = MCPServerSpec(
        name="silent", command=sys.executable, args=("-c", "import time; time.sleep(30)"), connect_timeout=0.5
    )
    c = MCPClient(silent)
    with pytest.raises(MCPTimeoutError, match=r"MCP connect failed for server 'silent' \(stdio\)"):
        c.connect()
    assert not c.connected


def test_a_server_that_never_answers_initialize_fails_within_connect_timeout() -> None:
    script = "import sys, time; print('waiting for the license server', file=sys.stderr); time.sleep(60)"
    c = MCPClient(MCPServerSpec(name="mute", command=sys.executable, args=("-c", script), connect_timeout=1))
    started = time.monotonic()
    with pytest.raises(MCPTimeoutError) as info:
        c.connect()
    assert time.monotonic() - started < 8
    message = str(info.value)
    assert (
        "MCP connect failed for server 'mute' (stdio): no answer to the handshake (initialize) within 1 s"
        in message
    )
    assert "its stderr ended with: waiting for the license server" in message
    assert "raise `connect_timeout`" in message


def test_close_is_idempotent_and_use_reopens() -> None:
    c = MCPClient(_stdio_spec("reopen"))
    c.connect()
    c.close()
    c.close()
    assert not c.connected
    assert c.call_tool("echo", {"text": "again"})["structuredContent"] == {"result": "again"}
    assert c.connects == 2
    c.close()


def test_no_server_process_left_after_close() -> None:
    c = MCPClient(_stdio_spec("reaped"))
    pid = c.call_tool("pid", {})["structuredContent"]["result"]
    c.close()
    assert wait_until(lambda: not _alive(pid)), f"server process {pid} still runs after close()"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes (its parent, the SDK, reaps it).
    status = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True).stdout
    return bool(status.strip()) and not status.strip().startswith("Z")


# --------------------------------------------------------------------------- network transports


@pytest.mark.parametrize("transport", ["sse", "streamable_http"])
def test_http_transports_send_headers_and_call(transport: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_TEST_TOKEN", "tok-123")
    with http_server(transport) as url:
        spec = MCPServerSpec(
            name=f"net-{transport}", transport=transport, url=url, headers={"X-Token": "${MCP_TEST_TOKEN}"}
        )
        c = MCPClient(spec)
        try:
            header = c.call_tool("request_header", {"name": "X-Token"})["structuredContent"]
            assert header == {"result": "tok-123"}
            assert c.list_tools_page("8").tools[0]["name"] == "request_header"
        finally:
            c.close()


@pytest.mark.parametrize(
    ("transport", "protocol"),
    [
        ("streamable_http", "legacy"),
        pytest.param("streamable_http", "auto", marks=pytest.mark.slow),
        pytest.param("sse", "auto", marks=pytest.mark.slow),
        pytest.param("sse", "legacy", marks=pytest.mark.slow),
    ],
)
def test_restarted_http_server_is_reconnected_on_next_call(transport: str, protocol: str) -> None:
    port = free_port()
    with http_server(transport, port=port) as url:
        c = MCPClient(MCPServerSpec(name="restart", transport=transport, url=url, protocol=protocol))
        first = c.call_tool("pid", {})["structuredContent"]["result"]
    with http_server(transport, port=port):
        try:
            # The server forgot the session (or the stream ended): the call runs on a new one.
            second = c.call_tool("pid", {})["structuredContent"]["result"]
            assert second != first and c.connects == 2
        finally:
            c.close()


def test_unreachable_url_fails_naming_the_transport() -> None:
    c = MCPClient(
        MCPServerSpec(
            name="nowhere", transport="streamable_http", url="http://127.0.0.1:9/mcp", connect_timeout=5
        )
    )
    with pytest.raises(MCPClientError) as info:
        c.list_tools_page()
    assert "(streamable_http)" in str(info.value) and "Check `url`" in str(info.value)


@pytest.mark.parametrize("transport", ["sse", "streamable_http"])
def test_a_bare_url_finds_its_transport_and_sends_headers(
    transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_TEST_TOKEN", "tok-456")
    with http_server(transport, path="/") as url:
        spec = MCPServerSpec(name=f"bare-{transport}", url=url, headers={"X-Token": "${MCP_TEST_TOKEN}"})
        assert spec.transport == "auto" and url.count("/") == 2  # http://127.0.0.1:PORT
        c = MCPClient(spec)
        try:
            header = c.call_tool("request_header", {"name": "X-Token"})["structuredContent"]
            assert header == {"result": "tok-456"}
            assert c.transport == transport and c.connects == 1
            assert len(c.list_tools_page().tools) == 4
        finally:
            c.close()


def test_retire_hooks_run_once_per_last_release() -> None:
    c = MCPClient(_stdio_spec("hooked"))
    retired: list[MCPClient] = []
    c.add_retire_hook(retired.append)
    c.add_retire_hook(retired.append)  # the same hook twice: called once
    c.acquire()
    c.acquire()
    c.release()
    assert retired == []
    c.release()
    assert retired == [c]
