"""Tests of fms_dgt/core/tools/mcp/stdio.py: process groups, stderr, long and unreadable lines.

The servers are real subprocesses: our SDK test server and ``tests/support/hostile_mcp_server.py``.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.mcp_harness import REPO, hostile_kwargs, wait_until

from fms_dgt.core.tools.mcp import MCPClient, MCPClientError, MCPServerSpec, clear_connections
from fms_dgt.core.tools.mcp.guard import UnreadableMessage
from fms_dgt.core.tools.mcp.stdio import (
    STDERR_KEEP,
    STDERR_LINES_PER_WINDOW,
    LineReader,
    StderrLog,
    live_groups,
    parse_line,
)


@pytest.fixture(autouse=True)
def _empty_registry() -> Iterator[None]:
    yield
    clear_connections()


def _hostile(name: str, scenario: dict[str, Any], **extra: Any) -> MCPClient:
    kwargs = hostile_kwargs(scenario)
    spec = MCPServerSpec(name=name, command=kwargs["command"], args=tuple(kwargs["args"]), **extra)
    return MCPClient(spec)


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie is dead: here nothing may ever reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def _grandchild(path: Path) -> int:
    assert wait_until(lambda: path.exists() and path.read_text().strip() != ""), "no grandchild pid"
    return int(path.read_text())


# --------------------------------------------------------------------------- process groups


@pytest.mark.parametrize("keeps_pipes", [False, True])
def test_a_servers_children_are_gone_after_close(tmp_path: Path, keeps_pipes: bool) -> None:
    pidfile = tmp_path / "grandchild.pid"
    scenario = {"grandchild": str(pidfile), "grandchild_keeps_pipes": keeps_pipes}
    client = _hostile("parent", scenario)
    client.call_tool("echo", {})
    pid = _grandchild(pidfile)
    assert _alive(pid)
    started = time.monotonic()
    client.close()
    # The server exits on EOF by itself: only ending its group takes its child with it.
    assert wait_until(lambda: not _alive(pid), timeout=10), f"grandchild {pid} outlived close()"
    assert time.monotonic() - started < 8  # a child holding the pipes does not hang close()
    assert client.spec.name not in str(live_groups())


def test_children_left_by_a_dead_server_are_ended_at_exit(tmp_path: Path) -> None:
    # The server dies mid-call (its session is dead, nobody closes it), its child keeps running:
    # the interpreter's exit must still end the group.
    pidfile = tmp_path / "grandchild.pid"
    scenario = {"grandchild": str(pidfile), "call": {"exit": 1}}
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(REPO / "tests")!r})
        from support.mcp_harness import hostile_kwargs
        from fms_dgt.core.tools.mcp import MCPClient, MCPClientError, MCPServerSpec
        kwargs = hostile_kwargs({scenario!r})
        client = MCPClient(MCPServerSpec(name="dies", command=kwargs["command"], args=tuple(kwargs["args"])))
        try:
            client.call_tool("echo", {{}})
        except MCPClientError:
            print("lost", flush=True)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert "lost" in done.stdout, done.stderr
    pid = _grandchild(pidfile)
    assert wait_until(lambda: not _alive(pid), timeout=10), f"grandchild {pid} outlived the interpreter"


def test_a_server_killed_with_its_group_is_restarted(tmp_path: Path) -> None:
    client = _hostile("regroup", {})
    try:
        client.call_tool("echo", {})
        [group] = [g for g in live_groups() if g == _server_pid(client)]
        os.killpg(group, 9)
        assert wait_until(lambda: not client.connected)
        assert client.call_tool("echo", {"again": 1})["structuredContent"] == {"echo": {"again": 1}}
        assert client.connects == 2
    finally:
        client.close()


def _server_pid(client: MCPClient) -> int:
    session = client._session
    assert session is not None and session.guard.process is not None
    return session.guard.process.pid


# --------------------------------------------------------------------------- stderr


def test_megabytes_on_stderr_stay_bounded(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="fms_dgt.core.tools.mcp.stdio")
    client = _hostile("chatty", {"stderr_bytes": 8 * 1024 * 1024})
    try:
        assert client.call_tool("echo", {"x": 1})["structuredContent"] == {"echo": {"x": 1}}
        process = client._session.guard.process  # type: ignore[union-attr]
        assert process is not None
        assert wait_until(lambda: process.stderr.total >= 8 * 1024 * 1024), "stderr was not read to its end"
        assert len(process.stderr._tail) <= STDERR_KEEP
    finally:
        client.close()
    lines = [r for r in caplog.records if "chatty stderr:" in r.getMessage()]
    assert 0 < len(lines) <= STDERR_LINES_PER_WINDOW
    assert all(len(r.getMessage()) < 700 for r in lines)
    assert any("were not logged" in r.getMessage() for r in caplog.records)
    assert len(capfd.readouterr().err) < 100_000  # nothing reached the terminal directly


def test_a_server_that_dies_at_start_says_why() -> None:
    spec = MCPServerSpec(
        name="crash",
        command=sys.executable,
        args=("-c", "import sys; sys.stderr.write('No module named weather\\n'); sys.exit(7)"),
        connect_timeout=10,
    )
    with pytest.raises(MCPClientError) as info:
        MCPClient(spec).connect()
    message = str(info.value)
    assert "MCP connect failed for server 'crash' (stdio)" in message
    assert "exited with code 7" in message and "No module named weather" in message


def test_stderr_log_keeps_the_tail_and_cuts_long_lines(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="fms_dgt.core.tools.mcp.stdio")
    log = StderrLog("s", keep=100)
    log.feed(b"a" * 5000 + b"\nsecond line\n" + b"b" * 150)
    log.close()
    assert log.total == 5000 + 13 + 150
    assert len(log.text(limit=10_000)) <= 100 and log.text().endswith("b" * 50)
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0].endswith("...") and len(messages[0]) < 600
    assert "s stderr: second line" in messages[1] and messages[2].endswith("b" * 150)


# --------------------------------------------------------------------------- stdout lines


def test_line_reader_splits_messages_across_chunks() -> None:
    reader = LineReader(limit=10_000)
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {}}).encode()
    assert reader.feed(line[:10]) == []
    [first] = reader.feed(line[10:] + b"\n\n" + line[:5])
    assert first.message.id == 1
    [second] = reader.feed(line[5:] + b"\n")
    assert second.message.id == 1


def test_a_line_over_the_limit_is_dropped_naming_its_request() -> None:
    reader = LineReader(limit=1024)
    head = b'{"jsonrpc": "2.0", "id": 42, "result": {"pad": "'
    items = reader.feed(head + b"z" * 3000)
    assert items == [] and len(reader._buffer) == 0  # nothing of the long line is held
    [item] = reader.feed(b"z" * 3000 + b'"}}\n')
    assert isinstance(item, UnreadableMessage)
    assert item.request_id == 42 and item.size == len(head) + 6000 + 3
    assert "over max_message_bytes (1024)" in item.reason


_ENVELOPE = b'{"jsonrpc":"2.0","id":%d,"result":'


@pytest.mark.parametrize(
    ("line", "reason", "request_id"),
    [
        (b"Starting server on stdio...", "it is not JSON", None),
        (b'{"jsonrpc": "2.0", "id": 7, "result": nope}', "it is not JSON", 7),
        (b'{"jsonrpc": "2.0", "id": "a", "result": []}', "it is not a JSON-RPC message", "a"),
        (b"\xff\xfe garbage", "it is not UTF-8", None),
        (_ENVELOPE % 3 + b"[" * 5000 + b"]" * 5000 + b"}", "nested more than", 3),
        (_ENVELOPE % 4 + b'{"a":' * 300 + b"1" + b"}" * 300 + b"}", "nested more than", 4),
    ],
)
def test_unreadable_lines_say_why(line: bytes, reason: str, request_id: object) -> None:
    item = parse_line(line)
    assert isinstance(item, UnreadableMessage)
    assert reason in item.reason and item.request_id == request_id
