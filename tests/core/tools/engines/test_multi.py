from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.engines.base import CallPolicy, ToolEngine
from fms_dgt.core.tools.engines.handlers import (
    clear_name_handlers,
    clear_tool_handlers,
    get_name_handler,
    get_tool_handler,
    register_name_handler,
    register_tool_handler,
)
from fms_dgt.core.tools.engines.mock import MockToolEngine
from fms_dgt.core.tools.engines.multi import MultiToolEngine
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.errors import ConfigError


@pytest.fixture(autouse=True)
def clean_handlers() -> Iterator[None]:
    clear_name_handlers()
    clear_tool_handlers()
    yield
    clear_name_handlers()
    clear_tool_handlers()


class Named(ToolEngine):
    def call(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> ToolResult:
        state["n"] = state.get("n", 0) + 1
        return ToolResult(call.call_id, call.name, result={"by": "routed", "n": state["n"]})


def _registry() -> ToolRegistry:
    return ToolRegistry.from_config(
        {
            "tools": {
                "registry": [
                    {
                        "type": "inline",
                        "namespace": "a",
                        "engine": "sim",
                        "tools": [{"name": "t"}, {"name": "u", "namespace": "a2"}],
                    },
                    {"type": "inline", "namespace": "b", "tools": [{"name": "t"}]},
                    {
                        "type": "inline",
                        "namespace": "c",
                        "tools": [{"name": "t", "metadata": {"kind": "custom"}}],
                    },
                ]
            }
        }
    )


def test_dispatch_order_name_then_route_then_kind_then_error() -> None:
    registry = _registry()
    engine = MultiToolEngine(registry, engines={"sim": Named(registry)})
    engine.setup("s")
    calls = [ToolCall(n, {}) for n in ("a::t", "a2::u", "b::t", "c::t")]
    results = engine.execute("s", calls)
    assert [r.metadata["engine"] for r in results[:3]] == ["sim", "sim", "mock"]
    # Routed by the namespace actually produced: a2::u shares a::t's engine state (the batch runs in
    # parallel, so which of the two counted first is not fixed).
    assert {results[0].result["n"], results[1].result["n"]} == {1, 2}
    assert results[1].result["by"] == "routed"
    assert results[3].error == "No handler registered for tool: c::t (kind: custom)"

    register_tool_handler("custom", lambda args: "by kind")
    register_name_handler("a::t", type("Obj", (), {"execute": lambda self, args: "by name"})())
    results = engine.execute("s", calls)
    assert [r.result for r in (results[0], results[3])] == ["by name", "by kind"]
    assert get_name_handler("a::t") is not None and get_tool_handler("custom") is not None
    register_tool_handler("*", lambda args: "anything")
    clear_tool_handlers()
    assert get_tool_handler("custom") is None


def test_wildcard_kind_handler() -> None:
    registry = _registry()
    register_tool_handler("*", lambda args: "wildcard")
    engine = MultiToolEngine(registry, engines={"sim": MockToolEngine(registry)})
    engine.setup("s")
    assert engine.execute("s", [ToolCall("c::t", {})])[0].result == "wildcard"


def test_unknown_routed_engine_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown engine 'sim'"):
        MultiToolEngine(_registry())


class Broken(ToolEngine):
    def call(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> ToolResult:
        if tool.name == "u":
            time.sleep(1.5)
            return ToolResult(call.call_id, call.name, result="late")
        raise ValueError("the backend is down")


def test_failures_and_timeouts_name_the_route_that_ran_them() -> None:
    registry = _registry()
    engine = MultiToolEngine(registry, engines={"sim": Broken(registry)}, policy=CallPolicy(timeout=0.3))
    engine.setup("s")
    raised, late, mocked = engine.execute(
        "s", [ToolCall("a::t", {}), ToolCall("a2::u", {}), ToolCall("b::t", {})]
    )
    assert raised.error == "ValueError: the backend is down"
    assert late.error is not None and "took longer than 0.3 s on engine 'sim'" in late.error
    assert [r.metadata["engine"] for r in (raised, late, mocked)] == ["sim", "sim", "mock"]
    engine.close()


def test_a_routed_engines_blocklist_is_applied_too() -> None:
    registry = _registry()
    routed = Named(registry, policy=CallPolicy(blocklist=["a::*"]))
    engine = MultiToolEngine(registry, engines={"sim": routed}, policy=CallPolicy(blocklist=["b::t"]))
    engine.setup("s")
    a, u, b = engine.execute("s", [ToolCall("a::t", {}), ToolCall("a2::u", {}), ToolCall("b::t", {})])
    assert a.error == "call refused: a::t is on the blocklist of engine 'sim'."
    assert a.metadata["engine"] == "sim"
    assert u.ok and u.result == {"by": "routed", "n": 1}
    # The multi engine's blocklist applies on every route; the refusal names that route.
    assert b.error == "call refused: b::t is on the blocklist of engine 'mock'."
    assert b.metadata["engine"] == "mock", "a refusal names the route the call would have taken"
    [unknown] = engine.execute("s", [ToolCall("nowhere::t", {})])
    assert unknown.error is not None and unknown.metadata["engine"] == "multi"


class ThreadNoting(MockToolEngine):
    """A bounded engine that says which thread ran each call."""

    def call(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> ToolResult:
        result = super().call(tool, call, state)
        result.metadata["thread"] = threading.get_ident()
        return result


def test_a_batch_of_bounded_calls_runs_on_the_callers_thread_and_others_on_the_pool() -> None:
    registry = _registry()
    bounded = MultiToolEngine(registry, engines={"sim": ThreadNoting(registry)})
    calls = [ToolCall("a::t", {}, f"c{i}") for i in range(3)]
    assert bounded.runs_inline(calls)
    bounded.setup("s")
    threads = {r.metadata["thread"] for r in bounded.execute("s", calls)}
    assert threads == {threading.get_ident()}
    # A batch with one call an unbounded engine runs keeps the pool (its calls may wait on I/O).
    mixed = MultiToolEngine(registry, engines={"sim": Named(registry)})
    assert not mixed.runs_inline(calls)
    assert not bounded.runs_inline([*calls, ToolCall("c::t", {}, "c9")])
