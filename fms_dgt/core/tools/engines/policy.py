"""The call policy: what happens around every call an engine runs, wherever the call came from.

:class:`CallPolicy` holds the settings (the policy keys every engine entry accepts) and
:class:`PolicyRunner` applies them around one engine's ``call``:

1. refuse calls whose qualified name matches the ``blocklist`` (names or globs);
2. resolve the overload and validate the arguments (``registry.match``); with ``coerce_arguments``,
   repair common model mistakes first (``"10"`` for 10, ``"true"`` for true, a bare value for a
   one-item array) and list them in ``metadata["coerced"]``;
3. run the engine's ``call`` with a ``timeout`` and ``retries`` with exponential ``backoff`` for
   retryable failures (:class:`~fms_dgt.errors.RetryableError`, timeouts, connection errors);
4. validate the result against ``output_parameters`` (``validate_results``: ``off``, ``warn`` or
   ``error``).

The runner belongs to the engine, not to whoever dispatches to it: a ``multi`` engine routing a
call to an engine runs that engine's runner with the two policies merged
(:meth:`CallPolicy.within`), so a routed engine keeps its retries, timeout, coercion and validation.
"""

from __future__ import annotations

import fnmatch
import logging
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.schema import InvalidSchemaError, get_validator
from fms_dgt.errors import ConfigError, DGTError, RetryableError

if TYPE_CHECKING:
    from fms_dgt.core.tools.engines.base import ToolEngine

__all__ = ["POLICY_KEYS", "CallPolicy", "PolicyRunner", "coerce_arguments", "split_policy"]

log = logging.getLogger(__name__)

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
        if isinstance(self.blocklist, str):
            self.blocklist = [self.blocklist]

    def blocks(self, qualified_name: str) -> bool:
        """True when ``qualified_name`` matches a name or glob of the blocklist."""
        return any(fnmatch.fnmatchcase(qualified_name, pattern) for pattern in self.blocklist)

    def within(self, outer: CallPolicy | None) -> CallPolicy:
        """This (an engine's own) policy combined with the policy of an engine dispatching to it.

        Both blocklists refuse; the more careful value of every other key wins: the shorter
        timeout, the more retries (with that side's backoff), coercion if either asks, the
        stricter result validation. The batch limit stays with the dispatcher, which sees batches.
        """
        if outer is None:
            return self
        more = self if self.retries >= outer.retries else outer
        return CallPolicy(
            timeout=_shorter(self.timeout, outer.timeout),
            retries=more.retries,
            backoff=more.backoff,
            max_calls_per_batch=outer.max_calls_per_batch,
            blocklist=list(dict.fromkeys([*outer.blocklist, *self.blocklist])),
            validate_results=max(self.validate_results, outer.validate_results, key=_VALIDATE_MODES.index),
            coerce_arguments=self.coerce_arguments or outer.coerce_arguments,
            max_retry_after=max(self.max_retry_after, outer.max_retry_after),
        )


def _shorter(a: float | None, b: float | None) -> float | None:
    if a is None:
        return b
    return a if b is None else min(a, b)


#: Config keys every engine accepts (consumed by the policy, not the plug-in).
POLICY_KEYS = tuple(f.name for f in fields(CallPolicy))


def split_policy(config: Mapping[str, Any]) -> tuple[CallPolicy, dict[str, Any]]:
    """Separate the policy keys of an engine config from the plug-in's own keys."""
    policy = CallPolicy(**{k: v for k, v in config.items() if k in POLICY_KEYS})
    return policy, {k: v for k, v in config.items() if k not in POLICY_KEYS}


# ---------------------------------------------------------------- coercion


def _coerce_value(value: Any, schema: Any) -> tuple[Any, str | None]:
    if not isinstance(schema, dict):
        return value, None
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if isinstance(value, str):
        fixed = _coerce_text(value, kinds)
        if fixed is not None:
            return fixed
    if "array" in kinds and not isinstance(value, list) and value is not None:
        item, _ = _coerce_value(value, schema.get("items"))
        return [item], "bare value wrapped in a one-item array"
    return value, None


def _coerce_text(value: str, kinds: Sequence[Any]) -> tuple[Any, str] | None:
    text = value.strip()
    if "integer" in kinds and _is_int(text):
        return int(text), f"string {value!r} -> integer"
    if "number" in kinds and _is_float(text):
        number = float(text)
        exact = number.is_integer() and "." not in text
        return (int(number) if exact else number), f"string {value!r} -> number"
    if "boolean" in kinds and text.lower() in ("true", "false"):
        return text.lower() == "true", f"string {value!r} -> boolean"
    return None


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


# ---------------------------------------------------------------- the runner


def _accepts(tool: Tool, arguments: Any) -> bool:
    """True when ``arguments`` validate against ``tool``'s input schema (False if it is unusable)."""
    try:
        return get_validator(tool.parameters, tool.fingerprint).is_valid(arguments)
    except InvalidSchemaError:
        return False


class PolicyRunner:
    """Runs calls of one engine under one policy (see the module docstring).

    Args:
        engine: the engine whose ``call`` runs (and whose registry resolves overloads).
        policy: the policy to apply (the engine's own, possibly merged with a dispatcher's).
        label: the name results carry in ``metadata["engine"]`` (default: the engine's route
            label for the tool).
    """

    __slots__ = ("engine", "label", "policy")

    def __init__(self, engine: ToolEngine, policy: CallPolicy, label: str | None = None) -> None:
        self.engine = engine
        self.policy = policy
        self.label = label

    def run(self, call: ToolCall, call_id: str, state: dict[str, Any]) -> ToolResult:
        """One call through every step of the policy; a failure is returned as data."""
        overloads = self.engine.overloads_of(call.name)
        label = self._label(overloads[0] if overloads else None)
        if self.policy.blocks(call.name):
            refusal = f"call refused: {call.name} is on the blocklist of engine {label!r}."
            return ToolResult(call_id, call.name, error=refusal, metadata={"engine": label})
        notes: list[str] = []
        try:
            tool = self.engine.registry.match(call)
        except DGTError as exc:
            # Coercion is tried only for arguments that do not validate as they are.
            coerced = self._coerced(call) if self.policy.coerce_arguments else None
            if coerced is None:
                return ToolResult(call_id, call.name, error=str(exc), metadata={"engine": label})
            tool, call, notes = coerced
        result = self._attempts(tool, call, state, call_id)
        if notes:
            result.metadata["coerced"] = notes
        if result.error is None:
            self._check_result(tool, result)
        result.metadata.setdefault("engine", self._label(tool))
        return result

    def _label(self, tool: Tool | None) -> str:
        if self.label is not None:
            return self.label
        return self.engine.route_label(tool) if tool is not None else self.engine.name

    def _coerced(self, call: ToolCall) -> tuple[Tool, ToolCall, list[str]] | None:
        """The first overload the repaired arguments validate against, the repaired call, and notes."""
        for tool in self.engine.overloads_of(call.name):
            fixed, notes = coerce_arguments(call.arguments, tool.parameters)
            if notes and _accepts(tool, fixed):
                return tool, ToolCall(call.name, fixed, call.call_id), notes
        return None

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
        log.warning("tool %s failed on engine %s: %s", call.name, label, exc)
        metadata: dict[str, Any] = {"engine": label}
        if attempt:
            metadata["attempts"] = attempt + 1
        return ToolResult(call_id, call.name, error=f"{type(exc).__name__}: {exc}", metadata=metadata)

    def _timed(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> ToolResult:
        timeout = self.policy.timeout
        engine = self.engine
        # An engine that enforces its own timeout (cancelling the request on the server) does so
        # with its own policy's value; a shorter one imposed by a dispatcher is enforced here.
        if timeout is None or (engine.enforces_timeout and timeout == engine.policy.timeout):
            return engine.call(tool, call, state)
        future: Future[ToolResult] = engine.timeout_pool().submit(engine.call, tool, call, state)
        try:
            return future.result(timeout=timeout)
        except FutureTimeout:
            future.cancel()
            raise TimeoutError(
                f"{call.name} took longer than {timeout:g} s on engine {self._label(tool)!r}"
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
