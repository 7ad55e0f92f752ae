"""The :class:`ToolEngine` session API.

An engine executes :class:`ToolCall` objects for the tools of a registry. Work happens in
*sessions*: ``setup(session_id)`` opens one, ``execute(session_id, calls)`` runs a batch,
``simulate`` runs a batch and rolls the session state back, ``teardown`` closes it (idempotent).

A failed call is data: :meth:`ToolEngine.execute` always returns one :class:`ToolResult` per call,
in call order, with ``error`` set when the call failed; it never raises because of a call.
Subclasses implement :meth:`ToolEngine.call` for one resolved tool.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, ClassVar

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.errors import DGTError

if TYPE_CHECKING:
    from typing import Self

    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = ["EngineError", "ToolEngine"]

log = logging.getLogger(__name__)


class EngineError(DGTError):
    """Misuse of the session API (unknown session, setup twice)."""


class ToolEngine(ABC):
    """Base class of tool engines.

    Args:
        registry: the tools this engine can execute.
        max_workers: size of the pool that runs a batch's calls in parallel.
    """

    plugin_name: ClassVar[str] = ""

    def __init__(self, registry: ToolRegistry, *, max_workers: int = 8) -> None:
        self.registry = registry
        self.max_workers = max_workers
        self._sessions: dict[str, dict[str, Any]] = {}
        self._session_locks: dict[str, threading.RLock] = {}
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    # ------------------------------------------------------------------ sessions

    def setup(self, session_id: str) -> None:
        """Open a session.

        Raises:
            EngineError: the session already exists.
        """
        with self._lock:
            if session_id in self._sessions:
                raise EngineError(
                    f"session {session_id!r} already set up on {type(self).__name__}: call "
                    "teardown() first or use a new session id."
                )
            self._sessions[session_id] = self.initial_state(session_id)
            self._session_locks[session_id] = threading.RLock()

    def teardown(self, session_id: str) -> None:
        """Close a session; closing an unknown or closed session does nothing."""
        with self._lock:
            state = self._sessions.pop(session_id, None)
            self._session_locks.pop(session_id, None)
        if state is not None:
            self.on_teardown(session_id, state)

    def get_session_state(self, session_id: str) -> dict[str, Any]:
        """A deep copy of the session's state."""
        return copy.deepcopy(self._state(session_id))

    def _state(self, session_id: str) -> dict[str, Any]:
        state = self._sessions.get(session_id)
        if state is None:
            raise EngineError(f"unknown session {session_id!r} on {type(self).__name__}: call setup() first.")
        return state

    def initial_state(self, session_id: str) -> dict[str, Any]:
        """State of a new session (override to add engine-specific fields)."""
        return {"calls": []}

    def on_teardown(self, session_id: str, state: dict[str, Any]) -> None:  # noqa: B027
        """Hook run when a session closes."""

    # ------------------------------------------------------------------ execution

    def execute(self, session_id: str, calls: Sequence[ToolCall]) -> list[ToolResult]:
        """Run a batch of calls in the session; one result per call, in call order."""
        with self._session_lock(session_id):
            state = self._state(session_id)
            ids = [c.call_id if c.call_id is not None else f"call_{i}" for i, c in enumerate(calls)]
            if len(calls) <= 1 or self.max_workers <= 1:
                return [self._run(state, c, i) for c, i in zip(calls, ids, strict=True)]
            pool = self._executor()
            futures = [pool.submit(self._run, state, c, i) for c, i in zip(calls, ids, strict=True)]
            return [f.result() for f in futures]

    def _session_lock(self, session_id: str) -> threading.RLock:
        lock = self._session_locks.get(session_id)
        if lock is None:
            self._state(session_id)  # raises the unknown-session error
            raise EngineError(f"unknown session {session_id!r}")
        return lock

    async def execute_async(self, session_id: str, calls: Sequence[ToolCall]) -> list[ToolResult]:
        """Async form of :meth:`execute`."""
        return await asyncio.to_thread(self.execute, session_id, calls)

    def simulate(self, session_id: str, calls: Sequence[ToolCall]) -> list[ToolResult]:
        """Run the calls, then restore the session state as it was before."""
        with self._session_lock(session_id):
            before = copy.deepcopy(self._state(session_id))
            try:
                return self.execute(session_id, calls)
            finally:
                self._sessions[session_id] = before

    def _run(self, state: dict[str, Any], call: ToolCall, call_id: str) -> ToolResult:
        try:
            tool = self.registry.match(call)
        except DGTError as exc:
            return ToolResult(call_id, call.name, error=str(exc))
        try:
            result = self.call(tool, call, state)
        except Exception as exc:  # a failed call is data, never an exception out of execute
            log.warning("tool %s failed: %s", call.name, exc)
            return ToolResult(call_id, call.name, error=f"{type(exc).__name__}: {exc}")
        result.call_id = call_id
        state.setdefault("calls", []).append({"call": call.to_dict(), "result": result.to_dict()})
        return result

    @abstractmethod
    def call(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> ToolResult:
        """Execute one call of ``tool`` (already matched and validated) and return its result."""

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self.max_workers)
            return self._pool

    # ------------------------------------------------------------------ lifetime

    def close(self) -> None:
        """Tear down every session and release pools and connections. Idempotent."""
        for session_id in list(self._sessions):
            self.teardown(session_id)
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
