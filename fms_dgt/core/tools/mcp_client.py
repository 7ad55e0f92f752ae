"""Sync access to MCP servers: the one module that imports the ``mcp`` SDK.

The SDK is async (anyio). Every MCP operation of the package runs on **one** background event loop,
owned by a daemon thread (:class:`EventLoopBridge`). Sync callers submit coroutines to it and wait
for the result, so the same code works from a plain script, from many threads at once, and from
inside a running event loop (a Jupyter cell, an async test): the caller's loop is never used and
``asyncio.run`` is never called per operation. Async callers use the ``*_async`` methods, which
await the bridge without blocking their loop.

Pieces:

* :class:`MCPServerSpec` - how to reach one server (``stdio``, ``sse`` or ``streamable_http``),
  with its timeouts and reconnect policy.
* :class:`MCPClient` - one server's live session, opened on first use. It is *ref-counted*:
  :meth:`MCPClient.acquire` / :meth:`MCPClient.release`; the session closes when the last user
  releases it. A dropped connection (or a stdio server that died) is reopened on the next use, with
  bounded attempts and exponential backoff.
* The process-global **connection registry**: :func:`register_connection`,
  :func:`get_connection`, :func:`clear_connections`, and :func:`open_connection` (get or create,
  then acquire), through which a loader and an engine naming the same server share one session.

Results cross this module's boundary as plain JSON-ready dicts in the MCP wire format
(``inputSchema``, ``structuredContent``, ``isError``, ``_meta``), so nothing else in the package
depends on SDK types.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import functools
import itertools
import logging
import os
import sys
import threading
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, TypeVar

from fms_dgt.errors import ConfigError, DGTError

if TYPE_CHECKING:
    from mcp import Client

__all__ = [
    "TRANSPORTS",
    "EventLoopBridge",
    "MCPClient",
    "MCPClientError",
    "MCPConnectionLost",
    "MCPServerSpec",
    "MCPTimeoutError",
    "ToolPage",
    "clear_connections",
    "get_bridge",
    "get_connection",
    "open_connection",
    "register_connection",
    "unregister_connection",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Transport names accepted in configs, and the aliases folded into them.
TRANSPORTS: Final = ("stdio", "sse", "streamable_http")
_TRANSPORT_ALIASES: Final = {"streamable-http": "streamable_http", "http": "streamable_http"}
_PROTOCOL_MODES: Final = ("auto", "legacy")
_CLOSE_TIMEOUT: Final = 10.0
_SESSION_GONE: Final = ("session not found", "session terminated")
# Margin the sync side waits beyond an operation's own timeout, so the loop-side timeout (which
# cancels the request cleanly) normally fires first.
_SYNC_GRACE: Final = 5.0


# --------------------------------------------------------------------------- errors


class MCPClientError(DGTError):
    """An MCP operation failed.

    Attributes:
        server: the server's name.
        transport: ``stdio``, ``sse`` or ``streamable_http``.
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


# --------------------------------------------------------------------------- server spec


@dataclass(frozen=True, slots=True, kw_only=True)
class MCPServerSpec:
    """How to reach one MCP server.

    Attributes:
        name: the server's name: key of the connection registry, default namespace of its tools.
        transport: ``stdio``, ``sse`` or ``streamable_http`` (``http`` is an alias).
        command: executable to start (stdio). ``python`` means the running interpreter.
        args: command-line arguments (stdio).
        env: extra environment variables for the server process (stdio).
        cwd: working directory of the server process (stdio).
        url: endpoint URL (``sse``: the SSE stream, e.g. ``.../sse``; ``streamable_http``: ``.../mcp``).
        headers: HTTP headers (sse, streamable_http); values may use ``${VAR}``, resolved at connect.
        connect_timeout: seconds to start/reach the server and finish the handshake.
        list_timeout: seconds for one ``tools/list`` page.
        call_timeout: seconds for one ``tools/call``.
        reconnect_attempts: how many times a dropped connection is reopened before giving up.
        reconnect_backoff: first delay between reconnect attempts, doubled after each.
        protocol: ``auto`` (negotiate the newest protocol) or ``legacy`` (initialize handshake only).
    """

    name: str
    transport: str = "stdio"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] | None = None
    connect_timeout: float = 30.0
    list_timeout: float = 30.0
    call_timeout: float = 60.0
    reconnect_attempts: int = 3
    reconnect_backoff: float = 0.5
    protocol: str = "auto"

    def __post_init__(self) -> None:
        transport = _TRANSPORT_ALIASES.get(self.transport, self.transport)
        object.__setattr__(self, "transport", transport)
        object.__setattr__(self, "args", tuple(str(a) for a in self.args))
        self._check()

    def _check(self) -> None:
        who = f"MCP server {self.name!r}"
        if not isinstance(self.name, str) or not self.name:
            raise ConfigError("invalid MCP server name: it must be a non-empty string. Set `server:`")
        if self.transport not in TRANSPORTS:
            raise ConfigError(
                f"invalid transport {self.transport!r} for {who}: it is not one of "
                f"{', '.join(TRANSPORTS)}. Set `transport:` to one of them"
            )
        if self.protocol not in _PROTOCOL_MODES:
            raise ConfigError(
                f"invalid protocol {self.protocol!r} for {who}: expected 'auto' or 'legacy'. "
                "Use 'legacy' only for servers that mishandle protocol discovery"
            )
        self._check_endpoint(who)
        self._check_numbers(who)

    def _check_endpoint(self, who: str) -> None:
        if self.transport == "stdio":
            if not self.command:
                raise ConfigError(
                    f"missing command for {who}: the stdio transport starts a process. Set `command:`"
                )
            if self.url or self.headers:
                raise ConfigError(
                    f"invalid keys for {who}: `url` and `headers` apply to sse and streamable_http, not "
                    "stdio. Remove them or change `transport:`"
                )
            return
        if not self.url or "://" not in self.url:
            raise ConfigError(
                f"missing url for {who}: the {self.transport} transport needs an http(s) URL. Set `url:`"
            )
        if self.command or self.args or self.env or self.cwd:
            raise ConfigError(
                f"invalid keys for {who}: `command`, `args`, `env` and `cwd` apply to stdio only. "
                "Remove them or set `transport: stdio`"
            )

    def _check_numbers(self, who: str) -> None:
        for key in ("connect_timeout", "list_timeout", "call_timeout"):
            value = getattr(self, key)
            if not isinstance(value, int | float) or value <= 0:
                raise ConfigError(f"invalid {key} {value!r} for {who}: expected seconds > 0. Fix `{key}:`")
        if not isinstance(self.reconnect_attempts, int) or self.reconnect_attempts < 0:
            raise ConfigError(
                f"invalid reconnect_attempts {self.reconnect_attempts!r} for {who}: expected an "
                "integer >= 0. Fix `reconnect_attempts:`"
            )
        if not isinstance(self.reconnect_backoff, int | float) or self.reconnect_backoff < 0:
            raise ConfigError(
                f"invalid reconnect_backoff {self.reconnect_backoff!r} for {who}: expected seconds "
                ">= 0. Fix `reconnect_backoff:`"
            )

    def endpoint(self) -> tuple[Any, ...]:
        """What identifies the server process or URL (two specs sharing a name must agree on it)."""
        env = tuple(sorted((self.env or {}).items()))
        headers = tuple(sorted((self.headers or {}).items()))
        return (self.transport, self.command, self.args, env, self.cwd, self.url, headers, self.protocol)

    def describe(self) -> str:
        """``name (stdio: cmd args)`` or ``name (sse: url)`` for messages."""
        target = " ".join((self.command or "", *self.args)) if self.transport == "stdio" else self.url
        return f"{self.name} ({self.transport}: {target})"


@dataclass(slots=True, frozen=True)
class ToolPage:
    """One page of ``tools/list``.

    Attributes:
        tools: the tools in MCP wire format (``name``, ``inputSchema``, ``outputSchema``, ``_meta``...).
        next_cursor: the cursor of the next page, or None on the last page.
    """

    tools: list[dict[str, Any]]
    next_cursor: str | None


# --------------------------------------------------------------------------- the event-loop bridge


class EventLoopBridge:
    """One asyncio event loop on a daemon thread, shared by every MCP operation.

    Sync callers use :meth:`run`; async callers use :meth:`run_async`. Coroutines always run on the
    bridge's loop, so SDK sessions (whose anyio task groups are bound to one loop) can be used from
    any thread and from inside another running loop.
    """

    def __init__(self, name: str = "fms_dgt-mcp-loop") -> None:
        self._name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The bridge's loop, started on first use."""
        with self._lock:
            loop, thread = self._loop, self._thread
            if loop is None or thread is None or not thread.is_alive():
                loop = self._start()
            return loop

    def _start(self) -> asyncio.AbstractEventLoop:
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        thread = threading.Thread(target=self._serve, args=(loop, ready), name=self._name, daemon=True)
        thread.start()
        ready.wait()
        self._loop, self._thread = loop, thread
        return loop

    @staticmethod
    def _serve(loop: asyncio.AbstractEventLoop, ready: threading.Event) -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set)
        loop.run_forever()

    def in_bridge_thread(self) -> bool:
        """True when called from the bridge's own thread (where blocking would deadlock)."""
        return self._thread is not None and threading.current_thread() is self._thread

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the bridge loop and return a thread-safe future."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the bridge loop and wait for its result (from any thread but the bridge's).

        Raises:
            DGTError: called from the bridge thread itself (use the async API there).
            TimeoutError: the result did not arrive within ``timeout`` (the coroutine is cancelled).
        """
        if self.in_bridge_thread():
            coro.close()
            raise DGTError(
                "blocking MCP call on the MCP event-loop thread: it would deadlock. Call the *_async "
                "method instead, or move the work to another thread"
            )
        future = self.submit(coro)
        # wait() rather than result(timeout): the coroutine's own TimeoutError subclasses must
        # pass through unchanged, and concurrent.futures.TimeoutError is TimeoutError on 3.11+.
        done, _ = concurrent.futures.wait([future], timeout)
        if not done:
            future.cancel()
            raise TimeoutError(f"no result from the MCP event loop within {timeout} s")
        return future.result()

    async def run_async(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` on the bridge loop without blocking the caller's loop."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            return await coro
        return await asyncio.wrap_future(self.submit(coro))


_BRIDGE = EventLoopBridge()


def get_bridge() -> EventLoopBridge:
    """The process-wide bridge every :class:`MCPClient` uses by default."""
    return _BRIDGE


# --------------------------------------------------------------------------- SDK adapters


def _sdk_error_code(exc: BaseException) -> int | None:
    code = getattr(getattr(exc, "error", None), "code", None)
    return code if isinstance(code, int) else None


def _leaf(exc: BaseException) -> BaseException:
    """The first real exception inside (possibly nested) exception groups."""
    while isinstance(getattr(exc, "exceptions", None), Sequence) and exc.exceptions:  # type: ignore[attr-defined]
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    return exc


def _is_connection_lost(exc: BaseException) -> bool:
    """True when ``exc`` means the transport is gone (as opposed to an error answer)."""
    import anyio
    import httpx2
    from mcp_types import CONNECTION_CLOSED

    leaf = _leaf(exc)
    if _sdk_error_code(leaf) == CONNECTION_CLOSED:
        return True
    # Streamable HTTP answers 404 once the server forgot our session (it restarted, or expired the
    # session); the spec says to start a new one. The SDK surfaces it only as this text.
    if any(text in str(leaf).lower() for text in _SESSION_GONE):
        return True
    transport_errors = (
        anyio.ClosedResourceError,
        anyio.BrokenResourceError,
        anyio.EndOfStream,
        OSError,
        httpx2.TransportError,
    )
    return isinstance(leaf, transport_errors)


def _never_ran(exc: BaseException) -> bool:
    """True when a failed request certainly did not run on the server."""
    import httpx2

    leaf = _leaf(exc)
    return isinstance(leaf, httpx2.ConnectError) or any(text in str(leaf).lower() for text in _SESSION_GONE)


def _describe_exc(exc: BaseException) -> str:
    leaf = _leaf(exc)
    text = str(leaf).strip() or type(leaf).__name__
    return text if type(leaf).__name__ in text else f"{type(leaf).__name__}: {text}"


class _EOFWatch:
    """Proxy of a transport's read stream that reports when the stream ends.

    The SDK's dispatcher reads with ``async for``; when that loop ends (EOF, or the transport
    closed the stream) the connection is dead, and the next use must reconnect instead of failing.
    """

    def __init__(self, inner: Any, on_eof: Callable[[], None]) -> None:
        self._inner = inner
        self._on_eof = on_eof

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __aiter__(self) -> _EOFWatch:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self._inner.__anext__()
        except (StopAsyncIteration, anyio.ClosedResourceError, anyio.EndOfStream):
            self._on_eof()
            raise

    async def receive(self) -> Any:
        return await self.__anext__()

    async def __aenter__(self) -> _EOFWatch:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> Any:
        self._on_eof()
        return await self._inner.__aexit__(*exc)


def _resolve_command(command: str) -> str:
    # A bare ``python`` would find whatever interpreter is first on PATH, usually not the one
    # that has this package (and the server's dependencies) installed.
    return sys.executable if command in ("python", "python3") else command


def _interpolated_headers(spec: MCPServerSpec) -> dict[str, str]:
    from fms_dgt.config import interpolate

    headers = {str(k): str(v) for k, v in (spec.headers or {}).items()}
    return dict(interpolate(headers, yaml_path=f"mcp server {spec.name}.headers"))


@contextlib.asynccontextmanager
async def _open_transport(spec: MCPServerSpec, on_eof: Callable[[], None]) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK transport for ``spec``, with its read stream watched for EOF."""
    async with _sdk_streams(spec) as (read_stream, write_stream):
        yield _EOFWatch(read_stream, on_eof), write_stream


def _server_errlog() -> Any:
    """Where a stdio server's stderr goes: the process's real stderr.

    The SDK's default is whatever ``sys.stderr`` was when it was imported, which may be a
    replacement without a file descriptor (a notebook, a test's capture) that cannot be handed to
    a child process; fall back to the original stderr, else discard.
    """
    for stream in (sys.stderr, sys.__stderr__):
        try:
            if stream is not None:
                stream.fileno()
                return stream
        except (AttributeError, OSError, ValueError):
            continue
    return open(os.devnull, "w")  # kept open as long as the server process runs


@contextlib.asynccontextmanager
async def _sdk_streams(spec: MCPServerSpec) -> AsyncIterator[tuple[Any, Any]]:
    if spec.transport == "stdio":
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=_resolve_command(spec.command or ""),
            args=list(spec.args),
            env=dict(spec.env) if spec.env else None,
            cwd=spec.cwd,
        )
        async with stdio_client(params, errlog=_server_errlog()) as streams:
            yield streams
    elif spec.transport == "sse":
        from mcp.client.sse import sse_client

        headers = _interpolated_headers(spec)
        sse = sse_client(spec.url or "", headers, spec.connect_timeout, httpx_client_factory=_http_client)
        async with sse as streams:
            yield streams
    else:
        async with _streamable_http_streams(spec) as streams:
            yield streams


@contextlib.asynccontextmanager
async def _streamable_http_streams(spec: MCPServerSpec) -> AsyncIterator[tuple[Any, Any]]:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    read_timeout = max(spec.call_timeout, spec.list_timeout) + _SYNC_GRACE
    timeout = httpx2.Timeout(spec.connect_timeout, read=read_timeout)
    # The transport leaves a client it was given open, so this context owns it.
    http_client = _http_client(headers=_interpolated_headers(spec), timeout=timeout)
    async with http_client, streamable_http_client(spec.url or "", http_client=http_client) as streams:
        yield streams


def _http_client(
    headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None
) -> Any:  # an httpx2.AsyncClient (the SDK's ``McpHttpClientFactory`` signature)
    import httpx2

    kwargs: dict[str, Any] = {"headers": headers, "verify": _ssl_context(), "auth": auth}
    if timeout is not None:
        kwargs["timeout"] = timeout
    return httpx2.AsyncClient(**kwargs)


@functools.cache
def _ssl_context() -> Any:
    # Loading the CA bundle costs ~70 ms of CPU; per client, that alone would serialise the
    # concurrent loading of several HTTP servers on the one event-loop thread.
    import httpx2

    return httpx2.create_ssl_context()


# --------------------------------------------------------------------------- one open session


@dataclass(slots=True, eq=False)
class _Session:
    """One open SDK session, owned by a task on the bridge loop."""

    generation: int
    client: Client | None = None
    task: asyncio.Task[None] | None = None
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    dead: bool = False
    cancel: Callable[[], None] = lambda: None
    # The SDK validates a result against the output schema it saw in tools/list, and re-lists the
    # first page before every call of a tool it has not seen; so a session lists every page once.
    walking: bool = False
    listed: bool = False
    list_lock: asyncio.Lock = field(default_factory=asyncio.Lock)


# --------------------------------------------------------------------------- the client


class MCPClient:
    """A ref-counted, reconnecting session to one MCP server, usable from sync and async code.

    The session opens on first use (or :meth:`connect`). Requests from many threads run
    concurrently on the one session. Use :func:`open_connection` to share clients by server name.

    Args:
        spec: the server and its timeouts.
        bridge: the event-loop bridge (the process-wide one by default).
    """

    def __init__(self, spec: MCPServerSpec, *, bridge: EventLoopBridge | None = None) -> None:
        self.spec = spec
        self._bridge = bridge or get_bridge()
        self._refs = 0
        self._ref_lock = threading.Lock()
        self._session: _Session | None = None
        self._session_lock: asyncio.Lock | None = None
        self._generation = itertools.count(1)
        self._listeners: dict[int, Callable[[], None]] = {}
        self._listener_ids = itertools.count()
        self._retired = False
        #: How many times a session was (re)opened; 1 after the first connect.
        self.connects = 0
        #: Negotiated protocol version of the current session, once connected.
        self.protocol_version: str | None = None
        #: The server's ``serverInfo`` (name, version) of the current session, once connected.
        self.server_info: dict[str, Any] = {}
        _LIVE_CLIENTS.add(self)

    def __repr__(self) -> str:
        state = "connected" if self.connected else "idle"
        return f"MCPClient({self.spec.describe()}, {state}, refs={self._refs})"

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
        """Drop a reference; the last release closes the session and unregisters the client.

        A released client does not reopen by itself (a late notification or a stray thread must
        not start a server nobody holds); :meth:`acquire` revives it.
        """
        with self._ref_lock:
            self._refs = max(0, self._refs - 1)
            last = self._refs == 0
            self._retired = last
        if last:
            unregister_connection(self.spec.name, self)
            self.close()

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
        budget = (spec.connect_timeout + timeout) * rounds + backoff + _SYNC_GRACE
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
        async def send(session: _Session) -> ToolPage:
            return await _fetch_page(session, cursor)

        return await self._request("tools/list", send, self.spec.list_timeout, idempotent=True)

    async def _call(self, name: str, arguments: dict[str, Any], timeout: float) -> dict[str, Any]:
        async def send(session: _Session) -> dict[str, Any]:
            if not session.listed:
                await _list_every_page(session)
            result = await _live_client(session).call_tool(name, arguments)
            return result.model_dump(by_alias=True, mode="json", exclude_none=True)

        return await self._request(f"tools/call {name}", send, timeout, idempotent=False)

    async def _request(
        self, operation: str, send: Callable[[_Session], Awaitable[T]], timeout: float, *, idempotent: bool
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
                if not (session.dead or _is_connection_lost(exc)):
                    raise self._error(operation, exc) from exc
                session.dead = True
                retry = idempotent or _never_ran(exc)
                if not retry or attempt >= self.spec.reconnect_attempts:
                    raise self._lost(operation, exc) from exc
                log.info("MCP server %s: connection lost during %s; reconnecting", self.spec.name, operation)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _timed(self, operation: str, awaitable: Awaitable[T], timeout: float) -> T:
        import anyio

        try:
            with anyio.fail_after(timeout):
                return await awaitable
        except TimeoutError as exc:
            raise self._timeout(operation, timeout) from exc
        except Exception as exc:
            from mcp_types import REQUEST_TIMEOUT

            if _sdk_error_code(_leaf(exc)) == REQUEST_TIMEOUT:
                raise self._timeout(operation, timeout) from exc
            raise

    # ------------------------------------------------------------------ session lifetime (on the loop)

    def _lock(self) -> asyncio.Lock:
        if self._session_lock is None:
            self._session_lock = asyncio.Lock()
        return self._session_lock

    async def _ensure_session(self) -> _Session:
        """The open session, (re)connecting when there is none or its transport ended."""
        async with self._lock():
            session = self._session
            if session is not None and not session.dead:
                return session
            if self._retired:
                raise MCPClientError(
                    self.spec.name,
                    self.spec.transport,
                    "connect",
                    "its last user released the connection",
                    "Take a new reference with open_connection() or acquire().",
                )
            if session is not None:
                await self._stop(session)
                return await self._reconnect()
            return await self._open()

    async def _reconnect(self) -> _Session:
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

    async def _open(self) -> _Session:
        session = _Session(next(self._generation))
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        session.task = asyncio.create_task(self._own(session, ready), name=f"mcp-session-{self.spec.name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.spec.connect_timeout)
        except asyncio.TimeoutError as exc:
            ready.cancel()
            await self._stop(session, force=True)
            raise self._timeout("connect", self.spec.connect_timeout) from exc
        except Exception as exc:
            await self._stop(session, force=True)
            raise self._error("connect", exc, hint=self._connect_hint()) from exc
        self._session = session
        self.connects += 1
        return session

    async def _own(self, session: _Session, ready: asyncio.Future[None]) -> None:
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
                log.debug("MCP server %s: session ended with %s", self.spec.name, _describe_exc(exc))
        finally:
            session.dead = True
            if not ready.done():
                ready.set_exception(RuntimeError("the session closed during the handshake"))

    async def _serve(self, session: _Session, ready: asyncio.Future[None]) -> None:
        import anyio
        from mcp import Client, Implementation

        def on_eof() -> None:
            session.dead = True

        client = Client(
            _open_transport(self.spec, on_eof),
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

    async def _stop(self, session: _Session, *, force: bool = False) -> None:
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
            log.debug("MCP server %s: transport reported %s", self.spec.name, _describe_exc(message))

    @staticmethod
    def _wants_listen(client: Client) -> bool:
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        tools = client.server_capabilities.tools
        return client.protocol_version in MODERN_PROTOCOL_VERSIONS and bool(tools and tools.list_changed)

    async def _listen(self, client: Client, session: _Session) -> None:
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
            log.debug("MCP server %s: change subscription ended: %s", self.spec.name, _describe_exc(exc))
        if subscribed and self._session is session:
            # Without its stream the session would miss changes (the server may have restarted
            # behind a stateless HTTP endpoint): the next use reconnects and subscribes again.
            session.dead = True

    # ------------------------------------------------------------------ errors

    def _error(self, operation: str, exc: BaseException, hint: str = "") -> MCPClientError:
        if isinstance(exc, MCPClientError):
            return type(exc)(self.spec.name, self.spec.transport, operation, exc.reason, hint)
        return MCPClientError(self.spec.name, self.spec.transport, operation, _describe_exc(exc), hint)

    def _timeout(self, operation: str, seconds: float) -> MCPTimeoutError:
        key = {"connect": "connect_timeout", "tools/list": "list_timeout"}.get(operation, "call_timeout")
        return MCPTimeoutError(
            self.spec.name,
            self.spec.transport,
            operation,
            f"no answer within {seconds:g} s",
            f"Check that the server is healthy, or raise `{key}`.",
        )

    def _lost(self, operation: str, exc: BaseException) -> MCPConnectionLost:
        return MCPConnectionLost(
            self.spec.name,
            self.spec.transport,
            operation,
            f"the connection dropped ({_describe_exc(exc)})",
            "The next use reconnects; a tools/call may or may not have run on the server.",
        )

    def _connect_hint(self) -> str:
        if self.spec.transport == "stdio":
            return "Check `command`, `args` and `cwd`, and that the command runs an MCP server on stdio."
        return "Check `url` (and `headers`), and that the server is up and speaks this transport."


async def _fetch_page(session: _Session, cursor: str | None) -> ToolPage:
    result = await _live_client(session).list_tools(cursor=cursor, cache_mode="bypass")
    if cursor is None:
        session.walking = True
    if result.next_cursor is None and session.walking:
        session.listed = True
    tools = [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in result.tools]
    return ToolPage(tools, result.next_cursor)


async def _list_every_page(session: _Session, max_pages: int = 100) -> None:
    """Prime the session's output-schema cache; a server whose listing fails or loops is left as is."""
    async with session.list_lock:
        cursors: set[str | None] = {None}
        cursor: str | None = None
        try:
            for _ in range(max_pages):
                if session.listed:
                    return
                cursor = (await _fetch_page(session, cursor)).next_cursor
                if cursor in cursors:
                    break
                cursors.add(cursor)
        except Exception as exc:
            if _is_connection_lost(exc):
                raise
            log.debug("listing every tool before a call failed: %s", _describe_exc(exc))
        session.listed = True  # not again on this session: the call goes ahead either way


def _live_client(session: _Session) -> Client:
    if session.client is None:  # pragma: no cover - _open publishes only entered sessions
        raise RuntimeError("MCP session is not open")
    return session.client


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


# --------------------------------------------------------------------------- connection registry

_CONNECTIONS: dict[str, MCPClient] = {}
_CONNECTIONS_LOCK = threading.RLock()
_LIVE_CLIENTS: weakref.WeakSet[MCPClient] = weakref.WeakSet()


def register_connection(name: str, client: MCPClient, *, replace: bool = False) -> None:
    """Make ``client`` the shared connection for server ``name``.

    Raises:
        DGTError: another client is registered under ``name`` and ``replace`` is False.
    """
    with _CONNECTIONS_LOCK:
        existing = _CONNECTIONS.get(name)
        if existing is not None and existing is not client and not replace:
            raise DGTError(
                f"duplicate MCP connection {name!r}: another client is registered under that name. "
                "Unregister it first, pass replace=True, or use a different server name"
            )
        _CONNECTIONS[name] = client


def get_connection(name: str) -> MCPClient | None:
    """The client registered for server ``name``, or None (never does I/O)."""
    with _CONNECTIONS_LOCK:
        return _CONNECTIONS.get(name)


def unregister_connection(name: str, client: MCPClient | None = None) -> None:
    """Forget server ``name`` (only if it maps to ``client``, when given). Does not close it."""
    with _CONNECTIONS_LOCK:
        if client is None or _CONNECTIONS.get(name) is client:
            _CONNECTIONS.pop(name, None)


def clear_connections() -> None:
    """Close and forget every registered connection (for tests and shutdown)."""
    with _CONNECTIONS_LOCK:
        clients = list(_CONNECTIONS.values())
        _CONNECTIONS.clear()
    for client in clients:
        _close_quietly(client)


def open_connection(spec: MCPServerSpec) -> MCPClient:
    """The shared client for ``spec.name`` (created and registered if absent), acquired once.

    The caller owns one reference and must :meth:`MCPClient.release` it.

    Raises:
        ConfigError: a client with the same name but a different endpoint is already registered.
    """
    with _CONNECTIONS_LOCK:
        client = _CONNECTIONS.get(spec.name)
        if client is None:
            client = MCPClient(spec)
            _CONNECTIONS[spec.name] = client
        elif client.spec.endpoint() != spec.endpoint():
            raise ConfigError(
                f"conflicting MCP server {spec.name!r}: it is already connected as "
                f"{client.spec.describe()}, not {spec.describe()}. Give each server its own `server:` name"
            )
        return client.acquire()


def _close_quietly(client: MCPClient) -> None:
    try:
        client.close()
    except Exception as exc:
        log.warning("closing MCP server %s failed: %s", client.spec.name, exc)


@atexit.register
def _close_all_at_exit() -> None:
    # Stdio servers would exit on EOF anyway; closing them here lets them shut down cleanly and
    # keeps their exit out of the interpreter's own teardown.
    for client in list(_LIVE_CLIENTS):
        if client.connected:
            _close_quietly(client)
