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

Secrets never appear in logs, errors, results or metadata: every configured secret is replaced
by ``***`` wherever it would be shown. One pooled HTTP client serves all calls of an engine.

This module is the plug-in: its configuration, sending, and turning responses into results.
"""

from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.engines.base import CallPolicy, RetryableError, ToolEngine
from fms_dgt.core.tools.openapi.auth import Credentials, Redactor, is_sensitive_header, protect_logs
from fms_dgt.core.tools.openapi.request import (
    Request,
    RESTCallError,
    body_content,
    build_request,
    resolve_base_url,
)
from fms_dgt.core.tools.openapi.route import Route, RouteError, route_of
from fms_dgt.errors import DGTError
from fms_dgt.plugins import register_tool_engine

if TYPE_CHECKING:
    import httpx2

    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = ["RESTCallError", "RESTToolEngine"]

IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE", "QUERY"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "QUERY"})
_HEADERS_OF_INTEREST = ("content-type", "location", "etag", "retry-after", "x-request-id", "link")
_EXCERPT = 500
DEFAULT_TIMEOUT = 30.0
#: Checked routes kept per engine. Reading a route back from metadata costs tens of microseconds,
#: a noticeable share of a loopback call; a tool that changes in a refresh is a new cache key.
_ROUTE_CACHE = 4096


@register_tool_engine("rest")
class RESTToolEngine(ToolEngine):
    """Execute ``rest`` tools as HTTP requests.

    Retries, timeouts and output validation follow the engine's call policy (the ``timeout``,
    ``retries``, ``backoff`` and ``validate_results`` keys every engine accepts): a connection
    error, 429 or 5xx raises :class:`~fms_dgt.core.tools.engines.base.RetryableError` for methods
    in ``retry_methods``, so the policy retries it with exponential backoff; the policy's
    ``timeout`` is also the HTTP client's timeout (30 s when unset).

    Args:
        registry: the tools this engine can execute.
        base_url: server URL used instead of each tool's route ``base_url``.
        auth: credentials per security scheme name (see the module docstring).
        headers: extra headers sent with every request.
        retry_methods: methods whose failures are retried; default the idempotent ones (GET, HEAD,
            OPTIONS, PUT, DELETE, TRACE, QUERY).
        follow_redirects: follow 3xx responses.
        verify: verify TLS certificates.
        max_workers: parallel calls within one ``execute`` batch.
        policy: call policy (see :class:`~fms_dgt.core.tools.engines.base.CallPolicy`).
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
        max_workers: int = 8,
        policy: CallPolicy | None = None,
    ) -> None:
        super().__init__(registry, max_workers=max_workers, policy=policy)
        self.base_url = base_url.rstrip("/") if base_url else None
        self._credentials = Credentials(auth)
        self.headers = dict(headers or {})
        self.retry_methods = frozenset(m.upper() for m in retry_methods or IDEMPOTENT_METHODS)
        self.follow_redirects = follow_redirects
        self.verify = verify
        secrets = self._credentials.secrets() + [v for k, v in self.headers.items() if is_sensitive_header(k)]
        self._redactor = Redactor(secrets)
        protect_logs(self._redactor)
        self._client: httpx2.Client | None = None
        self._client_lock = threading.Lock()
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
            return ToolResult(call.call_id, call.name, error=self._redactor.text(str(exc)))

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

    def _http(self) -> httpx2.Client:
        with self._client_lock:
            if self._client is None:
                import httpx2

                self._client = httpx2.Client(
                    timeout=self.policy.timeout or DEFAULT_TIMEOUT,
                    follow_redirects=self.follow_redirects,
                    verify=self.verify,
                    headers=self.headers,
                    trust_env=True,
                )
            return self._client

    def _send(self, route: Route, call: ToolCall, request: Request, kwargs: dict[str, Any]) -> ToolResult:
        import httpx2

        headers = dict(request.headers)
        if request.cookies:
            headers["Cookie"] = "; ".join(request.cookies)
        retryable = request.method in self.retry_methods
        started = time.perf_counter()
        try:
            response = self._http().request(request.method, request.full_url(), headers=headers, **kwargs)
        except httpx2.HTTPError as exc:
            message = self._transport_error(request, exc)
            if retryable:
                raise RetryableError(message) from None
            raise RESTCallError(message) from None
        elapsed = (time.perf_counter() - started) * 1000
        if retryable and (response.status_code == 429 or response.status_code >= 500):
            raise RetryableError(
                self._status_error(route, request, response),
                retry_after=_retry_after(response.headers.get("Retry-After")),
            )
        return self._result(route, call, request, response, elapsed)

    def _transport_error(self, request: Request, exc: Exception) -> str:
        where = self._redactor.text(f"{request.method} {request.url}{request.path}")
        return (
            f"request failed for {where}: {type(exc).__name__}: {self._redactor.text(str(exc))}. "
            "Check that the server is reachable and base_url is right"
        )

    def _result(
        self, route: Route, call: ToolCall, request: Request, response: httpx2.Response, elapsed_ms: float
    ) -> ToolResult:
        redact = self._redactor
        value = redact.value(_decode(response))
        metadata = {
            "status": response.status_code,
            "headers": {k: redact.text(v) for k in _HEADERS_OF_INTEREST if (v := response.headers.get(k))},
            "method": request.method,
            "url": redact.text(f"{request.url}{request.path}"),
            "elapsed_ms": round(elapsed_ms, 3),
        }
        error = None
        if not 200 <= response.status_code < 300:
            error = self._status_error(route, request, response)
        return ToolResult(call.call_id, call.name, result=value, error=error, metadata=metadata)

    def _status_error(self, route: Route, request: Request, response: httpx2.Response) -> str:
        excerpt = self._redactor.text(response.text[:_EXCERPT])
        hint = ""
        if response.status_code in (401, 403) and not request.auth_applied:
            names = sorted(route.security_schemes) or ["<scheme>"]
            hint = f" No credentials were sent: configure auth for {', '.join(names)} on the rest engine."
        return (
            f"HTTP {response.status_code} {response.reason_phrase} from {request.method} "
            f"{self._redactor.text(request.path)}: {excerpt}.{hint}"
        )

    # ------------------------------------------------------------------ lifetime

    def close(self) -> None:
        """Close sessions and the pooled HTTP client. Idempotent."""
        super().close()
        with self._client_lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()


def _decode(response: httpx2.Response) -> Any:
    content = response.content
    if not content:
        return None
    content_type = response.headers.get("content-type", "").lower()
    if "json" in content_type:
        try:
            return json.loads(content)
        except ValueError:
            return response.text
    return response.text


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        from email.utils import parsedate_to_datetime

        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    import datetime

    now = datetime.datetime.now(moment.tzinfo or datetime.timezone.utc)
    return max(0.0, (moment - now).total_seconds())
