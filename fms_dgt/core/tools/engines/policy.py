"""The call policy: what happens around every call an engine runs, wherever the call came from.

:class:`CallPolicy` holds the settings (the policy keys every engine entry accepts);
:class:`~fms_dgt.core.tools.engines.runner.PolicyRunner` applies them around one engine's ``call``:

1. refuse calls the policy does not allow: the ``blocklist`` (names or globs), ``tool_choice``
   (``none`` or another tool's name) and the session's ``max_total_tool_calls``;
2. resolve the overload and validate the arguments (``registry.match``); with ``coerce_arguments``,
   repair common model mistakes first (``"10"`` for 10, ``"true"`` for true, a bare value for a
   one-item array) and list them in ``metadata["coerced"]``;
3. hold a call that needs approval (``requires_approval``, ``approve_destructive: ask``) as a
   pending result until the engine's ``approve`` or ``deny``;
4. fill schema ``default``s of absent optional arguments (``metadata["defaults"]``);
5. run the engine's ``call`` within a timeout (the shorter of the policy's ``timeout`` and the
   tool's own ``timeout_ms``) and ``retries`` with exponential ``backoff`` for retryable failures
   (:class:`~fms_dgt.errors.RetryableError`, timeouts, connection errors);
6. validate the result against ``output_parameters`` (``validate_results``: ``off``, ``warn`` or
   ``error``).

Two more keys travel in the policy but belong to the engine that owns them, never merged from a
dispatcher (:data:`ENGINE_KEYS`): ``cache``, the record/replay cache of real calls
(:mod:`~fms_dgt.core.tools.engines.cache`), consulted around step 5 (a recorded answer skips the
call, its retries and its timeout), and ``max_in_flight``, the most calls of the engine that run at
once across every session and thread.

A failed call's result carries a typed error in ``metadata["error"]``: ``type`` (``validation``,
``execution``, ``timeout``, ``policy`` or ``transport``), ``phase`` and, where known, ``path`` (the
JSON pointer of an invalid value) and ``code`` (an MCP JSON-RPC code, an HTTP status).

The runner belongs to the engine, not to whoever dispatches to it: a ``multi`` engine routing a
call to an engine runs that engine's runner with the two policies merged
(:meth:`CallPolicy.within`), so a routed engine keeps its retries, timeout, coercion and validation.
"""

from __future__ import annotations

import copy
import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.engines.cache import CacheSettings
from fms_dgt.errors import ConfigError

__all__ = [
    "ENGINE_KEYS",
    "POLICY_KEYS",
    "CallPolicy",
    "coerce_arguments",
    "fill_defaults",
    "split_policy",
    "tool_timeout",
]

_VALIDATE_MODES = ("off", "warn", "error")
_APPROVAL_MODES = ("allow", "ask", "deny")
_CHOICES = ("auto", "none", "required")


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
        max_retry_after: longest wait a service's ``Retry-After`` may impose before a retry,
            and on every call to its host (see :mod:`~fms_dgt.core.tools.backoff`).
        tool_choice: ``auto`` (any tool), ``none`` (no tool may run), ``required`` (as auto for
            an engine; a job reads it as "never write a record without a call") or one
            qualified name (only that tool may run).
        max_total_tool_calls: calls one session may run in all (beyond: refused).
        requires_approval: qualified names or globs whose calls wait for
            ``approve(session, call_id)`` instead of running (a manifest tool may also say
            ``requires_approval: true``).
        approve_destructive: what happens to a tool whose MCP annotations say
            ``destructiveHint: true``: ``allow`` (run it), ``ask`` (wait for approval) or
            ``deny`` (refuse it).
        fill_defaults: give absent optional arguments the ``default`` their schema declares
            before the call (listed in ``metadata["defaults"]``).
        cache: the engine's record/replay cache (``{mode, path}``, or just the mode; see
            :class:`~fms_dgt.core.tools.engines.cache.CacheSettings`). An engine key.
        max_in_flight: the most calls of the engine running at once (None: no limit). An
            engine key.
    """

    timeout: float | None = None
    retries: int = 0
    backoff: float = 0.05
    max_calls_per_batch: int | None = None
    blocklist: list[str] = field(default_factory=list)
    validate_results: str = "warn"
    coerce_arguments: bool = False
    max_retry_after: float = 60.0
    tool_choice: str = "auto"
    max_total_tool_calls: int | None = None
    requires_approval: list[str] = field(default_factory=list)
    approve_destructive: str = "allow"
    fill_defaults: bool = True
    cache: CacheSettings = field(default_factory=CacheSettings)
    max_in_flight: int | None = None

    def __post_init__(self) -> None:
        self.cache = CacheSettings.of(self.cache)
        limit = self.max_in_flight
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise ConfigError(
                f"invalid max_in_flight {limit!r}: expected a whole number of calls, at least 1"
            )
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
        if isinstance(self.requires_approval, str):
            self.requires_approval = [self.requires_approval]
        if not isinstance(self.tool_choice, str) or not self.tool_choice:
            raise ConfigError("invalid tool_choice: use auto, none, required or a qualified tool name")
        if self.approve_destructive not in _APPROVAL_MODES:
            raise ConfigError(
                f"invalid approve_destructive {self.approve_destructive!r}: use allow, ask or deny"
            )
        if self.max_total_tool_calls is not None and self.max_total_tool_calls < 0:
            raise ConfigError("invalid max_total_tool_calls: it must be 0 or more")

    def blocks(self, qualified_name: str) -> bool:
        """True when ``qualified_name`` matches a name or glob of the blocklist."""
        return any(fnmatch.fnmatchcase(qualified_name, pattern) for pattern in self.blocklist)

    def refusal(self, qualified_name: str, calls_so_far: int) -> str | None:
        """Why the policy refuses a call before it runs (blocklist, tool_choice, session limit)."""
        if self.blocks(qualified_name):
            return "is on the blocklist"
        if self.tool_choice == "none":
            return "is not allowed: tool_choice is none"
        if self.tool_choice not in _CHOICES and qualified_name != self.tool_choice:
            return f"is not allowed: tool_choice names only {self.tool_choice}"
        limit = self.max_total_tool_calls
        if limit is not None and calls_so_far >= limit:
            return f"is over the session's max_total_tool_calls={limit}"
        return None

    def approval_reason(self, tool: Tool) -> str | None:
        """Why a call of ``tool`` must wait for approval, or None when it may run."""
        if tool.metadata.get("requires_approval") is True:
            return "the tool's definition says requires_approval"
        if any(fnmatch.fnmatchcase(tool.qualified_name, g) for g in self.requires_approval):
            return "the engine's requires_approval names it"
        if self.approve_destructive != "allow" and _destructive(tool):
            return "its annotations say destructiveHint: true"
        return None

    def within(self, outer: CallPolicy | None) -> CallPolicy:
        """This (an engine's own) policy combined with the policy of an engine dispatching to it.

        Both blocklists refuse; the more careful value of every other key wins: the shorter
        timeout, the more retries (with that side's backoff), coercion if either asks, the
        stricter result validation. The batch limit stays with the dispatcher, which sees batches;
        the engine keys (``cache``, ``max_in_flight``) stay with this engine, which owns them.
        """
        if outer is None:
            return self
        more = self if self.retries >= outer.retries else outer
        strict = max(self.approve_destructive, outer.approve_destructive, key=_APPROVAL_MODES.index)
        return CallPolicy(
            timeout=_shorter(self.timeout, outer.timeout),
            retries=more.retries,
            backoff=more.backoff,
            max_calls_per_batch=outer.max_calls_per_batch,
            blocklist=list(dict.fromkeys([*outer.blocklist, *self.blocklist])),
            validate_results=max(self.validate_results, outer.validate_results, key=_VALIDATE_MODES.index),
            coerce_arguments=self.coerce_arguments or outer.coerce_arguments,
            max_retry_after=max(self.max_retry_after, outer.max_retry_after),
            tool_choice=outer.tool_choice if outer.tool_choice != "auto" else self.tool_choice,
            max_total_tool_calls=_smaller(self.max_total_tool_calls, outer.max_total_tool_calls),
            requires_approval=list(dict.fromkeys([*outer.requires_approval, *self.requires_approval])),
            approve_destructive=strict,
            fill_defaults=self.fill_defaults and outer.fill_defaults,
            cache=self.cache,
            max_in_flight=self.max_in_flight,
        )


def _shorter(a: float | None, b: float | None) -> float | None:
    if a is None:
        return b
    return a if b is None else min(a, b)


def _smaller(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    return a if b is None else min(a, b)


def _destructive(tool: Tool) -> bool:
    annotations = tool.metadata.get("annotations")
    return isinstance(annotations, Mapping) and annotations.get("destructiveHint") is True


def tool_timeout(tool: Tool) -> float | None:
    """The tool's own ``timeout_ms`` (from its manifest) in seconds, or None."""
    value = tool.metadata.get("timeout_ms")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        return None
    return float(value) / 1000.0


def fill_defaults(
    arguments: Mapping[str, Any], parameters: Mapping[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """Absent optional top-level arguments given the ``default`` their schema declares.

    Returns the arguments and the names that were filled; a default is used only when the
    arguments still validate with it (a spec's default may contradict its own schema).
    """
    props = parameters.get("properties")
    if not isinstance(props, Mapping):
        return dict(arguments), []
    required = set(parameters.get("required") or ())
    out = dict(arguments)
    filled = []
    for name, schema in props.items():
        if name not in out and name not in required and isinstance(schema, Mapping) and "default" in schema:
            out[name] = copy.deepcopy(schema["default"])
            filled.append(name)
    return out, filled


#: Config keys of the policy that belong to the engine owning it: not merged from a dispatcher,
#: and not accepted in a job's ``generation.policy``.
ENGINE_KEYS = ("cache", "max_in_flight")
#: Config keys every engine accepts (consumed by the policy, not the plug-in), besides ENGINE_KEYS.
POLICY_KEYS = tuple(f.name for f in fields(CallPolicy) if f.name not in ENGINE_KEYS)


def split_policy(config: Mapping[str, Any]) -> tuple[CallPolicy, dict[str, Any]]:
    """Separate the policy and engine keys of an engine config from the plug-in's own keys."""
    keys = (*POLICY_KEYS, *ENGINE_KEYS)
    policy = CallPolicy(**{k: v for k, v in config.items() if k in keys})
    return policy, {k: v for k, v in config.items() if k not in keys}


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
