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
import contextlib
import logging
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from multiprocessing import connection
from typing import TYPE_CHECKING, Any

from fms_dgt.databuilders.tool_calling._worker_process import POLL, serve
from fms_dgt.databuilders.tool_calling.executors import Entry, LocalExecutor, Outcome, RunOptions, unpack
from fms_dgt.databuilders.tool_calling.interrupts import Stopped
from fms_dgt.errors import WorkerError

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.context import BaseContext
    from multiprocessing.process import BaseProcess

    from fms_dgt.databuilders.tool_calling.job import GenerationJob

__all__ = ["ProcessExecutor", "default_workers"]

log = logging.getLogger(__name__)

#: Seconds the workers get, together, to close their jobs (servers, connections) when the run ends.
STOP_GRACE = 10.0

Factory = Callable[[Mapping[str, Any]], "GenerationJob"]


@dataclass(slots=True)
class _Process:
    """One worker: the process and the driver's ends of its pipes (shards out, answers in)."""

    number: int
    process: BaseProcess
    tasks: Connection
    answers: Connection
    ready: bool = False
    pending: collections.deque[int] = field(default_factory=collections.deque)


@dataclass(slots=True)
class _Run:
    """Where each shard of one :meth:`ProcessExecutor.outcomes` call is.

    Attributes:
        shards: the record indexes of each shard, in order.
        stopping: true once the run is asked to stop (a Ctrl-C).
        front: the next shard nobody has yet.
        owner: the worker of each shard handed out (None: the driver's own).
        answers: worker shards received and not yet written.
        mine: the driver's shards (built, or being built) not yet written.
        building: the driver's shard in progress and its outcomes still to come.
        orphans: shards of workers that died, not started by the driver yet.
    """

    shards: list[list[int]]
    stopping: Callable[[], bool] = lambda: False
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
        self.workers: list[_Process] = []
        for number in range(1, count + 1):
            self.workers.append(self._spawn(context, number, factory, spec))

    def _spawn(
        self, context: BaseContext, number: int, factory: Factory, spec: Mapping[str, Any]
    ) -> _Process:
        task_reader, task_writer = context.Pipe(duplex=False)
        answer_reader, answer_writer = context.Pipe(duplex=False)
        # A forked worker would hold the driver's ends of its own pipes and of the earlier
        # workers' pipes: it closes them, so that each pipe ends when the driver does.
        earlier = [c for w in self.workers for c in (w.tasks, w.answers)]
        inherited = [task_writer, answer_reader, *earlier] if _forks(context) else []
        process = context.Process(  # type: ignore[attr-defined]
            target=serve,
            args=(factory, spec, task_reader, answer_writer, os.getpid(), inherited),
            name=f"fms-dgt-worker-{number}",
            daemon=True,
        )
        process.start()
        # The worker's ends live in the worker only: its death is the end of its pipe.
        task_reader.close()
        answer_writer.close()
        return _Process(number, process, task_writer, answer_reader)

    def outcomes(
        self, indexes: Sequence[int], stopping: Callable[[], bool] = lambda: False
    ) -> Iterator[Outcome]:
        """Every index's outcome, in the order given.

        Shards are handed out in index order: each worker whose job is built keeps two queued,
        and the driver builds the next shard nobody has whenever it would otherwise wait,
        checking for answers between its records. A worker answers its shards in the order
        received; the driver writes every shard in index order, so it holds at most a few shards
        that are not yet written. The shards of a worker that dies are built by the driver (a
        warning names the worker).

        Raises:
            Stopped: ``stopping()`` turned true (a Ctrl-C) while the driver waited for a worker.
            WorkerError: a worker reported a failure.
        """
        builders = len(self.workers) + 1
        # About four shards per process, so a short run is shared too and the last ones even out.
        size = max(1, min(self.options.shard_size, -(-len(indexes) // (4 * builders))))
        run = _Run([list(indexes[i : i + size]) for i in range(0, len(indexes), size)], stopping)
        try:
            for number in range(len(run.shards)):
                self._poll(run)
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
        """Give every worker whose job is built shards from the front until it has two queued."""
        for worker in list(self.workers):
            while worker.ready and len(worker.pending) < 2 and run.front < len(run.shards):
                try:
                    worker.tasks.send(run.shards[run.front])
                except OSError:  # it is gone; why, its exit code says
                    self._lose(run, worker, _died(worker, run.shards[run.front]))
                    break
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
            self._poll(run)

    def _poll(self, run: _Run) -> None:
        """Take in what the workers have sent, without waiting (between the driver's records)."""
        for worker in list(self.workers):
            self._collect(run, worker, block=False)

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
            if run.stopping():
                raise Stopped
            self._poll(run)
            owner = run.owner[number]
            if owner is not None and number not in run.answers and not self._step(run):
                self._collect(run, owner, block=True)
        if number not in run.answers:  # its worker died: the driver builds it
            self._own(run, number)
            return run.mine.pop(number)
        return unpack(*run.answers.pop(number))

    def _collect(self, run: _Run, worker: _Process, *, block: bool) -> None:
        """File ``worker``'s next answer under its shard (or note it ready), waiting for it when
        ``block``; a dead worker's shards become the driver's."""
        while worker.pending or not worker.ready:
            shard = run.shards[worker.pending[0]] if worker.pending else None
            kind, payload = self._next(worker, shard, block=block)
            if kind == _DIED:
                self._lose(run, worker, payload)
                return
            if kind is None:
                return  # nothing yet
            if kind == "ready":
                worker.ready = True
                self._hand_out(run)
                if not block:
                    continue
                return
            run.answers[worker.pending.popleft()] = payload
            return

    @property
    def idle(self) -> bool:
        """No worker has a shard in hand (the last run consumed every answer): ready for another."""
        return all(not worker.pending for worker in self.workers)

    def ready(self) -> None:
        """Block until every worker has built its job (its first answer).

        Raises:
            WorkerError: a worker failed to build its job, or died.
        """
        for worker in self.workers:
            if not worker.ready:
                kind, payload = self._next(worker, None, block=True)
                if kind == _DIED:
                    raise WorkerError(payload)
                worker.ready = True

    def _next(self, worker: _Process, shard: Sequence[int] | None, *, block: bool) -> tuple[str | None, Any]:
        """The next message of ``worker`` (kind, payload); ``(None, None)`` when there is none and
        ``block`` is False; ``(_DIED, why)`` when it exited without a word (what it had sent
        before is read first).

        Raises:
            WorkerError: the worker reported a failure.
        """
        while True:
            ready = connection.wait([worker.answers, worker.process.sentinel], POLL if block else 0)
            if worker.answers in ready:
                try:
                    kind, payload = worker.answers.recv()
                except (EOFError, OSError):
                    return _DIED, _died(worker, shard)
                if kind == "error":
                    raise WorkerError(f"worker process {worker.number} failed: {payload}")
                return kind, payload
            if ready:  # the process has exited and left nothing to read
                return _DIED, _died(worker, shard)
            if not block:
                return None, None

    def _lose(self, run: _Run, worker: _Process, why: str) -> None:
        """A worker died: its shards become the driver's."""
        log.warning("%s; its records are built by the run's own process", why)
        self.workers.remove(worker)
        worker.process.join(1)
        _close(worker)
        for number in worker.pending:
            run.owner[number] = None
        run.orphans = sorted([*run.orphans, *worker.pending])
        worker.pending.clear()

    def close(self) -> None:
        """Stop every worker and wait for each to close its job (servers, connections); those
        still there after :data:`STOP_GRACE` seconds in all are killed."""
        for worker in self.workers:
            # Unread answers are dropped (a worker sending one sees the pipe closed), then the
            # worker is told to stop, between records if it is building some.
            worker.answers.close()
            with contextlib.suppress(OSError):
                worker.tasks.send(None)
            if worker.process.is_alive():
                worker.process.terminate()
        deadline = time.monotonic() + STOP_GRACE
        for worker in self.workers:
            worker.process.join(max(0.0, deadline - time.monotonic()))
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join(1)
            worker.tasks.close()
        self.workers = []


def _close(worker: _Process) -> None:
    for end in (worker.tasks, worker.answers):
        end.close()


def default_workers() -> int:
    """Worker processes beside the driver when ``run.workers`` is not set: one per core beyond the
    first (the cores this process may run on), at least one."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 2
    return max(1, cores - 1)


def _context() -> BaseContext:
    """Fork on Linux while this process has one thread (the workers then skip the imports), else
    spawn: forking a process with threads can copy a lock some thread held, and macOS frameworks
    are not safe to fork. Spawned workers import the caller's main module again, so a script
    running a job on worker processes keeps its work under ``if __name__ == "__main__":``."""
    single = threading.active_count() == 1
    return multiprocessing.get_context("fork" if single and sys.platform == "linux" else "spawn")


def _forks(context: BaseContext) -> bool:
    return context.get_start_method() == "fork"


#: The kind of :meth:`ProcessExecutor._next`'s answer for a worker that exited without a word
#: (killed, out of memory): its shards are built again by the driver.
_DIED = "died"


def _died(worker: _Process, shard: Sequence[int] | None) -> str:
    worker.process.join(1)  # its pipe can end a moment before it is gone
    code = worker.process.exitcode
    doing = f"while building records {shard[0]}..{shard[-1]}" if shard else "while building its job"
    return f"worker process {worker.number} exited with code {code} {doing}"
