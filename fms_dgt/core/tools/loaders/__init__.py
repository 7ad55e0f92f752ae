"""Tool loaders: sources -> :class:`~fms_dgt.core.tools.data_objects.Tool` objects.

One plug-in per module (``file``, ``inline``, ``function``, ``mcp``, ``rest``), registered with
:func:`~fms_dgt.plugins.register_tool_loader`; a new loader is a new module here (or an entry point
of another package) and nothing else. Names are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fms_dgt._lazy import lazy_exports

if TYPE_CHECKING:
    from fms_dgt.core.tools.loaders.base import LoadReport, Problem, ToolLoader
    from fms_dgt.core.tools.loaders.file import FileToolLoader
    from fms_dgt.core.tools.loaders.function import FunctionToolLoader, register_function
    from fms_dgt.core.tools.loaders.inline import InlineToolLoader
    from fms_dgt.core.tools.loaders.mcp import MCPToolLoader
    from fms_dgt.core.tools.loaders.rest import RESTToolLoader
    from fms_dgt.plugins import get_tool_loader_class, register_tool_loader

__all__ = [
    "FileToolLoader",
    "FunctionToolLoader",
    "InlineToolLoader",
    "LoadReport",
    "MCPToolLoader",
    "Problem",
    "RESTToolLoader",
    "ToolLoader",
    "get_tool_loader_class",
    "register_function",
    "register_tool_loader",
]

_L = "fms_dgt.core.tools.loaders"
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "LoadReport": f"{_L}.base",
        "Problem": f"{_L}.base",
        "ToolLoader": f"{_L}.base",
        "FileToolLoader": f"{_L}.file",
        "FunctionToolLoader": f"{_L}.function",
        "register_function": f"{_L}.function",
        "InlineToolLoader": f"{_L}.inline",
        "MCPToolLoader": f"{_L}.mcp",
        "RESTToolLoader": f"{_L}.rest",
        "get_tool_loader_class": "fms_dgt.plugins",
        "register_tool_loader": "fms_dgt.plugins",
    },
)
