"""One OpenAPI operation as the fields of one tool.

:class:`OperationConverter` builds, for one ``(path, method)`` pair, the tool's description, input
schema (parameters plus request body), output schema (success response) and the metadata the REST
engine needs to rebuild the request: per argument its location (``path``, ``query``, ``header``,
``cookie``, ``body``), original name, style/explode and content type; the method, path, base URL,
tags, deprecation and security.

Body placement: an object body with ``properties`` is *flattened* (each property is an argument) in
``flatten`` mode; any other body, and every body in ``nested`` mode, is one argument named ``body``
(Swagger 2.0: the body parameter's name). Name clashes are settled in the order path, query,
header, cookie, body: the first keeps the name, a later one becomes ``<location>_<name>`` (then
``_2``, ``_3``... if still taken), and the rename is recorded in its argument metadata.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

from fms_dgt.core.tools.openapi.documents import (
    DocumentStore,
    RefError,
    escape_pointer,
    is_url,
)
from fms_dgt.core.tools.openapi.schemas import REQUEST, RESPONSE, SchemaCompiler

__all__ = ["METHODS", "OperationConverter", "OperationError", "ToolFields", "iter_operations", "spec_version"]

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace", "query")
LOCATIONS = ("path", "query", "header", "cookie")
_IGNORED_HEADERS = frozenset({"accept", "content-type", "authorization"})
_SWAGGER_SCHEMA_KEYS = (
    "type",
    "format",
    "items",
    "enum",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
)
_COLLECTION_FORMATS = {
    "csv": ("form", False),
    "ssv": ("spaceDelimited", False),
    "tsv": ("tabDelimited", False),
    "pipes": ("pipeDelimited", False),
    "multi": ("form", True),
}
_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
_SLUG = re.compile(r"[^A-Za-z0-9]+")
_SCHEME_KEYS = ("type", "scheme", "bearerFormat", "in", "name", "openIdConnectUrl")


class OperationError(Exception):
    """An operation cannot be converted; the loader skips it and reports why."""


@dataclass(slots=True)
class ToolFields:
    """Everything a tool needs, before its name is made unique."""

    name: str
    description: str
    parameters: dict[str, Any]
    output_parameters: dict[str, Any]
    metadata: dict[str, Any]


@dataclass(slots=True)
class Operation:
    """Where one operation sits in the spec."""

    path: str
    method: str
    node: dict[str, Any]
    item: dict[str, Any]
    uri: str
    pointer: str


def spec_version(root: Mapping[str, Any]) -> str | None:
    """``2.0``, ``3.0``, ``3.1``, ``3.2`` (major.minor) or None when the document is no OpenAPI spec."""
    if str(root.get("swagger", "")).startswith("2."):
        return "2.0"
    version = root.get("openapi")
    if isinstance(version, str) and re.match(r"^3\.[0-2](\.|$)", version):
        return version[:3]
    return None


def iter_operations(store: DocumentStore) -> Iterable[Operation | tuple[str, str]]:
    """Every operation under ``paths`` in document order; path-level ``$ref`` followed.

    A path item that cannot be read yields ``(pointer, reason)`` for the caller to report.
    """
    paths = store.root.get("paths") or {}
    for path, raw in paths.items():
        pointer = f"/paths/{escape_pointer(str(path))}"
        uri = store.root_uri
        item = raw
        if isinstance(raw, dict) and isinstance(raw.get("$ref"), str):
            try:
                target, item = store.resolve(raw["$ref"], uri)
            except RefError as exc:
                yield pointer, exc.reason
                continue
            uri = target.uri
        if not isinstance(item, dict):
            yield pointer, f"path item is a {type(item).__name__}, not an object"
            continue
        yield from _item_operations(str(path), item, uri, pointer)


def _item_operations(path: str, item: dict[str, Any], uri: str, pointer: str) -> Iterable[Operation]:
    for method in METHODS:
        node = item.get(method)
        if node is not None:
            yield Operation(path, method, node, item, uri, f"{pointer}/{method}")
    extra = item.get("additionalOperations")
    if isinstance(extra, dict):
        for method, node in extra.items():
            yield Operation(
                path, str(method).lower(), node, item, uri, f"{pointer}/additionalOperations/{method}"
            )


@dataclass(slots=True)
class _Param:
    """One resolved parameter and the document it was read in."""

    node: dict[str, Any]
    uri: str


@dataclass(slots=True)
class _BodySource:
    """Where a request body's schema comes from and how the spec describes it.

    Attributes:
        schema: the body's schema node (maybe a ``$ref``).
        uri: the document it was read in.
        name: the argument name when the body is nested.
        required: the spec's ``required`` value for the body (None when not written).
        encoding: per-field ``encoding`` of a form media type.
    """

    schema: Any
    uri: str
    name: str
    required: Any
    encoding: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class _Builder:
    """The input schema and argument metadata of one tool, as it is assembled."""

    properties: dict[str, Any] = field(default_factory=dict)
    required: list[str] = field(default_factory=list)
    arguments: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, name: str, location: str, schema: Any, meta: dict[str, Any], required: bool) -> str:
        arg = name
        if arg in self.properties:
            arg = f"{location}_{name}"
            n = 1
            while arg in self.properties:
                n += 1
                arg = f"{location}_{name}_{n}"
            meta["renamed_from"] = name
        self.properties[arg] = schema
        self.arguments[arg] = {"in": location, "name": name, **meta}
        if required:
            self.required.append(arg)
        return arg

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "object", "properties": self.properties}
        if self.required:
            out["required"] = self.required
        return out


class OperationConverter:
    """Converts the operations of one spec.

    Args:
        store: the spec's documents.
        compiler: shared schema translation for this load.
        body_mode: ``flatten`` or ``nested`` (see the module docstring).
        base_url: overrides every server URL of the spec.
    """

    def __init__(
        self, store: DocumentStore, compiler: SchemaCompiler, *, body_mode: str, base_url: str | None
    ) -> None:
        self.store = store
        self.compiler = compiler
        self.body_mode = body_mode
        self.base_url = base_url
        self.root: dict[str, Any] = store.root
        self.version = spec_version(self.root) or "3.0"
        self.swagger = self.version == "2.0"
        self._schemes = self._security_schemes()

    def convert(self, op: Operation) -> ToolFields:
        """The tool fields of one operation.

        Raises:
            OperationError: the operation cannot be converted (the message says why).
        """
        if not isinstance(op.node, dict):
            raise OperationError(f"operation is a {type(op.node).__name__}, not an object")
        try:
            return self._convert(op)
        except RefError as exc:
            raise OperationError(exc.reason) from exc
        except RecursionError as exc:  # absurdly deep inline schemas, or self-nesting YAML aliases
            raise OperationError(
                "a schema is nested too deeply to convert; move parts into components and $ref them"
            ) from exc

    def _convert(self, op: Operation) -> ToolFields:
        builder = _Builder()
        params = self._parameters(op)
        for param in sorted(params, key=lambda p: _location_rank(p.node)):
            self._add_parameter(builder, param, op)
        body = self._body(builder, op, params)
        parameters = self.compiler.attach_defs(builder.schema(), REQUEST)
        output, response = self._output(op)
        notes = [*builder.notes, *self.compiler.def_notes(parameters, REQUEST)]
        metadata = self._metadata(op, builder, body, response, notes)
        return ToolFields(_tool_name(op), _description(op), parameters, output, metadata)

    # ------------------------------------------------------------------ parameters

    def _parameters(self, op: Operation) -> list[_Param]:
        merged: dict[tuple[str, str], _Param] = {}
        for node, where in (
            (op.item.get("parameters"), "path item"),
            (op.node.get("parameters"), "operation"),
        ):
            if node is None:
                continue
            if not isinstance(node, list):
                raise OperationError(f"{where} parameters is a {type(node).__name__}, not a list")
            for raw in node:
                param = self._resolve_param(raw, op.uri)
                merged[(param.node["name"], param.node["in"])] = param
        return list(merged.values())

    def _resolve_param(self, raw: Any, uri: str) -> _Param:
        if isinstance(raw, dict) and isinstance(raw.get("$ref"), str):
            target, raw = self.store.resolve(raw["$ref"], uri)
            uri = target.uri
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
            raise OperationError(f"parameter {raw!r:.80} has no name")
        allowed = (*LOCATIONS, "body", "formData") if self.swagger else LOCATIONS
        if raw.get("in") not in allowed:
            raise OperationError(
                f"parameter {raw['name']!r} has location in: {raw.get('in')!r}; OpenAPI "
                f"{self.version} allows {', '.join(allowed)}"
            )
        return _Param(raw, uri)

    def _add_parameter(self, builder: _Builder, param: _Param, op: Operation) -> None:
        node = param.node
        location = node["in"]
        if location in ("body", "formData"):
            return
        if location == "header" and not self.swagger and node["name"].lower() in _IGNORED_HEADERS:
            builder.notes.append(f"header parameter {node['name']!r} ignored (OpenAPI 3 reserves it)")
            return
        schema, meta = self._parameter_schema(param, op)
        required = location == "path" or node.get("required") is True
        builder.add(node["name"], location, schema, meta, required)

    def _parameter_schema(self, param: _Param, op: Operation) -> tuple[Any, dict[str, Any]]:
        node = param.node
        meta = _style(node, self.swagger)
        if self.swagger:
            raw: Any = {k: node[k] for k in _SWAGGER_SCHEMA_KEYS if k in node}
        elif isinstance(node.get("content"), dict) and node["content"]:
            content_type, media = next(iter(node["content"].items()))
            meta["content_type"] = content_type
            raw = media.get("schema", {}) if isinstance(media, dict) else {}
        else:
            raw = node.get("schema", {})
        pointer = f"{op.pointer}/parameters/{node['name']}"
        compiled = self.compiler.compile(raw, param.uri, REQUEST, pointer)
        schema = _annotate(compiled.schema, node)
        return schema, meta

    # ------------------------------------------------------------------ request body

    def _body(self, builder: _Builder, op: Operation, params: list[_Param]) -> dict[str, Any] | None:
        if self.swagger:
            return self._swagger_body(builder, op, params)
        raw = op.node.get("requestBody")
        if raw is None:
            return None
        uri = op.uri
        if isinstance(raw, dict) and isinstance(raw.get("$ref"), str):
            target, raw = self.store.resolve(raw["$ref"], uri)
            uri = target.uri
        if not isinstance(raw, dict):
            raise OperationError("requestBody is not an object")
        content = raw.get("content") or {}
        if not isinstance(content, dict):
            raise OperationError("requestBody content is not a map of media types")
        if not content:
            return None
        content_type = _pick_media_type(content)
        media = content[content_type] if isinstance(content[content_type], dict) else {}
        body = {
            "content_type": _concrete(content_type),
            "required": raw.get("required") is True,
            "alternatives": [t for t in content if t != content_type],
        }
        encoding: dict[str, Any] = media["encoding"] if isinstance(media.get("encoding"), dict) else {}
        source = _BodySource(media.get("schema", {}), uri, "body", raw.get("required"), encoding)
        self._place_body(builder, op, source, body)
        return body

    def _swagger_body(self, builder: _Builder, op: Operation, params: list[_Param]) -> dict[str, Any] | None:
        consumes = op.node.get("consumes") or self.root.get("consumes") or []
        for param in params:
            if param.node["in"] == "body":
                content_type = _pick_media_type(dict.fromkeys(consumes)) if consumes else "application/json"
                body = {
                    "content_type": _concrete(content_type),
                    "required": param.node.get("required") is True,
                }
                node = param.node
                source = _BodySource(node.get("schema", {}), param.uri, node["name"], node.get("required"))
                self._place_body(builder, op, source, body)
                return body
        fields = [p for p in params if p.node["in"] == "formData"]
        return self._swagger_form(builder, op, fields, consumes) if fields else None

    def _swagger_form(
        self, builder: _Builder, op: Operation, fields: list[_Param], consumes: list[Any]
    ) -> dict[str, Any]:
        has_file = any(p.node.get("type") == "file" for p in fields)
        multipart = has_file or (
            consumes and "multipart/form-data" in consumes and _FORM_TYPES[0] not in consumes
        )
        content_type = _FORM_TYPES[1] if multipart else _FORM_TYPES[0]
        for param in fields:
            schema, meta = self._parameter_schema(param, op)
            meta.update(content_type=content_type, file=param.node.get("type") == "file")
            builder.add(param.node["name"], "body", schema, meta, param.node.get("required") is True)
        return {"content_type": content_type, "required": any(p.node.get("required") for p in fields)}

    def _place_body(
        self, builder: _Builder, op: Operation, source: _BodySource, body: dict[str, Any]
    ) -> None:
        compiled = self.compiler.expand(source.schema, source.uri, REQUEST, f"{op.pointer}/requestBody")
        builder.notes.extend(compiled.notes)
        schema, content_type = compiled.schema, body["content_type"]
        flat = _flat_object(schema) if self.body_mode == "flatten" else None
        if flat is None or not _is_structured(content_type):
            body["placement"] = "nested"
            meta = {"content_type": content_type, "whole_body": True}
            builder.add(source.name, "body", _binary(schema, content_type), meta, source.required is True)
            return
        body["placement"] = "flattened"
        properties, required = flat
        for prop, sub in properties.items():
            meta = {"content_type": content_type, **_encoding(source.encoding.get(prop))}
            if _is_file(sub):
                meta["file"] = True
            builder.add(prop, "body", sub, meta, prop in required and source.required is not False)

    # ------------------------------------------------------------------ responses

    def _output(self, op: Operation) -> tuple[dict[str, Any], dict[str, Any]]:
        responses = op.node.get("responses") or {}
        if not isinstance(responses, dict):
            raise OperationError("responses is not a map of status codes")
        status = _success_status(responses)
        if status is None:
            return {}, {}
        raw, uri = responses[status], op.uri
        if isinstance(raw, dict) and isinstance(raw.get("$ref"), str):
            target, raw = self.store.resolve(raw["$ref"], uri)
            uri = target.uri
        if not isinstance(raw, dict):
            return {}, {"status": str(status)}
        schema_node, content_type = self._response_schema(raw, op)
        info = {"status": str(status), **({"content_type": content_type} if content_type else {})}
        if schema_node is None:
            return {}, info
        pointer = f"{op.pointer}/responses/{status}"
        compiled = self.compiler.compile(schema_node, uri, RESPONSE, pointer)
        return self.compiler.attach_defs(_as_object(compiled.schema), RESPONSE), info

    def _response_schema(self, raw: dict[str, Any], op: Operation) -> tuple[Any, str | None]:
        if self.swagger:
            produces = op.node.get("produces") or self.root.get("produces") or ["application/json"]
            return raw.get("schema"), _pick_media_type(dict.fromkeys(produces))
        content = raw.get("content")
        if not isinstance(content, dict) or not content:
            return None, None
        content_type = _pick_media_type(content)
        media = content[content_type]
        return (media.get("schema") if isinstance(media, dict) else None), content_type

    # ------------------------------------------------------------------ metadata

    def _metadata(
        self,
        op: Operation,
        builder: _Builder,
        body: dict[str, Any] | None,
        response: dict[str, Any],
        notes: list[str],
    ) -> dict[str, Any]:
        node = op.node
        security = node.get("security", self.root.get("security", []))
        metadata: dict[str, Any] = {
            "kind": "rest",
            "source": f"{self.store.source}#{op.pointer}",
            "method": op.method.upper(),
            "path": op.path,
            "base_url": self.base_url or self._base_url(op),
            "servers": self._servers(op),
            "operation_id": node.get("operationId"),
            "tags": [t for t in node.get("tags") or [] if isinstance(t, str)],
            "deprecated": node.get("deprecated") is True,
            "arguments": builder.arguments,
            "body": body,
            "response": response,
            "security": security if isinstance(security, list) else [],
            "security_schemes": self._used_schemes(security),
            "openapi_version": self.version,
        }
        if notes:
            metadata["normalised"] = notes[:50]
        return metadata

    def _security_schemes(self) -> dict[str, dict[str, Any]]:
        if self.swagger:
            raw = self.root.get("securityDefinitions") or {}
        else:
            raw = (self.root.get("components") or {}).get("securitySchemes") or {}
        schemes: dict[str, dict[str, Any]] = {}
        for name, node in raw.items() if isinstance(raw, dict) else ():
            if isinstance(node, dict) and isinstance(node.get("$ref"), str):
                try:
                    node = self.store.resolve(node["$ref"], self.store.root_uri)[1]
                except RefError:
                    continue
            if isinstance(node, dict):
                schemes[str(name)] = _scheme(node)
        return schemes

    def _used_schemes(self, security: Any) -> dict[str, dict[str, Any]]:
        names = (
            {n for req in security if isinstance(req, dict) for n in req}
            if isinstance(security, list)
            else set()
        )
        return {n: self._schemes[n] for n in sorted(names) if n in self._schemes}

    def _servers(self, op: Operation) -> list[str]:
        if self.swagger:
            return [self._swagger_base(op)]
        for node in (op.node, op.item, self.root):
            servers = node.get("servers")
            if isinstance(servers, list) and servers:
                return [self._server_url(s) for s in servers if isinstance(s, dict)]
        return [self._relative("/")]

    def _base_url(self, op: Operation) -> str:
        servers = self._servers(op)
        return servers[0] if servers else self._relative("/")

    def _server_url(self, server: dict[str, Any]) -> str:
        url = str(server.get("url", "/"))
        variables = server.get("variables") or {}
        for name, var in variables.items() if isinstance(variables, dict) else ():
            default = var.get("default", "") if isinstance(var, dict) else ""
            url = url.replace("{" + str(name) + "}", str(default))
        return self._relative(url)

    def _relative(self, url: str) -> str:
        if is_url(url) or not is_url(self.store.root_uri):
            return url
        return urljoin(self.store.root_uri, url)

    def _swagger_base(self, op: Operation) -> str:
        schemes = op.node.get("schemes") or self.root.get("schemes") or []
        scheme = "https" if "https" in schemes or not schemes else str(schemes[0])
        host = self.root.get("host")
        base_path = str(self.root.get("basePath") or "")
        if isinstance(host, str) and host:
            return f"{scheme}://{host}{base_path}"
        if is_url(self.store.root_uri):
            parts = urlsplit(self.store.root_uri)
            return f"{parts.scheme}://{parts.netloc}{base_path}"
        return base_path or "/"


def _location_rank(node: dict[str, Any]) -> int:
    order = (*LOCATIONS, "body", "formData")
    return order.index(node["in"])


def _style(node: dict[str, Any], swagger: bool) -> dict[str, Any]:
    location = node["in"]
    if swagger:
        fmt = node.get("collectionFormat", "csv") if node.get("type") == "array" else None
        if fmt is None:
            return {}
        style, explode = _COLLECTION_FORMATS.get(str(fmt), ("form", False))
        if location in ("path", "header") and style == "form":
            style = "simple"
        return {"style": style, "explode": explode}
    style = node.get("style") or ("form" if location in ("query", "cookie") else "simple")
    explode = node.get("explode", style == "form")
    meta: dict[str, Any] = {"style": style, "explode": explode is True}
    if node.get("allowReserved") is True:
        meta["allow_reserved"] = True
    return meta


def _annotate(schema: Any, node: dict[str, Any]) -> Any:
    extra: dict[str, Any] = {}
    if isinstance(node.get("description"), str):
        extra["description"] = node["description"]
    if node.get("deprecated") is True:
        extra["deprecated"] = True
    if not extra:
        return schema
    if isinstance(schema, dict):
        return {**schema, **{k: v for k, v in extra.items() if k not in schema}}
    return {"allOf": [schema], **extra} if schema is False else extra


def _pick_media_type(content: Mapping[str, Any]) -> str:
    types = [str(t) for t in content]
    for test in (_is_json, lambda t: t.startswith(_FORM_TYPES[0]), lambda t: t.startswith(_FORM_TYPES[1])):
        for media_type in types:
            if test(media_type.lower()):
                return media_type
    return types[0]


def _concrete(media_type: str) -> str:
    """The media type to send: a wildcard (``*/*``, ``application/*``) is sent as JSON."""
    return "application/json" if media_type.split(";", 1)[0].strip().endswith("/*") else media_type


def _is_json(media_type: str) -> bool:
    base = media_type.split(";", 1)[0].strip()
    return base == "application/json" or base.endswith("+json") or base == "*/*"


def _is_structured(media_type: str) -> bool:
    lower = media_type.lower()
    return _is_json(lower) or lower.startswith(_FORM_TYPES)


def _flat_object(schema: Any) -> tuple[dict[str, Any], set[str]] | None:
    """``(properties, required)`` when the body is a plain object schema, else None."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return None
    parts = [schema, *schema.get("allOf", [])]
    properties: dict[str, Any] = {}
    required: set[str] = set()
    for part in parts:
        if not isinstance(part, dict) or any(k in part for k in ("anyOf", "oneOf", "not", "$ref", "if")):
            return None
        if part is not schema and "allOf" in part:
            return None
        properties.update(part.get("properties") or {})
        required.update(r for r in part.get("required") or [] if isinstance(r, str))
    declared = any(isinstance(part, dict) and isinstance(part.get("properties"), dict) for part in parts)
    return (properties, required) if properties or declared else None


def _encoding(node: Any) -> dict[str, Any]:
    if not isinstance(node, dict):
        return {}
    meta: dict[str, Any] = {}
    if isinstance(node.get("style"), str):
        meta["style"] = node["style"]
        meta["explode"] = node.get("explode", node["style"] == "form") is True
    if isinstance(node.get("contentType"), str):
        meta["part_content_type"] = node["contentType"]
    return meta


def _is_file(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("format") == "binary" and schema.get("type") == "string"


def _binary(schema: Any, content_type: str) -> Any:
    if _is_structured(content_type) or schema not in ({}, True):
        return schema
    return {"type": "string", "description": f"request body ({content_type})"}


def _success_status(responses: dict[str, Any]) -> str | None:
    codes = [str(c) for c in responses]
    exact = sorted(c for c in codes if len(c) == 3 and c.startswith("2") and c.isdigit())
    if exact:
        return next(c for c in responses if str(c) == exact[0])
    for code in responses:
        if str(code).upper() == "2XX":
            return str(code)
    return "default" if "default" in responses else None


def _as_object(schema: Any) -> dict[str, Any]:
    if schema is True or schema is None:
        return {}
    if schema is False:
        return {"not": {}}
    return schema if isinstance(schema, dict) else {}


def _scheme(node: dict[str, Any]) -> dict[str, Any]:
    scheme = {k: node[k] for k in _SCHEME_KEYS if isinstance(node.get(k), str)}
    if scheme.get("type") == "basic":  # Swagger 2.0
        scheme.update(type="http", scheme="basic")
    if isinstance(scheme.get("scheme"), str):
        scheme["scheme"] = scheme["scheme"].lower()
    return scheme


def _description(op: Operation) -> str:
    summary = op.node.get("summary")
    description = op.node.get("description")
    parts = [p.strip() for p in (summary, description) if isinstance(p, str) and p.strip()]
    if len(parts) == 2 and parts[1].startswith(parts[0]):
        parts = parts[1:]
    return "\n\n".join(parts) or f"{op.method.upper()} {op.path}"


def _tool_name(op: Operation) -> str:
    op_id = op.node.get("operationId")
    if isinstance(op_id, str) and op_id.strip():
        return op_id.strip().replace("::", "_")
    return slug(op.method, op.path)


def slug(method: str, path: str) -> str:
    """A readable name from method and path: ``GET /pets/{petId}/toys`` -> ``get_pets_by_petId_toys``."""
    words = [method.lower()]
    for segment in path.split("/"):
        if segment.startswith("{") and segment.endswith("}"):
            words.append("by_" + segment[1:-1])
        elif segment:
            words.append(segment)
    return _SLUG.sub("_", "_".join(words)).strip("_") or method.lower()
