"""APIGen / xLAM function-calling records (``xlam``): ``query``, ``tools``, ``answers``.

The layout of Salesforce's ``xlam-function-calling-60k``: ``id``, the user's ``query``, ``tools`` as
the JSON text of ``[{name, description, parameters}]`` where ``parameters`` maps each argument to
``{type, description, default}`` in xLAM's Python-like type names (``str``, ``int``, ``float``,
``bool``, ``List[...]``, ``Dict``, ``Any``; ``", optional"`` for an argument that is not
required), and ``answers`` as the JSON text of every call ``[{name, arguments}]``. Results and the
final answer have no place in the layout, so records of this format cannot be read back.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.wire.base import Message, WireFormat
from fms_dgt.core.tools.wire.names import NameCodec
from fms_dgt.plugins import register_wire_format

__all__ = ["XLAM", "xlam_parameters"]

_TYPES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "object": "Dict"}


@register_wire_format("xlam")
class XLAM(WireFormat):
    """xLAM / APIGen function-calling records (single query, the calls as answers)."""

    lossy = "xLAM records keep the user's query and the calls only (no results, no final answer)"

    def tool(self, tool: Tool, name: str, schema: dict[str, Any], *, strict: bool) -> dict[str, Any]:
        return {"name": name, "description": tool.description, "parameters": xlam_parameters(schema)}

    def tools(self, projected: list[dict[str, Any]]) -> Any:
        return _dumps(projected)

    def messages(self, messages: Sequence[Message], codec: NameCodec) -> dict[str, Any]:
        query = "\n\n".join(m.content for m in messages if m.role == "user")
        answers = [
            {"name": codec.encode(c.name), "arguments": c.arguments} for m in messages for c in m.tool_calls
        ]
        return {"query": query, "answers": _dumps(answers)}

    def assemble(self, tools: Any, body: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": metadata.get("index"),
            "query": body["query"],
            "tools": tools,
            **body,
            "metadata": metadata,
        }


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def xlam_parameters(schema: dict[str, Any]) -> dict[str, Any]:
    """An object schema as xLAM's ``{argument: {type, description, default}}`` mapping."""
    required = set(schema.get("required", ()))
    out: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        prop = prop if isinstance(prop, dict) else {}
        entry: dict[str, Any] = {"description": str(prop.get("description", ""))}
        kind = _type_name(prop)
        entry["type"] = kind if name in required else f"{kind}, optional"
        if "default" in prop:
            entry["default"] = prop["default"]
        out[name] = entry
    return out


def _type_name(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items")
        return f"List[{_type_name(items)}]" if isinstance(items, dict) else "List"
    return _TYPES.get(kind, "Any") if isinstance(kind, str) else "Any"
