"""Tests of fms_dgt/core/tools/mcp/pool.py against the demo notebook server as a real subprocess."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fms_dgt.core.tools.mcp import MCPClient, MCPClientError, MCPServerSpec
from fms_dgt.core.tools.mcp.pool import ClientPool, Lease

DEMO = Path(__file__).resolve().parents[4] / "data" / "mcp"


def _spec(name: str) -> MCPServerSpec:
    return MCPServerSpec(name=name, command=sys.executable, args=("demo_server.py",), cwd=str(DEMO))


@pytest.fixture(scope="module")
def base() -> Iterator[MCPClient]:
    """The loader's client a pool starts from (one server process for the module's tests)."""
    client = MCPClient(_spec("pool-tests")).acquire()
    yield client
    client.release()


@pytest.fixture
def pool(base: MCPClient) -> Iterator[ClientPool]:
    base.call_tool("reset", {})  # each test starts from an empty notebook
    pool = ClientPool(base, "reset", patience=5.0)
    yield pool
    pool.close()


def _notes(lease: Lease) -> list[str]:
    return list(lease.client.call_tool("list_notes", {})["structuredContent"]["result"])


def _in_thread(target: Any) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: out.update(value=target()), daemon=True)
    thread.start()
    return thread, out


def test_read_only_sessions_share_one_clean_client(pool: ClientPool, base: MCPClient) -> None:
    first, second = pool.lease(shared=True), pool.lease(shared=True)
    assert first.client is second.client is base and first.shared and second.shared
    assert _notes(first) == _notes(second) == []
    pool.give_back(first)
    pool.give_back(second)
    assert pool.clients == 1 and pool.resets == 0


def test_a_writer_waits_for_the_readers_and_new_readers_wait_for_it(pool: ClientPool) -> None:
    reader = pool.lease(shared=True)
    writer_thread, writer = _in_thread(lambda: pool.lease())
    time.sleep(0.3)
    assert "value" not in writer, "the writer took a client a reader still uses"
    late_thread, late = _in_thread(lambda: pool.lease(shared=True))
    time.sleep(0.3)
    assert "value" not in late, "a reader joined while a writer waited"
    pool.give_back(reader)
    writer_thread.join(5)
    own: Lease = writer["value"]
    assert not own.shared
    own.client.call_tool("add_note", {"text": "mine"})
    own.dirty = True
    assert _notes(own) == ["mine"]
    pool.give_back(own)
    late_thread.join(5)
    # The late reader gets the same server, reset first: it never sees the writer's note.
    assert _notes(late["value"]) == [] and pool.resets == 1 and pool.clients == 1
    pool.give_back(late["value"])


def test_a_clean_exclusive_lease_needs_no_reset(pool: ClientPool) -> None:
    own = pool.lease()
    assert _notes(own) == []
    pool.give_back(own)
    again = pool.lease(shared=True)
    pool.give_back(again)
    assert pool.resets == 0


def test_a_session_that_waits_past_its_patience_opens_another_client(base: MCPClient) -> None:
    pool = ClientPool(base, "reset", patience=0.2)
    try:
        held = pool.lease()
        started = time.monotonic()
        other = pool.lease()
        assert time.monotonic() - started >= 0.2
        assert other.client is not held.client and pool.clients == 2
        assert _notes(other) == []  # a server of its own, clean from the start
        pool.give_back(held)
        pool.give_back(other)
    finally:
        pool.close()
    assert not other.client.connected  # the pool closes the clients it opened


def test_without_a_reset_tool_a_dirty_client_is_replaced(base: MCPClient) -> None:
    pool = ClientPool(base, None)
    try:
        own = pool.lease()
        own.dirty = True
        pool.give_back(own)
        fresh = pool.lease(shared=True)
        assert fresh.client is not base and pool.restarts == 1 and base.connected
        assert _notes(fresh) == []
        pool.give_back(fresh)
    finally:
        pool.close()


def test_a_failing_reset_tool_is_an_error_that_names_the_tool(base: MCPClient) -> None:
    pool = ClientPool(base, "no_such_tool", patience=0.2)
    own = pool.lease()
    own.dirty = True
    pool.give_back(own)
    with pytest.raises(MCPClientError, match="no_such_tool"):
        pool.lease()
    assert pool.clients == 0  # the server that cannot be made clean is out of the pool
    pool.close()
    assert base.connected  # the loader's client stays with its owner


def test_many_threads_never_see_each_others_notes(pool: ClientPool) -> None:
    seen: list[list[str]] = []

    def record(i: int) -> None:
        writes = i % 3 == 0
        lease = pool.lease(shared=not writes)
        try:
            if writes:
                lease.client.call_tool("add_note", {"text": f"n{i}"})
                lease.dirty = True
            seen.append(_notes(lease))
        finally:
            pool.give_back(lease)

    threads = [threading.Thread(target=record, args=(i,)) for i in range(24)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(seen) == 24
    assert sorted(map(tuple, seen)) == sorted([(f"n{i}",) if i % 3 == 0 else () for i in range(24)])
    assert pool.clients == 1
