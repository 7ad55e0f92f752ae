"""Tests of fms_dgt/core/tools/mcp/connections.py: the shared connection registry."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from support.mcp_harness import SERVER_SCRIPT

from fms_dgt.core.tools.mcp import (
    EventLoopBridge,
    MCPClient,
    MCPClientError,
    MCPServerSpec,
    clear_connections,
    connection_for_url,
    get_connection,
    open_connection,
    register_connection,
    unregister_connection,
)
from fms_dgt.errors import ConfigError, DGTError


def _stdio_spec(name: str) -> MCPServerSpec:
    return MCPServerSpec(name=name, command=sys.executable, args=(str(SERVER_SCRIPT),))


@pytest.fixture(autouse=True)
def _empty_registry() -> Iterator[None]:
    yield
    clear_connections()


def test_registry_register_get_clear() -> None:
    a = MCPClient(_stdio_spec("a"))
    register_connection("a", a)
    assert get_connection("a") is a
    assert get_connection("missing") is None
    with pytest.raises(DGTError, match="duplicate MCP connection 'a'"):
        register_connection("a", MCPClient(_stdio_spec("a")))
    unregister_connection("a", MCPClient(_stdio_spec("a")))  # another client: no effect
    assert get_connection("a") is a
    clear_connections()
    assert get_connection("a") is None


@pytest.mark.parametrize("impostor", [object(), "a client", None])
def test_only_mcp_clients_can_be_registered(impostor: object) -> None:
    with pytest.raises(DGTError, match=r"invalid MCP connection 'x': expected an MCPClient, got") as info:
        register_connection("x", impostor)  # type: ignore[arg-type]
    assert "open_connection(spec)" in str(info.value)
    assert get_connection("x") is None
    with pytest.raises(DGTError, match="invalid MCP connection name"):
        register_connection("", MCPClient(_stdio_spec("a")))


def test_open_connection_shares_and_counts_references() -> None:
    first = open_connection(_stdio_spec("shared"))
    second = open_connection(_stdio_spec("shared"))
    assert first is second and first.refs == 2
    first.release()
    assert get_connection("shared") is first
    second.release()
    assert first.refs == 0 and get_connection("shared") is None


def test_the_last_release_forgets_every_name_of_a_client() -> None:
    client = open_connection(_stdio_spec("one"))
    register_connection("alias", client)
    client.release()
    assert get_connection("one") is None and get_connection("alias") is None


def test_a_released_client_does_not_reopen_until_acquired() -> None:
    held = open_connection(_stdio_spec("retired"))
    assert held.call_tool("echo", {"text": "x"})["isError"] is False
    held.release()
    assert not held.connected
    with pytest.raises(MCPClientError, match="released the connection"):
        held.call_tool("echo", {"text": "late"})
    held.acquire()
    assert held.call_tool("echo", {"text": "again"})["structuredContent"] == {"result": "again"}
    held.release()


def test_open_connection_rejects_a_different_endpoint_under_the_same_name() -> None:
    held = open_connection(_stdio_spec("dup"))
    with pytest.raises(ConfigError, match="conflicting MCP server 'dup'"):
        open_connection(MCPServerSpec(name="dup", command="other-server"))
    held.release()


def test_connection_for_url_matches_equivalent_spellings_and_headers() -> None:
    plain = MCPClient(MCPServerSpec(name="plain", url="http://127.0.0.1:8080"))
    secret = MCPClient(MCPServerSpec(name="secret", url="http://127.0.0.1:8081/mcp", headers={"K": "1"}))
    register_connection("plain", plain)
    register_connection("secret", secret)
    assert connection_for_url("HTTP://127.0.0.1:8080/") is plain
    assert connection_for_url("http://127.0.0.1:8081/mcp") is secret
    assert connection_for_url("http://127.0.0.1:8081/mcp", {"K": "1"}) is secret
    assert connection_for_url("http://127.0.0.1:8081/mcp", {"K": "2"}) is None
    assert connection_for_url("http://127.0.0.1:8080/mcp") is None


def test_clear_connections_closes_every_client_then_reports_the_failures() -> None:
    # A client cannot be closed (blocking) from its own event-loop thread: a real failure. Clients
    # "a" and "c" live on a second bridge and clear_connections() runs on that bridge's thread, so
    # they fail to close while "b", on the process-wide bridge, closes normally.
    other = EventLoopBridge("other-mcp-loop")
    a = MCPClient(_stdio_spec("a"), bridge=other)
    b = MCPClient(_stdio_spec("b"))
    c = MCPClient(_stdio_spec("c"), bridge=other)
    for name, client in (("a", a), ("b", b), ("c", c)):
        client.connect()
        register_connection(name, client)

    async def clear_from_the_loop() -> BaseException | None:
        try:
            clear_connections()
        except DGTError as exc:
            return exc
        return None

    error = other.run(clear_from_the_loop())
    try:
        assert error is not None
        message = str(error)
        assert "failed for 2 of 3 servers" in message and "'a'" in message and "'c'" in message
        assert "'b'" not in message and "would deadlock" in message
        assert not b.connected, "a failing client stopped the others from closing"
        assert all(get_connection(n) is None for n in "abc")
    finally:
        a.close()
        c.close()
    assert not a.connected and not c.connected
