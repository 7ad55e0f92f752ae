"""What one record is made of, before it is written: the plan the text writers and exporters read.

A record is planned, executed, then written:

* :class:`RecordPlan` says what the record is about: the tools it offers (called ones and
  distractors, in the order the model sees them), whether it calls tools at all (a *no-call*
  record, and why not), and the calls in turns (:class:`PlannedCall`, tools called together in one
  assistant turn share a step), with the arguments the user states and those wired from earlier
  results;
* the executor fills each call's result;
* the text writer turns the plan into the user's request and the assistant's words;
* the record (:class:`~fms_dgt.databuilders.tool_calling.record.Record`) is the canonical form every
  exporter reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult

__all__ = ["CALLS", "NO_CALL_KINDS", "PlannedCall", "RecordPlan", "Wire"]

#: The kind of a record that calls tools.
CALLS = "calls"
#: Why a no-call record calls nothing: no offered tool serves the request (``irrelevant``), or the
#: request lacks a value a tool requires and the assistant asks for it (``missing_value``).
NO_CALL_KINDS = ("irrelevant", "missing_value")


@dataclass(frozen=True, slots=True)
class Wire:
    """Where a wired argument's value comes from: an earlier call's tool and the path in its result.

    Attributes:
        source: the qualified name of the earlier call's tool.
        output: the path in its result (an :attr:`~fms_dgt.core.tools.artifacts.Edge.output`:
            ``""`` for the whole result, ``location.name``, ``items[].id``).
        echoes: the argument of an earlier call that already took the value (the source's own
            first: a forecast answers the ``city`` it was asked for; else another's: a created
            pet's id that a lookup took before a delete does), else ``""``: the value was in the
            conversation before the result, so the request names it as "that city" or "that
            pet", not as something only the result holds.
    """

    source: str
    output: str
    echoes: str = ""

    def to_dict(self) -> dict[str, str]:
        """The wire as record metadata (``echoes`` only when set)."""
        said = {"source": self.source, "output": self.output}
        if self.echoes:
            said["echoes"] = self.echoes
        return said


@dataclass(slots=True, kw_only=True)
class PlannedCall:
    """One tool call of a record.

    Attributes:
        tool: the tool called.
        call: the call (qualified name, arguments, call id).
        given: the arguments the user states in the request (the others are wired).
        wired: argument name -> :class:`Wire` for arguments taken from an earlier call's result.
        result: the call's result once executed.
        approval: ``None``, or ``"approved"`` / ``"declined"`` when the call waited for the user's
            confirmation (the record then holds a confirmation exchange before it).
    """

    tool: Tool
    call: ToolCall
    given: dict[str, Any] = field(default_factory=dict)
    wired: dict[str, Wire] = field(default_factory=dict)
    result: ToolResult | None = None
    approval: str | None = None

    @property
    def failed(self) -> bool:
        """True when the call ran and its result is an error."""
        return self.approval != "declined" and self.result is not None and self.result.error is not None

    def failure(self) -> dict[str, Any]:
        """The failed call as the summary counts it: tool, engine, error."""
        result = self.result
        return {
            "tool": self.tool.qualified_name,
            "engine": result.metadata.get("engine") if result is not None else None,
            "error": result.error if result is not None else None,
        }


@dataclass(slots=True, kw_only=True)
class RecordPlan:
    """The plan of one record.

    Attributes:
        index: the record's index in the run.
        scenario: the scenario's name.
        kind: :data:`CALLS`, or one of :data:`NO_CALL_KINDS`.
        offered: the tools offered to the model, in the order it sees them.
        steps: the calls in assistant turns (empty for a no-call record).
        context: the record's entity values (a user, a city and its country code, a date...): the
            same values recur wherever a call needs them.
        stated: for a no-call record, the values the user states (for ``missing_value``, the
            arguments of the tool but the missing one; for ``irrelevant``, the topic tool's).
        missing: for ``missing_value``: ``(tool, argument)`` the request leaves out.
        topic: for ``irrelevant``: the tool whose purpose the request is about (not offered).
    """

    index: int
    scenario: str
    kind: str = CALLS
    offered: list[Tool] = field(default_factory=list)
    steps: list[list[PlannedCall]] = field(default_factory=list)
    context: dict[str, Any] = field(default_factory=dict)
    stated: dict[str, Any] = field(default_factory=dict)
    missing: tuple[Tool, str] | None = None
    topic: Tool | None = None

    @property
    def calls(self) -> list[PlannedCall]:
        """Every call, in execution order."""
        return [call for step in self.steps for call in step]

    @property
    def called(self) -> list[Tool]:
        """The tools called, in execution order (one entry per call)."""
        return [call.tool for call in self.calls]

    @property
    def failed(self) -> list[PlannedCall]:
        """The calls that ran and failed (kept as an error-handling example)."""
        return [c for c in self.calls if c.failed]
