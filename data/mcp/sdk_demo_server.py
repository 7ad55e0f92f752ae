"""A small offline MCP server for ``configs/mcp_example.yaml`` (stdio).

Four tools with typed results (so each declares an ``outputSchema``): a canned weather forecast,
a unit converter, and a notebook that keeps notes for as long as the server runs; and ``reset``,
which forgets the notes (configs name it as the server's ``reset_tool``, so each record starts
with an empty notebook and no record sees another's notes).

``demo_server.py`` serves the same tools with the same answers on the standard library alone (the
default run uses it: the SDK layers of this one took a quarter of the default run's CPU).

The tools are ``async`` although they wait on nothing: the SDK runs a plain function on a worker
thread for every call, which costs more than these tools do.

Run it directly to try it with any MCP client::

    python data/mcp/sdk_demo_server.py
"""

from __future__ import annotations

import zlib
from typing import Literal

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from pydantic import BaseModel

server = MCPServer("fms-demo", instructions="Demo tools for fms_dgt's MCP example.", log_level="WARNING")

_CLIMATE = {"lisbon": (19.0, "sunny"), "oslo": (4.5, "snow"), "nairobi": (24.0, "showers")}
_SKIES = ("sunny", "clear", "partly cloudy", "cloudy", "showers", "rain", "windy", "fog")
_NOTES: list[str] = []


class Forecast(BaseModel):
    """A forecast for one city."""

    city: str
    celsius: float
    conditions: str


class Conversion(BaseModel):
    """A converted temperature."""

    value: float
    unit: Literal["celsius", "fahrenheit"]


def _climate(city: str) -> tuple[float, str]:
    """A city's canned forecast: its own for the three above, else one drawn from its name (the
    same city always gets the same, so a record's calls agree; cities differ, unlike one default
    for all)."""
    known = _CLIMATE.get(city.strip().lower())
    if known is not None:
        return known
    drawn = zlib.crc32(city.strip().lower().encode("utf-8", "replace"))
    return round(4 + (drawn % 230) / 10, 1), _SKIES[(drawn >> 16) % len(_SKIES)]


@server.tool(title="Weather forecast", annotations=ToolAnnotations(read_only_hint=True))
async def get_forecast(city: str) -> Forecast:
    """Today's forecast for a city (Lisbon, Oslo or Nairobi; other cities get one made from their name)."""
    celsius, conditions = _climate(city)
    return Forecast(city=city, celsius=celsius, conditions=conditions)


@server.tool(title="Convert a temperature", annotations=ToolAnnotations(read_only_hint=True))
async def convert_temperature(value: float, to: Literal["celsius", "fahrenheit"]) -> Conversion:
    """Convert a temperature to Celsius or Fahrenheit (the input is in the other unit)."""
    converted = value * 9 / 5 + 32 if to == "fahrenheit" else (value - 32) * 5 / 9
    return Conversion(value=round(converted, 2), unit=to)


@server.tool(title="Add a note", annotations=ToolAnnotations(destructive_hint=False))
async def add_note(text: str) -> int:
    """Store a note; returns how many notes there are."""
    _NOTES.append(text)
    return len(_NOTES)


@server.tool(title="List notes", annotations=ToolAnnotations(read_only_hint=True))
async def list_notes() -> list[str]:
    """Every note stored since the server started."""
    return list(_NOTES)


@server.tool(title="Reset", annotations=ToolAnnotations(destructive_hint=True))
async def reset() -> int:
    """Forget every note (called between records; not offered as a tool)."""
    _NOTES.clear()
    return 0


if __name__ == "__main__":
    server.run("stdio")
