"""The canonical record of a run, and its export to a provider layout.

:func:`build_record` turns an executed :class:`~fms_dgt.databuilders.tool_calling.plan.RecordPlan`
into a :class:`Record`: the conversation as provider-neutral
:class:`~fms_dgt.core.tools.wire.Message` turns, the offered tools, and the metadata. Every output
format is an export of that one record (:meth:`Record.export`).

The conversation of a record that calls tools: the user's request; for each step, a confirmation
exchange when a call waited for approval, then the assistant's calls and their results; the
assistant's final answer. A no-call record is the request and the assistant's answer without a call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fms_dgt.core.tools._json import scalars
from fms_dgt.core.tools.artifacts import Edge
from fms_dgt.core.tools.data_objects import ToolCall
from fms_dgt.core.tools.synth import is_filler
from fms_dgt.core.tools.wire import Message, NameCodec, WireError
from fms_dgt.core.tools.wire.names import codec_of
from fms_dgt.databuilders.tool_calling.plan import PlannedCall, RecordPlan
from fms_dgt.databuilders.tool_calling.text import RecordText
from fms_dgt.errors import RejectedRecord
from fms_dgt.export.records import export_record

__all__ = ["SEED_MASK", "Record", "build_messages", "edge_dict", "metadata", "wired_edges"]

#: Seeds in records stay below 2**63, so they load as int64 everywhere (Arrow, pandas, datasets).
SEED_MASK = (1 << 63) - 1


def build_messages(plan: RecordPlan, text: RecordText) -> list[Message]:
    """The conversation of a planned and executed record, in the words of ``text``."""
    messages = [Message("user", text.user)]
    for step in plan.steps:
        for call in step:
            exchange = text.confirmations.get(call.call.call_id or "") if call.approval else None
            if exchange is not None:
                messages.append(Message("assistant", exchange.question))
                messages.append(Message("user", exchange.reply))
        ran = [c for c in step if c.approval != "declined" and c.result is not None]
        if ran:
            messages.append(Message("assistant", "", [c.call for c in ran]))
            messages.append(Message("tool", results=[c.result for c in ran if c.result is not None]))
    messages.append(Message("assistant", text.final))
    return messages


@dataclass(slots=True, kw_only=True)
class Record:
    """One record, provider-neutral: what every exporter reads.

    Attributes:
        plan: the executed plan (tools offered, calls, results, kind).
        messages: the conversation.
        metadata: index, seeds, scenario, kind, tools, name map, edges, wiring, engines, errors...
    """

    plan: RecordPlan
    messages: list[Message]
    metadata: dict[str, Any] = field(default_factory=dict)
    _codec: NameCodec | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def codec(self) -> NameCodec:
        """The provider names of the offered tools."""
        if self._codec is None:
            self._codec = codec_of(frozenset(t.qualified_name for t in self.plan.offered))
        return self._codec

    def export(
        self, fmt: str, *, family: str | None = None, layout: str | None = None, strict: bool = False
    ) -> dict[str, Any]:
        """The record in provider layout ``fmt`` (adapted to a chat-template ``family`` and laid
        out ``arrow-safe`` on request): ``tools``, the conversation, ``metadata``.

        Raises:
            WireError: unknown format, family or layout.
            RejectedRecord: the conversation cannot be expressed in the format or family.
        """
        return export_record(
            self.plan.offered,
            self.messages,
            self.metadata,
            fmt=fmt,
            family=family,
            layout=layout,
            strict=strict,
        )

    def validate(self, match: Callable[[ToolCall], Any]) -> None:
        """Every call names an offered tool and its arguments validate (``match`` resolves them).

        Raises:
            RejectedRecord: a call does not.
        """
        codec = self.codec
        offered = {t.qualified_name for t in self.plan.offered}
        for call in (c.call for c in self.plan.calls):
            try:
                name = codec.decode(codec.encode(call.name))
            except WireError as exc:
                raise RejectedRecord(str(exc)) from exc
            if name not in offered:
                raise RejectedRecord(f"call {call.name} is not one of the record's offered tools")
            match(ToolCall(name, call.arguments))


def metadata(
    plan: RecordPlan, *, seed: int, sampler: str, sample_seed: int, fmt: str, edges: Sequence[Edge]
) -> dict[str, Any]:
    """The metadata of a record (the name map is added at export, per layout)."""
    calls = plan.calls
    called = {c.tool.qualified_name for c in calls}
    out: dict[str, Any] = {
        "index": plan.index,
        "seed": seed & SEED_MASK,
        "scenario": plan.scenario,
        "sampler": sampler,
        "sample_seed": sample_seed & SEED_MASK,
        "format": fmt,
        "kind": plan.kind,
        "tools": [t.qualified_name for t in plan.offered],
        "called": [c.tool.qualified_name for c in calls],
        "distractors": [t.qualified_name for t in plan.offered if t.qualified_name not in called],
        "edges": [edge_dict(e) for e in edges],
        "wired": [{name: wire.to_dict() for name, wire in c.wired.items()} for c in calls],
        "engines": [c.result.metadata.get("engine") if c.result else None for c in calls],
        "errors": len(plan.failed),
    }
    _extras(plan, out)
    return out


def _extras(plan: RecordPlan, out: dict[str, Any]) -> None:
    """Keys every record has (empty or null when they do not apply), so a dataset of records has
    one schema: Arrow, pandas and ``datasets`` pad no key with nulls."""
    out["error_handling"] = bool(plan.failed)
    out["failed"] = [c.failure() for c in plan.failed]
    out["approvals"] = [{"call": c.call.name, "decision": c.approval} for c in plan.calls if c.approval]
    out["missing"] = (
        {"tool": plan.missing[0].qualified_name, "argument": plan.missing[1]} if plan.missing else None
    )
    out["topic"] = plan.topic.qualified_name if plan.topic is not None else None
    out["context"] = dict(plan.context)
    out["placeholders"] = placeholders(plan)


def placeholders(plan: RecordPlan) -> int:
    """How many values of the record's tool results are synthesis's placeholders (``river-410``,
    written where nothing says what a string is): a figure to filter records by. At most
    :data:`_MOST_READ` values of a record are read (a hostile result may hold millions)."""
    results = [c.result.result for c in plan.calls if c.result is not None and c.result.error is None]
    return sum(1 for value in scalars(results, _MOST_READ + 1) if is_filler(value))  # +1: the list


_MOST_READ = 10_000


def edge_dict(edge: Edge) -> dict[str, Any]:
    """An edge as record metadata."""
    return {
        "source": edge.source.qualified_name,
        "output": edge.output,
        "target": edge.target.qualified_name,
        "input": edge.input,
        "score": round(float(edge.score), 4),
    }


def edges_among(edges: Sequence[Edge], calls: Sequence[PlannedCall]) -> list[Edge]:
    """The sample's edges whose both ends were called."""
    called = {c.tool.qualified_name for c in calls}
    return [e for e in edges if e.source.qualified_name in called and e.target.qualified_name in called]


def wired_edges(edges: Sequence[Edge], calls: Sequence[PlannedCall]) -> list[Edge]:
    """The edges a value really flowed along (an argument wired from that source output)."""
    flows = {(c.tool.qualified_name, name, w.source, w.output) for c in calls for name, w in c.wired.items()}
    return [
        e for e in edges if (e.target.qualified_name, e.input, e.source.qualified_name, e.output) in flows
    ]


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
