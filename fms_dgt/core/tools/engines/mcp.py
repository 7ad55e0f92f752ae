"""The ``mcp`` engine: execute calls with ``tools/call`` on the MCP session their loader opened.

Tools loaded by the ``mcp`` loader carry ``metadata["server"]``; the engine looks that name up in the
connection registry (:func:`fms_dgt.core.tools.mcp_client.get_connection`) and holds a reference to
the client until :meth:`MCPToolEngine.close`, so loader and engine share one live session and it
stays open while either uses it. Calls from several threads (and a batch's parallel calls) run
concurrently on that session.

Result mapping (``ToolResult``):

* ``result`` is ``structuredContent`` when the server sent it; otherwise the text content, decoded
  as JSON when it is JSON (one block: its value; several: a list).
* Other content blocks (image, audio, resource links, embedded resources) go to
  ``metadata["content"]``; the result's ``_meta`` to ``metadata["meta"]``.
* ``isError: true`` becomes ``error`` (the tool's text). A protocol failure, a timeout or a lost
  connection also becomes ``error`` (and is logged; the last two are retried when the call policy
  has ``retries``); :meth:`execute` never raises because of a call.

Example::

    with ToolRegistry.from_config("configs/mcp_example.yaml") as registry, MCPToolEngine(registry) as engine:
        engine.setup("s1")
        [result] = engine.execute("s1", [ToolCall("demo::add", {"a": 1, "b": 2})])
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.engines.base import CallPolicy, RetryableError, ToolEngine
from fms_dgt.core.tools.mcp_client import (
    MCPClient,
    MCPClientError,
    MCPConnectionLost,
    MCPTimeoutError,
    get_connection,
)
from fms_dgt.plugins import register_tool_engine

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = ["MCPToolEngine", "map_call_result"]

log = logging.getLogger(__name__)


@register_tool_engine("mcp")
class MCPToolEngine(ToolEngine):
    """Execute MCP tools on their servers' shared sessions.

    The policy's ``timeout`` bounds each ``tools/call`` on the MCP session itself (the request is
    cancelled on the server); without one, the server's ``call_timeout`` applies. Timeouts and
    dropped connections are retried when the policy has ``retries``.

    Args:
        registry: the tools (MCP tools carry ``metadata["server"]``).
        max_workers: parallel calls within one ``execute`` batch.
        policy: call policy (timeout, retries, validation...).
    """

    enforces_timeout = True  # call() passes policy.timeout to the MCP request, which is cancelled

    def __init__(
        self, registry: ToolRegistry, *, max_workers: int = 8, policy: CallPolicy | None = None
    ) -> None:
        super().__init__(registry, max_workers=max_workers, policy=policy)
        self._clients: dict[str, MCPClient] = {}
        self._clients_lock = threading.Lock()

    def call(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> ToolResult:
        """Run ``tools/call`` for one matched call.

        Raises:
            MCPTimeoutError: no answer within the timeout (a ``TimeoutError``, retried by policy).
            RetryableError: the connection dropped during the call.
        """
        server = tool.metadata.get("server")
        if not isinstance(server, str) or not server:
            return _failure(call, _no_server_message(tool), {})
        client = self._client(server)
        if client is None:
            return _failure(call, _no_connection_message(tool, server), {"server": server})
        try:
            raw = client.call_tool(tool.name, call.arguments, timeout=self.policy.timeout)
        except MCPConnectionLost as exc:
            raise RetryableError(str(exc)) from exc
        except MCPTimeoutError:
            raise
        except MCPClientError as exc:
            return _failure(call, str(exc), {"server": server, "error_type": type(exc).__name__})
        return map_call_result(call, raw, server=server)

    def _client(self, server: str) -> MCPClient | None:
        with self._clients_lock:
            client = self._clients.get(server)
            if client is None:
                client = get_connection(server)
                if client is not None:
                    self._clients[server] = client.acquire()
            return client

    def close(self) -> None:
        """Tear down sessions and release the MCP connections this engine held. Idempotent."""
        super().close()
        with self._clients_lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.release()


def map_call_result(call: ToolCall, raw: Mapping[str, Any], *, server: str | None = None) -> ToolResult:
    """Turn an MCP ``CallToolResult`` (wire format) into a :class:`ToolResult`.

    Args:
        call: the call it answers.
        raw: ``{"content": [...], "structuredContent": ..., "isError": ..., "_meta": ...}``.
        server: the server's name, recorded in ``metadata["server"]``.
    """
    blocks = [b for b in raw.get("content") or [] if isinstance(b, Mapping)]
    texts = [str(b.get("text", "")) for b in blocks if b.get("type") == "text"]
    metadata = _result_metadata(raw, blocks, server)
    if raw.get("isError"):
        message = "\n".join(t for t in texts if t) or "the MCP tool reported an error without a message"
        return ToolResult(call.call_id, call.name, error=message, metadata=metadata)
    if raw.get("structuredContent") is not None:
        return ToolResult(call.call_id, call.name, result=raw["structuredContent"], metadata=metadata)
    return ToolResult(call.call_id, call.name, result=_decode_texts(texts), metadata=metadata)


def _result_metadata(
    raw: Mapping[str, Any], blocks: Sequence[Mapping[str, Any]], server: str | None
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"is_error": bool(raw.get("isError"))}
    if server is not None:
        metadata["server"] = server
    others = [dict(b) for b in blocks if b.get("type") != "text"]
    if others:
        metadata["content"] = others
    if raw.get("_meta"):
        metadata["meta"] = raw["_meta"]
    return metadata


def _decode_texts(texts: Sequence[str]) -> Any:
    values = [_decode(t) for t in texts]
    if not values:
        return None
    return values[0] if len(values) == 1 else values


def _decode(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _failure(call: ToolCall, message: str, metadata: dict[str, Any]) -> ToolResult:
    log.warning("%s", message)
    return ToolResult(call.call_id, call.name, error=message, metadata={"is_error": True, **metadata})


def _no_server_message(tool: Tool) -> str:
    return (
        f"cannot call {tool.qualified_name} over MCP: the tool has no metadata['server'] naming its "
        "MCP server. Load it with the mcp loader, or set metadata['server'] to a registered connection"
    )


def _no_connection_message(tool: Tool, server: str) -> str:
    return (
        f"cannot call {tool.qualified_name} over MCP: no connection is registered for server "
        f"{server!r}. Keep the registry that loaded it open while the engine runs, or call "
        "register_connection() for that server"
    )
