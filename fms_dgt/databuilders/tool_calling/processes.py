"""Records built by worker processes on this machine (``run.executor: processes``).

A run whose records cost CPU (mock and simulated engines, template text, local MCP servers) is
bound by one interpreter: threads share its lock, so ``concurrency`` stops helping once a core is
busy. This executor starts ``run.workers`` processes (default: one per core beyond the first),
each building the job from the config once (its own registry, engines and stdio servers), and
hands them shards of record indexes in order, as the Ray executor hands them to actors; the
driver builds the next unclaimed shard itself whenever it would otherwise wait. Workers send their
records already made lines, with one count (tally) per shard; the driver writes the lines in index
order and merges the tallies, so the output is byte-identical to a run of one record at a time.

The processes start when the job is built (the job's constructor makes the executor): they build
their jobs while the driver builds its own, and a run starts with them warm. Process safety:

* Workers ignore SIGINT: a Ctrl-C reaches the whole terminal's process group, and only the driver
  decides to stop (it then stops the workers).
* The driver stops its workers with SIGTERM, on which each closes its job (its servers exit too).
* A worker whose driver died (killed, say) exits at its next wait instead of lingering with its
  servers.
* A worker that dies (killed, out of memory) is a warning naming it; the driver builds its shards.
  A worker that reports an error (its job cannot be built, a record raised) stops the run with a
  :class:`~fms_dgt.errors.WorkerError`; what the driver wrote so far stays, and ``--resume`` goes
  on from there.

Limits declared on engines (``max_in_flight``) hold per process: each worker runs its own engines.
"""

from __future__ import annotations

import collections
import functools
import logging
import multiprocessing
import os
import queue
import signal
import threading
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, Any

from fms_dgt.databuilders.tool_calling.executors import (
    Entry,
    LocalExecutor,
    Outcome,
    RunOptions,
    ShardBuilder,
    unpack,
)
from fms_dgt.errors import DGTError, WorkerError

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext
    from multiprocessing.process import BaseProcess

    from fms_dgt.databuilders.tool_calling.job import GenerationJob

__all__ = ["ProcessExecutor", "default_workers"]

log = logging.getLogger(__name__)

#: Seconds between a worker's checks that its driver is still alive (and the driver's, of its
#: workers) while waiting.
POLL = 1.0
#: Seconds a worker gets to close its job (servers, connections) when the run ends.
STOP_GRACE = 10.0

Factory = Callable[[Mapping[str, Any]], "GenerationJob"]


@dataclass(slots=True)
class _Process:
    """One worker: the process, its task queue (shards to build) and its answer queue."""

    number: int
    process: BaseProcess
    tasks: Any
    answers: Any
    ready: bool = False
    pending: collections.deque[int] = field(default_factory=collections.deque)


@dataclass(slots=True)
class _Run:
    """Where each shard of one :meth:`ProcessExecutor.outcomes` call is.

    Attributes:
        shards: the record indexes of each shard, in order.
        front: the next shard nobody has yet.
        owner: the worker of each shard handed out (None: the driver's own).
        answers: worker shards received and not yet written.
        mine: the driver's shards (built, or being built) not yet written.
        building: the driver's shard in progress and its outcomes still to come.
        orphans: shards of workers that died, not started by the driver yet.
    """

    shards: list[list[int]]
    front: int = 0
    owner: dict[int, _Process | None] = field(default_factory=dict)
    answers: dict[int, tuple[list[Entry], Any]] = field(default_factory=dict)
    mine: dict[int, list[Outcome]] = field(default_factory=dict)
    building: tuple[int, Generator[Outcome, None, None]] | None = None
    orphans: list[int] = field(default_factory=list)


class ProcessExecutor:
    """Records built by the driver and worker processes, shard by shard (see the module docstring).

    Args:
        job: the driver's job (its config and overrides are what every worker builds; the driver
            builds its own share of the shards with it).
        options: workers, shard size, per-process concurrency.
    """

    def __init__(self, job: GenerationJob, options: RunOptions) -> None:
        self.options = options
        self.local = LocalExecutor(job.outcome, options.in_flight(), job.follow_sources)
        context = _context()
        factory = type(job).from_worker_spec
        spec = job.worker_spec()
        count = options.workers if options.workers is not None else default_workers()
        self.workers = [self._spawn(context, n, factory, spec) for n in range(1, count + 1)]

    @staticmethod
    def _spawn(context: BaseContext, number: int, factory: Factory, spec: Mapping[str, Any]) -> _Process:
        tasks, answers = context.Queue(), context.Queue()
        process = context.Process(  # type: ignore[attr-defined]
            target=_serve,
            args=(factory, spec, tasks, answers, os.getpid()),
            name=f"fms-dgt-worker-{number}",
            daemon=True,
        )
        process.start()
        return _Process(number, process, tasks, answers)

    def outcomes(self, indexes: Sequence[int]) -> Iterator[Outcome]:
        """Every index's outcome, in the order given.

        Shards are handed out in index order: each worker keeps two queued (also while it is
        still building its job), and the driver builds the next shard nobody has whenever it
        would otherwise wait for a worker's answer, checking for answers between its records. A
        worker answers its shards in the order received; the driver writes every shard in index
        order, so it holds at most a few shards that are not yet written. The shards of a worker
        that dies are built by the driver (a warning names the worker).
        """
        builders = len(self.workers) + 1
        # About four shards per process, so a short run is shared too and the last ones even out.
        size = max(1, min(self.options.shard_size, -(-len(indexes) // (4 * builders))))
        run = _Run([list(indexes[i : i + size]) for i in range(0, len(indexes), size)])
        try:
            for number in range(len(run.shards)):
                self._hand_out(run)
                if number not in run.owner:
                    run.owner[number] = None  # the next shard nobody has: the driver's
                    run.front += 1
                if run.owner[number] is None:
                    self._own(run, number)
                    yield from run.mine.pop(number)
                else:
                    yield from self._wait_for(run, number)
        finally:
            if run.building is not None:
                run.building[1].close()

    def _hand_out(self, run: _Run) -> None:
        """Give every worker shards from the front until it has two queued."""
        for worker in self.workers:
            while len(worker.pending) < 2 and run.front < len(run.shards):
                worker.tasks.put(run.shards[run.front])
                worker.pending.append(run.front)
                run.owner[run.front] = worker
                run.front += 1

    def _own(self, run: _Run, number: int) -> None:
        """Finish the driver's shard ``number`` (started or not)."""
        if number not in run.mine:
            while run.building is not None:  # the shard in progress is written later
                self._advance(run)
            if number in run.orphans:
                run.orphans.remove(number)
            self._start(run, number)
        while run.building is not None and run.building[0] == number:
            self._advance(run)

    def _start(self, run: _Run, number: int) -> None:
        run.mine[number] = []
        run.building = (number, self.local.outcomes(run.shards[number]))

    def _advance(self, run: _Run) -> None:
        """One record of the driver's shard in progress."""
        assert run.building is not None
        number, outcomes = run.building
        outcome = next(outcomes, None)
        if outcome is None:
            run.building = None
        else:
            run.mine[number].append(outcome)

    def _step(self, run: _Run) -> bool:
        """One record of the driver's own while it waits; False when no shard is left for it."""
        if run.building is None:
            self._hand_out(run)
            if run.orphans:
                self._start(run, run.orphans.pop(0))  # a dead worker's
            elif run.front < len(run.shards):
                run.owner[run.front] = None
                self._start(run, run.front)
                run.front += 1
            else:
                return False
        self._advance(run)
        return True

    def _wait_for(self, run: _Run, number: int) -> list[Outcome]:
        """The outcomes of worker shard ``number``; the driver builds its own records meanwhile."""
        while number not in run.answers and run.owner[number] is not None:
            for worker in list(self.workers):
                self._collect(run, worker, block=False)
            owner = run.owner[number]
            if owner is not None and number not in run.answers and not self._step(run):
                self._collect(run, owner, block=True)
        if number not in run.answers:  # its worker died: the driver builds it
            self._own(run, number)
            return run.mine.pop(number)
        return unpack(*run.answers.pop(number))

    def _collect(self, run: _Run, worker: _Process, *, block: bool) -> None:
        """File ``worker``'s next answer under its shard, waiting for it when ``block``; a dead
        worker's shards become the driver's."""
        while worker.pending:
            shard = run.shards[worker.pending[0]]
            try:
                kind, payload = self._next(worker, shard, block=block)
            except _Died as dead:
                log.warning("%s; its records are built by the run's own process", dead)
                self.workers.remove(worker)
                for number in worker.pending:
                    run.owner[number] = None
                run.orphans = sorted([*run.orphans, *worker.pending])
                return
            if kind is None:
                return  # nothing yet
            if kind == "ready":
                worker.ready = True
                continue
            run.answers[worker.pending.popleft()] = payload
            return

    def ready(self) -> None:
        """Block until every worker has built its job (its first answer).

        Raises:
            WorkerError: a worker failed to build its job, or died.
        """
        for worker in self.workers:
            if not worker.ready:
                self._next(worker, None, block=True)
                worker.ready = True

    def _next(self, worker: _Process, shard: Sequence[int] | None, *, block: bool) -> tuple[str | None, Any]:
        """The next message of ``worker`` (kind, payload); ``(None, None)`` when there is none and
        ``block`` is False. Raises WorkerError when the worker failed or died."""
        while True:
            try:
                kind, payload = worker.answers.get(timeout=POLL) if block else worker.answers.get_nowait()
            except queue.Empty:
                if not worker.process.is_alive():
                    raise _Died(_died(worker, shard if worker.ready else None)) from None
                if not block:
                    return None, None
                continue
            if kind == "error":
                raise WorkerError(f"worker process {worker.number} failed: {payload}")
            return kind, payload

    def close(self) -> None:
        """Stop every worker: each closes its job (servers, connections) on SIGTERM; one that has
        not exited after :data:`STOP_GRACE` seconds is killed."""
        for worker in self.workers:
            if worker.process.is_alive():
                worker.process.terminate()
        for worker in self.workers:
            worker.process.join(STOP_GRACE)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join(STOP_GRACE)
            for q in (worker.tasks, worker.answers):
                q.close()
                q.cancel_join_thread()
        self.workers = []


def default_workers() -> int:
    """Worker processes beside the driver when ``run.workers`` is not set: one per core beyond the
    first (the cores this process may run on), at least one."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 2
    return max(1, cores - 1)


def _context() -> BaseContext:
    """Fork while this process has one thread (the workers then skip the imports), else spawn:
    forking a process with threads can copy a lock some thread held."""
    method = "fork" if threading.active_count() == 1 and os.name == "posix" else "spawn"
    return multiprocessing.get_context(method)


class _Died(WorkerError):
    """A worker process exited without a word (killed, out of memory): its shards are rebuilt."""


def _died(worker: _Process, shard: Sequence[int] | None) -> str:
    code = worker.process.exitcode
    doing = f"while building records {shard[0]}..{shard[-1]}" if shard else "while building its job"
    return f"worker process {worker.number} exited with code {code} {doing}"


# --------------------------------------------------------------------------- in the worker


def _serve(factory: Factory, spec: Mapping[str, Any], tasks: Any, answers: Any, driver: int) -> None:
    """A worker's life: build the job, answer shards until told to stop or the driver is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver decides when to stop
    signal.signal(signal.SIGTERM, functools.partial(_stop, answers))  # the job is closed on the way out
    try:
        builder = _build(factory, spec)
    except DGTError as exc:
        answers.put(("error", str(exc)))
        return
    except Exception as exc:  # any failure is reported to the driver, not lost
        answers.put(("error", f"{type(exc).__name__}: {exc}"))
        return
    try:
        answers.put(("ready", None))
        _answer_shards(builder, tasks, answers, driver)
    finally:
        builder.close()


def _stop(answers: Any, signum: int, frame: FrameType | None) -> None:
    _unsent(answers)
    raise SystemExit(0)


def _unsent(answers: Any) -> None:
    """Exit without waiting to send answers nobody will read (the queue's writer would wait for
    room in the pipe forever)."""
    answers.cancel_join_thread()


def _build(factory: Factory, spec: Mapping[str, Any]) -> ShardBuilder:
    """The worker's job; the warnings of building it are the driver's to give (once, not once per
    process)."""
    package = logging.getLogger("fms_dgt")
    level = package.level
    package.setLevel(logging.ERROR)
    try:
        return ShardBuilder(factory, spec)
    finally:
        package.setLevel(level)


def _answer_shards(builder: ShardBuilder, tasks: Any, answers: Any, driver: int) -> None:
    while True:
        try:
            shard = tasks.get(timeout=POLL)
        except queue.Empty:
            if os.getppid() != driver:  # the driver is gone: nobody will read what is built
                _unsent(answers)
                return
            continue
        try:
            answer: tuple[list[Entry], Any] = builder.build_shard(shard)
        except Exception as exc:  # reported to the driver, which stops the run
            answers.put(("error", f"{type(exc).__name__}: {exc}"))
            return
        answers.put(("shard", answer))
