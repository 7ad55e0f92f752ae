"""The ``mcp`` engine: execute calls with ``tools/call`` on the MCP session their loader opened.

Tools loaded by the ``mcp`` loader carry ``metadata["server"]``; the engine looks that name up in the
connection registry (:func:`fms_dgt.core.tools.mcp.get_connection`) and holds a reference to
the client until :meth:`MCPToolEngine.close`, so loader and engine share one live session and it
stays open while either uses it. Calls from several threads (and a batch's parallel calls) run
concurrently on that session.

An engine given a ``url`` sends every call routed to it to that endpoint instead: on the loader's
session when a registered connection has the same URL (:func:`fms_dgt.core.tools.mcp.connection_for_url`),
else on a session the engine opens itself (the transport found out as for the loader) and closes
with :meth:`MCPToolEngine.close`. An engine given only a ``server`` sends them to the connection
registered under that name::

    tools:
      registry:
        - {type: mcp, url: http://localhost:8080, namespace: hr_api, engine: mcp_live}
      engines:
        mcp_live: {type: mcp, url: http://localhost:8080}

Result mapping (``ToolResult``):

* ``result`` is ``structuredContent`` when the server sent it; otherwise the text content, decoded
  as JSON when it is JSON (one block: its value; several: a list).
* Other content blocks (image, audio, resource links, embedded resources) go to
  ``metadata["content"]``; the result's ``_meta`` to ``metadata["meta"]``.
* ``isError: true`` becomes ``error`` (the tool's text). A protocol failure, a timeout or a lost
  connection also becomes ``error`` (and is logged; the last two are retried when the call policy
  has ``retries``); :meth:`execute` never raises because of a call.
* The server is untrusted: a result larger than ``max_result_bytes`` (its content, serialised as
  compact JSON; 10 MiB by default) or nested deeper than :data:`fms_dgt.io.DEFAULT_LIMITS` allows
  is refused, as a failed call whose ``metadata["error"]`` is ``{"type": "validation", "phase":
  "result", "limit": ...}``; nothing of it goes into records.

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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from fms_dgt.core.tools._json import encoder
from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.engines.base import CallPolicy, RetryableError, ToolEngine
from fms_dgt.core.tools.engines.runner import error_info
from fms_dgt.core.tools.mcp import (
    MCPClient,
    MCPClientError,
    MCPConnectionLost,
    MCPServerSpec,
    MCPTimeoutError,
    connection_for_url,
    default_server_name,
    get_connection,
)
from fms_dgt.core.tools.mcp.pool import ClientPool, Lease
from fms_dgt.errors import ConfigError, LoadError
from fms_dgt.io import DEFAULT_LIMITS, check_limits
from fms_dgt.plugins import register_tool_engine
from fms_dgt.secrets import redact

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = ["DEFAULT_MAX_RESULT_BYTES", "ISOLATION", "MCPToolEngine", "map_call_result", "result_refusal"]

log = logging.getLogger(__name__)

#: Largest MCP tool result (its content serialised as compact JSON) the engine accepts.
DEFAULT_MAX_RESULT_BYTES: Final = 10 * 1024 * 1024
#: How sessions share a stateful server: one client for all, or one per session (a record).
ISOLATION: Final = ("shared", "per_record")
_SHALLOW_BYTES: Final = 2 * DEFAULT_LIMITS.max_depth


@register_tool_engine("mcp")
class MCPToolEngine(ToolEngine):
    """Execute MCP tools on their servers' shared sessions.

    The policy's ``timeout`` (or a shorter one: the tool's ``timeout_ms``, a caller's time budget)
    bounds each ``tools/call`` on the MCP session itself (the request is cancelled on the server);
    without one, the server's ``call_timeout`` applies. Timeouts and
    dropped connections are retried when the policy has ``retries``.

    Args:
        registry: the tools (MCP tools carry ``metadata["server"]``).
        url: send every call to this endpoint (the loader's session when one is registered for
            the same URL, else the engine's own) instead of each tool's ``metadata["server"]``.
        headers: HTTP headers for ``url`` (``${VAR}`` resolved at connect); given, only a
            registered session with the same headers is shared.
        server: with ``url``, the name of the engine's own session (default: the URL's
            host:port); without it, send every call to the connection registered under this name.
        max_workers: parallel calls within one ``execute`` batch.
        max_result_bytes: largest result accepted, counted on its content serialised as compact
            JSON; a larger one fails the call.
        isolation: ``per_record`` keeps every session (a record) from seeing another's state:
            sessions that only call read-only tools share a clean client, a session that calls
            any other tool gets a client of its own, reset (the loader's ``reset_tool``) or
            replaced by a fresh server after it (see :mod:`fms_dgt.core.tools.mcp.pool`);
            ``shared`` sends every session to one client. Unset: ``per_record`` for stdio
            servers when a job writes records (:meth:`prefer_isolation`), else ``shared``.
        policy: call policy (timeout, retries, validation...).

    Raises:
        ConfigError: ``url`` is not an http(s) URL, ``headers`` are given without ``url``, or
            ``max_result_bytes`` is not a positive integer.
    """

    enforces_timeout = True  # the timeout goes with the MCP request, which is cancelled after it

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        url: str | None = None,
        headers: Mapping[str, str] | None = None,
        server: str | None = None,
        max_workers: int = 8,
        max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
        isolation: str | None = None,
        policy: CallPolicy | None = None,
    ) -> None:
        _check_max_result_bytes(max_result_bytes)
        if isolation not in (None, *ISOLATION):
            raise ConfigError(f"invalid isolation {isolation!r}: use {' or '.join(ISOLATION)}")
        super().__init__(registry, max_workers=max_workers, policy=policy)
        self.endpoint = _endpoint_spec(url, headers, server)
        self.server = server
        self.max_result_bytes = max_result_bytes
        self.isolation = isolation
        self._preferred: str | None = None
        self._clients: dict[str, MCPClient] = {}
        self._pools: dict[str, ClientPool] = {}
        self._clients_lock = threading.Lock()

    def prefer_isolation(self, mode: str) -> None:
        """Isolation for stdio servers where ``isolation`` is not set (a job passes ``per_record``)."""
        self._preferred = mode

    def isolation_of(self, client: MCPClient) -> str:
        """The isolation a server's calls run under."""
        if self.isolation is not None:
            return self.isolation
        if self._preferred is not None and client.spec.transport == "stdio":
            return self._preferred
        return "shared"

    def call(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> ToolResult:
        """Run ``tools/call`` for one matched call, within the policy's timeout.

        Raises:
            MCPTimeoutError: no answer within the timeout (a ``TimeoutError``, retried by policy).
            RetryableError: the connection dropped during the call.
        """
        return self._call(tool, call, state, self.policy.timeout)

    def call_within(self, tool: Tool, call: ToolCall, state: dict[str, Any], timeout: float) -> ToolResult:
        """:meth:`call` within ``timeout`` seconds (the request is cancelled on the server after it)."""
        return self._call(tool, call, state, timeout)

    def _call(self, tool: Tool, call: ToolCall, state: dict[str, Any], timeout: float | None) -> ToolResult:
        client = self._route(tool)
        if isinstance(client, _NoRoute):
            return _failure(call, client.message, client.metadata)
        server = client.spec.name
        try:
            lease = self._lease(client, state, _read_only(tool))
            if lease is not None:
                client = lease.client
            raw = client.call_tool(tool.name, call.arguments, timeout=timeout)
        except MCPConnectionLost as exc:
            raise RetryableError(str(exc)) from exc
        except MCPTimeoutError:
            raise
        except MCPClientError as exc:
            return _failure(call, str(exc), {"server": server, "error_type": type(exc).__name__})
        refused = result_refusal(raw, self.max_result_bytes)
        if refused is None:
            result = map_call_result(call, raw, server=server)
            if raw.get("structuredContent") is not None or not _too_deep(result.result):
                return result  # (text content may decode to a deep JSON value)
            refused = _depth_refusal()
        reason, limit = refused
        message = f"result of {tool.qualified_name} from MCP server {server!r} refused: {reason}"
        error = error_info("validation", "result", limit=limit)
        return _failure(call, message, {"server": server, "error": error})

    def _lease(self, client: MCPClient, state: dict[str, Any], read_only: bool) -> Lease | None:
        """The session's client of the server under ``per_record`` (lent on first use): shared
        with other sessions while it only reads, its own from its first other call on."""
        if self.isolation_of(client) != "per_record":
            return None
        leases: dict[str, Lease] = state.setdefault("mcp_leases", {})
        key = client.spec.name
        lease = leases.get(key)
        if lease is not None and (read_only or not lease.shared):
            lease.dirty = lease.dirty or not read_only
            return lease
        pool = self._pool_of(client)
        if lease is not None:  # a reader about to change the server: it needs a client of its own
            pool.give_back(leases.pop(key))
        lease = leases[key] = pool.lease(shared=read_only)
        # A call the server does not declare read-only may change what later sessions see.
        lease.dirty = not read_only
        return lease

    def _pool_of(self, client: MCPClient) -> ClientPool:
        key = client.spec.name
        with self._clients_lock:
            pool = self._pools.get(key)
            if pool is None:
                pool = self._pools[key] = ClientPool(client, client.spec.reset_tool, self.policy.timeout)
            return pool

    def on_teardown(self, session_id: str, state: dict[str, Any]) -> None:
        """Give the session's clients back to their pools."""
        for key, lease in (state.pop("mcp_leases", None) or {}).items():
            pool = self._pools.get(key)
            if pool is not None:
                pool.give_back(lease)

    def _route(self, tool: Tool) -> MCPClient | _NoRoute:
        """The client that runs ``tool``'s calls, or why there is none."""
        if self.endpoint is not None:
            return self._endpoint_client(self.endpoint)
        server = self.server or tool.metadata.get("server")
        if not isinstance(server, str) or not server:
            return _NoRoute(_no_server_message(tool), {})
        client = self._client(server)
        if client is None:
            return _NoRoute(self._no_connection_message(tool, server), {"server": server})
        return client

    def _client(self, server: str) -> MCPClient | None:
        with self._clients_lock:
            client = self._clients.get(server)
            if client is None:
                client = get_connection(server)
                if client is not None:
                    self._clients[server] = client.acquire()
            return client

    def _endpoint_client(self, spec: MCPServerSpec) -> MCPClient:
        """The loader's session for the engine's URL when there is one, else the engine's own."""
        key = f"url:{spec.url}"
        with self._clients_lock:
            client = self._clients.get(key)
            if client is None:
                shared = connection_for_url(spec.url or "", spec.headers)
                client = shared or MCPClient(spec)
                self._clients[key] = client.acquire()
            return client

    def _no_connection_message(self, tool: Tool, server: str) -> str:
        source = "the engine's `server`" if self.server else "the tool's metadata['server']"
        return (
            f"cannot call {tool.qualified_name} over MCP: no connection is registered for server "
            f"{server!r} (named by {source}). Keep the registry that loaded it open while the engine "
            "runs, call register_connection() for that server, or give the engine the server's `url`"
        )

    def close(self) -> None:
        """Tear down sessions and release the MCP connections this engine held. Idempotent."""
        super().close()
        with self._clients_lock:
            clients, self._clients = list(self._clients.values()), {}
            pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            pool.close()
        for client in clients:
            client.release()


def _read_only(tool: Tool) -> bool:
    annotations = tool.metadata.get("annotations")
    return isinstance(annotations, Mapping) and annotations.get("readOnlyHint") is True


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


#: ``json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)``: a result's size.
_SIZED = encoder(separators=(",", ":"), default=str)


def result_refusal(raw: Mapping[str, Any], max_bytes: int) -> tuple[str, str] | None:
    """Why a ``CallToolResult`` may not become a record, and the limit it broke; None when it may.

    It may not when it takes more than ``max_bytes`` serialised as compact JSON, or when its
    ``structuredContent``, ``content`` or ``_meta`` is nested deeper than
    ``DEFAULT_LIMITS.max_depth``.
    """
    try:
        size = len(_SIZED(raw).encode())
    except RecursionError:
        return _depth_refusal()
    if size > max_bytes:
        return (
            f"it is {size:,} bytes, over the engine's max_result_bytes ({max_bytes:,}). Make the tool "
            "return less, or raise `max_result_bytes`",
            "max_result_bytes",
        )
    # Each level of nesting takes two characters at least: a small result cannot be too deep.
    if size > _SHALLOW_BYTES and any(
        _too_deep(raw.get(k)) for k in ("structuredContent", "content", "_meta")
    ):
        return _depth_refusal()
    return None


def _too_deep(value: Any) -> bool:
    if not isinstance(value, dict | list):
        return False
    try:
        check_limits(value, "MCP tool result")
    except LoadError:
        return True
    return False


def _depth_refusal() -> tuple[str, str]:
    depth = DEFAULT_LIMITS.max_depth
    return (
        f"it is nested more than {depth} levels deep, which no tool result needs; the server looks "
        "broken or hostile",
        "max_depth",
    )


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
    except (ValueError, RecursionError):  # not JSON, or deeper than Python's parser goes: text
        return text


def _failure(call: ToolCall, message: str, metadata: dict[str, Any]) -> ToolResult:
    message = redact(message)
    log.warning("%s", message)
    return ToolResult(call.call_id, call.name, error=message, metadata={"is_error": True, **metadata})


def _no_server_message(tool: Tool) -> str:
    return (
        f"cannot call {tool.qualified_name} over MCP: the tool has no metadata['server'] naming its "
        "MCP server. Load it with the mcp loader, or set metadata['server'] to a registered connection"
    )


@dataclass(slots=True, frozen=True)
class _NoRoute:
    """Why a call has no MCP client: the error message and the result's metadata."""

    message: str
    metadata: dict[str, Any]


def _check_max_result_bytes(value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigError(
            f"invalid max_result_bytes {value!r} for the mcp engine: expected an integer >= 1. "
            "Fix `max_result_bytes:`"
        )


def _endpoint_spec(
    url: str | None, headers: Mapping[str, str] | None, server: str | None
) -> MCPServerSpec | None:
    if url is None:
        if headers is not None:
            raise ConfigError(
                "invalid keys for the mcp engine: `headers` apply to the engine's `url`, and it has "
                "none. Add `url:` or remove `headers:`"
            )
        return None
    name = default_server_name(server=server, url=url)
    return MCPServerSpec(name=name, url=url, headers=dict(headers) if headers else None)
