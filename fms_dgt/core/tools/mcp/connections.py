"""The process-global connection registry: one shared :class:`MCPClient` per server name.

A loader and an engine naming the same server share one session through it:
:func:`open_connection` gets or creates the client and takes a reference; the client's last
:meth:`~MCPClient.release` closes it and removes it from here. :func:`get_connection` and
:func:`connection_for_url` are look-ups (no I/O). At interpreter exit every client still connected
is closed, so stdio servers shut down cleanly, and every process group a stdio server left behind
is ended (:func:`~fms_dgt.core.tools.mcp.stdio.end_all_groups`).
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Mapping

from fms_dgt.core.tools.mcp.client import MCPClient, live_clients
from fms_dgt.core.tools.mcp.spec import MCPServerSpec, normalised_url
from fms_dgt.core.tools.mcp.stdio import end_all_groups
from fms_dgt.errors import ConfigError, DGTError

__all__ = [
    "clear_connections",
    "connection_for_url",
    "get_connection",
    "open_connection",
    "register_connection",
    "unregister_connection",
]

log = logging.getLogger(__name__)

_CONNECTIONS: dict[str, MCPClient] = {}
_CONNECTIONS_LOCK = threading.RLock()


def register_connection(name: str, client: MCPClient, *, replace: bool = False) -> None:
    """Make ``client`` the shared connection for server ``name``.

    Raises:
        DGTError: ``client`` is not an :class:`MCPClient`, ``name`` is not a non-empty string, or
            another client is registered under ``name`` and ``replace`` is False.
    """
    _check_entry(name, client)
    with _CONNECTIONS_LOCK:
        existing = _CONNECTIONS.get(name)
        if existing is not None and existing is not client and not replace:
            raise DGTError(
                f"duplicate MCP connection {name!r}: another client is registered under that name. "
                "Unregister it first, pass replace=True, or use a different server name"
            )
        _CONNECTIONS[name] = client
    client.add_retire_hook(_forget)


def get_connection(name: str) -> MCPClient | None:
    """The client registered for server ``name``, or None (never does I/O)."""
    with _CONNECTIONS_LOCK:
        return _CONNECTIONS.get(name)


def connection_for_url(url: str, headers: Mapping[str, str] | None = None) -> MCPClient | None:
    """A registered client for the endpoint ``url`` (spelt any equivalent way), or None (no I/O).

    Args:
        url: the endpoint.
        headers: when given, only a client sending exactly these headers matches (a session
            opened with other credentials is not shared).
    """
    wanted = normalised_url(url)
    with _CONNECTIONS_LOCK:
        clients = list(_CONNECTIONS.values())
    for client in clients:
        spec = client.spec
        if spec.url is None or normalised_url(spec.url) != wanted:
            continue
        if headers is None or dict(spec.headers or {}) == dict(headers):
            return client
    return None


def unregister_connection(name: str, client: MCPClient | None = None) -> None:
    """Forget server ``name`` (only if it maps to ``client``, when given). Does not close it."""
    with _CONNECTIONS_LOCK:
        if client is None or _CONNECTIONS.get(name) is client:
            _CONNECTIONS.pop(name, None)


def clear_connections() -> None:
    """Forget every registered connection and close each one (for tests and shutdown).

    Every client is closed even when another one fails to; the registry is empty afterwards.

    Raises:
        DGTError: some clients failed to close; the message names each with its reason (raised
            after all were tried).
    """
    with _CONNECTIONS_LOCK:
        entries = list(_CONNECTIONS.items())
        _CONNECTIONS.clear()
    failures: list[tuple[str, Exception]] = []
    for name, client in entries:
        try:
            client.close()
        except Exception as exc:
            failures.append((name, exc))
    if failures:
        listed = "; ".join(f"{name!r}: {exc}" for name, exc in failures)
        raise DGTError(
            f"closing MCP connections failed for {len(failures)} of {len(entries)} servers: {listed}. "
            "They are no longer registered; a stdio server still running exits with this process"
        ) from failures[0][1]


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
            register_connection(spec.name, client)
        elif client.spec.endpoint() != spec.endpoint():
            raise ConfigError(
                f"conflicting MCP server {spec.name!r}: it is already connected as "
                f"{client.spec.describe()}, not {spec.describe()}. Give each server its own `server:` name"
            )
        return client.acquire()


def _check_entry(name: object, client: object) -> None:
    if not isinstance(name, str) or not name:
        raise DGTError(
            f"invalid MCP connection name {name!r}: expected a non-empty string. Use the server's name"
        )
    if not isinstance(client, MCPClient):
        raise DGTError(
            f"invalid MCP connection {name!r}: expected an MCPClient, got {type(client).__name__}. "
            "Register MCPClient(MCPServerSpec(...)), or use open_connection(spec)"
        )


def _forget(client: MCPClient) -> None:
    """Retire hook: the client's last user let go, so no name maps to it any more."""
    with _CONNECTIONS_LOCK:
        for name in [n for n, c in _CONNECTIONS.items() if c is client]:
            del _CONNECTIONS[name]


@atexit.register
def _close_all_at_exit() -> None:
    # Stdio servers would exit on EOF anyway; closing them here lets them shut down cleanly and
    # keeps their exit out of the interpreter's own teardown. Whatever is left of their process
    # groups (children of a server whose session had already died) is ended after.
    for client in live_clients():
        if client.connected:
            try:
                client.close()
            except Exception as exc:
                log.warning("closing MCP server %s at exit failed: %s", client.spec.name, exc)
    end_all_groups()
