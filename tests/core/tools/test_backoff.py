"""Tests of the back-off shared per host (fms_dgt/core/tools/backoff.py), on a real loopback server."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from pathlib import Path

import pytest
from support.rest_server import ServerState, serve

from fms_dgt.core.tools.backoff import HOSTS, HostBackoff, retry_after_seconds
from fms_dgt.core.tools.data_objects import ToolCall
from fms_dgt.core.tools.engines.base import CallPolicy
from fms_dgt.core.tools.engines.http import HTTPToolEngine
from fms_dgt.core.tools.loaders.file import FileToolLoader
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.core.tools.transport import Sender, parse_base

HOST = ("http", "example.test", 80)


@pytest.fixture(autouse=True)
def fresh_hosts() -> Iterator[None]:
    HOSTS.clear()
    yield
    HOSTS.clear()


@pytest.fixture
def server() -> Iterator[ServerState]:
    with serve() as state:
        yield state


def test_retry_after_header_parsing() -> None:
    assert retry_after_seconds("7") == 7.0
    assert retry_after_seconds(None) is None and retry_after_seconds("soon") is None
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past: now
    later = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=30), usegmt=True)
    assert 28 <= (retry_after_seconds(later) or 0) <= 30


def test_pauses_grow_never_shrink_and_are_capped() -> None:
    gate = HostBackoff()
    assert gate.observe(HOST, 429, "2", cap=60, backoff=0.1) == 2.0
    assert gate.observe(HOST, 429, "1", cap=60, backoff=0.1) == 1.0
    assert 1.9 < gate.remaining(HOST) <= 2.0  # the longer pause stands
    assert gate.observe(HOST, 429, "3600", cap=5, backoff=0.1) == 5.0
    assert 4.9 < gate.remaining(HOST) <= 5.0
    other = ("http", "example.test", 8080)
    assert gate.remaining(other) == 0.0  # another port is another host
    assert gate.observe(other, 429, None, cap=60, backoff=0.25) == 0.25  # no header: the backoff
    assert gate.observe(other, 503, None, cap=60, backoff=0.25) == 0.0  # a bare 503 pauses nothing
    assert gate.observe(other, 503, "4", cap=60, backoff=0.25) == 4.0
    assert gate.observe(other, 500, "4", cap=60, backoff=0.25) == 0.0


def test_a_sender_waits_out_a_pause_of_its_host_before_sending(server: ServerState) -> None:
    base = parse_base(server.base_url)
    server.limited, server.retry_after = 1, "1"
    with_cap = Sender(timeout=5, max_retry_after=0.5)
    first = with_cap.send("GET", f"{server.base_url}/limited", base)
    second = with_cap.send("GET", f"{server.base_url}/limited", base)
    with_cap.close()
    assert (first.status, second.status) == (429, 200)
    # capped at the sender's max_retry_after, and not counted in the exchange's time
    assert 0.45 < server.arrivals[1] - server.limited_at[0] < 0.9
    assert second.elapsed_ms < 400


def _limited_registry(tmp_path: Path, base_url: str) -> ToolRegistry:
    manifest = {
        "apiVersion": "tools.fms-dgt/v1",
        "kind": "Tool",
        "metadata": {"name": "limited", "namespace": "api"},
        "spec": {
            "description": "A rate-limited endpoint.",
            "input_schema": {"type": "object", "properties": {"n": {"type": "integer"}}},
            "mode": "live",
            "http": {"url": f"{base_url}/limited", "method": "GET"},
        },
    }
    (tmp_path / "tools.json").write_text(json.dumps([manifest]))
    return ToolRegistry(loaders=[FileToolLoader(tmp_path / "tools.json")])


def test_a_429_holds_every_thread_calling_that_host(server: ServerState, tmp_path: Path) -> None:
    registry = _limited_registry(tmp_path, server.base_url)
    policy = CallPolicy(retries=3, backoff=0.01)
    results: list[bool] = []
    with HTTPToolEngine(registry, policy=policy) as engine:
        engine.setup("warm")  # the first call pays for imports and the connection pool
        assert engine.execute("warm", [ToolCall("api::limited", {})])[0].ok
        server.limited, server.retry_after = 3, "1"  # the next two requests are refused

        def worker(n: int) -> None:
            time.sleep(0.1 * n)  # staggered: without a shared pause most would arrive too early
            engine.setup(f"s{n}")
            for k in range(2):
                [result] = engine.execute(f"s{n}", [ToolCall("api::limited", {"n": k})])
                results.append(result.ok)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(results) == 16 and all(results)
    assert len(server.limited_at) == 2 and len(server.arrivals) == 1 + 16 + 2
    # Nothing arrives between a 429 and the end of its Retry-After (bar requests already on the
    # wire when the 429 went out, which land within milliseconds).
    for refused in server.limited_at:
        early = [t - refused for t in server.arrivals if refused + 0.15 < t < refused + 1.0]
        assert early == [], f"requests arrived {early} s after a 429 asking for 1 s"
    assert max(server.arrivals) - server.limited_at[0] >= 1.0
