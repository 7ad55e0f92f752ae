from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.engines.base import (
    CallPolicy,
    EngineError,
    RetryableError,
    ToolEngine,
    coerce_arguments,
)
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.errors import ConfigError

COUNTER = Tool(
    "incr",
    "state",
    parameters={"type": "object", "properties": {"by": {"type": "integer"}}, "required": ["by"]},
    output_parameters={"type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"]},
)
TYPED = Tool(
    "typed",
    "state",
    parameters={
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "flag": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "x": {"type": "number"},
        },
        "required": ["n"],
    },
)


class CounterEngine(ToolEngine):
    """Keeps a running total per session; sleeps or fails on request."""

    def __init__(self, registry: ToolRegistry, **kwargs: Any) -> None:
        super().__init__(registry, **kwargs)
        self.failures: list[Exception] = []
        self.delay = 0.0
        self.bad_result = False

    def call(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> ToolResult:
        if self.failures:
            raise self.failures.pop(0)
        time.sleep(self.delay)
        if tool.name == "typed":
            return ToolResult(call.call_id, call.name, result=call.arguments)
        state["total"] = state.get("total", 0) + call.arguments["by"]
        result = {"total": "many"} if self.bad_result else {"total": state["total"]}
        return ToolResult(call.call_id, call.name, result=result)


@pytest.fixture
def engine() -> CounterEngine:
    return CounterEngine(ToolRegistry([COUNTER, TYPED]), max_workers=4)


def test_session_lifecycle(engine: CounterEngine) -> None:
    engine.setup("s")
    with pytest.raises(EngineError, match="already set up"):
        engine.setup("s")
    engine.execute("s", [ToolCall("state::incr", {"by": 2})])
    assert engine.get_session_state("s")["total"] == 2
    engine.teardown("s")
    engine.teardown("s")  # idempotent
    with pytest.raises(EngineError, match="unknown session"):
        engine.execute("s", [])


def test_results_in_call_order_with_ids_echoed_or_positional(engine: CounterEngine) -> None:
    engine.setup("s")
    calls = [
        ToolCall("state::incr", {"by": 1}, "a"),
        ToolCall("state::incr", {"by": 1}),
        ToolCall("state::missing", {}),
        ToolCall("state::incr", {"by": "x"}, "d"),
    ]
    results = engine.execute("s", calls)
    assert [r.call_id for r in results] == ["a", "call_1", "call_2", "d"]
    assert results[0].ok and results[1].ok
    assert "unknown tool 'state::missing'" in str(results[2].error)
    assert "'x' is not of type 'integer'" in str(results[3].error)
    assert engine.get_session_state("s")["total"] == 2


def test_simulate_rolls_back_and_is_safe_against_concurrent_execute(engine: CounterEngine) -> None:
    engine.setup("s")
    engine.execute("s", [ToolCall("state::incr", {"by": 10})])
    [simulated] = engine.simulate("s", [ToolCall("state::incr", {"by": 5})])
    assert simulated.result == {"total": 15}
    assert engine.get_session_state("s")["total"] == 10
    engine.delay = 0.002
    stop = threading.Event()

    def simulate_loop() -> None:
        while not stop.is_set():
            engine.simulate("s", [ToolCall("state::incr", {"by": 1000})])

    thread = threading.Thread(target=simulate_loop)
    thread.start()
    for _ in range(20):
        engine.execute("s", [ToolCall("state::incr", {"by": 1})])
    stop.set()
    thread.join()
    assert engine.get_session_state("s")["total"] == 30  # no simulated increment leaked


def test_failures_are_data_and_retries_back_off() -> None:
    engine = CounterEngine(ToolRegistry([COUNTER]), policy=CallPolicy(retries=2, backoff=0.001))
    engine.setup("s")
    engine.failures = [RetryableError("429"), ConnectionError("reset")]
    [ok] = engine.execute("s", [ToolCall("state::incr", {"by": 1})])
    assert ok.ok and ok.metadata["attempts"] == 3
    engine.failures = [RetryableError("a"), RetryableError("b"), RetryableError("c")]
    [failed] = engine.execute("s", [ToolCall("state::incr", {"by": 1})])
    assert failed.error == "RetryableError: c" and failed.metadata["attempts"] == 3
    engine.failures = [ValueError("bad input")]
    [not_retried] = engine.execute("s", [ToolCall("state::incr", {"by": 1})])
    assert not_retried.error == "ValueError: bad input" and "attempts" not in not_retried.metadata


def test_timeout_blocklist_and_batch_limit() -> None:
    engine = CounterEngine(
        ToolRegistry([COUNTER, TYPED]),
        policy=CallPolicy(timeout=0.3, blocklist=["state::typ*"], max_calls_per_batch=2),
    )
    engine.setup("s")
    engine.delay = 1.5  # generous margins: a loaded CI machine must not time out the quick calls
    [slow] = engine.execute("s", [ToolCall("state::incr", {"by": 1})])
    assert "took longer than 0.3 s" in str(slow.error)
    engine.delay = 0
    results = engine.execute(
        "s",
        [
            ToolCall("state::typed", {"n": 1}),
            ToolCall("state::incr", {"by": 1}),
            ToolCall("state::incr", {"by": 1}),
        ],
    )
    assert "blocklist" in str(results[0].error) and results[1].ok
    assert "max_calls_per_batch=2" in str(results[2].error)
    engine.close()


def test_result_validation_modes() -> None:
    for mode, expect_error in (("warn", False), ("error", True)):
        engine = CounterEngine(ToolRegistry([COUNTER]), policy=CallPolicy(validate_results=mode))
        engine.setup("s")
        engine.bad_result = True
        [result] = engine.execute("s", [ToolCall("state::incr", {"by": 1})])
        assert "'many' is not of type 'integer'" in result.metadata["output_validation"]
        assert (result.error is not None) == expect_error


def test_coercion_is_opt_in_and_recorded() -> None:
    args = {"n": "10", "flag": "true", "tags": "solo", "x": "2.5"}
    fixed, notes = coerce_arguments(args, TYPED.parameters)
    assert fixed == {"n": 10, "flag": True, "tags": ["solo"], "x": 2.5} and len(notes) == 4
    plain = CounterEngine(ToolRegistry([TYPED]))
    plain.setup("s")
    assert plain.execute("s", [ToolCall("state::typed", args)])[0].error
    coercing = CounterEngine(ToolRegistry([TYPED]), policy=CallPolicy(coerce_arguments=True))
    coercing.setup("s")
    [result] = coercing.execute("s", [ToolCall("state::typed", args)])
    assert result.result == fixed and "n: string '10' -> integer" in result.metadata["coerced"]


def test_unusable_schemas_make_failed_results_not_exceptions() -> None:
    # An input and an output schema that cannot be compiled: a $ref is never fetched.
    remote = {"$ref": "http://127.0.0.1:9/schema.json"}
    bad_input = Tool("typed", "state", parameters={"type": "object", "properties": {"n": remote}})
    bad_output = Tool("incr", "state", parameters=COUNTER.parameters, output_parameters=remote)
    engine = CounterEngine(
        ToolRegistry([bad_input, bad_output]),
        policy=CallPolicy(coerce_arguments=True, validate_results="error"),
    )
    engine.setup("s")
    first, second = engine.execute(
        "s", [ToolCall("state::typed", {"n": "1"}), ToolCall("state::incr", {"by": 1})]
    )
    assert first.error is not None and "cannot compile JSON Schema" in first.error
    assert "cannot compile JSON Schema" in second.metadata["output_validation"]
    assert second.error is not None and "only references inside the schema" in second.error


def test_invalid_policies_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="validate_results"):
        CallPolicy(validate_results="sometimes")
    with pytest.raises(ConfigError, match="max_calls_per_batch"):
        CallPolicy(max_calls_per_batch=0)


def test_retry_after_from_the_service_replaces_the_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    import fms_dgt.core.tools.engines.runner as base

    waits: list[float] = []
    monkeypatch.setattr(base.time, "sleep", waits.append)
    engine = CounterEngine(
        ToolRegistry([COUNTER]), policy=CallPolicy(retries=3, backoff=0.5, max_retry_after=10)
    )
    engine.setup("s")
    engine.failures = [
        RetryableError("429", retry_after=2),
        RetryableError("429", retry_after=120),
        RetryableError("503"),
    ]
    [result] = engine.execute("s", [ToolCall("state::incr", {"by": 1})])
    # (the test engine itself sleeps 0 s per call; those are not retry waits)
    assert result.ok and [w for w in waits if w] == [2.0, 10.0, 2.0]  # asked, capped, then backoff 0.5 * 2**2


def test_session_history_follows_call_order_not_completion_order() -> None:
    class Sleepy(ToolEngine):
        def call(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> ToolResult:
            time.sleep(0.05 if call.arguments["by"] == 1 else 0)  # the first call finishes last
            return ToolResult(call.call_id, call.name, result={"total": call.arguments["by"]})

    engine = Sleepy(ToolRegistry([COUNTER]), max_workers=4)
    engine.setup("s")
    engine.execute("s", [ToolCall("state::incr", {"by": n}) for n in (1, 2, 3)])
    history = engine.get_session_state("s")["calls"]
    assert [h["call"]["arguments"]["by"] for h in history] == [1, 2, 3]
    assert [h["result"]["result"]["total"] for h in history] == [1, 2, 3]
