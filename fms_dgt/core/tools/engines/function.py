"""The ``function`` engine: calls the Python callables behind ``function`` tools.

The callables are registered with :func:`~fms_dgt.core.tools.loaders.function.register_function`
(or listed by the ``function`` loader, or given to the engine as ``functions``); see
:mod:`fms_dgt.core.tools.loaders.function` for how their schemas are derived.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.engines.base import CallPolicy, ToolEngine
from fms_dgt.core.tools.loaders.function import (
    FunctionToolLoader,
    annotation_schema,
    clear_functions,
    get_function,
    import_callable,
    register_function,
    registered_tools,
    tool_from_function,
)
from fms_dgt.errors import LoadError
from fms_dgt.io import check_text
from fms_dgt.plugins import register_tool_engine

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

# The loader-side names are re-exported: code written against the earlier layout imports them here.
__all__ = [
    "FunctionToolEngine",
    "FunctionToolLoader",
    "annotation_schema",
    "clear_functions",
    "get_function",
    "import_callable",
    "register_function",
    "registered_tools",
    "tool_from_function",
]


@register_tool_engine("function")
class FunctionToolEngine(ToolEngine):
    """Calls Python functions: registered ones by qualified name, else ``metadata["callable"]``.

    Args:
        registry: the tools.
        functions: extra qualified name -> ``module:function`` (or a callable, in code).
        max_workers: batch parallelism.
        policy: call policy.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        functions: Mapping[str, Any] | None = None,
        max_workers: int = 4,
        policy: CallPolicy | None = None,
    ) -> None:
        super().__init__(registry, max_workers=max_workers, policy=policy)
        self.functions = {
            k: import_callable(v) if isinstance(v, str) else v for k, v in (functions or {}).items()
        }

    def resolve(self, tool: Tool) -> Callable[..., Any]:
        """The callable behind a tool.

        Raises:
            LoadError: nothing is registered and the tool names no importable callable.
        """
        fn = self.functions.get(tool.qualified_name) or get_function(tool.qualified_name)
        if fn is not None:
            return fn
        path = tool.metadata.get("callable")
        if isinstance(path, str):
            return import_callable(path)
        raise LoadError(
            f"no function for tool {tool.qualified_name}: register one with "
            "register_function() or list it in the engine's functions."
        )

    def call(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> ToolResult:
        """Call the function with the arguments as keyword arguments."""
        value = self.resolve(tool)(**call.arguments)
        try:  # a string no record can hold (a lone surrogate) fails the call, saying where
            check_text(value, f"the result of {tool.qualified_name}")
        except LoadError as exc:
            raise ValueError(str(exc)) from None
        if tool.metadata.get("wraps_result"):
            value = {"result": value}
        return ToolResult(call.call_id, call.name, result=value)
