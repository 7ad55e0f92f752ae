"""A canonical record to test exporters with: every kind of turn, call and result."""

from __future__ import annotations

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.wire import Message

TOOLS = [
    Tool(
        "lookup",
        "kb",
        description='Look up "documents"\nin the knowledge base.',
        parameters={
            "type": "object",
            "properties": {
                "q": {"type": "string", "description": "the query"},
                "limit": {"type": ["integer", "null"]},
                "filters": {
                    "type": "object",
                    "properties": {"lang": {"type": "string", "enum": ["en", "fr"]}},
                },
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["q"],
        },
    ),
    Tool(
        "add",
        "calc",
        description="Add two numbers.",
        parameters={
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
    ),
    Tool("ping", "net", description="Ping.", parameters={"type": "object", "properties": {}}),
]


def conversation() -> list[Message]:
    """System, user, two parallel calls (one fails), a chained call, a final answer."""
    first = [
        ToolCall("kb::lookup", {"q": 'café "x"', "filters": {"lang": "fr"}, "tags": ["a", "b"]}, "Ab3dE6gH9"),
        ToolCall("calc::add", {"a": 1, "b": 2.5}, "Zz9Yy8Xx7"),
    ]
    results = [
        ToolResult("Ab3dE6gH9", "kb::lookup", {"hits": [{"id": 1, "title": "Café"}], "total": 1}),
        ToolResult("Zz9Yy8Xx7", "calc::add", error="overflow: a is too large"),
    ]
    return [
        Message("system", "Be brief."),
        Message("user", "Find café and add 1 and 2.5."),
        Message("assistant", "", first),
        Message("tool", results=results),
        Message("assistant", "", [ToolCall("net::ping", {}, "Qq1Ww2Ee3")]),
        Message("tool", results=[ToolResult("Qq1Ww2Ee3", "net::ping", "pong")]),
        Message("assistant", "Found one document; the addition failed."),
    ]
