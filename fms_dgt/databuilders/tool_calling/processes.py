"""Records built by worker processes on this machine (``run.executor: processes``).

A run whose records cost CPU (mock and simulated engines, template text, local MCP servers) is
bound by one interpreter: threads share its lock, so ``concurrency`` stops helping once a core is
busy. This executor starts ``run.workers`` processes (default: one per core beyond the first),
each building the job from the config once (its own registry, engines and stdio servers), and
hands shards of record indexes in turn to them and to the driver itself, as the Ray executor hands
them to actors. Workers send their records already made lines, with one count (tally) per shard;
the driver writes the lines in index order and merges the tallies, so the output is byte-identical
to a run of one record at a time.

The processes start when the job is built (:meth:`ProcessExecutor.start` from the job's
constructor): they build their jobs while the driver builds its own, and a run starts with them
warm. Process safety:

* Workers ignore SIGINT: a Ctrl-C reaches the whole terminal's process group, and only the driver
  decides to stop (it then stops the workers).
* The driver stops its workers with SIGTERM, on which each closes its job (its servers exit too).
* A worker whose driver died (killed, say) exits at its next wait instead of lingering with its
  servers.
* A worker that dies is an error naming it and the records it was building; what the driver wrote
  so far stays, and ``--resume`` goes on from there.

Limits declared on engines (``max_in_flight``) hold per process: each worker runs its own engines.
"""

from __future__ import annotations

import functools
import logging
import multiprocessing
import os
import queue
import signal
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
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

        Shard n goes to builder n mod (workers + 1): builder 0 is the driver, which builds its
        shard when its turn to be written comes, while each worker has its next two shards queued
        (also while it is still building its job). A worker answers its shards in the order
        received, so they are read back in index order.
        """
        builders = len(self.workers) + 1
        # At least two shards per builder, so a short run is shared too.
        size = max(1, min(self.options.shard_size, -(-len(indexes) // (2 * builders))))
        shards = [list(indexes[i : i + size]) for i in range(0, len(indexes), size)]
        ahead = 2 * builders
        for number in range(min(ahead, len(shards))):
            if number % builders:
                self.workers[number % builders - 1].tasks.put(shards[number])
        for number, shard in enumerate(shards):
            if number % builders == 0:
                yield from self.local.outcomes(shard)
                continue
            worker = self.workers[number % builders - 1]
            entries, tally = self._answer(worker, shard)
            if number + ahead < len(shards):
                worker.tasks.put(shards[number + ahead])
            yield from unpack(entries, tally)

    def ready(self) -> None:
        """Block until every worker has built its job (its first answer).

        Raises:
            WorkerError: a worker failed to build its job, or died.
        """
        for worker in self.workers:
            self._ready(worker)

    def _ready(self, worker: _Process) -> None:
        if not worker.ready:
            self._next(worker, None)
            worker.ready = True

    def _answer(self, worker: _Process, shard: Sequence[int]) -> Any:
        """The answer of ``worker`` for ``shard`` (once it is ready); an error when it failed or died."""
        self._ready(worker)
        return self._next(worker, shard)

    def _next(self, worker: _Process, shard: Sequence[int] | None) -> Any:
        """The next answer of ``worker``; an error when it failed or died."""
        while True:
            try:
                kind, payload = worker.answers.get(timeout=POLL)
            except queue.Empty:
                if not worker.process.is_alive():
                    raise WorkerError(_died(worker, shard)) from None
                continue
            if kind == "error":
                raise WorkerError(f"worker process {worker.number} failed: {payload}")
            return payload

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


def _died(worker: _Process, shard: Sequence[int] | None) -> str:
    code = worker.process.exitcode
    doing = (
        f"while building records {shard[0]}..{shard[-1]}"
        if shard
        else "while building its job from the config"
    )
    return (
        f"worker process {worker.number} exited with code {code} {doing}. The records written so "
        "far are kept: run again with --resume (with fewer --workers if the machine ran out of memory)"
    )


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
