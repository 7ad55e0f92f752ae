"""The SDK's transports, opened for a :class:`~fms_dgt.core.tools.mcp.spec.MCPServerSpec`, and the
classification of their failures (connection gone, request never ran).

Every function imports the SDK (``mcp``, ``anyio``, ``httpx2``) when called, never at import time.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Sequence
from typing import Any, Final

from fms_dgt.core.tools.mcp.guard import MessageGuard, summarise_validation
from fms_dgt.core.tools.mcp.redaction import register_resolved
from fms_dgt.core.tools.mcp.spec import MCPServerSpec
from fms_dgt.core.tools.mcp.stdio import stdio_streams
from fms_dgt.secrets import redact

__all__ = [
    "MAX_REASON_CHARS",
    "SYNC_GRACE",
    "describe_exc",
    "http_client",
    "innermost",
    "interpolated_headers",
    "is_connection_lost",
    "never_ran",
    "open_transport",
    "sdk_error_code",
]

_SESSION_GONE: Final = ("session not found", "session terminated")
#: Longest description of a failure put into an error message.
MAX_REASON_CHARS: Final = 2000
#: Margin the sync side waits beyond an operation's own timeout, so the loop-side timeout (which
#: cancels the request cleanly) normally fires first.
SYNC_GRACE: Final = 5.0


def sdk_error_code(exc: BaseException) -> int | None:
    """The JSON-RPC error code an SDK ``MCPError`` carries, else None."""
    code = getattr(getattr(exc, "error", None), "code", None)
    return code if isinstance(code, int) else None


def innermost(exc: BaseException) -> BaseException:
    """The first real exception inside (possibly nested) exception groups."""
    while isinstance(getattr(exc, "exceptions", None), Sequence) and exc.exceptions:  # type: ignore[attr-defined]
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    return exc


def is_connection_lost(exc: BaseException) -> bool:
    """True when ``exc`` means the transport is gone (as opposed to an error answer)."""
    import anyio
    import httpx2
    from mcp_types import CONNECTION_CLOSED

    leaf = innermost(exc)
    if sdk_error_code(leaf) == CONNECTION_CLOSED:
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


def never_ran(exc: BaseException) -> bool:
    """True when a failed request certainly did not run on the server."""
    import httpx2

    leaf = innermost(exc)
    return isinstance(leaf, httpx2.ConnectError) or any(text in str(leaf).lower() for text in _SESSION_GONE)


def describe_exc(exc: BaseException) -> str:
    """``Type: message`` of the innermost exception, for error messages and logs (secrets hidden,
    at most :data:`MAX_REASON_CHARS` characters: a server's error text may be megabytes long).

    A pydantic validation error (a result that does not fit the protocol) reads as one line
    naming the fields, without the offending input.
    """
    from pydantic import ValidationError

    leaf = innermost(exc)
    if isinstance(leaf, ValidationError):
        return redact(f"the answer does not follow the MCP protocol: {summarise_validation(leaf)}")
    if isinstance(leaf, ValueError) and "serialization depth" in str(leaf):
        return "the answer is nested too deeply for the MCP SDK to read"
    text = str(leaf).strip() or type(leaf).__name__
    text = redact(text if type(leaf).__name__ in text else f"{type(leaf).__name__}: {text}")
    return (
        text if len(text) <= MAX_REASON_CHARS else f"{text[:MAX_REASON_CHARS]}... ({len(text):,} characters)"
    )


def interpolated_headers(spec: MCPServerSpec) -> dict[str, str]:
    """``spec.headers`` with ``${VAR}`` resolved from the environment now (so tokens stay out of files).

    What a variable held is registered as a secret (:func:`fms_dgt.secrets.register_secret`).

    Raises:
        ConfigError: a variable is not set.
    """
    from fms_dgt.config import interpolate

    headers = {str(k): str(v) for k, v in (spec.headers or {}).items()}
    resolved = dict(interpolate(headers, yaml_path=f"mcp server {spec.name}.headers"))
    for key, template in headers.items():
        register_resolved(template, str(resolved[key]))
    return resolved


@contextlib.asynccontextmanager
async def open_transport(
    spec: MCPServerSpec, transport: str, guard: MessageGuard
) -> AsyncIterator[tuple[Any, Any]]:
    """The ``transport`` (``stdio``, ``sse`` or ``streamable_http``) to ``spec``'s server, its
    streams seen through ``guard`` (:mod:`~fms_dgt.core.tools.mcp.guard`)."""
    async with _streams(spec, transport, guard) as (read_stream, write_stream):
        yield guard.wrap(read_stream, write_stream)


@contextlib.asynccontextmanager
async def _streams(
    spec: MCPServerSpec, transport: str, guard: MessageGuard
) -> AsyncIterator[tuple[Any, Any]]:
    if transport == "stdio":
        async with stdio_streams(spec, guard) as streams:
            yield streams
    elif transport == "sse":
        from mcp.client.sse import sse_client

        headers = interpolated_headers(spec)
        sse = sse_client(spec.url or "", headers, spec.connect_timeout, httpx_client_factory=http_client)
        async with sse as streams:
            yield streams
    else:
        async with _streamable_http_streams(spec) as streams:
            yield streams


@contextlib.asynccontextmanager
async def _streamable_http_streams(spec: MCPServerSpec) -> AsyncIterator[tuple[Any, Any]]:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    read_timeout = max(spec.call_timeout, spec.list_timeout) + SYNC_GRACE
    timeout = httpx2.Timeout(spec.connect_timeout, read=read_timeout)
    # The transport leaves a client it was given open, so this context owns it.
    client = http_client(headers=interpolated_headers(spec), timeout=timeout)
    async with client, streamable_http_client(spec.url or "", http_client=client) as streams:
        yield streams


def http_client(
    headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None
) -> Any:  # an httpx2.AsyncClient (the SDK's ``McpHttpClientFactory`` signature)
    """An ``httpx2.AsyncClient`` sharing one SSL context with every other MCP HTTP client."""
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
