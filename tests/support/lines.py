"""Record lines of every shape an export meets: a run's lines, the same records written otherwise,
records the reference path converts in its own way, and lines it refuses."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from support.canonical import TOOLS, conversation

from fms_dgt.export import export_record

METADATA = {"index": 4, "seed": 7, "sample_seed": 2**63 - 1, "context": {"x": 1.5, "é": "ü"}}


def _openai() -> dict[str, Any]:
    # A copy: records share their projected tools with the exporter's cache, and the edits change them.
    return copy.deepcopy(export_record(TOOLS, conversation(), METADATA, fmt="openai"))


def _line(record: Any, **options: Any) -> bytes:
    text = json.dumps(record, **{"ensure_ascii": False, "separators": (",", ":"), **options})
    return (text + "\n").encode()


def written_otherwise() -> list[bytes]:
    """A record as other writers put it: spaces, escapes, sorted keys, CRLF, the hf and strict layouts."""
    record = _openai()
    return [
        _line(record),
        _line(record, separators=(", ", ": ")),
        _line(record, ensure_ascii=True),
        _line(record, sort_keys=True),
        b"  " + _line(record)[:-1] + b" \r\n",
        b'{"messages":[],"tools":"ignored",' + _line(record)[1:],  # repeated keys: the last counts
        _line(export_record(TOOLS, conversation(), METADATA, fmt="hf")),
        _line(export_record(TOOLS, conversation(), METADATA, fmt="openai", strict=True)),
        _line(export_record(TOOLS, conversation()[:2], METADATA, fmt="hf", strict=True)),
    ]


def _edit(change: Callable[[dict[str, Any]], None]) -> bytes:
    record = _openai()
    change(record)
    return _line(record)


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(record: dict[str, Any]) -> None:
        node = record
        for key in path[:-1]:
            node = node[key]
        if value is _DELETE:
            del node[path[-1]]
        else:
            node[path[-1]] = value

    return change


_DELETE = object()
# conversation() in the openai layout: 0 system, 1 user, 2 two calls, 3-4 results, 5 call, 6 result, 7 answer.
EDITS: list[Callable[[dict[str, Any]], None]] = [
    _set(("messages", 3, "name"), _DELETE),
    _set(("messages", 2, "tool_calls", 0, "id"), _DELETE),
    _set(("messages", 2, "tool_calls", 1, "id"), ""),
    _set(("messages", 2, "content"), None),
    _set(("messages", 6, "content"), "1e5"),
    _set(("messages", 6, "content"), '{"error": "boom"}'),
    _set(("messages", 6, "content"), "null"),
    _set(("messages", 6, "content"), {"not": "text"}),
    _set(("messages", 6, "content"), " [1, 2] "),
    _set(("messages", 2, "tool_calls", 0, "function", "arguments"), '{"q": "x",  "limit": 1.0}'),
    _set(("messages", 1, "tool_calls"), [{"id": "u1", "function": {"name": "net__ping", "arguments": "{}"}}]),
    _set(("messages", 5, "content"), "one moment"),
    _set(("messages", 0, "role"), "developer"),
    lambda r: r.update(tools=None, messages=r["messages"][:2]),
    lambda r: (r.pop("tools"), r.update(messages=r["messages"][:2])),
    lambda r: r.update(tools=[]),  # calls of tools the record does not offer: refused
    _set(("layout",), "plain"),
    _set(("x",), [1, {"y": None}]),
    _set(("metadata", "name_map", "old__tool"), "old::tool"),
    _set(("metadata", "call_ids"), ["stale"]),
    _set(("messages", 3, "tool_call_id"), "unknown"),
    lambda r: r["tools"].append(copy.deepcopy(r["tools"][0])),
    lambda r: r["tools"].append({"function": {**r["tools"][0]["function"], "description": "2nd"}}),
    lambda r: r["tools"].reverse(),
    lambda r: r["messages"].insert(4, {"role": "system", "content": "midway"}),
    lambda r: r["tools"][1]["function"].update(description="Add two numbers, changed."),
    lambda r: r["tools"][1]["function"]["parameters"].update(required=["b", "a"]),
    lambda r: r["tools"][1]["function"]["parameters"]["properties"]["a"].update(minimum=1.0),
    lambda r: r["tools"][1]["function"]["parameters"]["properties"]["a"].update(minimum=1),
]
#: Records the reference path refuses (an error or a rejection): the fast path must leave them to it.
REFUSED: list[Callable[[dict[str, Any]], None]] = [
    _set(("metadata", "template_family"), "qwen"),
    _set(("metadata", "name_map", "net__ping"), "unqualified"),
    _set(("metadata", "name_map"), {"kb__lookup": 1}),
    _set(("metadata", "format"), "bfcl"),
    _set(("messages", 2, "tool_calls", 0, "function", "arguments"), "{not json"),
    _set(("messages", 2, "tool_calls", 0, "function", "arguments"), '["a list"]'),
    _set(("messages", 2, "tool_calls", 0, "function", "name"), "nope__nope"),
    lambda r: r["messages"][3].update(tool_call_id="unknown", name=None),
    _set(("messages", 1), "not an object"),
    _set(("messages", 1, "content"), 5),
    _set(("tools", 0, "function", "parameters"), {"type": "string"}),
    _set(("tools",), {"not": "a list"}),
    lambda r: r["tools"].pop(1),  # a call to a tool the record does not offer
]


def edited() -> list[bytes]:
    """The rich record with one thing changed each: every branch of reading and writing a record."""
    return [_edit(change) for change in EDITS]


def refused() -> list[bytes]:
    """Lines the reference path refuses to convert, or cannot parse."""
    good = _line(_openai())
    return [
        *(_edit(change) for change in REFUSED),
        good[:200] + b"\n",
        good[:-2] + b"\xff}\n",
        b"[1, 2]\n",
        good[:-2] + b',"metadata":{}}\n',  # the last of two keys counts, as json.loads has it
        good[:-2] + b",}\n",
        good[:-1] + b" extra\n",
    ]


def left_to_reference() -> list[bytes]:
    """Lines the reference path reads but the fast path leaves to it: other layouts, a byte-order mark."""
    return [
        *(
            _line(export_record(TOOLS, conversation(), METADATA, fmt=fmt, layout=layout))
            for fmt in ("anthropic", "openai-responses", "sharegpt", "openai", "hf")
            for layout in (None, "arrow-safe")
            if fmt not in ("openai", "hf") or layout
        ),
        b"\xef\xbb\xbf" + _line(_openai()),
        _line(
            {
                "layout": "arrow-safe",
                "tools": [],
                "messages": [],
                "metadata": {"format": "openai", "name_map": {}, "json_keys": ["x"], "x": "[1]"},
            }
        ),
    ]
