"""Executing one planned record: arguments, wiring, calls, approvals, failures, the time budget.

For each step of the plan, every call's arguments are made (values the record already fixed are
reused; an argument fed by an earlier call's output along a dataflow edge takes that output's value
when it validates), the step runs through the engine in the record's own session (set up and torn
down here, so no call sees another record's state), and results land in the plan.

* A call that waits for approval (the engine's policy says so) becomes a confirmation exchange: the
  user approves it with probability ``approval_rate`` (the engine then runs it) or declines it (the
  record ends after that step, the assistant acknowledging).
* A failed call rejects the record (``on_call_error: reject``, the default) with the call's error,
  or is kept as an error-handling example (``keep``): the record ends after that step and says so.
* Over ``record_time_budget`` the record is rejected with that reason.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import re
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from fms_dgt.core.tools.artifacts import MISSING, leaf_name, read_path
from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.fakes import tokens
from fms_dgt.core.tools.schema import get_validator
from fms_dgt.core.tools.schema.choices import described_choices
from fms_dgt.core.tools.synth import is_filler
from fms_dgt.databuilders.tool_calling.agreement import AGREEING, agree, same_weather
from fms_dgt.databuilders.tool_calling.plan import CALLS, PlannedCall, RecordPlan, Wire
from fms_dgt.databuilders.tool_calling.values import EntityContext, arguments
from fms_dgt.databuilders.tool_calling.wiring import worded
from fms_dgt.databuilders.tool_calling.wording import humanize, plain_name, singular
from fms_dgt.errors import DGTError, RejectedRecord

if TYPE_CHECKING:
    from fms_dgt.core.tools.engines.base import ToolEngine
    from fms_dgt.databuilders.tool_calling.config import GenerationConfig
    from fms_dgt.databuilders.tool_calling.planner import Feed, PlannedRecord

__all__ = ["RecordExecutor", "call_id", "read_output"]

_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
#: Each byte value's character (``_ALPHABET[byte % 62]``), for ``bytes.translate``.
_CHARACTERS = bytes(ord(_ALPHABET[b % len(_ALPHABET)]) for b in range(256))


def call_id(seed: int, index: int, position: int) -> str:
    """A call id of 9 letters and digits (what every provider and chat template accepts),
    the same for the same run seed, record and position in every process."""
    digest = hashlib.sha256(f"{seed}:{index}:{position}".encode()).digest()
    return digest[:9].translate(_CHARACTERS).decode("ascii")


def read_output(result: ToolResult | None, path: str) -> Any:
    """The value at ``path`` (an edge's output path) of a successful result, or
    :data:`~fms_dgt.core.tools.artifacts.MISSING` when there is none."""
    if result is None or result.error is not None or result.pending:
        return MISSING
    return read_path(result.result, path)


class RecordExecutor:
    """Runs planned records through one engine (see the module docstring).

    Args:
        engine: the job's engine (a ``multi`` engine dispatching every call).
        settings: the run's ``generation:`` settings.
    """

    def __init__(self, engine: ToolEngine, settings: GenerationConfig) -> None:
        self.engine = engine
        self.settings = settings
        self._validators: dict[tuple[str, str], Any] = {}

    def run(self, planned: PlannedRecord, rng: random.Random, timing: dict[str, float]) -> EntityContext:
        """Execute every step of ``planned.plan`` in a session of its own; returns the record's
        entity context (its values, for the quality report).

        Raises:
            RejectedRecord: arguments cannot be made, a call failed under ``on_call_error: reject``,
                or the record went over its time budget.
        """
        plan = planned.plan
        context = EntityContext.for_record(self.settings.seed, plan.index)
        if plan.kind != CALLS:
            self._state(plan, context, rng)
            return context
        session = f"{self.settings.seed}-{plan.index}"
        deadline = time.monotonic() + self.settings.record_time_budget
        self.engine.setup(session)
        try:
            done: dict[int, ToolResult] = {}
            for step, positions in enumerate(planned.levels):
                calls = self._calls(planned, positions, done, context, rng, timing, deadline)
                earlier = [c for c in plan.calls if c.result is not None and c.result.ok]
                self._execute(session, calls, rng, timing, deadline, earlier)
                plan.steps[step] = calls
                for call in calls:  # a created order's id, a found user: later calls reuse them
                    if call.result is not None and call.result.ok:
                        context.learn(call.tool, call.result.result)
                done.update(
                    (p, c.result) for p, c in zip(positions, calls, strict=True) if c.result is not None
                )
                if self._stops(plan.index, calls):
                    plan.steps = plan.steps[: step + 1]
                    break
        finally:
            self.engine.teardown(session)
        plan.context = context.values()
        return context

    def _state(self, plan: RecordPlan, context: EntityContext, rng: random.Random) -> None:
        """The values a no-call record's user states (nothing runs)."""
        tool = plan.missing[0] if plan.missing is not None else plan.topic
        if tool is not None:
            made = self._arguments(tool, context, rng, {})
            left_out = plan.missing[1] if plan.missing is not None else None
            plan.stated = {k: v for k, v in made.items() if k != left_out}
        plan.context = context.values()

    def _calls(
        self,
        planned: PlannedRecord,
        positions: Sequence[int],
        done: Mapping[int, ToolResult],
        context: EntityContext,
        rng: random.Random,
        timing: dict[str, float],
        deadline: float,
    ) -> list[PlannedCall]:
        _check_budget(deadline, self.settings.record_time_budget, "before its next step")
        started = time.perf_counter()
        calls = []
        for position in positions:
            tool = planned.sample.tools[position]
            wired, fixed = self._wired(planned, tool, planned.feeds.get(position, []), done, context)
            made = self._arguments(tool, context, rng, fixed)
            given = {k: v for k, v in made.items() if k not in wired}
            call = ToolCall(
                tool.qualified_name, made, call_id(self.settings.seed, planned.plan.index, position)
            )
            calls.append(PlannedCall(tool=tool, call=call, given=given, wired=wired))
        timing["arguments"] += time.perf_counter() - started
        return calls

    def _arguments(
        self, tool: Tool, context: EntityContext, rng: random.Random, fixed: Mapping[str, Any]
    ) -> dict[str, Any]:
        try:
            return arguments(tool, context, rng, fixed=fixed)
        except DGTError as exc:
            raise RejectedRecord(
                f"cannot make arguments for {tool.qualified_name}: {exc}", reason="arguments"
            ) from exc

    def _wired(
        self,
        planned: PlannedRecord,
        tool: Tool,
        feeds: Sequence[Feed],
        done: Mapping[int, ToolResult],
        context: EntityContext,
    ) -> tuple[dict[str, Wire], dict[str, Any]]:
        """Arguments fed by earlier results that validate where they go: names and values.

        Where several results feed one argument, the first that agrees with the record's calls so
        far wins: two calls of one step may have found different ids (a listing's first pet, the
        pet looked up), and the record keeps the one its own calls used.
        """
        props: Mapping[str, Any] = tool.parameters.get("properties") or {}
        found: dict[str, list[tuple[Any, Wire]]] = {}
        for source, output, target in feeds:
            value = read_output(done.get(source), output)
            if value is MISSING or target not in props:
                continue
            if context.apart(planned.sample.tools[source], output, tool, target):
                continue
            if is_filler(value):
                continue  # a placeholder is handed on to no call (a meeting's topic 'signal-683')
            if isinstance(value, bool):
                # A yes or no in a result is a fact to read, not a value to hand on: "once you
                # have the live and local of the first one, show videos" is no request a person
                # makes, and a restaurant's special offer is no password's special characters.
                continue
            if isinstance(value, Mapping) and _head(output) != _head(target):
                continue  # an object is one thing: a playlist element is no video
            if isinstance(value, str) and set(tokens(target)[-1:]) & _WORDS and _SENTENCE.search(value):
                continue  # a transcript is no keyword: "Can we move our call?" looked up in a dictionary
            kind = context.kind(tool, target)
            if isinstance(value, int | float) and worded(kind, props[target]):
                continue  # a number (a quotient with no type said) is no name of anything
            if (
                isinstance(value, str)
                and kind is not None
                and kind.family == "number"
                and not _NUMBER.match(value)
            ):
                continue  # nor are words a number: a price alert's message was a weight of paper
            # Checked against the argument's own schema inside the tool's (it may use the tool's $defs);
            # one value for a list argument is passed as a list of one (a run's dag_id -> dag_ids).
            fits = _fits(self._validators, tool, target, value)
            counted = isinstance(value, int | float) and not target.lower().endswith("ids")
            if not fits and not isinstance(value, list) and not counted:
                # (a number alone is no list of numbers to add up: the largest of [29.85] is no
                # question; a video's id 42 is one of videoIds)
                value = [value]
                fits = _fits(self._validators, tool, target, value)
            if fits:
                echoes = _echoed(value, output, done[source], planned.plan.calls)
                wire = Wire(planned.sample.tools[source].qualified_name, output, echoes)
                found.setdefault(target, []).append((value, wire))
        wired: dict[str, Wire] = {}
        fixed: dict[str, Any] = {}
        others = 0
        for target, candidates in found.items():
            value, wire = _agreeing_feed(candidates, tool, target, planned.plan.calls, context)
            if any((w == wire or fixed[t] == value) and _opposite(t, target) for t, w in wired.items()):
                continue  # one airport is no flight's origin and destination both, one price no range
            if not set(tokens(target)[-1:]) & _NAMES_A_THING:
                others += 1
                if others > _MOST_OTHERS:
                    # what names the thing is taken whole (a task instance's dag, run, task and
                    # map index); of the rest a person hands on a value or two, not "the pool,
                    # execution date, start date, end date, queue, duration and created date"
                    continue
            fixed[target], wired[target] = value, wire
        return wired, fixed

    def _execute(
        self,
        session: str,
        calls: list[PlannedCall],
        rng: random.Random,
        timing: dict[str, float],
        deadline: float,
        earlier: Sequence[PlannedCall] = (),
    ) -> None:
        remaining = _check_budget(deadline, self.settings.record_time_budget, "building arguments")
        started = time.perf_counter()
        results = self.engine.execute(session, [c.call for c in calls], timeout=remaining)
        for planned, result in zip(calls, results, strict=True):
            planned.result = _result_agreeing(planned, self._settle(session, planned, result, rng), earlier)
        timing["execution"] += time.perf_counter() - started
        _check_budget(deadline, self.settings.record_time_budget, "waiting for its calls")

    def _settle(
        self, session: str, planned: PlannedCall, result: ToolResult, rng: random.Random
    ) -> ToolResult:
        """A pending result becomes the user's decision: approved (run) or declined."""
        if not result.pending:
            return result
        call_id_ = planned.call.call_id or ""
        if rng.random() < self.settings.approval_rate:
            planned.approval = "approved"
            return self.engine.approve(session, call_id_)
        planned.approval = "declined"
        return self.engine.deny(session, call_id_, "the user declined")

    def _stops(self, index: int, calls: Sequence[PlannedCall]) -> bool:
        """True when the record ends after these calls (a decline, or a failure kept as an example)."""
        failed = [c for c in calls if c.failed]
        if failed and self.settings.on_call_error == "reject":
            first = failed[0]
            raise RejectedRecord(
                f"call error: {first.call.name}: {first.result.error if first.result else ''}",
                reason="call_error",
                call=first.failure(),
            )
        return bool(failed) or any(c.approval == "declined" for c in calls)


def _result_agreeing(planned: PlannedCall, result: ToolResult, earlier: Sequence[PlannedCall]) -> ToolResult:
    """A simulated result brought to agree with earlier results on the entities they share
    (:mod:`~fms_dgt.databuilders.tool_calling.agreement`) and on the weather of one place; the
    fields changed are in ``metadata["agreed"]``. A real result, or an agreed value the output
    schema refuses, is kept."""
    if not earlier or not result.ok or result.metadata.get("mock") not in AGREEING:
        return result
    arguments = planned.call.arguments
    results = [c.result.result for c in earlier if c.result is not None]
    value, changed = agree(result.result, results, arguments)
    tool = planned.tool
    pairs = [(c.call.arguments, c.result.result) for c in earlier if c.result is not None]
    value, weather = same_weather(value, pairs, arguments, tool.output_parameters)
    if not changed and not weather:
        return result
    if tool.output_parameters and not tool.output_validator.is_valid(value):
        return result
    agreed = {**result.metadata, "agreed": changed + weather}
    return dataclasses.replace(result, result=value, metadata=agreed)


def _agreeing_feed(
    candidates: Sequence[tuple[Any, Wire]],
    tool: Tool,
    name: str,
    made: Sequence[PlannedCall],
    context: EntityContext,
) -> tuple[Any, Wire]:
    """The first candidate value of argument ``name`` no call made so far disagrees with."""
    if len(candidates) == 1:
        return candidates[0]
    return next(
        (c for c in candidates if not context.conflicts([*made, (tool, {name: c[0]})])), candidates[0]
    )


def _echoed(value: Any, output: str, result: ToolResult, made: Sequence[PlannedCall]) -> str:
    """The argument of an earlier call that already took ``value`` (the call behind ``result``
    first, then the others, latest first), else ``""``: the value was in the conversation before
    the result gave it (a forecast answers the city it was asked for; a pet created, looked up by
    its id and then deleted was named by the lookup).

    A string of two letters or more, a fraction, a number past 100 or one read from an output
    named like the argument counts; a small whole number or a flag may agree by chance (a
    listing's count of 2 is no echo of ``limit: 2``)."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return ""
    source = [c for c in made if c.call.call_id == result.call_id]
    leaf = plain_name(leaf_name(output))
    telling = len(value) >= 2 if isinstance(value, str) else isinstance(value, float) or abs(value) > 100
    for call in [*source, *(c for c in reversed(made) if c.call.call_id != result.call_id)]:
        for name, given in call.call.arguments.items():
            if isinstance(given, list) and len(given) == 1:
                given = given[0]
            if isinstance(given, bool) or given != value or type(given) is not type(value):
                continue
            if telling or plain_name(name) == leaf:
                return name
    return ""


#: Argument names that name the thing a call acts on, and how many other wires one call takes.
_NAMES_A_THING = frozenset({"id", "ids", "uuid", "key", "index", "name", "handle", "slug", "symbol"})
_MOST_OTHERS = 2
#: Inputs that take a word or a few, and what makes a value a sentence instead (five words or
#: more, or a sentence's closing mark).
_WORDS = frozenset({"keyword", "keywords", "word", "words", "term", "terms", "tag", "tags", "hashtag"})
_SENTENCE = re.compile(r"(?:\S+\s+){4}\S|[.?!]\s*$")


def _head(name: str) -> str:
    """The last word of an output's or argument's name, as of one thing (``videoPlaylistElement``
    -> "element", ``data[]`` -> "data")."""
    words = humanize(leaf_name(name)).lower().split()
    return singular(words[-1]) if words else ""


#: Words that make two arguments of one kind opposite ends of something (origin and destination).
_ENDS = (
    frozenset(
        {"origin", "from", "source", "departure", "start", "min", "sender", "src", "begin", "gte", "gt"}
        | {"after", "since", "lower", "earliest"}
    ),
    frozenset(
        {"destination", "to", "target", "arrival", "end", "max", "recipient", "dest", "finish", "lte", "lt"}
        | {"before", "until", "upper", "latest"}
    ),
)


def _opposite(one: str, other: str) -> bool:
    """Whether two argument names are the two ends of one thing (``originSkyId`` and
    ``destinationSkyId``, ``from_date`` and ``to_date``, ``start_date_gte`` and ``start_date_lte``)
    or two of a pair (``cityA`` and ``cityB``, ``team1`` and ``team2``)."""
    mine, theirs = tokens(one), tokens(other)
    low, high = _ENDS
    if (set(mine) & low and set(theirs) & high) or (set(mine) & high and set(theirs) & low):
        return True
    return len(mine) == len(theirs) > 1 and mine[:-1] == theirs[:-1] and {mine[-1], theirs[-1]} in _PAIRED


#: Last words that number the members of a pair.
_PAIRED = ({"a", "b"}, {"1", "2"}, {"first", "second"}, {"one", "two"})


def _fits(validators: dict[tuple[str, str], Any], tool: Tool, name: str, value: Any) -> bool:
    """True when ``value`` validates as ``tool``'s argument ``name`` (its schema may use $defs)."""
    key = (tool.fingerprint, name)
    validator = validators.get(key)
    if validator is None:
        schema = tool.parameters
        alone = {**schema, "properties": {name: schema["properties"][name]}, "required": []}
        alone.pop("additionalProperties", None)
        validator = validators[key] = get_validator(alone)
    try:
        valid = bool(validator.is_valid({name: value}))
    except DGTError:
        return False
    own = tool.parameters["properties"][name]
    return valid and _listed(own, value) and _formatted(own, value)


_NUMBER = re.compile(r"^\s*[-+]?\d[\d,]*(?:\.\d+)?\s*\S{0,4}$")
#: What a value of a moment's format looks like (the validators do not assert formats).
_MOMENT_FORMATS = {
    "date": re.compile(r"^\d{4}-\d{2}-\d{2}$"),
    "time": re.compile(r"^\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?$"),
    "date-time": re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}"),
}


def _formatted(schema: Any, value: Any) -> bool:
    """Whether a wired text has the shape its argument's moment format says: a forecast's local
    date is no meeting's ``time`` (format time)."""
    shape = _MOMENT_FORMATS.get(str(schema.get("format"))) if isinstance(schema, Mapping) else None
    return shape is None or not isinstance(value, str) or bool(shape.match(value))


def _listed(schema: Any, value: Any, depth: int = 0) -> bool:
    """False when ``value``, or a value inside it, is not among the values its description lists
    (API-Bank's ``ForgotPassword`` takes a ``status`` of 'Forgot Password' or 'Verification Code',
    not an earlier call's ``completed``; a JSON:API body's tag is of ``type`` 'tags', so a webhook
    resource is none); no list, no objection."""
    if not isinstance(schema, Mapping) or depth > _LISTED_DEPTH:
        return True
    listed = described_choices(schema)
    if listed is not None:
        return all(v in listed for v in value) if isinstance(value, list) else value in listed
    if isinstance(value, list):
        return all(_listed(schema.get("items"), item, depth + 1) for item in value)
    if not isinstance(value, Mapping):
        return True
    options = [b for b in (schema.get("anyOf") or schema.get("oneOf") or ()) if isinstance(b, Mapping)]
    objects = [b for b in options if b.get("type") != "null"]
    if objects and not any(_listed(b, value, depth + 1) for b in objects):
        return False  # Up's category, or null: a webhook event is no category
    for branch in (schema, *(b for b in schema.get("allOf") or () if isinstance(b, Mapping))):
        props = branch.get("properties")
        if isinstance(props, Mapping) and not all(
            _listed(props.get(key), item, depth + 1) for key, item in value.items()
        ):
            return False
    return True


#: How deep :func:`_listed` looks into a wired value (JSON:API bodies nest 4 levels).
_LISTED_DEPTH = 8


def _check_budget(deadline: float, budget: float, where: str) -> float:
    """The seconds left before ``deadline``; a record over its time budget is rejected."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise RejectedRecord(
            f"time budget exceeded: the record took more than record_time_budget={budget:g} s "
            f"({where}). Raise the budget, or lower the tools' timeouts",
            reason="time_budget",
        )
    return remaining
