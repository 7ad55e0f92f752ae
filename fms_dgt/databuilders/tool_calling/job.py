"""The ``fms-dgt run`` generation job: tool-calling training records from a config.

For each record index ``i`` (everything below is drawn from one random source seeded from the run
seed and ``i`` only, so the same config and seed give byte-identical output, and a resumed run
continues exactly):

1. **plan** the record (:mod:`.planner`): a scenario and its sampled tools, the record's kind (it
   calls tools, or it is a *no-call* record: no offered tool serves the request, or the request
   leaves out a required value), the tools offered beside the called ones (distractors, hard
   negatives first), and the calls in assistant turns along the sampled dataflow;
2. **execute** it (:mod:`.executor`) in a session of its own: realistic arguments from the record's
   entity context, values wired from earlier results, approvals, failed calls (rejected, or kept as
   error-handling examples), all within the record's time budget;
3. **write** its text (the user's request, confirmations, the assistant's answer);
4. **check** it (every call names an offered tool and validates; no two calls disagree on an
   entity) and **write** it in the chosen provider layout, or its reason to ``rejects.jsonl``.

The output folder (:mod:`.output`) holds the run manifest, the records, the rejects and the summary
(:mod:`.summary`, with the quality report of :mod:`.quality`), which is written on every exit and
always covers the whole folder.
"""

from __future__ import annotations

import logging
import os
import random
import time
from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import IO, Any

from fms_dgt.config import Config, load_config
from fms_dgt.core.tools.engines.base import ToolEngine
from fms_dgt.core.tools.engines.mock import call_seed
from fms_dgt.core.tools.engines.multi import MultiToolEngine
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.core.tools.samplers.base import ToolSampler, get_tool_sampler
from fms_dgt.core.tools.wire import FORMATS
from fms_dgt.databuilders.tool_calling.config import (
    GenerationConfig,
    Scenario,
    build_engines,
    check_output_options,
    parse_generation,
)
from fms_dgt.databuilders.tool_calling.executor import RecordExecutor
from fms_dgt.databuilders.tool_calling.executors import (
    Executor,
    Outcome,
    RunOptions,
    make_executor,
    parse_run,
)
from fms_dgt.databuilders.tool_calling.interrupts import GracefulStop, Stopped
from fms_dgt.databuilders.tool_calling.manifest import build_manifest
from fms_dgt.databuilders.tool_calling.output import RECORDS, REJECTS, SUMMARY, OutputFolder
from fms_dgt.databuilders.tool_calling.planner import PlannedRecord, Planner
from fms_dgt.databuilders.tool_calling.processes import ProcessExecutor
from fms_dgt.databuilders.tool_calling.record import Record, build_messages, metadata, wired_edges
from fms_dgt.databuilders.tool_calling.summary import PHASES, RunSummary
from fms_dgt.databuilders.tool_calling.text import TextWriter, make_text_writer
from fms_dgt.errors import ConfigError, DGTError, OutputError, RejectedRecord
from fms_dgt.secrets import install_log_filter

__all__ = ["RECORDS", "REJECTS", "SUMMARY", "GenerationJob", "RunSummary"]

log = logging.getLogger(__name__)


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
        config: str | PathLike[str] | Mapping[str, Any] | Config,
        *,
        count: int | None = None,
        seed: int | None = None,
        out: str | PathLike[str] | None = None,
        fmt: str | None = None,
        resume: bool = False,
        overwrite: bool = False,
        progress: IO[str] | None = None,
        template_family: str | None = None,
        layout: str | None = None,
        check_template: str | PathLike[str] | None = None,
        concurrency: int | None = None,
        executor: str | None = None,
        workers: int | None = None,
    ) -> None:
        install_log_filter()
        self.config: Config = load_config(config)
        self.settings = self._settings(parse_generation(self.config), count, seed, out, fmt)
        self._output_options(template_family, layout, check_template)
        self.options = self._run_options(concurrency, executor, workers)
        self._overrides = {
            "count": count,
            "seed": seed,
            "fmt": fmt,
            "template_family": template_family,
            "layout": layout,
            "check_template": str(check_template) if check_template is not None else None,
        }
        self._refreshes = 0
        self._uncounted = False
        self.resume = resume
        self.overwrite = overwrite
        self.progress = progress
        # Worker processes build their jobs while this one builds its own (see processes.py).
        processes = self.options.executor == "processes"
        self._processes = ProcessExecutor(self, self.options) if processes else None
        try:
            self.registry = ToolRegistry.from_config(self.config)
        except BaseException:
            self._stop_processes()
            raise
        self.blocked: tuple[str, ...] = ()  # every blocklist of the job's policies (set by _engine)
        try:
            self.engine = self._engine()
            self.samplers = [self._sampler(s) for s in self.settings.scenarios]
        except BaseException:
            self._stop_processes()
            self.registry.close()
            raise
        self.text: TextWriter = make_text_writer(self.settings.text)
        self.executor = RecordExecutor(self.engine, self.settings)
        self._planner: Planner | None = None
        self._progress_bar: Any = None

    @property
    def planner(self) -> Planner:
        """The planner of the registry's current contents (rebuilt with the samplers)."""
        if self._planner is None or self._planner.source is not self.samplers:
            self._planner = Planner(self.settings, self.registry, self.samplers, self.blocked)
        return self._planner

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

    def _run_options(self, concurrency: int | None, executor: str | None, workers: int | None) -> RunOptions:
        try:
            options = parse_run(self.config.data.get("run"))
        except ConfigError as exc:
            raise ConfigError(exc.reason, path=self.config.label, yaml_path="run") from None
        if concurrency is not None:
            options.concurrency = parse_run({"concurrency": concurrency}, "--concurrency").concurrency
        if executor is not None:
            options.executor = parse_run({"executor": executor}, "--executor").executor
        if workers is not None:
            options.workers = parse_run({"workers": workers}, "--workers").workers
        return options

    def worker_spec(self) -> dict[str, Any]:
        """What a worker process needs to build this job's records (the config as loaded, the
        command-line overrides)."""
        path = self.config.path
        # A worker builds records itself, with the driver's concurrency (its own workers: none).
        overrides = {**self._overrides, "executor": "local", "concurrency": self.options.in_flight()}
        return {"data": dict(self.config.data), "path": str(path) if path else None, "overrides": overrides}

    @classmethod
    def from_worker_spec(cls, spec: Mapping[str, Any]) -> GenerationJob:
        """A job built from :meth:`worker_spec` in another process (it writes nothing itself)."""
        path = spec.get("path")
        data = spec["data"]
        # The data was interpolated when the driver loaded it: it is taken as it is.
        config = Config(data, Path(path)) if path else Config(data, None)
        return cls(config, **{k: v for k, v in spec["overrides"].items() if v is not None})

    def _output_options(
        self, family: str | None, layout: str | None, template: str | PathLike[str] | None
    ) -> None:
        """Command-line output options over the config's, checked together; the template is read."""
        if family is not None:
            self.settings.template_family = family
        if layout is not None:
            self.settings.layout = layout
        if template is not None:
            self.settings.check_template = Path(template)
        check_output_options(self.settings)
        self.template: str | None = None
        if self.settings.check_template is not None:
            from fms_dgt.export.templates import read_template

            self.template = read_template(self.settings.check_template)

    def _engine(self) -> ToolEngine:
        engines = build_engines(self.config, self.registry)
        blocked = [*self.settings.policy.blocklist]
        for engine in engines.values():
            blocked += engine.policy.blocklist
        self.blocked = tuple(dict.fromkeys(blocked))
        multi = MultiToolEngine(self.registry, engines=engines, max_workers=1, policy=self.settings.policy)
        # A record never sees another's state: stateful (stdio) servers are isolated per record
        # unless an engine entry says otherwise.
        multi.prefer_isolation("per_record")
        return multi

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
        """Generate every record not yet written; returns the summary (also in ``summary.json``,
        written on every exit, an interruption included, and covering the whole folder)."""
        manifest = build_manifest(self.config, self.settings, self.registry)
        output = OutputFolder(
            self.settings.output_dir, resume=self.resume, overwrite=self.overwrite, manifest=manifest
        )
        done = output.open()
        summary = RunSummary(skipped=len(done))
        summary.interrupted = True
        try:
            summary.quality.pool = len(self.planner.pool)
            self._count_existing(output, summary)
            todo = [i for i in range(self.settings.count) if i not in done]
            executor = self._executor()
            started = time.perf_counter()
            try:
                with GracefulStop() as stop:
                    outcomes = executor.outcomes(todo, stopping=lambda: stop.requested)
                    for position, outcome in enumerate(outcomes, 1):
                        self._write(outcome, output, summary)
                        self._report(position, len(todo), summary)
                        stop.check()
            finally:
                self._release(executor)
                summary.elapsed = time.perf_counter() - started
            summary.refreshes += self._refreshes
            summary.interrupted = False
        except KeyboardInterrupt as exc:
            # Stopped mid-record, or mid-shard: count what the files hold.
            if not isinstance(exc, Stopped) or self._uncounted:
                summary = self._recount(output, summary)
            raise
        finally:
            self._close_bar()
            self._write_summary(output, summary)
            output.close()
        return summary

    @staticmethod
    def _count_existing(output: OutputFolder, summary: RunSummary) -> None:
        output.tally(summary.add_record, summary.add_reject)

    def _recount(self, output: OutputFolder, summary: RunSummary) -> RunSummary:
        fresh = RunSummary(skipped=summary.skipped, refreshes=summary.refreshes, interrupted=True)
        fresh.timing = summary.timing
        fresh.quality.pool = summary.quality.pool
        self._count_existing(output, fresh)
        return fresh

    @staticmethod
    def _write_summary(output: OutputFolder, summary: RunSummary) -> None:
        try:
            output.write_summary(summary.to_dict())
        except OutputError as exc:
            if not summary.interrupted:
                raise
            log.error("%s", exc)  # the error that stopped the run matters more

    def follow_sources(self) -> None:
        """Pick up tool sources that changed during the run (e.g. an MCP server's list_changed).

        A stale registry is refreshed; a registry refreshed by anyone (``auto_refresh``) gets new
        samplers, since theirs were built from the previous contents. A failed refresh keeps the
        previous tools; the run goes on and the failure is logged. Records already in flight
        finish with the tools they started with.
        """
        if self.registry.stale:
            try:
                self.registry.refresh()
            except DGTError as exc:
                log.warning("%s", exc)
        if self.samplers and self.samplers[0].registry.generation != self.registry.generation:
            self.samplers = [self._sampler(s) for s in self.settings.scenarios]
            self._refreshes += 1

    @property
    def refreshes(self) -> int:
        """How many times this job has rebuilt its samplers after its tool sources changed."""
        return self._refreshes

    def outcome(self, index: int) -> Outcome:
        """The record of ``index`` in the run's layout, or its reject entry (thread-safe)."""
        timing = dict.fromkeys(PHASES, 0.0)
        try:
            record = self.build_record(index, timing)
        except DGTError as exc:
            reject: dict[str, Any] = {
                "index": index,
                "reason": getattr(exc, "reason", None) or type(exc).__name__,
                "detail": str(exc),
            }
            call = getattr(exc, "call", None)
            if call is not None:
                reject["call"] = call
            return Outcome(index, reject=reject, timing=timing)
        return Outcome(index, record=record, timing=timing)

    def _write(self, outcome: Outcome, output: OutputFolder, summary: RunSummary) -> None:
        """Write one outcome and count it (an outcome a Ray worker counted: its shard's tally)."""
        started = time.perf_counter()
        if outcome.reject is not None:
            output.add_reject(outcome.reject)
        else:
            if outcome.line is not None:
                output.add_record_line(outcome.line)
            else:
                assert outcome.record is not None
                output.add_record(outcome.record)
            summary.timing["writing"] += time.perf_counter() - started
        if not outcome.counted:
            for phase, seconds in outcome.timing.items():
                summary.timing[phase] = summary.timing.get(phase, 0.0) + seconds
            if outcome.reject is not None:
                summary.add_reject(outcome.reject)
            elif outcome.record is not None:
                summary.add_record(outcome.record)
        # Outcomes written but not yet in the summary (their shard's tally is still to come).
        self._uncounted = outcome.counted and outcome.tally is None
        if outcome.tally is not None:
            summary.merge(outcome.tally)

    def build_record(self, index: int, timing: dict[str, float] | None = None) -> dict[str, Any]:
        """The record of one index (deterministic), in the run's provider layout.

        Raises:
            DGTError: the record cannot be built or fails its checks (the reason is recorded).
        """
        record = self.build(index, timing)
        settings = self.settings
        if self.template is not None:
            self._check_template(record)
        return record.export(
            settings.format, family=settings.template_family, layout=settings.layout, strict=settings.strict
        )

    def _check_template(self, record: Record) -> None:
        """Reject a record that does not render in the chat template, or loses a part in it."""
        from fms_dgt.export.templates import check_messages

        assert self.template is not None
        problems = check_messages(
            record.plan.offered,
            record.messages,
            self.template,
            family=self.settings.template_family,
            metadata=record.metadata,
        )
        if problems:
            raise RejectedRecord(
                f"chat template {self.settings.check_template}: {'; '.join(problems)}", reason="template"
            )

    def build(self, index: int, timing: dict[str, float] | None = None) -> Record:
        """The canonical record of one index (every output layout is an export of it).

        Raises:
            DGTError: the record cannot be built or fails its checks (the reason is recorded).
        """
        timing = timing if timing is not None else dict.fromkeys(PHASES, 0.0)
        rng = random.Random(call_seed(self.settings.seed, index))
        started = time.perf_counter()
        planned = self.planner.plan(index, rng)
        timing["sampling"] += time.perf_counter() - started
        context = self.executor.run(planned, rng, timing)
        started = time.perf_counter()
        text = self.text.write(planned.plan, rng)
        verdict = self.text.check(planned.plan, text, rng)
        timing["text"] += time.perf_counter() - started
        if not verdict.ok:
            raise RejectedRecord(f"{verdict.check} check: {verdict.reason}", reason=f"{verdict.check}_check")
        messages = build_messages(planned.plan, text)
        started = time.perf_counter()
        record = Record(plan=planned.plan, messages=messages, metadata=self._metadata(planned))
        record.validate(self.registry.match)
        clashes = context.conflicts(planned.plan.calls)
        if clashes:
            raise RejectedRecord(
                f"calls disagree on {', '.join(clashes)} within one record", reason="entity_conflict"
            )
        timing["validation"] += time.perf_counter() - started
        return record

    def _metadata(self, planned: PlannedRecord) -> dict[str, Any]:
        plan = planned.plan
        return metadata(
            plan,
            seed=self.settings.seed,
            sampler=planned.sampler,
            sample_seed=planned.sample.seed,
            fmt=self.settings.format,
            edges=wired_edges(planned.sample.edges, plan.calls),
        )

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

    def _close_bar(self) -> None:
        if self._progress_bar is not None:
            self._progress_bar.close()
            self._progress_bar = None

    def _bar(self, total: int) -> Any:
        """The terminal progress bar (tqdm: rate and time left), made on first use."""
        if self._progress_bar is None:
            from tqdm import tqdm

            cols, rows = _terminal_size(self.progress)
            self._progress_bar = tqdm(total=total, file=self.progress, unit="rec", ncols=cols, nrows=rows)
        return self._progress_bar

    def _executor(self) -> Executor:
        """The run's executor: the job's worker processes (started with the job, or anew after a
        run that stopped half-way), else a local or Ray executor."""
        if self.options.executor == "processes":
            if self._processes is None:
                self._processes = ProcessExecutor(self, self.options)
            return self._processes
        return make_executor(self, self.options)

    def _release(self, executor: Executor) -> None:
        """After a run: the job's worker processes stay (for the next run; :meth:`close` stops
        them, as it closes the job's own servers) unless the run left them with shards in hand."""
        if executor is self._processes and self._processes.idle:
            return
        if executor is self._processes:
            self._processes = None
        executor.close()

    def _stop_processes(self) -> None:
        if self._processes is not None:
            self._processes.close()
            self._processes = None

    def close(self) -> None:
        """Close worker processes, engines, text model client and registry (connections, sessions)."""
        self._stop_processes()
        self.engine.close()
        self.text.close()
        self.registry.close()

    def __enter__(self) -> GenerationJob:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _terminal_size(stream: Any) -> tuple[int, int]:
    """The terminal's columns and rows, with 100 x 24 for a pseudo-terminal that reports none."""
    try:
        size = os.get_terminal_size(stream.fileno())
    except (OSError, ValueError, AttributeError):
        return 100, 24
    return size.columns or 100, size.lines or 24
