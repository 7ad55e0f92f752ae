"""Operation parameters as tool arguments.

:class:`ArgumentsBuilder` assembles a tool's input schema and its :class:`ArgumentSpec` per
argument. Name clashes are settled in the order arguments are added (path, query, header, cookie,
then body): the first keeps the name, a later one becomes ``<location>_<name>`` (then ``_2``,
``_3``... if still taken) and records ``renamed_from``.

:class:`ParameterConverter` reads the parameters of one operation (path-level ones merged with the
operation's, ``$ref`` followed), fills in the OpenAPI serialisation defaults (``form``/exploded
for query and cookie, ``simple`` for path and header; Swagger 2.0 ``collectionFormat`` mapped to a
style) and translates each parameter's schema.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fms_dgt.core.tools.openapi.documents import DocumentStore
from fms_dgt.core.tools.openapi.operations import Operation, OperationError
from fms_dgt.core.tools.openapi.route import ArgumentSpec, Interner
from fms_dgt.core.tools.openapi.schemas import REQUEST, SchemaCompiler

__all__ = ["LOCATIONS", "ArgumentsBuilder", "Param", "ParameterConverter"]

LOCATIONS = ("path", "query", "header", "cookie")
_SWAGGER_LOCATIONS = (*LOCATIONS, "body", "formData")
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


@dataclass(slots=True)
class Param:
    """One resolved parameter and the document it was read in."""

    node: dict[str, Any]
    uri: str


@dataclass(slots=True)
class ArgumentsBuilder:
    """The input schema and argument specs of one tool, as they are assembled.

    Attributes:
        specs: where argument specs are made (share one per load).
    """

    specs: Interner = field(default_factory=Interner)
    properties: dict[str, Any] = field(default_factory=dict)
    required: list[str] = field(default_factory=list)
    arguments: dict[str, ArgumentSpec] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, name: str, location: str, schema: Any, spec: dict[str, Any], required: bool) -> str:
        """Add one argument; ``spec`` holds the :class:`ArgumentSpec` fields besides location and name.

        Returns:
            the argument's name in the tool (``name``, or a renamed form on a clash).
        """
        arg = name
        if arg in self.properties:
            arg = f"{location}_{name}"
            n = 1
            while arg in self.properties:
                n += 1
                arg = f"{location}_{name}_{n}"
            spec["renamed_from"] = name
        self.properties[arg] = schema
        self.arguments[arg] = self.specs.make(ArgumentSpec, location=location, name=name, **spec)
        if required:
            self.required.append(arg)
        return arg

    def schema(self) -> dict[str, Any]:
        """The input schema so far (without ``$defs``)."""
        out: dict[str, Any] = {"type": "object", "properties": self.properties}
        if self.required:
            out["required"] = self.required
        return out


class ParameterConverter:
    """Reads and translates the parameters of one spec's operations.

    Args:
        store: the spec's documents.
        compiler: shared schema translation for this load.
        version: the spec's version (``2.0`` reads Swagger parameter fields).
    """

    def __init__(self, store: DocumentStore, compiler: SchemaCompiler, version: str) -> None:
        self.store = store
        self.compiler = compiler
        self.version = version
        self.swagger = version == "2.0"
        # Path-level and $ref'd parameters are the same node in many operations (Kubernetes: most
        # of them), so each node is translated once; holding the node keeps its id from being reused.
        self._schemas: dict[tuple[int, str], tuple[dict[str, Any], Any, dict[str, Any]]] = {}

    def parameters(self, op: Operation) -> list[Param]:
        """Path-level parameters merged with the operation's (the operation's win), in order.

        Raises:
            OperationError: a parameter list or parameter is malformed.
            RefError: a parameter ``$ref`` cannot be followed.
        """
        merged: dict[tuple[str, str], Param] = {}
        for node, where in (
            (op.item.get("parameters"), "path item"),
            (op.node.get("parameters"), "operation"),
        ):
            if node is None:
                continue
            if not isinstance(node, list):
                raise OperationError(f"{where} parameters is a {type(node).__name__}, not a list")
            for raw in node:
                param = self._resolve(raw, op.uri)
                merged[(param.node["name"], param.node["in"])] = param
        return sorted(merged.values(), key=_location_rank)

    def _resolve(self, raw: Any, uri: str) -> Param:
        if isinstance(raw, dict) and isinstance(raw.get("$ref"), str):
            target, raw = self.store.resolve(raw["$ref"], uri)
            uri = target.uri
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
            raise OperationError(f"parameter {raw!r:.80} has no name")
        allowed = _SWAGGER_LOCATIONS if self.swagger else LOCATIONS
        if raw.get("in") not in allowed:
            raise OperationError(
                f"parameter {raw['name']!r} has location in: {raw.get('in')!r}; OpenAPI "
                f"{self.version} allows {', '.join(allowed)}"
            )
        return Param(raw, uri)

    def add(self, builder: ArgumentsBuilder, param: Param, op: Operation) -> None:
        """Add a path, query, header or cookie parameter as an argument (bodies are not handled here)."""
        node = param.node
        location = node["in"]
        if location in ("body", "formData"):
            return
        if location == "header" and not self.swagger and node["name"].lower() in _IGNORED_HEADERS:
            builder.notes.append(f"header parameter {node['name']!r} ignored (OpenAPI 3 reserves it)")
            return
        schema, spec = self.schema(param, op)
        required = location == "path" or node.get("required") is True
        builder.add(node["name"], location, schema, spec, required)

    def schema(self, param: Param, op: Operation) -> tuple[Any, dict[str, Any]]:
        """The argument schema of a parameter and its :class:`ArgumentSpec` fields (style, explode...).

        The schema may be shared with other tools of the load (treat it as read-only); the fields
        are a new dict the caller may change.

        Raises:
            RefError: a reference the schema needs cannot be resolved or translated.
        """
        key = (id(param.node), param.uri)
        known = self._schemas.get(key)
        if known is None or known[0] is not param.node:
            schema, spec = self._translate(param, op)
            known = self._schemas[key] = (param.node, schema, spec)
        return known[1], dict(known[2])

    def _translate(self, param: Param, op: Operation) -> tuple[Any, dict[str, Any]]:
        node = param.node
        spec = _style(node, self.swagger)
        if self.swagger:
            raw: Any = {k: node[k] for k in _SWAGGER_SCHEMA_KEYS if k in node}
        elif isinstance(node.get("content"), dict) and node["content"]:
            content_type, media = next(iter(node["content"].items()))
            spec["content_type"] = str(content_type)
            raw = media.get("schema", {}) if isinstance(media, dict) else {}
        else:
            raw = node.get("schema", {})
        # The pointer only names where normalisation notes come from, and parameter notes are not
        # kept, so the first operation's pointer serves every operation sharing the node.
        pointer = f"{op.pointer}/parameters/{node['name']}"
        compiled = self.compiler.compile(raw, param.uri, REQUEST, pointer)
        return _annotate(compiled.schema, node), spec


def _location_rank(param: Param) -> int:
    return _SWAGGER_LOCATIONS.index(param.node["in"])


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
    spec: dict[str, Any] = {"style": str(style), "explode": explode is True}
    if node.get("allowReserved") is True:
        spec["allow_reserved"] = True
    return spec


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
