"""Reading YAML, JSON and JSON Lines with errors that name file and line.

YAML goes through libyaml's C parser when PyYAML was built with it (falling back to the pure-Python
parser otherwise) and a constructor that rejects duplicate keys instead of silently keeping the
last one.
"""

from __future__ import annotations

import json
from os import PathLike
from pathlib import Path
from typing import Any

import yaml

from fms_dgt.errors import LoadError

__all__ = ["HAS_LIBYAML", "StrictYAMLLoader", "parse_json_text", "parse_yaml_text", "read_document"]

HAS_LIBYAML = hasattr(yaml, "CSafeLoader")
_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class StrictYAMLLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """Safe YAML loader (C-accelerated when available) that rejects duplicate mapping keys."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        if len(mapping) != len(node.value):
            _check_duplicates(self, node)
        return mapping


def _check_duplicates(loader: Any, node: yaml.MappingNode) -> None:
    # Merge keys (<<) legitimately repeat keys; only keys written inside this mapping count.
    start, end = node.start_mark.index, node.end_mark.index
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if not start <= key_node.start_mark.index <= end:
            continue
        key = loader.construct_object(key_node)
        line = key_node.start_mark.line + 1
        if key in seen:
            raise LoadError(
                f"duplicate key {key!r} (first at line {seen[key]}): YAML mappings may not repeat "
                "a key, the second would silently replace the first. Rename or remove one",
                source=getattr(loader, "dgt_source", None),
                line=line,
            )
        seen[key] = line


def parse_yaml_text(text: str, source: str) -> list[Any]:
    """Every document of a YAML stream.

    Raises:
        LoadError: the text is not valid YAML or repeats a key (with line).
    """
    try:
        loader = StrictYAMLLoader(text)
        loader.dgt_source = source
        try:
            docs = []
            while loader.check_data():
                docs.append(loader.get_data())
            return docs
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        raise LoadError(f"invalid YAML: {exc.problem or exc}", source=source, line=line) from exc
    except yaml.YAMLError as exc:
        raise LoadError(f"invalid YAML: {exc}", source=source) from exc


def parse_json_text(text: str, source: str, *, lines: bool = False) -> list[Any]:
    """A JSON document (as a one-item list) or the records of JSON Lines.

    A ``.json`` file that holds one JSON value per line (as BFCL ships) is read as JSON Lines.

    Raises:
        LoadError: invalid JSON (with line).
    """
    if not lines:
        try:
            return [json.loads(text)]
        except json.JSONDecodeError as exc:
            if not exc.msg.startswith("Extra data"):
                raise LoadError(f"invalid JSON: {exc.msg}", source=source, line=exc.lineno) from exc
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise LoadError(f"invalid JSON Lines record: {exc.msg}", source=source, line=number) from exc
    return [records]


def read_document(path: str | PathLike[str]) -> list[Any]:
    """Parse a ``.yaml``/``.yml``/``.json``/``.jsonl`` file into its documents.

    Raises:
        LoadError: the file is missing, unreadable, of an unknown type, or invalid.
    """
    file = Path(path)
    source = str(file)
    suffix = file.suffix.lower()
    if suffix not in (".yaml", ".yml", ".json", ".jsonl"):
        raise LoadError(
            f"unsupported tool file type {suffix or '(none)'!r}: use .yaml, .yml, .json or .jsonl",
            source=source,
        )
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise LoadError("tool file not found: check the path", source=source) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise LoadError(f"cannot read tool file: {exc}", source=source) from exc
    if suffix in (".yaml", ".yml"):
        return parse_yaml_text(text, source)
    return parse_json_text(text, source, lines=suffix == ".jsonl")
