"""fms_dgt: synthetic tool-calling data generation.

The public entry points are re-exported here; heavy protocol libraries (``mcp``, the OpenAPI
libraries) are imported only by the modules that need them.
"""

from __future__ import annotations

from fms_dgt.core.tools.constants import TOOL_NAMESPACE_SEP
from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.registry import RefreshReport, ToolRegistry

__all__ = ["TOOL_NAMESPACE_SEP", "RefreshReport", "Tool", "ToolCall", "ToolRegistry", "ToolResult"]
__version__ = "0.1.0"
