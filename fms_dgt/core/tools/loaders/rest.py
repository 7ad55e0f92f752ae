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

This module is the plug-in: its configuration and the load loop. Reading the spec, resolving
references, translating schemas and building each tool's :class:`~fms_dgt.core.tools.openapi.Route`
live in :mod:`fms_dgt.core.tools.openapi` (this package's own code, fast enough for Stripe's and
Kubernetes' specs); ``validate: true`` additionally runs the full ``openapi-spec-validator`` check,
which is slow on large specs and therefore off by default.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any, ClassVar

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.loaders.base import LoadReport, ToolLoader
from fms_dgt.core.tools.openapi import (
    BODY_MODES,
    DocumentStore,
    Operation,
    OperationConverter,
    OperationError,
    SchemaCompiler,
    ToolFields,
    check_root,
    display_url,
    is_url,
    iter_operations,
    validate_spec,
)
from fms_dgt.errors import ConfigError, ToolDefinitionError
from fms_dgt.plugins import register_tool_loader

__all__ = ["OperationFilter", "RESTToolLoader"]

_FILTER_KEYS = ("tags", "paths", "methods", "operation_ids")
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
        if body not in BODY_MODES:
            raise ConfigError(f"invalid body {body!r} for rest loader: use one of {', '.join(BODY_MODES)}")
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
        return display_url(self.spec)

    def load(self) -> list[Tool]:
        """Read the spec and convert every selected operation.

        Raises:
            LoadError: the spec cannot be read, is not an OpenAPI document, or (with
                ``validate: true``) fails validation; with file and JSON pointer.
        """
        report = self._new_report()
        store = self._store()
        if not check_root(store):
            report.warn("the spec has no paths: no tools", pointer="/paths")
        if self.validate:
            validate_spec(store)
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


def _default_namespace(store: DocumentStore) -> str:
    info = store.root.get("info")
    title = info.get("title") if isinstance(info, dict) else None
    if not isinstance(title, str) or not _NAMESPACE_CHARS.sub("", title):
        title = Path(store.source.rstrip("/")).stem if not is_url(store.source) else "rest"
    return _NAMESPACE_CHARS.sub("_", title).strip("_").lower() or "rest"
