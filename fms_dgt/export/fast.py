"""The fast path of ``fms-dgt export``: a record line of the chat layout to a line of a built-in format.

The reference path (:func:`~fms_dgt.export.records.convert_record` between ``json.loads`` and
``json.dumps``) builds the whole canonical record of every line: each offered tool parsed, checked,
fingerprinted, projected and encoded again, though a run offers the same few tools in thousands of
records. :class:`FastConverter` gives the same bytes for the common case, ``openai`` and ``hf``
records (what runs write) converted to a built-in format without a template family:

* each distinct tool (the text of one item of ``tools``) is read, made canonical, projected and
  encoded once per export. A record's tools are found by their text: a known tool's text at the
  start of a list item *is* that item, since a JSON object ends where its text ends, so known tools
  are neither parsed nor encoded again;
* the conversation is read by :func:`~fms_dgt.export.bodies.chat_turns` and written by the format's
  body writer (:data:`~fms_dgt.export.bodies.BODIES`); the record is put together by the format's own
  ``assemble`` and encoded with each projected tool's text spliced in.

Anything else (another source format, a template family, a record the reference path would reject
or refuse, a damaged line) gives None, and the caller uses the reference path, which writes the
record or raises the error a user should see. ``tests/export/test_fast.py`` holds the two paths to
the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from fms_dgt.core.tools._json import COMPACT, PLAIN
from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.wire.base import WireFormat, get_wire_format
from fms_dgt.core.tools.wire.hf import HFChat
from fms_dgt.core.tools.wire.names import NameCodec
from fms_dgt.core.tools.wire.openai import OpenAIChat, read_chat_tools
from fms_dgt.errors import DGTError
from fms_dgt.export.bodies import BODIES, TEXT_TOOLS, chat_turns, tools_text
from fms_dgt.export.layout import ARROW_SAFE, to_arrow_safe
from fms_dgt.export.records import LAYOUT_KEYS, project, record_tool

__all__ = ["FastConverter"]

#: Characters of a tool's text that pick the few known tools it may be (a dictionary key).
_PREFIX = 64
#: Bounds of the caches (a run offers far fewer tools and tool sets; a mixed file may not).
_MAX_TOOLS = 20_000
_MAX_NAME_SETS = 20_000
_SPACE = " \t\n\r"
_DECODE = json.JSONDecoder().raw_decode
#: Whether a chat-layout source carries ``arguments`` as JSON text, by its format's class.
_CHAT_SOURCES: dict[type[WireFormat], bool] = {OpenAIChat: True, HFChat: False}
#: What the fast path leaves to the reference path (malformed, unusual or refused records).
_DECLINED = (LookupError, TypeError, ValueError, AttributeError, RecursionError, DGTError)


@dataclass(slots=True, frozen=True, kw_only=True)
class _Projection:
    """A projected tool, its compact text, its text with the default separators and that text as
    it stands inside a JSON string (escaping is character by character, so the texts of a list
    join inside one string)."""

    value: dict[str, Any]
    text: str
    plain: str
    quoted: str


@dataclass(slots=True, eq=False, kw_only=True)
class _KnownTool:
    """One distinct item of ``tools`` (by its text), read once, with its canonical tools and projections."""

    text: str
    name: str
    description: str
    parameters: dict[str, Any]
    strict: bool
    tools: dict[str, Tool] = field(default_factory=dict)
    projections: dict[tuple[str, str, bool], _Projection] = field(default_factory=dict)

    def tool(self, qualified: str) -> Tool:
        """The canonical tool, when the record's name map gives this provider name ``qualified``."""
        tool = self.tools.get(qualified)
        if tool is None:
            tool = self.tools[qualified] = record_tool(
                self.name, qualified, self.description, self.parameters
            )
        return tool

    def projection(self, wire: WireFormat, qualified: str, name: str, strict: bool) -> _Projection:
        """The tool projected by ``wire`` under provider name ``name``, with its texts."""
        key = (qualified, name, strict)
        known = self.projections.get(key)
        if known is None:
            value = project(wire, self.tools[qualified], name, strict)
            plain = PLAIN(value)
            known = _Projection(value=value, text=COMPACT(value), plain=plain, quoted=COMPACT(plain)[1:-1])
            self.projections[key] = known
        return known


@dataclass(slots=True, frozen=True, kw_only=True)
class _Names:
    codec: NameCodec
    encoded: dict[str, str]
    name_map: dict[str, str]


class FastConverter:
    """Record lines to lines of format ``fmt``, for the records the fast path takes (see the module).

    Args:
        fmt: the target wire format.
        family: a template family (the fast path takes none: every line goes the reference path).
        layout: None, ``"plain"`` or ``"arrow-safe"``.
    """

    def __init__(self, fmt: str, *, family: str | None = None, layout: str | None = None) -> None:
        try:
            self._wire: WireFormat | None = get_wire_format(fmt)
        except DGTError:
            self._wire = None  # the reference path raises the error, naming the line
        usable = family is None and layout in (None, "plain", ARROW_SAFE)
        if self._wire is None or type(self._wire) not in BODIES or not usable:
            self._wire = None
        self._fmt = fmt
        self._arrow = layout == ARROW_SAFE
        self._known: dict[str, list[_KnownTool]] = {}
        self._count = 0
        self._names: dict[frozenset[str], _Names] = {}
        self._sources: dict[Any, bool] = {}
        self._keys: dict[str, str] = {}

    def convert(self, line: bytes | str) -> str | None:
        """The converted record as one line of JSON text (no newline), or None: use the reference path."""
        if self._wire is None:
            return None
        try:
            return self._convert(line.decode("utf-8") if isinstance(line, bytes) else line, self._wire)
        except _DECLINED:
            return None

    def _convert(self, text: str, wire: WireFormat) -> str:
        members = self._members(text)
        metadata, text_arguments = self._metadata(members)
        name_map = metadata["name_map"]
        turns = chat_turns(members["messages"], name_map, text_arguments=text_arguments)
        names, projections = self._offered(_listed(members.get("tools")), name_map, text_arguments, wire)
        projected = [p.value for p in projections]
        # The tools' text from each tool's own, spliced where the format puts the list (or its text).
        if type(wire) in TEXT_TOOLS:
            tools = tools_text([p.plain for p in projections])
            listed = {id(tools): '"[' + ", ".join(p.quoted for p in projections) + ']"'}
        else:
            tools = wire.tools(projected)
            listed = {id(projected): "[" + ",".join(p.text for p in projections) + "]"}
        record = wire.assemble(tools, BODIES[type(wire)](turns, names.encoded), self._meta(metadata, names))
        if self._arrow:
            return COMPACT(to_arrow_safe(record))
        return self._encoded(record, tools, listed)

    def _metadata(self, members: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """The record's metadata, and whether its format carries arguments as text."""
        metadata = members["metadata"]
        if (
            type(metadata) is not dict
            or members.get("layout") == ARROW_SAFE
            or metadata.get("template_family")
        ):
            raise ValueError("not a plain record of a run")
        name_map = metadata["name_map"]
        if type(name_map) is not dict or not all(type(v) is str for v in name_map.values()):
            raise ValueError("no name map")
        return metadata, self._source(metadata["format"])

    def _offered(
        self, known: list[_KnownTool], name_map: dict[str, str], text_arguments: bool, wire: WireFormat
    ) -> tuple[_Names, list[_Projection]]:
        """The provider names of the offered tools, and each projected (the first of a name counts)."""
        offered: dict[str, _KnownTool] = {}
        for item in known:
            qualified = name_map[item.name]
            item.tool(qualified)  # every item is checked, as the reference path reads every one
            offered.setdefault(qualified, item)
        strict = text_arguments and any(item.strict for item in known)
        names = self._names_of(offered, wire)
        return names, [item.projection(wire, q, names.encoded[q], strict) for q, item in offered.items()]

    def _meta(self, metadata: dict[str, Any], names: _Names) -> dict[str, Any]:
        meta = dict(metadata)  # a copy in C, then the few layout keys out: what a comprehension keeps
        for key in LAYOUT_KEYS:
            meta.pop(key, None)
        meta["format"] = self._fmt
        meta["name_map"] = names.name_map
        return meta

    def _encoded(self, record: dict[str, Any], tools: Any, listed: dict[int, str]) -> str:
        """``COMPACT(record)``, the ``tools`` value spliced from the projected tools' texts."""
        parts = []
        for key, value in record.items():
            name = self._keys.get(key)
            if name is None:
                if type(key) is not str:
                    raise ValueError("a key is not text")
                name = self._keys[key] = COMPACT(key) + ":"
            parts.append(name + (_spliced(value, listed) if value is tools else COMPACT(value)))
        return "{" + ",".join(parts) + "}"

    def _source(self, fmt: Any) -> bool:
        """Whether records of format ``fmt`` carry arguments as text (KeyError: not a chat layout)."""
        known = self._sources.get(fmt)
        if known is None:
            known = self._sources[fmt] = _CHAT_SOURCES[type(get_wire_format(fmt))]
        return known

    def _names_of(self, qualified: Iterable[str], wire: WireFormat) -> _Names:
        # The built-in codecs depend on the set of names only, so a set is the key.
        key = frozenset(qualified)
        names = self._names.get(key)
        if names is None:
            if len(self._names) >= _MAX_NAME_SETS:
                self._names.clear()
            codec = wire.codec(sorted(key))
            encoded = {q: codec.encode(q) for q in key}
            names = self._names[key] = _Names(codec=codec, encoded=encoded, name_map=codec.name_map)
        return names

    # ------------------------------------------------------------------ the line's top level

    def _members(self, text: str) -> dict[str, Any]:
        i = _space(text, 0)
        if text[i] != "{":
            raise ValueError("not an object")
        members: dict[str, Any] = {}
        i = _space(text, i + 1)
        while text[i] != "}":
            if text[i] != '"':
                raise ValueError("not a key")
            key, i = _DECODE(text, i)
            i = _space(text, i)
            if text[i] != ":":
                raise ValueError("not a member")
            i = _space(text, i + 1)
            if key == "tools" and text[i] == "[":
                members[key], i = self._tools(text, i)
            else:
                members[key], i = _DECODE(text, i)
            i = _space(text, i)
            if text[i] == ",":
                i = _space(text, i + 1)
                if text[i] == "}":
                    raise ValueError("a trailing comma")
            elif text[i] != "}":
                raise ValueError("not a member")
        if text[i + 1 :].strip(_SPACE):
            raise ValueError("extra data")
        return members

    def _tools(self, text: str, i: int) -> tuple[list[_KnownTool], int]:
        known: list[_KnownTool] = []
        i = _space(text, i + 1)
        if text[i] == "]":
            return known, i + 1
        while True:
            item, i = self._tool_at(text, i)
            known.append(item)
            i = _space(text, i)
            if text[i] == "]":
                return known, i + 1
            if text[i] != ",":
                raise ValueError("not a list")
            i = _space(text, i + 1)

    def _tool_at(self, text: str, i: int) -> tuple[_KnownTool, int]:
        for item in self._known.get(text[i : i + _PREFIX], ()):
            if text.startswith(item.text, i):
                return item, i + len(item.text)
        value, end = _DECODE(text, i)
        item = _read_tool(text[i:end], value)
        if end - i >= _PREFIX:  # a shorter text is followed by other characters in the key
            if self._count >= _MAX_TOOLS:
                self._known.clear()
                self._count = 0
            self._known.setdefault(item.text[:_PREFIX], []).append(item)
            self._count += 1
        return item, end


def _space(text: str, i: int) -> int:
    """The index of the first character from ``i`` that is not JSON white space (IndexError at the end)."""
    while text[i] in _SPACE:
        i += 1
    return i


def _listed(tools: Any) -> list[_KnownTool]:
    if tools is None:
        return []
    if type(tools) is not list:
        raise ValueError("tools is not a list")
    return tools


def _read_tool(text: str, value: Any) -> _KnownTool:
    read = read_chat_tools({"tools": [value]})[0]
    strict = value["function"].get("strict") is True
    return _KnownTool(
        text=text, name=read.name, description=read.description, parameters=read.parameters, strict=strict
    )


def _spliced(value: Any, fragments: dict[int, str]) -> str:
    """``COMPACT(value)``, with the text of the objects in ``fragments`` (by identity) taken from it."""
    known = fragments.get(id(value))
    if known is not None:
        return known
    if type(value) is list:
        return "[" + ",".join(_spliced(v, fragments) for v in value) + "]"
    if type(value) is dict and all(type(k) is str for k in value):
        return "{" + ",".join(f"{COMPACT(k)}:{_spliced(v, fragments)}" for k, v in value.items()) + "}"
    return COMPACT(value)
