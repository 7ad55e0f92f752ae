"""The ``multi`` engine: one engine for a whole registry, dispatching each call.

Dispatch order for a call named N whose tool has kind K (DESIGN.md):

1. a handler registered for the name N
   (:func:`~fms_dgt.core.tools.engines.handlers.register_name_handler`);
2. the engine routed for N's namespace (the ``engine:`` key of the ``tools.registry`` entry that
   produced the namespace, or ``routes`` given in code);
3. the handler registered for kind K, then the one registered for ``*``
   (:func:`~fms_dgt.core.tools.engines.handlers.register_tool_handler`), else the built-in engine
   of the kind: ``file`` -> ``mock``, ``function`` -> ``function``, ``mcp`` -> ``mcp``, ``rest``
   -> ``rest``, ``http`` -> ``http``;
4. else the call fails with ``No handler registered for tool: N (kind: K)``.

A call that reaches an engine runs under that engine's own call policy merged with this engine's
(:meth:`~fms_dgt.core.tools.engines.policy.CallPolicy.within`): the routed engine keeps its
retries, timeout, coercion, validation and blocklist. Plain handlers (callables) run under this
engine's policy. ``metadata["engine"]`` of each result says which route ran it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.engines.base import CallPolicy, ToolEngine
from fms_dgt.core.tools.engines.handlers import (
    BUILTIN_KIND_HANDLERS,
    BuiltinKindHandler,
    Handler,
    call_arity,
    get_name_handler,
    registered_tool_handler,
)
from fms_dgt.errors import ConfigError
from fms_dgt.plugins import TOOL_ENGINES, register_tool_engine

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = ["BUILTIN_KIND_ENGINES", "MultiToolEngine", "call_handler"]

#: The engine that runs a kind when no handler is registered for it.
BUILTIN_KIND_ENGINES = {kind: handler.engine for kind, handler in BUILTIN_KIND_HANDLERS.items()}


def call_handler(
    handler: Handler,
    tool: Tool,
    call: ToolCall,
    state: dict[str, Any],
    context: Mapping[str, Any] | None = None,
) -> ToolResult:
    """Run a registered handler for one call and wrap what it returns as a :class:`ToolResult`.

    The handler gets the arguments, the tool and the arguments, or the tool, the arguments and
    ``context``, as many as it takes (see :mod:`~fms_dgt.core.tools.engines.handlers`).
    """
    if isinstance(handler, ToolEngine):
        return handler.call(tool, call, state)
    target = handler.execute if callable(getattr(handler, "execute", None)) else handler
    arguments = dict(call.arguments)
    arity = call_arity(handler)
    if arity == 1:
        value = target(arguments)
    elif arity == 2:
        value = target(tool, arguments)
    else:
        value = target(tool, arguments, dict(context or {}))
    if isinstance(value, ToolResult):
        return value
    return ToolResult(call.call_id, call.name, result=value)


@register_tool_engine("multi")
class MultiToolEngine(ToolEngine):
    """Routes calls to named engines, handlers and built-in kind engines.

    Args:
        registry: the tools.
        engines: name -> engine instance (what ``engine:`` keys in the config refer to).
        routes: namespace -> engine name; defaults to ``registry.engine_routes``.
        max_workers: batch parallelism.
        policy: call policy applied to every call (merged with a routed engine's own).

    Raises:
        ConfigError: a route names an engine that is not given.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        engines: Mapping[str, ToolEngine] | None = None,
        routes: Mapping[str, str] | None = None,
        max_workers: int = 8,
        policy: CallPolicy | None = None,
    ) -> None:
        super().__init__(registry, max_workers=max_workers, policy=policy)
        self.engines = dict(engines or {})
        self.routes = dict(routes if routes is not None else registry.engine_routes)
        missing = sorted({e for e in self.routes.values() if e not in self.engines})
        if missing:
            raise ConfigError(
                f"unknown engine {missing[0]!r} in a tools.registry entry: define it under tools.engines "
                f"(defined: {', '.join(sorted(self.engines)) or 'none'})."
            )
        self._kind_engines: dict[str, ToolEngine] = {}
        self._kind_lock = threading.Lock()
        self._isolation: str | None = None

    def route(self, tool: Tool) -> tuple[str, Any]:
        """``(label, handler or engine)`` that runs ``tool``, or ``("", None)`` if nothing does."""
        handler = get_name_handler(tool.qualified_name)
        if handler is not None:
            return f"handler:{tool.qualified_name}", handler
        routed = self.routes.get(tool.namespace)
        if routed is not None:
            return routed, self.engines[routed]
        for kind in (tool.kind, "*"):
            handler = registered_tool_handler(kind)
            if isinstance(handler, BuiltinKindHandler):
                return handler.engine, self._engine_named(handler.engine)
            if handler is not None:
                return f"kind-handler:{kind}", handler
        builtin = BUILTIN_KIND_HANDLERS.get(tool.kind)
        if builtin is not None:
            return builtin.engine, self._engine_named(builtin.engine)
        return "", None

    def runs_inline(self, calls: Sequence[ToolCall]) -> bool:
        """True when every call of the batch routes to a bounded engine (the mock engine)."""
        for call in calls:
            overloads = self.overloads_of(call.name)
            target = self.route(overloads[0])[1] if overloads else None
            if not (isinstance(target, ToolEngine) and target is not self and target.bounded):
                return False
        return True

    def route_label(self, tool: Tool) -> str:
        """The route that runs ``tool`` (``multi`` when nothing does)."""
        return self.route(tool)[0] or self.name

    def run_call(
        self,
        call: ToolCall,
        call_id: str,
        state: dict[str, Any],
        *,
        outer: CallPolicy | None = None,
        label: str | None = None,
        timeout_cap: float | None = None,
    ) -> ToolResult:
        """Dispatch one call: an engine it routes to runs it under that engine's own policy."""
        overloads = self.overloads_of(call.name)
        if overloads:
            route, target = self.route(overloads[0])
            if isinstance(target, ToolEngine) and target is not self:
                sub_state = self._sub_state(route, target, state)
                policy = self.policy.within(outer)
                return target.run_call(
                    call, call_id, sub_state, outer=policy, label=label or route, timeout_cap=timeout_cap
                )
        return super().run_call(call, call_id, state, outer=outer, label=label, timeout_cap=timeout_cap)

    def call(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> ToolResult:
        """Run a call that no engine is routed for: a handler, or the 'no handler' failure."""
        label, target = self.route(tool)
        if target is None:
            return ToolResult(
                call.call_id,
                call.name,
                error=f"No handler registered for tool: {call.name} (kind: {tool.kind})",
            )
        context = {"session_id": state.get("session_id"), "call_id": call.call_id, "engine": self}
        result = call_handler(target, tool, call, self._sub_state(label, target, state), context)
        result.metadata.setdefault("engine", label)
        return result

    def approval_target(
        self, state: dict[str, Any], call_id: str
    ) -> tuple[ToolEngine, CallPolicy, dict[str, Any], str | None]:
        """The routed engine whose session state holds the waiting call (see the base class)."""
        for label, sub in (state.get("engines") or {}).items():
            target = self.engines.get(label) or self._kind_engines.get(label)
            if target is not None and call_id in (sub.get("pending") or {}):
                return target, target.policy.within(self.policy), sub, label
        return super().approval_target(state, call_id)

    def on_teardown(self, session_id: str, state: dict[str, Any]) -> None:
        """Close the session on every routed engine that served it (they keep per-session state)."""
        for label, sub in (state.get("engines") or {}).items():
            target = self.engines.get(label) or self._kind_engines.get(label)
            if isinstance(target, ToolEngine):
                target.on_teardown(session_id, sub)

    def prefer_isolation(self, mode: str) -> None:
        """Pass the preference on to every engine, those made later for a tool kind too."""
        self._isolation = mode
        for engine in [*self.engines.values(), *self._kind_engines.values()]:
            engine.prefer_isolation(mode)

    def _sub_state(self, label: str, target: Any, state: dict[str, Any]) -> dict[str, Any]:
        states = state.setdefault("engines", {})
        if label not in states:
            initial = (
                target.initial_state(state.get("session_id", "")) if isinstance(target, ToolEngine) else {}
            )
            states[label] = initial
        sub: dict[str, Any] = states[label]
        return sub

    def _engine_named(self, name: str) -> ToolEngine:
        """The built-in engine plug-in ``name`` over this registry, made on first use."""
        with self._kind_lock:
            engine = self._kind_engines.get(name)
            if engine is None:
                engine = TOOL_ENGINES.get(name)(self.registry)
                if self._isolation is not None:
                    engine.prefer_isolation(self._isolation)
                self._kind_engines[name] = engine
            return engine

    def close(self) -> None:
        """Close this engine, the built-in kind engines it made, and the engines it was given."""
        super().close()
        for engine in [*self._kind_engines.values(), *self.engines.values()]:
            engine.close()
        self._kind_engines.clear()
