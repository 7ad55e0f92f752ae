"""The tool subsystem's front door: ``from fms_dgt.core.tools import Tool, ToolRegistry``.

The data model and the registry are imported here; everything else (samplers, engines, loaders,
wire formats) is imported the first time its name is used, so this package stays light.
Sub-packages (``loaders``, ``enrichments``, ``samplers``, ``engines``, ``wire``, ``schema``,
``mcp``, ``openapi``) export their own public names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fms_dgt._lazy import lazy_exports
from fms_dgt.core.tools.constants import DEFAULT_NAMESPACE, TOOL_NAMESPACE_SEP
from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult, qualify, split_qualified_name
from fms_dgt.core.tools.registry import RefreshReport, ToolRegistry

if TYPE_CHECKING:
    from fms_dgt.core.tools.artifacts import DataflowGraph, Edge, ToolEmbeddings, ToolNeighbors
    from fms_dgt.core.tools.engines.base import CallPolicy, ToolEngine
    from fms_dgt.core.tools.engines.multi import MultiToolEngine
    from fms_dgt.core.tools.enrichments.base import ToolEnrichment
    from fms_dgt.core.tools.loaders.base import LoadReport, ToolLoader
    from fms_dgt.core.tools.samplers.base import ToolSample, ToolSampler, get_tool_sampler
    from fms_dgt.core.tools.wire import Message, NameCodec, convert_messages, project_tools

__all__ = [
    "DEFAULT_NAMESPACE",
    "TOOL_NAMESPACE_SEP",
    "CallPolicy",
    "DataflowGraph",
    "Edge",
    "LoadReport",
    "Message",
    "MultiToolEngine",
    "NameCodec",
    "RefreshReport",
    "Tool",
    "ToolCall",
    "ToolEmbeddings",
    "ToolEngine",
    "ToolEnrichment",
    "ToolLoader",
    "ToolNeighbors",
    "ToolRegistry",
    "ToolResult",
    "ToolSample",
    "ToolSampler",
    "convert_messages",
    "get_tool_sampler",
    "project_tools",
    "qualify",
    "split_qualified_name",
]

_T = "fms_dgt.core.tools"
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        **dict.fromkeys(("DataflowGraph", "Edge", "ToolEmbeddings", "ToolNeighbors"), f"{_T}.artifacts"),
        "CallPolicy": f"{_T}.engines.policy",
        "ToolEngine": f"{_T}.engines.base",
        "MultiToolEngine": f"{_T}.engines.multi",
        "ToolEnrichment": f"{_T}.enrichments.base",
        "LoadReport": f"{_T}.loaders.base",
        "ToolLoader": f"{_T}.loaders.base",
        "ToolSample": f"{_T}.samplers.base",
        "ToolSampler": f"{_T}.samplers.base",
        "get_tool_sampler": f"{_T}.samplers.base",
        "Message": f"{_T}.wire",
        "NameCodec": f"{_T}.wire",
        "convert_messages": f"{_T}.wire",
        "project_tools": f"{_T}.wire",
    },
)
