"""A small MCP server for the tests, written with the SDK's ``MCPServer``.

Run it as a script::

    python tests/support/mcp_server.py                                  # stdio
    python tests/support/mcp_server.py --transport sse --port 8123      # http://127.0.0.1:8123/sse
    python tests/support/mcp_server.py --transport streamable-http --port 8123   # .../mcp
    python tests/support/mcp_server.py --transport sse --port 8123 --path /   # http://127.0.0.1:8123/

What it offers, for the loader and engine tests:

* typed returns (a pydantic model, a ``TypedDict``, ``int``), so tools declare ``outputSchema``;
* more tools than one ``tools/list`` page (``--page-size``, default 4), with real cursors;
* ``fail`` (a tool error: ``isError``), ``sleep`` (a slow tool), ``pid`` (to kill the server),
  ``request_header`` (to check the headers an HTTP client sent);
* ``add_tool`` / ``remove_tool``, which change the tool list at run time and notify the client
  (``notifications/tools/list_changed`` on handshake-era sessions, ``subscriptions/listen`` on
  2026-era ones);
* ``media`` (image, audio, resource-link and embedded-resource blocks) and ``raw_json`` (text that
  is JSON, no structured content);
* ``--bad-cursor``: every page answers the same cursor, to test the loop guard;
* ``--latency S``: every answer comes S seconds late (a server across a slow network);
* ``--data-only``: only the data tools (``forecast``, ``add``, ``echo``, ``raw_json``, ``media``),
  for runs whose sampled calls must not sleep, fail on purpose or change the tool list;
* ``--path P``: serve the SSE stream or the streamable-HTTP endpoint at ``P`` (e.g. ``/``, the
  bare ``http://host:port`` a config may name) instead of ``/sse`` or ``/mcp``.

The server binds to 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
from pathlib import Path
from typing import Any, TypedDict

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import (
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ListToolsResult,
    PaginatedRequestParams,
    ResourceLink,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

PNG_1PX = base64.b64encode(bytes.fromhex("89504e470d0a1a0a")).decode()


class Forecast(BaseModel):
    """A weather forecast."""

    city: str
    celsius: float
    conditions: str


class Sum(TypedDict):
    """The sum of two numbers."""

    total: float


class PagedServer(MCPServer):
    """``MCPServer`` whose ``tools/list`` is paginated (the stock one returns everything at once)."""

    def __init__(self, name: str, *, page_size: int, bad_cursor: bool, latency: float = 0.0) -> None:
        super().__init__(name, log_level="WARNING")
        self.page_size = page_size
        self.bad_cursor = bad_cursor
        if latency > 0:
            self.middleware.append(_Delay(latency))

    async def _handle_list_tools(self, ctx: Any, params: PaginatedRequestParams | None) -> ListToolsResult:
        tools = await self.list_tools()
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + self.page_size
        if self.bad_cursor:
            return ListToolsResult(tools=tools[start:end], next_cursor=str(start))
        return ListToolsResult(tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None)


class _Delay:
    """Middleware that answers every message ``seconds`` late, like a server across a slow network."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        await asyncio.sleep(self.seconds)
        return await call_next(ctx)


def build_server(
    page_size: int = 4, bad_cursor: bool = False, latency: float = 0.0, data_only: bool = False
) -> PagedServer:
    """The test server with all its tools registered (only the data tools with ``data_only``)."""
    server = PagedServer("fms-test", page_size=page_size, bad_cursor=bad_cursor, latency=latency)
    _register_data_tools(server)
    if not data_only:
        _register_behaviour_tools(server)
        _register_list_tools(server)
    return server


def _register_data_tools(server: PagedServer) -> None:
    @server.tool(
        title="Weather forecast",
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
        meta={"category": "weather"},
    )
    def forecast(city: str, days: int = 1) -> Forecast:
        """Forecast the weather for a city."""
        return Forecast(city=city, celsius=21.5 + days, conditions="sunny")

    @server.tool()
    def add(a: float, b: float) -> Sum:
        """Add two numbers."""
        return {"total": a + b}

    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool(structured_output=False)
    def raw_json(key: str, value: int) -> str:
        """Return a JSON object as plain text (no structured content)."""
        return f'{{"{key}": {value}}}'

    @server.tool()
    def media() -> list[ContentBlock]:
        """Return one content block of every non-text kind."""
        resource = TextResourceContents(uri="memo://one", mime_type="text/plain", text="memo")
        return [
            TextContent(type="text", text="see attachments"),
            ImageContent(type="image", data=PNG_1PX, mime_type="image/png"),
            AudioContent(type="audio", data=PNG_1PX, mime_type="audio/wav"),
            ResourceLink(type="resource_link", uri="file:///tmp/report.txt", name="report"),
            EmbeddedResource(type="resource", resource=resource),
        ]


def _register_behaviour_tools(server: PagedServer) -> None:
    @server.tool()
    def fail(message: str = "it failed") -> str:
        """Always fail with a tool error."""
        raise ToolError(message)

    @server.tool()
    async def sleep(seconds: float, marker: str = "") -> float:
        """Sleep, then return the seconds slept (first creating the file ``marker``, if given)."""
        if marker:
            Path(marker).touch()
        await asyncio.sleep(seconds)
        return seconds

    @server.tool()
    def pid() -> int:
        """The server's process id."""
        return os.getpid()

    @server.tool()
    def request_header(name: str, ctx: Context) -> str:
        """The value of an HTTP request header (empty over stdio)."""
        headers = ctx.headers or {}
        return next((v for k, v in headers.items() if k.lower() == name.lower()), "")


def _register_list_tools(server: PagedServer) -> None:
    @server.tool()
    async def add_tool(name: str, ctx: Context) -> str:
        """Register a new tool ``name`` (it returns its own name) and notify the client."""

        def dynamic() -> str:
            return name

        server.add_tool(dynamic, name=name, description=f"Added at run time: {name}.")
        await _notify_changed(ctx)
        return name

    @server.tool()
    async def remove_tool(name: str, ctx: Context) -> str:
        """Remove the tool ``name`` and notify the client."""
        server.remove_tool(name)
        await _notify_changed(ctx)
        return name


async def _notify_changed(ctx: Context) -> None:
    # 2026-era clients hear it on their subscriptions/listen stream, earlier ones as a bare
    # notification.
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        await ctx.notify_tools_changed()
    else:
        await ctx.session.send_tool_list_changed()


def main() -> None:
    """Parse the command line and serve."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", default="stdio", choices=("stdio", "sse", "streamable-http"))
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--page-size", type=int, default=4)
    parser.add_argument("--bad-cursor", action="store_true")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every answer")
    parser.add_argument("--data-only", action="store_true", help="only the data tools")
    parser.add_argument("--path", default=None, help="endpoint path (default: /sse or /mcp)")
    args = parser.parse_args()
    server = build_server(args.page_size, args.bad_cursor, args.latency, args.data_only)
    if args.transport == "stdio":
        server.run("stdio")
    elif args.transport == "sse":
        server.run("sse", host="127.0.0.1", port=args.port, sse_path=args.path or "/sse")
    else:
        path = args.path or "/mcp"
        server.run("streamable-http", host="127.0.0.1", port=args.port, streamable_http_path=path)


if __name__ == "__main__":
    main()
