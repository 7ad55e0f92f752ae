"""The guard between a transport and the SDK session: what an untrusted server sends is looked at
before the SDK reads it.

:class:`MessageGuard` wraps a transport's two streams (:meth:`MessageGuard.wrap`):

* Every request the client sends is noted (id -> method), so an answer the transport could not
  read (:class:`UnreadableMessage`: not JSON, nested too deeply, too long) fails its request at
  once, as a JSON-RPC error naming why, instead of leaving it to time out.
* A ``tools/list`` answer is checked tool by tool: a tool the SDK would refuse (no name, an
  ``inputSchema`` that is not an object...) is taken out of the page and noted
  (:meth:`MessageGuard.page_report`), so one bad tool does not fail the whole listing.
* Protocol noise (a line on a stdio server's stdout that is not JSON-RPC) becomes one log line
  naming the server, rate-limited, and is dropped: the session goes on.
* The end of the read stream marks the session dead, so the next use reconnects.

It also holds what the stdio transport knows about the server process
(:class:`~fms_dgt.core.tools.mcp.stdio.ServerProcess`), for error messages.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from fms_dgt.core.tools.mcp.spec import RejectedTool
from fms_dgt.errors import LoadError
from fms_dgt.io import DEFAULT_LIMITS, check_limits, check_text
from fms_dgt.secrets import redact

if TYPE_CHECKING:
    from pydantic import ValidationError

    from fms_dgt.core.tools.mcp.stdio import ServerProcess

__all__ = [
    "MessageGuard",
    "PageReport",
    "RateLimiter",
    "UnreadableMessage",
    "summarise_errors",
    "summarise_validation",
]

log = logging.getLogger(__name__)

_FALLBACK_VERSION: Final = "2025-11-25"
# Requests remembered while they wait for an answer; one that is never answered (a timeout the
# server ignored) must not make the table grow without end on a session that lives for hours.
_MAX_PENDING: Final = 10_000
_MAX_PAGES: Final = 16
_NOISE_PER_WINDOW: Final = 5
_NOISE_WINDOW: Final = 60.0


class UnreadableMessage(Exception):
    """A message from the server that could not be read (the transport puts it on the read stream).

    Attributes:
        reason: why, e.g. ``it is not JSON``.
        size: its length in bytes.
        request_id: the id of the request it seems to answer, when one could be made out.
        excerpt: its first characters, for the log.
        parsed: the message itself when it is a well-formed message that is only nested too
            deeply (a ``tools/list`` answer loses just its deep tools).
    """

    def __init__(
        self,
        reason: str,
        size: int,
        request_id: int | str | None = None,
        excerpt: str = "",
        parsed: Any = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.size = size
        self.request_id = request_id
        self.excerpt = excerpt
        self.parsed = parsed


class RateLimiter:
    """At most ``limit`` events per ``window`` seconds; counts the ones it holds back."""

    def __init__(self, limit: int, window: float) -> None:
        self.limit = limit
        self.window = window
        self._start = time.monotonic()
        self._count = 0
        self.held = 0

    def allow(self) -> tuple[bool, int]:
        """``(allowed, events held back since the last allowed one)`` for one more event."""
        now = time.monotonic()
        if now - self._start >= self.window:
            self._start, self._count = now, 0
        if self._count < self.limit:
            self._count += 1
            held, self.held = self.held, 0
            return True, held
        self.held += 1
        return False, 0


@dataclass(slots=True, frozen=True, kw_only=True)
class PageReport:
    """What the guard did to one ``tools/list`` answer.

    Attributes:
        size: how many tools the server's page held.
        kept: ``(position, name)`` of each tool passed on to the SDK.
        rejected: the tools taken out.
    """

    size: int
    kept: tuple[tuple[int, str], ...]
    rejected: tuple[RejectedTool, ...]


class MessageGuard:
    """Looks at every message between one session and its transport (see the module docstring).

    Args:
        server: the server's name, for log lines.
        version: returns the session's negotiated protocol version (None before the handshake).
        on_eof: called when the read stream ends.
    """

    def __init__(self, server: str, version: Callable[[], str | None], on_eof: Callable[[], None]) -> None:
        self.server = server
        self._version = version
        self._on_eof = on_eof
        self._pending: dict[int | str, tuple[str, str | None]] = {}
        self._pages: dict[str | None, PageReport] = {}
        self._noise = RateLimiter(_NOISE_PER_WINDOW, _NOISE_WINDOW)
        #: The server process, when the transport started one (stdio).
        self.process: ServerProcess | None = None

    def wrap(self, read_stream: Any, write_stream: Any) -> tuple[Any, Any]:
        """The transport's streams as the SDK should see them."""
        return _GuardedRead(read_stream, self), _GuardedWrite(write_stream, self)

    def page_report(self, cursor: str | None) -> PageReport | None:
        """What was done to the last ``tools/list`` answer for ``cursor`` (None if nothing is known).

        Kept until the next answer for the same cursor, so two listings in flight at once (the
        loader's, and the one a first call makes) both learn what was taken out.
        """
        return self._pages.get(cursor)

    def process_note(self) -> str:
        """``; the server process exited with code 1; its stderr ended with: ...``, or ``""``."""
        process = self.process
        return process.describe() if process is not None else ""

    async def settled(self, timeout: float) -> None:
        """Wait (at most ``timeout`` seconds) until a server process that is ending has ended."""
        if self.process is not None:
            await self.process.wait_ended(timeout)

    # ------------------------------------------------------------------ outgoing

    def sent(self, item: Any) -> None:
        """Note a request the client sends."""
        message = getattr(item, "message", None)
        method = getattr(message, "method", None)
        request_id = getattr(message, "id", None)
        if method is None or request_id is None:
            return
        cursor = None
        if method == "tools/list":
            params = getattr(message, "params", None) or {}
            cursor = params.get("cursor") if isinstance(params, dict) else None
        self._pending[request_id] = (method, cursor)
        if len(self._pending) > _MAX_PENDING:
            del self._pending[next(iter(self._pending))]

    # ------------------------------------------------------------------ incoming

    def received(self, item: Any) -> Any:
        """The item to hand to the SDK for one the transport read, or None to drop it."""
        if isinstance(item, UnreadableMessage):
            return self._unreadable(item)
        if isinstance(item, Exception):
            return item
        message = item.message
        request_id = getattr(message, "id", None)
        if request_id is None or getattr(message, "method", None) is not None:
            return item  # a notification, or a request of the server's own
        method, cursor = self._pending.pop(request_id, ("", None))
        if method == "tools/list" and isinstance(getattr(message, "result", None), dict):
            self._check_page(message.result, cursor)
        return item

    def _unreadable(self, item: UnreadableMessage) -> Any:
        pending = self._pending.pop(item.request_id, None) if item.request_id is not None else None
        if pending is not None and pending[0] == "tools/list" and item.parsed is not None:
            self._check_page(item.parsed.message.result, pending[1], deep=True)
            return item.parsed
        if pending is not None:
            log.warning(
                "MCP server %s: its answer to %s (%d bytes) could not be read: %s",
                self.server,
                pending[0],
                item.size,
                item.reason,
            )
            return _error_answer(item.request_id, f"the server's answer could not be read: {item.reason}")
        allowed, held = self._noise.allow()
        if allowed:
            more = f" ({held} more such lines were not logged)" if held else ""
            log.warning(
                "MCP server %s sent a line that is not a JSON-RPC message (%d bytes, ignored: %s): %s%s",
                self.server,
                item.size,
                item.reason,
                redact(item.excerpt),
                more,
            )
        return None

    def ended(self) -> None:
        """The read stream ended."""
        self._on_eof()

    # ------------------------------------------------------------------ tools/list

    def _check_page(self, result: dict[str, Any], cursor: str | None, *, deep: bool = False) -> None:
        """Take the tools the SDK would refuse out of a page (and, for a ``deep`` page, one the SDK
        could not read, the tools nested too deeply or holding a lone surrogate), noting each with why."""
        self._pages.pop(cursor, None)
        tools = result.get("tools")
        if not isinstance(tools, list):
            return  # not a page at all: the SDK refuses it as a whole, with its reason
        bad = _too_deep(tools) if deep else {}
        positions = [i for i in range(len(tools)) if i not in bad]
        result["tools"] = [tools[i] for i in positions]
        for position, errors in _bad_tools(self._version() or _FALLBACK_VERSION, result).items():
            bad[positions[position]] = errors
        if bad:
            result["tools"] = [t for i, t in enumerate(tools) if i not in bad]
        kept = tuple((i, str(t.get("name"))) for i, t in enumerate(tools) if i not in bad)
        rejected = tuple(
            RejectedTool(index=i, name=_name_of(tools[i]), reason=summarise_errors(errors, skip=2))
            for i, errors in sorted(bad.items())
        )
        self._remember(cursor, PageReport(size=len(tools), kept=kept, rejected=rejected))

    def _remember(self, cursor: str | None, report: PageReport) -> None:
        self._pages[cursor] = report
        if len(self._pages) > _MAX_PAGES:
            del self._pages[next(iter(self._pages))]


def _too_deep(tools: list[Any]) -> dict[int, list[Any]]:
    """``{position: [error]}`` of the tools nested deeper than ``DEFAULT_LIMITS.max_depth`` or
    holding a string that is not valid Unicode (a lone surrogate)."""
    bad: dict[int, list[Any]] = {}
    for i, tool in enumerate(tools):
        try:
            check_limits(tool, "MCP tool")
        except LoadError:
            bad[i] = [{"loc": (), "msg": f"it is nested more than {DEFAULT_LIMITS.max_depth} levels deep"}]
            continue
        try:
            check_text(tool, "MCP tool")
        except LoadError as exc:
            bad[i] = [{"loc": (), "msg": f"{exc.reason} at {exc.pointer}"}]
    return bad


def _bad_tools(version: str, result: dict[str, Any]) -> dict[int, list[Any]]:
    """``{position: errors}`` of the tools the SDK would refuse in a ``tools/list`` answer.

    Errors about the page itself (a bad ``nextCursor``) are left for the SDK to report.
    """
    from mcp_types import ListToolsResult
    from mcp_types.methods import validate_server_result
    from pydantic import ValidationError

    try:
        try:
            validate_server_result("tools/list", version, result)
        except (KeyError, TypeError):  # a version the SDK has no table for: its generic model
            ListToolsResult.model_validate(result, by_name=False)
    except ValidationError as exc:
        bad: dict[int, list[Any]] = {}
        for error in exc.errors(include_url=False, include_input=False):
            loc = error["loc"]
            if len(loc) >= 2 and loc[0] == "tools" and isinstance(loc[1], int):
                bad.setdefault(loc[1], []).append(error)
        return bad
    return {}


def summarise_validation(exc: ValidationError, skip: int = 0) -> str:
    """A pydantic error as one short line: ``name: Field required; inputSchema: ...``."""
    return summarise_errors(exc.errors(include_url=False, include_input=False), skip)


def summarise_errors(errors: list[Any], skip: int = 0) -> str:
    """Pydantic error entries as one short line (at most three, then how many more).

    Args:
        errors: the entries (``loc``, ``msg``).
        skip: leading parts of each location to leave out (``tools.0`` of a page's tool).
    """
    parts = []
    for error in errors[:3]:
        where = ".".join(str(p) for p in error["loc"][skip:])
        parts.append(f"{where}: {error['msg']}" if where else str(error["msg"]))
    more = len(errors) - len(parts)
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def _name_of(tool: object) -> str | None:
    name = tool.get("name") if isinstance(tool, dict) else None
    return name if isinstance(name, str) else None


def _error_answer(request_id: int | str | None, message: str) -> Any:
    from mcp.shared.message import SessionMessage
    from mcp_types import PARSE_ERROR, ErrorData, JSONRPCError

    error = ErrorData(code=PARSE_ERROR, message=message)
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


class _GuardedRead:
    """The transport's read stream, seen through the guard."""

    def __init__(self, inner: Any, guard: MessageGuard) -> None:
        self._inner = inner
        self._guard = guard

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __aiter__(self) -> _GuardedRead:
        return self

    async def __anext__(self) -> Any:
        import anyio

        while True:
            try:
                item = await self._inner.__anext__()
            except (StopAsyncIteration, anyio.ClosedResourceError, anyio.EndOfStream):
                self._guard.ended()
                raise
            passed = self._guard.received(item)
            if passed is not None:
                return passed

    async def receive(self) -> Any:
        return await self.__anext__()

    async def __aenter__(self) -> _GuardedRead:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> Any:
        self._guard.ended()
        return await self._inner.__aexit__(*exc)


class _GuardedWrite:
    """The transport's write stream, noting each request on its way out."""

    def __init__(self, inner: Any, guard: MessageGuard) -> None:
        self._inner = inner
        self._guard = guard

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def send(self, item: Any) -> None:
        self._guard.sent(item)
        await self._inner.send(item)

    async def __aenter__(self) -> _GuardedWrite:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> Any:
        return await self._inner.__aexit__(*exc)
