"""Tests of fms_dgt/core/tools/mcp/bridge.py: the one background event loop."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from fms_dgt.core.tools.mcp import EventLoopBridge, get_bridge
from fms_dgt.errors import DGTError


def test_bridge_refuses_to_block_its_own_thread() -> None:
    bridge = get_bridge()

    async def nested() -> str:
        try:
            bridge.run(asyncio.sleep(0))
        except DGTError as exc:
            return str(exc)
        return "no error"

    assert "would deadlock" in bridge.run(nested())


def test_every_caller_runs_on_the_one_loop_thread() -> None:
    bridge = EventLoopBridge("test-bridge")

    async def where() -> str:
        return threading.current_thread().name

    with ThreadPoolExecutor(max_workers=4) as pool:
        names = set(pool.map(lambda _: bridge.run(where()), range(16)))
    assert names == {"test-bridge"}


@pytest.mark.anyio
async def test_async_callers_await_the_bridge_without_blocking_their_loop() -> None:
    bridge = EventLoopBridge("test-bridge-async")

    async def slow() -> str:
        await asyncio.sleep(0.2)
        return threading.current_thread().name

    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        for _ in range(5):
            await asyncio.sleep(0.02)
            ticks += 1

    name, _ = await asyncio.gather(bridge.run_async(slow()), ticker())
    assert name == "test-bridge-async" and ticks == 5


def test_a_result_that_does_not_arrive_in_time_is_a_timeout() -> None:
    with pytest.raises(TimeoutError, match="no result from the MCP event loop"):
        get_bridge().run(asyncio.sleep(5), timeout=0.1)
