"""Berkeley Function Calling Leaderboard test entries (``bfcl``), scored by BFCL's AST checker.

A record is a BFCL test entry ``{id, question, function}`` plus its ``possible_answer``
``{id, ground_truth}``, so BFCL's checker can score a model on generated data:

* ``question`` is ``[[...]]``: the system and user turns before the first call (one turn);
* ``function`` holds the tools in BFCL's type dialect (``dict``, ``float``, ``integer``, ``string``,
  ``boolean``, ``array``, ``tuple``, ``any``), every object with ``required``, every array with
  typed ``items``, ``$ref`` inlined: the checker indexes these and fails on standard JSON Schema
  types, type lists and a missing ``required``;
* ``ground_truth`` lists every call of the record as ``{name: {argument: [value]}}`` (a ``dict``
  argument's value with each key's value listed again, as the checker compares dictionaries);
* ``id`` is ``<category>_<index>`` with BFCL's category of the call pattern (``simple``,
  ``multiple``, ``parallel``, ``parallel_multiple``; ``irrelevance`` for a record without calls),
  which picks the checker.

Tool names lose the namespace prefix when all of a record's tools come from one namespace (a
config over BFCL's own tools then matches BFCL's names); ``metadata.name_map`` keeps the mapping.
Results and answers have no place here, so records of this format cannot be read back.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fms_dgt.core.tools.data_objects import Tool, split_qualified_name
from fms_dgt.core.tools.wire.base import Message, WireFormat
from fms_dgt.core.tools.wire.names import NameCodec
from fms_dgt.plugins import register_wire_format

__all__ = ["BFCL", "bfcl_category", "bfcl_schema"]

_TYPES = {
    "object": "dict",
    "number": "float",
    "integer": "integer",
    "string": "string",
    "boolean": "boolean",
    "array": "array",
}
_KEEP = ("description", "enum", "default")
_MAX_DEPTH = 8


@register_wire_format("bfcl")
class BFCL(WireFormat):
    """BFCL test entries with their possible answers."""

    lossy = "BFCL entries keep the question and the calls only, in BFCL's type dialect"

    def codec(self, qualified_names: Iterable[str]) -> NameCodec:
        return _codec(frozenset(qualified_names))

    def tool(self, tool: Tool, name: str, schema: dict[str, Any], *, strict: bool) -> dict[str, Any]:
        parameters = bfcl_schema(schema)
        parameters.setdefault("properties", {})
        parameters.setdefault("required", [])
        return {"name": name, "description": tool.description, "parameters": {**parameters, "type": "dict"}}

    def messages(self, messages: Sequence[Message], codec: NameCodec) -> dict[str, Any]:
        question: list[dict[str, str]] = []
        for m in messages:
            if m.role not in ("system", "user"):
                break
            question.append({"role": m.role, "content": m.content})
        calls = [
            {"name": codec.encode(c.name), "arguments": c.arguments} for m in messages for c in m.tool_calls
        ]
        return {"question": [question], "calls": calls}

    def assemble(self, tools: Any, body: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any]:
        functions = tools or []
        entry_id = f"{bfcl_category(len(body['calls']), len(functions))}_{metadata.get('index', 0)}"
        schemas = {f["name"]: f["parameters"].get("properties", {}) for f in functions}
        truth = [{c["name"]: _answer(c["arguments"], schemas.get(c["name"], {}))} for c in body["calls"]]
        return {
            "id": entry_id,
            "question": body["question"],
            "function": functions,
            "possible_answer": {"id": entry_id, "ground_truth": truth},
            "metadata": metadata,
        }


def bfcl_category(calls: int, tools: int) -> str:
    """BFCL's test category of a call pattern (it selects the checker)."""
    if calls == 0:
        return "irrelevance"
    if calls == 1:
        return "simple" if tools <= 1 else "multiple"
    return "parallel" if tools <= 1 else "parallel_multiple"


def _answer(arguments: Mapping[str, Any], properties: Mapping[str, Any]) -> dict[str, list[Any]]:
    return {name: [_value(value, properties.get(name, {}))] for name, value in arguments.items()}


def _value(value: Any, schema: Mapping[str, Any]) -> Any:
    kind = schema.get("type")
    if kind == "dict" and isinstance(value, dict):
        return {k: [v] for k, v in value.items()}
    item = schema.get("items", {})
    if kind in ("array", "tuple") and item.get("type") == "dict" and isinstance(value, list):
        return [{k: [v] for k, v in d.items()} if isinstance(d, dict) else d for d in value]
    return value


def bfcl_schema(schema: Any, defs: Mapping[str, Any] | None = None, depth: int = 0) -> dict[str, Any]:
    """A JSON Schema in BFCL's type dialect (see the module docstring)."""
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return {"type": "any"}
    defs = {**(defs or {}), **schema.get("$defs", {}), **schema.get("definitions", {})}
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = defs.get(ref.rsplit("/", 1)[-1]) if ref.startswith("#/") else None
        merged = {**(target or {"type": "any"}), **{k: v for k, v in schema.items() if k != "$ref"}}
        return bfcl_schema(merged, defs, depth + 1)
    out = {k: schema[k] for k in _KEEP if k in schema}
    out["type"] = _type(schema)
    if out["type"] == "dict":
        props = schema.get("properties") or {}
        out["properties"] = {k: bfcl_schema(v, defs, depth + 1) for k, v in props.items()}
        out["required"] = [r for r in schema.get("required", ()) if r in props]
    elif out["type"] in ("array", "tuple"):
        items = schema.get("items")
        out["items"] = bfcl_schema(items, defs, depth + 1) if isinstance(items, dict) else {"type": "any"}
    return out


def _type(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        others = [k for k in kind if k != "null"]
        kind = others[0] if len(others) == 1 else None
    if kind in (None, "array") and "prefixItems" in schema and "items" not in schema:
        return "tuple"
    if kind is None and "properties" in schema:
        return "dict"
    return _TYPES.get(kind, "any") if isinstance(kind, str) else "any"


@functools.lru_cache(maxsize=4096)
def _codec(qualified_names: frozenset[str]) -> NameCodec:
    """BFCL's codec of a set of names, built once per set (as :func:`~.names.codec_of`): bare
    tool names when the tools share one namespace, as BFCL's own entries name them."""
    names = sorted(qualified_names)
    if len({split_qualified_name(n)[0] for n in names}) != 1:
        return NameCodec(names)
    return NameCodec.from_name_map({split_qualified_name(n)[1]: n for n in names})
