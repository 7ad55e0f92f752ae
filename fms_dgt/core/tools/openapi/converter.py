"""One OpenAPI operation as the fields of one tool.

:class:`OperationConverter` builds, for one :class:`~fms_dgt.core.tools.openapi.operations.Operation`,
the tool's name, description, input schema (parameters plus request body, see
:mod:`~fms_dgt.core.tools.openapi.parameters` and :mod:`~fms_dgt.core.tools.openapi.bodies`), output
schema (the success response) and metadata. The metadata keeps what people read at the top level
(``kind``, ``source``, ``operation_id``, ``tags``, ``deprecated``, ``normalised``), the success
response's examples (``result_examples``: the media type's ``example`` or ``examples`` values, or a
Swagger 2.0 response's ``examples`` for its media type; the mock engine returns them), its OpenAPI 3
``links`` (:mod:`~fms_dgt.core.tools.openapi.links`; the ``dataflow`` enrichment wires them) and everything
the ``rest`` engine needs to rebuild the request as a
:class:`~fms_dgt.core.tools.openapi.route.Route` under ``metadata["route"]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from fms_dgt.core.tools.openapi.bodies import BodyConverter
from fms_dgt.core.tools.openapi.documents import DocumentStore, RefError
from fms_dgt.core.tools.openapi.endpoints import Endpoints
from fms_dgt.core.tools.openapi.links import read_links
from fms_dgt.core.tools.openapi.media import pick_media_type
from fms_dgt.core.tools.openapi.operations import Operation, OperationError, spec_version
from fms_dgt.core.tools.openapi.parameters import ArgumentsBuilder, ParameterConverter
from fms_dgt.core.tools.openapi.route import ROUTE_KEY, BodySpec, Interner, ResponseSpec, Route, path_problem
from fms_dgt.core.tools.openapi.schemas import REQUEST, RESPONSE, SchemaCompiler

__all__ = ["MAX_EXAMPLES", "MAX_NOTES", "OperationConverter", "ToolFields", "slug"]

#: At most this many normalisation notes are kept per tool.
MAX_NOTES = 50
#: At most this many response examples are kept per tool.
MAX_EXAMPLES = 5
_SLUG = re.compile(r"[^A-Za-z0-9]+")


@dataclass(slots=True)
class ToolFields:
    """Everything a tool needs, before its name is made unique.

    Attributes:
        name: the tool name (``operationId`` or a slug of method and path).
        description: summary and description of the operation.
        parameters: the input schema.
        output_parameters: the success response's schema, ``{}`` when there is none.
        metadata: the tool metadata, ``metadata["route"]`` included.
        route: the typed route (its dictionary form is in ``metadata``).
    """

    name: str
    description: str
    parameters: dict[str, Any]
    output_parameters: dict[str, Any]
    metadata: dict[str, Any]
    route: Route


class OperationConverter:
    """Converts the operations of one spec.

    Args:
        store: the spec's documents.
        compiler: shared schema translation for this load.
        body_mode: ``flatten`` or ``nested`` (see :mod:`~fms_dgt.core.tools.openapi.bodies`).
        base_url: overrides every server URL of the spec.
    """

    def __init__(
        self, store: DocumentStore, compiler: SchemaCompiler, *, body_mode: str, base_url: str | None
    ) -> None:
        self.store = store
        self.compiler = compiler
        self.base_url = base_url
        self.root: dict[str, Any] = store.root
        self.version = spec_version(self.root) or "3.0"
        self.swagger = self.version == "2.0"
        self.parameters = ParameterConverter(store, compiler, self.version)
        self._specs = Interner()
        self.bodies = BodyConverter(store, compiler, self.parameters, body_mode=body_mode, specs=self._specs)
        self.endpoints = Endpoints(store, swagger=self.swagger)

    def convert(self, op: Operation) -> ToolFields:
        """The tool fields of one operation.

        Raises:
            OperationError: the operation cannot be converted (the message says why), or its path
                could send requests outside the server's base path (:func:`~.route.path_problem`).
        """
        if not isinstance(op.node, dict):
            raise OperationError(f"operation is a {type(op.node).__name__}, not an object")
        problem = path_problem(op.path)
        if problem:
            raise OperationError(
                f"unsafe path {op.path[:200]!r}: {problem}. Write the path as the spec requires: "
                "'/' followed by segments"
            )
        try:
            return self._convert(op)
        except RefError as exc:
            raise OperationError(exc.reason) from exc
        except RecursionError as exc:  # absurdly deep inline schemas, or self-nesting YAML aliases
            raise OperationError(
                "a schema is nested too deeply to convert; move parts into components and $ref them"
            ) from exc

    def _convert(self, op: Operation) -> ToolFields:
        builder = ArgumentsBuilder(self._specs)
        params = self.parameters.parameters(op)
        for param in params:
            self.parameters.add(builder, param, op)
        body = self.bodies.body(builder, op, params)
        parameters = self.compiler.attach_defs(builder.schema(), REQUEST)
        output, response, examples, (links, link_notes) = self._output(op)
        route = self._route(op, builder, body, response)
        notes = [*builder.notes, *self.compiler.def_notes(parameters, REQUEST), *link_notes]
        metadata = self._metadata(op, route, notes)
        if examples:
            metadata["result_examples"] = examples
        if links:
            metadata["links"] = links
        return ToolFields(_tool_name(op), _description(op), parameters, output, metadata, route)

    # ------------------------------------------------------------------ responses

    def _output(
        self, op: Operation
    ) -> tuple[dict[str, Any], ResponseSpec | None, list[Any], tuple[list[dict[str, Any]], list[str]]]:
        """The success response's schema, spec, examples and links (with notes on links left out)."""
        responses = op.node.get("responses") or {}
        if not isinstance(responses, dict):
            raise OperationError("responses is not a map of status codes")
        status = _success_status(responses)
        if status is None:
            return {}, None, [], ([], [])
        raw, uri = responses[status], op.uri
        if isinstance(raw, dict) and isinstance(raw.get("$ref"), str):
            target, raw = self.store.resolve(raw["$ref"], uri)
            uri = target.uri
        if not isinstance(raw, dict):
            return {}, self._specs.make(ResponseSpec, status=str(status)), [], ([], [])
        links = ([], []) if self.swagger else read_links(self.store, raw, uri)
        schema_node, content_type = self._response_schema(raw, op)
        info = self._specs.make(ResponseSpec, status=str(status), content_type=content_type or None)
        examples = self._examples(raw, content_type, uri)
        if schema_node is None:
            return {}, info, examples, links
        pointer = f"{op.pointer}/responses/{status}"
        compiled = self.compiler.compile(schema_node, uri, RESPONSE, pointer)
        return self.compiler.attach_defs(_as_object(compiled.schema), RESPONSE), info, examples, links

    def _examples(self, raw: dict[str, Any], content_type: str | None, uri: str) -> list[Any]:
        """The response's example values for its media type (not copied: read-only, like schemas)."""
        if content_type is None:
            return []
        if self.swagger:
            examples = raw.get("examples")
            found = examples.get(content_type) if isinstance(examples, dict) else None
            return [] if found is None else [found]
        media = (raw.get("content") or {}).get(content_type)
        if not isinstance(media, dict):
            return []
        if "example" in media:
            return [media["example"]]
        named = media.get("examples")
        if not isinstance(named, dict):
            return []
        return [v for v in map(lambda e: self._example_value(e, uri), named.values()) if v is not _NONE][
            :MAX_EXAMPLES
        ]

    def _example_value(self, example: Any, uri: str) -> Any:
        """An Example Object's ``value`` (following a ``$ref``), or ``_NONE`` (``externalValue``)."""
        if isinstance(example, dict) and isinstance(example.get("$ref"), str):
            try:
                _, example = self.store.resolve(example["$ref"], uri)
            except RefError:
                return _NONE
        if isinstance(example, dict) and "value" in example:
            return example["value"]
        return _NONE

    def _response_schema(self, raw: dict[str, Any], op: Operation) -> tuple[Any, str | None]:
        if self.swagger:
            produces = op.node.get("produces") or self.root.get("produces") or ["application/json"]
            return raw.get("schema"), pick_media_type(dict.fromkeys(produces))
        content = raw.get("content")
        if not isinstance(content, dict) or not content:
            return None, None
        content_type = pick_media_type(content)
        media = content[content_type]
        return (media.get("schema") if isinstance(media, dict) else None), content_type

    # ------------------------------------------------------------------ route and metadata

    def _route(
        self, op: Operation, builder: ArgumentsBuilder, body: BodySpec | None, response: ResponseSpec | None
    ) -> Route:
        security, schemes = self.endpoints.security(op)
        servers = tuple(self.endpoints.servers(op))
        return Route(
            method=op.method.upper(),
            path=op.path,
            base_url=self.base_url or self.endpoints.base_url(op, servers),
            servers=servers,
            arguments=builder.arguments,
            body=body,
            response=response,
            security=security,
            security_schemes=schemes,
            openapi_version=self.version,
        )

    def _metadata(self, op: Operation, route: Route, notes: list[str]) -> dict[str, Any]:
        node = op.node
        metadata: dict[str, Any] = {
            "kind": "rest",
            "source": f"{self.store.source}#{op.pointer}",
            "operation_id": node.get("operationId"),
            "tags": [t for t in node.get("tags") or [] if isinstance(t, str)],
            "deprecated": node.get("deprecated") is True,
            ROUTE_KEY: route.to_dict(shared=True),
        }
        if notes:
            metadata["normalised"] = notes[:MAX_NOTES]
        return metadata


_NONE = object()


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
