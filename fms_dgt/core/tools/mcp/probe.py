"""Which transport a URL speaks: streamable HTTP or the older HTTP+SSE.

This is the procedure the MCP specification gives clients that support both (transports,
"Backwards Compatibility"): POST an ``InitializeRequest`` to the URL; if the server answers it
the streamable-HTTP way, use streamable HTTP; otherwise GET the URL with
``Accept: text/event-stream``, and if that opens an SSE stream whose first event is ``endpoint``,
use SSE. Anything else is reported with what each request got back.

Two refinements, both on the safe side: a 4xx answer that is itself a JSON-RPC error counts as
streamable HTTP (the server speaks it and refused this particular initialize, e.g. a 2026-only
server); and the SSE request is also tried after a non-4xx failure (a 5xx, or a 2xx that is not an
MCP answer), since a GET changes nothing on a server. Redirects are followed only within the URL's
origin, as the SDK's transports do, so headers never travel to another host. A server that
cannot be reached at all fails at once, without the second request.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Final

from fms_dgt.core.tools.mcp.errors import MCPClientError
from fms_dgt.core.tools.mcp.spec import AUTO, MCPServerSpec
from fms_dgt.core.tools.mcp.transports import describe_exc, http_client, interpolated_headers

if TYPE_CHECKING:
    import httpx2

__all__ = ["TransportProbe"]

_POST_STEP: Final = "POST initialize (streamable HTTP)"
_GET_STEP: Final = "GET with Accept: text/event-stream (SSE)"
_MAX_REDIRECTS: Final = 5
_MAX_BODY: Final = 64 * 1024
_MCP_CONTENT_TYPES: Final = ("application/json", "text/event-stream")


class TransportProbe:
    """Finds out whether ``spec.url`` speaks streamable HTTP or SSE.

    Attributes:
        spec: the server (its ``url``, ``headers`` and ``connect_timeout`` are used).
        tried: one line per request sent so far and what it got back (for messages, also when
            the caller's deadline interrupts the probe).
    """

    def __init__(self, spec: MCPServerSpec) -> None:
        self.spec = spec
        self.tried: list[str] = []

    @property
    def url(self) -> str:
        """The URL probed."""
        return self.spec.url or ""

    def summary(self) -> str:
        """What was tried and answered, ``; ``-separated."""
        return "; ".join(self.tried) or "nothing yet"

    async def run(self) -> str:
        """``streamable_http`` or ``sse``.

        Raises:
            MCPClientError: the URL cannot be reached, or it speaks neither transport (the
                message names the URL and what each request got back).
        """
        import httpx2

        timeout = httpx2.Timeout(self.spec.connect_timeout)
        async with http_client(headers=interpolated_headers(self.spec), timeout=timeout) as http:
            if await self._streamable(http):
                return "streamable_http"
            if await self._sse(http):
                return "sse"
        raise self._failure(
            f"{self.url} speaks neither MCP transport: {self.summary()}",
            "Check that the URL is the server's MCP endpoint (often .../mcp, or .../sse for SSE)",
        )

    # ------------------------------------------------------------------ streamable HTTP

    async def _streamable(self, http: httpx2.AsyncClient) -> bool:
        import httpx2

        self.tried.append(f"{_POST_STEP}: no answer yet")
        try:
            async with _within_origin(http, "POST", self.url, **_initialize_request()) as response:
                speaks, answer = await _judge_post(response)
                session = response.headers.get("mcp-session-id")
        except httpx2.HTTPError as exc:
            self.tried[-1] = f"{_POST_STEP}: {describe_exc(exc)}"
            raise self._failure(
                f"cannot reach {self.url}: {describe_exc(exc)} (tried {_POST_STEP}; nothing answered, so "
                "SSE was not tried)",
                "Check the host and port, and that the server is running",
            ) from exc
        self.tried[-1] = f"{_POST_STEP} answered {answer}"
        if speaks and session:
            await self._end_session(http, session)
        return speaks

    async def _end_session(self, http: httpx2.AsyncClient, session: str) -> None:
        # The probe's initialize opened a session the real client will not use: say it is over,
        # so a stateful server does not keep it until it expires. Best effort.
        with contextlib.suppress(Exception):
            async with _within_origin(http, "DELETE", self.url, headers={"mcp-session-id": session}):
                pass

    # ------------------------------------------------------------------ SSE

    async def _sse(self, http: httpx2.AsyncClient) -> bool:
        import httpx2

        self.tried.append(f"{_GET_STEP}: no answer yet")
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-store"}
        try:
            async with _within_origin(http, "GET", self.url, headers=headers) as response:
                speaks, answer = await _judge_get(response)
        except httpx2.HTTPError as exc:
            speaks, answer = False, describe_exc(exc)
        self.tried[-1] = f"{_GET_STEP} answered {answer}"
        return speaks

    def _failure(self, reason: str, hint: str) -> MCPClientError:
        return MCPClientError(self.spec.name, AUTO, "connect", reason, f"{hint}.")


def _initialize_request() -> dict[str, Any]:
    from mcp_types.version import LATEST_HANDSHAKE_VERSION

    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": LATEST_HANDSHAKE_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "fms_dgt-transport-probe", "version": "1"},
        },
    }
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    return {"content": json.dumps(body).encode(), "headers": headers}


async def _judge_post(response: httpx2.Response) -> tuple[bool, str]:
    """Whether a POST initialize was answered the streamable-HTTP way, and how it was answered."""
    kind = _content_type(response)
    status = _status(response)
    if response.is_success:
        if kind in _MCP_CONTENT_TYPES:
            return True, f"{status} ({kind})"
        return False, f"{status} with content type {kind or 'none'}, not an MCP answer"
    if 400 <= response.status_code < 500 and kind == "application/json" and await _is_jsonrpc(response):
        return True, f"{status} with a JSON-RPC error (the server speaks streamable HTTP)"
    return False, status


async def _judge_get(response: httpx2.Response) -> tuple[bool, str]:
    """Whether a GET opened an SSE stream whose first event is ``endpoint``, and what it got."""
    import httpx2

    kind = _content_type(response)
    if not response.is_success or kind != "text/event-stream":
        return False, f"{_status(response)}" + (f" with content type {kind}" if response.is_success else "")
    async for event in httpx2.EventSource(response, max_event_size=_MAX_BODY):
        if event.event == "endpoint":
            return True, "an event stream whose first event is 'endpoint'"
        return False, f"an event stream whose first event is {event.event!r}, not 'endpoint'"
    return False, "an event stream that ended before its first event"


async def _is_jsonrpc(response: httpx2.Response) -> bool:
    body = b""
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > _MAX_BODY:
            return False
    try:
        message = json.loads(body)
    except ValueError:
        return False
    return isinstance(message, dict) and message.get("jsonrpc") == "2.0" and "error" in message


def _content_type(response: httpx2.Response) -> str:
    return response.headers.get("content-type", "").partition(";")[0].strip().lower()


def _status(response: httpx2.Response) -> str:
    text = f"{response.status_code} {response.reason_phrase}".strip()
    if response.is_redirect:
        # Only redirects that leave the origin, change the method or loop are left unfollowed.
        text += f" to {response.headers.get('location', '?')} (not followed)"
    return text


@contextlib.asynccontextmanager
async def _within_origin(
    http: httpx2.AsyncClient, method: str, url: str, **kwargs: Any
) -> AsyncIterator[httpx2.Response]:
    """Send a request, following redirects that keep the method and stay on the URL's origin."""
    request = http.build_request(method, url, **kwargs)
    response = await http.send(request, stream=True, follow_redirects=False)
    for _ in range(_MAX_REDIRECTS):
        following = response.next_request
        if following is None or following.method != method or not _same_origin(request, following):
            break
        await response.aclose()
        request = following
        response = await http.send(request, stream=True, follow_redirects=False)
    try:
        yield response
    finally:
        await response.aclose()


def _same_origin(sent: httpx2.Request, following: httpx2.Request) -> bool:
    return (sent.url.scheme, sent.url.host, sent.url.port) == (
        following.url.scheme,
        following.url.host,
        following.url.port,
    )
