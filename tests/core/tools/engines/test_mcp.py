"""Tests of fms_dgt/core/tools/engines/mcp.py against our test server as a real subprocess."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from support.mcp_harness import free_port, hostile_kwargs, http_server, stdio_kwargs, wait_until

from fms_dgt.config import Config
from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.engines.base import CallPolicy
from fms_dgt.core.tools.engines.mcp import MCPToolEngine, map_call_result
from fms_dgt.core.tools.engines.multi import MultiToolEngine
from fms_dgt.core.tools.loaders.mcp import MCPToolLoader
from fms_dgt.core.tools.mcp import clear_connections, get_connection
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.databuilders.tool_calling.config import build_engines
from fms_dgt.errors import ConfigError
from fms_dgt.plugins import get_tool_engine_class

CALL = ToolCall("ns::t", {}, "c1")


@pytest.fixture(scope="module")
def registry() -> Iterator[ToolRegistry]:
    loader = MCPToolLoader(server="eng", reconnect_backoff=0.1, **stdio_kwargs())
    with ToolRegistry(loaders=[loader]) as reg:
        yield reg
    clear_connections()


@pytest.fixture
def engine(registry: ToolRegistry) -> Iterator[MCPToolEngine]:
    with MCPToolEngine(registry) as eng:
        eng.setup("s")
        yield eng


def _one(engine: MCPToolEngine, name: str, **arguments: object) -> ToolResult:
    [result] = engine.execute("s", [ToolCall(f"eng::{name}", dict(arguments))])
    return result


# --------------------------------------------------------------------------- result mapping


def test_structured_content_wins_over_text() -> None:
    raw = {"content": [{"type": "text", "text": '{"a": 1}'}], "structuredContent": {"a": 2}, "isError": False}
    result = map_call_result(CALL, raw, server="x")
    assert result.result == {"a": 2} and result.ok
    assert result.metadata == {"is_error": False, "server": "x"}


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (['{"k": [1, 2]}'], {"k": [1, 2]}),
        (["plain words"], "plain words"),
        (["42", "not json"], [42, "not json"]),
        ([], None),
    ],
)
def test_text_content_is_json_decoded_when_it_is_json(texts: list[str], expected: object) -> None:
    raw = {"content": [{"type": "text", "text": t} for t in texts]}
    assert map_call_result(CALL, raw).result == expected


def test_is_error_becomes_the_error() -> None:
    raw = {"content": [{"type": "text", "text": "bad input"}], "isError": True}
    result = map_call_result(CALL, raw)
    assert result.error == "bad input" and result.result is None and not result.ok
    assert map_call_result(CALL, {"content": [], "isError": True}).error is not None


def test_other_blocks_and_meta_go_to_metadata() -> None:
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    raw = {"content": [{"type": "text", "text": "see"}, image], "_meta": {"trace": "t1"}}
    result = map_call_result(CALL, raw)
    assert result.result == "see"
    assert result.metadata["content"] == [image] and result.metadata["meta"] == {"trace": "t1"}


# --------------------------------------------------------------------------- execution


def test_registered_as_the_mcp_engine() -> None:
    assert get_tool_engine_class("mcp") is MCPToolEngine


def test_execute_maps_results_from_the_server(engine: MCPToolEngine) -> None:
    forecast, raw_json, failed = engine.execute(
        "s",
        [
            ToolCall("eng::forecast", {"city": "Oslo", "days": 2}, "a"),
            ToolCall("eng::raw_json", {"key": "n", "value": 7}, "b"),
            ToolCall("eng::fail", {"message": "boom"}, "c"),
        ],
    )
    assert forecast.result == {"city": "Oslo", "celsius": 23.5, "conditions": "sunny"}
    assert forecast.call_id == "a" and forecast.name == "eng::forecast"
    assert raw_json.result == {"n": 7}
    assert failed.error is not None and "boom" in failed.error
    assert engine.get_session_state("s")["calls"][0]["result"]["result"]["city"] == "Oslo"


def test_media_blocks_are_kept(engine: MCPToolEngine) -> None:
    result = _one(engine, "media")
    assert result.result == "see attachments"
    kinds = [block["type"] for block in result.metadata["content"]]
    assert kinds == ["image", "audio", "resource_link", "resource"]


def test_timeout_is_a_result_error_not_an_exception(registry: ToolRegistry) -> None:
    with MCPToolEngine(registry, policy=CallPolicy(timeout=0.3)) as engine:
        engine.setup("s")
        result = _one(engine, "sleep", seconds=5)
    assert result.error is not None and "MCPTimeoutError" in result.error
    assert "tools/call sleep" in result.error and "'eng'" in result.error
    assert _one_fresh(registry, "echo", text="alive").ok  # the session survived


def test_timeouts_are_retried_by_policy(registry: ToolRegistry) -> None:
    with MCPToolEngine(registry, policy=CallPolicy(timeout=0.2, retries=1, backoff=0.01)) as engine:
        engine.setup("s")
        result = _one(engine, "sleep", seconds=5)
    assert result.error is not None and result.metadata["attempts"] == 2


def test_a_callers_shorter_timeout_is_enforced_on_the_session_itself(registry: ToolRegistry) -> None:
    with MCPToolEngine(registry, policy=CallPolicy(timeout=30)) as engine:
        engine.setup("s")
        started = time.monotonic()
        [result] = engine.execute("s", [ToolCall("eng::sleep", {"seconds": 5})], timeout=0.3)
        assert time.monotonic() - started < 4
        # The request itself timed out (and was cancelled), not a waiter abandoning a thread.
        assert result.error is not None and "MCPTimeoutError" in result.error
        assert engine._timeout_pool is None
    assert _one_fresh(registry, "echo", text="alive").ok


def _one_fresh(registry: ToolRegistry, name: str, **arguments: object) -> ToolResult:
    with MCPToolEngine(registry) as engine:
        engine.setup("s")
        return _one(engine, name, **arguments)


def test_tool_without_a_connection_is_a_result_error() -> None:
    orphan = Tool("lost", "gone", metadata={"kind": "mcp", "server": "never-loaded"})
    with MCPToolEngine(ToolRegistry([orphan])) as engine:
        engine.setup("s")
        [result] = engine.execute("s", [ToolCall("gone::lost", {})])
    assert (
        result.error is not None and "no connection is registered for server 'never-loaded'" in result.error
    )


def test_engine_shares_the_loader_session(registry: ToolRegistry, engine: MCPToolEngine) -> None:
    client = get_connection("eng")
    assert client is not None and registry.loaders[0].client is client  # type: ignore[attr-defined]
    before = client.connects
    assert _one(engine, "echo", text="x").ok
    assert client.connects == before and client.refs == 2


def test_calls_from_several_threads(engine: MCPToolEngine) -> None:
    def work(i: int) -> object:
        session = f"t{i}"
        engine.setup(session)
        [result] = engine.execute(session, [ToolCall("eng::add", {"a": i, "b": 0.5})])
        engine.teardown(session)
        return result.result

    with ThreadPoolExecutor(max_workers=8) as pool:
        totals = list(pool.map(work, range(40)))
    assert totals == [{"total": i + 0.5} for i in range(40)]


def test_a_batch_runs_in_parallel_on_one_session(engine: MCPToolEngine) -> None:
    calls = [ToolCall("eng::echo", {"text": str(i)}, str(i)) for i in range(20)]
    results = engine.execute("s", calls)
    assert [r.result for r in results] == [{"result": str(i)} for i in range(20)]
    assert [r.call_id for r in results] == [str(i) for i in range(20)]


@pytest.mark.anyio
async def test_inside_a_running_event_loop(engine: MCPToolEngine) -> None:
    [sync] = engine.execute("s", [ToolCall("eng::echo", {"text": "sync"})])
    [native] = await engine.execute_async("s", [ToolCall("eng::echo", {"text": "async"})])
    assert (sync.result, native.result) == ({"result": "sync"}, {"result": "async"})


def test_kill_the_server_mid_run_and_the_next_call_reconnects(engine: MCPToolEngine) -> None:
    client = get_connection("eng")
    assert client is not None
    connects = client.connects
    pid = _one(engine, "pid").result["result"]  # type: ignore[index]
    os.kill(pid, signal.SIGKILL)
    assert wait_until(lambda: not client.connected)
    after = _one(engine, "pid")
    assert after.ok and after.result["result"] != pid  # type: ignore[index]
    assert client.connects == connects + 1


def test_kill_during_a_call_reports_it_then_recovers(engine: MCPToolEngine, tmp_path: Path) -> None:
    client = get_connection("eng")
    assert client is not None
    pid = _one(engine, "pid").result["result"]  # type: ignore[index]
    marker = tmp_path / "sleeping"
    results: list[ToolResult] = []
    slow = threading.Thread(
        target=lambda: results.append(_one(engine, "sleep", seconds=60, marker=str(marker)))
    )
    slow.start()
    assert wait_until(marker.exists), "the slow call never reached the server"
    os.kill(pid, signal.SIGKILL)
    slow.join(60)
    assert results and results[0].error is not None and "connection dropped" in results[0].error
    assert "RetryableError" in results[0].error
    assert _one(engine, "echo", text="back").result == {"result": "back"}


def test_session_stays_open_while_the_engine_holds_it() -> None:
    loader = MCPToolLoader(server="held", **stdio_kwargs(argv=["--page-size", "20"]))
    registry = ToolRegistry(loaders=[loader])
    engine = MCPToolEngine(registry)
    engine.setup("s")
    assert engine.execute("s", [ToolCall("held::echo", {"text": "1"})])[0].ok
    registry.close()  # the loader lets go; the engine still holds the connection
    client = get_connection("held")
    assert client is not None and client.connected and client.refs == 1
    assert engine.execute("s", [ToolCall("held::echo", {"text": "2"})])[0].result == {"result": "2"}
    engine.close()
    assert get_connection("held") is None and not client.connected


# --------------------------------------------------------------------------- an engine given a url

ECHO = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def test_the_seed_engine_entry_routes_calls_to_the_loaders_session() -> None:
    # engines: {mcp_live: {type: mcp, url: http://localhost:8080}} beside the seed's registry entry.
    with http_server("streamable_http", path="/") as url:
        config = {
            "tools": {
                "registry": [{"type": "mcp", "url": url, "namespace": "hr_api", "engine": "mcp_live"}],
                "engines": {"mcp_live": {"type": "mcp", "url": f"{url}/"}},  # another spelling
            }
        }
        with ToolRegistry.from_config(config) as registry:
            engines = build_engines(Config(config, None), registry)
            shared = get_connection("hr_api")
            assert shared is not None and shared.transport == "streamable_http"
            with MultiToolEngine(registry, engines=engines) as multi, engines["mcp_live"]:
                multi.setup("s")
                [result] = multi.execute("s", [ToolCall("hr_api::add", {"a": 2, "b": 2})])
                assert result.result == {"total": 4.0} and result.metadata["engine"] == "mcp_live"
                assert result.metadata["server"] == "hr_api"
                assert shared.refs == 2 and shared.connects == 1  # the loader's session, shared


def test_an_engine_url_without_a_loader_session_opens_its_own_and_closes_it() -> None:
    with http_server("sse", path="/") as url:
        registry = ToolRegistry([Tool("echo", "hr_api", parameters=ECHO, metadata={"kind": "mcp"})])
        engine = MCPToolEngine(registry, url=url)
        engine.setup("s")
        [result] = engine.execute("s", [ToolCall("hr_api::echo", {"text": "direct"})])
        assert result.result == {"result": "direct"}
        name = url.removeprefix("http://")
        assert result.metadata["server"] == name and get_connection(name) is None  # private
        client = engine._clients[f"url:{url}"]
        assert client.connected and client.transport == "sse"
        engine.close()
        assert not client.connected


def test_an_engine_url_that_answers_nothing_names_server_and_url() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    registry = ToolRegistry([Tool("echo", "hr_api", parameters=ECHO, metadata={"kind": "mcp"})])
    with MCPToolEngine(registry, url=url, server="hr_live") as engine:
        engine.setup("s")
        [result] = engine.execute("s", [ToolCall("hr_api::echo", {"text": "x"})])
    assert result.error is not None
    assert "MCP connect failed for server 'hr_live' (auto)" in result.error and url in result.error
    assert result.metadata["server"] == "hr_live"


def test_an_engine_server_routes_every_call_to_that_connection(registry: ToolRegistry) -> None:
    stray = Tool("echo", "other", parameters=ECHO, metadata={"kind": "mcp", "server": "unknown"})
    with MCPToolEngine(ToolRegistry([stray]), server="eng") as engine:
        engine.setup("s")
        [result] = engine.execute("s", [ToolCall("other::echo", {"text": "routed"})])
    assert result.result == {"result": "routed"} and result.metadata["server"] == "eng"
    with MCPToolEngine(ToolRegistry([stray]), server="absent") as engine:
        engine.setup("s")
        [result] = engine.execute("s", [ToolCall("other::echo", {"text": "x"})])
    assert result.error is not None
    assert "no connection is registered for server 'absent' (named by the engine's `server`)" in result.error


@pytest.mark.parametrize(
    ("entry", "fragment"),
    [
        ({"type": "mcp", "headers": {"A": "b"}}, "`headers` apply to the engine's `url`"),
        ({"type": "mcp", "url": "localhost:8080"}, "invalid url 'localhost:8080'"),
        ({"type": "mcp", "url": "http://h", "port": 1}, "unknown key 'port'"),
    ],
)
def test_bad_engine_entries(entry: dict[str, object], fragment: str) -> None:
    config = {"tools": {"registry": [], "engines": {"live": entry}}}
    with pytest.raises(ConfigError, match=fragment):
        build_engines(Config(config, None), ToolRegistry([]))


# --------------------------------------------------------------------------- servers that misbehave

ANY_ARGS = {"type": "object"}


@contextmanager
def _hostile_engine(call: dict[str, Any], **engine_keys: Any) -> Iterator[MCPToolEngine]:
    scenario = {"tools": [{"name": "echo", "inputSchema": ANY_ARGS}], "call": call}
    loader = MCPToolLoader(server="bad", call_timeout=30, **hostile_kwargs(scenario))
    with ToolRegistry(loaders=[loader]) as registry, MCPToolEngine(registry, **engine_keys) as engine:
        engine.setup("s")
        yield engine


def _call_bad(engine: MCPToolEngine) -> ToolResult:
    [result] = engine.execute("s", [ToolCall("bad::echo", {})])
    return result


def test_a_result_over_the_default_cap_is_a_failed_call() -> None:
    with _hostile_engine({"text_bytes": 12 * 1024 * 1024}) as engine:
        result = _call_bad(engine)
    assert result.error is not None and result.result is None
    assert "result of bad::echo from MCP server 'bad' refused" in result.error
    assert "over the engine's max_result_bytes (10,485,760)" in result.error
    assert result.metadata["error"] == {"type": "validation", "phase": "result", "limit": "max_result_bytes"}
    assert len(str(result.to_dict())) < 2000  # nothing of the result is kept


def test_max_result_bytes_is_a_config_key() -> None:
    with _hostile_engine({"pad_bytes": 5000}, max_result_bytes=1000) as engine:
        assert "over the engine's max_result_bytes (1,000)" in str(_call_bad(engine).error)
    with _hostile_engine({"pad_bytes": 500}, max_result_bytes=1000) as engine:
        assert _call_bad(engine).result == {"pad": "z" * 500}
    config = {"tools": {"registry": [], "engines": {"live": {"type": "mcp", "max_result_bytes": 0}}}}
    with pytest.raises(ConfigError, match="invalid max_result_bytes 0 for the mcp engine"):
        build_engines(Config(config, None), ToolRegistry([]))


@pytest.mark.parametrize("depth", [150, 300, 5000])
def test_deeply_nested_structured_content_is_a_failed_call(depth: int) -> None:
    started = time.monotonic()
    with _hostile_engine({"depth": depth}) as engine:
        result = _call_bad(engine)
        assert _call_bad(engine).error == result.error  # the session goes on, answering the same
        client = get_connection("bad")
        assert client is not None and client.connects == 1
    assert result.error is not None and "nested more than 128 levels deep" in result.error
    assert time.monotonic() - started < 20  # at once, not at the 30 s call timeout


def test_text_that_decodes_to_a_deep_value_is_refused_too() -> None:
    line = json.dumps(
        {"jsonrpc": "2.0", "id": 0, "result": {"content": [{"type": "text", "text": "[" * 150 + "]" * 150}]}}
    )
    with _hostile_engine({"line": line.replace('"id": 0', '"id": {id}')}) as engine:
        result = _call_bad(engine)
    assert result.error is not None and "nested more than 128 levels deep" in result.error
    assert result.metadata["error"]["limit"] == "max_depth"


def test_a_server_that_exits_mid_call_is_a_clear_failed_call() -> None:
    with _hostile_engine({"exit": 3, "stderr": "fatal: license expired"}) as engine:
        result = _call_bad(engine)
    assert result.error is not None
    assert "connection dropped" in result.error and "exited with code 3" in result.error
    assert "fatal: license expired" in result.error
    assert result.metadata["error"]["type"] == "transport"


def test_an_answer_outside_the_protocol_is_a_clear_failed_call() -> None:
    line = '{"jsonrpc": "2.0", "id": {id}, "result": {"content": "not a list"}}'
    with _hostile_engine({"line": line}) as engine:
        result = _call_bad(engine)
    assert result.error is not None
    assert (
        "the answer does not follow the MCP protocol: content: Input should be a valid list" in result.error
    )
    assert "Traceback" not in result.error


def test_a_megabyte_error_message_is_cut() -> None:
    with _hostile_engine({"error_bytes": 1_000_000}) as engine:
        result = _call_bad(engine)
    assert result.error is not None and len(result.error) < 3000
    assert "EEEE... (1,000,010 characters)" in result.error


def test_a_result_holding_a_lone_surrogate_is_a_failed_call_saying_where() -> None:
    line = json.dumps(
        {"jsonrpc": "2.0", "id": 0, "result": {"content": [], "structuredContent": {"smile": "x\ud83d"}}}
    )
    with _hostile_engine({"line": line.replace('"id": 0', '"id": {id}')}) as engine:
        result = _call_bad(engine)
        assert _call_bad(engine).error == result.error  # the session goes on
    assert result.error is not None and result.result is None
    assert "lone surrogate (\\ud83d)" in result.error and "/result/structuredContent/smile" in result.error
    str(result.to_dict()).encode("utf-8")  # nothing unwritable is kept
