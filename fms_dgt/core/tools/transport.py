"""Sending HTTP requests that stay where the user put them, and reading bounded responses.

Every HTTP exit of the tool engines (``rest``, ``http``, ``lm``) goes through a :class:`Sender`:

* **declared base**: a request's URL must have the scheme, host and port of its declared base
  (the engine's ``base_url``, the spec's server, a manifest's ``http.url``) and a path under the
  base's path, also as a server that decodes percent-encoded dots and backslashes would read it
  (:meth:`Base.admits`). Anything else is refused before a byte is sent
  (:class:`~fms_dgt.errors.RequestRefusedError`).
* **redirects** are followed by the sender itself, hop by hop, and only while each hop stays within
  the same base; a redirect anywhere else is refused, so no credential (header, cookie, query
  key) ever reaches a host the user did not declare.
* **bounded responses**: the body is streamed and counted *after* decompression; past
  ``max_bytes`` reading stops (:class:`~fms_dgt.errors.ResponseTooLargeError`), so a gzip bomb
  never inflates in memory. One deadline bounds the whole exchange, redirects and body included.
* **bounded JSON**: :func:`decode_json` turns bodies nested deeper than the parse limits, or with
  integers too long to convert, into errors instead of ``RecursionError`` or ``ValueError``.
* **shared back-off**: a 429 (or a 503 with ``Retry-After``) from a host holds every request of
  the process to that host until the time it asked for (:mod:`~fms_dgt.core.tools.backoff`); the
  wait comes before the exchange's own timeout starts.

The HTTP client (``httpx2``) is imported only when a sender first sends.
"""

from __future__ import annotations

import functools
import json
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit, urlunsplit

from fms_dgt.core.tools.backoff import DEFAULT_MAX_RETRY_AFTER, HOSTS
from fms_dgt.errors import (
    ConfigError,
    HTTPTransportError,
    LoadError,
    RequestRefusedError,
    ResponseTooLargeError,
    RESTCallError,
)
from fms_dgt.io import DEFAULT_LIMITS, check_limits, check_text, escapes_surrogate
from fms_dgt.secrets import redact

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "Base",
    "Reply",
    "Sender",
    "byte_cap",
    "decode_json",
    "display_url",
    "has_control_character",
    "is_sensitive_name",
    "is_url",
    "origin_base",
    "parse_base",
    "public_url",
]

#: The default cap on a response body (decompressed) of every HTTP-speaking engine.
DEFAULT_MAX_RESPONSE_BYTES = 10_000_000
MAX_REDIRECTS = 10
_DEFAULT_PORTS = {"http": 80, "https": 443}
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


# --------------------------------------------------------------------------- the declared base


def _normalised(path: str) -> str:
    """``path`` as a server that decodes everything would read it: decoded, ``\\`` as ``/``, and
    dot segments removed."""
    if "%" not in path and "." not in path and "\\" not in path:
        return path
    kept: list[str] = []
    for segment in unquote(path).replace("\\", "/").split("/")[1:]:
        if segment == "..":
            if kept:
                kept.pop()
        elif segment != ".":
            kept.append(segment)
    return "/" + "/".join(kept)


@dataclass(frozen=True, slots=True)
class Base:
    """Where the requests of one tool may go: an origin and a path prefix.

    Attributes:
        url: the base URL as declared (no trailing slash).
        scheme: ``http`` or ``https``.
        host: the host name, lower case.
        port: the port (the scheme's default when the URL names none).
        prefix: the path every request must stay under (decoded, no trailing slash).
    """

    url: str
    scheme: str
    host: str
    port: int
    prefix: str

    def admits(self, url: httpx2.URL) -> bool:
        """True when ``url`` stays within this base (origin, no userinfo, path under the prefix)."""
        if url.scheme != self.scheme or url.host != self.host or url.userinfo:
            return False
        if (url.port or _DEFAULT_PORTS.get(url.scheme)) != self.port:
            return False
        path = _normalised(url.raw_path.split(b"?", 1)[0].decode("ascii"))
        return not self.prefix or path == self.prefix or path.startswith(self.prefix + "/")


@functools.lru_cache(maxsize=1024)
def parse_base(url: str) -> Base:
    """The :class:`Base` of a declared base URL.

    Raises:
        RESTCallError: the URL is not absolute http(s), or has credentials, a query or a fragment
            (the message says which; it never shows the URL's userinfo).
    """
    import httpx2

    try:
        parsed = httpx2.URL(url)
    except (httpx2.InvalidURL, TypeError) as exc:
        raise RESTCallError(f"invalid base URL {_quoted(url)}: {exc}. Give an http(s) URL") from None
    if parsed.scheme not in _DEFAULT_PORTS or not parsed.host:
        raise RESTCallError(
            f"no absolute base URL: {_quoted(url)} is not an http(s) URL. Set base_url to one"
        )
    problem = _base_problem(parsed)
    if problem:
        shown = redact(str(parsed.copy_with(username=None, password=None)))
        raise RESTCallError(f"invalid base URL {shown!r}: {problem}")
    prefix = _normalised(parsed.raw_path.decode("ascii")).rstrip("/")
    port = parsed.port or _DEFAULT_PORTS[parsed.scheme]
    return Base(url.rstrip("/"), parsed.scheme, parsed.host, port, prefix)


def origin_base(url: str) -> Base:
    """The :class:`Base` of ``url``'s origin (any path of the same scheme, host and port).

    Raises:
        RESTCallError: ``url`` is not an absolute http(s) URL without credentials.
    """
    import httpx2

    try:
        parsed = httpx2.URL(url)
    except (httpx2.InvalidURL, TypeError) as exc:
        raise RESTCallError(f"invalid URL {_quoted(url)}: {exc}. Give an http(s) URL") from None
    return parse_base(str(parsed.copy_with(raw_path=b"/", fragment=None)))


def _quoted(url: str) -> str:
    """A URL quoted for a message: without userinfo and query values, secrets hidden."""
    text = url.split("://", 1)[-1]
    scheme = url[: len(url) - len(text)]
    return repr(redact(display_url(url) if is_url(url) else scheme + text.rpartition("@")[2]))


def byte_cap(value: Any, owner: str) -> int:
    """A ``max_response_bytes`` setting, checked.

    Raises:
        ConfigError: not a positive integer (``owner`` names the engine).
    """
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(
            f"invalid max_response_bytes {value!r} for the {owner} engine: expected a positive number "
            "of bytes"
        )
    return value


def _base_problem(parsed: httpx2.URL) -> str | None:
    if parsed.userinfo:
        return "it carries credentials. Put them in the engine's auth or headers instead"
    if parsed.query or parsed.fragment:
        return "it has a query or fragment. Give the server's root URL without them"
    return None


def is_url(value: str) -> bool:
    """True for http(s) URLs."""
    return value.startswith(("http://", "https://"))


def public_url(url: str) -> str:
    """``url`` without userinfo, query and fragment (what relative server URLs are joined to)."""
    if not is_url(url):
        return url
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


def display_url(url: str) -> str:
    """``url`` as it may be shown (messages, reports, ``metadata["source"]``): no userinfo, and
    every query value replaced by ``***``, since any of them may be a key."""
    if not is_url(url):
        return url
    parts = urlsplit(url)
    masked = "&".join(
        f"{name}=***" if sep else name
        for name, sep, _ in (p.partition("=") for p in parts.query.split("&") if p)
    )
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, masked, parts.fragment))


_SENSITIVE = re.compile(r"auth|key|token|secret|cookie|session|password", re.IGNORECASE)


def is_sensitive_name(name: str) -> bool:
    """True when a header or query parameter of this name holds a credential (``X-Api-Token``,
    ``Cookie``, ``api_key``...)."""
    return _SENSITIVE.search(name) is not None


def has_control_character(value: str) -> bool:
    """True when ``value`` holds a control character (a credential read from a file with its
    trailing newline): the HTTP layer would refuse it, quoting the value in its error."""
    return any(ord(c) < 0x20 or ord(c) == 0x7F for c in value)


# --------------------------------------------------------------------------- replies


@dataclass(slots=True, kw_only=True)
class Reply:
    """A response read in full (within the size cap).

    Attributes:
        status: the HTTP status.
        reason: the reason phrase.
        headers: the response headers.
        content: the body, decompressed.
        url: the URL that answered (after same-base redirects).
        elapsed_ms: milliseconds from sending to the body's last byte.
    """

    status: int
    reason: str
    headers: httpx2.Headers
    content: bytes
    url: httpx2.URL
    elapsed_ms: float = 0.0

    @property
    def text(self) -> str:
        """The body as text in the charset the response names (undecodable bytes replaced)."""
        charset = _charset(self.headers.get("content-type", ""))
        try:
            return self.content.decode(charset or "utf-8", errors="replace")
        except LookupError:
            return self.content.decode("utf-8", errors="replace")

    @property
    def is_json(self) -> bool:
        """True when the response says its body is JSON."""
        return "json" in self.headers.get("content-type", "").lower()

    def value(self, what: str) -> Any:
        """The body as a tool result: parsed JSON (within the parse limits) when the response says
        JSON and it parses, else the text; None for an empty body.

        Raises:
            RESTCallError: a JSON body past the parse limits (see :func:`decode_json`).
        """
        if not self.content:
            return None
        if self.is_json:
            try:
                return decode_json(self.content, what)
            except json.JSONDecodeError:
                return self.text
        return self.text


def _charset(content_type: str) -> str | None:
    for part in content_type.split(";")[1:]:
        key, _, value = part.partition("=")
        if key.strip().lower() == "charset":
            return value.strip().strip('"') or None
    return None


def decode_json(data: bytes | str, what: str) -> Any:
    """Parse a JSON body within the parse limits (:data:`fms_dgt.io.DEFAULT_LIMITS`).

    Raises:
        ValueError: the body is not JSON (``json.JSONDecodeError``) .
        RESTCallError: the body is nested deeper than the limits or holds an integer too long to
            convert.
    """
    try:
        value = json.loads(data)
    except RecursionError:
        value = _too_deep(what)
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # Python refuses integers of more than 4,300 digits
        raise RESTCallError(f"unusable JSON in {what}: {exc}. The service's answer is broken") from None
    # A value cannot be nested deeper than it has brackets; most bodies need no walk.
    if isinstance(value, (dict, list)) and _brackets(data) > DEFAULT_LIMITS.max_depth:
        try:
            check_limits(value, what)
        except LoadError:
            _too_deep(what)
    if escapes_surrogate(data):  # a lone surrogate comes only from an escape: most bodies need no walk
        try:
            check_text(value, what)
        except LoadError as exc:
            raise RESTCallError(f"unusable JSON in {what}: {exc}. The service's answer is broken") from None
    return value


def _brackets(data: bytes | str) -> int:
    if isinstance(data, str):
        return data.count("[") + data.count("{")
    return data.count(b"[") + data.count(b"{")


def _too_deep(what: str) -> Any:
    raise RESTCallError(
        f"unusable JSON in {what}: nested deeper than {DEFAULT_LIMITS.max_depth} levels. The "
        "service's answer looks broken or hostile"
    )


# --------------------------------------------------------------------------- sending


class Sender:
    """One pooled HTTP client whose every request is checked, bounded and redirect-safe.

    Args:
        timeout: seconds a whole exchange may take by default (redirects and body included).
        headers: headers sent with every request.
        follow_redirects: follow 3xx responses that stay within the request's base.
        verify: verify TLS certificates.
        trust_env: read proxy settings from the environment.
        max_retry_after: the longest pause a host's ``Retry-After`` imposes on its requests.
        backoff: the pause after a 429 that does not say how long to wait.
    """

    def __init__(
        self,
        *,
        timeout: float,
        headers: Mapping[str, str] | None = None,
        follow_redirects: bool = True,
        verify: bool = True,
        trust_env: bool = True,
        max_retry_after: float = DEFAULT_MAX_RETRY_AFTER,
        backoff: float = 0.05,
    ) -> None:
        self.timeout = timeout
        self.max_retry_after = max_retry_after
        self.backoff = backoff
        self.headers = dict(headers or {})
        self.follow_redirects = follow_redirects
        self.verify = verify
        self.trust_env = trust_env
        self._client: httpx2.Client | None = None
        self._lock = threading.Lock()

    def client(self) -> httpx2.Client:
        """The pooled client (made on first use; it never follows redirects by itself)."""
        client = self._client
        if client is not None:
            return client
        with self._lock:
            if self._client is None:
                import httpx2

                self._client = httpx2.Client(
                    timeout=self.timeout,
                    follow_redirects=False,
                    verify=self.verify,
                    headers=self.headers,
                    trust_env=self.trust_env,
                )
            return self._client

    def close(self) -> None:
        """Close the pooled client. Idempotent."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def send(
        self,
        method: str,
        url: str,
        base: Base,
        *,
        headers: Mapping[str, str] | None = None,
        body: Mapping[str, Any] | None = None,
        max_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        timeout: float | None = None,
    ) -> Reply:
        """Send one request within ``base`` and read its response within ``max_bytes``.

        Waits first while the base's host is paused by a rate limit, and pauses it when the
        response is one (see :mod:`~fms_dgt.core.tools.backoff`).

        Args:
            method: the HTTP method.
            url: the full URL (already encoded).
            base: where the request and its redirects may go.
            headers: the request's own headers.
            body: the client's body keywords (``content=`` or ``files=``).
            max_bytes: the largest body read (decompressed).
            timeout: seconds for the whole exchange (default: the sender's).

        Raises:
            RequestRefusedError: the URL, or a redirect, leaves ``base`` (nothing sent there).
            ResponseTooLargeError: the body went past ``max_bytes``.
            HTTPTransportError: no connection, a timeout, too many redirects, a broken body.
        """
        import httpx2

        target = _checked(url, base, method)
        host = (base.scheme, base.host, base.port)
        HOSTS.wait(host)
        started = time.monotonic()
        deadline = started + (timeout or self.timeout)
        exchange = _Exchange(method, dict(headers or {}), dict(body or {}))
        try:
            reply = self._follow(exchange, target, base, deadline, max_bytes)
            reply.elapsed_ms = (time.monotonic() - started) * 1000
            retry_after = reply.headers.get("retry-after")
            HOSTS.observe(host, reply.status, retry_after, cap=self.max_retry_after, backoff=self.backoff)
            return reply
        except httpx2.TimeoutException as exc:
            raise HTTPTransportError(_failed(exchange, target, exc), timed_out=True) from None
        except httpx2.HTTPError as exc:
            raise HTTPTransportError(_failed(exchange, target, exc)) from None

    def _follow(
        self, exchange: _Exchange, target: httpx2.URL, base: Base, deadline: float, max_bytes: int
    ) -> Reply:
        import httpx2

        client = self.client()
        for _ in range(MAX_REDIRECTS + 1):
            remaining = _remaining(deadline, exchange, target)
            # The client's own timeout serves while it is within a few ms of what is left.
            timeout = remaining if remaining < self.timeout - 0.005 else httpx2.USE_CLIENT_DEFAULT
            request = client.build_request(
                exchange.method, target, headers=exchange.headers, timeout=timeout, **exchange.body
            )
            response = client.send(request, stream=True)
            try:
                location = self._redirect(response)
                if location is None:
                    return _read(response, max_bytes, deadline, exchange)
            finally:
                response.close()
            target = exchange.redirected(response.status_code, target, location, base)
        raise HTTPTransportError(
            f"too many redirects for {exchange.method} {_shown(target)}: more than {MAX_REDIRECTS}. "
            "Point the tool at the final URL"
        )

    def _redirect(self, response: httpx2.Response) -> str | None:
        if not self.follow_redirects or response.status_code not in _REDIRECTS:
            return None
        location = response.headers.get("location")
        return location if isinstance(location, str) and location else None


@dataclass(slots=True)
class _Exchange:
    """The request being sent, as it changes across redirects."""

    method: str
    headers: dict[str, str]
    body: dict[str, Any]

    def redirected(self, status: int, current: httpx2.URL, location: str, base: Base) -> httpx2.URL:
        """The next hop's URL (checked against ``base``); the method and body as the status says."""
        import httpx2

        try:
            target = current.join(location)
        except httpx2.InvalidURL as exc:
            raise HTTPTransportError(f"invalid redirect from {_shown(current)}: {exc}") from None
        if not base.admits(target):
            raise RequestRefusedError(
                f"redirect refused for {self.method} {_shown(current)}: HTTP {status} points to "
                f"{_shown(target)}, outside the declared base {redact(base.url)}. Redirects are "
                "followed only within the base, so no credential leaves it; set base_url to the "
                "server that answers"
            )
        if _becomes_get(status, self.method):
            self.method, self.body = "GET", {}
            self.headers = {k: v for k, v in self.headers.items() if k.lower() != "content-type"}
        return target


def _becomes_get(status: int, method: str) -> bool:
    # What browsers and httpx do: 303 always, 302 except HEAD/QUERY, 301 for POST.
    return (
        (status == 303 and method != "HEAD")
        or (status == 302 and method not in ("HEAD", "QUERY"))
        or (status == 301 and method == "POST")
    )


def _checked(url: str, base: Base, method: str) -> httpx2.URL:
    import httpx2

    try:
        target = httpx2.URL(url)
    except httpx2.InvalidURL as exc:
        raise RESTCallError(f"invalid URL for {method}: {redact(str(exc))}") from None
    if not base.admits(target):
        raise RequestRefusedError(
            f"request refused: {method} {_shown(target)} leaves the declared base "
            f"{redact(base.url)} (another origin, or a path outside it). Nothing was sent"
        )
    return target


def _remaining(deadline: float, exchange: _Exchange, target: httpx2.URL) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise HTTPTransportError(f"{exchange.method} {_shown(target)} ran out of time", timed_out=True)
    return left


def _read(response: httpx2.Response, max_bytes: int, deadline: float, exchange: _Exchange) -> Reply:
    _refuse_declared_size(response, max_bytes, exchange)
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():  # decompressed, in pieces of at most 1 MiB
        size += len(chunk)
        if size > max_bytes:
            raise _too_large(response, max_bytes, exchange)
        if time.monotonic() > deadline:
            raise HTTPTransportError(
                f"{exchange.method} {_shown(response.url)} ran out of time reading the body",
                timed_out=True,
            )
        chunks.append(chunk)
    return Reply(
        status=response.status_code,
        reason=response.reason_phrase,
        headers=response.headers,
        content=b"".join(chunks),
        url=response.url,
    )


def _refuse_declared_size(response: httpx2.Response, max_bytes: int, exchange: _Exchange) -> None:
    """Stop before reading when an uncompressed body declares a size past the cap."""
    declared = response.headers.get("content-length", "")
    if not (declared.isascii() and declared.isdigit() and (len(declared) > 18 or int(declared) > max_bytes)):
        return
    if response.headers.get("content-encoding", "identity").strip().lower() in ("", "identity"):
        raise _too_large(response, max_bytes, exchange)


def _too_large(response: httpx2.Response, max_bytes: int, exchange: _Exchange) -> ResponseTooLargeError:
    return ResponseTooLargeError(
        f"response too large from {exchange.method} {_shown(response.url)}: more than "
        f"{max_bytes:,} bytes (decompressed). Raise max_response_bytes on the engine if the "
        "service really answers that much",
        limit=max_bytes,
    )


def _shown(url: httpx2.URL) -> str:
    """A URL as it may appear in a message: no userinfo, no query, secrets hidden."""
    return redact(str(url.copy_with(username=None, password=None, query=None, fragment=None)))


def _failed(exchange: _Exchange, target: httpx2.URL, exc: Exception) -> str:
    return (
        f"request failed for {exchange.method} {_shown(target)}: {type(exc).__name__}: "
        f"{redact(str(exc))}. Check that the server is reachable and the URL is right"
    )
