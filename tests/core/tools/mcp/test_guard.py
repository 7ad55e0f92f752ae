"""Tests of fms_dgt/core/tools/mcp/guard.py: the checks between a transport and the SDK session.

The guard's own bookkeeping is tested on the SDK's message types; what it does for a session is
tested against ``tests/support/hostile_mcp_server.py`` as a real subprocess.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

import pytest
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCRequest, JSONRPCResponse
from support.mcp_harness import hostile_kwargs

from fms_dgt.core.tools.mcp import MCPClient, MCPClientError, MCPServerSpec, clear_connections
from fms_dgt.core.tools.mcp.guard import MessageGuard, RateLimiter, UnreadableMessage


@pytest.fixture(autouse=True)
def _empty_registry() -> Iterator[None]:
    yield
    clear_connections()


def _guard(version: str | None = "2025-11-25") -> MessageGuard:
    return MessageGuard("g", lambda: version, lambda: None)


def _request(request_id: int, method: str, params: dict[str, Any] | None = None) -> SessionMessage:
    return SessionMessage(JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method, params=params))


def _answer(request_id: int, result: dict[str, Any]) -> SessionMessage:
    return SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result))


def _client(name: str, scenario: dict[str, Any], **extra: Any) -> MCPClient:
    kwargs = hostile_kwargs(scenario)
    return MCPClient(MCPServerSpec(name=name, command=kwargs["command"], args=tuple(kwargs["args"]), **extra))


# --------------------------------------------------------------------------- tools/list pages


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28", None])
def test_a_page_loses_only_its_bad_tools(version: str | None) -> None:
    guard = _guard(version)
    tools: list[Any] = [
        {"name": "ok", "inputSchema": {"type": "object"}},
        {"inputSchema": {"type": "object"}},
        {"name": "list_schema", "inputSchema": []},
        "not a tool",
        {"name": "also_ok", "inputSchema": {"type": "object"}},
    ]
    result: dict[str, Any] = {"tools": tools, "nextCursor": "2"}
    if version == "2026-07-28":  # the 2026 page carries cache hints
        result |= {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
    guard.sent(_request(5, "tools/list", {"cursor": "1"}))
    passed = guard.received(_answer(5, result))
    assert [t["name"] for t in passed.message.result["tools"]] == ["ok", "also_ok"]
    report = guard.page_report("1")
    assert report is not None and report.size == 5
    assert report.kept == ((0, "ok"), (4, "also_ok"))
    assert [(r.index, r.name) for r in report.rejected] == [(1, None), (2, "list_schema"), (3, None)]
    assert "name: Field required" in report.rejected[0].reason
    assert guard.page_report("1") is report  # until the next answer for that cursor
    guard.sent(_request(6, "tools/list", {"cursor": "1"}))
    guard.received(_answer(6, {"tools": "not a list"}))
    assert guard.page_report("1") is None


def test_a_page_level_fault_is_left_for_the_sdk_to_report() -> None:
    guard = _guard()
    result: dict[str, Any] = {"tools": [{"name": "ok", "inputSchema": {"type": "object"}}], "nextCursor": 3}
    guard.sent(_request(1, "tools/list"))
    passed = guard.received(_answer(1, result))
    report = guard.page_report(None)
    assert report is not None and report.rejected == () and len(passed.message.result["tools"]) == 1


def test_answers_to_other_requests_pass_unchanged() -> None:
    guard = _guard()
    guard.sent(_request(1, "tools/call", {"name": "x"}))
    answer = _answer(1, {"tools": "not inspected", "content": []})
    assert guard.received(answer) is answer and guard.page_report(None) is None


# --------------------------------------------------------------------------- unreadable answers and noise


def test_an_unreadable_answer_fails_its_request_at_once() -> None:
    guard = _guard()
    guard.sent(_request(9, "tools/call", {"name": "x"}))
    item = guard.received(UnreadableMessage("it is not JSON", 40, request_id=9))
    assert isinstance(item.message, JSONRPCError) and item.message.id == 9
    assert "could not be read: it is not JSON" in item.message.error.message
    # The same id again is noise: its request was answered.
    assert guard.received(UnreadableMessage("it is not JSON", 40, request_id=9)) is None


def test_noise_is_one_warning_line_naming_the_server(caplog: pytest.LogCaptureFixture) -> None:
    guard = _guard()
    with caplog.at_level(logging.WARNING):
        for _ in range(20):
            assert guard.received(UnreadableMessage("it is not JSON", 11, excerpt="'hello world'")) is None
    records = [r for r in caplog.records if r.name == "fms_dgt.core.tools.mcp.guard"]
    assert len(records) == 5  # rate-limited
    assert all("MCP server g sent a line that is not a JSON-RPC message" in r.getMessage() for r in records)
    assert all(r.exc_info is None for r in records)


def test_rate_limiter_counts_what_it_holds_back() -> None:
    limiter = RateLimiter(2, 0.2)
    assert [limiter.allow()[0] for _ in range(4)] == [True, True, False, False]
    time.sleep(0.25)
    assert limiter.allow() == (True, 2)


def test_a_session_survives_garbage_on_stdout(caplog: pytest.LogCaptureFixture) -> None:
    noise = ["Starting weather server v1.2...", "{not json", "DEBUG: ready"]
    client = _client("noisy", {"noise": noise})
    try:
        with caplog.at_level(logging.DEBUG):
            for i in range(3):
                assert client.call_tool("echo", {"i": i})["structuredContent"] == {"echo": {"i": i}}
        assert client.connects == 1
    finally:
        client.close()
    noisy = [r for r in caplog.records if "MCP server noisy sent a line that is not" in r.getMessage()]
    assert noisy and all("Traceback" not in r.getMessage() and r.exc_info is None for r in noisy)
    assert not [r for r in caplog.records if r.name.startswith("mcp.") and r.exc_info]


def test_an_answer_that_cannot_be_read_fails_the_call_without_waiting() -> None:
    garbled = {"call": {"line": '{"jsonrpc": "2.0", "id": {id}, "result": oops}'}}
    client = _client("garbled", garbled, call_timeout=30)
    started = time.monotonic()
    try:
        with pytest.raises(MCPClientError, match="the server's answer could not be read: it is not JSON"):
            client.call_tool("echo", {})
        assert time.monotonic() - started < 10  # not the 30 s timeout
        assert client.connected  # the session goes on
    finally:
        client.close()
