"""The call policy travels with the engine that owns it, also when ``multi`` dispatches to it."""

from __future__ import annotations

import json
import threading
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.rest_server import serve

from fms_dgt.cli import main
from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.engines import handlers
from fms_dgt.core.tools.engines.base import CallPolicy, ToolEngine
from fms_dgt.core.tools.engines.multi import MultiToolEngine
from fms_dgt.core.tools.engines.rest import RESTToolEngine
from fms_dgt.core.tools.loaders.rest import RESTToolLoader
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.errors import RetryableError
from fms_dgt.plugins import TOOL_ENGINES

SPEC = Path(__file__).resolve().parents[4] / "data" / "rest" / "petstore.yaml"


class Flaky(ToolEngine):
    """Fails twice per call id with a retryable error, then answers; counts attempts."""

    def __init__(self, registry: ToolRegistry, **kwargs: Any) -> None:
        super().__init__(registry, **kwargs)
        self.seen: Counter[str] = Counter()
        self._count_lock = threading.Lock()

    def call(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> ToolResult:
        with self._count_lock:
            self.seen[str(call.call_id)] += 1
            attempt = self.seen[str(call.call_id)]
        if attempt <= 2:
            raise RetryableError(f"temporarily unavailable (attempt {attempt})")
        return ToolResult(call.call_id, call.name, result={"ok": True, "value": 1})


def _registry() -> ToolRegistry:
    entry = {
        "type": "inline",
        "namespace": "calc",
        "engine": "flaky",
        "tools": [
            {
                "name": "add",
                "parameters": {"type": "object", "properties": {"a": {"type": "number"}}},
                "output_parameters": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
            }
        ],
    }
    return ToolRegistry.from_config({"tools": {"registry": [entry]}})


def test_a_routed_engine_keeps_its_retries() -> None:
    registry = _registry()
    flaky = Flaky(registry, policy=CallPolicy(retries=2, backoff=0.0))
    flaky.setup("direct")
    [direct] = flaky.execute("direct", [ToolCall("calc::add", {"a": 1}, "c1")])
    assert direct.ok and direct.metadata["attempts"] == 3
    with MultiToolEngine(registry, engines={"flaky": flaky}) as multi:
        multi.setup("s")
        [routed] = multi.execute("s", [ToolCall("calc::add", {"a": 1}, "c2")])
    assert routed.ok, routed.error
    assert routed.metadata == {"attempts": 3, "engine": "flaky", "output_validation": "ok"}


def test_a_routed_engine_keeps_its_coercion_timeout_and_validation() -> None:
    registry = _registry()
    strict = CallPolicy(retries=2, backoff=0.0, coerce_arguments=True, validate_results="error")
    flaky = Flaky(registry, policy=strict)
    with MultiToolEngine(registry, engines={"flaky": flaky}) as multi:
        multi.setup("s")
        [coerced] = multi.execute("s", [ToolCall("calc::add", {"a": "2.5"}, "c1")])
    assert coerced.ok and coerced.metadata["coerced"] == ["a: string '2.5' -> number"]

    never = Flaky(registry, policy=CallPolicy(retries=0))
    with MultiToolEngine(registry, engines={"flaky": never}) as multi:
        multi.setup("s")
        [failed] = multi.execute("s", [ToolCall("calc::add", {"a": 1}, "c1")])
    assert failed.error == "RetryableError: temporarily unavailable (attempt 1)"
    assert failed.metadata["engine"] == "flaky"


def test_merged_policy_takes_the_careful_side_of_each_key() -> None:
    inner = CallPolicy(timeout=5, retries=2, backoff=0.5, blocklist=["a::*"], validate_results="off")
    outer = CallPolicy(timeout=2, retries=1, blocklist=["b::x"], validate_results="error")
    outer.coerce_arguments = True
    merged = inner.within(outer)
    assert (merged.timeout, merged.retries, merged.backoff) == (2, 2, 0.5)
    assert merged.blocklist == ["b::x", "a::*"] and merged.coerce_arguments
    assert merged.validate_results == "error"
    assert merged.blocks("a::t") and merged.blocks("b::x") and not merged.blocks("b::y")
    assert inner.within(None) is inner


def test_rest_engine_retries_behind_multi_against_a_flaky_server() -> None:
    registry = ToolRegistry(loaders=[RESTToolLoader(str(SPEC), namespace="pets")], engines=["rest"])
    with serve() as server:
        rest = RESTToolEngine(registry, base_url=server.base_url, policy=CallPolicy(retries=2, backoff=0.0))
        with MultiToolEngine(registry, engines={"rest": rest}) as multi:
            multi.setup("s")
            [result] = multi.execute("s", [ToolCall("pets::flaky", {"key": "k1"})])
        assert result.ok, result.error
        assert result.result == {"attempts": 3} and result.metadata["attempts"] == 3
        assert [r["method"] for r in server.requests if "flaky" in r["path"]] == ["GET"] * 3


@pytest.fixture
def flaky_plugin() -> Any:
    TOOL_ENGINES.add("test-flaky", Flaky)
    yield
    TOOL_ENGINES.remove("test-flaky")


def test_retries_of_an_engine_entry_apply_in_fms_dgt_run(tmp_path: Path, flaky_plugin: Any) -> None:
    config = {
        "tools": {
            "registry": [
                {
                    "type": "inline",
                    "namespace": "calc",
                    "engine": "flaky",
                    "tools": [{"name": "add", "parameters": {"type": "object", "properties": {}}}],
                }
            ],
            "engines": {"flaky": {"type": "test-flaky", "retries": 2, "backoff": 0}},
        },
        "generation": {"count": 3, "scenarios": [{"name": "one", "sampler": {"type": "tc/random", "k": 1}}]},
    }
    path = tmp_path / "flaky.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 0
    records = [json.loads(line) for line in (tmp_path / "out" / "records.jsonl").read_text().splitlines()]
    assert len(records) == 3
    assert all(r["metadata"]["errors"] == 0 for r in records)
    assert all(r["metadata"]["engines"] == ["flaky"] for r in records)


def test_old_handler_names_are_deprecated_aliases() -> None:
    def handler(arguments: dict[str, Any]) -> str:
        return "h"

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            handlers.register_tool("a::t", handler)
            assert handlers.get_tool("a::t") is handler
            handlers.clear_tools()
        assert [w.category for w in caught] == [DeprecationWarning] * 3
        assert "register_name_handler" in str(caught[0].message)
        assert handlers.get_name_handler("a::t") is None
    finally:
        handlers.clear_name_handlers()


def test_kind_getter_does_not_fall_back_to_the_wildcard() -> None:
    try:
        handlers.register_tool_handler("*", lambda arguments: "any")
        assert handlers.get_tool_handler("custom") is None
        assert handlers.get_tool_handler("*") is not None
    finally:
        handlers.clear_tool_handlers()


def test_the_source_kinds_have_builtin_handlers_and_openapi_is_rest() -> None:
    for kind, engine in (("function", "function"), ("mcp", "mcp"), ("rest", "rest"), ("openapi", "rest")):
        handler = handlers.get_tool_handler(kind)
        assert isinstance(handler, handlers.BuiltinKindHandler) and handler.engine == engine
    tool = Tool("t", "ns", output_parameters={"type": "object", "properties": {"v": {"type": "integer"}}})
    direct = handlers.get_tool_handler("file")
    assert direct is not None
    result = direct(tool, {})
    assert result.ok and isinstance(result.result["v"], int), "a builtin handler runs on its own too"


def test_kind_handlers_get_the_tool_the_arguments_and_a_context() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}}
    registry = ToolRegistry([Tool("t", "k", parameters=schema, metadata={"kind": "custom"})])
    seen: list[tuple[Any, ...]] = []

    def two(tool: Tool, arguments: dict[str, Any]) -> str:
        seen.append((tool.qualified_name, arguments))
        return "two"

    def three(tool: Tool, arguments: dict[str, Any], context: dict[str, Any]) -> str:
        seen.append((tool.qualified_name, arguments, context["session_id"], context["call_id"]))
        return "three"

    try:
        with MultiToolEngine(registry) as multi:
            multi.setup("s")
            handlers.register_tool_handler("custom", two)
            assert multi.execute("s", [ToolCall("k::t", {"x": 1}, "c1")])[0].result == "two"
            handlers.register_tool_handler("custom", three)
            assert multi.execute("s", [ToolCall("k::t", {"x": 2}, "c2")])[0].result == "three"
    finally:
        handlers.clear_tool_handlers()
    assert seen == [("k::t", {"x": 1}), ("k::t", {"x": 2}, "s", "c2")]
