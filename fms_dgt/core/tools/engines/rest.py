"""The ``rest`` engine: executes tools loaded by the ``rest`` loader as real HTTP requests.

The request is rebuilt from the tool's metadata (see :mod:`fms_dgt.core.tools.loaders.rest`): path
parameters are serialised by their style and percent-encoded, so a value can never change the
path (``1/../../admin`` becomes one segment); query, header and cookie parameters follow their
``style``/``explode`` rules; bodies are sent as JSON, form-urlencoded or multipart.

Credentials come from the ``auth:`` config, keyed by the spec's security scheme names::

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
"""

from __future__ import annotations

import base64
import json
import logging
import re
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.engines.base import CallPolicy, RetryableError, ToolEngine
from fms_dgt.errors import ConfigError, DGTError
from fms_dgt.plugins import register_tool_engine

if TYPE_CHECKING:
    import httpx2

    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = ["RESTCallError", "RESTToolEngine"]

log = logging.getLogger(__name__)

IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE", "QUERY"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "QUERY"})
_HEADERS_OF_INTEREST = ("content-type", "location", "etag", "retry-after", "x-request-id", "link")
_EXCERPT = 500
DEFAULT_TIMEOUT = 30.0
_RESERVED = ":/?#[]@!$&'()*+,;="
_AUTH_KINDS = ("bearer", "basic", "apiKey")
#: Extra header names whose values are treated as secrets too.
_SENSITIVE = re.compile(r"auth|key|token|secret|cookie|session|password", re.IGNORECASE)


class RESTCallError(DGTError):
    """A call could not be turned into a request or the request failed (returned as data)."""


# --------------------------------------------------------------------------- credentials


@dataclass(frozen=True, slots=True)
class _Credential:
    """Configured credentials for one security scheme (secrets are never printed)."""

    name: str
    values: Mapping[str, str] = field(repr=False)
    kind: str | None = None
    location: str | None = None
    param: str | None = None

    @classmethod
    def from_config(cls, name: str, raw: Any) -> _Credential:
        if isinstance(raw, str):
            raw = {"token": raw}
        if not isinstance(raw, Mapping):
            raise ConfigError(
                f"invalid auth entry {name!r} for rest engine: expected a mapping such as "
                "{token: ...}, {username: ..., password: ...} or {value: ...}"
            )
        kind = raw.get("type")
        if kind is not None and kind not in _AUTH_KINDS:
            raise ConfigError(f"invalid auth type {kind!r} in entry {name!r}: use one of {_AUTH_KINDS}")
        if kind == "apiKey" and (raw.get("in") not in ("header", "query", "cookie") or not raw.get("name")):
            raise ConfigError(f"auth entry {name!r} of type apiKey needs in: header|query|cookie and name")
        values = {
            k: str(raw[k]) for k in ("token", "username", "password", "value") if raw.get(k) is not None
        }
        return cls(name, values, kind, raw.get("in"), raw.get("name"))

    def secrets(self) -> list[str]:
        found = [v for k, v in self.values.items() if k != "username" and v]
        if "username" in self.values or "password" in self.values:
            pair = f"{self.values.get('username', '')}:{self.values.get('password', '')}"
            found.append(base64.b64encode(pair.encode()).decode())
        return found


class _Redactor:
    """Replaces every configured secret (and its URL-encoded form) by ``***``."""

    def __init__(self, secrets: Sequence[str]) -> None:
        variants = {s for secret in secrets if len(secret) >= 3 for s in (secret, quote(secret, safe=""))}
        self._secrets = sorted(variants, key=len, reverse=True)

    @property
    def active(self) -> bool:
        """True when there is anything to redact."""
        return bool(self._secrets)

    def text(self, value: str) -> str:
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, "***")
        return value

    def value(self, value: Any) -> Any:
        if not self._secrets:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, dict):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}
        return value


class _SecretLogFilter(logging.Filter):
    """Redacts the secrets of every live engine from the HTTP client's own log records.

    httpx logs each request URL at INFO level, and an API key may travel in the query.
    """

    def __init__(self) -> None:
        super().__init__()
        self.redactors: weakref.WeakSet[_Redactor] = weakref.WeakSet()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = message
        for redactor in list(self.redactors):
            redacted = redactor.text(redacted)
        if redacted != message:
            record.msg, record.args = redacted, ()
        return True


_LOG_FILTER = _SecretLogFilter()
_CLIENT_LOGGERS = ("httpx2", "httpx")


def _protect_logs(redactor: _Redactor) -> None:
    if not redactor.active:
        return
    _LOG_FILTER.redactors.add(redactor)
    for name in _CLIENT_LOGGERS:
        logger = logging.getLogger(name)
        if _LOG_FILTER not in logger.filters:
            logger.addFilter(_LOG_FILTER)


# --------------------------------------------------------------------------- request building


@dataclass(slots=True)
class _Request:
    """An HTTP request being assembled from a call."""

    method: str
    url: str
    path: str
    query: list[str] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    cookies: list[str] = field(default_factory=list)
    fields: dict[str, tuple[Any, Mapping[str, Any]]] = field(default_factory=dict)
    body: Any = None
    has_body: bool = False
    auth_applied: list[str] = field(default_factory=list)

    def full_url(self) -> str:
        return self.url + self.path + ("?" + "&".join(self.query) if self.query else "")


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return str(value)


def _path_quote(value: Any) -> str:
    text = quote(_scalar(value), safe="")
    # "." and ".." are dot-segments that a client or server would collapse; encode them.
    return text.replace(".", "%2E") if text.strip(".") == "" else text


def _path_value(name: str, value: Any, style: str, explode: bool) -> str:
    if isinstance(value, list):
        parts = [_path_quote(v) for v in value]
    elif isinstance(value, dict):
        pairs = [(_path_quote(k), _path_quote(v)) for k, v in value.items()]
        parts = [f"{k}={v}" for k, v in pairs] if explode else [x for kv in pairs for x in kv]
    else:
        parts = [_path_quote(value)]
    if style == "label":
        return "." + ("." if explode else ",").join(parts)
    if style == "matrix":
        if explode and isinstance(value, list):
            return "".join(f";{name}={p}" for p in parts)
        return (
            f";{name}=" + ",".join(parts)
            if not (explode and isinstance(value, dict))
            else ";" + ";".join(parts)
        )
    return ",".join(parts)


def _query_pairs(name: str, value: Any, meta: Mapping[str, Any]) -> list[str]:
    style = str(meta.get("style", "form"))
    explode = meta.get("explode", style == "form") is True
    safe = _RESERVED if meta.get("allow_reserved") else ""

    def q(text: Any) -> str:
        return quote(_scalar(text), safe=safe)

    key = quote(name, safe="")
    if meta.get("content_type"):
        return [f"{key}={q(json.dumps(value))}"]
    if isinstance(value, dict):
        if style == "deepObject":
            return [f"{quote(k, safe='')}={q(v)}" for k, v in _deep_pairs(name, value)]
        if explode:
            return [f"{quote(str(k), safe='')}={q(v)}" for k, v in value.items()]
        return [f"{key}=" + ",".join(f"{q(k)},{q(v)}" for k, v in value.items())]
    if isinstance(value, list):
        if explode and style == "form":
            return [f"{key}={q(v)}" for v in value]
        sep = {"spaceDelimited": "%20", "pipeDelimited": "|", "tabDelimited": "%09"}.get(style, ",")
        return [f"{key}=" + sep.join(q(v) for v in value)]
    return [f"{key}={q(value)}"]


def _deep_pairs(prefix: str, value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _deep_pairs(f"{prefix}[{k}]", v)]
    if isinstance(value, list):
        return [p for v in value for p in _deep_pairs(f"{prefix}[]", v)]
    return [(prefix, value)]


def _simple(value: Any, explode: bool) -> str:
    if isinstance(value, list):
        return ",".join(_scalar(v) for v in value)
    if isinstance(value, dict):
        if explode:
            return ",".join(f"{k}={_scalar(v)}" for k, v in value.items())
        return ",".join(f"{k},{_scalar(v)}" for k, v in value.items())
    return _scalar(value)


def _place(request: _Request, arg: str, value: Any, meta: Mapping[str, Any]) -> None:
    location, name = meta.get("in"), str(meta.get("name", arg))
    explode = meta.get("explode") is True
    if meta.get("content_type") and location in ("path", "header", "cookie"):
        value = json.dumps(value, separators=(",", ":"))  # a parameter with content: a JSON value
    if location == "path":
        token = "{" + name + "}"
        if token not in request.path:
            raise RESTCallError(f"path parameter {name!r} has no {token} placeholder in {request.path}")
        style = str(meta.get("style", "simple"))
        request.path = request.path.replace(token, _path_value(name, value, style, explode))
    elif location == "query":
        if value is not None:
            request.query.extend(_query_pairs(name, value, meta))
    elif location == "header":
        request.headers[name] = _simple(value, explode)
    elif location == "cookie":
        request.cookies.append(f"{name}={quote(_simple(value, False), safe='')}")
    elif meta.get("whole_body"):
        request.body, request.has_body = value, True
    else:
        request.fields[name] = (value, meta)


# --------------------------------------------------------------------------- bodies


def _body_kwargs(request: _Request, body: Mapping[str, Any] | None) -> dict[str, Any]:
    if body is None or not (request.has_body or request.fields or body.get("required")):
        return {}
    content_type = str(body.get("content_type", "application/json"))
    lower = content_type.lower()
    if lower.startswith("multipart/form-data"):
        return _multipart(request)
    if lower.startswith("application/x-www-form-urlencoded"):
        request.headers.setdefault("Content-Type", content_type)
        value = request.body if request.has_body else {k: v for k, (v, _) in request.fields.items()}
        metas = {k: m for k, (_, m) in request.fields.items()}
        return {"content": _form_encode(value, metas).encode()}
    request.headers.setdefault("Content-Type", content_type)
    value = request.body if request.has_body else {k: v for k, (v, _) in request.fields.items()}
    if _is_json(lower):
        return {"content": json.dumps(value, ensure_ascii=False).encode()}
    if isinstance(value, bytes):
        return {"content": value}
    return {"content": (value if isinstance(value, str) else json.dumps(value)).encode()}


def _is_json(content_type: str) -> bool:
    base = content_type.split(";", 1)[0].strip()
    return base in ("application/json", "*/*") or base.endswith("+json")


def _form_encode(value: Any, metas: Mapping[str, Mapping[str, Any]]) -> str:
    if not isinstance(value, dict):
        return _scalar(value)
    pairs: list[tuple[str, str]] = []
    for name, item in value.items():
        meta = metas.get(name, {})
        if isinstance(item, dict) and meta.get("style") == "form":
            pairs.extend((str(k), _scalar(v)) for k, v in item.items())
        elif isinstance(item, dict) or meta.get("style") == "deepObject":
            # Objects default to bracket notation (meta[key]=value), what form APIs such as
            # Stripe's expect; an explicit form style spreads the keys instead.
            pairs.extend((k, _scalar(v)) for k, v in _deep_pairs(name, item))
        elif isinstance(item, list) and meta.get("explode", True):
            pairs.extend((name, _scalar(v)) for v in item)
        elif isinstance(item, list):
            pairs.append((name, ",".join(_scalar(v) for v in item)))
        elif item is not None:
            pairs.append((name, _scalar(item)))
    return urlencode(pairs)


def _multipart(request: _Request) -> dict[str, Any]:
    # Every field goes in ``files`` (plain fields without a file name) so the body is multipart
    # even when no file is attached.
    parts: list[tuple[str, tuple[str | None, bytes] | tuple[str, bytes, str]]] = []
    for name, (value, meta) in request.fields.items():
        if meta.get("file"):
            parts.append((name, _file_part(name, value, meta)))
        else:
            for item in value if isinstance(value, list) else [value]:
                parts.append((name, (None, _scalar(item).encode())))
    if request.has_body:
        parts.append(("file", _file_part("file", request.body, {})))
    return {"files": parts}


def _file_part(name: str, value: Any, meta: Mapping[str, Any]) -> tuple[str, bytes, str]:
    kind = str(meta.get("part_content_type", "application/octet-stream"))
    data = value.encode() if isinstance(value, str) else json.dumps(value).encode()
    return name, data, kind


# --------------------------------------------------------------------------- the engine


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
        base_url: server URL used instead of each tool's ``metadata["base_url"]``.
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
        self._credentials = {n: _Credential.from_config(n, v) for n, v in (auth or {}).items()}
        self.headers = dict(headers or {})
        self.retry_methods = frozenset(m.upper() for m in retry_methods or IDEMPOTENT_METHODS)
        self.follow_redirects = follow_redirects
        self.verify = verify
        secrets = [s for c in self._credentials.values() for s in c.secrets()]
        secrets += [v for k, v in self.headers.items() if _SENSITIVE.search(k)]
        self._redactor = _Redactor(secrets)
        _protect_logs(self._redactor)
        self._client: httpx2.Client | None = None
        self._client_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r}, auth={sorted(self._credentials)})"

    # ------------------------------------------------------------------ calls

    def call(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> ToolResult:
        """Send the request for one call and turn the response into a :class:`ToolResult`."""
        try:
            request = self._build(tool, call.arguments)
            kwargs = _body_kwargs(request, tool.metadata.get("body"))
            return self._send(tool, call, request, kwargs)
        except RESTCallError as exc:
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
        except DGTError:
            return True  # execute() reports the lookup error as data
        return str(tool.metadata.get("method", "GET")).upper() in SAFE_METHODS

    def _refused(self, call: ToolCall) -> ToolResult:
        return ToolResult(
            call.call_id,
            call.name,
            error=f"not sent by simulate(): {call.name} uses a method that can change server state. "
            "Use execute() to send it.",
        )

    def _build(self, tool: Tool, arguments: Mapping[str, Any]) -> _Request:
        meta = tool.metadata
        if meta.get("kind") != "rest" or "path" not in meta:
            raise RESTCallError(
                f"cannot execute {tool.qualified_name} over HTTP: it was not loaded by the rest loader "
                "(no method/path metadata). Route its namespace to another engine"
            )
        request = _Request(str(meta.get("method", "GET")).upper(), self._base(tool), str(meta["path"]))
        specs: Mapping[str, Any] = meta.get("arguments") or {}
        for arg, value in arguments.items():
            if arg not in specs:
                raise RESTCallError(
                    f"unknown argument {arg!r} for {tool.qualified_name}: accepted are "
                    f"{', '.join(sorted(specs)) or '(none)'}. Remove it"
                )
            _place(request, arg, value, specs[arg])
        if "{" in request.path:
            raise RESTCallError(
                f"missing path parameter for {tool.qualified_name}: {request.path} still has a "
                "placeholder. Pass every path argument"
            )
        self._authenticate(tool, request)
        return request

    def _base(self, tool: Tool) -> str:
        base = self.base_url or str(tool.metadata.get("base_url") or "")
        if not base.startswith(("http://", "https://")):
            raise RESTCallError(
                f"no absolute base URL for {tool.qualified_name}: the spec gives {base!r}. Set "
                "base_url on the rest engine (or the loader)"
            )
        return base.rstrip("/")

    # ------------------------------------------------------------------ auth

    def _authenticate(self, tool: Tool, request: _Request) -> None:
        schemes: Mapping[str, Any] = tool.metadata.get("security_schemes") or {}
        chosen = self._choose(tool.metadata.get("security") or [])
        for name in chosen:
            self._apply(self._credentials[name], schemes.get(name, {}), request)
        for credential in self._credentials.values():
            if (
                credential.kind is not None
                and credential.name not in chosen
                and credential.name not in schemes
            ):
                self._apply(credential, {}, request)

    def _choose(self, requirements: Sequence[Any]) -> list[str]:
        for requirement in requirements:
            if (
                isinstance(requirement, Mapping)
                and requirement
                and all(n in self._credentials for n in requirement)
            ):
                return list(requirement)
        return []

    def _apply(self, credential: _Credential, scheme: Mapping[str, Any], request: _Request) -> None:
        kind = credential.kind or _kind_of(scheme)
        values = credential.values
        if kind == "basic":
            pair = f"{values.get('username', '')}:{values.get('password', '')}".encode()
            request.headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        elif kind == "apiKey":
            location = credential.location or scheme.get("in")
            name = str(credential.param or scheme.get("name") or credential.name)
            _place(
                request, name, values.get("value", values.get("token", "")), {"in": location, "name": name}
            )
        else:
            request.headers["Authorization"] = "Bearer " + values.get("token", values.get("value", ""))
        request.auth_applied.append(credential.name)

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

    def _send(self, tool: Tool, call: ToolCall, request: _Request, kwargs: dict[str, Any]) -> ToolResult:
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
                self._status_error(tool, request, response),
                retry_after=_retry_after(response.headers.get("Retry-After")),
            )
        return self._result(tool, call, request, response, elapsed)

    def _transport_error(self, request: _Request, exc: Exception) -> str:
        where = self._redactor.text(f"{request.method} {request.url}{request.path}")
        return (
            f"request failed for {where}: {type(exc).__name__}: {self._redactor.text(str(exc))}. "
            "Check that the server is reachable and base_url is right"
        )

    def _result(
        self, tool: Tool, call: ToolCall, request: _Request, response: httpx2.Response, elapsed_ms: float
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
            error = self._status_error(tool, request, response)
        return ToolResult(call.call_id, call.name, result=value, error=error, metadata=metadata)

    def _status_error(self, tool: Tool, request: _Request, response: httpx2.Response) -> str:
        excerpt = self._redactor.text(response.text[:_EXCERPT])
        hint = ""
        if response.status_code in (401, 403) and not request.auth_applied:
            names = sorted(tool.metadata.get("security_schemes") or {}) or ["<scheme>"]
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


def _kind_of(scheme: Mapping[str, Any]) -> str:
    kind = scheme.get("type")
    if kind == "http":
        return "basic" if scheme.get("scheme") == "basic" else "bearer"
    if kind == "apiKey":
        return "apiKey"
    return "bearer"


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
