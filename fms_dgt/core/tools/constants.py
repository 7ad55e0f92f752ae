"""Constants shared by the tool subsystem."""

from __future__ import annotations

__all__ = ["DEFAULT_NAMESPACE", "TOOL_NAMESPACE_SEP"]

#: Separator between namespace and tool name in a qualified name (``weather_api::get_weather``).
TOOL_NAMESPACE_SEP = "::"

#: Namespace of a tool whose source names none.
DEFAULT_NAMESPACE = "default"
