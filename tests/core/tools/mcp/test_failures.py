"""Tests of fms_dgt/core/tools/mcp/failures.py: how a failed MCP operation reads."""

from __future__ import annotations

from fms_dgt.core.tools.mcp import MCPConnectionLost, MCPServerSpec, MCPTimeoutError
from fms_dgt.core.tools.mcp.failures import client_error, connect_hint, lost_error, timeout_error

STDIO = MCPServerSpec(name="s", command="serve", args=("--api-key=fail-key-0001",))
HTTP = MCPServerSpec(name="h", transport="sse", url="http://127.0.0.1:1/sse")


def test_a_client_error_names_server_transport_operation_and_the_process_note() -> None:
    error = client_error(
        STDIO, "stdio", "connect", OSError("boom"), "Check it.", "; the server process exited"
    )
    assert (
        str(error)
        == "MCP connect failed for server 's' (stdio): OSError: boom; the server process exited. Check it."
    )


def test_secrets_are_hidden_in_every_message() -> None:
    error = client_error(STDIO, "stdio", "connect", ValueError("bad key fail-key-0001"))
    assert "fail-key-0001" not in str(error) and "***" in str(error)
    lost = lost_error(STDIO, "stdio", "tools/call x", EOFError(), note="; stderr said fail-key-0001")
    assert isinstance(lost, MCPConnectionLost) and "fail-key-0001" not in str(lost)


def test_a_timeout_names_what_did_not_answer_and_the_key_to_raise() -> None:
    handshake = timeout_error(STDIO, "stdio", "connect", 2)
    assert isinstance(handshake, MCPTimeoutError)
    assert "no answer to the handshake (initialize) within 2 s" in str(
        handshake
    ) and "`connect_timeout`" in str(handshake)
    listing = timeout_error(HTTP, "sse", "tools/list", 1.5)
    assert "no answer from http://127.0.0.1:1/sse within 1.5 s" in str(listing) and "`list_timeout`" in str(
        listing
    )
    assert "`call_timeout`" in str(timeout_error(STDIO, "stdio", "tools/call x", 1))


def test_connect_hints() -> None:
    assert "Check `command`" in connect_hint(STDIO, "stdio")
    assert "speaks MCP over streamable HTTP or SSE" in connect_hint(HTTP, "auto")
