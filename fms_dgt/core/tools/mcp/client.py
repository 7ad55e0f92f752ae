""":class:`MCPClient`: a ref-counted, reconnecting session to one MCP server, for sync and async code.

The session opens on first use, on the process-wide event loop of
:mod:`fms_dgt.core.tools.mcp.bridge`, and is shared by every thread. A dropped connection (or a
stdio server that died) is reopened on the next use, with bounded attempts and exponential
backoff. For a URL whose transport is ``auto``, the first connect finds out whether the server
speaks streamable HTTP or SSE (:mod:`fms_dgt.core.tools.mcp.probe`) and :attr:`MCPClient.transport`
records the answer.

Results cross this module's boundary as plain JSON-ready dicts in the MCP wire format
(``inputSchema``, ``structuredContent``, ``isError``, ``_meta``), so nothing else in the package
depends on SDK types.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import threading
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, Final, TypeVar

from fms_dgt.core.tools.mcp.bridge import EventLoopBridge, get_bridge
from fms_dgt.core.tools.mcp.errors import MCPClientError, MCPTimeoutError
from fms_dgt.core.tools.mcp.failures import client_error, connect_hint, lost_error, timeout_error
from fms_dgt.core.tools.mcp.probe import TransportProbe
from fms_dgt.core.tools.mcp.session import Session, fetch_page, list_every_page, live_client
from fms_dgt.core.tools.mcp.spec import AUTO, MCPServerSpec, ToolPage
from fms_dgt.core.tools.mcp.transports import (
    SYNC_GRACE,
    describe_exc,
    innermost,
    is_connection_lost,
    never_ran,
    open_transport,
    sdk_error_code,
)

if TYPE_CHECKING:
    from mcp import Client

__all__ = ["MCPClient", "live_clients"]

log = logging.getLogger(__name__)

T = TypeVar("T")

_CLOSE_TIMEOUT: Final = 10.0
_SETTLE_TIMEOUT: Final = 1.0  # seconds a dying stdio server has to tell why, for the error message
_LIVE_CLIENTS: weakref.WeakSet[MCPClient] = weakref.WeakSet()


def live_clients() -> list[MCPClient]:
    """Every :class:`MCPClient` of the process still referenced somewhere (for the at-exit close)."""
    return list(_LIVE_CLIENTS)


# --------------------------------------------------------------------------- the client


class MCPClient:
    """A ref-counted, reconnecting session to one MCP server, usable from sync and async code.

    The session opens on first use (or :meth:`connect`). Requests from many threads run
    concurrently on the one session. Use
    :func:`~fms_dgt.core.tools.mcp.connections.open_connection` to share clients by server name.

    Args:
        spec: the server and its timeouts.
        bridge: the event-loop bridge (the process-wide one by default).
    """

    def __init__(self, spec: MCPServerSpec, *, bridge: EventLoopBridge | None = None) -> None:
        self.spec = spec
        self._bridge = bridge or get_bridge()
        self._refs = 0
        self._ref_lock = threading.Lock()
        self._session: Session | None = None
        self._session_lock: asyncio.Lock | None = None
        self._generation = itertools.count(1)
        self._listeners: dict[int, Callable[[], None]] = {}
        self._listener_ids = itertools.count()
        self._retired = False
        self._retire_hooks: list[Callable[[MCPClient], None]] = []
        # None until an ``auto`` URL's first connect has found out which transport it speaks.
        self._transport: str | None = None if spec.transport == AUTO else spec.transport
        #: How many times a session was (re)opened; 1 after the first connect.
        self.connects = 0
        #: Negotiated protocol version of the current session, once connected.
        self.protocol_version: str | None = None
        #: The server's ``serverInfo`` (name, version) of the current session, once connected.
        self.server_info: dict[str, Any] = {}
        _LIVE_CLIENTS.add(self)

    def __repr__(self) -> str:
        state = "connected" if self.connected else "idle"
        return f"MCPClient({self.spec.describe(self.transport)}, {state}, refs={self._refs})"

    @property
    def transport(self) -> str:
        """The transport in use: ``stdio``, ``sse`` or ``streamable_http``.

        ``auto`` until the first connect to a URL given without a transport has found out.
        """
        return self._transport or AUTO

    # ------------------------------------------------------------------ reference counting

    @property
    def refs(self) -> int:
        """How many users hold this client."""
        return self._refs

    def acquire(self) -> MCPClient:
        """Take a reference; the session stays open until every reference is released."""
        with self._ref_lock:
            self._refs += 1
            self._retired = False
        return self

    def release(self) -> None:
        """Drop a reference; the last release closes the session and runs the retire hooks (the
        connection registry's forgets the client).

        A released client does not reopen by itself (a late notification or a stray thread must
        not start a server nobody holds); :meth:`acquire` revives it.
        """
        with self._ref_lock:
            self._refs = max(0, self._refs - 1)
            last = self._refs == 0
            self._retired = last
        if last:
            for hook in list(self._retire_hooks):
                hook(self)
            self.close()

    def add_retire_hook(self, hook: Callable[[MCPClient], None]) -> None:
        """Call ``hook(client)`` whenever the last reference is released (once per distinct hook)."""
        if hook not in self._retire_hooks:
            self._retire_hooks.append(hook)

    # ------------------------------------------------------------------ listeners

    def add_listener(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback()`` (on a worker thread) when the server says its tool list changed.

        Returns:
            A function that removes the listener.
        """
        key = next(self._listener_ids)
        self._listeners[key] = callback

        def remove() -> None:
            self._listeners.pop(key, None)

        return remove

    def _tools_changed(self) -> None:
        # Runs on the loop: listeners may block or call back into this client, so they get a thread.
        for callback in list(self._listeners.values()):
            threading.Thread(
                target=_safe_call, args=(callback,), name="mcp-list-changed", daemon=True
            ).start()

    # ------------------------------------------------------------------ sync API

    @property
    def connected(self) -> bool:
        """True while a session is open and its transport has not ended."""
        session = self._session
        return session is not None and session.client is not None and not session.dead

    def connect(self) -> None:
        """Open the session now (otherwise it opens on first use).

        Raises:
            MCPClientError: the server cannot be started or reached, or the handshake failed.
            MCPTimeoutError: no handshake within ``connect_timeout``.
        """
        self._run(self.connect_async(), self.spec.connect_timeout)

    def list_tools_page(self, cursor: str | None = None) -> ToolPage:
        """One ``tools/list`` page (idempotent: retried after a reconnect).

        Raises:
            MCPClientError: the request failed (timeouts raise :class:`MCPTimeoutError`).
        """
        return self._run(self.list_tools_page_async(cursor), self.spec.list_timeout)

    def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """``tools/call``; the result in wire format (``content``, ``structuredContent``, ``isError``).

        A tool that fails returns ``isError: true``; only protocol failures raise.

        Raises:
            MCPClientError: protocol error; :class:`MCPTimeoutError` after ``timeout`` (default
                ``call_timeout``); :class:`MCPConnectionLost` when the connection dropped mid-call.
        """
        limit = timeout or self.spec.call_timeout
        return self._run(self.call_tool_async(name, arguments, timeout=limit), limit)

    def close(self) -> None:
        """Close the session (idempotent). A later use reopens it."""
        if self._session_lock is None:  # never connected (nor connecting): nothing to close
            return
        self._run(self.close_async(), _CLOSE_TIMEOUT)

    def _run(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        # A safety net only: the loop side enforces each timeout and cancels cleanly.
        spec = self.spec
        rounds = spec.reconnect_attempts + 1
        backoff = spec.reconnect_backoff * 2**rounds
        budget = (spec.connect_timeout + timeout) * rounds + backoff + SYNC_GRACE
        try:
            return self._bridge.run(coro, budget)
        except TimeoutError as exc:
            if isinstance(exc, MCPClientError):
                raise
            raise self._timeout("request", budget) from exc

    # ------------------------------------------------------------------ async API

    async def connect_async(self) -> None:
        """Async form of :meth:`connect`."""
        await self._bridge.run_async(self._ensure_session())

    async def list_tools_page_async(self, cursor: str | None = None) -> ToolPage:
        """Async form of :meth:`list_tools_page`."""
        return await self._bridge.run_async(self._list_page(cursor))

    async def call_tool_async(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """Async form of :meth:`call_tool`."""
        limit = timeout or self.spec.call_timeout
        return await self._bridge.run_async(self._call(name, dict(arguments or {}), limit))

    async def close_async(self) -> None:
        """Async form of :meth:`close`."""
        await self._bridge.run_async(self._shutdown())

    # ------------------------------------------------------------------ operations (on the loop)

    async def _list_page(self, cursor: str | None) -> ToolPage:
        async def send(session: Session) -> ToolPage:
            return await fetch_page(session, cursor)

        return await self._request("tools/list", send, self.spec.list_timeout, idempotent=True)

    async def _call(self, name: str, arguments: dict[str, Any], timeout: float) -> dict[str, Any]:
        async def send(session: Session) -> dict[str, Any]:
            if not session.listed:
                await list_every_page(session)
            return _wire_result(await live_client(session).call_tool(name, arguments))

        return await self._request(f"tools/call {name}", send, timeout, idempotent=False)

    async def _request(
        self, operation: str, send: Callable[[Session], Awaitable[T]], timeout: float, *, idempotent: bool
    ) -> T:
        """Run ``send`` on a live session, reconnecting first when the transport has ended.

        A connection lost *during* the request is retried for idempotent operations, and for any
        request the server provably did not run (it no longer knew the session, or the connection
        was refused); otherwise a ``tools/call`` may have run, so it is reported and the next use
        reconnects.
        """
        for attempt in itertools.count():
            session = await self._ensure_session()
            try:
                return await self._timed(operation, send(session), timeout)
            except MCPClientError:
                raise
            except Exception as exc:
                if not (session.dead or is_connection_lost(exc)):
                    raise self._error(operation, exc) from exc
                session.dead = True
                retry = idempotent or never_ran(exc)
                if not retry or attempt >= self.spec.reconnect_attempts:
                    raise await self._lost(session, operation, exc) from exc
                log.info("MCP server %s: connection lost during %s; reconnecting", self.spec.name, operation)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _lost(self, session: Session, operation: str, exc: BaseException) -> MCPClientError:
        # A stdio server that died is worth naming with its exit code and last words on stderr.
        await session.guard.settled(_SETTLE_TIMEOUT)
        return lost_error(self.spec, self.transport, operation, exc, session.guard.process_note())

    async def _timed(self, operation: str, awaitable: Awaitable[T], timeout: float) -> T:
        import anyio

        try:
            with anyio.fail_after(timeout):
                return await awaitable
        except TimeoutError as exc:
            raise self._timeout(operation, timeout) from exc
        except Exception as exc:
            from mcp_types import REQUEST_TIMEOUT

            if sdk_error_code(innermost(exc)) == REQUEST_TIMEOUT:
                raise self._timeout(operation, timeout) from exc
            raise

    # ------------------------------------------------------------------ session lifetime (on the loop)

    def _lock(self) -> asyncio.Lock:
        if self._session_lock is None:
            self._session_lock = asyncio.Lock()
        return self._session_lock

    async def _ensure_session(self) -> Session:
        """The open session, (re)connecting when there is none or its transport ended."""
        async with self._lock():
            session = self._session
            if session is not None and not session.dead:
                return session
            if self._retired:
                raise MCPClientError(
                    self.spec.name,
                    self.transport,
                    "connect",
                    "its last user released the connection",
                    "Take a new reference with open_connection() or acquire().",
                )
            if session is not None:
                await self._stop(session)
                return await self._reconnect()
            return await self._open()

    async def _reconnect(self) -> Session:
        delay = self.spec.reconnect_backoff
        attempts = max(1, self.spec.reconnect_attempts)
        for attempt in range(1, attempts + 1):
            try:
                return await self._open()
            except MCPClientError as exc:
                if attempt == attempts:
                    raise self._error(
                        "reconnect",
                        exc,
                        hint=f"Gave up after {attempts} attempts; check that the server runs",
                    ) from exc
                log.warning(
                    "MCP server %s: reconnect %d/%d failed: %s", self.spec.name, attempt, attempts, exc
                )
            await asyncio.sleep(delay)
            delay *= 2
        raise AssertionError("unreachable")  # pragma: no cover

    async def _open(self) -> Session:
        loop = asyncio.get_running_loop()
        # One budget for finding the transport and the handshake: connecting never takes longer.
        deadline = loop.time() + self.spec.connect_timeout
        if self._transport is None:
            self._transport = await self._detect_transport(deadline)
        session = Session(next(self._generation), self.spec.name)
        ready: asyncio.Future[None] = loop.create_future()
        session.task = asyncio.create_task(self._own(session, ready), name=f"mcp-session-{self.spec.name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), max(0.0, deadline - loop.time()))
        except asyncio.TimeoutError as exc:
            ready.cancel()
            await self._stop(session, force=True)
            note = session.guard.process_note()
            raise self._timeout("connect", self.spec.connect_timeout, note=note) from exc
        except Exception as exc:
            await self._stop(session, force=True)
            note = session.guard.process_note()
            raise self._error("connect", exc, hint=self._connect_hint(), note=note) from exc
        self._session = session
        self.connects += 1
        return session

    async def _detect_transport(self, deadline: float) -> str:
        probe = TransportProbe(self.spec)
        remaining = max(0.0, deadline - asyncio.get_running_loop().time())
        try:
            transport = await asyncio.wait_for(probe.run(), remaining)
        except asyncio.TimeoutError as exc:
            raise self._timeout("connect", self.spec.connect_timeout, tried=probe.summary()) from exc
        except Exception as exc:  # the probe's own errors, or headers naming a variable that is unset
            raise self._error("connect", exc, hint=self._connect_hint()) from exc
        log.info(
            "MCP server %s: %s speaks %s (%s)", self.spec.name, self.spec.url, transport, probe.summary()
        )
        return transport

    async def _own(self, session: Session, ready: asyncio.Future[None]) -> None:
        """The session's owner task: enters the SDK client, waits for stop, exits it (same task)."""
        import anyio

        try:
            with anyio.CancelScope() as scope:
                session.cancel = scope.cancel
                await self._serve(session, ready)
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
            else:
                log.debug("MCP server %s: session ended with %s", self.spec.name, describe_exc(exc))
        finally:
            session.dead = True
            if not ready.done():
                ready.set_exception(RuntimeError("the session closed during the handshake"))

    async def _serve(self, session: Session, ready: asyncio.Future[None]) -> None:
        import anyio
        from mcp import Client, Implementation

        client = Client(
            open_transport(self.spec, self.transport, session.guard),
            mode=self.spec.protocol,
            cache=None,
            message_handler=self._on_message,
            client_info=Implementation(name="fms_dgt", version=_package_version()),
        )
        async with client:
            session.client = client
            self._record_server(client)
            ready.set_result(None)
            async with anyio.create_task_group() as group:
                if self._wants_listen(client):
                    group.start_soon(self._listen, client, session)
                await session.stop.wait()
                group.cancel_scope.cancel()

    def _record_server(self, client: Client) -> None:
        self.protocol_version = client.protocol_version
        info = client.server_info
        self.server_info = info.model_dump(mode="json", exclude_none=True) if info is not None else {}

    async def _stop(self, session: Session, *, force: bool = False) -> None:
        """Ask the owner task to leave the SDK client; cancel it if it has not within the close timeout."""
        if self._session is session:
            self._session = None
        session.dead = True
        session.stop.set()
        task = session.task
        if task is None or task.done():
            return
        if force:
            session.cancel()
        done, _ = await asyncio.wait({task}, timeout=_CLOSE_TIMEOUT)
        if not done:
            session.cancel()
            await asyncio.wait({task}, timeout=_CLOSE_TIMEOUT)

    async def _shutdown(self) -> None:
        async with self._lock():
            session = self._session
            if session is not None:
                await self._stop(session)

    # ------------------------------------------------------------------ notifications (on the loop)

    async def _on_message(self, message: Any) -> None:
        from mcp_types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification):
            log.info("MCP server %s: tool list changed", self.spec.name)
            if self._session is not None:
                self._session.walking = self._session.listed = False
            self._tools_changed()
        elif isinstance(message, Exception):
            log.debug("MCP server %s: transport reported %s", self.spec.name, describe_exc(message))

    @staticmethod
    def _wants_listen(client: Client) -> bool:
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        tools = client.server_capabilities.tools
        return client.protocol_version in MODERN_PROTOCOL_VERSIONS and bool(tools and tools.list_changed)

    async def _listen(self, client: Client, session: Session) -> None:
        """Keep a ``subscriptions/listen`` stream open (2026-era sessions send changes only there).

        Its events are also handed to the message handler, which is where listeners are called, so
        this task only drains the stream.
        """
        subscribed = False
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                subscribed = True
                async for _event in subscription:
                    pass
        except Exception as exc:
            log.debug("MCP server %s: change subscription ended: %s", self.spec.name, describe_exc(exc))
        if subscribed and self._session is session:
            # Without its stream the session would miss changes (the server may have restarted
            # behind a stateless HTTP endpoint): the next use reconnects and subscribes again.
            session.dead = True

    # ------------------------------------------------------------------ errors

    def _error(self, operation: str, exc: BaseException, hint: str = "", note: str = "") -> MCPClientError:
        return client_error(self.spec, self.transport, operation, exc, hint, note)

    def _timeout(self, operation: str, seconds: float, tried: str = "", note: str = "") -> MCPTimeoutError:
        return timeout_error(self.spec, self.transport, operation, seconds, tried, note)

    def _connect_hint(self) -> str:
        return connect_hint(self.spec, self.transport)


def _wire_result(result: Any) -> dict[str, Any]:
    """A ``CallToolResult`` as a wire-format dict.

    ``structuredContent`` and ``_meta`` are the JSON values as read, handed on without a copy:
    pydantic's serialiser refuses values nested a few hundred levels deep, and the engine says
    more clearly why such a result is refused.
    """
    wire: dict[str, Any] = result.model_dump(
        by_alias=True, mode="json", exclude_none=True, exclude={"structured_content", "meta"}
    )
    if result.structured_content is not None:
        wire["structuredContent"] = result.structured_content
    if result.meta is not None:
        wire["_meta"] = result.meta
    return wire


def _safe_call(callback: Callable[[], None]) -> None:
    try:
        callback()
    except Exception:
        log.exception("MCP list-changed listener %r failed", callback)


@functools.lru_cache(maxsize=1)
def _package_version() -> str:
    # Reading distribution metadata costs milliseconds; every connection's handshake needs it.
    try:
        from importlib.metadata import version

        return version("fms_dgt")
    except Exception:
        return "0"
