"""The policy runner: one call of one engine through every step of its call policy.

See :mod:`fms_dgt.core.tools.engines.policy` for the steps. A failure at any step is returned as a
:class:`~fms_dgt.core.tools.data_objects.ToolResult` with ``error`` set and a typed
``metadata["error"]`` (:func:`error_info`); the runner never raises because of a call.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Any

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.engines.policy import CallPolicy, coerce_arguments, fill_defaults, tool_timeout
from fms_dgt.core.tools.schema import InvalidSchemaError, get_validator
from fms_dgt.errors import (
    CacheMissError,
    DGTError,
    HTTPTransportError,
    NoMatchingOverloadError,
    RequestRefusedError,
    ResponseTooLargeError,
    RetryableError,
    ToolNotFoundError,
)
from fms_dgt.secrets import redact

if TYPE_CHECKING:
    from fms_dgt.core.tools.engines.base import ToolEngine

__all__ = ["PENDING", "PolicyRunner", "error_info", "typed_failure"]

log = logging.getLogger(__name__)

#: ``metadata["status"]`` of a call that waits for approval.
PENDING = "pending_approval"
_TOTAL = "total_calls"


def error_info(kind: str, phase: str, **extra: Any) -> dict[str, Any]:
    """The typed error of a failed call: ``{"type", "phase", ...}`` (extra keys only when set)."""
    return {"type": kind, "phase": phase, **{k: v for k, v in extra.items() if v is not None}}


def typed_failure(exc: BaseException) -> dict[str, Any]:
    """The typed error for an exception raised while a call ran.

    A request refused for leaving its declared base, and a call that replay could not answer from
    the cache, are ``policy`` failures; a response past the size cap is a ``transport`` failure
    with its ``limit``.
    """
    if isinstance(exc, TimeoutError) or (isinstance(exc, HTTPTransportError) and exc.timed_out):
        return error_info("timeout", "execution")
    if isinstance(exc, CacheMissError):
        return error_info("policy", "cache")
    if isinstance(exc, RequestRefusedError):
        return error_info("policy", "execution")
    if isinstance(exc, ResponseTooLargeError):
        return error_info("transport", "execution", limit=exc.limit)
    if isinstance(exc, (RetryableError, ConnectionError, HTTPTransportError)):
        return error_info("transport", "execution")
    return error_info("execution", "execution")


class PolicyRunner:
    """Runs calls of one engine under one policy (see :mod:`~fms_dgt.core.tools.engines.policy`).

    Args:
        engine: the engine whose ``call`` runs (and whose registry resolves overloads).
        policy: the policy to apply (the engine's own, possibly merged with a dispatcher's).
        label: the name results carry in ``metadata["engine"]`` (default: the engine's route
            label for the tool).
        cap: an upper bound on every call's timeout (a caller's remaining time budget).
    """

    __slots__ = ("cap", "engine", "label", "policy")

    def __init__(
        self, engine: ToolEngine, policy: CallPolicy, label: str | None = None, cap: float | None = None
    ) -> None:
        self.engine = engine
        self.policy = policy
        self.label = label
        self.cap = cap

    def run(
        self, call: ToolCall, call_id: str, state: dict[str, Any], *, approved: bool = False
    ) -> ToolResult:
        """One call through every step of the policy; a failure is returned as data."""
        overloads = self.engine.overloads_of(call.name)
        label = self._label(overloads[0] if overloads else None)
        refusal = self.policy.refusal(call.name, int(state.get(_TOTAL, 0)))
        if refusal is not None:
            message = f"call refused: {call.name} {refusal} of engine {label!r}."
            return _failed(call_id, call, message, label, error_info("policy", "policy"))
        resolved = self._resolve(call, call_id, label)
        if isinstance(resolved, ToolResult):
            return resolved
        tool, call, notes = resolved
        why = None if approved else self.policy.approval_reason(tool)
        if why is not None:
            return self._hold(tool, call, call_id, state, label, why)
        state[_TOTAL] = int(state.get(_TOTAL, 0)) + 1
        return self._execute(tool, call, call_id, state, notes)

    def _execute(
        self, tool: Tool, call: ToolCall, call_id: str, state: dict[str, Any], notes: list[str]
    ) -> ToolResult:
        filled: list[str] = []
        if self.policy.fill_defaults:
            call, filled = self._defaults(tool, call)
        result = self._answer(tool, call, state, call_id)
        if notes:
            result.metadata["coerced"] = notes
        if filled:
            result.metadata["defaults"] = filled
        if result.error is None:
            self._check_result(tool, result)
        elif "error" not in result.metadata:
            result.metadata["error"] = error_info("execution", "execution")
        result.metadata.setdefault("engine", self._label(tool))
        return result

    def _label(self, tool: Tool | None) -> str:
        if self.label is not None:
            return self.label
        return self.engine.route_label(tool) if tool is not None else self.engine.name

    # ------------------------------------------------------------------ arguments

    def _resolve(
        self, call: ToolCall, call_id: str, label: str
    ) -> tuple[Tool, ToolCall, list[str]] | ToolResult:
        try:
            return self.engine.registry.match(call), call, []
        except DGTError as exc:
            # Coercion is tried only for arguments that do not validate as they are.
            coerced = self._coerced(call) if self.policy.coerce_arguments else None
            if coerced is not None:
                return coerced
            return _failed(call_id, call, str(exc), label, self._invalid(call, exc))

    def _invalid(self, call: ToolCall, exc: DGTError) -> dict[str, Any]:
        if isinstance(exc, ToolNotFoundError):
            return error_info("validation", "lookup")
        path = None
        if isinstance(exc, NoMatchingOverloadError):
            overloads = self.engine.overloads_of(call.name)
            found = _locate(overloads[0], call.arguments) if len(overloads) == 1 else None
            path = found[1] if found else None
        return error_info("validation", "arguments", path=path)

    def _coerced(self, call: ToolCall) -> tuple[Tool, ToolCall, list[str]] | None:
        """The first overload the repaired arguments validate against, the repaired call, and notes."""
        for tool in self.engine.overloads_of(call.name):
            fixed, notes = coerce_arguments(call.arguments, tool.parameters)
            if notes and _accepts(tool, fixed):
                return tool, ToolCall(call.name, fixed, call.call_id), notes
        return None

    def _defaults(self, tool: Tool, call: ToolCall) -> tuple[ToolCall, list[str]]:
        candidate, names = fill_defaults(call.arguments, tool.parameters)
        arguments = dict(call.arguments)
        kept: list[str] = []
        for name in names:  # one at a time: a default that breaks the schema is left out
            trial = {**arguments, name: candidate[name]}
            if _accepts(tool, trial):
                arguments, kept = trial, [*kept, name]
        return (ToolCall(call.name, arguments, call.call_id), kept) if kept else (call, [])

    # ------------------------------------------------------------------ approval

    def _hold(
        self, tool: Tool, call: ToolCall, call_id: str, state: dict[str, Any], label: str, why: str
    ) -> ToolResult:
        if self.policy.approve_destructive == "deny" and "destructiveHint" in why:
            message = f"call refused: {call.name} is destructive ({why}) and engine {label!r} denies those."
            return _failed(call_id, call, message, label, error_info("policy", "approval"))
        state.setdefault("pending", {})[call_id] = {"name": call.name, "arguments": call.arguments}
        pending = {"would_run": {"name": call.name, "arguments": call.arguments}, "why": why}
        return ToolResult(
            call_id, call.name, metadata={"status": PENDING, "pending": pending, "engine": label}
        )

    # ------------------------------------------------------------------ running

    def _answer(self, tool: Tool, call: ToolCall, state: dict[str, Any], call_id: str) -> ToolResult:
        """The call's result: from the engine's cache when it has the answer, else from the
        attempts (recorded when the cache records)."""
        cache = self.engine.call_cache()
        if cache is None:
            return self._attempts(tool, call, state, call_id)
        material = self.engine.cache_material(tool, call, state)
        context = (str(state.get("session_id", "")), call_id)
        try:
            return cache.answer(
                tool, call, context, material, lambda: self._attempts(tool, call, state, call_id)
            )
        except CacheMissError as exc:
            return self._failure(tool, call, call_id, exc, 0)

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
            result.call_id = call_id
            if attempt:
                result.metadata["attempts"] = attempt + 1
            return result

    def _delay(self, exc: BaseException, attempt: int) -> float:
        asked = getattr(exc, "retry_after", None)
        if isinstance(asked, (int, float)) and asked >= 0:
            return min(float(asked), self.policy.max_retry_after)
        return float(self.policy.backoff * (2**attempt))

    def _failure(
        self, tool: Tool, call: ToolCall, call_id: str, exc: BaseException, attempt: int
    ) -> ToolResult:
        label = self._label(tool)
        message = redact(f"{type(exc).__name__}: {exc}")  # an engine's message may quote a secret
        log.warning("tool %s failed on engine %s: %s", call.name, label, message)
        metadata: dict[str, Any] = {"engine": label, "error": typed_failure(exc)}
        code = getattr(exc, "code", None)
        if isinstance(code, int):
            metadata["error"]["code"] = code
        if attempt:
            metadata["attempts"] = attempt + 1
        return ToolResult(call_id, call.name, error=message, metadata=metadata)

    def _timed(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> ToolResult:
        engine = self.engine
        limits = [t for t in (self.policy.timeout, tool_timeout(tool), self.cap) if t is not None]
        timeout = min(limits) if limits else None
        # Bounded in-process work needs no thread to be abandoned, and an engine that enforces
        # timeouts itself (cancelling the request on the server) is given the shortest one: a
        # thread hop per call would cost more than many calls take.
        if timeout is None or engine.bounded:
            return self._limited(tool, call, state)
        if engine.enforces_timeout:
            return self._limited(tool, call, state, timeout)
        future = self._submitted(tool, call, state)
        try:
            return future.result(timeout=timeout)
        except FutureTimeout:
            future.cancel()
            raise TimeoutError(
                f"{call.name} took longer than {timeout:g} s on engine {self._label(tool)!r}"
            ) from None

    def _limited(
        self, tool: Tool, call: ToolCall, state: dict[str, Any], timeout: float | None = None
    ) -> ToolResult:
        slots = self.engine.in_flight
        if slots is None:
            return self._call(tool, call, state, timeout)
        with slots:
            return self._call(tool, call, state, timeout)

    def _call(self, tool: Tool, call: ToolCall, state: dict[str, Any], timeout: float | None) -> ToolResult:
        if timeout is None:
            return self.engine.call(tool, call, state)
        return self.engine.call_within(tool, call, state, timeout)

    def _submitted(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> Future[ToolResult]:
        """The call running on the engine's timeout pool. Its in-flight slot is taken before (so
        waiting for one does not count against the timeout) and given back when the call really
        ends, not when the runner stops waiting for it."""
        slots = self.engine.in_flight
        if slots is not None:
            slots.acquire()
        try:
            future: Future[ToolResult] = self.engine.timeout_pool().submit(
                self.engine.call, tool, call, state
            )
        except BaseException:
            if slots is not None:
                slots.release()
            raise
        if slots is not None:
            future.add_done_callback(lambda _: slots.release())
        return future

    def _check_result(self, tool: Tool, result: ToolResult) -> None:
        mode = self.policy.validate_results
        if mode == "off" or not tool.output_parameters:
            return
        try:
            found = tool.output_validator.locate(result.result)
        except InvalidSchemaError as exc:  # the tool's output schema, not its result, is at fault
            found = (str(exc), "")
        result.metadata["output_validation"] = "ok" if found is None else _reason(found)
        if found is not None and mode == "error":
            result.error = f"result of {tool.qualified_name} violates its output schema: {_reason(found)}"
            result.metadata["error"] = error_info("validation", "result", path=found[1] or None)


def _reason(found: tuple[str, str]) -> str:
    message, pointer = found
    return f"{message} (at {pointer})" if pointer else message


def _failed(call_id: str, call: ToolCall, message: str, label: str, error: dict[str, Any]) -> ToolResult:
    return ToolResult(call_id, call.name, error=message, metadata={"engine": label, "error": error})


def _accepts(tool: Tool, arguments: Any) -> bool:
    """True when ``arguments`` validate against ``tool``'s input schema (False if it is unusable)."""
    try:
        return get_validator(tool.parameters, tool.fingerprint).is_valid(arguments)
    except InvalidSchemaError:
        return False


def _locate(tool: Tool, arguments: Any) -> tuple[str, str] | None:
    try:
        return get_validator(tool.parameters, tool.fingerprint).locate(arguments)
    except InvalidSchemaError:
        return None
