"""How to reach an MCP server (:class:`MCPServerSpec`), the transport names, and :class:`ToolPage`.

A spec's ``transport`` may be left out: a ``command`` means ``stdio``; a URL whose path ends in
``/sse`` means ``sse``; any other URL means ``auto`` - streamable HTTP, falling back to SSE when
the server answers the SSE way (the client finds out on its first connect, see
:mod:`fms_dgt.core.tools.mcp.probe`). A server's name may be left to :func:`default_server_name`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from fms_dgt.core.tools.mcp.redaction import register_spec_secrets
from fms_dgt.errors import ConfigError
from fms_dgt.secrets import redact

__all__ = [
    "AUTO",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "TRANSPORTS",
    "MCPServerSpec",
    "RejectedTool",
    "ToolPage",
    "default_server_name",
    "normalised_url",
]

#: Transport names a session can use, and the aliases folded into them.
TRANSPORTS: Final = ("stdio", "sse", "streamable_http")
#: The transport of a URL that is not known yet: streamable HTTP, else SSE (decided at connect).
AUTO: Final = "auto"
_TRANSPORT_ALIASES: Final = {"streamable-http": "streamable_http", "http": "streamable_http"}
_PROTOCOL_MODES: Final = ("auto", "legacy")
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}
#: Largest JSON-RPC message read from a stdio server (a guard on memory, not on results: the
#: ``mcp`` engine's ``max_result_bytes`` is the limit on what goes into records).
DEFAULT_MAX_MESSAGE_BYTES: Final = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class MCPServerSpec:
    """How to reach one MCP server.

    Attributes:
        name: the server's name: key of the connection registry, default namespace of its tools.
        transport: ``stdio``, ``sse``, ``streamable_http`` (``http`` is an alias) or ``auto``.
            Empty (the default) infers it: ``stdio`` for a ``command``, ``sse`` for a URL whose
            path ends in ``/sse``, ``auto`` for any other URL.
        command: executable to start (stdio). ``python`` means the running interpreter.
        args: command-line arguments (stdio).
        env: extra environment variables for the server process (stdio).
        cwd: working directory of the server process (stdio).
        url: endpoint URL (``sse``: the SSE stream, e.g. ``.../sse``; ``streamable_http``: ``.../mcp``).
        headers: HTTP headers (sse, streamable_http); values may use ``${VAR}``, resolved at connect.
        connect_timeout: seconds to start/reach the server and finish the handshake (for ``auto``,
            finding the transport included).
        list_timeout: seconds for one ``tools/list`` page.
        call_timeout: seconds for one ``tools/call``.
        reconnect_attempts: how many times a dropped connection is reopened before giving up.
        reconnect_backoff: first delay between reconnect attempts, doubled after each.
        protocol: ``auto`` (negotiate the newest protocol) or ``legacy`` (initialize handshake only).
        max_message_bytes: largest message read from a stdio server; a longer one is dropped and
            fails the request it answers.
        reset_tool: a tool of the server that clears its state, called between records under
            ``isolation: per_record`` (it is not offered as a tool).

    Secrets in ``args``, ``env``, ``headers`` and ``url`` (see
    :mod:`~fms_dgt.core.tools.mcp.redaction`) are registered with :mod:`fms_dgt.secrets` when the
    spec is made, and :meth:`describe` and ``repr`` show them as ``***``.
    """

    name: str
    transport: str = ""
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
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    reset_tool: str | None = None

    def __post_init__(self) -> None:
        who = f"MCP server {self.name!r}"
        if not self.transport and not self.command and not self.url:
            raise ConfigError(
                f"missing command or url for {who}: nothing says how to reach it. Set `command:` to "
                "start it over stdio, or `url:` to reach it over HTTP"
            )
        transport = self.transport or self._inferred_transport()
        object.__setattr__(self, "transport", _TRANSPORT_ALIASES.get(transport, transport))
        object.__setattr__(self, "args", tuple(str(a) for a in self.args))
        self._check(who)
        register_spec_secrets(self.args, self.env, self.headers, self.url)

    def __repr__(self) -> str:
        # The generated repr would print env and header values; names are enough to debug with.
        env = sorted(self.env or {})
        headers = sorted(self.headers or {})
        return f"MCPServerSpec({self.describe()}, env={env}, headers={headers})"

    def _inferred_transport(self) -> str:
        if self.command or not isinstance(self.url, str):
            return "stdio"
        return "sse" if urlsplit(self.url).path.rstrip("/").endswith("/sse") else AUTO

    def _check(self, who: str) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ConfigError("invalid MCP server name: it must be a non-empty string. Set `server:`")
        if self.transport not in (*TRANSPORTS, AUTO):
            raise ConfigError(
                f"invalid transport {self.transport!r} for {who}: it is not one of "
                f"{', '.join((*TRANSPORTS, AUTO))}. Set `transport:` to one of them, or leave it out"
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
        self._check_url(who)
        if self.command or self.args or self.env or self.cwd:
            raise ConfigError(
                f"invalid keys for {who}: `command`, `args`, `env` and `cwd` apply to stdio only. "
                "Remove them or set `transport: stdio`"
            )

    def _check_url(self, who: str) -> None:
        if not isinstance(self.url, str) or "://" not in self.url:
            raise ConfigError(
                f"missing url for {who}: the {self.transport} transport needs an http(s) URL. Set `url:`"
            )
        if urlsplit(self.url).scheme.lower() not in _DEFAULT_PORTS or not _hostname(self.url):
            raise ConfigError(
                f"invalid url {self.url!r} for {who}: expected http://host[:port]/path or https://... "
                "Fix `url:`"
            )
        _port(self.url)

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
        if not isinstance(self.max_message_bytes, int) or self.max_message_bytes < 1024:
            raise ConfigError(
                f"invalid max_message_bytes {self.max_message_bytes!r} for {who}: expected an "
                "integer >= 1024. Fix `max_message_bytes:`"
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

    def describe(self, transport: str | None = None) -> str:
        """``name (stdio: cmd args)`` or ``name (sse: url)`` for messages, secrets shown as ``***``.

        Args:
            transport: the transport a client found for an ``auto`` spec, shown as
                ``name (auto -> sse: url)``.
        """
        target = " ".join((self.command or "", *self.args)) if self.transport == "stdio" else self.url
        found = f" -> {transport}" if transport and transport != self.transport else ""
        return redact(f"{self.name} ({self.transport}{found}: {target})")


@dataclass(slots=True, frozen=True, kw_only=True)
class RejectedTool:
    """A tool of a ``tools/list`` page that was taken out before the SDK read the page.

    Attributes:
        index: its position in the page.
        name: its name, when it has a string one.
        reason: why it was taken out.
    """

    index: int
    name: str | None
    reason: str


@dataclass(slots=True, frozen=True)
class ToolPage:
    """One page of ``tools/list``.

    Attributes:
        tools: the tools in MCP wire format (``name``, ``inputSchema``, ``outputSchema``, ``_meta``...).
        next_cursor: the cursor of the next page, or None on the last page.
        positions: each tool's position in the page as the server sent it (empty: ``0..n-1``).
        rejected: the tools of the page that were taken out, and why.
        listed: how many tools the server's page held (None: ``len(tools) + len(rejected)``).
    """

    tools: list[dict[str, Any]]
    next_cursor: str | None
    positions: tuple[int, ...] = ()
    rejected: tuple[RejectedTool, ...] = ()
    listed: int | None = None

    @property
    def size(self) -> int:
        """How many tools the server's page held, rejected ones included."""
        return self.listed if self.listed is not None else len(self.tools) + len(self.rejected)

    def position(self, i: int) -> int:
        """The position in the server's page of ``tools[i]``."""
        return self.positions[i] if i < len(self.positions) else i


def default_server_name(*, server: object = None, namespace: object = None, url: object = None) -> str:
    """The name of a server the config did not name: ``server``, else ``namespace``, else host:port.

    The host:port name (``localhost:8080``; the scheme's port when the URL has none) never holds
    ``::`` (an IPv6 host's colons become ``_``), so it is also a valid namespace.

    Raises:
        ConfigError: none of the three gives a name (a stdio server without ``server:``), or the
            URL is not an http(s) URL with a host.
    """
    for key, given in (("server", server), ("namespace", namespace)):
        if isinstance(given, str) and given:
            return given
        if given is not None and given != "":
            raise ConfigError(f"invalid {key} {given!r} for an MCP server: expected a string. Fix `{key}:`")
    if url is not None and url != "":
        return _host_port_name(url)
    raise ConfigError(
        "missing server name for an MCP server without a URL: a stdio server has no host to name it "
        "after. Set `server:` (or `namespace:`)"
    )


def _host_port_name(url: object) -> str:
    host = _hostname(url) if isinstance(url, str) else ""
    if not host or urlsplit(str(url)).scheme.lower() not in _DEFAULT_PORTS:
        raise ConfigError(
            f"invalid url {url!r} for an MCP server: expected http://host[:port]/path or https://... "
            "Fix `url:` (or set `server:` to name the server)"
        )
    return f"{host.replace(':', '_')}:{_port(str(url))}"


def normalised_url(url: str) -> str:
    """``url`` in the form two spellings of one endpoint share (case, default port, trailing ``/``)."""
    parts = urlsplit(url)
    host = _hostname(url)
    if ":" in host:
        host = f"[{host}]"
    path = parts.path.rstrip("/")
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme.lower()}://{host}:{_port(url)}{path}{query}"


def _hostname(url: str) -> str:
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def _port(url: str) -> int:
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError as exc:
        raise ConfigError(f"invalid url {url!r}: its port is not a number 0-65535. Fix `url:`") from exc
    return port if port is not None else _DEFAULT_PORTS.get(parts.scheme.lower(), 80)
