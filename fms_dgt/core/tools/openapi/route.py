"""The typed route of one REST tool: everything needed to rebuild its HTTP request.

The ``rest`` loader builds one :class:`Route` per operation and stores ``route.to_dict()`` under
``Tool.metadata["route"]``, so tool metadata stays plain JSON (``fms-dgt tools list --json`` writes
it and tools are read back from such files). The ``rest`` engine reads it with :func:`route_of`,
which checks every field: a tool edited by hand, or one that was never a REST operation, fails
with a message naming the tool and the field instead of a ``KeyError`` half-way through a request.

The dictionary form keeps the OpenAPI spellings (``in``, ``bearerFormat``) and leaves out fields
that hold their default, so it reads like the spec it came from.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote

from fms_dgt.errors import RouteError

if TYPE_CHECKING:
    from fms_dgt.core.tools.data_objects import Tool

__all__ = [
    "LOCATIONS",
    "ROUTE_KEY",
    "ArgumentSpec",
    "BodySpec",
    "Interner",
    "ResponseSpec",
    "Route",
    "RouteError",
    "SecurityScheme",
    "path_problem",
    "route_of",
]

#: The key of ``Tool.metadata`` that holds the route's dictionary form.
ROUTE_KEY = "route"
#: Where an argument goes in the request.
LOCATIONS = ("path", "query", "header", "cookie", "body")
PLACEMENTS = ("flattened", "nested")
_FIX = "Load the tool again with the rest loader"
_T = TypeVar("_T")


_SEPARATORS = re.compile(r"[/\\]")


def path_problem(path: str) -> str | None:
    """Why a path template could send requests outside the server's base path, or None.

    A template must start with ``/`` (``3/digits`` or ``@host:port/x`` glued to a base URL would
    change its host or last segment) and have no dot segments (``/../x``, ``/a/./b``), also when
    percent-encoded (``%2e%2e``) or separated by backslashes, which some servers read as ``/``.
    """
    if not path.startswith("/"):
        return "it does not start with '/', so it would be glued to the server URL's host or last segment"
    for segment in _SEPARATORS.split(unquote(path)):
        if segment in (".", ".."):
            return f"it has the dot segment {segment!r}, which would leave the server's base path"
    return None


def invalid_route(owner: str, field: str, why: str) -> RouteError:
    """A malformed field: ``invalid route of <owner> field <field>: <why>. <fix>``."""
    where = f" field {field}" if field else ""
    return RouteError(f"invalid route of {owner}{where}: {why}. {_FIX}", owner=owner, field=field)


class _Reader:
    """Typed access to one mapping of a route's dictionary form, with errors naming the field."""

    def __init__(self, data: Any, owner: str, where: str, allowed: frozenset[str]) -> None:
        if not isinstance(data, Mapping):
            raise invalid_route(owner, where, f"expected a mapping, got {type(data).__name__}")
        unknown = sorted(str(k) for k in data if k not in allowed)
        if unknown:
            raise invalid_route(owner, where, f"unknown key(s) {', '.join(unknown)}")
        self.data, self.owner, self.where = data, owner, where

    def _path(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def error(self, key: str, why: str) -> RouteError:
        return invalid_route(self.owner, self._path(key), why)

    def get(self, key: str, kind: type[_T], default: _T | None = None, *, required: bool = False) -> Any:
        if key not in self.data:
            if required:
                raise self.error(key, "missing")
            return default
        value = self.data[key]
        if not isinstance(value, kind):
            raise self.error(key, f"expected {kind.__name__}, got {type(value).__name__}")
        return value

    def strings(self, key: str) -> tuple[str, ...]:
        value = self.get(key, list, [])
        if not all(isinstance(v, str) for v in value):
            raise self.error(key, "expected a list of strings")
        return tuple(value)

    def choice(self, key: str, options: tuple[str, ...]) -> str:
        value: str = self.get(key, str, required=True)
        if value not in options:
            raise self.error(key, f"{value!r} is not one of {', '.join(options)}")
        return value

    def mapping(self, key: str, read: Callable[[Any, str], _T]) -> Mapping[str, _T]:
        value = self.get(key, dict, {})
        return MappingProxyType({str(k): read(v, f"{self._path(key)}.{k}") for k, v in value.items()})

    def optional(self, key: str, read: Callable[[Any, str], _T]) -> _T | None:
        value = self.data.get(key)
        return None if value is None else read(value, self._path(key))


def _init_fields(cls: type) -> list[str]:
    return [f.name for f in fields(cls) if f.init]


def _keys(cls: type, renames: Mapping[str, str]) -> frozenset[str]:
    return frozenset(renames.get(name, name) for name in _init_fields(cls))


class _SharedForm:
    """The JSON form of a frozen spec, built once when the loader shares the spec between tools.

    Subclasses declare the ``_json`` dataclass field (not compared, not printed) and
    ``_build_json``; the memo is the same pattern as ``Tool``'s fingerprint.
    """

    __slots__ = ()
    _json: dict[str, Any] | None

    def _build_json(self) -> dict[str, Any]:
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, a new dictionary."""
        return self._build_json()

    def shared_dict(self) -> dict[str, Any]:
        """The JSON form, built once and shared: read it, never change it."""
        built = self._json
        if built is None:
            built = self._build_json()
            object.__setattr__(self, "_json", built)
        return built


_Spec = TypeVar("_Spec", bound=_SharedForm)


class Interner:
    """Makes one spec object per distinct content, to share between the tools of one load.

    Real specs repeat the same parameters and responses across hundreds of operations
    (Kubernetes: about ten parameters per operation, a few hundred distinct), and a frozen
    dataclass costs several times a dict to build; sharing also lets their JSON forms be shared.
    """

    def __init__(self) -> None:
        self._made: dict[tuple[Any, ...], Any] = {}

    def make(self, cls: type[_Spec], **fields: Any) -> _Spec:
        """``cls(**fields)``, or the equal one made before. Field values must be hashable."""
        key = (cls, *fields.items())
        made: _Spec | None = self._made.get(key)
        if made is None:
            made = self._made[key] = cls(**fields)
        return made


@dataclass(frozen=True, slots=True, kw_only=True)
class ArgumentSpec(_SharedForm):
    """Where one tool argument goes in the request and how it is serialised.

    Attributes:
        location: ``path``, ``query``, ``header``, ``cookie`` or ``body`` (``in`` in dict form).
        name: the name in the request (parameter name or body field).
        style: OpenAPI serialisation style; None for the location's default.
        explode: OpenAPI ``explode``; None for the style's default.
        allow_reserved: query values keep reserved characters unencoded.
        content_type: the body's media type, or the parameter's when it uses ``content``.
        part_content_type: a multipart field's own ``contentType`` from ``encoding``.
        file: the field is a file upload.
        whole_body: the argument is the whole (nested) body.
        renamed_from: the argument was renamed from this name because of a clash.
    """

    location: str
    name: str
    style: str | None = None
    explode: bool | None = None
    allow_reserved: bool = False
    content_type: str | None = None
    part_content_type: str | None = None
    file: bool = False
    whole_body: bool = False
    renamed_from: str | None = None
    _json: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)

    def _build_json(self) -> dict[str, Any]:
        # In dict form ``in`` and ``name`` come first, then only the fields that are set.
        out: dict[str, Any] = {"in": self.location, "name": self.name}
        if self.style is not None:
            out["style"] = self.style
        if self.explode is not None:
            out["explode"] = self.explode
        if self.allow_reserved:
            out["allow_reserved"] = True
        if self.content_type is not None:
            out["content_type"] = self.content_type
        if self.part_content_type is not None:
            out["part_content_type"] = self.part_content_type
        if self.file:
            out["file"] = True
        if self.whole_body:
            out["whole_body"] = True
        if self.renamed_from is not None:
            out["renamed_from"] = self.renamed_from
        return out

    @classmethod
    def from_dict(cls, data: Any, owner: str = "tool", where: str = "argument") -> ArgumentSpec:
        """Read the JSON form.

        Raises:
            RouteError: a field is missing, unknown or of the wrong type, or the path template could
                leave the server's base path (:func:`path_problem`).
        """
        read = _Reader(data, owner, where, _ARGUMENT_KEYS)
        return cls(
            location=read.choice("in", LOCATIONS),
            name=read.get("name", str, required=True),
            style=read.get("style", str),
            explode=read.get("explode", bool),
            allow_reserved=read.get("allow_reserved", bool, False),
            content_type=read.get("content_type", str),
            part_content_type=read.get("part_content_type", str),
            file=read.get("file", bool, False),
            whole_body=read.get("whole_body", bool, False),
            renamed_from=read.get("renamed_from", str),
        )


_ARGUMENT_KEYS = _keys(ArgumentSpec, {"location": "in"})


@dataclass(frozen=True, slots=True, kw_only=True)
class BodySpec(_SharedForm):
    """The request body as a whole.

    Attributes:
        content_type: the media type sent (a wildcard in the spec is sent as JSON).
        required: the spec requires a body, so one is sent even when no field is given.
        placement: ``flattened`` (one argument per field) or ``nested`` (one argument).
        alternatives: the other media types the spec offers.
    """

    content_type: str
    required: bool = False
    placement: str = "flattened"
    alternatives: tuple[str, ...] = ()
    _json: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)

    def _build_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "content_type": self.content_type,
            "required": self.required,
            "placement": self.placement,
        }
        if self.alternatives:
            out["alternatives"] = list(self.alternatives)
        return out

    @classmethod
    def from_dict(cls, data: Any, owner: str = "tool", where: str = "body") -> BodySpec:
        """Read the JSON form.

        Raises:
            RouteError: a field is missing, unknown or of the wrong type, or the path template could
                leave the server's base path (:func:`path_problem`).
        """
        read = _Reader(data, owner, where, _keys(cls, {}))
        return cls(
            content_type=read.get("content_type", str, required=True),
            required=read.get("required", bool, False),
            placement=read.choice("placement", PLACEMENTS),
            alternatives=read.strings("alternatives"),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ResponseSpec(_SharedForm):
    """The success response the output schema describes.

    Attributes:
        status: the status code as written in the spec (``200``, ``2XX``, ``default``).
        content_type: its media type, None when it has no content.
    """

    status: str
    content_type: str | None = None
    _json: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)

    def _build_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status}
        if self.content_type is not None:
            out["content_type"] = self.content_type
        return out

    @classmethod
    def from_dict(cls, data: Any, owner: str = "tool", where: str = "response") -> ResponseSpec:
        """Read the JSON form.

        Raises:
            RouteError: a field is missing, unknown or of the wrong type, or the path template could
                leave the server's base path (:func:`path_problem`).
        """
        read = _Reader(data, owner, where, _keys(cls, {}))
        return cls(status=read.get("status", str, required=True), content_type=read.get("content_type", str))


_SCHEME_NAMES = {"location": "in", "bearer_format": "bearerFormat", "open_id_connect_url": "openIdConnectUrl"}
_SCHEME_KEYS = ("type", "scheme", "bearerFormat", "in", "name", "openIdConnectUrl")


@dataclass(frozen=True, slots=True, kw_only=True)
class SecurityScheme(_SharedForm):
    """One security scheme of the spec (Swagger ``basic`` is written as ``http`` + ``basic``).

    Attributes:
        type: ``apiKey``, ``http``, ``oauth2``, ``openIdConnect`` or ``mutualTLS``.
        scheme: the HTTP auth scheme, lower case (``bearer``, ``basic``).
        bearer_format: a hint at the token's format.
        location: where an API key goes (``in``): ``header``, ``query`` or ``cookie``.
        name: the API key's header, query or cookie name.
        open_id_connect_url: the OpenID Connect discovery URL.
    """

    type: str | None = None
    scheme: str | None = None
    bearer_format: str | None = None
    location: str | None = None
    name: str | None = None
    open_id_connect_url: str | None = None
    _json: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)

    def _build_json(self) -> dict[str, Any]:
        # The spec's spelling (``in``, ``bearerFormat``), without unset fields.
        pairs = zip(_SCHEME_KEYS, self._values(), strict=True)
        return {key: value for key, value in pairs if value is not None}

    def _values(self) -> tuple[str | None, ...]:
        return (
            self.type,
            self.scheme,
            self.bearer_format,
            self.location,
            self.name,
            self.open_id_connect_url,
        )

    @classmethod
    def from_dict(cls, data: Any, owner: str = "tool", where: str = "security_scheme") -> SecurityScheme:
        """Read the JSON form (the spec's own spelling).

        Raises:
            RouteError: a field is unknown or not a string.
        """
        read = _Reader(data, owner, where, _keys(cls, _SCHEME_NAMES))
        return cls(**{name: read.get(_SCHEME_NAMES.get(name, name), str) for name in _init_fields(cls)})


Requirement = Mapping[str, tuple[str, ...]]


def _requirement(data: Any, owner: str, where: str) -> Requirement:
    if not isinstance(data, Mapping):
        why = f"expected a mapping of scheme names to scopes, got {type(data).__name__}"
        raise invalid_route(owner, where, why)
    out: dict[str, tuple[str, ...]] = {}
    for name, scopes in data.items():
        if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
            raise invalid_route(owner, f"{where}.{name}", "expected a list of scope names")
        out[str(name)] = tuple(scopes)
    return MappingProxyType(out)


def _freeze(value: Mapping[str, _T]) -> Mapping[str, _T]:
    return value if isinstance(value, MappingProxyType) else MappingProxyType(dict(value))


@dataclass(frozen=True, slots=True, kw_only=True)
class Route:
    """How to call one REST operation.

    Attributes:
        method: the HTTP method, upper case.
        path: the path template, e.g. ``/pets/{petId}``.
        base_url: the server URL requests go to (may be relative when the spec's server is).
        servers: every server URL the spec gives for the operation.
        arguments: per tool argument, where it goes (read-only mapping).
        body: the request body, None when the operation takes none.
        response: the success response, None when the spec defines none.
        security: the effective security requirements: alternatives, each mapping scheme names to
            scopes; an empty alternative means no credentials are needed.
        security_schemes: the schemes those requirements name.
        openapi_version: ``2.0``, ``3.0``, ``3.1`` or ``3.2``.
    """

    method: str
    path: str
    base_url: str
    servers: tuple[str, ...] = ()
    arguments: Mapping[str, ArgumentSpec] = field(default_factory=dict)
    body: BodySpec | None = None
    response: ResponseSpec | None = None
    security: tuple[Requirement, ...] = ()
    security_schemes: Mapping[str, SecurityScheme] = field(default_factory=dict)
    openapi_version: str = "3.0"

    def __post_init__(self) -> None:
        # Frozen all the way down: plain mappings become read-only views of private copies.
        if not self.method.isupper():
            object.__setattr__(self, "method", self.method.upper())
        object.__setattr__(self, "arguments", _freeze(self.arguments))
        object.__setattr__(self, "security_schemes", _freeze(self.security_schemes))
        if self.security:
            object.__setattr__(self, "security", tuple(map(_freeze, self.security)))

    def to_dict(self, *, shared: bool = False) -> dict[str, Any]:
        """The JSON form stored in ``Tool.metadata["route"]``.

        Args:
            shared: reuse the dictionaries of the specs (arguments, body, response, security
                schemes) that several routes hold. The loader does: tools are read-only, real
                specs repeat the same parameters across hundreds of operations, and fewer objects
                load faster. By default every dictionary is new.
        """
        form = _SharedForm.shared_dict if shared else _SharedForm.to_dict
        body, response = self.body, self.response
        return {
            "method": self.method,
            "path": self.path,
            "base_url": self.base_url,
            "servers": list(self.servers),
            "arguments": {k: form(v) for k, v in self.arguments.items()},
            "body": None if body is None else form(body),
            "response": None if response is None else form(response),
            "security": [{k: list(v) for k, v in r.items()} for r in self.security],
            "security_schemes": {k: form(v) for k, v in self.security_schemes.items()},
            "openapi_version": self.openapi_version,
        }

    @classmethod
    def from_dict(cls, data: Any, owner: str = "tool") -> Route:
        """Read and check the JSON form.

        Args:
            data: what :meth:`to_dict` wrote.
            owner: who the route belongs to, for error messages (a tool's qualified name).

        Raises:
            RouteError: a field is missing, unknown or of the wrong type, or the path template could
                leave the server's base path (:func:`path_problem`).
        """
        read = _Reader(data, owner, "", _keys(cls, {}))
        security = read.get("security", list, [])
        path = read.get("path", str, required=True)
        problem = path_problem(path)
        if problem:
            raise read.error("path", f"unsafe path template {path!r}: {problem}")
        return cls(
            method=read.get("method", str, required=True),
            path=path,
            base_url=read.get("base_url", str, required=True),
            servers=read.strings("servers"),
            arguments=read.mapping("arguments", lambda v, w: ArgumentSpec.from_dict(v, owner, w)),
            body=read.optional("body", lambda v, w: BodySpec.from_dict(v, owner, w)),
            response=read.optional("response", lambda v, w: ResponseSpec.from_dict(v, owner, w)),
            security=tuple(_requirement(r, owner, f"security.{i}") for i, r in enumerate(security)),
            security_schemes=read.mapping(
                "security_schemes", lambda v, w: SecurityScheme.from_dict(v, owner, w)
            ),
            openapi_version=read.get("openapi_version", str, "3.0"),
        )


def route_of(tool: Tool) -> Route:
    """The checked :class:`Route` of a tool loaded by the ``rest`` loader.

    Raises:
        RouteError: the tool has no route (it was not loaded from an OpenAPI spec) or its route is
            malformed.
    """
    data = tool.metadata.get(ROUTE_KEY)
    if data is None:
        raise RouteError(
            f"no route for tool {tool.qualified_name}: metadata[{ROUTE_KEY!r}] is missing, so it was "
            "not loaded by the rest loader. Load it with the rest loader or route its namespace to "
            "another engine",
            owner=tool.qualified_name,
        )
    return Route.from_dict(data, tool.qualified_name)
