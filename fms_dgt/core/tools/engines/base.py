"""The :class:`ToolEngine` session API, call policies, validation, and the handler registries.

An engine executes :class:`ToolCall` objects for the tools of a registry. Work happens in
*sessions*: ``setup(session_id)`` opens one, ``execute(session_id, calls)`` runs a batch,
``simulate`` runs a batch and rolls the session state back, ``teardown`` closes it (idempotent).

A failed call is data: :meth:`ToolEngine.execute` always returns one :class:`ToolResult` per call,
in call order, with ``error`` set when the call failed; it never raises because of a call. Around
every call the base class

1. refuses calls whose qualified name matches the ``blocklist`` (names or globs),
2. resolves the overload and validates the arguments (``registry.match``); with
   ``coerce_arguments`` it first repairs common model mistakes (``"10"`` for 10, ``"true"`` for
   true, a bare value for a one-item array) and records them in ``metadata["coerced"]``,
3. runs :meth:`ToolEngine.call` with a per-call ``timeout`` and ``retries`` with exponential
   ``backoff`` for retryable failures (:class:`RetryableError`, timeouts, connection errors),
4. validates the result against ``output_parameters`` (``validate_results``: ``off``, ``warn``
   records the problem in ``metadata["output_validation"]``, ``error`` also fails the call).

Subclasses implement :meth:`ToolEngine.call` for one matched tool.

The process-global **handler registries** take part in the dispatch of the ``multi`` engine:
``register_tool(name, handler)`` for one qualified name and ``register_tool_handler(kind, handler)``
for every tool of a kind (``*`` for any kind). A handler is a callable taking the arguments, an
object with ``execute(arguments)``, or a :class:`ToolEngine`.
"""

from __future__ import annotations

import asyncio
import copy
import fnmatch
import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.schema import InvalidSchemaError, get_validator
from fms_dgt.errors import ConfigError, DGTError

if TYPE_CHECKING:
    from typing import Self

    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = [
    "POLICY_KEYS",
    "CallPolicy",
    "EngineError",
    "RetryableError",
    "ToolEngine",
    "call_handler",
    "clear_tool_handlers",
    "clear_tools",
    "coerce_arguments",
    "get_tool",
    "get_tool_handler",
    "register_tool",
    "register_tool_handler",
    "split_policy",
]

log = logging.getLogger(__name__)


class EngineError(DGTError):
    """Misuse of the session API (unknown session, setup twice)."""


class RetryableError(DGTError):
    """A failure worth retrying (rate limit, temporary outage); engines raise it from ``call``.

    Attributes:
        retry_after: seconds the service asked to wait (HTTP ``Retry-After``), when it said so;
            the retry waits that long (capped by the policy's ``max_retry_after``) instead of the
            exponential backoff.
    """

    def __init__(self, message: str, *, retry_after: float | None = None):
        self.retry_after = retry_after
        super().__init__(message)


_VALIDATE_MODES = ("off", "warn", "error")


@dataclass(slots=True, kw_only=True)
class CallPolicy:
    """What happens around every call of an engine (the ``tools.engines.<name>`` policy keys).

    Attributes:
        timeout: seconds a call may take (None: no limit).
        retries: extra attempts for retryable failures.
        backoff: first retry delay in seconds; doubles each attempt.
        max_calls_per_batch: calls beyond this in one ``execute`` fail without running.
        blocklist: qualified names or globs (``weather_api::*``) that may not be called.
        validate_results: ``off``, ``warn`` or ``error`` for results that violate
            ``output_parameters``.
        coerce_arguments: repair common argument mistakes before validation.
        max_retry_after: longest wait a service's ``Retry-After`` may impose before a retry.
    """

    timeout: float | None = None
    retries: int = 0
    backoff: float = 0.05
    max_calls_per_batch: int | None = None
    blocklist: list[str] = field(default_factory=list)
    validate_results: str = "warn"
    coerce_arguments: bool = False
    max_retry_after: float = 30.0

    def __post_init__(self) -> None:
        if self.validate_results not in _VALIDATE_MODES:
            raise ConfigError(
                f"invalid validate_results {self.validate_results!r}: use one of {', '.join(_VALIDATE_MODES)}"
            )
        if self.retries < 0 or self.backoff < 0 or (self.timeout is not None and self.timeout <= 0):
            raise ConfigError("invalid engine policy: retries, backoff and timeout must be positive")
        if self.max_calls_per_batch is not None and self.max_calls_per_batch < 1:
            raise ConfigError("invalid max_calls_per_batch: it must be at least 1")


#: Config keys every engine accepts (consumed by the base class, not the plug-in).
POLICY_KEYS = tuple(f.name for f in fields(CallPolicy))


# ---------------------------------------------------------------- handler registries

Handler = Any
_NAME_HANDLERS: dict[str, Handler] = {}
_KIND_HANDLERS: dict[str, Handler] = {}
_HANDLERS_LOCK = threading.Lock()


def _check_handler(handler: Handler, what: str) -> None:
    if not (callable(handler) or callable(getattr(handler, "execute", None))):
        raise EngineError(
            f"invalid handler for {what}: give a callable taking the arguments, or an "
            "object with execute(arguments)."
        )


def register_tool(name: str, handler: Handler) -> None:
    """Handle every call of the qualified name ``name`` with ``handler`` (first in dispatch)."""
    _check_handler(handler, name)
    with _HANDLERS_LOCK:
        _NAME_HANDLERS[name] = handler


def get_tool(name: str) -> Handler | None:
    """The handler registered for a qualified name, or None."""
    return _NAME_HANDLERS.get(name)


def clear_tools() -> None:
    """Forget every per-name handler."""
    with _HANDLERS_LOCK:
        _NAME_HANDLERS.clear()


def register_tool_handler(kind: str, handler: Handler) -> None:
    """Handle calls of every tool of ``kind`` (``file``, ``function``, ``mcp``, ``rest``, or ``*``)."""
    _check_handler(handler, f"kind {kind!r}")
    with _HANDLERS_LOCK:
        _KIND_HANDLERS[kind] = handler


def get_tool_handler(kind: str) -> Handler | None:
    """The handler registered for a kind (falling back to ``*``), or None."""
    return _KIND_HANDLERS.get(kind, _KIND_HANDLERS.get("*"))


def clear_tool_handlers() -> None:
    """Forget every per-kind handler."""
    with _HANDLERS_LOCK:
        _KIND_HANDLERS.clear()


# ---------------------------------------------------------------- coercion


def _coerce_value(value: Any, schema: Any) -> tuple[Any, str | None]:
    if not isinstance(schema, dict):
        return value, None
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if isinstance(value, str):
        text = value.strip()
        if "integer" in kinds and _is_int(text):
            return int(text), f"string {value!r} -> integer"
        if "number" in kinds and _is_float(text):
            number = float(text)
            return (
                int(number) if number.is_integer() and "." not in text else number
            ), f"string {value!r} -> number"
        if "boolean" in kinds and text.lower() in ("true", "false"):
            return text.lower() == "true", f"string {value!r} -> boolean"
    if "array" in kinds and not isinstance(value, list) and value is not None:
        item, _ = _coerce_value(value, schema.get("items"))
        return [item], "bare value wrapped in a one-item array"
    return value, None


def _is_int(text: str) -> bool:
    return text.lstrip("+-").isdigit()


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.lower() not in ("nan", "inf", "-inf", "infinity")


def coerce_arguments(
    arguments: Mapping[str, Any], parameters: Mapping[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """Repair common model mistakes in top-level arguments; returns the arguments and notes."""
    props = parameters.get("properties", {})
    out = dict(arguments)
    notes = []
    for name, value in arguments.items():
        fixed, note = _coerce_value(value, props.get(name))
        if note:
            out[name] = fixed
            notes.append(f"{name}: {note}")
    return out, notes


# ---------------------------------------------------------------- the engine


def _accepts(tool: Tool, arguments: Any) -> bool:
    """True when ``arguments`` validate against ``tool``'s input schema (False if it is unusable)."""
    try:
        return get_validator(tool.parameters, tool.fingerprint).is_valid(arguments)
    except InvalidSchemaError:
        return False


class ToolEngine(ABC):
    """Base class of tool engines.

    Args:
        registry: the tools this engine can execute.
        max_workers: size of the pool that runs a batch's calls in parallel.
        policy: call policy (see :class:`CallPolicy`).
    """

    plugin_name: ClassVar[str] = ""
    #: True when :meth:`call` enforces ``policy.timeout`` itself (e.g. by cancelling the request on
    #: the server); otherwise the base class abandons a late call in a worker thread.
    enforces_timeout: ClassVar[bool] = False

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

    # ------------------------------------------------------------------ execution

    def execute(self, session_id: str, calls: Sequence[ToolCall]) -> list[ToolResult]:
        """Run a batch of calls in the session; one result per call, in call order.

        A call without ``call_id`` gets ``call_<position>``. Calls of one batch run in parallel on
        a bounded pool; calls on one session from several threads are serialised per batch.
        """
        with self._session_lock(session_id):
            state = self._state(session_id)
            ids = [c.call_id if c.call_id is not None else f"call_{i}" for i, c in enumerate(calls)]
            limit = self.policy.max_calls_per_batch
            jobs = [
                (c, i, limit is None or n < limit) for n, (c, i) in enumerate(zip(calls, ids, strict=True))
            ]
            if len(calls) <= 1 or self.max_workers <= 1:
                results = [self._guarded(state, c, i, allowed) for c, i, allowed in jobs]
            else:
                pool = self._executor()
                futures = [pool.submit(self._guarded, state, c, i, allowed) for c, i, allowed in jobs]
                results = [f.result() for f in futures]
            # The history is appended in call order (not completion order), so a session's state
            # is the same in every run.
            history = state.setdefault("calls", [])
            for (call, call_id, _), result in zip(jobs, results, strict=True):
                history.append(_history_entry(call, call_id, result))
            return results

    async def execute_async(self, session_id: str, calls: Sequence[ToolCall]) -> list[ToolResult]:
        """Async form of :meth:`execute`."""
        return await asyncio.to_thread(self.execute, session_id, calls)

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

    def _guarded(self, state: dict[str, Any], call: ToolCall, call_id: str, allowed: bool) -> ToolResult:
        if not allowed:
            result = ToolResult(
                call_id,
                call.name,
                error=(
                    f"call refused: the batch exceeds max_calls_per_batch={self.policy.max_calls_per_batch} "
                    f"of engine {self.name!r}. Split the batch or raise the limit."
                ),
            )
        elif self._blocked(call.name):
            result = ToolResult(
                call_id,
                call.name,
                error=(f"call refused: {call.name} is on the blocklist of engine {self.name!r}."),
            )
        else:
            result = self._run(state, call, call_id)
            result.call_id = call_id
        if "engine" not in result.metadata:  # refusals and calls that matched no tool
            overloads = self._overloads(call.name)
            result.metadata["engine"] = self.route_label(overloads[0]) if overloads else self.name
        return result

    def _blocked(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.policy.blocklist)

    def _run(self, state: dict[str, Any], call: ToolCall, call_id: str) -> ToolResult:
        notes: list[str] = []
        try:
            tool = self.registry.match(call)
        except DGTError as exc:
            # Coercion is tried only for arguments that do not validate as they are.
            coerced = self._coerced(call) if self.policy.coerce_arguments else None
            if coerced is None:
                return ToolResult(call_id, call.name, error=str(exc))
            tool, call, notes = coerced
        result = self._attempts(tool, call, state, call_id)
        if notes:
            result.metadata["coerced"] = notes
        if result.error is None:
            self._check_result(tool, result)
        return result

    def _coerced(self, call: ToolCall) -> tuple[Tool, ToolCall, list[str]] | None:
        """The first overload the repaired arguments validate against, the repaired call, and notes."""
        for tool in self._overloads(call.name):
            fixed, notes = coerce_arguments(call.arguments, tool.parameters)
            if notes and _accepts(tool, fixed):
                return tool, ToolCall(call.name, fixed, call.call_id), notes
        return None

    def _overloads(self, name: str) -> list[Tool]:
        try:
            return self.registry.overloads(name)
        except DGTError:
            return []

    def _attempts(self, tool: Tool, call: ToolCall, state: dict[str, Any], call_id: str) -> ToolResult:
        attempt = 0
        while True:
            try:
                result = self._timed(tool, call, state)
            except (RetryableError, TimeoutError, ConnectionError) as exc:
                if attempt < self.policy.retries:
                    time.sleep(self._delay(exc, attempt))
                    attempt += 1
                    continue
                return self._failure(tool, call, call_id, exc, attempt)
            except Exception as exc:  # a failed call is data, never an exception out of execute
                return self._failure(tool, call, call_id, exc, attempt)
            if attempt:
                result.metadata["attempts"] = attempt + 1
            return result

    def _delay(self, exc: BaseException, attempt: int) -> float:
        asked = getattr(exc, "retry_after", None)
        if isinstance(asked, (int, float)) and asked >= 0:
            return min(float(asked), self.policy.max_retry_after)
        return float(self.policy.backoff * (2**attempt))

    def route_label(self, tool: Tool) -> str:
        """The name of what runs ``tool`` here: ``metadata["engine"]`` of every result of ``execute``."""
        return self.name

    def _failure(
        self, tool: Tool, call: ToolCall, call_id: str, exc: BaseException, attempt: int
    ) -> ToolResult:
        label = self.route_label(tool)
        log.warning("tool %s failed on engine %s: %s", call.name, label, exc)
        metadata: dict[str, Any] = {"engine": label}
        if attempt:
            metadata["attempts"] = attempt + 1
        return ToolResult(call_id, call.name, error=f"{type(exc).__name__}: {exc}", metadata=metadata)

    def _timed(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> ToolResult:
        timeout = self.policy.timeout
        if timeout is None or self.enforces_timeout:
            return self.call(tool, call, state)
        future: Future[ToolResult] = self._timeouts().submit(self.call, tool, call, state)
        try:
            return future.result(timeout=timeout)
        except FutureTimeout:
            future.cancel()
            raise TimeoutError(
                f"{call.name} took longer than {timeout:g} s on engine {self.route_label(tool)!r}"
            ) from None

    def _check_result(self, tool: Tool, result: ToolResult) -> None:
        mode = self.policy.validate_results
        if mode == "off" or not tool.output_parameters:
            return
        try:
            reason = tool.output_validator.explain(result.result)
        except InvalidSchemaError as exc:  # the tool's output schema, not its result, is at fault
            reason = str(exc)
        result.metadata["output_validation"] = "ok" if reason is None else reason
        if reason is not None and mode == "error":
            result.error = f"result of {tool.qualified_name} violates its output schema: {reason}"

    @abstractmethod
    def call(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> ToolResult:
        """Execute one call of ``tool`` (already matched and validated) and return its result.

        Raise :class:`RetryableError` for failures worth retrying; any other exception becomes
        ``ToolResult.error``.
        """

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=self.max_workers, thread_name_prefix=f"{self.name}-batch"
                )
            return self._pool

    def _timeouts(self) -> ThreadPoolExecutor:
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


def call_handler(handler: Handler, tool: Tool, call: ToolCall, state: dict[str, Any]) -> ToolResult:
    """Run a registered handler for one call and wrap what it returns as a :class:`ToolResult`."""
    if isinstance(handler, ToolEngine):
        return handler.call(tool, call, state)
    execute = getattr(handler, "execute", None)
    value = execute(dict(call.arguments)) if callable(execute) else handler(dict(call.arguments))
    if isinstance(value, ToolResult):
        return value
    return ToolResult(call.call_id, call.name, result=value)


def split_policy(config: Mapping[str, Any]) -> tuple[CallPolicy, dict[str, Any]]:
    """Separate the policy keys of an engine config from the plug-in's own keys."""
    policy = CallPolicy(**{k: v for k, v in config.items() if k in POLICY_KEYS})
    return policy, {k: v for k, v in config.items() if k not in POLICY_KEYS}
