"""Building the HTTP request of one call from a tool's :class:`~fms_dgt.core.tools.openapi.route.Route`.

The path is built from encoded pieces: the template's literal text is percent-encoded (a ``?`` or
``#`` in it cannot start a query or fragment) and path values are serialised by their style
(``simple``, ``label``, ``matrix``) and percent-encoded with no safe characters, so a value can
never change the path (``1/../../admin`` becomes one segment, ``..`` becomes ``%2E%2E``). Query
values follow ``form`` (exploded or not), ``spaceDelimited``, ``pipeDelimited``, ``tabDelimited``,
``deepObject`` and ``allowReserved`` (which keeps reserved characters, except ``#``, ``&``, ``=``
and ``+``, which would cut the query or change its pairs); headers use ``simple``; cookies go in
one ``Cookie`` header. Bodies are sent as JSON,
form-urlencoded (arrays repeated unless ``explode: false``, objects in bracket notation unless
their encoding says ``style: form``) or multipart.

Nothing here sends anything or imports an HTTP library: :func:`build_request` gives a
:class:`Request`, and :func:`body_content` the keyword arguments for the HTTP client's body.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

from fms_dgt.core.tools.openapi.media import FORM_URLENCODED, MULTIPART, is_json
from fms_dgt.core.tools.openapi.route import ArgumentSpec, BodySpec, Route, path_problem
from fms_dgt.errors import RESTCallError

__all__ = [
    "RESTCallError",
    "Request",
    "body_content",
    "build_request",
    "encoded_template",
    "path_value",
    "place",
    "query_pairs",
    "resolve_base_url",
]

# Reserved characters allowReserved keeps: all but "#" (it would end the query, dropping the
# parameters after it, an API key included) and "&", "=", "+" (they would add or split pairs).
_RESERVED = ":/?[]@!$'()*,;"
# A template's literal text keeps what RFC 3986 allows in a path, and "%" of existing escapes.
_PATH_SAFE = "/!$&'()*+,;=:@%"
_PLACEHOLDER = re.compile(r"(\{[^{}/]*\})")
_LONE_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_DELIMITERS = {"spaceDelimited": "%20", "pipeDelimited": "|", "tabDelimited": "%09"}
_NO_SPEC = ArgumentSpec(location="body", name="")


@dataclass(slots=True)
class Request:
    """An HTTP request being assembled from a call.

    Attributes:
        method: the HTTP method.
        url: the base URL (no trailing slash).
        path: the path, placeholders replaced as arguments are placed.
        query: encoded ``name=value`` pairs.
        headers: header values.
        cookies: encoded ``name=value`` cookie pairs.
        fields: body fields by their request name, with their argument spec.
        body: the whole body, when an argument carries it (``has_body``).
        has_body: ``body`` was set (it may be None on purpose).
        auth_applied: the credentials applied, by name.
    """

    method: str
    url: str
    path: str
    query: list[str] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    cookies: list[str] = field(default_factory=list)
    fields: dict[str, tuple[Any, ArgumentSpec]] = field(default_factory=dict)
    body: Any = None
    has_body: bool = False
    auth_applied: list[str] = field(default_factory=list)

    def full_url(self) -> str:
        """Base URL, path and query."""
        return self.url + self.path + ("?" + "&".join(self.query) if self.query else "")


def resolve_base_url(route: Route, override: str | None, owner: str) -> str:
    """The absolute base URL requests go to: ``override`` when given, else the route's.

    Raises:
        RESTCallError: the URL is not absolute (the spec's server is relative).
    """
    base = override or route.base_url
    if not base.startswith(("http://", "https://")):
        raise RESTCallError(
            f"no absolute base URL for {owner}: the spec gives {base!r}. Set base_url on the rest "
            "engine (or the loader)"
        )
    return base.rstrip("/")


def build_request(route: Route, arguments: Mapping[str, Any], base_url: str, owner: str) -> Request:
    """The request for one call: every argument placed by its spec.

    Args:
        route: the tool's route.
        arguments: the call's arguments.
        base_url: the absolute base URL (see :func:`resolve_base_url`).
        owner: the tool's qualified name, for error messages.

    Raises:
        RESTCallError: an argument the route does not know, a path placeholder left unfilled, or
            a path template that could leave the base path (:func:`~.route.path_problem`; a route
            built in code is not checked by :meth:`Route.from_dict`).
    """
    path, problem = _template(route.path)
    if problem:
        raise RESTCallError(
            f"unsafe path template {route.path[:200]!r} for {owner}: {problem}. Nothing was sent"
        )
    request = Request(route.method, base_url, path)
    specs = route.arguments
    for arg, value in arguments.items():
        spec = specs.get(arg)
        if spec is None:
            raise RESTCallError(
                f"unknown argument {arg!r} for {owner}: accepted are "
                f"{', '.join(sorted(specs)) or '(none)'}. Remove it"
            )
        place(request, spec, value)
    if "{" in request.path:
        raise RESTCallError(
            f"missing path parameter for {owner}: {request.path} still has a placeholder. Pass every "
            "path argument"
        )
    return request


@functools.lru_cache(maxsize=4096)
def _template(path: str) -> tuple[str, str | None]:
    problem = path_problem(path)
    return ("", problem) if problem else (encoded_template(path), None)


def encoded_template(path: str) -> str:
    """A path template with its literal text percent-encoded and its ``{placeholders}`` kept."""
    pieces = _PLACEHOLDER.split(path)
    for i in range(0, len(pieces), 2):  # even pieces are literal text
        pieces[i] = quote(_LONE_PERCENT.sub("%25", pieces[i]), safe=_PATH_SAFE)
    return "".join(pieces)


# --------------------------------------------------------------------------- parameters


def place(request: Request, spec: ArgumentSpec, value: Any) -> None:
    """Put one value where its spec says.

    Raises:
        RESTCallError: a path parameter whose placeholder is not in the path.
    """
    location, name = spec.location, spec.name
    explode = spec.explode is True
    if spec.content_type and location in ("path", "header", "cookie"):
        value = json.dumps(value, separators=(",", ":"))  # a parameter with content: a JSON value
    if location == "path":
        _place_path(request, spec, value)
    elif location == "query":
        if value is not None:
            request.query.extend(query_pairs(name, value, spec))
    elif location == "header":
        request.headers[name] = _simple(value, explode)
    elif location == "cookie":
        request.cookies.append(f"{name}={quote(_simple(value, False), safe='')}")
    elif spec.whole_body:
        request.body, request.has_body = value, True
    else:
        request.fields[name] = (value, spec)


def _place_path(request: Request, spec: ArgumentSpec, value: Any) -> None:
    token = "{" + spec.name + "}"
    if token not in request.path:
        raise RESTCallError(f"path parameter {spec.name!r} has no {token} placeholder in {request.path}")
    text = path_value(spec.name, value, spec.style or "simple", spec.explode is True)
    request.path = request.path.replace(token, text)


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


def path_value(name: str, value: Any, style: str, explode: bool) -> str:
    """One path parameter serialised by ``style`` (``simple``, ``label`` or ``matrix``)."""
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
        if explode and isinstance(value, dict):
            return ";" + ";".join(parts)
        return f";{name}=" + ",".join(parts)
    return ",".join(parts)


def query_pairs(name: str, value: Any, spec: ArgumentSpec) -> list[str]:
    """One query parameter as encoded ``name=value`` pairs, by its style, explode and allowReserved."""
    style = spec.style or "form"
    explode = spec.explode if spec.explode is not None else style == "form"
    safe = _RESERVED if spec.allow_reserved else ""

    def q(text: Any) -> str:
        return quote(_scalar(text), safe=safe)

    key = quote(name, safe="")
    if spec.content_type:
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
        return [f"{key}=" + _DELIMITERS.get(style, ",").join(q(v) for v in value)]
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


# --------------------------------------------------------------------------- bodies


def body_content(request: Request, body: BodySpec | None) -> dict[str, Any]:
    """The HTTP client's body keyword arguments (``content=`` or ``files=``); sets ``Content-Type``.

    Empty when the route has no body, or when the call gave no body field and the body is optional.
    """
    if body is None or not (request.has_body or request.fields or body.required):
        return {}
    content_type = body.content_type
    lower = content_type.lower()
    if lower.startswith(MULTIPART):
        return _multipart(request)
    request.headers.setdefault("Content-Type", content_type)
    value = request.body if request.has_body else {k: v for k, (v, _) in request.fields.items()}
    if lower.startswith(FORM_URLENCODED):
        specs = {k: s for k, (_, s) in request.fields.items()}
        return {"content": _form_encode(value, specs).encode()}
    if is_json(lower):
        return {"content": json.dumps(value, ensure_ascii=False).encode()}
    if isinstance(value, bytes):
        return {"content": value}
    return {"content": (value if isinstance(value, str) else json.dumps(value)).encode()}


def _form_encode(value: Any, specs: Mapping[str, ArgumentSpec]) -> str:
    if not isinstance(value, dict):
        return _scalar(value)
    pairs: list[tuple[str, str]] = []
    for name, item in value.items():
        spec = specs.get(name, _NO_SPEC)
        if isinstance(item, dict) and spec.style == "form":
            pairs.extend((str(k), _scalar(v)) for k, v in item.items())
        elif isinstance(item, dict) or spec.style == "deepObject":
            # Objects default to bracket notation (meta[key]=value), what form APIs such as
            # Stripe's expect; an explicit form style spreads the keys instead.
            pairs.extend((k, _scalar(v)) for k, v in _deep_pairs(name, item))
        elif isinstance(item, list) and spec.explode is not False:
            pairs.extend((name, _scalar(v)) for v in item)
        elif isinstance(item, list):
            pairs.append((name, ",".join(_scalar(v) for v in item)))
        elif item is not None:
            pairs.append((name, _scalar(item)))
    return urlencode(pairs)


def _multipart(request: Request) -> dict[str, Any]:
    # Every field goes in ``files`` (plain fields without a file name) so the body is multipart
    # even when no file is attached.
    parts: list[tuple[str, tuple[str | None, bytes] | tuple[str, bytes, str]]] = []
    for name, (value, spec) in request.fields.items():
        if spec.file:
            parts.append((name, _file_part(name, value, spec)))
        else:
            for item in value if isinstance(value, list) else [value]:
                parts.append((name, (None, _scalar(item).encode())))
    if request.has_body:
        parts.append(("file", _file_part("file", request.body, _NO_SPEC)))
    return {"files": parts}


def _file_part(name: str, value: Any, spec: ArgumentSpec) -> tuple[str, bytes, str]:
    kind = spec.part_content_type or "application/octet-stream"
    data = value.encode() if isinstance(value, str) else json.dumps(value).encode()
    return name, data, kind
