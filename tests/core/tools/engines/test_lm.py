from __future__ import annotations

import json
from typing import Any

import pytest
from support.chat_server import serve

from fms_dgt.core.tools.data_objects import Tool, ToolCall
from fms_dgt.core.tools.engines.base import CallPolicy
from fms_dgt.core.tools.engines.lm import LMToolEngine
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.errors import ConfigError

STOCK = Tool(
    "quote",
    "fin",
    parameters={"type": "object", "properties": {"symbol": {"type": "string"}}, "required": ["symbol"]},
    output_parameters={"type": "object", "properties": {"price": {"type": "number"}}, "required": ["price"]},
)


def _reply(body: dict[str, Any]) -> Any:
    prompt = body["messages"][-1]["content"]
    arguments = json.loads(prompt.rsplit("Arguments: ", 1)[1])
    return {"price": 100.0 + len(arguments["symbol"])}


def test_results_come_from_the_endpoint_with_schema_and_history(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DGT_TEST_KEY", "sk-secret")
    with serve(_reply) as server:
        engine = LMToolEngine(
            ToolRegistry([STOCK]), base_url=server.url, model="sim", api_key_env="DGT_TEST_KEY"
        )
        engine.setup("s")
        first, second = (
            engine.execute("s", [ToolCall("fin::quote", {"symbol": s})])[0] for s in ("IBM", "NVDA")
        )
        engine.close()
    assert first.result == {"price": 103.0} and second.result == {"price": 104.0}
    request = server.requests[1]
    assert request["model"] == "sim"
    response_format = request["response_format"]["json_schema"]
    # Strict mode where the schema allows it: the object closed, named after the tool.
    assert response_format == {
        "name": "quote",
        "strict": True,
        "schema": {**STOCK.output_parameters, "additionalProperties": False},
    }
    assert (
        "Earlier call" in request["messages"][-1]["content"] and "IBM" in request["messages"][-1]["content"]
    )
    assert server.headers[0]["Authorization"] == "Bearer sk-secret"
    assert "sk-secret" not in json.dumps([first.to_dict(), second.to_dict()])


def test_schema_violations_fail_and_a_non_json_answer_is_kept_as_text() -> None:
    with serve(lambda body: {"price": "cheap"}) as server:
        engine = LMToolEngine(ToolRegistry([STOCK]), base_url=server.url, model="m")
        engine.setup("s")
        [result] = engine.execute("s", [ToolCall("fin::quote", {"symbol": "X"})])
    assert "violates the output schema" in str(result.error)
    with serve(lambda body: "not json at all") as server:
        engine = LMToolEngine(ToolRegistry([STOCK]), base_url=server.url, model="m")
        engine.setup("s")
        [result] = engine.execute("s", [ToolCall("fin::quote", {"symbol": "X"})])
    assert result.error is None and result.result == "not json at all"
    assert result.metadata["note"] == "the model's answer is not JSON: kept as text"
    assert "is not of type 'object'" in result.metadata["output_validation"], "the policy still judges it"


def test_free_form_objects_are_sent_without_strict_mode() -> None:
    from fms_dgt.core.tools.engines.lm import response_format

    free = Tool("lookup.v2", "x", output_parameters={"type": "object", "additionalProperties": True})
    nested = Tool(
        "nested",
        "x",
        output_parameters={
            "type": "object",
            "properties": {
                "a": {"type": "object", "properties": {"b": {"type": "string"}}},
                "c": {"type": "integer"},
            },
            "required": ["a"],
        },
    )
    loose = response_format(free)["json_schema"]
    assert loose == {"name": "lookup_v2", "schema": free.output_parameters, "strict": False}
    tight = response_format(nested)["json_schema"]["schema"]
    assert tight["required"] == ["a", "c"] and tight["additionalProperties"] is False
    assert tight["properties"]["c"]["type"] == ["integer", "null"], "an optional property becomes nullable"
    assert tight["properties"]["a"]["additionalProperties"] is False


def test_server_errors_are_retried() -> None:
    with serve(_reply) as server:
        server.status = [503, 429]
        engine = LMToolEngine(
            ToolRegistry([STOCK]), base_url=server.url, model="m", policy=CallPolicy(retries=2, backoff=0.001)
        )
        engine.setup("s")
        [result] = engine.execute("s", [ToolCall("fin::quote", {"symbol": "AB"})])
    assert result.result == {"price": 102.0} and result.metadata["attempts"] == 3


def test_error_injection_is_seeded_and_marked() -> None:
    calls = [ToolCall("fin::quote", {"symbol": "S"}, f"c{i}") for i in range(60)]
    rates = {"network_error": 0.2, "unparseable_result": 0.2, "schema_violation": 0.2}

    def run(seed: int) -> list[str | None]:
        with serve(_reply) as server:
            engine = LMToolEngine(
                ToolRegistry([STOCK]),
                base_url=server.url,
                model="m",
                seed=seed,
                errors=rates,
                policy=CallPolicy(validate_results="off"),
            )
            engine.setup("s")
            results = engine.execute("s", calls)
            engine.close()
        return [r.metadata.get("injected") for r in results]

    first = run(1)
    assert first == run(1) and first != run(2)
    assert {"network_error", "unparseable_result", "schema_violation", None} == set(first)
    with pytest.raises(ConfigError, match="unknown error kind"):
        LMToolEngine(ToolRegistry([STOCK]), base_url="http://x", model="m", errors={"timeout": 0.1})


def test_an_echoed_key_is_redacted_before_the_error_is_cut(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("DGT_TEST_KEY", "sk-echoed-4471")
    with serve(_reply) as server:
        server.status = [401]
        engine = LMToolEngine(
            ToolRegistry([STOCK]), base_url=server.url, model="m", api_key_env="DGT_TEST_KEY"
        )
        engine.setup("s")
        [result] = engine.execute("s", [ToolCall("fin::quote", {"symbol": "AB"})])
        engine.close()
    assert server.headers[0]["Authorization"] == "Bearer sk-echoed-4471"
    assert result.error is not None and "answered 401" in result.error and "Bearer *" in result.error
    text = json.dumps(result.to_dict()) + caplog.text
    for cut in range(4, len("sk-echoed-4471") + 1):
        assert "sk-echoed-4471"[:cut] not in text


def test_a_key_with_a_control_character_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DGT_TEST_KEY", "sk-from-file-9931\n")
    with pytest.raises(ConfigError, match="API key in environment variable DGT_TEST_KEY") as info:
        LMToolEngine(
            ToolRegistry([STOCK]), base_url="http://127.0.0.1:9/v1", model="m", api_key_env="DGT_TEST_KEY"
        )
    assert "sk-from-file-9931" not in str(info.value)


def test_answers_are_capped_and_parsed_within_limits() -> None:
    with serve(lambda body: {"price": 1.0, "pad": "p" * 5000}) as server:
        engine = LMToolEngine(ToolRegistry([STOCK]), base_url=server.url, model="m", max_response_bytes=2000)
        engine.setup("s")
        [big] = engine.execute("s", [ToolCall("fin::quote", {"symbol": "AB"})])
    assert big.error is not None and "response too large" in big.error
    assert big.metadata["error"] == {"type": "transport", "phase": "execution", "limit": 2000}
    with serve(lambda body: "[" * 5000 + "]" * 5000) as server:
        engine = LMToolEngine(ToolRegistry([STOCK]), base_url=server.url, model="m")
        engine.setup("s")
        [deep] = engine.execute("s", [ToolCall("fin::quote", {"symbol": "AB"})])
    assert deep.error is not None and "nested deeper than 128 levels" in deep.error
    assert "RecursionError" not in deep.error
    with pytest.raises(ConfigError, match="lm engine's base_url"):
        LMToolEngine(ToolRegistry([STOCK]), base_url="http://u:pw@h/v1", model="m")
