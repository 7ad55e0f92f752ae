"""A small offline MCP server for ``configs/demo.yaml`` (stdio), on the standard library alone.

It offers the same tools, schemas and answers as ``sdk_demo_server.py`` (the same server written
with the MCP SDK's ``MCPServer``): a canned weather forecast, a unit converter, a notebook that
keeps notes for as long as the server runs, and ``reset``, which forgets the notes (configs name
it as the server's ``reset_tool``, so each record starts with an empty notebook).

Why a second one: the SDK server spends about 0.9 ms of CPU on each call (its stdio transport
hands every line to a worker thread, and each request crosses several layers of validation),
several times what these tools cost. In the default run that was a quarter of all the CPU the run
used. This one speaks the same protocol (JSON-RPC 2.0, one message per line: ``initialize``,
``ping``, ``tools/list``, ``tools/call``) and answers in a few microseconds, so the default run
measures fms_dgt rather than the SDK's server. ``sdk_demo_server.py`` is what most servers look
like; ``configs/mcp_example.yaml`` runs it.

Run it directly to try it with any MCP client::

    python data/mcp/demo_server.py
"""

from __future__ import annotations

import json
import sys
import zlib
from collections.abc import Callable
from typing import Any

# The protocol versions this server speaks, newest first (it answers a client's version if it is
# one of these, else the newest, and the client decides whether it can go on).
VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")

_CLIMATE = {"lisbon": (19.0, "sunny"), "oslo": (4.5, "snow"), "nairobi": (24.0, "showers")}
_SKIES = ("sunny", "clear", "partly cloudy", "cloudy", "showers", "rain", "windy", "fog")
_NOTES: list[str] = []
_UNITS = ["celsius", "fahrenheit"]


def _string(title: str) -> dict[str, Any]:
    return {"title": title, "type": "string"}


def _object(title: str, properties: dict[str, Any], *, description: str | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"properties": properties, "required": list(properties), "type": "object"}
    if not properties:
        schema.pop("required")
    if description:
        schema["description"] = description
    schema["title"] = title
    return schema


def _result(title: str, item: dict[str, Any]) -> dict[str, Any]:
    """The output schema of a tool whose result is not an object: ``{"result": ...}``."""
    return _object(title, {"result": {**item, "title": "Result"} if "type" in item else item})


def _climate(city: str) -> tuple[float, str]:
    """A city's canned forecast: its own for the three above, else one drawn from its name (the
    same city always gets the same, so a record's calls agree; cities differ, unlike one default
    for all)."""
    known = _CLIMATE.get(city.strip().lower())
    if known is not None:
        return known
    drawn = zlib.crc32(city.strip().lower().encode("utf-8", "replace"))
    return round(4 + (drawn % 230) / 10, 1), _SKIES[(drawn >> 16) % len(_SKIES)]


def get_forecast(city: str) -> dict[str, Any]:
    """Today's forecast for a city (Lisbon, Oslo or Nairobi; other cities get one made from their name)."""
    celsius, conditions = _climate(city)
    return {"city": city, "celsius": celsius, "conditions": conditions}


def convert_temperature(value: float, to: str) -> dict[str, Any]:
    """Convert a temperature to Celsius or Fahrenheit (the input is in the other unit)."""
    converted = value * 9 / 5 + 32 if to == "fahrenheit" else (value - 32) * 5 / 9
    return {"value": round(converted, 2), "unit": to}


def add_note(text: str) -> dict[str, Any]:
    """Store a note; returns how many notes there are."""
    _NOTES.append(text)
    return {"result": len(_NOTES)}


def list_notes() -> dict[str, Any]:
    """Every note stored since the server started."""
    return {"result": list(_NOTES)}


def reset() -> dict[str, Any]:
    """Forget every note (called between records; not offered as a tool)."""
    _NOTES.clear()
    return {"result": 0}


# name -> (function, title, annotations, input schema, output schema)
TOOLS: dict[
    str, tuple[Callable[..., dict[str, Any]], str, dict[str, bool], dict[str, Any], dict[str, Any]]
] = {
    "get_forecast": (
        get_forecast,
        "Weather forecast",
        {"readOnlyHint": True},
        _object("get_forecastArguments", {"city": _string("City")}),
        _object(
            "Forecast",
            {
                "city": _string("City"),
                "celsius": {"title": "Celsius", "type": "number"},
                "conditions": _string("Conditions"),
            },
            description="A forecast for one city.",
        ),
    ),
    "convert_temperature": (
        convert_temperature,
        "Convert a temperature",
        {"readOnlyHint": True},
        _object(
            "convert_temperatureArguments",
            {
                "value": {"title": "Value", "type": "number"},
                "to": {"enum": _UNITS, "title": "To", "type": "string"},
            },
        ),
        _object(
            "Conversion",
            {
                "value": {"title": "Value", "type": "number"},
                "unit": {"enum": _UNITS, "title": "Unit", "type": "string"},
            },
            description="A converted temperature.",
        ),
    ),
    "add_note": (
        add_note,
        "Add a note",
        {"destructiveHint": False},
        _object("add_noteArguments", {"text": _string("Text")}),
        _result("add_noteOutput", {"type": "integer"}),
    ),
    "list_notes": (
        list_notes,
        "List notes",
        {"readOnlyHint": True},
        _object("list_notesArguments", {}),
        _result("list_notesOutput", {"items": {"type": "string"}, "title": "Result", "type": "array"}),
    ),
    "reset": (
        reset,
        "Reset",
        {"destructiveHint": True},
        _object("resetArguments", {}),
        _result("resetOutput", {"type": "integer"}),
    ),
}


def listing() -> list[dict[str, Any]]:
    """The ``tools/list`` entries."""
    return [
        {
            "annotations": annotations,
            "description": function.__doc__,
            "inputSchema": inputs,
            "name": name,
            "outputSchema": outputs,
            "title": title,
        }
        for name, (function, title, annotations, inputs, outputs) in TOOLS.items()
    ]


def argument_errors(schema: dict[str, Any], arguments: Any) -> list[str]:
    """What is wrong with ``arguments`` for a tool's input schema (empty when they fit)."""
    if not isinstance(arguments, dict):
        return [f"arguments must be an object, not {type(arguments).__name__}"]
    properties = schema["properties"]
    errors = [f"{name}: missing" for name in schema.get("required", []) if name not in arguments]
    for name, value in arguments.items():
        spec = properties.get(name)
        if spec is None:
            errors.append(
                f"{name}: not an argument of this tool (it takes {', '.join(properties) or 'none'})"
            )
        elif spec["type"] == "number" and (isinstance(value, bool) or not isinstance(value, int | float)):
            errors.append(f"{name}: expected a number, got {json.dumps(value)[:80]}")
        elif spec["type"] == "string" and not isinstance(value, str):
            errors.append(f"{name}: expected a string, got {json.dumps(value)[:80]}")
        elif "enum" in spec and value not in spec["enum"]:
            errors.append(f"{name}: expected one of {', '.join(spec['enum'])}, got {json.dumps(value)[:80]}")
    return errors


def call(params: dict[str, Any]) -> dict[str, Any]:
    """A ``tools/call`` result. Bad arguments are a tool error (``isError``), as MCP asks, so the
    model that sent them can read why."""
    function, _, _, inputs, _ = TOOLS[params["name"]]
    arguments = params.get("arguments") or {}
    errors = argument_errors(inputs, arguments)
    if errors:
        text = f"Error executing tool {params['name']}: " + "; ".join(errors)
        return {"content": [{"text": text, "type": "text"}], "isError": True}
    structured = function(**arguments)
    return {"content": _content(structured), "isError": False, "structuredContent": structured}


def _content(structured: dict[str, Any]) -> list[dict[str, Any]]:
    """The text blocks beside the structured result, written as the SDK writes them: an object as
    indented JSON, a wrapped list one block per item, a wrapped number as its digits."""
    if "result" not in structured:
        return [{"text": json.dumps(structured, indent=2), "type": "text"}]
    value = structured["result"]
    items = value if isinstance(value, list) else [value]
    return [{"text": str(item), "type": "text"} for item in items]


def answer(message: Any) -> dict[str, Any] | None:
    """The reply to one message, or None for a notification."""
    if (
        not isinstance(message, dict)
        or message.get("jsonrpc") != "2.0"
        or not isinstance(message.get("method"), str)
    ):
        return _error(message.get("id") if isinstance(message, dict) else None, -32600, "Invalid request")
    if "id" not in message:
        return None  # notifications (initialized, cancelled) need no answer
    method, params = message["method"], message.get("params") or {}
    if not isinstance(params, dict):
        return _error(message["id"], -32602, "params must be an object")
    if method == "initialize":
        return _reply(message["id"], _initialize(params))
    if method == "ping":
        return _reply(message["id"], {})
    if method == "tools/list":
        return _reply(message["id"], {"tools": listing()})
    if method == "tools/call":
        if params.get("name") not in TOOLS:
            return _error(message["id"], -32602, f"Unknown tool: {params.get('name')}")
        return _reply(message["id"], call(params))
    return _error(message["id"], -32601, "Method not found", data=method)


def _initialize(params: dict[str, Any]) -> dict[str, Any]:
    asked = params.get("protocolVersion")
    return {
        "capabilities": {"tools": {"listChanged": False}},
        "instructions": "Demo tools for fms_dgt's MCP example.",
        "protocolVersion": asked if asked in VERSIONS else VERSIONS[0],
        "serverInfo": {"name": "fms-demo", "version": ""},
    }


def _reply(request_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _error(request_id: Any, code: int, message: str, *, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def serve(lines: Any, out: Any) -> None:
    """Answer every line of ``lines`` on ``out`` until the input ends."""
    for line in lines:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: nesting deeper than Python's stack
            reply: dict[str, Any] | None = _error(
                None, -32700, "Parse error: a message must be one line of JSON"
            )
        else:
            reply = answer(message)
        if reply is not None:
            out.write(json.dumps(reply, separators=(",", ":")) + "\n")
            out.flush()


if __name__ == "__main__":
    # A line that is not UTF-8 reads with replacement characters, then fails as JSON: an error
    # answer, not a crash of the server.
    sys.stdin.reconfigure(errors="replace")  # type: ignore[union-attr]
    serve(sys.stdin, sys.stdout)
