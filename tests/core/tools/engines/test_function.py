from __future__ import annotations

from typing import Literal

import pytest

from fms_dgt.core.tools.data_objects import ToolCall
from fms_dgt.core.tools.engines.function import (
    FunctionToolEngine,
    clear_functions,
    register_function,
    tool_from_function,
)
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.errors import LoadError


def forecast(city: str, days: int = 3, units: Literal["c", "f"] = "c", tags: list[str] | None = None) -> dict:
    """Daily forecast for a city.

    Args:
        city: The city name.
        days (int): How many days ahead.
    """
    return {"city": city, "days": days, "units": units}


def test_schema_from_signature_and_docstring() -> None:
    tool = tool_from_function(forecast, namespace="w")
    assert tool.description == "Daily forecast for a city."
    props = tool.parameters["properties"]
    assert props["city"] == {"type": "string", "description": "The city name."}
    assert props["days"] == {"type": "integer", "description": "How many days ahead.", "default": 3}
    assert props["units"] == {"enum": ["c", "f"], "default": "c"}
    assert tool.parameters["required"] == ["city"]
    assert tool.metadata["kind"] == "function"


def test_registered_functions_run_through_the_engine() -> None:
    clear_functions()

    @register_function(namespace="math")
    def add(a: float, b: float = 0.0) -> float:
        """Add."""
        return a + b

    try:
        registry = ToolRegistry([tool_from_function(add, namespace="math")])
        engine = FunctionToolEngine(registry)
        engine.setup("s")
        [ok, bad] = engine.execute(
            "s", [ToolCall("math::add", {"a": 2, "b": 3.5}), ToolCall("math::add", {"b": 1})]
        )
        assert ok.result == {"result": 5.5}
        assert "'a' is a required property" in str(bad.error)
    finally:
        clear_functions()


def test_function_loader_from_config_imports_callables() -> None:
    registry = ToolRegistry.from_config(
        {
            "tools": {
                "registry": [
                    {"type": "function", "namespace": "weather", "functions": [f"{__name__}:forecast"]}
                ]
            }
        }
    )
    engine = FunctionToolEngine(registry)
    engine.setup("s")
    [result] = engine.execute("s", [ToolCall("weather::forecast", {"city": "Oslo"})])
    assert result.result == {"city": "Oslo", "days": 3, "units": "c"}
    with pytest.raises(LoadError, match="cannot import function"):
        ToolRegistry.from_config(
            {"tools": {"registry": [{"type": "function", "functions": ["nope.mod:fn"]}]}}
        )


def test_a_result_holding_a_lone_surrogate_is_a_failed_call_saying_where() -> None:
    # Text read with errors="surrogateescape", or half an emoji's pair, cannot be written to a record.
    clear_functions()

    @register_function(namespace="txt")
    def smile(name: str) -> dict:
        """Smile."""
        return {"name": name, "lines": ["ok", "x\ud83d"]}

    try:
        engine = FunctionToolEngine(ToolRegistry([tool_from_function(smile, namespace="txt")]))
        engine.setup("s")
        [failed] = engine.execute("s", [ToolCall("txt::smile", {"name": "ada"})])
        assert failed.result is None and failed.error is not None
        assert "lone surrogate (\\ud83d)" in failed.error
        assert "[the result of txt::smile at /lines/1]" in failed.error
        failed.error.encode("utf-8")  # the error itself can be written
    finally:
        clear_functions()
