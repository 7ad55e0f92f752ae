"""The ``fms-dgt run`` generation job: tool-calling training records from a config.

For each record index ``i`` (everything below is seeded from the run seed and ``i`` only, so the
same config and seed give byte-identical output, and a resumed run continues exactly):

1. pick a scenario (weighted) and **sample** its tools with the scenario's sampler;
2. **plan** the calls along the sampled topology: a tool is called after every sampled tool that
   feeds it; tools that do not depend on each other are called in parallel (one assistant turn);
3. **synthesise** schema-valid arguments; an argument fed by an earlier call's output along a
   dataflow edge takes that output's value (when it validates), the rest are what the user says;
4. **execute** the calls through the engine in a session (torn down in ``finally``);
5. **validate** the record (every call names a registry tool of the record and its arguments
   validate) and **write** it, or write the reason to ``rejects.jsonl``.

Records are JSON Lines in the chosen provider layout (OpenAI chat by default: ``tools`` plus
``messages`` with the user turn, assistant tool calls, tool results and the final answer) with a
``metadata`` object: index, seeds, scenario, sampler, qualified names, ``name_map`` (provider name
-> qualified name), edges used and the engine of every call. Writes are appended and flushed per
record, so a crash loses at most the record in flight; ``resume`` continues after the last record.
"""

from __future__ import annotations

import logging
import os
import random
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import IO, Any

from fms_dgt.config import Config, load_config
from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.engines.base import ToolEngine
from fms_dgt.core.tools.engines.mock import call_seed
from fms_dgt.core.tools.engines.multi import MultiToolEngine
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.core.tools.samplers.base import ToolSample, ToolSampler, get_tool_sampler
from fms_dgt.core.tools.schema import get_validator
from fms_dgt.core.tools.synth import SynthesisError, synthesise
from fms_dgt.core.tools.wire import (
    FORMATS,
    Message,
    NameCodec,
    WireError,
    convert_messages,
    get_wire_format,
    project_tool,
)
from fms_dgt.databuilders.tool_calling.config import (
    GenerationConfig,
    Scenario,
    build_engines,
    parse_generation,
)
from fms_dgt.databuilders.tool_calling.output import RECORDS, REJECTS, SUMMARY, OutputFolder
from fms_dgt.databuilders.tool_calling.text import TextWriter, make_text_writer
from fms_dgt.errors import ConfigError, DGTError, RejectedRecord
from fms_dgt.secrets import install_log_filter

__all__ = ["RECORDS", "REJECTS", "SUMMARY", "GenerationJob", "RunSummary"]

log = logging.getLogger(__name__)

PHASES = ("sampling", "arguments", "execution", "validation", "writing")


@dataclass(slots=True)
class RunSummary:
    """What a run produced."""

    written: int = 0
    rejected: int = 0
    skipped: int = 0
    refreshes: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    tool_coverage: Counter[str] = field(default_factory=Counter)
    edge_coverage: Counter[str] = field(default_factory=Counter)
    timing: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PHASES, 0.0))

    def to_dict(self) -> dict[str, Any]:
        """The deterministic part (no timings), as written to ``summary.json``."""
        return {
            "written": self.written,
            "rejected": self.rejected,
            "resumed_over": self.skipped,
            "source_refreshes": self.refreshes,
            "reject_reasons": dict(sorted(self.reasons.items())),
            "tool_coverage": dict(sorted(self.tool_coverage.items())),
            "edge_coverage": dict(sorted(self.edge_coverage.items())),
        }


@dataclass(slots=True)
class _Step:
    tools: list[Tool]
    calls: list[ToolCall] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)


class GenerationJob:
    """Builds the registry, engines and samplers of a config and writes records.

    Args:
        config: config file or mapping.
        count: number of records (overrides ``generation.count``).
        seed: run seed (overrides ``generation.seed``).
        out: output directory (overrides ``generation.output_dir``).
        fmt: provider layout (overrides ``generation.format``).
        resume: continue an interrupted run in ``out`` instead of refusing to overwrite it.
        overwrite: replace earlier output in ``out``.
        progress: stream for progress (a bar on a terminal, lines otherwise); None for silence.
    """

    def __init__(
        self,
        config: str | PathLike[str] | Mapping[str, Any],
        *,
        count: int | None = None,
        seed: int | None = None,
        out: str | PathLike[str] | None = None,
        fmt: str | None = None,
        resume: bool = False,
        overwrite: bool = False,
        progress: IO[str] | None = None,
    ) -> None:
        install_log_filter()
        self.config: Config = load_config(config)
        self.settings = self._settings(parse_generation(self.config), count, seed, out, fmt)
        self.resume = resume
        self.overwrite = overwrite
        self.progress = progress
        self.registry = ToolRegistry.from_config(self.config)
        self.blocked: tuple[str, ...] = ()  # every blocklist of the job's policies (set by _engine)
        try:
            self.engine = self._engine()
            self.samplers = [self._sampler(s) for s in self.settings.scenarios]
        except BaseException:
            self.registry.close()
            raise
        self.text: TextWriter = make_text_writer(self.settings.text)
        self._projected: dict[tuple[str, str], dict[str, Any]] = {}
        self._progress_bar: Any = None

    @staticmethod
    def _settings(
        settings: GenerationConfig,
        count: int | None,
        seed: int | None,
        out: str | PathLike[str] | None,
        fmt: str | None,
    ) -> GenerationConfig:
        if count is not None:
            settings.count = count
        if seed is not None:
            settings.seed = seed
        if out is not None:
            settings.output_dir = Path(out)
        if fmt is not None:
            if fmt not in FORMATS:
                raise ConfigError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
            settings.format = fmt
        return settings

    def _engine(self) -> ToolEngine:
        engines = build_engines(self.config, self.registry)
        blocked = [*self.settings.policy.blocklist]
        for engine in engines.values():
            blocked += engine.policy.blocklist
        self.blocked = tuple(dict.fromkeys(blocked))
        return MultiToolEngine(self.registry, engines=engines, max_workers=1, policy=self.settings.policy)

    def _sampler(self, scenario: Scenario) -> ToolSampler:
        options = {"seed": self.settings.seed, **scenario.sampler_config}
        if self.blocked:
            # Tools no policy lets the job call are never sampled (a record would hold a refusal).
            own = options.get("exclude") or []
            options["exclude"] = [*([own] if isinstance(own, str) else own), *self.blocked]
        try:
            return get_tool_sampler(scenario.sampler, registry=self.registry, **options)
        except DGTError as exc:
            raise ConfigError(
                f"invalid sampler of scenario {scenario.name!r}: {exc}",
                path=self.config.label,
                yaml_path="generation.scenarios",
            ) from exc

    # ------------------------------------------------------------------ the run

    def run(self) -> RunSummary:
        """Generate every record not yet written; returns the summary (also in ``summary.json``)."""
        output = OutputFolder(self.settings.output_dir, resume=self.resume, overwrite=self.overwrite)
        done = output.open()
        try:
            summary = RunSummary(skipped=len(done))
            todo = [i for i in range(self.settings.count) if i not in done]
            for position, index in enumerate(todo, 1):
                self._one(index, output, summary)
                self._report(position, len(todo), summary)
            output.write_summary(summary.to_dict())
        finally:
            output.close()
        return summary

    def _follow_sources(self, summary: RunSummary) -> None:
        """Pick up tool sources that changed during the run (e.g. an MCP server's list_changed).

        A stale registry is refreshed; a registry refreshed by anyone (``auto_refresh``) gets new
        samplers, since theirs were built from the previous contents. A failed refresh keeps the
        previous tools; the run goes on and the failure is logged.
        """
        if self.registry.stale:
            try:
                self.registry.refresh()
            except DGTError as exc:
                log.warning("%s", exc)
        if self.samplers and self.samplers[0].registry.generation != self.registry.generation:
            self.samplers = [self._sampler(s) for s in self.settings.scenarios]
            summary.refreshes += 1

    def _one(self, index: int, output: OutputFolder, summary: RunSummary) -> None:
        self._follow_sources(summary)
        try:
            record = self.build_record(index, summary)
        except DGTError as exc:
            reason = type(exc).__name__
            summary.rejected += 1
            summary.reasons[reason] += 1
            output.add_reject({"index": index, "reason": reason, "detail": str(exc)})
            return
        started = time.perf_counter()
        output.add_record(record)
        summary.timing["writing"] += time.perf_counter() - started
        summary.written += 1
        for name in record["metadata"]["tools"]:
            summary.tool_coverage[name] += 1
        for edge in record["metadata"]["edges"]:
            summary.edge_coverage[
                f"{edge['source']}.{edge['output']} -> {edge['target']}.{edge['input']}"
            ] += 1

    def build_record(self, index: int, summary: RunSummary | None = None) -> dict[str, Any]:
        """The record of one index (deterministic).

        Raises:
            DGTError: sampling, argument synthesis or validation failed (the reason is recorded).
        """
        timing = summary.timing if summary is not None else dict.fromkeys(PHASES, 0.0)
        rng = random.Random(call_seed(self.settings.seed, index))
        started = time.perf_counter()
        scenario_index = _weighted(rng, [s.weight for s in self.settings.scenarios])
        scenario = self.settings.scenarios[scenario_index]
        sample = self.samplers[scenario_index].sample(seed=f"{self.settings.seed}:{index}")
        timing["sampling"] += time.perf_counter() - started
        steps, wired, given = self._execute(sample, rng, index, timing)
        started = time.perf_counter()
        record = self._record(index, scenario, sample, steps, wired, given, rng)
        timing["validation"] += time.perf_counter() - started
        return record

    # ------------------------------------------------------------------ plan, arguments, execution

    def _execute(
        self, sample: ToolSample, rng: random.Random, index: int, timing: dict[str, float]
    ) -> tuple[list[_Step], dict[int, dict[str, str]], list[dict[str, Any]]]:
        feeds = _feeds(sample)
        steps = [_Step([sample.tools[p] for p in level]) for level in _levels(len(sample.tools), feeds)]
        positions = [p for level in _levels(len(sample.tools), feeds) for p in level]
        results_by_position: dict[int, ToolResult] = {}
        wired: dict[int, dict[str, str]] = {}
        given: dict[int, dict[str, Any]] = {}
        session = f"{self.settings.seed}-{index}"
        deadline = time.monotonic() + self.settings.record_time_budget
        self.engine.setup(session)
        try:
            cursor = 0
            for step in steps:
                _check_budget(deadline, self.settings.record_time_budget, "before its next step")
                started = time.perf_counter()
                level_positions = positions[cursor : cursor + len(step.tools)]
                cursor += len(step.tools)
                for position, tool in zip(level_positions, step.tools, strict=True):
                    args, wired[position] = self._arguments(
                        tool, feeds.get(position, []), results_by_position, sample, rng
                    )
                    given[position] = {k: v for k, v in args.items() if k not in wired[position]}
                    step.calls.append(ToolCall(tool.qualified_name, args, f"call_{index}_{position}"))
                timing["arguments"] += time.perf_counter() - started
                started = time.perf_counter()
                remaining = _check_budget(deadline, self.settings.record_time_budget, "building arguments")
                step.results = self.engine.execute(session, step.calls, timeout=remaining)
                _check_budget(deadline, self.settings.record_time_budget, "waiting for its calls")
                timing["execution"] += time.perf_counter() - started
                results_by_position.update(zip(level_positions, step.results, strict=True))
        finally:
            self.engine.teardown(session)
        # Calls are numbered in execution order (level by level), which is the order of `positions`.
        rank = {p: i for i, p in enumerate(positions)}
        return steps, {rank[p]: w for p, w in wired.items()}, [given[p] for p in positions]

    def _arguments(
        self,
        tool: Tool,
        feeds: Sequence[tuple[int, str, str]],
        results: Mapping[int, ToolResult],
        sample: ToolSample,
        rng: random.Random,
    ) -> tuple[dict[str, Any], dict[str, str]]:
        try:
            args = synthesise(tool.parameters, rng, optional_probability=0.5, fingerprint=tool.fingerprint)
        except SynthesisError as exc:
            raise RejectedRecord(f"cannot synthesise arguments for {tool.qualified_name}: {exc}") from exc
        wired: dict[str, str] = {}
        props = tool.parameters.get("properties", {})
        for source, output, target_input in feeds:
            value = _output_value(results.get(source), output)
            if value is _MISSING or target_input not in props:
                continue
            # Validated as a whole: an argument's schema may refer to the tool schema's $defs.
            candidate = {**args, target_input: value}
            if get_validator(tool.parameters, tool.fingerprint).is_valid(candidate):
                args = candidate
                wired[target_input] = f"{sample.tools[source].qualified_name}.{output or '(result)'}"
        return args, wired

    # ------------------------------------------------------------------ the record

    def _record(
        self,
        index: int,
        scenario: Scenario,
        sample: ToolSample,
        steps: list[_Step],
        wired: Mapping[int, Mapping[str, str]],
        given: list[dict[str, Any]],
        rng: random.Random,
    ) -> dict[str, Any]:
        calls = [c for s in steps for c in s.calls]
        results = [r for s in steps for r in s.results]
        ordered_tools = [t for s in steps for t in s.tools]
        codec = NameCodec(t.qualified_name for t in sample.tools)
        self._validate(calls, codec, sample)
        messages = [Message("user", self.text.user_turn(ordered_tools, calls, given, rng))]
        for step in steps:
            messages.append(Message("assistant", "", step.calls))
            messages.append(Message("tool", results=step.results))
        messages.append(Message("assistant", self.text.final_turn(calls, results, rng)))
        fmt = self.settings.format
        body = convert_messages(messages, fmt, codec)
        tools = [self._project(t, fmt, codec) for t in _distinct(sample.tools)]
        record: dict[str, Any] = {"tools": get_wire_format(fmt).tools(tools), **body}
        record["metadata"] = {
            "index": index,
            "seed": self.settings.seed,
            "scenario": scenario.name,
            "sampler": scenario.sampler,
            "sample_seed": sample.seed,
            "format": fmt,
            "tools": [t.qualified_name for t in sample.tools],
            "name_map": codec.name_map,
            "edges": [
                {
                    "source": e.source.qualified_name,
                    "output": e.output,
                    "target": e.target.qualified_name,
                    "input": e.input,
                    "score": round(float(e.score), 4),
                }
                for e in sample.edges
            ],
            "wired": [dict(wired.get(i, {})) for i in range(len(calls))],
            "engines": [r.metadata.get("engine") for r in results],
            "errors": sum(1 for r in results if r.error is not None),
        }
        return record

    def _project(self, tool: Tool, fmt: str, codec: NameCodec) -> dict[str, Any]:
        key = (tool.qualified_name + "#" + tool.fingerprint, fmt)
        projected = self._projected.get(key)
        if projected is None:
            projected = project_tool(tool, fmt, codec=codec, strict=self.settings.strict)
            self._projected[key] = projected
        return get_wire_format(fmt).renamed(projected, codec.encode(tool.qualified_name))

    def _validate(self, calls: Sequence[ToolCall], codec: NameCodec, sample: ToolSample) -> None:
        allowed = {t.qualified_name for t in sample.tools}
        for call in calls:
            try:
                name = codec.decode(codec.encode(call.name))
                if name not in allowed:
                    raise RejectedRecord(f"call {call.name} is not one of the record's tools")
                self.registry.match(ToolCall(name, call.arguments))
            except WireError as exc:
                raise RejectedRecord(str(exc)) from exc

    # ------------------------------------------------------------------ reporting

    def _report(self, done: int, total: int, summary: RunSummary) -> None:
        stream = self.progress
        if stream is None or not total:
            return
        if stream.isatty():
            self._bar(total).update(1)
            self._bar(total).set_postfix(written=summary.written, rejected=summary.rejected, refresh=False)
            if done == total:
                self._bar(total).close()
        elif done == total or done % max(1, total // 10) == 0:
            stream.write(
                f"progress: {done}/{total} (written {summary.written}, rejected {summary.rejected})\n"
            )
            stream.flush()

    def _bar(self, total: int) -> Any:
        """The terminal progress bar (tqdm: rate and time left), made on first use."""
        if self._progress_bar is None:
            from tqdm import tqdm

            cols, rows = _terminal_size(self.progress)
            self._progress_bar = tqdm(total=total, file=self.progress, unit="rec", ncols=cols, nrows=rows)
        return self._progress_bar

    def close(self) -> None:
        """Close engines, text model client and registry (connections, sessions)."""
        self.engine.close()
        closer = getattr(self.text, "close", None)
        if callable(closer):
            closer()
        self.registry.close()

    def __enter__(self) -> GenerationJob:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_MISSING = object()


def _check_budget(deadline: float, budget: float, where: str) -> float:
    """The seconds left before ``deadline``; a record over its time budget is rejected."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise RejectedRecord(
            f"time budget exceeded: the record took more than record_time_budget={budget:g} s "
            f"({where}). Raise the budget, or lower the tools' timeouts"
        )
    return remaining


def _terminal_size(stream: Any) -> tuple[int, int]:
    """The terminal's columns and rows, with 100 x 24 for a pseudo-terminal that reports none."""
    try:
        size = os.get_terminal_size(stream.fileno())
    except (OSError, ValueError, AttributeError):
        return 100, 24
    return size.columns or 100, size.lines or 24


def _output_value(result: ToolResult | None, output: str) -> Any:
    if result is None or result.error is not None:
        return _MISSING
    if output == "":
        return result.result
    if isinstance(result.result, dict) and output in result.result:
        return result.result[output]
    return _MISSING


def _feeds(sample: ToolSample) -> dict[int, list[tuple[int, str, str]]]:
    """Target position -> (source position, output, input) along the sample's edges, forward only."""
    position = {id(t): i for i, t in enumerate(sample.tools)}
    feeds: dict[int, list[tuple[int, str, str]]] = {}
    for edge in sample.edges:
        source, target = position.get(id(edge.source)), position.get(id(edge.target))
        if source is None or target is None:
            source = _position_by_name(sample, edge.source)
            target = _position_by_name(sample, edge.target)
        if source is not None and target is not None and source < target:
            feeds.setdefault(target, []).append((source, edge.output, edge.input))
    return feeds


def _position_by_name(sample: ToolSample, tool: Tool) -> int | None:
    for i, candidate in enumerate(sample.tools):
        if candidate.qualified_name == tool.qualified_name and candidate.fingerprint == tool.fingerprint:
            return i
    return None


def _levels(count: int, feeds: Mapping[int, Sequence[tuple[int, str, str]]]) -> list[list[int]]:
    """Positions grouped so that every tool comes after the tools feeding it."""
    level = [0] * count
    for position in range(count):
        level[position] = max((level[s] + 1 for s, _, _ in feeds.get(position, [])), default=0)
    groups: dict[int, list[int]] = {}
    for position in range(count):
        groups.setdefault(level[position], []).append(position)
    return [groups[k] for k in sorted(groups)]


def _weighted(rng: random.Random, weights: Sequence[float]) -> int:
    roll = rng.random() * sum(weights)
    for index, weight in enumerate(weights):
        roll -= weight
        if roll < 0:
            return index
    return len(weights) - 1


def _distinct(tools: Sequence[Tool]) -> list[Tool]:
    seen: set[str] = set()
    out = []
    for tool in tools:
        if tool.qualified_name not in seen:
            seen.add(tool.qualified_name)
            out.append(tool)
    return out
