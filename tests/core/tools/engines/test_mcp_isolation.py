"""Per-record isolation of a stateful MCP server (the demo notebook server, over stdio).

The pool is tried on both demo servers: ``demo_server.py`` (standard library) and
``sdk_demo_server.py`` (the same tools on the MCP SDK's server)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fms_dgt.core.tools.data_objects import ToolCall
from fms_dgt.core.tools.engines.mcp import MCPToolEngine
from fms_dgt.core.tools.engines.multi import MultiToolEngine
from fms_dgt.core.tools.loaders.mcp import MCPToolLoader
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.errors import ConfigError

DEMO = Path(__file__).resolve().parents[4] / "data" / "mcp"


def _registry(reset_tool: str | None, script: str = "demo_server.py") -> ToolRegistry:
    loader = MCPToolLoader(
        server=f"notes-{reset_tool or 'none'}-{script.removesuffix('.py')}",
        namespace="demo",
        command=sys.executable,
        args=[script],
        cwd=str(DEMO),
        reset_tool=reset_tool,
    )
    return ToolRegistry(loaders=[loader])


@pytest.fixture(
    params=[("reset", "demo_server.py"), (None, "demo_server.py"), ("reset", "sdk_demo_server.py")],
    ids=["reset-tool", "fresh-server", "sdk-server"],
)
def registry(request: pytest.FixtureRequest) -> Iterator[ToolRegistry]:
    with _registry(*request.param) as registry:
        yield registry


def _record(engine: Any, session: str, note: str) -> list[str]:
    engine.setup(session)
    try:
        engine.execute(session, [ToolCall("demo::add_note", {"text": note})])
        [listed] = engine.execute(session, [ToolCall("demo::list_notes", {})])
    finally:
        engine.teardown(session)
    assert listed.error is None, listed.error
    notes = listed.result["result"] if isinstance(listed.result, dict) else listed.result
    return list(notes)


def test_per_record_isolation_shows_each_record_only_its_own_notes(registry: ToolRegistry) -> None:
    engine = MCPToolEngine(registry, isolation="per_record")
    try:
        assert [_record(engine, f"r{i}", f"note {i}") for i in range(3)] == [
            ["note 0"],
            ["note 1"],
            ["note 2"],
        ]
        pool = next(iter(engine._pools.values()))
        if pool.reset_tool is None:
            assert pool.restarts == 2 and pool.resets == 0  # a fresh server after each dirty record
        else:
            assert pool.resets == 2 and pool.restarts == 0
    finally:
        engine.close()


def _listed(engine: Any, session: str) -> list[str]:
    [listed] = engine.execute(session, [ToolCall("demo::list_notes", {})])
    assert listed.error is None, listed.error
    return list(listed.result["result"])


def test_readers_share_a_clean_client_and_a_writer_moves_to_its_own(registry: ToolRegistry) -> None:
    engine = MCPToolEngine(registry, isolation="per_record")
    try:
        for session in ("a", "b"):
            engine.setup(session)
            assert _listed(engine, session) == []
        pool = next(iter(engine._pools.values()))
        assert pool.clients == 1  # two sessions at once, one server
        engine.teardown("b")
        engine.execute("a", [ToolCall("demo::add_note", {"text": "mine"})])
        assert _listed(engine, "a") == ["mine"]
        engine.teardown("a")
        assert _record(engine, "c", "next") == ["next"]
        assert pool.clients == 1 and pool.resets + pool.restarts == 1
    finally:
        engine.close()


def test_shared_isolation_lets_state_leak_between_records() -> None:
    with _registry("reset") as registry:
        engine = MCPToolEngine(registry, isolation="shared")
        try:
            assert _record(engine, "a", "first") == ["first"]
            assert _record(engine, "b", "second") == ["first", "second"]
        finally:
            engine.close()


def test_the_reset_tool_is_not_offered_and_read_only_records_need_no_reset() -> None:
    with _registry("reset") as registry:
        assert "demo::reset" not in {t.qualified_name for t in registry.tools()}
        engine = MCPToolEngine(registry, isolation="per_record")
        try:
            for session in ("x", "y"):
                engine.setup(session)
                engine.execute(session, [ToolCall("demo::list_notes", {})])
                engine.teardown(session)
            assert next(iter(engine._pools.values())).resets == 0
        finally:
            engine.close()


def test_a_job_prefers_per_record_for_stdio_servers_through_the_dispatcher() -> None:
    with _registry("reset") as registry:
        multi = MultiToolEngine(registry)  # the mcp engine is made for the tool kind, on first use
        multi.prefer_isolation("per_record")
        try:
            assert [_record(multi, f"s{i}", f"n{i}") for i in range(2)] == [["n0"], ["n1"]]
        finally:
            multi.close()


def test_isolation_values_are_checked() -> None:
    with pytest.raises(ConfigError, match="invalid isolation 'per_call'"):
        MCPToolEngine(ToolRegistry([]), isolation="per_call")
