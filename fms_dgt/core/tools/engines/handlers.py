"""The process-global handler registries that take part in dispatch (the ``multi`` engine).

Two registries, named for what they hold:

* **name handlers**: ``register_name_handler("weather_api::get_weather", handler)`` handles every
  call of one qualified name (first in dispatch);
* **kind handlers**: ``register_tool_handler("rest", handler)`` handles every tool of a source kind
  (``file``, ``function``, ``mcp``, ``rest``, ``http``; ``*`` is the dispatcher's fallback for any
  kind). The kinds ``file``, ``function``, ``mcp``, ``rest`` (alias ``openapi``) and ``http``
  (manifest tools in ``mode: live``) have built-in handlers (:class:`BuiltinKindHandler`: the
  engine of that kind); one registered for a kind replaces it.

A handler is a callable, an object with ``execute(...)``, or a
:class:`~fms_dgt.core.tools.engines.base.ToolEngine` (which then runs the call under its own
policy). A callable is called with the tool definition and the arguments, plus a context
(``session_id``, ``call_id``, ``engine``) when it takes a third parameter; one that takes a single
parameter gets the arguments alone (the older form). Both registries are thread-safe.
``register_tool``, ``get_tool`` and ``clear_tools`` are the old names of the name-handler
functions, kept as deprecated aliases.
"""

from __future__ import annotations

import inspect
import threading
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fms_dgt.errors import EngineError

__all__ = [
    "BUILTIN_KIND_HANDLERS",
    "BuiltinKindHandler",
    "Handler",
    "call_arity",
    "clear_name_handlers",
    "clear_tool_handlers",
    "clear_tools",
    "get_name_handler",
    "get_tool",
    "get_tool_handler",
    "register_name_handler",
    "register_tool",
    "register_tool_handler",
]

Handler = Any
_NAME_HANDLERS: dict[str, Handler] = {}
_KIND_HANDLERS: dict[str, Handler] = {}
_LOCK = threading.Lock()


def _check_handler(handler: Handler, what: str) -> None:
    if not (callable(handler) or callable(getattr(handler, "execute", None))):
        raise EngineError(
            f"invalid handler for {what}: give a callable taking the arguments, or an "
            "object with execute(arguments)."
        )


def register_name_handler(name: str, handler: Handler) -> None:
    """Handle every call of the qualified name ``name`` with ``handler`` (first in dispatch)."""
    _check_handler(handler, name)
    with _LOCK:
        _NAME_HANDLERS[name] = handler


def get_name_handler(name: str) -> Handler | None:
    """The handler registered for a qualified name, or None."""
    return _NAME_HANDLERS.get(name)


def clear_name_handlers() -> None:
    """Forget every per-name handler."""
    with _LOCK:
        _NAME_HANDLERS.clear()


def register_tool_handler(kind: str, handler: Handler) -> None:
    """Handle calls of every tool of ``kind`` (``file``, ``function``, ``mcp``, ``rest``, or ``*``)."""
    _check_handler(handler, f"kind {kind!r}")
    with _LOCK:
        _KIND_HANDLERS[kind] = handler


def get_tool_handler(kind: str) -> Handler | None:
    """The handler of exactly ``kind``: a registered one, else the built-in one, else None.

    The ``*`` fallback belongs to dispatch, not to this getter.
    """
    return _KIND_HANDLERS.get(kind) or BUILTIN_KIND_HANDLERS.get(kind)


def registered_tool_handler(kind: str) -> Handler | None:
    """The handler registered for ``kind`` (or ``*``) in code, ignoring the built-in ones."""
    return _KIND_HANDLERS.get(kind)


@dataclass(frozen=True, slots=True)
class BuiltinKindHandler:
    """The built-in handler of a source kind: the engine plug-in that runs tools of that kind.

    A ``multi`` engine runs it as that engine over its own registry, under the engine's policy.
    Called directly (``handler(tool, arguments)``), it runs the call on a fresh engine over a
    registry holding only that tool.
    """

    kind: str
    engine: str

    def __call__(
        self, tool: Any, arguments: Mapping[str, Any], context: Mapping[str, Any] | None = None
    ) -> Any:
        from fms_dgt.core.tools.data_objects import ToolCall
        from fms_dgt.core.tools.registry import ToolRegistry
        from fms_dgt.plugins import TOOL_ENGINES

        with TOOL_ENGINES.get(self.engine)(ToolRegistry([tool])) as engine:
            engine.setup("direct")
            return engine.execute("direct", [ToolCall(tool.qualified_name, dict(arguments))])[0]


#: The handlers every kind has unless one is registered for it.
BUILTIN_KIND_HANDLERS: dict[str, BuiltinKindHandler] = {
    kind: BuiltinKindHandler(kind, engine)
    for kind, engine in (
        ("file", "mock"),
        ("function", "function"),
        ("mcp", "mcp"),
        ("rest", "rest"),
        ("openapi", "rest"),
        ("http", "http"),
    )
}


def call_arity(handler: Handler) -> int:
    """How many positional values a handler (or its ``execute``) takes: 1, 2 or 3."""
    target = handler if callable(handler) and not hasattr(handler, "execute") else handler.execute
    try:
        params = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):
        return 1
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return 3
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return max(1, min(3, len(positional)))


def clear_tool_handlers() -> None:
    """Forget every per-kind handler."""
    with _LOCK:
        _KIND_HANDLERS.clear()


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"{old}() is deprecated: use {new}()", DeprecationWarning, stacklevel=3)


def register_tool(name: str, handler: Handler) -> None:
    """Deprecated alias of :func:`register_name_handler` (it registers a handler, not a tool)."""
    _deprecated("register_tool", "register_name_handler")
    register_name_handler(name, handler)


def get_tool(name: str) -> Handler | None:
    """Deprecated alias of :func:`get_name_handler`."""
    _deprecated("get_tool", "get_name_handler")
    return get_name_handler(name)


def clear_tools() -> None:
    """Deprecated alias of :func:`clear_name_handlers`."""
    _deprecated("clear_tools", "clear_name_handlers")
    clear_name_handlers()
