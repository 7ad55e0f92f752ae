"""Reading YAML, JSON and JSON Lines: bounded, strict, and with errors that name file and line.

Every document read here is untrusted (tool files, specs, configs' data files), so parsing is
bounded before anything walks the result (:class:`ParseLimits`):

* **nesting depth**: a document nested deeper than ``max_depth`` is refused (a YAML document
  nested 40,000 deep would otherwise overflow the C stack of the YAML composer);
* **size**: a document with more than ``max_nodes`` values is refused, counting every value an
  alias repeats, so a few hundred bytes of YAML aliases cannot expand into gigabytes downstream;
  an alias to a collection that is still open (a self-reference) is refused;
* **duplicate keys** are errors in YAML and JSON alike (the second would silently replace the
  first), named with their line (YAML) or JSON pointer (JSON).

YAML is read from libyaml's event stream (C) and assembled here without its composer: iterative,
so depth costs no stack, and several times faster than ``CSafeLoader``. Scalars resolve exactly as
with PyYAML's safe loader (its resolver and constructors), merge keys (``<<``) included.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any

import yaml
from yaml import events

from fms_dgt.errors import LoadError, SourceNotFoundError

__all__ = [
    "DEFAULT_LIMITS",
    "HAS_LIBYAML",
    "ParseLimits",
    "check_limits",
    "check_text",
    "env_int",
    "escapes_surrogate",
    "parse_json_text",
    "parse_yaml_text",
    "read_document",
    "surrogate_problem",
]

HAS_LIBYAML = hasattr(yaml, "CSafeLoader")
_EventLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"
_DEFAULT_TAGS = (None, "!", "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")
_TAG_MESSAGE = "unsupported YAML tag {tag!r}: tool files and configs hold plain data. Remove the tag"


@dataclass(frozen=True, slots=True)
class ParseLimits:
    """Bounds on a parsed document.

    Attributes:
        max_depth: deepest nesting of mappings and lists (the real-world corpus needs 24).
        max_nodes: most values in one document, aliases counted as often as they repeat.
        max_bytes: largest file read.
    """

    max_depth: int = 128
    max_nodes: int = 5_000_000
    max_bytes: int = 512 * 1024 * 1024

    @classmethod
    def from_env(cls) -> ParseLimits:
        """The defaults, each overridable by an environment variable (``DGT_MAX_DEPTH``,
        ``DGT_MAX_NODES``, ``DGT_MAX_FILE_BYTES``); a value that is not a positive integer is
        ignored with a warning."""
        base = cls()
        return cls(
            max_depth=env_int("DGT_MAX_DEPTH", base.max_depth),
            max_nodes=env_int("DGT_MAX_NODES", base.max_nodes),
            max_bytes=env_int("DGT_MAX_FILE_BYTES", base.max_bytes),
        )


def env_int(name: str, default: int) -> int:
    """A positive integer from the environment variable ``name``, else ``default``."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        logging.getLogger(__name__).warning("ignoring %s=%r: expected a positive integer", name, raw)
        return default
    return value


DEFAULT_LIMITS = ParseLimits.from_env()


# --------------------------------------------------------------------------- YAML


class _Frame:
    """One open mapping or sequence while events arrive."""

    __slots__ = ("anchor", "first_lines", "is_map", "key", "key_line", "merges", "size", "value", "waiting")

    def __init__(self, is_map: bool, anchor: str | None) -> None:
        self.is_map = is_map
        self.anchor = anchor
        self.value: Any = {} if is_map else []
        self.size = 1
        self.waiting = True  # a mapping waits for a key (True) or for the key's value (False)
        self.key: Any = None
        self.key_line = 0
        self.first_lines: dict[Any, int] = {}
        self.merges: list[dict[Any, Any]] = []


class _YAMLBuilder:
    """Assembles documents from libyaml's events with the bounds of :class:`ParseLimits`."""

    def __init__(self, text: str, source: str, limits: ParseLimits) -> None:
        self.loader = _EventLoader(text)
        self.source = source
        self.limits = limits
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.stack: list[_Frame] = []
        self.nodes = 0

    def documents(self) -> list[Any]:
        docs: list[Any] = []
        root: Any = None
        try:
            for event in self._events():
                kind = type(event)
                if kind is events.DocumentEndEvent:
                    docs.append(root)
                    root, self.nodes = None, 0
                    self.anchors.clear()
                    continue
                done = self._value(event, kind)
                if done is not None and not self.stack:
                    root = done[0]
        finally:
            self.loader.dispose()
        return docs

    def _events(self) -> Iterator[Any]:
        get = self.loader.get_event
        while True:
            event = get()
            if type(event) is events.StreamEndEvent:
                return
            yield event

    def _value(self, event: Any, kind: type) -> tuple[Any] | None:
        """Handle one event; returns ``(value,)`` when it completed a value, else None."""
        if kind is events.ScalarEvent:
            value, size = self._scalar(event), 1
            if event.anchor:
                self.anchors[event.anchor] = (value, 1)
        elif kind is events.MappingStartEvent or kind is events.SequenceStartEvent:
            self._open(event, kind is events.MappingStartEvent)
            return None
        elif kind is events.MappingEndEvent or kind is events.SequenceEndEvent:
            value, size = self._close()
        elif kind is events.AliasEvent:
            value, size = self._alias(event)
        else:
            return None
        self._count(size, event)
        if self.stack:
            self._add(self.stack[-1], value, event)
        return (value,)

    def _scalar(self, event: Any) -> Any:
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.loader.resolve(yaml.ScalarNode, event.value, event.implicit)
        if tag == _STR:
            if _SURROGATE.search(event.value):
                raise self._error(str(surrogate_problem(event.value)), event)
            return event.value
        if tag == _MERGE:
            return _MergeKey
        constructor = self.loader.yaml_constructors.get(tag)
        if constructor is None:
            raise self._error(_TAG_MESSAGE.format(tag=tag), event)
        node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
        try:
            return constructor(self.loader, node)
        except ValueError as exc:  # an integer of thousands of digits, a date out of range
            raise self._error(_unreadable(tag.rsplit(":", 1)[-1], exc), event) from None

    def _open(self, event: Any, is_map: bool) -> None:
        if event.tag not in _DEFAULT_TAGS:
            raise self._error(
                f"unsupported YAML tag {event.tag!r}: tool files and configs use plain data", event
            )
        if len(self.stack) >= self.limits.max_depth:
            raise self._error(
                f"document nested too deeply (more than {self.limits.max_depth} levels): no tool file, "
                "spec or config needs that; it looks hostile or broken",
                event,
            )
        self.stack.append(_Frame(is_map, event.anchor))

    def _close(self) -> tuple[Any, int]:
        frame = self.stack.pop()
        value = frame.value
        if frame.merges:
            merged: dict[Any, Any] = {}
            for source in reversed(frame.merges):  # earlier merged mappings take precedence
                merged.update(source)
            merged.update(value)
            value = merged
        if frame.anchor:
            self.anchors[frame.anchor] = (value, frame.size)
        return value, frame.size

    def _alias(self, event: Any) -> tuple[Any, int]:
        found = self.anchors.get(event.anchor)
        if found is None:
            raise self._error(
                f"alias *{event.anchor} refers to no finished anchor: it is undefined or refers to a "
                "collection that contains it (a self-reference). Define the anchor before using it",
                event,
            )
        return found

    def _count(self, size: int, event: Any) -> None:
        self.nodes += size
        if self.stack:
            self.stack[-1].size += size
        if self.nodes > self.limits.max_nodes:
            raise self._error(
                f"document too large: more than {self.limits.max_nodes:,} values once aliases are "
                "expanded (an alias repeats its anchor's whole value). Remove the repetition",
                event,
            )

    def _add(self, frame: _Frame, value: Any, event: Any) -> None:
        if not frame.is_map:
            frame.value.append(value)
        elif frame.waiting:
            frame.key, frame.key_line, frame.waiting = value, event.start_mark.line + 1, False
        else:
            frame.waiting = True
            self._set(frame, frame.key, value, event)

    def _set(self, frame: _Frame, key: Any, value: Any, event: Any) -> None:
        if key is _MergeKey:
            self._merge(frame, value, event)
            return
        try:
            first = frame.first_lines.get(key)
        except TypeError:
            raise self._error("unhashable mapping key (a list or mapping used as a key)", event) from None
        if first is not None:
            raise LoadError(
                f"duplicate key {key!r} (first at line {first}): YAML mappings may not repeat a key, the "
                "second would silently replace the first. Rename or remove one",
                source=self.source,
                line=frame.key_line,
            )
        frame.first_lines[key] = frame.key_line
        frame.value[key] = value

    def _merge(self, frame: _Frame, value: Any, event: Any) -> None:
        sources = value if isinstance(value, list) else [value]
        if not all(isinstance(s, dict) for s in sources):
            raise self._error("merge key << expects a mapping or a list of mappings", event)
        frame.merges.extend(sources)

    def _error(self, message: str, event: Any) -> LoadError:
        return LoadError(message, source=self.source, line=event.start_mark.line + 1)


def _unreadable(kind: str, exc: ValueError) -> str:
    text = str(exc)
    if "integer string conversion" in text:
        return (
            f"unreadable {kind} value: an integer with thousands of digits. No tool needs that; fix the value"
        )
    return f"unreadable {kind} value: {text[:120]}"


class _MergeKey:
    """Marker for the YAML merge key ``<<``."""


def parse_yaml_text(text: str, source: str, limits: ParseLimits = DEFAULT_LIMITS) -> list[Any]:
    """Every document of a YAML stream, within ``limits``.

    Raises:
        LoadError: the text is not valid YAML, repeats a key, uses an unsupported tag, or
            exceeds a limit (with line).
    """
    try:
        return _YAMLBuilder(text, source, limits).documents()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        if "nesting depth" in str(exc.problem):
            # PyYAML 6.0.4's scanner counts flow levels ahead of the events, past our own limit.
            raise LoadError(
                f"document nested too deeply (more than {limits.max_depth} levels): no tool file, "
                "spec or config needs that; it looks hostile or broken",
                source=source,
                line=line,
            ) from exc
        raise LoadError(f"invalid YAML: {exc.problem or exc}", source=source, line=line) from exc
    except yaml.YAMLError as exc:
        raise LoadError(f"invalid YAML: {exc}", source=source) from exc


# --------------------------------------------------------------------------- JSON


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return value


def _loads(text: str, source: str, line: int | None = None, what: str = "JSON") -> Any:
    try:
        return json.loads(text, object_pairs_hook=_unique_object)
    except json.JSONDecodeError as exc:
        raise LoadError(f"invalid {what}: {exc.msg}", source=source, line=line or exc.lineno) from exc
    except _DuplicateKey as exc:
        raise LoadError(
            f"duplicate key {exc.key!r} in a JSON object: the second would silently replace the first "
            "(a tool could change its name or schema that way). Remove one",
            source=source,
            line=line,
            pointer=_duplicate_pointer(text),
        ) from None
    except RecursionError:
        raise LoadError(
            "JSON nested too deeply: no tool file, spec or config needs that; it looks hostile or broken",
            source=source,
            line=line,
        ) from None
    except ValueError as exc:  # an integer of thousands of digits
        raise LoadError(_unreadable("JSON", exc), source=source, line=line) from None


def _duplicate_pointer(text: str) -> str | None:
    """The JSON pointer of the first object with a repeated key (slow path, errors only)."""
    tree = json.loads(text, object_pairs_hook=_Pairs)
    stack: list[tuple[Any, str]] = [(tree, "")]
    while stack:
        node, pointer = stack.pop()
        if isinstance(node, _Pairs):
            keys = [k for k, _ in node]
            if len(set(keys)) != len(keys):
                return pointer
            stack.extend((v, f"{pointer}/{_escape(k)}") for k, v in reversed(node))
        elif isinstance(node, list):
            stack.extend((v, f"{pointer}/{i}") for i, v in reversed(list(enumerate(node))))
    return None


class _Pairs(list):  # type: ignore[type-arg]
    """An object's key/value pairs in order, kept as they were written."""


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


#: A lone UTF-16 surrogate: a JSON or YAML escape can write one (``"\\ud800"``, half of an
#: emoji's pair), but it is no character, and UTF-8 cannot encode it: every later write of the
#: text (a record, a cache, an encoder, a terminal) would fail on it.
_SURROGATE = re.compile("[\ud800-\udfff]")


def surrogate_problem(text: str) -> str | None:
    """Why ``text`` cannot be written (it holds a lone surrogate), or None when it can."""
    found = _SURROGATE.search(text)
    if found is None:
        return None
    return (
        f"a string holds a lone surrogate ({found.group().encode('unicode_escape').decode()}): it is no "
        "Unicode character (a broken \\u escape, or half of a pair) and no file or model can be "
        "written with it. Write the character itself, or both halves of its escape"
    )


def check_limits(
    value: Any, source: str, limits: ParseLimits = DEFAULT_LIMITS, line: int | None = None
) -> None:
    """Refuse a parsed value nested deeper than ``limits.max_depth`` (an iterative walk).

    Raises:
        LoadError: the value is nested too deeply.
    """
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limits.max_depth:
            raise LoadError(
                f"document nested too deeply (more than {limits.max_depth} levels): no tool file, spec "
                "or config needs that; it looks hostile or broken",
                source=source,
                line=line,
            )
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))


_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
_ESCAPED_SURROGATE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")


def escapes_surrogate(data: bytes | str) -> bool:
    """Whether JSON text writes a surrogate escape (``\\ud83d``), the only way its value can hold
    a lone surrogate: a text without one needs no :func:`check_text` walk."""
    if isinstance(data, bytes):
        return _ESCAPED_SURROGATE_BYTES.search(data) is not None
    return _ESCAPED_SURROGATE.search(data) is not None


def check_text(value: Any, source: str, line: int | None = None) -> None:
    """Refuse a parsed value holding a key or string that is not valid Unicode (a lone surrogate:
    :func:`surrogate_problem`), at any depth (an iterative walk).

    Raises:
        LoadError: with the string's JSON pointer (its reason names the surrogate).
    """
    stack = [value]
    while stack:
        node = stack.pop()
        if type(node) is str:
            if _SURROGATE.search(node):
                _refuse_surrogate(value, source, line)
        elif isinstance(node, dict):
            if any(type(k) is str and _SURROGATE.search(k) for k in node):
                _refuse_surrogate(value, source, line)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _refuse_surrogate(value: Any, source: str, line: int | None) -> None:
    """Raise the error of the first string (or key) of ``value`` holding a lone surrogate, with
    its JSON pointer (slow path, errors only)."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        node, pointer = stack.pop()
        if isinstance(node, str):
            problem = surrogate_problem(node)
            if problem:
                raise LoadError(problem, source=source, line=line, pointer=pointer or None)
        elif isinstance(node, dict):
            for key, child in reversed(list(node.items())):
                where = f"{pointer}/{_escape(str(key))}"
                if isinstance(key, str) and (problem := surrogate_problem(key)):
                    shown = where.encode("utf-8", "backslashreplace").decode()  # printable
                    raise LoadError(f"{problem} (in a key)", source=source, line=line, pointer=shown)
                stack.append((child, where))
        elif isinstance(node, list):
            stack.extend((c, f"{pointer}/{i}") for i, c in reversed(list(enumerate(node))))


def parse_json_text(
    text: str, source: str, *, lines: bool = False, limits: ParseLimits = DEFAULT_LIMITS
) -> list[Any]:
    """A JSON document (as a one-item list) or the records of JSON Lines, within ``limits``.

    A ``.json`` file that holds one JSON value per line (as BFCL ships) is read as JSON Lines.

    Raises:
        LoadError: invalid JSON, a duplicate key or a limit exceeded (with line or pointer).
    """
    if not lines:
        try:
            value = _loads(text, source)
        except LoadError as exc:
            if not _extra_data(exc):
                raise
        else:
            if isinstance(value, (dict, list)):
                check_limits(value, source, limits)
            if escapes_surrogate(text):
                check_text(value, source)
            return [value]
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            record = _loads(line, source, number, "JSON Lines record")
            if isinstance(record, (dict, list)):
                check_limits(record, source, limits, number)
            if escapes_surrogate(line):
                check_text(record, source, number)
            records.append(record)
    return [records]


def _extra_data(exc: LoadError) -> bool:
    cause = exc.__cause__
    return isinstance(cause, json.JSONDecodeError) and cause.msg.startswith("Extra data")


# --------------------------------------------------------------------------- files


def read_document(path: str | PathLike[str], limits: ParseLimits = DEFAULT_LIMITS) -> list[Any]:
    """Parse a ``.yaml``/``.yml``/``.json``/``.jsonl`` file into its documents, within ``limits``.

    Raises:
        LoadError: the file is missing, unreadable, too large, of an unknown type, or invalid.
    """
    file = Path(path)
    source = str(file)
    suffix = file.suffix.lower()
    if suffix not in (".yaml", ".yml", ".json", ".jsonl"):
        raise LoadError(
            f"unsupported tool file type {suffix or '(none)'!r}: use .yaml, .yml, .json or .jsonl",
            source=source,
        )
    text = _read_text(file, source, limits)
    if suffix in (".yaml", ".yml"):
        return parse_yaml_text(text, source, limits)
    return parse_json_text(text, source, lines=suffix == ".jsonl", limits=limits)


def _read_text(file: Path, source: str, limits: ParseLimits) -> str:
    try:
        with file.open("rb") as handle:
            data = handle.read(limits.max_bytes + 1)
    except FileNotFoundError as exc:
        raise SourceNotFoundError("tool file not found: check the path", source=source) from exc
    except OSError as exc:
        raise LoadError(f"cannot read tool file: {exc.strerror or exc}", source=source) from exc
    if len(data) > limits.max_bytes:
        raise LoadError(f"file too large: more than {limits.max_bytes:,} bytes", source=source)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LoadError(
            f"cannot read tool file: not UTF-8 text ({exc.reason} at byte {exc.start})", source=source
        ) from exc
