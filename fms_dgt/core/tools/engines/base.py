"""The :class:`ToolEngine` session API.

An engine executes :class:`ToolCall` objects for the tools of a registry. Work happens in
*sessions*: ``setup(session_id)`` opens one, ``execute(session_id, calls)`` runs a batch,
``simulate`` runs a batch and rolls the session state back, ``teardown`` closes it (idempotent).

A failed call is data: :meth:`ToolEngine.execute` always returns one :class:`ToolResult` per call,
in call order, with ``error`` set when the call failed; it never raises because of a call. Every
call runs under the engine's :class:`~fms_dgt.core.tools.engines.policy.CallPolicy` (blocklist,
argument validation and coercion, timeout, retries, result validation), applied by a
:class:`~fms_dgt.core.tools.engines.policy.PolicyRunner`; an engine that dispatches to another
(``multi``) runs the other engine's runner, so the policy travels with the engine that owns it.

Two settings belong to the engine itself (:data:`~fms_dgt.core.tools.engines.policy.ENGINE_KEYS`):
``max_in_flight`` caps the calls of the engine running at once, across every session and thread
(:meth:`ToolEngine.in_flight`), and ``cache`` records and replays its answers
(:meth:`ToolEngine.call_cache`, :mod:`~fms_dgt.core.tools.engines.cache`).

Subclasses implement :meth:`ToolEngine.call` for one matched tool.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.engines.cache import CallCache
from fms_dgt.core.tools.engines.handlers import (
    clear_name_handlers,
    clear_tool_handlers,
    clear_tools,
    get_name_handler,
    get_tool,
    get_tool_handler,
    register_name_handler,
    register_tool,
    register_tool_handler,
)
from fms_dgt.core.tools.engines.policy import (
    ENGINE_KEYS,
    POLICY_KEYS,
    CallPolicy,
    coerce_arguments,
    split_policy,
)
from fms_dgt.core.tools.engines.runner import PolicyRunner, error_info
from fms_dgt.errors import ConfigError, DGTError, EngineError, RetryableError

if TYPE_CHECKING:
    from typing import Self

    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = [
    "ENGINE_KEYS",
    "POLICY_KEYS",
    "CallPolicy",
    "EngineError",
    "RetryableError",
    "ToolEngine",
    "clear_name_handlers",
    "clear_tool_handlers",
    "clear_tools",
    "coerce_arguments",
    "get_name_handler",
    "get_tool",
    "get_tool_handler",
    "register_name_handler",
    "register_tool",
    "register_tool_handler",
    "split_policy",
]


class ToolEngine(ABC):
    """Base class of tool engines.

    Args:
        registry: the tools this engine can execute.
        max_workers: size of the pool that runs a batch's calls in parallel.
        policy: call policy (see :class:`~fms_dgt.core.tools.engines.policy.CallPolicy`).
    """

    plugin_name: ClassVar[str] = ""
    #: True when :meth:`call` enforces ``policy.timeout`` itself (e.g. by cancelling the request on
    #: the server), and :meth:`call_within` any other timeout; otherwise the policy runner abandons
    #: a late call in a worker thread.
    enforces_timeout: ClassVar[bool] = False
    #: True when :meth:`call` is bounded in-process work that cannot wait on anything (the mock
    #: engine's synthesis is size-capped): it runs on the caller's thread, with no timeout thread.
    bounded: ClassVar[bool] = False
    #: Config keys accepted besides the constructor's (the policy and engine keys, see
    #: :meth:`prepare_config`).
    extra_config_keys: ClassVar[tuple[str, ...]] = (*POLICY_KEYS, *ENGINE_KEYS)
    #: Constructor arguments that are not config keys.
    internal_config_keys: ClassVar[tuple[str, ...]] = ("policy",)

    def __init__(
        self, registry: ToolRegistry, *, max_workers: int = 8, policy: CallPolicy | None = None
    ) -> None:
        self.registry = registry
        self.max_workers = max_workers
        self.policy = policy or CallPolicy()
        self._sessions: dict[str, dict[str, Any]] = {}
        self._session_locks: dict[str, threading.RLock] = {}
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._timeout_pool: ThreadPoolExecutor | None = None
        limit = self.policy.max_in_flight
        self._slots = threading.BoundedSemaphore(limit) if limit is not None else None
        self._cache: CallCache | None = None
        self._cache_place: tuple[str, Path, Path] | None = None
        self._cache_lock = threading.Lock()

    @classmethod
    def prepare_config(cls, settings: Mapping[str, Any]) -> dict[str, Any]:
        """Constructor arguments from a YAML entry: the policy and engine keys become ``policy``.

        A key that is both a policy key and a constructor argument goes to both.

        Raises:
            ConfigError: a policy value is invalid.
        """
        own = accepted_parameters(cls)
        given = settings.get("policy")
        if given is not None and not isinstance(given, (Mapping, CallPolicy)):
            raise ConfigError("invalid policy: expected a mapping of policy keys")
        policy_keys = dict(given) if isinstance(given, Mapping) else {}
        keys = (*POLICY_KEYS, *ENGINE_KEYS)
        policy_keys.update({k: v for k, v in settings.items() if k in keys})
        kwargs = {k: v for k, v in settings.items() if k != "policy" and (k not in keys or k in own)}
        kwargs["policy"] = given if isinstance(given, CallPolicy) else CallPolicy(**policy_keys)
        return kwargs

    @property
    def name(self) -> str:
        """The registered name, or the class name."""
        return self.plugin_name or type(self).__name__

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

    async def setup_async(self, session_id: str) -> None:
        """Async form of :meth:`setup`."""
        await asyncio.to_thread(self.setup, session_id)

    async def teardown_async(self, session_id: str) -> None:
        """Async form of :meth:`teardown`."""
        await asyncio.to_thread(self.teardown, session_id)

    def get_session_state(self, session_id: str) -> dict[str, Any]:
        """A deep copy of the session's state."""
        with self._session_lock(session_id):
            return copy.deepcopy(self._state(session_id))

    def _state(self, session_id: str) -> dict[str, Any]:
        state = self._sessions.get(session_id)
        if state is None:
            raise EngineError(f"unknown session {session_id!r} on {type(self).__name__}: call setup() first.")
        return state

    def _session_lock(self, session_id: str) -> threading.RLock:
        lock = self._session_locks.get(session_id)
        if lock is None:
            raise EngineError(f"unknown session {session_id!r} on {type(self).__name__}: call setup() first.")
        return lock

    def initial_state(self, session_id: str) -> dict[str, Any]:
        """State of a new session (override to add engine-specific fields)."""
        return {"session_id": session_id, "calls": []}

    def on_teardown(self, session_id: str, state: dict[str, Any]) -> None:  # noqa: B027
        """Hook run when a session closes."""

    def prefer_isolation(self, mode: str) -> None:  # noqa: B027
        """Isolation to use where the config does not say (``per_record`` when a job writes
        records); only engines over stateful servers act on it."""

    # ------------------------------------------------------------------ execution

    def execute(
        self, session_id: str, calls: Sequence[ToolCall], *, timeout: float | None = None
    ) -> list[ToolResult]:
        """Run a batch of calls in the session; one result per call, in call order.

        A call without ``call_id`` gets ``call_<position>``. Calls of one batch run in parallel on
        a bounded pool; calls on one session from several threads are serialised per batch.
        ``timeout`` caps every call's timeout for this batch (a caller's time budget).
        """
        with self._session_lock(session_id):
            state = self._state(session_id)
            ids = [c.call_id if c.call_id is not None else f"call_{i}" for i, c in enumerate(calls)]
            limit = self.policy.max_calls_per_batch
            jobs = [
                (c, i, limit is None or n < limit) for n, (c, i) in enumerate(zip(calls, ids, strict=True))
            ]
            if len(calls) <= 1 or self.max_workers <= 1 or self.runs_inline(calls):
                results = [self._guarded(state, c, i, allowed, timeout) for c, i, allowed in jobs]
            else:
                pool = self._executor()
                futures = [
                    pool.submit(self._guarded, state, c, i, allowed, timeout) for c, i, allowed in jobs
                ]
                results = [f.result() for f in futures]
            # The history is appended in call order (not completion order), so a session's state
            # is the same in every run.
            history = state.setdefault("calls", [])
            for (call, call_id, _), result in zip(jobs, results, strict=True):
                history.append(_history_entry(call, call_id, result))
            return results

    def runs_inline(self, calls: Sequence[ToolCall]) -> bool:
        """True when a batch gains nothing from the pool: every call is bounded in-process work
        (:attr:`bounded`), which threads would only take turns at."""
        return self.bounded

    async def execute_async(
        self, session_id: str, calls: Sequence[ToolCall], *, timeout: float | None = None
    ) -> list[ToolResult]:
        """Async form of :meth:`execute`."""
        return await asyncio.to_thread(self.execute, session_id, calls, timeout=timeout)

    def simulate(self, session_id: str, calls: Sequence[ToolCall]) -> list[ToolResult]:
        """Run the calls, then restore the session state as it was before.

        Holds the session's lock throughout, so a concurrent :meth:`execute` on the same session
        runs before or after, never interleaved with the rollback.
        """
        with self._session_lock(session_id):
            before = copy.deepcopy(self._state(session_id))
            try:
                return self.execute(session_id, calls)
            finally:
                self._sessions[session_id] = before

    async def simulate_async(self, session_id: str, calls: Sequence[ToolCall]) -> list[ToolResult]:
        """Async form of :meth:`simulate`."""
        return await asyncio.to_thread(self.simulate, session_id, calls)

    def _guarded(
        self, state: dict[str, Any], call: ToolCall, call_id: str, allowed: bool, cap: float | None = None
    ) -> ToolResult:
        if allowed:
            return self.run_call(call, call_id, state, timeout_cap=cap)
        overloads = self.overloads_of(call.name)
        return ToolResult(
            call_id,
            call.name,
            error=(
                f"call refused: the batch exceeds max_calls_per_batch={self.policy.max_calls_per_batch} "
                f"of engine {self.name!r}. Split the batch or raise the limit."
            ),
            metadata={"engine": self.route_label(overloads[0]) if overloads else self.name},
        )

    def run_call(
        self,
        call: ToolCall,
        call_id: str,
        state: dict[str, Any],
        *,
        outer: CallPolicy | None = None,
        label: str | None = None,
        timeout_cap: float | None = None,
    ) -> ToolResult:
        """Run one call under this engine's policy (merged with ``outer``, a dispatcher's).

        Args:
            call: the call.
            call_id: the id its result carries.
            state: the session state this engine keeps for the call's session.
            outer: the policy of an engine that dispatched the call here, if any.
            label: what ``metadata["engine"]`` of the result says (default: this engine's label).
            timeout_cap: an upper bound on the call's timeout (a caller's remaining time budget).
        """
        runner = PolicyRunner(self, self.policy.within(outer), label, timeout_cap)
        result: ToolResult = runner.run(call, call_id, state)
        return result

    # ------------------------------------------------------------------ approval

    def pending(self, session_id: str) -> dict[str, dict[str, Any]]:
        """Calls of the session waiting for approval: call id -> ``{name, arguments}``."""
        with self._session_lock(session_id):
            return copy.deepcopy(self._state(session_id).get("pending", {}))

    def approve(self, session_id: str, call_id: str) -> ToolResult:
        """Run a call that waited for approval and return its result (it joins the history).

        Raises:
            EngineError: no call of that id waits in the session.
        """
        with self._session_lock(session_id):
            state = self._state(session_id)
            engine, policy, held, label = self.approval_target(state, call_id)
            call = self._take_pending(held, session_id, call_id)
            result = PolicyRunner(engine, policy, label).run(call, call_id, held, approved=True)
            result.metadata["approval"] = "approved"
            state.setdefault("calls", []).append(_history_entry(call, call_id, result))
            return result

    def deny(self, session_id: str, call_id: str, reason: str = "the user declined") -> ToolResult:
        """Drop a call that waited for approval; its result is a policy failure saying why.

        Raises:
            EngineError: no call of that id waits in the session.
        """
        with self._session_lock(session_id):
            state = self._state(session_id)
            engine, _, held, label = self.approval_target(state, call_id)
            call = self._take_pending(held, session_id, call_id)
            result = ToolResult(
                call_id,
                call.name,
                error=f"call not run: approval denied ({reason}).",
                metadata={
                    "engine": label or engine.name,
                    "approval": "denied",
                    "error": error_info("policy", "approval"),
                },
            )
            state.setdefault("calls", []).append(_history_entry(call, call_id, result))
            return result

    async def approve_async(self, session_id: str, call_id: str) -> ToolResult:
        """Async form of :meth:`approve`."""
        return await asyncio.to_thread(self.approve, session_id, call_id)

    async def deny_async(
        self, session_id: str, call_id: str, reason: str = "the user declined"
    ) -> ToolResult:
        """Async form of :meth:`deny`."""
        return await asyncio.to_thread(self.deny, session_id, call_id, reason)

    def approval_target(
        self, state: dict[str, Any], call_id: str
    ) -> tuple[ToolEngine, CallPolicy, dict[str, Any], str | None]:
        """Where the call ``call_id`` waits: the engine that holds it, the policy it runs under
        once approved, the state that holds it, and the label its result carries. A dispatching
        engine (``multi``) answers for the engines it routed the call to."""
        return self, self.policy, state, None

    def _take_pending(self, state: dict[str, Any], session_id: str, call_id: str) -> ToolCall:
        waiting = state.get("pending", {})
        if call_id not in waiting:
            raise EngineError(
                f"no call {call_id!r} waits for approval in session {session_id!r} on {self.name!r}: "
                f"waiting are {', '.join(sorted(waiting)) or 'none'}."
            )
        entry = waiting.pop(call_id)
        return ToolCall(entry["name"], entry["arguments"], call_id)

    def overloads_of(self, name: str) -> list[Tool]:
        """The registry's overloads of a qualified name (none when the name is unknown)."""
        try:
            return self.registry.overloads(name)
        except DGTError:
            return []

    def route_label(self, tool: Tool) -> str:
        """The name of what runs ``tool`` here: ``metadata["engine"]`` of every result of ``execute``."""
        return self.name

    # ------------------------------------------------------------------ limits and the call cache

    @property
    def in_flight(self) -> threading.BoundedSemaphore | None:
        """The slots of ``max_in_flight`` (None without a limit): the policy runner holds one
        for every ``call`` of this engine, from its start until it really ends."""
        return self._slots

    def place_cache(self, name: str, *, base_dir: str | Path, cache_dir: str | Path) -> None:
        """Say where the record/replay cache lives; call it before the first call.

        ``cache.path`` resolves against ``base_dir`` (the config's folder); without a path the
        cache is ``<cache_dir>/calls/<name>``. An engine never placed uses its plug-in name, the
        working directory and ``$DGT_CACHE_DIR`` (else ``.cache``).
        """
        with self._cache_lock:
            self._cache_place = (name, Path(base_dir), Path(cache_dir))
            cache, self._cache = self._cache, None
        if cache is not None:
            cache.close()

    def call_cache(self) -> CallCache | None:
        """The engine's record/replay cache (opened on first use), or None when it is off."""
        settings = self.policy.cache
        if not settings.enabled:
            return None
        with self._cache_lock:
            if self._cache is None:
                name, base_dir, cache_dir = self._cache_place or _default_place(self.name)
                folder = settings.folder(name, base_dir=base_dir, cache_dir=cache_dir)
                self._cache = CallCache(folder, mode=settings.mode, engine=name)
            return self._cache

    def cache_material(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> dict[str, Any]:
        """What, besides the tool and the arguments, changes this engine's answer to a call.

        Part of the call's cache key; an engine whose answers depend on more than the arguments
        (the ``lm`` engine: the model and its prompt) overrides this. Never put credentials here.
        """
        return {}

    @abstractmethod
    def call(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> ToolResult:
        """Execute one call of ``tool`` (already matched and validated) and return its result.

        Raise :class:`~fms_dgt.errors.RetryableError` for failures worth retrying; any other
        exception becomes ``ToolResult.error``.
        """

    def call_within(self, tool: Tool, call: ToolCall, state: dict[str, Any], timeout: float) -> ToolResult:
        """Execute one call that must answer within ``timeout`` seconds.

        Only called on an engine that :attr:`enforces_timeout` (the runner then waits on the
        caller's thread, with no worker thread to abandon a late call); such an engine overrides
        it to enforce ``timeout``, which may be shorter than its policy's (a caller's time budget,
        the tool's ``timeout_ms``). The default runs :meth:`call`.
        """
        return self.call(tool, call, state)

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=self.max_workers, thread_name_prefix=f"{self.name}-batch"
                )
            return self._pool

    def timeout_pool(self) -> ThreadPoolExecutor:
        """The pool that runs calls the policy runner may abandon when they time out."""
        with self._lock:
            if self._timeout_pool is None:
                self._timeout_pool = ThreadPoolExecutor(
                    max_workers=max(2, self.max_workers), thread_name_prefix=f"{self.name}-call"
                )
            return self._timeout_pool

    # ------------------------------------------------------------------ lifetime

    def close(self) -> None:
        """Tear down every session and release pools and connections. Idempotent."""
        for session_id in list(self._sessions):
            self.teardown(session_id)
        with self._lock:
            pools = [self._pool, self._timeout_pool]
            self._pool = self._timeout_pool = None
        for pool in pools:
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
        with self._cache_lock:
            cache = self._cache
        if cache is not None:
            cache.close()

    async def close_async(self) -> None:
        """Async form of :meth:`close`."""
        await asyncio.to_thread(self.close)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close_async()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _history_entry(call: ToolCall, call_id: str, result: ToolResult) -> dict[str, Any]:
    # Entries share the call's and result's values (no deep copy on the hot path);
    # get_session_state() hands out deep copies.
    return {
        "call": {"name": call.name, "arguments": call.arguments, "call_id": call_id},
        "result": {"result": result.result, "error": result.error},
    }


def _default_place(name: str) -> tuple[str, Path, Path]:
    cwd = Path.cwd()
    return name, cwd, cwd / (os.environ.get("DGT_CACHE_DIR") or ".cache")


def accepted_parameters(cls: type) -> set[str]:
    """The keyword parameters of ``cls``'s constructor."""
    return set(inspect.signature(cls.__init__).parameters) - {"self"}  # type: ignore[misc]
