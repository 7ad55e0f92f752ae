"""The summary of a run (``summary.json``): counts, reasons, coverage, call errors and quality.

The summary always covers the whole output folder: a resumed run first counts what the folder
already holds (its records and rejects, read back), then what it adds. It is written on every exit
of the run, also when interrupted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fms_dgt.databuilders.tool_calling.quality import QualityReport

__all__ = ["PHASES", "RunSummary"]

PHASES = ("sampling", "arguments", "execution", "text", "validation", "writing")


@dataclass(slots=True)
class RunSummary:
    """What a run produced (see the module docstring).

    Attributes:
        written: records in ``records.jsonl``.
        rejected: entries in ``rejects.jsonl``.
        skipped: records and rejects the folder already held when this run started.
        refreshes: tool-source refreshes the run followed.
        interrupted: the run stopped before its last record.
        reasons: reject reason -> count.
        tool_coverage: qualified name -> calls in written records.
        edge_coverage: ``source.output -> target.input`` -> records where a value flowed along it.
        call_errors: ``{"by_tool": Counter, "by_engine": Counter}`` over rejects and kept errors.
        quality: the quality figures of the written records.
        timing: seconds per phase, this run only, summed over records in flight (not written to
            the file).
        elapsed: wall-clock seconds of this run's records (not written to the file).
    """

    written: int = 0
    rejected: int = 0
    skipped: int = 0
    refreshes: int = 0
    interrupted: bool = False
    #: Records whose tool results hold a synthesis placeholder (``metadata["placeholders"]``).
    placeholder_records: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    tool_coverage: Counter[str] = field(default_factory=Counter)
    edge_coverage: Counter[str] = field(default_factory=Counter)
    errors_by_tool: Counter[str] = field(default_factory=Counter)
    errors_by_engine: Counter[str] = field(default_factory=Counter)
    quality: QualityReport = field(default_factory=QualityReport)
    timing: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PHASES, 0.0))
    elapsed: float = 0.0

    def add_record(self, record: Mapping[str, Any]) -> None:
        """Count one written record (as written)."""
        meta: Mapping[str, Any] = record.get("metadata") or {}
        self.written += 1
        self.tool_coverage.update(meta.get("called") or [])
        for edge in meta.get("edges") or []:
            self.edge_coverage[f"{edge['source']}.{edge['output']} -> {edge['target']}.{edge['input']}"] += 1
        self.placeholder_records += bool(meta.get("placeholders"))
        failed = meta.get("failed") or []
        for item in failed:
            self._call_error(item)
        self.quality.add(record)

    def add_reject(self, reject: Mapping[str, Any]) -> None:
        """Count one reject (as written)."""
        self.rejected += 1
        self.reasons[str(reject.get("reason", "unknown"))] += 1
        if isinstance(reject.get("call"), Mapping):
            self._call_error(reject["call"])

    def _call_error(self, item: Mapping[str, Any]) -> None:
        self.errors_by_tool[str(item.get("tool"))] += 1
        self.errors_by_engine[str(item.get("engine"))] += 1

    def merge(self, other: RunSummary) -> None:
        """Add the counts of records and rejects counted elsewhere (a Ray worker's shard)."""
        self.written += other.written
        self.rejected += other.rejected
        self.refreshes += other.refreshes
        self.placeholder_records += other.placeholder_records
        for mine, theirs in (
            (self.reasons, other.reasons),
            (self.tool_coverage, other.tool_coverage),
            (self.edge_coverage, other.edge_coverage),
            (self.errors_by_tool, other.errors_by_tool),
            (self.errors_by_engine, other.errors_by_engine),
        ):
            mine.update(theirs)
        for phase, seconds in other.timing.items():
            self.timing[phase] = self.timing.get(phase, 0.0) + seconds
        self.quality.merge(other.quality)

    @property
    def reject_rate(self) -> float:
        """Rejects over everything the folder holds."""
        total = self.written + self.rejected
        return self.rejected / total if total else 0.0

    def verdict(self, max_reject_rate: float) -> str | None:
        """Why the run failed (nothing written, too many rejects), or None when it did not."""
        if self.interrupted:
            return None
        if not self.written:
            return "no record was written: see rejects.jsonl for why"
        if self.reject_rate > max_reject_rate:
            return (
                f"{self.reject_rate:.0%} of records were rejected, over max_reject_rate="
                f"{max_reject_rate:g}: see the reasons in rejects.jsonl"
            )
        return None

    def to_dict(self) -> dict[str, Any]:
        """The deterministic part (no timings), as written to ``summary.json``."""
        return {
            "written": self.written,
            "rejected": self.rejected,
            "resumed_over": self.skipped,
            "interrupted": self.interrupted,
            "source_refreshes": self.refreshes,
            "reject_reasons": dict(sorted(self.reasons.items())),
            "placeholder_records": self.placeholder_records,
            "call_errors": {
                "by_tool": dict(sorted(self.errors_by_tool.items())),
                "by_engine": dict(sorted(self.errors_by_engine.items())),
            },
            "tool_coverage": dict(sorted(self.tool_coverage.items())),
            "edge_coverage": dict(sorted(self.edge_coverage.items())),
            "quality": self.quality.to_dict(),
        }
