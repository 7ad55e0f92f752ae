"""The ``file`` loader: tools from YAML, JSON and JSON Lines files in the shapes found in the wild.

Accepted shapes (detected per file, and per item inside lists):

1. ``{namespace: [tool, ...], other_namespace: [...]}``: every key is a namespace.
2. ``[tool, ...]``: a bare list.
3. ``{tool_name: tool, ...}``: a map by name (the key is the name when the tool has none).
4. ``{namespace: ..., tools: [...]}``.
5. OpenAI tools: ``{"type": "function", "function": {...}}`` items.
6. Dataset records that carry tool lists: BFCL ``{id, question, function: [...]}``, records with
   ``tools: [...]`` (also as a JSON string), ToolBench ``{api_list: [...]}`` (a tool per
   ``tool_name`` + ``api_name``). The same definition repeated across records is folded into one
   tool and counted; a repeat that differs only in annotations keeps the first and warns
   (``on_conflict: error`` makes it fatal).

Kubernetes-style manifests (``apiVersion``, ``kind: Tool``, ``metadata``, ``spec``) and single tool
objects load too. A tool is any mapping with a ``name``; its arguments schema is read from
``parameters``, ``input_schema``/``inputSchema`` or flat maps (``input_parameters``, ``arguments``,
``query_parameters``, ``path_parameters``), its result schema from ``output_parameters``,
``response``, ``returns`` or ``output_schema``/``outputSchema``. Keys the loader does not use are kept
in ``metadata["extra"]``.

Namespace precedence: the tool's own ``namespace`` key, then the loader's ``namespace`` argument,
then the file's namespace (shape 1 keys, shape 4 ``namespace``), then ``"default"``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any, ClassVar

from fms_dgt.core.tools.constants import DEFAULT_NAMESPACE
from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.loaders.base import LoadReport, ToolLoader
from fms_dgt.core.tools.schema import is_flat_parameter_map, normalise_parameters
from fms_dgt.errors import ConfigError, InvalidSchemaError, LoadError, ToolDefinitionError
from fms_dgt.io import read_document
from fms_dgt.plugins import register_tool_loader

__all__ = ["FileToolLoader", "ToolConverter", "iter_tool_entries"]

_INPUT_SCHEMA_KEYS = ("parameters", "input_schema", "inputSchema")
_INPUT_FLAT_KEYS = {
    "input_parameters": None,
    "arguments": None,
    "query_parameters": "query",
    "path_parameters": "path",
    "header_parameters": "header",
    "body_parameters": "body",
}
_OUTPUT_KEYS = ("output_parameters", "response", "returns", "output_schema", "outputSchema")
_RECORD_LIST_KEYS = ("function", "functions", "tools", "api_list")
_TOOL_HINT_KEYS = frozenset({"description", *_INPUT_SCHEMA_KEYS, *_INPUT_FLAT_KEYS, *_OUTPUT_KEYS})
_EXEC_SPEC_KEYS = ("mode", "mock_result", "mock_template", "http", "timeout_ms", "requires_approval")
_ON_CONFLICT = ("first", "error")


@dataclass(slots=True)
class _Entry:
    """A raw tool mapping found in a document, with where it came from."""

    raw: Mapping[str, Any]
    pointer: str
    file_namespace: str | None
    record: str | None  # the dataset record it came from, or None for plain tool files


def _esc(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def iter_tool_entries(doc: Any, pointer: str = "") -> Iterator[_Entry]:
    """Yield every raw tool mapping of a parsed document (see module docstring for shapes)."""
    if isinstance(doc, list):
        yield from _from_list(doc, pointer, None)
    elif isinstance(doc, dict):
        yield from _from_mapping(doc, pointer)
    else:
        raise LoadError(
            f"unsupported document: expected a list or mapping of tools, got {type(doc).__name__}",
            pointer=pointer,
        )


def _from_list(items: list[Any], pointer: str, namespace: str | None) -> Iterator[_Entry]:
    for index, item in enumerate(items):
        ptr = f"{pointer}/{index}"
        if isinstance(item, dict) and _is_record(item):
            yield from _from_record(item, ptr, namespace)
        else:
            yield _Entry(item, ptr, namespace, None)


def _is_record(item: Mapping[str, Any]) -> bool:
    if _looks_like_tool(item):
        return False
    return any(
        isinstance(item[k], list) or (k == "tools" and isinstance(item[k], str))
        for k in _RECORD_LIST_KEYS
        if k in item
    )


def _from_record(record: Mapping[str, Any], pointer: str, namespace: str | None) -> Iterator[_Entry]:
    label = _record_label(record, pointer)
    for key in _RECORD_LIST_KEYS:
        tools = record.get(key)
        if isinstance(tools, str):
            tools = _json_list(tools, f"{pointer}/{key}")
        if not isinstance(tools, list):
            continue
        for index, raw in enumerate(tools):
            ptr = f"{pointer}/{key}/{index}"
            if key == "api_list" and isinstance(raw, dict):
                raw = _from_rapidapi(raw)
            yield _Entry(raw, ptr, namespace, label)


def _record_label(record: Mapping[str, Any], pointer: str) -> str:
    for key in ("id", "query_id", "record_id", "uuid"):
        if key in record:
            return f"record {key}={record[key]} ({pointer})"
    return f"record {pointer}"


def _json_list(text: str, pointer: str) -> list[Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LoadError(f"tool list given as a string is not JSON: {exc.msg}", pointer=pointer) from exc
    return value if isinstance(value, list) else [value]


def _from_mapping(doc: Mapping[str, Any], pointer: str) -> Iterator[_Entry]:
    if _looks_like_tool(doc):
        yield _Entry(doc, pointer, None, None)
    elif isinstance(doc.get("tools"), list) and not _is_record_only(doc):
        namespace = doc.get("namespace")
        ns = namespace if isinstance(namespace, str) else None
        yield from _from_list(doc["tools"], f"{pointer}/tools", ns)
    elif _is_record(doc):
        yield from _from_record(doc, pointer, None)
    else:
        yield from _from_keyed(doc, pointer)


def _is_record_only(doc: Mapping[str, Any]) -> bool:
    # {namespace, tools} is shape 4; a mapping with other payload (query, id) is a dataset record.
    return any(k in doc for k in ("query", "question", "id", "messages", "conversations"))


def _from_keyed(doc: Mapping[str, Any], pointer: str) -> Iterator[_Entry]:
    for key, value in doc.items():
        ptr = f"{pointer}/{_esc(key)}"
        if isinstance(value, list):
            yield from _from_list(value, ptr, str(key))
        elif isinstance(value, dict):
            if "name" not in value and not _names_a_tool(value):
                raise LoadError(_NOT_A_TOOL.format(key=key), pointer=ptr)
            raw = value if "name" in value else {"name": str(key), **value}
            yield _Entry(raw, ptr, None, None)
        else:
            raise LoadError(
                f"unsupported value under key {key!r}: expected a list of tools (namespace) or a "
                f"tool mapping, got {type(value).__name__}",
                pointer=ptr,
            )


_NOT_A_TOOL = (
    "mapping under key {key!r} is not a tool: it has no 'name' and none of the keys a tool has "
    "(description, parameters, input_schema, inputSchema, arguments, output_parameters, ...), and it "
    "is not a namespace's list of tools or a dataset record. Give it a name and a schema, or, if the "
    "file is a run config, pass it where a config is expected"
)


def _names_a_tool(value: Mapping[str, Any]) -> bool:
    """True when a nameless mapping under a key still reads as a tool (the key is its name)."""
    if value.get("kind") == "Tool" and "apiVersion" in value:
        return True
    if value.get("type") == "function" and isinstance(value.get("function"), dict):
        return True
    return not _TOOL_HINT_KEYS.isdisjoint(value)


def _looks_like_tool(doc: Mapping[str, Any]) -> bool:
    if doc.get("kind") == "Tool" and "apiVersion" in doc:
        return True
    if doc.get("type") == "function" and isinstance(doc.get("function"), dict):
        return True
    return isinstance(doc.get("name"), str) and not _TOOL_HINT_KEYS.isdisjoint(doc)


_SLUG = re.compile(r"[^0-9a-zA-Z]+")


def _slug(text: str) -> str:
    return _SLUG.sub("_", text).strip("_").lower() or "unnamed"


def _from_rapidapi(api: Mapping[str, Any]) -> dict[str, Any]:
    """A ToolBench/RapidAPI ``api_list`` entry as a plain tool mapping."""
    required = [p for p in api.get("required_parameters") or [] if isinstance(p, dict)]
    optional = [p for p in api.get("optional_parameters") or [] if isinstance(p, dict)]
    properties = {
        str(p.get("name")): {k: v for k, v in p.items() if k != "name"} for p in (*required, *optional)
    }
    tool: dict[str, Any] = {
        "name": f"{_slug(str(api.get('api_name', '')))}_for_{_slug(str(api.get('tool_name', '')))}",
        "description": str(api.get("api_description") or "").strip(),
        "parameters": {
            "type": "object",
            "properties": properties,
            "required": [str(p.get("name")) for p in required],
        },
    }
    if isinstance(api.get("template_response"), dict):
        tool["output_parameters"] = _template_schema(api["template_response"])
    skip = {"api_description", "required_parameters", "optional_parameters", "template_response"}
    tool["rapidapi"] = {k: v for k, v in api.items() if k not in skip}
    return tool


def _template_schema(template: Mapping[str, Any]) -> dict[str, Any]:
    """``{"field": "str", "nested": {...}}`` example responses as an object schema."""
    properties: dict[str, Any] = {}
    for key, value in template.items():
        if isinstance(value, dict):
            properties[str(key)] = _template_schema(value)
        elif isinstance(value, list):
            properties[str(key)] = {"type": "array"}
        else:
            properties[str(key)] = {"type": str(value)} if isinstance(value, str) else {}
    return {"type": "object", "properties": properties}


class ToolConverter:
    """Turns raw tool mappings into :class:`Tool` objects, folding dataset repeats.

    Args:
        source: file or config location (used in ``metadata["source"]`` and messages).
        namespace: the loader's namespace argument (overrides the file's own).
        kind: ``metadata["kind"]`` of the tools (dispatch uses it).
        on_conflict: ``first`` or ``error`` for dataset repeats whose annotations differ.
        report: where warnings go.
    """

    def __init__(self, source: str, namespace: str | None, kind: str, on_conflict: str, report: LoadReport):
        self.source = source
        self.namespace = namespace
        self.kind = kind
        self.on_conflict = on_conflict
        self.report = report
        self.tools: list[Tool] = []
        self.problems: list[LoadError] = []
        self._folded: dict[tuple[str, str], list[tuple[Tool, str]]] = {}

    def add(self, entry: _Entry) -> None:
        """Convert one entry; a bad entry is remembered as a problem (see :meth:`raise_problems`)."""
        try:
            tool = self.convert(entry)
        except LoadError as exc:
            self.problems.append(exc)
            return
        self._add_folding(tool, entry)

    def _add_folding(self, tool: Tool, entry: _Entry) -> None:
        """Keep a tool unless it repeats one seen earlier in this source (then fold or report it).

        Public catalogues repeat definitions (dataset records each carry their tools; tool lists
        define a tool twice). An exact repeat folds; one that differs only in annotations follows
        ``on_conflict``. Repeats across sources stay the registry's duplicate error.
        """
        # Keyed by name first so fingerprints are computed only for names that repeat.
        earlier = self._folded.setdefault((tool.namespace, tool.name), [])
        for kept, where in earlier:
            if kept.fingerprint == tool.fingerprint:
                self._repeat(kept, where, tool, entry)
                return
        earlier.append((tool, _where(entry)))
        self.tools.append(tool)

    def _repeat(self, kept: Tool, where: str, tool: Tool, entry: _Entry) -> None:
        if _same_definition(kept, tool):
            self.report.folded += 1
            return
        message = (
            f"tool {tool.qualified_name} at {_where(entry)} repeats the input schema of {where} "
            "with other annotations (description, titles or output schema); kept the first"
        )
        if self.on_conflict == "error":
            self.problems.append(
                LoadError(message.replace("; kept the first", ""), source=self.source, pointer=entry.pointer)
            )
        else:
            self.report.warn(message, pointer=entry.pointer)

    def raise_problems(self) -> None:
        """Raise one :class:`LoadError` listing every bad entry, if there were any."""
        if self.problems:
            raise LoadError.collect(self.problems, self.source)

    def convert(self, entry: _Entry) -> Tool:
        """One raw entry as a Tool.

        Raises:
            LoadError: the entry is not a tool mapping, has no name, or an invalid schema.
        """
        raw = entry.raw
        if not isinstance(raw, dict):
            raise self._error(f"tool entry is a {type(raw).__name__}, not a mapping", entry)
        fields = _unwrap(raw)
        name = fields.get("name")
        if not isinstance(name, str) or not name.strip():
            raise self._error("tool without a name: every tool needs a non-empty 'name'", entry)
        namespace = self._namespace(fields, entry)
        notes: list[str] = []
        parameters, locations = self._parameters(fields, entry, notes)
        output = self._output(fields, entry, notes)
        metadata = self._metadata(fields, entry, notes, locations)
        try:
            return Tool(
                name,
                namespace,
                description=_text(fields.get("description")),
                parameters=parameters,
                output_parameters=output,
                metadata=metadata,
            )
        except ToolDefinitionError as exc:
            raise self._error(str(exc), entry) from exc

    def _error(self, message: str, entry: _Entry) -> LoadError:
        return LoadError(message, source=self.source, pointer=entry.pointer)

    def _namespace(self, fields: Mapping[str, Any], entry: _Entry) -> str:
        own = fields.get("namespace")
        if isinstance(own, str) and own:
            return own
        return self.namespace or entry.file_namespace or DEFAULT_NAMESPACE

    def _parameters(
        self, fields: Mapping[str, Any], entry: _Entry, notes: list[str]
    ) -> tuple[dict[str, Any], dict[str, str]]:
        for key in _INPUT_SCHEMA_KEYS:
            if key in fields:
                return self._schema(fields[key], entry, key, notes), {}
        merged: dict[str, Any] = {}
        locations: dict[str, str] = {}
        for key, location in _INPUT_FLAT_KEYS.items():
            value = fields.get(key)
            if isinstance(value, dict):
                merged.update(value)
                if location:
                    locations.update(dict.fromkeys(map(str, value), location))
        present = [k for k in _INPUT_FLAT_KEYS if k in fields]
        if not present:
            return {"type": "object", "properties": {}}, {}
        if len(present) > 1:
            notes.append(f"/: parameters merged from {', '.join(present)}")
        return self._schema(merged, entry, present[0], notes), locations

    def _output(self, fields: Mapping[str, Any], entry: _Entry, notes: list[str]) -> dict[str, Any]:
        for key in _OUTPUT_KEYS:
            value = fields.get(key)
            if isinstance(value, dict) and value:
                return self._schema(value, entry, key, notes, output=True)
        return {}

    def _schema(
        self, value: Any, entry: _Entry, key: str, notes: list[str], *, output: bool = False
    ) -> dict[str, Any]:
        if value is not None and not isinstance(value, dict):
            raise self._error(
                f"'{key}' is a {type(value).__name__}, not an object schema: write it as "
                "{type: object, properties: {...}}",
                entry,
            )
        schema, changes = self._normalised(value, key, entry)
        untyped_output = (
            output and isinstance(value, dict) and _is_plain_schema(value) and "type" not in value
        )
        if untyped_output and schema.get("type") == "object":
            del schema["type"]  # an output schema without a type means "any value"
            changes = changes[:-1]
        notes.extend(changes)
        if not output and schema.get("type") != "object":
            raise self._error(
                f"'{key}' is not an object schema (type {schema.get('type')!r}): tool arguments "
                "are a JSON object, wrap the value in a property",
                entry,
            )
        return dict(schema)

    def _normalised(self, value: Any, key: str, entry: _Entry) -> tuple[dict[str, Any], list[str]]:
        try:
            return normalise_parameters(value, f"/{key}")
        except InvalidSchemaError as exc:
            raise LoadError(
                f"invalid schema: {exc.reason}. {exc.fix}",
                source=self.source,
                pointer=f"{entry.pointer}{exc.pointer}",
            ) from exc

    def _metadata(
        self, fields: Mapping[str, Any], entry: _Entry, notes: list[str], locations: dict[str, str]
    ) -> dict[str, Any]:
        own = fields.get("metadata")
        metadata: dict[str, Any] = dict(own) if isinstance(own, dict) else {}
        metadata.update(fields.get("metadata_extra", {}))
        # A live manifest tool with an http block is called for real by the http engine.
        live = metadata.get("mode") == "live" and isinstance(metadata.get("http"), dict)
        metadata.setdefault("kind", "http" if live else self.kind)
        metadata["source"] = f"{self.source}#{entry.pointer or '/'}"
        if entry.record is not None:
            metadata["record"] = entry.record
        if notes:
            metadata["normalised"] = notes
        if locations:
            metadata["parameter_locations"] = locations
        extra = {
            k: v
            for k, v in fields.items()
            if k not in _USED_KEYS or (k == "metadata" and not isinstance(v, dict))
        }
        if extra:
            metadata["extra"] = extra
        return metadata


_USED_KEYS = frozenset(
    {
        "metadata",
        "name",
        "namespace",
        "description",
        "metadata_extra",
        # Derived fields written by `fms-dgt tools list --json`; recomputed on load.
        "qualified_name",
        "fingerprint",
        *_INPUT_SCHEMA_KEYS,
        *_INPUT_FLAT_KEYS,
        *_OUTPUT_KEYS,
    }
)


def _where(entry: _Entry) -> str:
    return entry.record or (entry.pointer or "/")


def _is_plain_schema(value: Mapping[str, Any]) -> bool:
    return not is_flat_parameter_map(value)


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _same_definition(a: Tool, b: Tool) -> bool:
    return (a.description, a.parameters, a.output_parameters) == (
        b.description,
        b.parameters,
        b.output_parameters,
    )


def _unwrap(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    """OpenAI tool wrappers and manifests as plain tool fields."""
    if raw.get("type") == "function" and isinstance(raw.get("function"), dict):
        rest = {k: v for k, v in raw.items() if k not in ("type", "function")}
        return {**raw["function"], **({"openai": rest} if rest else {})}
    if raw.get("kind") == "Tool" and "apiVersion" in raw:
        return _from_manifest(raw)
    return raw


def _from_manifest(raw: Mapping[str, Any]) -> dict[str, Any]:
    meta: Mapping[str, Any] = raw["metadata"] if isinstance(raw.get("metadata"), dict) else {}
    spec: Mapping[str, Any] = raw["spec"] if isinstance(raw.get("spec"), dict) else {}
    fields: dict[str, Any] = {
        "name": meta.get("name"),
        "description": spec.get("description", ""),
        "parameters": spec.get("input_schema"),
        "metadata_extra": {
            "api_version": raw.get("apiVersion"),
            **{k: spec[k] for k in _EXEC_SPEC_KEYS if k in spec},
        },
    }
    if meta.get("namespace"):
        fields["namespace"] = meta["namespace"]
    if spec.get("output_schema"):
        fields["output_parameters"] = spec["output_schema"]
    others = {
        k: v
        for k, v in spec.items()
        if k not in (*_EXEC_SPEC_KEYS, "description", "input_schema", "output_schema")
    }
    if others:
        fields["manifest_spec"] = others
    return fields


@register_tool_loader("file")
class FileToolLoader(ToolLoader):
    """Load tools from a ``.yaml``, ``.yml``, ``.json`` or ``.jsonl`` file.

    Args:
        path: the file.
        namespace: namespace for tools that do not name their own (overrides the file's).
        on_conflict: for dataset records, what to do with a repeated tool whose annotations differ:
            ``first`` (keep the first, warn) or ``error``.
    """

    path_keys: ClassVar[tuple[str, ...]] = ("path",)

    def __init__(
        self, path: str | PathLike[str], *, namespace: str | None = None, on_conflict: str = "first"
    ) -> None:
        if on_conflict not in _ON_CONFLICT:
            raise ConfigError(
                f"invalid on_conflict {on_conflict!r} for file loader: use one of {_ON_CONFLICT}"
            )
        self.path = Path(path)
        self.on_conflict = on_conflict
        super().__init__(namespace=namespace)

    def describe(self) -> str:
        return str(self.path)

    def load(self) -> list[Tool]:
        """Parse the file and convert every tool in it.

        Raises:
            LoadError: the file is missing or invalid, or any tool in it is (all listed).
        """
        report = self._new_report()
        converter = ToolConverter(str(self.path), self.namespace, "file", self.on_conflict, report)
        for document in read_document(self.path):
            try:
                entries = list(iter_tool_entries(document))
            except LoadError as exc:
                raise LoadError(exc.reason, source=str(self.path), pointer=exc.pointer) from exc
            for entry in entries:
                converter.add(entry)
        converter.raise_problems()
        if not converter.tools:
            raise LoadError(
                "no tools in file: it is empty or holds no tool definitions. Check the path, or "
                "remove the source from the config",
                source=str(self.path),
            )
        report.tools = len(converter.tools)
        return converter.tools
