"""Tool engines: execute or simulate calls in sessions, under a call policy.

One plug-in per module (``mock``, ``function``, ``lm``, ``mcp``, ``rest``, ``http``, ``multi``),
registered with :func:`~fms_dgt.plugins.register_tool_engine`; the policy lives in ``policy.py``,
the record/replay cache of real calls in ``cache.py`` and the dispatch handler registries in
``handlers.py``. Names are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fms_dgt._lazy import lazy_exports

if TYPE_CHECKING:
    from fms_dgt.core.tools.engines.base import ToolEngine
    from fms_dgt.core.tools.engines.cache import CacheSettings, CallCache
    from fms_dgt.core.tools.engines.function import FunctionToolEngine
    from fms_dgt.core.tools.engines.handlers import (
        clear_name_handlers,
        clear_tool_handlers,
        get_name_handler,
        get_tool_handler,
        register_name_handler,
        register_tool_handler,
    )
    from fms_dgt.core.tools.engines.lm import LMToolEngine
    from fms_dgt.core.tools.engines.mcp import MCPToolEngine
    from fms_dgt.core.tools.engines.mock import MockToolEngine
    from fms_dgt.core.tools.engines.multi import MultiToolEngine
    from fms_dgt.core.tools.engines.policy import ENGINE_KEYS, POLICY_KEYS, CallPolicy, coerce_arguments
    from fms_dgt.core.tools.engines.rest import RESTToolEngine
    from fms_dgt.core.tools.engines.runner import PolicyRunner
    from fms_dgt.errors import CacheMissError, EngineError, RetryableError
    from fms_dgt.plugins import get_tool_engine_class, register_tool_engine

__all__ = [
    "ENGINE_KEYS",
    "POLICY_KEYS",
    "CacheMissError",
    "CacheSettings",
    "CallCache",
    "CallPolicy",
    "EngineError",
    "FunctionToolEngine",
    "LMToolEngine",
    "MCPToolEngine",
    "MockToolEngine",
    "MultiToolEngine",
    "PolicyRunner",
    "RESTToolEngine",
    "RetryableError",
    "ToolEngine",
    "clear_name_handlers",
    "clear_tool_handlers",
    "coerce_arguments",
    "get_name_handler",
    "get_tool_engine_class",
    "get_tool_handler",
    "register_name_handler",
    "register_tool_engine",
    "register_tool_handler",
]

_E = "fms_dgt.core.tools.engines"
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "ToolEngine": f"{_E}.base",
        "FunctionToolEngine": f"{_E}.function",
        "LMToolEngine": f"{_E}.lm",
        "MCPToolEngine": f"{_E}.mcp",
        "MockToolEngine": f"{_E}.mock",
        "MultiToolEngine": f"{_E}.multi",
        "RESTToolEngine": f"{_E}.rest",
        **dict.fromkeys(("ENGINE_KEYS", "POLICY_KEYS", "CallPolicy", "coerce_arguments"), f"{_E}.policy"),
        **dict.fromkeys(("CacheSettings", "CallCache"), f"{_E}.cache"),
        "PolicyRunner": f"{_E}.runner",
        **dict.fromkeys(
            (
                "clear_name_handlers",
                "clear_tool_handlers",
                "get_name_handler",
                "get_tool_handler",
                "register_name_handler",
                "register_tool_handler",
            ),
            f"{_E}.handlers",
        ),
        "CacheMissError": "fms_dgt.errors",
        "EngineError": "fms_dgt.errors",
        "RetryableError": "fms_dgt.errors",
        "get_tool_engine_class": "fms_dgt.plugins",
        "register_tool_engine": "fms_dgt.plugins",
    },
)
