from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from fms_dgt.core.tools.data_objects import Tool, ToolCall
from fms_dgt.core.tools.engines.mock import MockToolEngine, render_template
from fms_dgt.core.tools.registry import ToolRegistry

REPO = Path(__file__).resolve().parents[4]
OUT = {
    "type": "object",
    "required": ["temp", "when"],
    "properties": {
        "temp": {"type": "number", "minimum": -30, "maximum": 45},
        "when": {"type": "string", "format": "date"},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["sun", "rain"]}, "maxItems": 2},
    },
}
WEATHER = Tool(
    "weather",
    "w",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
    output_parameters=OUT,
)
ECHO = Tool("echo", "w", metadata={"mock_template": {"said": "{{ text }}", "line": "you said {{text}}"}})
PLAIN = Tool("plain", "w")


def _run(engine: MockToolEngine, session: str, calls: list[ToolCall]) -> list[object]:
    engine.setup(session)
    try:
        return [r.result for r in engine.execute(session, calls)]
    finally:
        engine.teardown(session)


def test_synthesised_results_validate_and_are_deterministic() -> None:
    registry = ToolRegistry([WEATHER])
    calls = [
        ToolCall("w::weather", {"city": c}, f"c{i}") for i, c in enumerate(["Lisbon", "Oslo", "Lima"] * 5)
    ]
    first = _run(MockToolEngine(registry, seed=7), "s1", calls)
    validator = Draft202012Validator(OUT)
    assert all(validator.is_valid(r) for r in first)
    assert first == _run(MockToolEngine(registry, seed=7), "s1", calls)
    assert first != _run(MockToolEngine(registry, seed=8), "s1", calls)
    assert first != _run(MockToolEngine(registry, seed=7), "s2", calls)


def test_determinism_across_processes_and_hash_seeds() -> None:
    code = (
        "from fms_dgt.core.tools.engines.mock import MockToolEngine;"
        "from fms_dgt.core.tools.data_objects import ToolCall;"
        "from fms_dgt.core.tools.registry import ToolRegistry;"
        "r = ToolRegistry.from_file('data/weather_tools.yaml'); e = MockToolEngine(r, seed=3); e.setup('s');"
        "print(e.execute('s', [ToolCall('weather_api::geocode_city', {'city': 'Oslo'}, 'x')])[0].result)"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            cwd=REPO,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin"},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outs) == 1 and "latitude" in outs.pop()


def test_templates_static_results_and_precedence() -> None:
    registry = ToolRegistry([WEATHER, ECHO, PLAIN])
    engine = MockToolEngine(registry, result={"static": True}, results={"w::weather": {"t": "{{city}}"}})
    results = _run(
        engine,
        "s",
        [
            ToolCall("w::weather", {"city": "Rome"}),
            ToolCall("w::echo", {"text": [1, 2]}),
            ToolCall("w::plain", {}),
        ],
    )
    assert results == [{"t": "Rome"}, {"said": [1, 2], "line": "you said [1, 2]"}, {"static": True}]
    assert _run(MockToolEngine(registry), "s", [ToolCall("w::plain", {})]) == [{"status": "ok"}]
    assert render_template(["{{a}}", {"k": "{{ b }}!"}], {"a": 1, "b": "x"}) == [1, {"k": "x!"}]


def test_templates_take_both_placeholder_forms_and_give_json_values() -> None:
    arguments = {"city": "Oslo", "days": 3, "user": {"name": "Ada"}}
    assert render_template("{{.city}}", arguments) == "Oslo"
    assert render_template("{{ days }}", arguments) == 3
    assert render_template("Hi {{.user.name}} in {{ city }}", arguments) == "Hi Ada in Oslo"
    rendered = render_template('{"city": "{{.city}}", "days": {{.days}}}', arguments)
    assert rendered == {"city": "Oslo", "days": 3}, "a template that renders JSON gives the JSON value"
    assert render_template("{{.note}}", arguments, fields=("note",)) is None, "declared but not given"


def test_an_unknown_template_field_is_an_error_naming_template_and_field() -> None:
    from fms_dgt.errors import TemplateError

    with pytest.raises(TemplateError, match=r"unknown field 'citty' in mock template '\{\{\.citty\}\} now'"):
        render_template("{{.citty}} now", {"city": "Oslo"})
    tool = Tool("t", "w", metadata={"mock_template": "{{.nope}}"})
    engine = MockToolEngine(ToolRegistry([tool]))
    engine.setup("s")
    [result] = engine.execute("s", [ToolCall("w::t", {})])
    assert result.error is not None and "unknown field 'nope'" in result.error


LIVE = Tool(
    "forecast",
    "w",
    metadata={"mode": "live", "http": {"url": "https://api.example/forecast"}, "mock_result": {"t": 1}},
)
LIVE_NO_HTTP = Tool("ping", "w", metadata={"mode": "live"})
MOCKED = Tool("echo2", "w", metadata={"mode": "mock", "mock_template": {"said": "{{ text }}"}})


def test_live_tools_are_not_simulated_silently() -> None:
    with MockToolEngine(ToolRegistry([LIVE, LIVE_NO_HTTP, MOCKED])) as engine:
        engine.setup("s")
        live, bare, mocked = engine.execute(
            "s", [ToolCall("w::forecast", {}), ToolCall("w::ping", {}), ToolCall("w::echo2", {"text": "hi"})]
        )
    assert live.error is not None and "w::forecast is a live tool (mode: live)" in live.error
    assert "route it to the http engine" in live.error and "simulate_live: true" in live.error
    assert live.metadata["error"] == {"type": "policy", "phase": "execution"} and live.result is None
    assert bare.error is not None and "give its manifest an http block" in bare.error
    assert mocked.ok and mocked.result == {"said": "hi"} and "simulated_live" not in mocked.metadata


def test_simulate_live_is_an_explicit_opt_in_marked_in_results() -> None:
    with MockToolEngine(ToolRegistry([LIVE, MOCKED]), simulate_live=True) as engine:
        engine.setup("s")
        live, mocked = engine.execute("s", [ToolCall("w::forecast", {}), ToolCall("w::echo2", {"text": "x"})])
    assert live.ok and live.result == {"t": 1} and live.metadata["simulated_live"] is True
    assert "simulated_live" not in mocked.metadata
