"""Contracts of the policy runner: per-tool timeouts, defaults, typed errors, choices, approvals."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.engines.base import CallPolicy, ToolEngine
from fms_dgt.core.tools.engines.handlers import clear_name_handlers, register_name_handler
from fms_dgt.core.tools.engines.multi import MultiToolEngine
from fms_dgt.core.tools.loaders.file import FileToolLoader
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.errors import EngineError, RetryableError

WEATHER = Tool(
    "weather",
    "w",
    parameters={
        "type": "object",
        "properties": {
            "city": {"type": "string", "minLength": 2},
            "units": {"type": "string", "enum": ["c", "f"], "default": "c"},
            "days": {"type": "integer", "default": "three"},
        },
        "required": ["city"],
    },
    output_parameters={"type": "object", "properties": {"temp": {"type": "number"}}, "required": ["temp"]},
)
DELETE = Tool("delete_file", "fs", metadata={"annotations": {"destructiveHint": True}})
TRANSFER = Tool("transfer", "bank", metadata={"requires_approval": True})


class Echo(ToolEngine):
    """Answers with the arguments it got; ``boom`` raises, ``flaky`` is a transport failure."""

    def call(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> ToolResult:
        if call.arguments.get("city") == "boom":
            raise ValueError("the backend fell over")
        if call.arguments.get("city") == "flaky":
            raise RetryableError("connection reset")
        if call.arguments.get("city") == "bad":
            return ToolResult(call.call_id, call.name, result={"temp": "hot"})
        return ToolResult(call.call_id, call.name, result={"temp": 20.5, "got": dict(call.arguments)})


def _engine(policy: CallPolicy | None = None) -> Echo:
    engine = Echo(ToolRegistry([WEATHER, DELETE, TRANSFER]), policy=policy)
    engine.setup("s")
    return engine


def _one(engine: ToolEngine, name: str, **arguments: Any) -> ToolResult:
    return engine.execute("s", [ToolCall(name, arguments)])[0]


def test_absent_optional_arguments_get_their_schema_defaults_when_they_validate() -> None:
    result = _one(_engine(), "w::weather", city="Oslo")
    assert result.result["got"] == {"city": "Oslo", "units": "c"}, (
        "a default that fails its schema is not used"
    )
    assert result.metadata["defaults"] == ["units"]
    off = _one(_engine(CallPolicy(fill_defaults=False)), "w::weather", city="Oslo")
    assert off.result["got"] == {"city": "Oslo"} and "defaults" not in off.metadata


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"city": "O"}, {"type": "validation", "phase": "arguments", "path": "/city"}),
        ({"city": "boom"}, {"type": "execution", "phase": "execution"}),
        ({"city": "flaky"}, {"type": "transport", "phase": "execution"}),
        ({"city": "bad"}, {"type": "validation", "phase": "result", "path": "/temp"}),
    ],
)
def test_failed_calls_carry_a_typed_error(arguments: dict[str, Any], expected: dict[str, Any]) -> None:
    result = _one(_engine(CallPolicy(validate_results="error")), "w::weather", **arguments)
    assert result.error is not None and result.metadata["error"] == expected
    unknown = _one(_engine(), "w::nope")
    assert unknown.metadata["error"] == {"type": "validation", "phase": "lookup"}


def test_policies_refuse_with_a_policy_error() -> None:
    blocked = _one(_engine(CallPolicy(blocklist=["w::*"])), "w::weather", city="Oslo")
    assert blocked.metadata["error"] == {"type": "policy", "phase": "policy"}
    none = _one(_engine(CallPolicy(tool_choice="none")), "w::weather", city="Oslo")
    assert none.error is not None and "tool_choice is none" in none.error
    only = _engine(CallPolicy(tool_choice="fs::delete_file"))
    assert "tool_choice names only fs::delete_file" in str(_one(only, "w::weather", city="Oslo").error)
    assert _one(only, "fs::delete_file").ok
    assert _one(_engine(CallPolicy(tool_choice="required")), "w::weather", city="Oslo").ok


def test_max_total_tool_calls_counts_the_whole_session() -> None:
    engine = _engine(CallPolicy(max_total_tool_calls=3))
    first = engine.execute("s", [ToolCall("w::weather", {"city": c}) for c in ("Oslo", "Rome")])
    second = engine.execute("s", [ToolCall("w::weather", {"city": c}) for c in ("Lima", "Pune")])
    assert [r.ok for r in first + second] == [True, True, True, False]
    assert "max_total_tool_calls=3" in str(second[1].error)
    engine.setup("other")
    assert engine.execute("other", [ToolCall("w::weather", {"city": "Oslo"})])[0].ok, "per session"


def test_a_tool_requiring_approval_waits_then_runs_or_is_denied() -> None:
    engine = _engine()
    pending = _one(engine, "bank::transfer", amount=5)
    assert pending.pending and not pending.ok and pending.error is None
    assert pending.metadata["pending"] == {
        "would_run": {"name": "bank::transfer", "arguments": {"amount": 5}},
        "why": "the tool's definition says requires_approval",
    }
    assert list(engine.pending("s")) == ["call_0"]
    done = engine.approve("s", "call_0")
    assert done.ok and done.metadata["approval"] == "approved" and done.result["got"] == {"amount": 5}
    with pytest.raises(EngineError, match="no call 'call_0' waits for approval"):
        engine.approve("s", "call_0")
    _one(engine, "bank::transfer", amount=7)
    declined = engine.deny("s", "call_0", "the user changed their mind")
    assert declined.error == "call not run: approval denied (the user changed their mind)."
    assert declined.metadata["error"] == {"type": "policy", "phase": "approval"}
    history = engine.get_session_state("s")["calls"]
    assert [h["result"]["error"] is None for h in history] == [True, True, True, False]


def test_a_call_held_by_a_routed_engine_is_approved_or_denied_through_the_dispatcher() -> None:
    registry = ToolRegistry([WEATHER, TRANSFER])
    routed = Echo(registry, policy=CallPolicy(requires_approval=["w::*"]))
    multi = MultiToolEngine(registry, engines={"echo": routed}, routes={"w": "echo", "bank": "echo"})
    multi.setup("s")
    held = multi.execute("s", [ToolCall("w::weather", {"city": "Oslo"}, "c1")])[0]
    assert held.pending and held.metadata["engine"] == "echo"
    done = multi.approve("s", "c1")
    assert done.ok and done.result["got"]["city"] == "Oslo" and done.metadata["engine"] == "echo"
    multi.execute("s", [ToolCall("w::weather", {"city": "Rome"}, "c2")])
    declined = multi.deny("s", "c2")
    assert declined.error is not None and declined.metadata["engine"] == "echo"
    with pytest.raises(EngineError, match="no call 'c2' waits"):
        multi.approve("s", "c2")


def test_destructive_tools_follow_approve_destructive_and_globs_ask_too() -> None:
    assert _one(_engine(), "fs::delete_file").ok, "allowed by default"
    assert _one(_engine(CallPolicy(approve_destructive="ask")), "fs::delete_file").pending
    denied = _one(_engine(CallPolicy(approve_destructive="deny")), "fs::delete_file")
    assert denied.error is not None and denied.metadata["error"]["phase"] == "approval"
    globbed = _one(_engine(CallPolicy(requires_approval=["w::*"])), "w::weather", city="Oslo")
    assert globbed.metadata["pending"]["why"] == "the engine's requires_approval names it"


@pytest.fixture
def handlers() -> Iterator[None]:
    yield
    clear_name_handlers()


def test_a_manifest_timeout_ms_caps_the_engine_timeout(tmp_path: Path, handlers: None) -> None:
    manifest = {
        "apiVersion": "promptkit.altairalabs.ai/v1alpha1",
        "kind": "Tool",
        "metadata": {"name": "slow", "namespace": "m"},
        "spec": {
            "description": "Slow.",
            "input_schema": {"type": "object"},
            "mode": "mock",
            "timeout_ms": 100,
        },
    }
    path = tmp_path / "slow.yaml"
    path.write_text(yaml.safe_dump(manifest))
    registry = ToolRegistry(loaders=[FileToolLoader(path)])

    def sleeper(arguments: dict[str, Any]) -> str:
        time.sleep(1.0)
        return "late"

    register_name_handler("m::slow", sleeper)
    with MultiToolEngine(registry, policy=CallPolicy(timeout=30)) as engine:
        engine.setup("s")
        started = time.monotonic()
        [result] = engine.execute("s", [ToolCall("m::slow", {})])
    assert time.monotonic() - started < 0.9
    assert result.error is not None and "took longer than 0.1 s" in result.error
    assert result.metadata["error"] == {"type": "timeout", "phase": "execution"}


def test_the_session_api_has_async_forms() -> None:
    async def scenario() -> list[ToolResult]:
        async with Echo(ToolRegistry([WEATHER, TRANSFER])) as engine:
            await engine.setup_async("a")
            results = await engine.execute_async("a", [ToolCall("bank::transfer", {"amount": 1})])
            approved = await engine.approve_async("a", results[0].call_id or "")
            await engine.teardown_async("a")
            return [*results, approved]

    pending, approved = asyncio.run(scenario())
    assert pending.pending and approved.ok


@pytest.mark.parametrize("timeout", [None, 5.0], ids=["direct", "timeout-pool"])
def test_max_in_flight_caps_concurrent_calls_across_sessions_and_threads(timeout: float | None) -> None:
    from support.rest_server import serve

    from fms_dgt.core.tools.engines.rest import RESTToolEngine
    from fms_dgt.core.tools.loaders.rest import RESTToolLoader

    spec = Path(__file__).resolve().parents[4] / "data" / "rest" / "petstore.yaml"
    registry = ToolRegistry(loaders=[RESTToolLoader(str(spec), namespace="pets")])

    def peak(limit: int | None) -> int:
        with serve(latency=0.05) as server:
            policy = CallPolicy(max_in_flight=limit, timeout=timeout)
            with RESTToolEngine(registry, base_url=server.base_url, policy=policy) as engine:

                def session(n: int) -> None:
                    engine.setup(f"s{n}")
                    engine.execute(f"s{n}", [ToolCall("pets::listPets", {"limit": k}) for k in range(1, 4)])

                async def sessions() -> None:  # the async form, as a concurrent job runs them
                    await asyncio.gather(
                        *(engine.execute_async(f"a{n}", [ToolCall("pets::listPets", {})]) for n in range(6))
                    )

                threads = [threading.Thread(target=session, args=(n,)) for n in range(8)]
                for n in range(6):
                    engine.setup(f"a{n}")
                for thread in threads:
                    thread.start()
                asyncio.run(sessions())
                for thread in threads:
                    thread.join()
            assert len(server.requests) == 8 * 3 + 6
            return server.max_in_flight

    assert peak(3) == 3
    assert peak(None) > 3  # without the limit the same load goes wider
