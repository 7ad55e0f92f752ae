"""One canonical record, many exporters: writing a record in any format and reading it back.

:func:`export_record` is the one writer: the canonical record (the tools offered, the conversation
as :class:`~fms_dgt.core.tools.wire.Message` turns, the metadata) in a wire format, optionally
adapted to a chat-template family (``hf`` only) and laid out arrow-safe. :func:`read_record` is its
inverse for every format that loses nothing, so :func:`convert_record` turns a record of one format
into any other (``fms-dgt export``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fms_dgt.core.tools._json import COMPACT, COMPACT_SORTED
from fms_dgt.core.tools.data_objects import Tool, distinct_tools, split_qualified_name
from fms_dgt.core.tools.wire import families
from fms_dgt.core.tools.wire.base import Message, WireFormat, get_wire_format
from fms_dgt.core.tools.wire.families import Family
from fms_dgt.core.tools.wire.names import NameCodec
from fms_dgt.core.tools.wire.schemas import input_schema
from fms_dgt.errors import ToolDefinitionError, WireError
from fms_dgt.export.layout import ARROW_SAFE, from_arrow_safe, to_arrow_safe

__all__ = [
    "LAYOUT_KEYS",
    "CanonicalRecord",
    "convert_record",
    "export_record",
    "project",
    "read_record",
    "record_tool",
    "shared_text",
]

#: Metadata keys a writer sets itself (they describe the layout, not the scenario).
LAYOUT_KEYS = ("format", "name_map", "template_family", "call_ids", "json_keys")


@dataclass(slots=True, kw_only=True)
class CanonicalRecord:
    """A record independent of any format.

    Attributes:
        tools: the tools offered, in offered order.
        messages: the conversation.
        metadata: the scenario's metadata (without the keys that describe a layout).
        strict: the tool schemas are in OpenAI's strict shape.
    """

    tools: list[Tool]
    messages: list[Message]
    metadata: dict[str, Any] = field(default_factory=dict)
    strict: bool = False


def export_record(
    tools: Sequence[Tool],
    messages: Sequence[Message],
    metadata: Mapping[str, Any],
    *,
    fmt: str,
    family: str | Family | None = None,
    layout: str | None = None,
    strict: bool = False,
) -> dict[str, Any]:
    """One record in format ``fmt``.

    Args:
        tools: the tools offered (overloads of one name: the first is written).
        messages: the conversation (qualified names).
        metadata: the record's metadata; ``format``, ``name_map`` (and ``template_family``) are set.
        fmt: a registered wire format.
        family: a chat-template family (``hf`` only): the record is adapted to it.
        layout: ``"arrow-safe"`` for the arrow-safe layout, else None.
        strict: OpenAI strict-mode schemas.

    Raises:
        WireError: unknown format, family or layout, or a family with another format than ``hf``.
        RejectedRecord: the conversation cannot be expressed in the format or family.
    """
    wire = get_wire_format(fmt)
    rules = _family(family, fmt)
    offered = distinct_tools(tools)
    codec = wire.codec(t.qualified_name for t in offered)
    projected = [_projected(wire, fmt, t, codec.encode(t.qualified_name), strict) for t in offered]
    turns = list(messages)
    if rules is not None:
        projected = families.adapt_tools(projected, rules)
        turns = families.adapt(turns, rules)
    body = wire.messages(turns, codec)
    if rules is not None:
        body = families.finish(body, rules)
    meta = {k: v for k, v in metadata.items() if k not in LAYOUT_KEYS}
    meta.update(format=fmt, name_map=codec.name_map)
    if rules is not None:
        meta["template_family"] = rules.name
    record = wire.assemble(wire.tools(projected), body, meta)
    return _laid_out(record, layout)


#: Projected tools by (format, strict, provider name, tool, the text of its schema): a run offers the
#: same tools in many records, and projecting a schema costs more than writing the record. The key
#: holds the tool itself (tools compare by every field; a fingerprint ignores descriptions) and the
#: text of its schema (equal schemas may differ in key order or in ``1`` against ``1.0``): a record is
#: written with its own tools, whatever was exported before in the process. Entries are shared,
#: never mutated (families and layouts build new objects).
_PROJECTED: dict[tuple[str, bool, str, Tool, str], dict[str, Any]] = {}
_PROJECTED_MAX = 50_000
#: The same entries by the tool object itself: the text of a tool's schema is made once per tool,
#: not once per record offering it. Tools are immutable (the fingerprint and validators memoised on
#: them count on it too); a tool a refresh brings is another object. An entry holds its tool, so
#: the tool's id is not given to another object while the entry lives.
_BY_TOOL: dict[tuple[int, str, bool, str], tuple[Tool, dict[str, Any]]] = {}


def _projected(wire: WireFormat, fmt: str, tool: Tool, name: str, strict: bool) -> dict[str, Any]:
    key = (id(tool), fmt, strict, name)
    known = _BY_TOOL.get(key)
    if known is not None and known[0] is tool:
        return known[1]
    projected = _projected_schema(wire, fmt, tool, name, strict)
    if len(_BY_TOOL) >= _PROJECTED_MAX:
        _BY_TOOL.clear()
    _BY_TOOL[key] = (tool, projected)
    return projected


def _projected_schema(wire: WireFormat, fmt: str, tool: Tool, name: str, strict: bool) -> dict[str, Any]:
    key = (fmt, strict, name, tool, COMPACT(tool.parameters))
    projected = _PROJECTED.get(key)
    if projected is None:
        if len(_PROJECTED) >= _PROJECTED_MAX:
            _PROJECTED.clear()
        projected = project(wire, tool, name, strict)
        _PROJECTED[key] = projected
        if len(_SHARED) >= _PROJECTED_MAX:
            _SHARED.clear()
        _SHARED[id(projected)] = (projected, None)
    return projected


#: Every projected tool shared between records, by the object, with its text once a line needed it
#: (the entry holds the object, so its id is not given to another one while the entry lives).
_SHARED: dict[int, tuple[dict[str, Any], str | None]] = {}


def shared_text(value: Any) -> str | None:
    """``json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))`` when
    ``value`` is a projected tool this module shares between records (never changed: its text is
    made once), else None."""
    known = _SHARED.get(id(value))
    if known is None or known[0] is not value:
        return None
    text = known[1]
    if text is None:
        text = COMPACT_SORTED(value)
        _SHARED[id(value)] = (value, text)
    return text


def project(wire: WireFormat, tool: Tool, name: str, strict: bool) -> dict[str, Any]:
    """One offered tool as format ``wire`` writes it, under provider name ``name``."""
    return wire.tool(tool, name, input_schema(tool, None, strict), strict=strict)


def _family(family: str | Family | None, fmt: str) -> Family | None:
    if family is None:
        return None
    rules = families.get_family(family)
    if fmt != "hf":
        raise WireError(
            f"template family {rules.name!r} with format {fmt!r}: families adapt records in the hf layout "
            "(the one chat templates take). Use --format hf."
        )
    return rules


def _laid_out(record: dict[str, Any], layout: str | None) -> dict[str, Any]:
    if layout is None or layout == "plain":
        return record
    if layout != ARROW_SAFE:
        raise WireError(f"unknown layout {layout!r}: use {ARROW_SAFE!r} (or none for the plain layout).")
    return to_arrow_safe(record)


def read_record(record: Mapping[str, Any]) -> CanonicalRecord:
    """The canonical record of a record written by :func:`export_record` (or by a run).

    Raises:
        WireError: the record's format loses information (xlam, bfcl, gemini), the record was adapted
            to a template family, or it is malformed (the message says where).
    """
    plain = from_arrow_safe(record)
    metadata = plain.get("metadata")
    if not isinstance(metadata, dict):
        raise WireError("malformed record: no metadata object. Give records written by fms-dgt.")
    fmt = metadata.get("format")
    if not isinstance(fmt, str):
        raise WireError("malformed record: metadata.format is missing. Give records written by fms-dgt.")
    if metadata.get("template_family"):
        raise WireError(
            f"cannot read back a record adapted to the {metadata['template_family']} template family: "
            "the adaptation (split turns, calls in text) is one-way. Export from the run's own records."
        )
    wire = get_wire_format(fmt)
    codec = _codec(metadata)
    wire_tools, messages = wire.read(plain, codec)
    tools = [_tool(codec, w.name, w.description, w.parameters) for w in wire_tools]
    kept = {k: v for k, v in metadata.items() if k not in LAYOUT_KEYS}
    return CanonicalRecord(tools=tools, messages=messages, metadata=kept, strict=_strict(plain, wire))


def _codec(metadata: Mapping[str, Any]) -> NameCodec:
    name_map = metadata.get("name_map")
    if not isinstance(name_map, dict) or not all(isinstance(v, str) for v in name_map.values()):
        raise WireError(
            "malformed record: metadata.name_map (provider name -> qualified name) is missing or not a "
            "mapping of names. Give records written by fms-dgt."
        )
    return NameCodec.from_name_map(name_map)


def _tool(codec: NameCodec, name: str, description: str, parameters: dict[str, Any]) -> Tool:
    return record_tool(name, codec.decode(name), description, parameters)


def record_tool(name: str, qualified: str, description: str, parameters: dict[str, Any]) -> Tool:
    """The canonical tool of a tool a record offers as ``name`` (``qualified`` in its name map).

    Raises:
        WireError: the qualified name or the tool is invalid.
    """
    try:
        namespace, short = split_qualified_name(qualified)
        return Tool(short, namespace, description=description, parameters=parameters)
    except ToolDefinitionError as exc:
        raise WireError(f"malformed tool {name!r} in the record: {exc}") from None


def _strict(record: Mapping[str, Any], wire: WireFormat) -> bool:
    tools = record.get("tools")
    if not isinstance(tools, list):
        return False
    if wire.plugin_name == "openai":
        return any(isinstance(t, dict) and t.get("function", {}).get("strict") is True for t in tools)
    if wire.plugin_name == "openai-responses":
        return any(isinstance(t, dict) and t.get("strict") is True for t in tools)
    return False


def convert_record(
    record: Mapping[str, Any],
    *,
    fmt: str,
    family: str | Family | None = None,
    layout: str | None = None,
) -> dict[str, Any]:
    """A record of any lossless format in format ``fmt`` (see :func:`export_record`).

    Raises:
        WireError: see :func:`read_record` and :func:`export_record`.
        RejectedRecord: the conversation cannot be expressed in the format or family.
    """
    canonical = read_record(record)
    return export_record(
        canonical.tools,
        canonical.messages,
        canonical.metadata,
        fmt=fmt,
        family=family,
        layout=layout,
        strict=canonical.strict,
    )
