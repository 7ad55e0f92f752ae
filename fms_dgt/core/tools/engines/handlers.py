"""The process-global handler registries that take part in dispatch (the ``multi`` engine).

Two registries, named for what they hold:

* **name handlers**: ``register_name_handler("weather_api::get_weather", handler)`` handles every
  call of one qualified name (first in dispatch);
* **kind handlers**: ``register_tool_handler("rest", handler)`` handles every tool of a source kind
  (``file``, ``function``, ``mcp``, ``rest``; ``*`` is the dispatcher's fallback for any kind).

A handler is a callable taking the arguments, an object with ``execute(arguments)``, or a
:class:`~fms_dgt.core.tools.engines.base.ToolEngine` (which then runs the call under its own
policy). Both registries are thread-safe. ``register_tool``, ``get_tool`` and ``clear_tools`` are
the old names of the name-handler functions, kept as deprecated aliases.
"""

from __future__ import annotations

import threading
import warnings
from typing import Any

from fms_dgt.errors import EngineError

__all__ = [
    "Handler",
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
    """The handler registered for exactly ``kind``, or None (the ``*`` fallback is dispatch's)."""
    return _KIND_HANDLERS.get(kind)


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
