"""MCP: sync and async access to MCP servers; the only part of ``fms_dgt`` that imports the ``mcp`` SDK.

The SDK (and ``anyio``/``httpx2`` through it) is imported lazily, when a session opens, so
importing this package (or ``fms_dgt``) stays light.

Modules:

* :mod:`~fms_dgt.core.tools.mcp.spec` - :class:`MCPServerSpec` (how to reach one server over
  ``stdio``, ``sse`` or ``streamable_http``, or ``auto`` for a URL), :class:`ToolPage`, the
  transport names and :func:`default_server_name`.
* :mod:`~fms_dgt.core.tools.mcp.client` - :class:`MCPClient`, one server's ref-counted,
  reconnecting session.
* :mod:`~fms_dgt.core.tools.mcp.bridge` - :class:`EventLoopBridge`, the one background event loop
  every MCP operation runs on (:func:`get_bridge`).
* :mod:`~fms_dgt.core.tools.mcp.connections` - the connection registry through which a loader and
  an engine share a session (:func:`open_connection`, :func:`get_connection`...).
* :mod:`~fms_dgt.core.tools.mcp.probe` - which transport a URL speaks (streamable HTTP or SSE).
* :mod:`~fms_dgt.core.tools.mcp.transports` - opening a session's transport and how failures read.
* :mod:`~fms_dgt.core.tools.mcp.stdio` - the stdio transport: the server in its own process group,
  its stderr and its messages bounded.
* :mod:`~fms_dgt.core.tools.mcp.guard` - the checks between a transport and the SDK (malformed
  tools, unreadable answers, protocol noise).
* :mod:`~fms_dgt.core.tools.mcp.failures` - the wording of the client's errors.
* :mod:`~fms_dgt.core.tools.mcp.redaction` - the secrets of a server's configuration.
* :mod:`~fms_dgt.core.tools.mcp.errors` - :class:`MCPClientError` and its subclasses.
"""

from __future__ import annotations

from fms_dgt.core.tools.mcp.bridge import EventLoopBridge, get_bridge
from fms_dgt.core.tools.mcp.client import MCPClient
from fms_dgt.core.tools.mcp.connections import (
    clear_connections,
    connection_for_url,
    get_connection,
    open_connection,
    register_connection,
    unregister_connection,
)
from fms_dgt.core.tools.mcp.errors import MCPClientError, MCPConnectionLost, MCPTimeoutError
from fms_dgt.core.tools.mcp.spec import (
    AUTO,
    TRANSPORTS,
    MCPServerSpec,
    RejectedTool,
    ToolPage,
    default_server_name,
)

__all__ = [
    "AUTO",
    "TRANSPORTS",
    "EventLoopBridge",
    "MCPClient",
    "MCPClientError",
    "MCPConnectionLost",
    "MCPServerSpec",
    "MCPTimeoutError",
    "RejectedTool",
    "ToolPage",
    "clear_connections",
    "connection_for_url",
    "default_server_name",
    "get_bridge",
    "get_connection",
    "open_connection",
    "register_connection",
    "unregister_connection",
]
