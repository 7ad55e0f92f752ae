"""The errors of the MCP package, re-exported from :mod:`fms_dgt.errors` where every error lives.

::

    DGTError
    └── MCPClientError          an MCP connect/list/call failed (names server, transport, operation)
        ├── MCPTimeoutError     ... ran out of time (also a ``TimeoutError``)
        └── MCPConnectionLost   ... the connection dropped mid-request
"""

from __future__ import annotations

from fms_dgt.errors import MCPClientError, MCPConnectionLost, MCPTimeoutError

__all__ = ["MCPClientError", "MCPConnectionLost", "MCPTimeoutError"]
