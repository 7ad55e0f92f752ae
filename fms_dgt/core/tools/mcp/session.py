"""One open SDK session (:class:`Session`) and the ``tools/list`` requests made on it.

A session is owned by a task on the bridge loop (see :class:`~fms_dgt.core.tools.mcp.client.MCPClient`);
everything here runs on that loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fms_dgt.core.tools.mcp.guard import MessageGuard, PageReport
from fms_dgt.core.tools.mcp.spec import RejectedTool, ToolPage
from fms_dgt.core.tools.mcp.transports import describe_exc, is_connection_lost

if TYPE_CHECKING:
    from mcp import Client

__all__ = ["Session", "fetch_page", "list_every_page", "live_client"]

log = logging.getLogger(__name__)

_SDK_DROPPED = "the MCP SDK left it out of the listing (its log says why)"


@dataclass(slots=True, eq=False)
class Session:
    """One open SDK session, owned by a task on the bridge loop, and the guard on its transport."""

    generation: int
    server: str = ""
    guard: MessageGuard = field(init=False)
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

    def __post_init__(self) -> None:
        self.guard = MessageGuard(self.server, self._version, self._ended)

    def _version(self) -> str | None:
        return self.client.protocol_version if self.client is not None else None

    def _ended(self) -> None:
        self.dead = True


async def fetch_page(session: Session, cursor: str | None) -> ToolPage:
    """One ``tools/list`` page, noting when the session has walked every page."""
    result = await live_client(session).list_tools(cursor=cursor, cache_mode="bypass")
    if cursor is None:
        session.walking = True
    if result.next_cursor is None and session.walking:
        session.listed = True
    tools = [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in result.tools]
    report = session.guard.page_report(cursor)
    if report is None:
        return ToolPage(tools, result.next_cursor)
    positions, dropped = _align(tools, report)
    rejected = tuple(sorted((*report.rejected, *dropped), key=lambda r: r.index))
    return ToolPage(tools, result.next_cursor, positions, rejected, report.size)


def _align(tools: list[dict[str, Any]], report: PageReport) -> tuple[tuple[int, ...], list[RejectedTool]]:
    """Each tool's position in the server's page, and the tools the SDK itself left out.

    The SDK keeps the order of a page and may only drop tools (on 2026-era sessions, those with an
    invalid ``x-mcp-header``), so the tools it returns are matched to the guard's in order.
    """
    positions: list[int] = []
    dropped: list[RejectedTool] = []
    kept = iter(report.kept)
    for tool in tools:
        for position, name in kept:
            if name == tool.get("name"):
                positions.append(position)
                break
            dropped.append(RejectedTool(index=position, name=name, reason=_SDK_DROPPED))
        else:
            return tuple(range(len(tools))), []  # not the page the guard saw: positions unknown
    dropped.extend(RejectedTool(index=p, name=n, reason=_SDK_DROPPED) for p, n in kept)
    return tuple(positions), dropped


async def list_every_page(session: Session, max_pages: int = 100) -> None:
    """Prime the session's output-schema cache; a server whose listing fails or loops is left as is."""
    async with session.list_lock:
        cursors: set[str | None] = {None}
        cursor: str | None = None
        try:
            for _ in range(max_pages):
                if session.listed:
                    return
                cursor = (await fetch_page(session, cursor)).next_cursor
                if cursor in cursors:
                    break
                cursors.add(cursor)
        except Exception as exc:
            if is_connection_lost(exc):
                raise
            log.debug("listing every tool before a call failed: %s", describe_exc(exc))
        session.listed = True  # not again on this session: the call goes ahead either way


def live_client(session: Session) -> Client:
    """The SDK client of an open session."""
    if session.client is None:  # pragma: no cover - _open publishes only entered sessions
        raise RuntimeError("MCP session is not open")
    return session.client
