"""Request bodies as tool arguments.

The media type is chosen by :func:`~fms_dgt.core.tools.openapi.media.pick_media_type` (JSON, then
urlencoded form, then multipart, then the first listed). Swagger 2.0 ``in: body`` parameters use
``consumes``; ``formData`` parameters make a form body (multipart when a field is a file or only
multipart is consumed).

Placement: in ``flatten`` mode, an object body with ``properties`` (also after its ``$ref``, also an
``allOf`` of such objects) is *flattened*: each property is an argument. Any other body, and every
body in ``nested`` mode, is *nested*: one argument named ``body`` (Swagger 2.0: the body
parameter's name) holds it whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fms_dgt.core.tools.openapi.documents import DocumentStore
from fms_dgt.core.tools.openapi.media import (
    FORM_URLENCODED,
    MULTIPART,
    concrete,
    is_structured,
    pick_media_type,
)
from fms_dgt.core.tools.openapi.operations import Operation, OperationError
from fms_dgt.core.tools.openapi.parameters import ArgumentsBuilder, Param, ParameterConverter
from fms_dgt.core.tools.openapi.route import BodySpec, Interner
from fms_dgt.core.tools.openapi.schemas import REQUEST, SchemaCompiler

__all__ = ["BODY_MODES", "BodyConverter"]

#: The values of the loader's ``body`` key.
BODY_MODES = ("flatten", "nested")


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


class BodyConverter:
    """Turns the request bodies of one spec's operations into arguments and a :class:`BodySpec`.

    Args:
        store: the spec's documents.
        compiler: shared schema translation for this load.
        parameters: the spec's parameter reader (Swagger 2.0 form fields are parameters).
        body_mode: ``flatten`` or ``nested`` (see the module docstring).
        specs: where body specs are made (share one per load).
    """

    def __init__(
        self,
        store: DocumentStore,
        compiler: SchemaCompiler,
        parameters: ParameterConverter,
        *,
        body_mode: str,
        specs: Interner | None = None,
    ) -> None:
        self.store = store
        self.compiler = compiler
        self.parameters = parameters
        self.body_mode = body_mode
        self.specs = specs or Interner()
        self.root: dict[str, Any] = store.root

    def body(self, builder: ArgumentsBuilder, op: Operation, params: list[Param]) -> BodySpec | None:
        """Add the body's arguments to ``builder``; the body's spec, or None when there is no body.

        Raises:
            OperationError: the request body is malformed.
            RefError: a ``$ref`` it needs cannot be followed.
        """
        if self.parameters.swagger:
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
        return self._content(builder, op, raw, content, uri) if content else None

    def _content(
        self, builder: ArgumentsBuilder, op: Operation, raw: dict[str, Any], content: dict[str, Any], uri: str
    ) -> BodySpec:
        chosen = pick_media_type(content)
        media = content[chosen] if isinstance(content[chosen], dict) else {}
        encoding: dict[str, Any] = media["encoding"] if isinstance(media.get("encoding"), dict) else {}
        source = _BodySource(media.get("schema", {}), uri, "body", raw.get("required"), encoding)
        content_type = concrete(chosen)
        return self.specs.make(
            BodySpec,
            content_type=content_type,
            required=raw.get("required") is True,
            placement=self._place(builder, op, source, content_type),
            alternatives=tuple(str(t) for t in content if t != chosen),
        )

    def _swagger_body(self, builder: ArgumentsBuilder, op: Operation, params: list[Param]) -> BodySpec | None:
        consumes = op.node.get("consumes") or self.root.get("consumes") or []
        for param in params:
            if param.node["in"] == "body":
                chosen = pick_media_type(dict.fromkeys(consumes)) if consumes else "application/json"
                node = param.node
                source = _BodySource(node.get("schema", {}), param.uri, node["name"], node.get("required"))
                content_type = concrete(chosen)
                return self.specs.make(
                    BodySpec,
                    content_type=content_type,
                    required=node.get("required") is True,
                    placement=self._place(builder, op, source, content_type),
                )
        fields = [p for p in params if p.node["in"] == "formData"]
        return self._swagger_form(builder, op, fields, consumes) if fields else None

    def _swagger_form(
        self, builder: ArgumentsBuilder, op: Operation, fields: list[Param], consumes: list[Any]
    ) -> BodySpec:
        has_file = any(p.node.get("type") == "file" for p in fields)
        multipart = has_file or (consumes and MULTIPART in consumes and FORM_URLENCODED not in consumes)
        content_type = MULTIPART if multipart else FORM_URLENCODED
        for param in fields:
            schema, spec = self.parameters.schema(param, op)
            spec.update(content_type=content_type, file=param.node.get("type") == "file")
            builder.add(param.node["name"], "body", schema, spec, param.node.get("required") is True)
        required = any(p.node.get("required") for p in fields)
        return self.specs.make(BodySpec, content_type=content_type, required=required, placement="flattened")

    def _place(self, builder: ArgumentsBuilder, op: Operation, source: _BodySource, content_type: str) -> str:
        """Add the body's argument(s); the placement done (``flattened`` or ``nested``)."""
        compiled = self.compiler.expand(source.schema, source.uri, REQUEST, f"{op.pointer}/requestBody")
        builder.notes.extend(compiled.notes)
        schema = compiled.schema
        flat = _flat_object(schema) if self.body_mode == "flatten" else None
        if flat is None or not is_structured(content_type):
            spec = {"content_type": content_type, "whole_body": True}
            builder.add(source.name, "body", _binary(schema, content_type), spec, source.required is True)
            return "nested"
        properties, required = flat
        for prop, sub in properties.items():
            spec = {"content_type": content_type, **_encoding(source.encoding.get(prop))}
            if _is_file(sub):
                spec["file"] = True
            builder.add(prop, "body", sub, spec, prop in required and source.required is not False)
        return "flattened"


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
    """The :class:`ArgumentSpec` fields a form field's ``encoding`` entry sets."""
    if not isinstance(node, dict):
        return {}
    spec: dict[str, Any] = {}
    if isinstance(node.get("style"), str):
        spec["style"] = node["style"]
        spec["explode"] = node.get("explode", node["style"] == "form") is True
    if isinstance(node.get("contentType"), str):
        spec["part_content_type"] = node["contentType"]
    return spec


def _is_file(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("format") == "binary" and schema.get("type") == "string"


def _binary(schema: Any, content_type: str) -> Any:
    if is_structured(content_type) or schema not in ({}, True):
        return schema
    return {"type": "string", "description": f"request body ({content_type})"}
