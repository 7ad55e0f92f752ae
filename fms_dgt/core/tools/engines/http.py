"""The ``http`` engine: manifest tools in ``mode: live`` call their URL for real.

A tool file may hold Kubernetes-style manifests whose ``spec`` says how the tool runs::

    apiVersion: tools.fms-dgt/v1
    kind: Tool
    metadata: {name: forecast, namespace: weather}
    spec:
      description: Forecast for a city.
      input_schema: {type: object, properties: {city: {type: string}}, required: [city]}
      mode: live
      timeout_ms: 2000
      http:
        url: https://api.example.com/v1/forecast
        method: GET                        # default POST
        headers: {X-Client: fms-dgt}
        headers_from_env: {X-Api-Key: WEATHER_API_KEY}

The ``file`` loader gives such tools the kind ``http`` (a live tool without an ``http`` block
stays ``file``), and dispatch sends that kind here. A GET (or HEAD) sends the arguments as the
query (lists repeated, objects as JSON text); other methods send them as a JSON body.
``headers_from_env`` maps a header to the environment variable holding its value, read at each
call: the value is a secret (registered with :mod:`fms_dgt.secrets`, never shown), and a missing
variable fails the call naming it. The tool's ``timeout_ms`` bounds the whole exchange (the
shorter of it and the policy's ``timeout``; 30 s when neither is set).

Requests obey the rules of every HTTP exit (:mod:`fms_dgt.core.tools.transport`): the URL (and
each redirect) must stay within ``http.url``'s origin and path, responses are capped at
``max_response_bytes`` (counted decompressed), JSON is parsed within the parse limits, and a
failure is returned as data with a typed ``metadata["error"]``.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.engines.base import CallPolicy, RetryableError, ToolEngine
from fms_dgt.core.tools.engines.policy import tool_timeout
from fms_dgt.core.tools.engines.rest import (
    DEFAULT_TIMEOUT,
    IDEMPOTENT_METHODS,
    SAFE_METHODS,
    call_failure,
    checked_headers,
)
from fms_dgt.core.tools.engines.runner import error_info
from fms_dgt.core.tools.transport import (
    DEFAULT_MAX_RESPONSE_BYTES,
    Base,
    Reply,
    Sender,
    byte_cap,
    has_control_character,
    is_sensitive_name,
    parse_base,
)
from fms_dgt.errors import DGTError, HTTPTransportError, RESTCallError
from fms_dgt.plugins import register_tool_engine
from fms_dgt.secrets import install_log_filter, redact, redact_value, register_secret

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = ["QUERY_METHODS", "HTTPSpec", "HTTPToolEngine"]

#: Methods whose arguments travel in the query; every other method sends a JSON body.
QUERY_METHODS = frozenset({"GET", "HEAD"})
_SPEC_KEYS = ("url", "method", "headers", "headers_from_env")
_METHOD = re.compile(r"^[A-Z]+$")
_EXCERPT = 500
_SPEC_CACHE = 4096


@dataclass(frozen=True, slots=True, kw_only=True)
class HTTPSpec:
    """How one manifest tool is called (its ``http`` block, checked).

    Attributes:
        url: the URL called, query included (``http.url``).
        base: where requests and redirects may go: the URL's origin and path.
        method: the HTTP method, upper case (``http.method``, default POST).
        headers: fixed headers (``http.headers``).
        headers_from_env: header -> environment variable holding its value.
    """

    url: str
    base: Base
    method: str = "POST"
    headers: Mapping[str, str] = field(default_factory=dict)
    headers_from_env: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, tool: Tool) -> HTTPSpec:
        """Read and check ``tool.metadata["http"]``.

        Raises:
            RESTCallError: the block is missing or malformed (the message names the tool and key).
        """
        owner = tool.qualified_name
        raw = tool.metadata.get("http")
        if not isinstance(raw, Mapping):
            raise RESTCallError(
                f"no http block for tool {owner}: the http engine calls manifest tools whose spec "
                "has http: {url: ...}. Add one, or route the tool to another engine"
            )
        unknown = sorted(str(k) for k in raw if k not in _SPEC_KEYS)
        if unknown:
            raise _invalid(owner, unknown[0], f"unknown key; accepted are {', '.join(_SPEC_KEYS)}")
        url = raw.get("url")
        if not isinstance(url, str) or not url:
            raise _invalid(owner, "url", "missing; give the URL to call")
        return cls(
            url=url,
            base=_url_base(url, owner),
            method=_method(raw.get("method", "POST"), owner),
            headers=_headers(raw.get("headers"), owner, "headers"),
            headers_from_env=_headers(raw.get("headers_from_env"), owner, "headers_from_env"),
        )


def _invalid(owner: str, key: str, why: str) -> RESTCallError:
    return RESTCallError(f"invalid http.{key} of tool {owner}: {why}. Fix the tool's manifest")


def _url_base(url: str, owner: str) -> Base:
    parts = urlsplit(url)
    try:
        return parse_base(urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")))
    except RESTCallError as exc:
        raise _invalid(owner, "url", str(exc)) from None


def _method(value: Any, owner: str) -> str:
    method = value.upper() if isinstance(value, str) else ""
    if not _METHOD.match(method):
        raise _invalid(owner, "method", f"{value!r} is not an HTTP method such as GET or POST")
    return method


def _headers(value: Any, owner: str, key: str) -> Mapping[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
        raise _invalid(owner, key, "expected a mapping of header names to strings")
    headers = {str(k): v for k, v in value.items()}
    for name, text in headers.items():
        if key == "headers" and has_control_character(text):
            raise _invalid(owner, key, f"the value of {name!r} holds a control character")
        if key == "headers" and is_sensitive_name(name):
            register_secret(text)
    return headers


@register_tool_engine("http")
class HTTPToolEngine(ToolEngine):
    """Call manifest tools (``mode: live`` with an ``http`` block) over HTTP.

    Connection errors, 429 and 5xx of idempotent methods (GET, HEAD, OPTIONS, PUT, DELETE) are
    retried when the policy allows retries.

    Args:
        registry: the tools this engine can call.
        headers: extra headers for every request (values of headers named like credentials are
            registered as secrets).
        follow_redirects: follow 3xx responses that stay within the tool's URL (a redirect
            anywhere else fails the call).
        verify: verify TLS certificates.
        max_response_bytes: largest response body read, counted decompressed (default 10 MB).
        max_workers: parallel calls within one ``execute`` batch.
        policy: call policy.

    Raises:
        ConfigError: a header value holds a control character, or ``max_response_bytes`` is not
            a positive integer.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        headers: Mapping[str, str] | None = None,
        follow_redirects: bool = True,
        verify: bool = True,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        max_workers: int = 8,
        policy: CallPolicy | None = None,
    ) -> None:
        super().__init__(registry, max_workers=max_workers, policy=policy)
        self.headers = checked_headers(headers, "http")
        self.max_response_bytes = byte_cap(max_response_bytes, "http")
        self._sender = Sender(
            timeout=self.policy.timeout or DEFAULT_TIMEOUT,
            headers=self.headers,
            follow_redirects=follow_redirects,
            verify=verify,
            max_retry_after=self.policy.max_retry_after,
            backoff=self.policy.backoff,
        )
        self._spec = functools.lru_cache(maxsize=_SPEC_CACHE)(HTTPSpec.of)

    def call(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> ToolResult:
        """Send one call to the tool's URL and turn the response into a :class:`ToolResult`."""
        try:
            spec = self._spec(tool)
            reply = self._send(tool, spec, call.arguments)
        except RESTCallError as exc:
            return call_failure(call, exc)
        return _result(call, spec, reply)

    def simulate(self, session_id: str, calls: Sequence[ToolCall]) -> list[ToolResult]:
        """Like :meth:`execute`, but only safe methods (GET, HEAD, OPTIONS...) are sent."""
        named = [ToolCall(c.name, c.arguments, c.call_id or f"call_{i}") for i, c in enumerate(calls)]
        unsafe = {i for i, c in enumerate(named) if not self._is_safe(c)}
        sent = iter(super().simulate(session_id, [c for i, c in enumerate(named) if i not in unsafe]))
        return [_not_simulated(c) if i in unsafe else next(sent) for i, c in enumerate(named)]

    def _is_safe(self, call: ToolCall) -> bool:
        try:
            return self._spec(self.registry.match(call)).method in SAFE_METHODS
        except DGTError:
            return True  # execute() reports the lookup or spec error as data

    def _send(self, tool: Tool, spec: HTTPSpec, arguments: Mapping[str, Any]) -> Reply:
        headers = {**spec.headers, **_env_headers(tool, spec)}
        url, body = spec.url, {}
        if spec.method in QUERY_METHODS:
            url = _with_query(spec.url, arguments)
        else:
            headers.setdefault("Content-Type", "application/json")
            body = {"content": json.dumps(dict(arguments), ensure_ascii=False).encode()}
        retryable = spec.method in IDEMPOTENT_METHODS
        try:
            reply = self._sender.send(
                spec.method,
                url,
                spec.base,
                headers=headers,
                body=body,
                max_bytes=self.max_response_bytes,
                timeout=self._timeout(tool),
            )
        except HTTPTransportError as exc:
            if retryable:  # the policy retries these (a timeout stays typed as one)
                raise (TimeoutError if exc.timed_out else RetryableError)(str(exc)) from None
            raise
        if retryable and (reply.status == 429 or reply.status >= 500):
            raise RetryableError(_status_error(spec, reply))
        return reply

    def _timeout(self, tool: Tool) -> float:
        own = tool_timeout(tool)
        policy = self.policy.timeout or DEFAULT_TIMEOUT
        return policy if own is None else min(own, policy)

    def close(self) -> None:
        """Close sessions and the pooled HTTP client. Idempotent."""
        super().close()
        self._sender.close()


def _env_headers(tool: Tool, spec: HTTPSpec) -> dict[str, str]:
    """The ``headers_from_env`` values, read now; each is registered as a secret."""
    found: dict[str, str] = {}
    for header, variable in spec.headers_from_env.items():
        value = os.environ.get(variable)
        if value is None:
            raise RESTCallError(
                f"missing environment variable {variable} for header {header!r} of tool "
                f"{tool.qualified_name}: set it, or remove the header from http.headers_from_env"
            )
        if has_control_character(value):
            raise RESTCallError(
                f"invalid environment variable {variable} for header {header!r} of tool "
                f"{tool.qualified_name}: it holds a control character (a trailing newline from a "
                "file?). Strip it where the variable is set"
            )
        register_secret(value)
        found[header] = value
    if found:
        install_log_filter()
    return found


def _with_query(url: str, arguments: Mapping[str, Any]) -> str:
    pairs: list[tuple[str, str]] = []
    for name, value in arguments.items():
        for item in value if isinstance(value, list) else [value]:
            if item is not None:
                pairs.append((str(name), _text(item)))
    if not pairs:
        return url
    query = urlencode(pairs, quote_via=quote)
    return f"{url}{'&' if urlsplit(url).query else '?'}{query}"


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return str(value)


def _result(call: ToolCall, spec: HTTPSpec, reply: Reply) -> ToolResult:
    metadata: dict[str, Any] = {
        "status": reply.status,
        "method": spec.method,
        "url": redact(spec.base.url),
        "elapsed_ms": round(reply.elapsed_ms, 3),
    }
    try:
        value = redact_value(reply.value(f"the response of {spec.method} {spec.base.url}"))
    except RESTCallError as exc:
        return call_failure(call, exc, **metadata)
    error = None
    if not 200 <= reply.status < 300:
        error = _status_error(spec, reply)
        metadata["error"] = error_info("execution", "execution", code=reply.status)
    return ToolResult(call.call_id, call.name, result=value, error=error, metadata=metadata)


def _status_error(spec: HTTPSpec, reply: Reply) -> str:
    excerpt = redact(reply.text)[:_EXCERPT]  # redacted first: a cut must not keep part of a secret
    return f"HTTP {reply.status} {reply.reason} from {spec.method} {redact(spec.base.url)}: {excerpt}."


def _not_simulated(call: ToolCall) -> ToolResult:
    return ToolResult(
        call.call_id,
        call.name,
        error=f"not sent by simulate(): {call.name} uses a method that can change server state. "
        "Use execute() to send it.",
    )
