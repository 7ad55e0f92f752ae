"""The errors of the MCP package: one module, so every part of the package raises the same classes.

::

    DGTError
    └── MCPClientError          an MCP connect/list/call failed (names server, transport, operation)
        ├── MCPTimeoutError     ... ran out of time (also a ``TimeoutError``)
        └── MCPConnectionLost   ... the connection dropped mid-request
"""

from __future__ import annotations

from fms_dgt.errors import DGTError

__all__ = ["MCPClientError", "MCPConnectionLost", "MCPTimeoutError"]


class MCPClientError(DGTError):
    """An MCP operation failed.

    Attributes:
        server: the server's name.
        transport: ``stdio``, ``sse``, ``streamable_http``, or ``auto`` before an HTTP server's
            transport is known.
        operation: ``connect``, ``tools/list``, ``tools/call <name>``...
        reason: why it failed.
    """

    def __init__(self, server: str, transport: str, operation: str, reason: str, hint: str = "") -> None:
        self.server = server
        self.transport = transport
        self.operation = operation
        self.reason = reason
        text = f"MCP {operation} failed for server {server!r} ({transport}): {reason}."
        super().__init__(f"{text} {hint}" if hint else text)


class MCPTimeoutError(MCPClientError, TimeoutError):
    """An MCP operation did not finish within its timeout."""


class MCPConnectionLost(MCPClientError):
    """The connection dropped while a request was in flight; the next use reconnects."""
