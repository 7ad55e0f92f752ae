"""The ``rest`` engine: executes tools loaded by the ``rest`` loader as real HTTP requests.

Each call's request is rebuilt from the tool's :class:`~fms_dgt.core.tools.openapi.Route`
(``metadata["route"]``, written by :mod:`fms_dgt.core.tools.loaders.rest`) by
:mod:`fms_dgt.core.tools.openapi.request`: path values are percent-encoded so they can never
change the path, query, header and cookie parameters follow their ``style``/``explode`` rules, and
bodies are sent as JSON, form-urlencoded or multipart.

Credentials come from the ``auth:`` config, keyed by the spec's security scheme names (see
:mod:`fms_dgt.core.tools.openapi.auth`)::

    engines:
      petstore:
        type: rest
        base_url: http://127.0.0.1:8765/v1
        auth:
          bearerAuth: {token: ${PETSTORE_TOKEN}}
          api_key: {value: ${PETSTORE_KEY}}
          basicAuth: {username: demo, password: ${PETSTORE_PASSWORD}}
          extra: {type: apiKey, in: header, name: X-Tenant, value: acme}   # applied to every call

Secrets never appear in logs, errors, results or metadata: every configured secret is registered
with :mod:`fms_dgt.secrets` and replaced by ``***`` wherever it would be shown. Requests go out
through one pooled :class:`~fms_dgt.core.tools.transport.Sender`: each URL is checked
against the declared base (the engine's ``base_url`` or the spec's server) before it is sent,
redirects are followed only within that base, and response bodies are capped
(``max_response_bytes``, counted decompressed).

This module is the plug-in: its configuration, sending, and turning responses into results.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from fms_dgt.core.tools.backoff import retry_after_seconds
from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.engines.base import CallPolicy, RetryableError, ToolEngine
from fms_dgt.core.tools.engines.runner import error_info, typed_failure
from fms_dgt.core.tools.openapi.auth import Credentials, is_sensitive_header
from fms_dgt.core.tools.openapi.request import (
    Request,
    RESTCallError,
    body_content,
    build_request,
    resolve_base_url,
)
from fms_dgt.core.tools.openapi.route import Route, RouteError, route_of
from fms_dgt.core.tools.transport import (
    DEFAULT_MAX_RESPONSE_BYTES,
    Reply,
    Sender,
    byte_cap,
    has_control_character,
    parse_base,
)
from fms_dgt.errors import ConfigError, DGTError, HTTPTransportError
from fms_dgt.plugins import register_tool_engine
from fms_dgt.secrets import install_log_filter, redact, redact_value, register_secret

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = ["RESTCallError", "RESTToolEngine", "call_failure", "checked_headers"]

IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE", "QUERY"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "QUERY"})
_HEADERS_OF_INTEREST = ("content-type", "location", "etag", "retry-after", "x-request-id", "link")
_EXCERPT = 500
DEFAULT_TIMEOUT = 30.0
#: Checked routes kept per engine. Reading a route back from metadata costs tens of microseconds,
#: a noticeable share of a loopback call; a tool that changes in a refresh is a new cache key.
_ROUTE_CACHE = 4096


def checked_headers(headers: Mapping[str, str] | None, engine: str) -> dict[str, str]:
    """An engine's extra headers, checked; the values of sensitive ones are registered as secrets.

    Raises:
        ConfigError: a value holds a control character (the header is named, the value is not).
    """
    out = {str(k): str(v) for k, v in (headers or {}).items()}
    for name, value in out.items():
        if has_control_character(value):
            raise ConfigError(
                f"invalid header {name!r} for the {engine} engine: its value holds a control "
                "character (a trailing newline from a file?). Strip it where the value is set"
            )
        if is_sensitive_header(name):
            register_secret(value)
            install_log_filter()
    return out


def call_failure(call: ToolCall, exc: DGTError, **metadata: Any) -> ToolResult:
    """A failed call as data: the redacted message and a typed ``metadata["error"]``
    (:func:`~fms_dgt.core.tools.engines.runner.typed_failure`)."""
    info = typed_failure(exc)
    return ToolResult(call.call_id, call.name, error=redact(str(exc)), metadata={**metadata, "error": info})


@register_tool_engine("rest")
class RESTToolEngine(ToolEngine):
    """Execute ``rest`` tools as HTTP requests.

    Retries, timeouts and output validation follow the engine's call policy (the ``timeout``,
    ``retries``, ``backoff`` and ``validate_results`` keys every engine accepts): a connection
    error, 429 or 5xx raises :class:`~fms_dgt.core.tools.engines.base.RetryableError` for methods
    in ``retry_methods``, so the policy retries it with exponential backoff; the policy's
    ``timeout`` is also the HTTP timeout of a whole exchange (30 s when unset).

    Args:
        registry: the tools this engine can execute.
        base_url: server URL used instead of each tool's route ``base_url``.
        auth: credentials per security scheme name (see the module docstring).
        headers: extra headers sent with every request.
        retry_methods: methods whose failures are retried; default the idempotent ones (GET, HEAD,
            OPTIONS, PUT, DELETE, TRACE, QUERY).
        follow_redirects: follow 3xx responses that stay within the request's base URL (a
            redirect anywhere else fails the call).
        verify: verify TLS certificates.
        max_response_bytes: largest response body read, counted decompressed (default 10 MB).
        max_workers: parallel calls within one ``execute`` batch.
        policy: call policy (see :class:`~fms_dgt.core.tools.engines.base.CallPolicy`).

    Raises:
        ConfigError: an invalid ``auth`` entry, ``base_url`` or header value.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        base_url: str | None = None,
        auth: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        retry_methods: Sequence[str] | None = None,
        follow_redirects: bool = True,
        verify: bool = True,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        max_workers: int = 8,
        policy: CallPolicy | None = None,
    ) -> None:
        super().__init__(registry, max_workers=max_workers, policy=policy)
        self.base_url = _config_base(base_url)
        self._credentials = Credentials(auth)
        self._credentials.register()
        self.headers = checked_headers(headers, "rest")
        self.retry_methods = frozenset(m.upper() for m in retry_methods or IDEMPOTENT_METHODS)
        self.follow_redirects = follow_redirects
        self.verify = verify
        self.max_response_bytes = byte_cap(max_response_bytes, "rest")
        self._sender = Sender(
            timeout=self.policy.timeout or DEFAULT_TIMEOUT,
            headers=self.headers,
            follow_redirects=follow_redirects,
            verify=verify,
            max_retry_after=self.policy.max_retry_after,
            backoff=self.policy.backoff,
        )
        self._route = functools.lru_cache(maxsize=_ROUTE_CACHE)(route_of)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r}, auth={sorted(self._credentials)})"

    # ------------------------------------------------------------------ calls

    def call(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> ToolResult:
        """Send the request for one call and turn the response into a :class:`ToolResult`."""
        try:
            route = self._route(tool)
            request = self._build(tool, route, call.arguments)
            kwargs = body_content(request, route.body)
            return self._send(route, call, request, kwargs)
        except (RESTCallError, RouteError) as exc:
            return call_failure(call, exc)

    def simulate(self, session_id: str, calls: Sequence[ToolCall]) -> list[ToolResult]:
        """Like :meth:`execute`, but only safe methods (GET, HEAD, OPTIONS...) are sent.

        A server's state cannot be rolled back, so a call that could change it returns an error
        result instead of being sent; the session state is restored as for every engine.
        """
        named = [ToolCall(c.name, c.arguments, c.call_id or f"call_{i}") for i, c in enumerate(calls)]
        unsafe = {i for i, c in enumerate(named) if not self._is_safe(c)}
        sent = iter(super().simulate(session_id, [c for i, c in enumerate(named) if i not in unsafe]))
        return [self._refused(c) if i in unsafe else next(sent) for i, c in enumerate(named)]

    def _is_safe(self, call: ToolCall) -> bool:
        try:
            tool = self.registry.match(call)
            route = self._route(tool)
        except DGTError:
            return True  # execute() reports the lookup or route error as data
        return route.method in SAFE_METHODS

    def _refused(self, call: ToolCall) -> ToolResult:
        return ToolResult(
            call.call_id,
            call.name,
            error=f"not sent by simulate(): {call.name} uses a method that can change server state. "
            "Use execute() to send it.",
        )

    def _build(self, tool: Tool, route: Route, arguments: Mapping[str, Any]) -> Request:
        owner = tool.qualified_name
        base = resolve_base_url(route, self.base_url, owner)
        request = build_request(route, arguments, base, owner)
        self._credentials.authenticate(route, request)
        return request

    # ------------------------------------------------------------------ sending

    def _send(self, route: Route, call: ToolCall, request: Request, kwargs: dict[str, Any]) -> ToolResult:
        headers = dict(request.headers)
        if request.cookies:
            headers["Cookie"] = "; ".join(request.cookies)
        retryable = request.method in self.retry_methods
        try:
            reply = self._sender.send(
                request.method,
                request.full_url(),
                parse_base(request.url),
                headers=headers,
                body=kwargs,
                max_bytes=self.max_response_bytes,
            )
        except HTTPTransportError as exc:
            if retryable:
                raise RetryableError(str(exc)) from None
            raise
        if retryable and (reply.status == 429 or reply.status >= 500):
            raise RetryableError(
                self._status_error(route, request, reply),
                retry_after=retry_after_seconds(reply.headers.get("Retry-After")),
            )
        return self._result(route, call, request, reply)

    def _result(self, route: Route, call: ToolCall, request: Request, reply: Reply) -> ToolResult:
        metadata: dict[str, Any] = {
            "status": reply.status,
            "headers": {k: redact(v) for k in _HEADERS_OF_INTEREST if (v := reply.headers.get(k))},
            "method": request.method,
            "url": redact(f"{request.url}{request.path}"),
            "elapsed_ms": round(reply.elapsed_ms, 3),
        }
        value = redact_value(reply.value(f"the response of {request.method} {request.path}"))
        error = None
        if not 200 <= reply.status < 300:
            error = self._status_error(route, request, reply)
            metadata["error"] = error_info("execution", "execution", code=reply.status)
        return ToolResult(call.call_id, call.name, result=value, error=error, metadata=metadata)

    def _status_error(self, route: Route, request: Request, reply: Reply) -> str:
        excerpt = redact(reply.text)[:_EXCERPT]  # redacted first: a cut must not keep part of a secret
        hint = ""
        if reply.status in (401, 403) and not request.auth_applied:
            names = sorted(route.security_schemes) or ["<scheme>"]
            hint = f" No credentials were sent: configure auth for {', '.join(names)} on the rest engine."
        where = f"{request.method} {redact(request.path)}"
        return f"HTTP {reply.status} {reply.reason} from {where}: {excerpt}.{hint}"

    # ------------------------------------------------------------------ lifetime

    def close(self) -> None:
        """Close sessions and the pooled HTTP client. Idempotent."""
        super().close()
        self._sender.close()


def _config_base(base_url: str | None) -> str | None:
    if not base_url:
        return None
    try:
        return parse_base(base_url.rstrip("/")).url
    except RESTCallError as exc:
        raise ConfigError(f"{exc} (the rest engine's base_url)") from None
