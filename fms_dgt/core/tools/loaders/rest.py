"""The ``rest`` loader: every operation of an OpenAPI 2.0 / 3.0 / 3.1 / 3.2 spec as a tool.

One tool per ``(path, method)`` pair under ``paths`` (path-level ``$ref`` followed), named by
``operationId`` or a slug of method and path, with an input schema built from path, query, header
and cookie parameters plus the request body, an output schema from the success response, and the
metadata the ``rest`` engine needs to rebuild the HTTP request. See ``docs/rest.md``.

Example config entry::

    - type: rest
      spec: ../data/rest/petstore.yaml      # or an https:// URL
      namespace: petstore
      include: {tags: [pets]}
      exclude: {methods: [delete]}
      base_url: http://127.0.0.1:8080/v1

The reading, reference resolution and schema translation are this package's own code (fast
enough for Stripe's and Kubernetes' specs); ``validate: true`` additionally runs the full
``openapi-spec-validator`` check, which is slow on large specs and therefore off by default.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit
from urllib.request import url2pathname

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.openapi.documents import DocumentStore, RefError, is_url
from fms_dgt.core.tools.openapi.operations import (
    Operation,
    OperationConverter,
    OperationError,
    ToolFields,
    iter_operations,
    spec_version,
)
from fms_dgt.core.tools.openapi.schemas import SchemaCompiler
from fms_dgt.core.tools.loaders.base import LoadReport, ToolLoader
from fms_dgt.errors import ConfigError, LoadError, ToolDefinitionError
from fms_dgt.plugins import register_tool_loader

__all__ = ["OperationFilter", "RESTToolLoader"]

_FILTER_KEYS = ("tags", "paths", "methods", "operation_ids")
_BODY_MODES = ("flatten", "nested")
_NAMESPACE_CHARS = re.compile(r"[^A-Za-z0-9]+")


@dataclass(slots=True, frozen=True)
class OperationFilter:
    """Which operations an ``include`` or ``exclude`` block selects.

    Each key holds glob patterns (``fnmatch``; methods are case-insensitive). An operation matches
    a key when it matches any of its patterns.

    Attributes:
        tags: tag patterns (an operation matches when any of its tags does).
        paths: path template patterns, e.g. ``/pets/*``.
        methods: HTTP methods.
        operation_ids: ``operationId`` patterns.
        given: the keys the config named (only those take part in matching).
    """

    tags: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    operation_ids: tuple[str, ...] = ()
    given: tuple[str, ...] = field(default=())

    @classmethod
    def from_config(cls, value: Mapping[str, Any] | None, key: str) -> OperationFilter:
        """Build from a config mapping.

        Raises:
            ConfigError: an unknown key or a value that is not a string or list of strings.
        """
        if value is None:
            return cls()
        if not isinstance(value, Mapping):
            raise ConfigError(f"invalid {key} filter for rest loader: expected a mapping with {_FILTER_KEYS}")
        fields: dict[str, tuple[str, ...]] = {}
        for name, patterns in value.items():
            if name not in _FILTER_KEYS:
                raise ConfigError(
                    f"unknown key {name!r} in the rest loader's {key} filter: use {', '.join(_FILTER_KEYS)}"
                )
            fields[name] = _patterns(patterns, f"{key}.{name}")
        if "methods" in fields:
            fields["methods"] = tuple(m.lower() for m in fields["methods"])
        return cls(**fields, given=tuple(fields))

    def _matches(self, key: str, op: Operation) -> bool:
        patterns: tuple[str, ...] = getattr(self, key)
        if key == "methods":
            return op.method.lower() in patterns
        values = _values(key, op)
        return any(fnmatch.fnmatchcase(v, p) for v in values for p in patterns)

    def includes(self, op: Operation) -> bool:
        """True when every given key matches (an empty filter includes everything)."""
        return all(self._matches(key, op) for key in self.given)

    def excludes(self, op: Operation) -> bool:
        """True when any given key matches (an empty filter excludes nothing)."""
        return any(self._matches(key, op) for key in self.given)


def _values(key: str, op: Operation) -> list[str]:
    if key == "tags":
        tags = op.node.get("tags") if isinstance(op.node, dict) else None
        return [t for t in tags or [] if isinstance(t, str)]
    if key == "paths":
        return [op.path]
    op_id = op.node.get("operationId") if isinstance(op.node, dict) else None
    return [op_id] if isinstance(op_id, str) else []


def _patterns(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Sequence) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ConfigError(f"invalid rest loader filter {where}: expected a string or a list of strings")


@register_tool_loader("rest")
class RESTToolLoader(ToolLoader):
    """Load every operation of an OpenAPI (Swagger 2.0, OpenAPI 3.0/3.1/3.2) spec as a tool.

    Args:
        spec: local path or http(s) URL of the spec (JSON or YAML).
        namespace: the tools' namespace; default: a slug of ``info.title``, else the file name.
        include: keep only operations matching every given key (``tags``, ``paths``, ``methods``,
            ``operation_ids``; each a pattern or list of glob patterns).
        exclude: then drop operations matching any given key.
        base_url: server URL used instead of the spec's ``servers`` / ``host``.
        validate: also run the full ``openapi-spec-validator`` check (slow on large specs).
        body: ``flatten`` (object bodies become one argument per property) or ``nested`` (one
            ``body`` argument).
        inline_limit: largest expanded size (schema nodes) of a referenced schema copied in place;
            larger or recursive ones go to ``$defs``.
        allow_remote_refs: follow ``$ref`` values that need the network.
        allow_outside_refs: follow file ``$ref`` values that leave the spec's directory tree.
        timeout: seconds allowed to fetch a spec or reference by URL.
        max_bytes: largest document accepted from a URL.
    """

    path_keys: ClassVar[tuple[str, ...]] = ("spec",)

    def __init__(
        self,
        spec: str | PathLike[str],
        *,
        namespace: str | None = None,
        include: Mapping[str, Any] | None = None,
        exclude: Mapping[str, Any] | None = None,
        base_url: str | None = None,
        validate: bool = False,
        body: str = "flatten",
        inline_limit: int = 64,
        allow_remote_refs: bool = False,
        allow_outside_refs: bool = False,
        timeout: float = 30.0,
        max_bytes: int = 50_000_000,
    ) -> None:
        if body not in _BODY_MODES:
            raise ConfigError(f"invalid body {body!r} for rest loader: use one of {', '.join(_BODY_MODES)}")
        if not isinstance(inline_limit, int) or inline_limit < 0:
            raise ConfigError(f"invalid inline_limit {inline_limit!r} for rest loader: use an integer >= 0")
        self.spec = str(spec)
        self.include = OperationFilter.from_config(include, "include")
        self.exclude = OperationFilter.from_config(exclude, "exclude")
        self.base_url = base_url.rstrip("/") if base_url else None
        self.validate = validate
        self.body = body
        self.inline_limit = inline_limit
        self.allow_remote_refs = allow_remote_refs
        self.allow_outside_refs = allow_outside_refs
        self.timeout = timeout
        self.max_bytes = max_bytes
        super().__init__(namespace=namespace)

    def describe(self) -> str:
        return self.spec

    def load(self) -> list[Tool]:
        """Read the spec and convert every selected operation.

        Raises:
            LoadError: the spec cannot be read, is not an OpenAPI document, or (with
                ``validate: true``) fails validation; with file and JSON pointer.
        """
        report = self._new_report()
        store = self._store()
        self._check_root(store)
        if self.validate:
            _validate(store)
        compiler = SchemaCompiler(store, inline_limit=self.inline_limit)
        converter = OperationConverter(store, compiler, body_mode=self.body, base_url=self.base_url)
        namespace = self.namespace or _default_namespace(store)
        tools = _Collector(namespace, report)
        filtered = 0
        for item in iter_operations(store):
            if isinstance(item, tuple):
                report.skip(f"path item skipped: {item[1]}", pointer=item[0])
            elif not self.include.includes(item) or self.exclude.excludes(item):
                filtered += 1
            else:
                tools.add(item, converter)
        if filtered:
            report.warn(f"{filtered} operation(s) left out by the include/exclude filters")
        report.tools = len(tools.tools)
        return tools.tools

    def _store(self) -> DocumentStore:
        return DocumentStore(
            self.spec,
            allow_remote_refs=self.allow_remote_refs,
            allow_outside_refs=self.allow_outside_refs,
            timeout=self.timeout,
            max_bytes=self.max_bytes,
        )

    def _check_root(self, store: DocumentStore) -> None:
        root = store.root
        if not isinstance(root, dict):
            raise LoadError(
                f"not an OpenAPI document: the top level is a {type(root).__name__}, not a mapping. "
                "Point spec at an OpenAPI or Swagger file",
                source=self.spec,
                pointer="",
            )
        version = spec_version(root)
        if version is None:
            raise _version_error(root, self.spec)
        paths = root.get("paths")
        if paths is None and version in ("2.0", "3.0"):
            raise LoadError(
                f"invalid OpenAPI {version} document: 'paths' is missing. Add a paths object",
                source=self.spec,
                pointer="/paths",
            )
        if paths is not None and not isinstance(paths, dict):
            raise LoadError(
                f"invalid OpenAPI document: 'paths' is a {type(paths).__name__}, not a mapping",
                source=self.spec,
                pointer="/paths",
            )
        if not paths:
            self.report.warn("the spec has no paths: no tools", pointer="/paths")


class _Collector:
    """Turns converted operations into tools with names unique in the namespace."""

    def __init__(self, namespace: str, report: LoadReport) -> None:
        self.namespace = namespace
        self.report = report
        self.tools: list[Tool] = []
        self._first: dict[str, str] = {}

    def add(self, op: Operation, converter: OperationConverter) -> None:
        try:
            fields = converter.convert(op)
        except OperationError as exc:
            self.report.skip(f"operation {op.method.upper()} {op.path} skipped: {exc}", pointer=op.pointer)
            return
        name = self._unique(fields, op)
        try:
            tool = Tool(
                name,
                self.namespace,
                description=fields.description,
                parameters=fields.parameters,
                output_parameters=fields.output_parameters,
                metadata=fields.metadata,
            )
        except ToolDefinitionError as exc:
            self.report.skip(f"operation {op.method.upper()} {op.path} skipped: {exc}", pointer=op.pointer)
            return
        self._first[name] = op.pointer
        self.tools.append(tool)

    def _unique(self, fields: ToolFields, op: Operation) -> str:
        name = fields.name
        if name not in self._first:
            return name
        n = 2
        while f"{name}_{n}" in self._first:
            n += 1
        unique = f"{name}_{n}"
        fields.metadata["name_collision"] = {"original": name, "first_at": self._first[name]}
        self.report.warn(
            f"duplicate tool name {name!r} (first at {self._first[name]}): renamed to {unique!r}. "
            "Give the operations distinct operationIds to choose the names yourself",
            pointer=op.pointer,
        )
        return unique


def _version_error(root: Mapping[str, Any], source: str) -> LoadError:
    if "openapi" in root or "swagger" in root:
        key = "openapi" if "openapi" in root else "swagger"
        return LoadError(
            f"unsupported OpenAPI version {root[key]!r}: supported are Swagger 2.0 and OpenAPI "
            "3.0, 3.1 and 3.2",
            source=source,
            pointer=f"/{key}",
        )
    return LoadError(
        "not an OpenAPI document: neither 'openapi' nor 'swagger' is set at the top level. Point "
        "spec at an OpenAPI or Swagger file",
        source=source,
        pointer="",
    )


def _default_namespace(store: DocumentStore) -> str:
    info = store.root.get("info")
    title = info.get("title") if isinstance(info, dict) else None
    if not isinstance(title, str) or not _NAMESPACE_CHARS.sub("", title):
        title = Path(store.source.rstrip("/")).stem if not is_url(store.source) else "rest"
    return _NAMESPACE_CHARS.sub("_", title).strip("_").lower() or "rest"


def _validate(store: DocumentStore) -> None:
    """Full validation with ``openapi-spec-validator``; every problem becomes a :class:`LoadError`.

    The validator resolves ``$ref`` on its own, so it gets only handlers that obey the same
    policy as the loader (no network unless allowed, no files outside the spec's tree unless
    allowed).
    """
    import openapi_spec_validator as osv

    classes = {
        "2.0": osv.OpenAPIV2SpecValidator,
        "3.0": osv.OpenAPIV30SpecValidator,
        "3.1": osv.OpenAPIV31SpecValidator,
        "3.2": osv.OpenAPIV32SpecValidator,
    }
    base = classes[spec_version(store.root) or "3.0"]
    guarded = type(f"Guarded{base.__name__}", (base,), {"resolver_handlers": _handlers(base, store)})
    base_uri = store.root_uri if is_url(store.root_uri) else Path(store.root_uri).as_uri()
    try:
        errors = list(guarded(_string_keys(store.root), base_uri=base_uri).iter_errors())
    except Exception as exc:  # the validator raises its own and referencing errors
        why = _refusal(exc) or f"{type(exc).__name__}: {exc}"
        raise LoadError(
            f"OpenAPI validation failed: {why}. Fix the spec or set validate: false", source=store.source
        ) from exc
    problems = [_validation_problem(e, store.source) for e in errors[:20]]
    if problems:
        raise LoadError.collect(problems, store.source)


def _handlers(validator: Any, store: DocumentStore) -> dict[str, Any]:
    handlers = dict(validator.resolver_handlers)
    if not store.allow_remote_refs:
        handlers = {k: v for k, v in handlers.items() if k == "file"}
    if "file" in handlers:
        handlers["file"] = _FileGuard(handlers["file"], store)
    return handlers


def _string_keys(node: Any) -> Any:
    """A copy with every mapping key a string: YAML reads unquoted status codes as integers,
    which the validator cannot handle although the spec means the same thing."""
    if isinstance(node, dict):
        return {str(k): _string_keys(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_string_keys(v) for v in node]
    return node


def _refusal(exc: BaseException | None) -> str | None:
    """The loader's own reason when a guarded handler refused a reference somewhere in the chain."""
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, RefError):
            return exc.reason
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


class _FileGuard:
    """A ``file:`` resolver handler that refuses paths the loader's policy refuses."""

    def __init__(self, inner: Any, store: DocumentStore) -> None:
        self.inner = inner
        self.store = store

    def __call__(self, uri: str) -> Any:
        path = url2pathname(urlsplit(uri).path)
        self.store.target(path, self.store.root_uri)  # raises RefError when refused
        return self.inner(uri)


def _validation_problem(error: Any, source: str) -> LoadError:
    path = getattr(error, "path", None) or ()
    pointer = "".join(f"/{str(p).replace('~', '~0').replace('/', '~1')}" for p in path)
    message = getattr(error, "message", str(error))
    return LoadError(f"invalid OpenAPI document: {message}", source=source, pointer=pointer)
