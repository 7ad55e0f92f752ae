"""The errors an :class:`~fms_dgt.core.tools.mcp.client.MCPClient` raises, worded for the person
running the job: the server, the transport, the operation, why, and what to check.

A stdio server's exit code and the end of its stderr are added when known (``note``), and every
message passes through :func:`fms_dgt.secrets.redact`.
"""

from __future__ import annotations

from fms_dgt.core.tools.mcp.errors import MCPClientError, MCPConnectionLost, MCPTimeoutError
from fms_dgt.core.tools.mcp.spec import AUTO, MCPServerSpec
from fms_dgt.core.tools.mcp.transports import describe_exc
from fms_dgt.secrets import redact

__all__ = ["client_error", "connect_hint", "lost_error", "timeout_error"]


def client_error(
    spec: MCPServerSpec, transport: str, operation: str, exc: BaseException, hint: str = "", note: str = ""
) -> MCPClientError:
    """``MCP <operation> failed for server '<name>' (<transport>): <why><note>. <hint>``."""
    if isinstance(exc, MCPClientError):
        return type(exc)(spec.name, transport, operation, exc.reason, hint)
    reason = redact(describe_exc(exc) + note)
    return MCPClientError(spec.name, transport, operation, reason, hint)


def timeout_error(
    spec: MCPServerSpec, transport: str, operation: str, seconds: float, tried: str = "", note: str = ""
) -> MCPTimeoutError:
    """No answer within ``seconds``; names the timeout key to raise."""
    key = {"connect": "connect_timeout", "tools/list": "list_timeout"}.get(operation, "call_timeout")
    source = (
        f" from {spec.url}"
        if spec.url
        else " to the handshake (initialize)"
        if operation == "connect"
        else ""
    )
    reason = f"no answer{source} within {seconds:g} s" + (f" (tried {tried})" if tried else "") + note
    hint = f"Check that the server is healthy, or raise `{key}`."
    return MCPTimeoutError(spec.name, transport, operation, redact(reason), hint)


def lost_error(
    spec: MCPServerSpec, transport: str, operation: str, exc: BaseException, note: str = ""
) -> MCPConnectionLost:
    """The connection dropped while ``operation`` was in flight."""
    return MCPConnectionLost(
        spec.name,
        transport,
        operation,
        redact(f"the connection dropped ({describe_exc(exc)}){note}"),
        "The next use reconnects; a tools/call may or may not have run on the server.",
    )


def connect_hint(spec: MCPServerSpec, transport: str) -> str:
    """What to check when connecting failed."""
    if transport == "stdio":
        return "Check `command`, `args` and `cwd`, and that the command runs an MCP server on stdio."
    speaks = "MCP over streamable HTTP or SSE" if transport == AUTO else "this transport"
    return redact(f"Check `url` ({spec.url}) and `headers`, and that the server is up and speaks {speaks}.")
