"""Tests for fms_dgt/core/tools/enrichments/output_parameters.py."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.engines.base import ToolEngine
from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment
from fms_dgt.core.tools.enrichments.output_parameters import (
    OutputParametersEnrichment,
    OutputParametersReport,
    infer_schema,
    synthesise_arguments,
)
from fms_dgt.core.tools.loaders.file import FileToolLoader
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.core.tools.schema import get_validator
from fms_dgt.errors import ConfigError


def lookup_user(email: str) -> dict[str, Any]:
    return {"user_id": f"u-{len(email)}", "active": True, "tags": ["a"]}


def order_total(user_id: str, discount: float = 0.0) -> dict[str, Any]:
    return {"total": 12.5 - discount, "items": 3, "coupon": None if discount else "WELCOME"}


def broken(x: int) -> Any:
    raise RuntimeError("backend down")


class PythonEngine(ToolEngine):
    """Runs real Python functions, looked up by tool name."""

    def __init__(self, registry: ToolRegistry, functions: dict[str, Callable[..., Any]]) -> None:
        super().__init__(registry, max_workers=1)
        self.functions = functions
        self.calls: list[ToolCall] = []

    def call(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> ToolResult:
        self.calls.append(call)
        return ToolResult(call.call_id, call.name, result=self.functions[tool.name](**call.arguments))


FUNCTIONS = {"lookup_user": lookup_user, "order_total": order_total, "broken": broken}


def shop_tools() -> list[Tool]:
    def params(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
        return {"type": "object", "properties": props, "required": required}

    return [
        Tool(
            "lookup_user",
            "shop",
            parameters=params({"email": {"type": "string", "format": "email"}}, ["email"]),
        ),
        Tool(
            "order_total",
            "shop",
            parameters=params(
                {"user_id": {"type": "string"}, "discount": {"type": "number", "minimum": 0, "maximum": 5}},
                ["user_id"],
            ),
        ),
        Tool("broken", "shop", parameters=params({"x": {"type": "integer"}}, ["x"])),
        Tool(
            "documented",
            "shop",
            output_parameters={"type": "object", "properties": {"ok": {"type": "boolean"}}},
        ),
    ]


def test_observe_fills_schemas_from_real_results() -> None:
    engines: list[PythonEngine] = []

    def factory(registry: ToolRegistry) -> PythonEngine:
        engines.append(PythonEngine(registry, FUNCTIONS))
        return engines[-1]

    enrichment = OutputParametersEnrichment(engine=factory, samples=2)
    registry = ToolRegistry(shop_tools(), enrichments=[enrichment])
    user = registry.get("shop::lookup_user").output_parameters
    assert user["properties"]["user_id"] == {"type": "string"}
    assert user["properties"]["tags"] == {"type": "array", "items": {"type": "string"}}
    assert user["required"] == ["user_id", "active", "tags"]
    total = registry.get("shop::order_total").output_parameters
    assert total["properties"]["total"] == {"type": "number"}
    assert registry.get("shop::order_total").metadata["output_parameters_source"] == "observe"
    report = registry.artifacts["output_parameters"]
    assert isinstance(report, OutputParametersReport)
    assert report.filled == {"shop::lookup_user": "observe", "shop::order_total": "observe"}
    assert "backend down" in report.failed["shop::broken"]
    assert report.kept == 1
    assert registry.get("shop::broken").output_parameters == {}
    assert len(engines[0].calls) == 6
    assert not engines[0]._sessions


def test_filled_outputs_feed_the_dataflow_graph() -> None:
    registry = ToolRegistry(
        shop_tools(),
        enrichments=[
            DataflowEnrichment(),
            OutputParametersEnrichment(engine=lambda r: PythonEngine(r, FUNCTIONS)),
        ],
    )
    graph = registry.artifacts["dataflow"]
    edges = graph.edges_from(graph.node(registry.get("shop::lookup_user")))
    assert [(e.output, e.target.name, e.input) for e in edges] == [("user_id", "order_total", "user_id")]


def test_an_engine_instance_is_used_as_is() -> None:
    registry = ToolRegistry(shop_tools())
    engine = PythonEngine(registry, FUNCTIONS)
    OutputParametersEnrichment(engine=engine, samples=1).enrich(
        ToolRegistry._from_index(registry._index, staged=True)
    )
    assert {c.name for c in engine.calls} == {"shop::lookup_user", "shop::order_total", "shop::broken"}


def test_arguments_are_deterministic_per_seed() -> None:
    def arguments(seed: int) -> list[dict[str, Any]]:
        engine = PythonEngine(ToolRegistry(shop_tools()), FUNCTIONS)
        staged = ToolRegistry._from_index(engine.registry._index, staged=True)
        OutputParametersEnrichment(engine=engine, seed=seed).enrich(staged)
        return [c.arguments for c in engine.calls]

    assert arguments(1) == arguments(1)
    assert arguments(1) != arguments(2)


def test_llm_strategy_asks_an_openai_compatible_server(stand_in: Any, tmp_path: Path) -> None:
    stand_in.reply = lambda body: (
        '```json\n{"type": "object", "properties": {"user_id": {"type": "string", "nullable": true}}}\n```'
    )
    tools = shop_tools()
    enrichment = OutputParametersEnrichment(
        strategy="llm", model="schema-writer", base_url=stand_in.url, cache_dir=tmp_path
    )
    registry = ToolRegistry(tools, enrichments=[enrichment])
    schema = registry.get("shop::broken").output_parameters
    assert schema["properties"]["user_id"]["type"] == ["string", "null"]
    assert len(stand_in.requests) == 3
    path, body = stand_in.paths[0], stand_in.requests[0]
    assert path == "/v1/chat/completions" and body["model"] == "schema-writer"
    assert "lookup_user" in body["messages"][-1]["content"]
    ToolRegistry(tools, enrichments=[enrichment])
    assert len(stand_in.requests) == 3, "answers are cached"


def test_llm_answers_that_are_not_schemas_are_reported(stand_in: Any) -> None:
    stand_in.reply = lambda body: "I think it returns a user."
    enrichment = OutputParametersEnrichment(strategy="llm", model="m", base_url=stand_in.url)
    report = enrichment.enrich(ToolRegistry._from_index(ToolRegistry(shop_tools())._index, staged=True))
    assert "not JSON" in report.failed["shop::lookup_user"]


def test_strategies_fall_back_in_order(stand_in: Any) -> None:
    stand_in.reply = lambda body: json.dumps({"type": "object", "properties": {"x": {"type": "integer"}}})
    enrichment = OutputParametersEnrichment(
        strategy=["observe", "llm"],
        engine=lambda r: PythonEngine(r, FUNCTIONS),
        model="m",
        base_url=stand_in.url,
    )
    registry = ToolRegistry(shop_tools(), enrichments=[enrichment])
    assert registry.artifacts["output_parameters"].filled["shop::broken"] == "llm"
    assert len(stand_in.requests) == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"strategy": "guess"}, "unknown strategy 'guess'"),
        ({"strategy": "observe"}, "missing engine"),
        ({"strategy": "llm"}, "missing model or base_url"),
    ],
)
def test_settings_are_checked(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        OutputParametersEnrichment(**kwargs)


def test_infer_schema_merges_samples() -> None:
    schema = infer_schema([{"a": 1, "b": [1.5]}, {"a": 2.5, "c": None}])
    assert schema == {
        "type": "object",
        "properties": {
            "a": {"type": "number"},
            "b": {"type": "array", "items": {"type": "number"}},
            "c": {"type": "null"},
        },
        "required": ["a"],
    }
    assert infer_schema(["x", 3]) == {"type": ["string", "integer"]}
    assert infer_schema([]) == {}


def test_synthesised_arguments_validate(travel_tools: list[Tool]) -> None:
    rng = random.Random(0)
    for tool in travel_tools:
        for _ in range(5):
            arguments = synthesise_arguments(tool.parameters, rng)
            assert get_validator(tool.parameters).is_valid(arguments), (tool.qualified_name, arguments)


@pytest.mark.corpus
def test_synthesised_arguments_validate_on_real_tools(corpus: Path) -> None:
    tools = []
    for path in sorted((corpus / "toolsets" / "bfcl" / "multi_turn_func_doc").glob("*.json")):
        tools += FileToolLoader(path, namespace=path.stem).load()
    rng = random.Random(0)
    invalid = [
        t.qualified_name
        for t in tools
        if not get_validator(t.parameters).is_valid(synthesise_arguments(t.parameters, rng))
    ]
    assert len(tools) > 100 and invalid == []


# ---------------------------------------------------------------------------- observing HTTP tools

OBSERVED_SPEC = """
openapi: 3.0.3
info: {title: observed, version: "1"}
paths:
  /text:
    get: {operationId: getText, responses: {"200": {description: text}}}
  /echo-post:
    post:
      operationId: echoPost
      requestBody: {content: {application/json: {schema: {type: object, properties: {a: {type: string}}}}}}
      responses: {"200": {description: echo}}
  /things/{id}:
    put:
      operationId: putThing
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses: {"200": {description: echo}}
  /pets/{petId}:
    delete:
      operationId: deletePet
      parameters: [{name: petId, in: path, required: true, schema: {type: string}}]
      responses: {"204": {description: gone}}
"""


def _observed(tmp_path: Path, base_url: str, **kwargs: Any) -> tuple[ToolRegistry, OutputParametersReport]:
    from fms_dgt.core.tools.loaders.rest import RESTToolLoader

    spec = tmp_path / "observed.yaml"
    spec.write_text(OBSERVED_SPEC)
    enrichment = OutputParametersEnrichment(
        strategy="observe", engine="rest", engine_options={"base_url": base_url}, samples=1, **kwargs
    )
    registry = ToolRegistry(loaders=[RESTToolLoader(str(spec), namespace="o")], enrichments=[enrichment])
    return registry, registry.artifacts["output_parameters"]


def test_observe_calls_only_safe_methods_by_default(tmp_path: Path) -> None:
    from support.rest_server import serve

    with serve() as server:
        registry, report = _observed(tmp_path, server.base_url)
    assert {r["method"] for r in server.requests} == {"GET"}
    assert report.filled == {"o::getText": "observe"}
    assert registry.get("o::getText").output_parameters == {"type": "string"}
    for name, method in (("echoPost", "POST"), ("putThing", "PUT"), ("deletePet", "DELETE")):
        assert f"not observed: o::{name} sends {method}" in report.failed[f"o::{name}"]
        assert "observe_unsafe" in report.failed[f"o::{name}"]


def test_observe_unsafe_opts_in_by_name_operation_id_or_glob(tmp_path: Path) -> None:
    from support.rest_server import serve

    with serve() as server:
        _, report = _observed(tmp_path, server.base_url, observe_unsafe=["o::echo*", "putThing"])
    assert sorted(r["method"] for r in server.requests) == ["GET", "POST", "PUT"]
    assert set(report.filled) == {"o::getText", "o::echoPost", "o::putThing"}
    assert "not observed" in report.failed["o::deletePet"]
    with pytest.raises(ConfigError, match="observe_unsafe"):
        OutputParametersEnrichment(strategy="observe", engine="rest", observe_unsafe=[1])  # type: ignore[list-item]


def test_http_methods_of_tools() -> None:
    from fms_dgt.core.tools.enrichments.output_parameters import http_method

    assert http_method(Tool("a", "n", metadata={"kind": "rest", "route": {"method": "delete"}})) == "DELETE"
    assert http_method(Tool("b", "n", metadata={"kind": "rest"})) == "unknown"
    assert http_method(Tool("c", "n", metadata={"kind": "http", "http": {"url": "u"}})) == "POST"
    assert http_method(Tool("d", "n", metadata={"mode": "live", "http": {"method": "get"}})) == "GET"
    assert http_method(Tool("e", "n", metadata={"kind": "function"})) is None
