"""The arrow-safe layout: records every ``datasets`` release, pandas and Parquet give back exactly.

Arrow stores a column with one type, so a value whose shape varies between records is merged into
one struct of every key ever seen (``datasets`` before 4.7 then pads each record with nulls, and a
model would see other tools' parameters), or fails to load ("changed from string to array"). In
the arrow-safe layout every such value is JSON text:

* tool schemas (``parameters``, ``input_schema``) and BFCL's ``ground_truth``;
* each turn of a conversation (``messages``, ``input``, ``contents``): turns of different roles
  carry different keys, and arguments and results are objects of any shape;
* optional top-level keys (``system``, ``systemInstruction``): JSON text always, ``null`` when the
  record has none, so every record has the same keys;
* in ``metadata``, ``name_map`` becomes a list of ``[provider, qualified]`` pairs; scalars stay,
  and so do the lists of names (``tools``, ``called``, ``distractors``, ``engines``, ``call_ids``);
  every other value is JSON text, its key listed in ``metadata.json_keys``. The choice depends on
  the key, never on the value (an empty list and a list of edges would not share a column), except
  that an integer beyond Arrow's 64 bits is JSON text wherever it is; ``sample_seed`` always is, as
  records written before seeds were kept below 2**63 hold wider ones.

The record says ``"layout": "arrow-safe"``; :func:`from_arrow_safe` gives back exactly the record
:func:`to_arrow_safe` was given.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from fms_dgt.core.tools._json import PLAIN
from fms_dgt.errors import WireError

__all__ = ["ARROW_SAFE", "from_arrow_safe", "is_arrow_safe", "to_arrow_safe"]

ARROW_SAFE = "arrow-safe"

#: Per format: paths to the values stored as JSON text ("*" = every item of a list).
_PATHS: dict[str, tuple[tuple[str, ...], ...]] = {
    "openai": (("tools", "*", "function", "parameters"), ("messages", "*")),
    "hf": (("tools", "*", "function", "parameters"), ("messages", "*")),
    "openai-responses": (("tools", "*", "parameters"), ("input", "*")),
    "anthropic": (("tools", "*", "input_schema"), ("messages", "*")),
    "gemini": (("tools", "*", "functionDeclarations", "*", "parameters"), ("contents", "*")),
    "sharegpt": (),
    "xlam": (),
    "bfcl": (("function", "*", "parameters"), ("possible_answer", "ground_truth")),
}
#: Per format: top-level keys some records have and others do not.
_OPTIONAL: dict[str, tuple[str, ...]] = {
    "anthropic": ("system",),
    "gemini": ("systemInstruction",),
    "sharegpt": ("system",),
}
_SCALARS = (str, int, float, bool)
#: Metadata lists of names (or other scalars of one type) that stay lists.
_LIST_KEYS = frozenset({"tools", "called", "distractors", "engines", "call_ids"})
#: Metadata keys always stored as JSON text (integers that may not fit in 64 bits).
_TEXT_KEYS = frozenset({"sample_seed"})
_INT64 = 2**63


def is_arrow_safe(record: Mapping[str, Any]) -> bool:
    """True when the record is in the arrow-safe layout."""
    return record.get("layout") == ARROW_SAFE


def to_arrow_safe(record: Mapping[str, Any]) -> dict[str, Any]:
    """The record in the arrow-safe layout (see the module docstring); the input is not changed.

    Raises:
        WireError: the record has no ``metadata.format`` of a known format.
    """
    fmt = _format(record)
    out = dict(record)
    for path in _PATHS[fmt]:
        out = _apply(out, path, _dumps)
    for key in _OPTIONAL.get(fmt, ()):
        out[key] = _dumps(out.get(key))
    out["metadata"] = _safe_metadata(out["metadata"])
    out["layout"] = ARROW_SAFE
    return out


def from_arrow_safe(record: Mapping[str, Any]) -> dict[str, Any]:
    """Inverse of :func:`to_arrow_safe` (a record in another layout is returned unchanged).

    Raises:
        WireError: a value that should be JSON text is not.
    """
    if not is_arrow_safe(record):
        return dict(record)
    out = {k: v for k, v in record.items() if k != "layout"}
    out["metadata"] = _plain_metadata(out.get("metadata"))
    fmt = _format(out)
    for path in _PATHS[fmt]:
        out = _apply(out, path, _loads)
    for key in _OPTIONAL.get(fmt, ()):
        value = _loads(out.get(key, "null"))
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def _format(record: Mapping[str, Any]) -> str:
    metadata = record.get("metadata")
    fmt = metadata.get("format") if isinstance(metadata, Mapping) else None
    if fmt not in _PATHS:
        raise WireError(
            f"cannot lay out a record of format {fmt!r}: the arrow-safe layout knows {', '.join(_PATHS)}. "
            "Give records written by fms-dgt (metadata.format names their layout)."
        )
    return str(fmt)


def _apply(node: Any, path: tuple[str, ...], change: Callable[[Any], Any]) -> Any:
    if not path:
        return change(node)
    head, rest = path[0], path[1:]
    if head == "*":
        return [_apply(item, rest, change) for item in node] if isinstance(node, list) else node
    if not isinstance(node, Mapping) or head not in node:
        return node
    return {**node, head: _apply(node[head], rest, change)}


def _dumps(value: Any) -> str:
    return PLAIN(value)  # json.dumps(value, ensure_ascii=False), its encoder built once


def _loads(text: Any) -> Any:
    if not isinstance(text, str):
        raise WireError(
            f"malformed arrow-safe record: expected JSON text, got {type(text).__name__}. The record was "
            "changed after it was written; export it again."
        )
    try:
        return json.loads(text)
    except ValueError as exc:
        raise WireError(f"malformed arrow-safe record: a value is not JSON text ({exc}).") from None


def _stable(key: str, value: Any) -> bool:
    if key in _TEXT_KEYS:
        return False
    if isinstance(value, int) and not isinstance(value, bool):
        return -_INT64 <= value < _INT64
    if value is None or isinstance(value, _SCALARS):
        return True
    return key in _LIST_KEYS and isinstance(value, list) and all(_stable("", v) for v in value)


def _safe_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    encoded = []
    for key, value in metadata.items():
        if key == "name_map" and isinstance(value, Mapping):
            out[key] = [[provider, qualified] for provider, qualified in value.items()]
        elif _stable(key, value):
            out[key] = value
        else:
            out[key] = _dumps(value)
            encoded.append(key)
    out["json_keys"] = encoded
    return out


def _plain_metadata(metadata: Any) -> dict[str, Any]:
    if not isinstance(metadata, Mapping):
        raise WireError("malformed arrow-safe record: no metadata object. Export the record again.")
    out = {k: v for k, v in metadata.items() if k != "json_keys"}
    for key in metadata.get("json_keys") or ():
        out[key] = _loads(out.get(key))
    pairs = out.get("name_map")
    if isinstance(pairs, list):
        out["name_map"] = {provider: qualified for provider, qualified in pairs}
    return out
