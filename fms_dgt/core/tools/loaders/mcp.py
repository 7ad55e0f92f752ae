"""The ``mcp`` loader: the tools of an MCP server (stdio, SSE or streamable HTTP).

Example::

    tools:
      registry:
        - type: mcp
          server: weather                 # connection name; default namespace
          command: python                 # a command: the stdio transport
          args: [servers/weather.py]
        - type: mcp
          server: search
          url: https://search.example.com/mcp   # streamable HTTP, else SSE (found out at connect)
          headers: {Authorization: "Bearer ${SEARCH_TOKEN}"}
        - {type: mcp, url: http://localhost:8080, namespace: hr_api}   # server: hr_api

``server`` defaults to the namespace, else the URL's ``host:port``; ``transport`` defaults to
``stdio`` for a ``command``, ``sse`` for a URL whose path ends in ``/sse``, and otherwise
streamable HTTP with a fall-back to SSE when the server answers the SSE way (the transport found
is in each tool's ``metadata["transport"]`` and in the loader's report).

The loader reads every page of ``tools/list`` (following ``nextCursor``) and turns each MCP tool
into a :class:`~fms_dgt.core.tools.data_objects.Tool`: ``inputSchema`` becomes ``parameters``
(normalised to Draft 2020-12), ``outputSchema`` becomes ``output_parameters``, and ``title``,
``annotations``, ``icons`` and ``_meta`` are kept in ``metadata`` with the server's name, which the
``mcp`` engine uses to find the same live session.

The server is untrusted: each listed tool is checked on its own, and a bad one (no name, a schema
that is not an object, a ``$ref`` that is not local...) is skipped and named in the report, while
the others load; a tool listed twice folds or overloads
(:mod:`~fms_dgt.core.tools.loaders._mcp_tools`). ``max_pages`` and ``max_tools`` bound the listing.

The loader is stateful: its session (shared through the connection registry of
:mod:`fms_dgt.core.tools.mcp.connections`) stays open between loads, so ``refresh()`` reuses it. When the
server announces ``notifications/tools/list_changed`` the loader sets :attr:`~ToolLoader.stale`;
with ``auto_refresh: true`` it also refreshes the registry it is bound to (:meth:`bind_registry`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.loaders._mcp_tools import ON_CONFLICT, MCPToolBuilder
from fms_dgt.core.tools.loaders.base import ToolLoader
from fms_dgt.core.tools.mcp import (
    MCPClient,
    MCPClientError,
    MCPServerSpec,
    ToolPage,
    default_server_name,
    open_connection,
)
from fms_dgt.core.tools.mcp.spec import DEFAULT_MAX_MESSAGE_BYTES, RejectedTool
from fms_dgt.errors import ConfigError, DGTError, LoadError
from fms_dgt.plugins import register_tool_loader
from fms_dgt.secrets import redact

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = ["MCPToolLoader"]

log = logging.getLogger(__name__)


@register_tool_loader("mcp")
class MCPToolLoader(ToolLoader):
    """Load the tools an MCP server lists.

    Args:
        server: the server's name: key of the shared connection, default namespace, and
            ``metadata["server"]`` of its tools. Default: ``namespace``, else the URL's
            ``host:port``; a stdio server needs one of the two.
        transport: ``stdio``, ``sse``, ``streamable_http`` (alias ``http``) or ``auto``. Default:
            ``stdio`` with a ``command``; with a ``url``, ``sse`` when its path ends in ``/sse``,
            else ``auto`` (streamable HTTP, falling back to SSE).
        command: executable to start (stdio); ``python`` means the interpreter running fms_dgt.
        args: its arguments (stdio).
        env: extra environment variables for the server process (stdio).
        cwd: working directory of the server process (stdio); relative paths in a config resolve
            against the config file's folder.
        url: endpoint (sse: the event-stream URL such as ``http://host/sse``; streamable_http:
            ``http://host/mcp``; any URL when the transport is found out).
        headers: HTTP headers (sse, streamable_http). Values may use ``${VAR}``; they are resolved
            from the environment when connecting, so tokens stay out of files.
        namespace: namespace of the tools (default: ``server``).
        connect_timeout: seconds to start or reach the server and finish the handshake.
        list_timeout: seconds for one ``tools/list`` page.
        call_timeout: seconds for one ``tools/call`` (used by the ``mcp`` engine).
        reconnect_attempts: reconnects tried after the connection dropped, before giving up.
        reconnect_backoff: first delay between reconnect attempts (doubles each time).
        protocol: ``auto`` (negotiate; default) or ``legacy`` (initialize handshake only).
        auto_refresh: when the server says its tools changed, refresh the bound registry
            automatically (otherwise only :attr:`stale` is set).
        max_pages: upper bound on ``tools/list`` pages, a guard against endless pagination.
        max_tools: upper bound on the tools one listing may hold (all pages together).
        max_message_bytes: stdio: the largest message read from the server.
        on_conflict: a tool listed twice with the same input schema but other annotations:
            ``first`` keeps the first (and warns), ``error`` fails the load.
        reset_tool: the server's tool that clears its state; it is not offered as a tool, and the
            mcp engine calls it between records under ``isolation: per_record``.
    """

    path_keys = ("cwd",)

    def __init__(
        self,
        *,
        server: str | None = None,
        transport: str | None = None,
        command: str | None = None,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        url: str | None = None,
        headers: Mapping[str, str] | None = None,
        namespace: str | None = None,
        connect_timeout: float = 30.0,
        list_timeout: float = 30.0,
        call_timeout: float = 60.0,
        reconnect_attempts: int = 3,
        reconnect_backoff: float = 0.5,
        protocol: str = "auto",
        auto_refresh: bool = False,
        max_pages: int = 1000,
        max_tools: int = 10_000,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        on_conflict: str = "first",
        reset_tool: str | None = None,
    ) -> None:
        name = default_server_name(server=server, namespace=namespace, url=url)
        _check_strings(name, args, env, headers)
        self.spec = MCPServerSpec(
            name=name,
            transport=transport or "",
            command=command,
            args=tuple(args),
            env=dict(env) if env else None,
            cwd=cwd,
            url=url,
            headers=dict(headers) if headers else None,
            connect_timeout=connect_timeout,
            list_timeout=list_timeout,
            call_timeout=call_timeout,
            reconnect_attempts=reconnect_attempts,
            reconnect_backoff=reconnect_backoff,
            protocol=protocol,
            max_message_bytes=max_message_bytes,
            reset_tool=reset_tool,
        )
        _check_bounds(name, max_pages, max_tools, on_conflict)
        self.auto_refresh = auto_refresh
        self.max_pages = max_pages
        self.max_tools = max_tools
        self.on_conflict = on_conflict
        self._client: MCPClient | None = None
        self._remove_listener: Callable[[], None] | None = None
        self._on_stale: Callable[[], None] | None = None
        self._lock = threading.Lock()
        super().__init__(namespace=namespace or name)

    @property
    def server(self) -> str:
        """The server's name."""
        return self.spec.name

    @property
    def client(self) -> MCPClient | None:
        """The shared client while the loader holds it (after the first load, until close)."""
        return self._client

    @property
    def transport(self) -> str:
        """The transport in use (for an ``auto`` URL: ``auto`` until the first load found it out)."""
        client = self._client
        return client.transport if client is not None else self.spec.transport

    def describe(self) -> str:
        return f"mcp server {self.spec.describe(self.transport)}"

    # ------------------------------------------------------------------ loading

    def load(self) -> list[Tool]:
        """List every tool of the server (all pages) and convert them.

        Raises:
            LoadError: the server cannot be reached, a request failed or timed out, pagination
                does not advance, or a tool definition is invalid.
        """
        report = self._new_report()
        # Changes announced from now on are not in this listing's past: they make it stale again.
        self.stale = False
        client = self._connect()
        listed, rejected = self._list_all(client)
        # The first listing connected: an ``auto`` URL's transport is known from here on.
        report.source = self.describe()
        builder = self._builder()
        entries: list[tuple[int, RejectedTool | dict[str, Any]]] = [(r.index, r) for r in rejected]
        entries = sorted([*entries, *listed], key=lambda entry: entry[0])
        for index, entry in entries:
            if isinstance(entry, dict) and entry.get("name") == self.spec.reset_tool:
                continue  # the server's reset tool clears state between records; no record calls it
            if isinstance(entry, RejectedTool):
                builder.skip(index, entry.name, f"{entry.reason}. The MCP SDK cannot read it; fix the tool")
            else:
                builder.add(index, entry)
        report.tools = len(builder.tools)
        return builder.tools

    def _builder(self) -> MCPToolBuilder:
        namespace = self.namespace or self.spec.name
        return MCPToolBuilder(self.spec.name, namespace, self.transport, self.on_conflict, self.report)

    def _connect(self) -> MCPClient:
        with self._lock:
            if self._client is None:
                try:
                    self._client = open_connection(self.spec)
                except ConfigError as exc:
                    raise LoadError(str(exc), source=self.spec.name) from exc
                self._remove_listener = self._client.add_listener(self._tools_changed)
            return self._client

    def _list_all(self, client: MCPClient) -> tuple[list[tuple[int, dict[str, Any]]], list[RejectedTool]]:
        """Every listed tool with its index over all pages, and the ones the client took out."""
        tools: list[tuple[int, dict[str, Any]]] = []
        rejected: list[RejectedTool] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(self.max_pages):
            page = self._page(client, cursor)
            offset = _count(tools, rejected)
            tools.extend((offset + page.position(i), raw) for i, raw in enumerate(page.tools))
            rejected.extend(
                RejectedTool(index=offset + r.index, name=r.name, reason=r.reason) for r in page.rejected
            )
            self._check_size(offset + page.size)
            cursor = page.next_cursor
            if cursor is None:
                return tools, rejected
            if cursor in seen:
                raise self._error(
                    f"pagination does not advance: the server returned cursor {cursor!r} again after "
                    f"{len(seen) + 1} pages. The server's tools/list paging is broken; fix the server"
                )
            seen.add(cursor)
        raise self._error(
            f"pagination did not end within max_pages={self.max_pages} pages of tools/list. Raise "
            "`max_pages` if the server really has that many pages"
        )

    def _check_size(self, listed: int) -> None:
        if listed > self.max_tools:
            raise self._error(
                f"the server lists more than max_tools={self.max_tools} tools ({listed} so far). Raise "
                "`max_tools` if it really offers that many"
            )

    def _page(self, client: MCPClient, cursor: str | None) -> ToolPage:
        try:
            return client.list_tools_page(cursor)
        except MCPClientError as exc:
            raise LoadError(str(exc), source=self.spec.name) from exc

    def _error(self, message: str, pointer: str | None = None) -> LoadError:
        return LoadError(
            redact(f"cannot load tools from MCP server {self.spec.name!r}: {message}"),
            source=self.spec.name,
            pointer=pointer,
        )

    # ------------------------------------------------------------------ change notifications

    def bind_registry(self, registry: ToolRegistry) -> None:
        """Refresh ``registry`` when this server's tools change (if ``auto_refresh`` is on).

        The registry calls this for its loaders (see the report on the core hook); it may also be
        called directly.
        """
        if self.auto_refresh:
            self._on_stale = _Refresher(registry).request

    def _tools_changed(self) -> None:
        self.stale = True
        callback = self._on_stale
        if callback is not None:
            callback()

    # ------------------------------------------------------------------ lifetime

    def close(self) -> None:
        """Release the shared session (it closes when no loader or engine holds it)."""
        with self._lock:
            client, self._client = self._client, None
            remove, self._remove_listener = self._remove_listener, None
        if remove is not None:
            remove()
        if client is not None:
            client.release()


class _Refresher:
    """Runs ``registry.refresh()`` off the notifying thread, coalescing bursts of notifications."""

    def __init__(self, registry: ToolRegistry) -> None:
        self._registry = registry
        self._pending = threading.Event()
        self._running = threading.Lock()

    def request(self) -> None:
        self._pending.set()
        if self._running.acquire(blocking=False):
            threading.Thread(target=self._loop, name="mcp-auto-refresh", daemon=True).start()

    def _loop(self) -> None:
        while True:
            try:
                while self._pending.is_set():
                    self._pending.clear()
                    self._refresh_once()
            finally:
                self._running.release()
            # A request that arrived while the lock was being released must not be lost.
            if not self._pending.is_set() or not self._running.acquire(blocking=False):
                return

    def _refresh_once(self) -> None:
        try:
            report = self._registry.refresh()
        except DGTError as exc:
            log.warning("automatic refresh after an MCP tool-list change failed: %s", exc)
            return
        log.info("registry refreshed after an MCP tool-list change: %s", report.summary())


def _count(tools: list[Any], rejected: list[Any]) -> int:
    return len(tools) + len(rejected)


def _check_bounds(server: str, max_pages: object, max_tools: object, on_conflict: object) -> None:
    who = f"MCP server {server!r}"
    for key, value in (("max_pages", max_pages), ("max_tools", max_tools)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"invalid {key} {value!r} for {who}: expected an integer >= 1. Fix `{key}:`")
    if on_conflict not in ON_CONFLICT:
        raise ConfigError(
            f"invalid on_conflict {on_conflict!r} for {who}: expected one of {', '.join(ON_CONFLICT)}. "
            "Fix `on_conflict:`"
        )


def _check_strings(
    server: object, args: object, env: Mapping[str, Any] | None, headers: Mapping[str, Any] | None
) -> None:
    who = f"MCP server {server!r}"
    if (
        isinstance(args, str)
        or not isinstance(args, Sequence)
        or not all(isinstance(a, str | int | float) for a in args)
    ):
        raise ConfigError(f"invalid args for {who}: expected a list of strings. Write `args: [a, b]`")
    for key, mapping in (("env", env), ("headers", headers)):
        if mapping is not None and not isinstance(mapping, Mapping):
            raise ConfigError(f"invalid {key} for {who}: expected a mapping of names to strings")
