"""The event-loop bridge: one asyncio loop on a daemon thread, shared by every MCP operation.

The SDK is async (anyio) and its sessions are bound to the loop that opened them. Every MCP
operation of the package runs on **one** background loop (:func:`get_bridge`). Sync callers submit
coroutines to it and wait for the result, so the same code works from a plain script, from many
threads at once, and from inside a running event loop (a Jupyter cell, an async test): the
caller's loop is never used and ``asyncio.run`` is never called per operation. Async callers
await the bridge without blocking their loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from fms_dgt.errors import DGTError

__all__ = ["EventLoopBridge", "get_bridge"]

T = TypeVar("T")


class EventLoopBridge:
    """One asyncio event loop on a daemon thread, shared by every MCP operation.

    Sync callers use :meth:`run`; async callers use :meth:`run_async`. Coroutines always run on the
    bridge's loop, so SDK sessions (whose anyio task groups are bound to one loop) can be used from
    any thread and from inside another running loop.
    """

    def __init__(self, name: str = "fms_dgt-mcp-loop") -> None:
        self._name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The bridge's loop, started on first use."""
        with self._lock:
            loop, thread = self._loop, self._thread
            if loop is None or thread is None or not thread.is_alive():
                loop = self._start()
            return loop

    def _start(self) -> asyncio.AbstractEventLoop:
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        thread = threading.Thread(target=self._serve, args=(loop, ready), name=self._name, daemon=True)
        thread.start()
        ready.wait()
        self._loop, self._thread = loop, thread
        return loop

    @staticmethod
    def _serve(loop: asyncio.AbstractEventLoop, ready: threading.Event) -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set)
        loop.run_forever()

    def in_bridge_thread(self) -> bool:
        """True when called from the bridge's own thread (where blocking would deadlock)."""
        return self._thread is not None and threading.current_thread() is self._thread

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the bridge loop and return a thread-safe future."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the bridge loop and wait for its result (from any thread but the bridge's).

        Raises:
            DGTError: called from the bridge thread itself (use the async API there).
            TimeoutError: the result did not arrive within ``timeout`` (the coroutine is cancelled).
        """
        if self.in_bridge_thread():
            coro.close()
            raise DGTError(
                "blocking MCP call on the MCP event-loop thread: it would deadlock. Call the *_async "
                "method instead, or move the work to another thread"
            )
        future = self.submit(coro)
        # wait() rather than result(timeout): the coroutine's own TimeoutError subclasses must
        # pass through unchanged, and concurrent.futures.TimeoutError is TimeoutError on 3.11+.
        done, _ = concurrent.futures.wait([future], timeout)
        if not done:
            future.cancel()
            raise TimeoutError(f"no result from the MCP event loop within {timeout} s")
        return future.result()

    async def run_async(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` on the bridge loop without blocking the caller's loop."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            return await coro
        return await asyncio.wrap_future(self.submit(coro))


_BRIDGE = EventLoopBridge()


def get_bridge() -> EventLoopBridge:
    """The process-wide bridge every :class:`MCPClient` uses by default."""
    return _BRIDGE
