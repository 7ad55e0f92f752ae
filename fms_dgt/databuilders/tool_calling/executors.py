"""Where records are built: in this process (one at a time or several in flight), in worker
processes of this machine, or on Ray.

An executor turns record indexes into :class:`Outcome` values (a record, or the reason it was
rejected) and yields them **in index order**, whatever order they finish in, so the output is
byte-identical to a run of one record at a time for the same config and seed.

* :class:`LocalExecutor`: ``concurrency`` records in flight on threads (a run waits on models,
  APIs and servers far more than it computes); engines bound their own calls (``max_in_flight``,
  the shared back-off).
* :class:`RayExecutor` (``run.executor: ray``, the ``ray`` extra): the index range is cut into
  shards; each of ``workers`` Ray actors builds the job from the config once and builds whole
  shards; the driver writes them in order. An actor that dies is restarted and its shard retried:
  the driver writes a shard only once it has all of it, so nothing is duplicated or lost.
* ``run.executor: processes``: the same shards built by worker processes of this machine
  (:mod:`~fms_dgt.databuilders.tool_calling.processes`, which the job starts itself).
"""

from __future__ import annotations

import collections
import itertools
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from fms_dgt.databuilders.tool_calling.output import line_of
from fms_dgt.databuilders.tool_calling.summary import RunSummary
from fms_dgt.errors import ConfigError

if TYPE_CHECKING:
    from fms_dgt.databuilders.tool_calling.job import GenerationJob

__all__ = [
    "EXECUTORS",
    "Entry",
    "Executor",
    "LocalExecutor",
    "Outcome",
    "RayExecutor",
    "RunOptions",
    "ShardBuilder",
    "make_executor",
    "parse_run",
    "unpack",
]

#: The executors ``run.executor`` names.
EXECUTORS = ("local", "processes", "ray")


@dataclass(slots=True, kw_only=True)
class RunOptions:
    """The ``run:`` block of a config (command-line flags override it).

    Attributes:
        concurrency: records in flight at once in one process (each worker process and Ray worker
            too); None for the default of :meth:`in_flight`.
        executor: ``local``, ``processes`` or ``ray``.
        workers: Ray actors (default 2), or worker processes beside the driver, which builds
            records too (default: one per core beyond the first); None for the default.
        shard_size: records per shard handed to a worker process or Ray actor.
        ray_address: an existing Ray cluster (``ray.address``), else a local one is started.
    """

    concurrency: int | None = None
    executor: str = "local"
    workers: int | None = None
    shard_size: int = 256
    ray_address: str | None = None

    def in_flight(self) -> int:
        """Records in flight per process: ``concurrency``, else 1 for worker processes (they are
        for runs that compute, where a second thread only takes turns with the interpreter lock:
        on the demo, 2 in flight were 12% slower than 1 with its standard-library server and no
        faster with the SDK's) and 8 otherwise (runs that wait on the network)."""
        if self.concurrency is not None:
            return self.concurrency
        return 1 if self.executor == "processes" else 8


@dataclass(slots=True)
class Outcome:
    """What building one record gave: the record, or the reject entry; and the time it took.

    A Ray worker sends its records already made lines (``line``, see
    :func:`~fms_dgt.databuilders.tool_calling.output.line_of`) and counts them itself: such an
    outcome is ``counted``, and the last one of its shard carries the shard's ``tally``, which the
    driver merges into the run's summary. The driver is then left with writing lines, so adding
    workers adds throughput.
    """

    index: int
    record: dict[str, Any] | None = None
    reject: dict[str, Any] | None = None
    timing: dict[str, float] = field(default_factory=dict)
    line: str | None = None
    counted: bool = False
    tally: RunSummary | None = None


Builder = Callable[[int], Outcome]


class Executor(Protocol):
    """What the job asks of an executor."""

    def outcomes(self, indexes: Sequence[int], stopping: Callable[[], bool] = ...) -> Iterator[Outcome]:
        """Every index's outcome, in the order given (``stopping``: true once the run is asked
        to stop, for an executor that would otherwise wait long between outcomes)."""
        ...

    def close(self) -> None:
        """Release workers, threads and processes."""
        ...


class LocalExecutor:
    """Records built in this process, ``concurrency`` at a time (see the module docstring).

    Args:
        build: builds the outcome of one index (thread-safe).
        concurrency: records in flight.
        before_next: called in the caller's thread before each new record starts (the job follows
            changed tool sources there).
    """

    def __init__(
        self, build: Builder, concurrency: int, before_next: Callable[[], None] = lambda: None
    ) -> None:
        self.build = build
        self.concurrency = max(1, concurrency)
        self.before_next = before_next

    def outcomes(
        self, indexes: Sequence[int], stopping: Callable[[], bool] = lambda: False
    ) -> Generator[Outcome, None, None]:
        """Every index's outcome, in the order given (records are yielded one by one: the job
        checks for a stop between them, so ``stopping`` is not needed here)."""
        if self.concurrency == 1:
            for index in indexes:
                self.before_next()
                yield self.build(index)
            return
        window: collections.deque[Future[Outcome]] = collections.deque()
        pending = iter(indexes)
        with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="record") as pool:
            try:
                self._fill(pool, window, pending)
                while window:
                    outcome = window.popleft().result()
                    self._fill(pool, window, pending)
                    yield outcome
            finally:
                for future in window:
                    future.cancel()

    def _fill(
        self, pool: ThreadPoolExecutor, window: collections.deque[Future[Outcome]], pending: Iterator[int]
    ) -> None:
        # Twice the concurrency is queued so a slow record does not leave threads idle while the
        # records after it wait to be written in order.
        while len(window) < 2 * self.concurrency:
            index = next(pending, None)
            if index is None:
                return
            self.before_next()
            window.append(pool.submit(self.build, index))

    def close(self) -> None:
        """Nothing to release."""


class RayExecutor:
    """Records built by Ray actors, shard by shard (see the module docstring).

    Args:
        job: the driver's job (its config, settings and overrides are sent to every actor).
        options: workers, shard size, cluster address, per-worker concurrency.
    """

    def __init__(self, job: GenerationJob, options: RunOptions) -> None:
        self.ray = _import_ray()
        self.options = options
        if not self.ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if options.ray_address:
                kwargs["address"] = options.ray_address
            else:
                kwargs["num_cpus"] = options.workers or 2
            self.ray.init(**kwargs)
        actor = self.ray.remote(max_restarts=3, max_task_retries=3)(ShardBuilder)
        spec = job.worker_spec()
        # The job's class travels by reference: the actor rebuilds the job without this module
        # importing the job module (which imports this one).
        factory = type(job).from_worker_spec
        self.actors = [actor.remote(factory, spec) for _ in range(options.workers or 2)]
        # Each actor builds the registry from the config first; the run starts when all are ready.
        self.ray.get([a.ready.remote() for a in self.actors])

    def outcomes(
        self, indexes: Sequence[int], stopping: Callable[[], bool] = lambda: False
    ) -> Iterator[Outcome]:
        """Every index's outcome, in the order given; each actor keeps two shards queued."""
        shards = [
            list(indexes[i : i + self.options.shard_size])
            for i in range(0, len(indexes), self.options.shard_size)
        ]
        pending = iter(enumerate(shards))
        queued: dict[int, Any] = {}
        ready: dict[int, list[Outcome]] = {}
        cycle = itertools.cycle(self.actors)
        for _ in range(2 * len(self.actors)):
            self._submit(pending, queued, cycle)
        for number in range(len(shards)):
            while number not in ready:
                done, _ = self.ray.wait(list(queued.values()), num_returns=1)
                key = next(k for k, ref in queued.items() if ref == done[0])
                ready[key] = unpack(*self.ray.get(queued.pop(key)))
                self._submit(pending, queued, cycle)
            yield from ready.pop(number)

    @staticmethod
    def _submit(
        pending: Iterator[tuple[int, list[int]]], queued: dict[int, Any], cycle: Iterator[Any]
    ) -> None:
        item = next(pending, None)
        if item is not None:
            number, shard = item
            queued[number] = next(cycle).build_shard.remote(shard)

    def close(self) -> None:
        """Stop the actors (the Ray runtime stays up for the process)."""
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors = []


class ShardBuilder:
    """One job built from the config, building shards of records (a Ray actor, or the body of a
    worker process of :mod:`~fms_dgt.databuilders.tool_calling.processes`)."""

    def __init__(
        self, factory: Callable[[Mapping[str, Any]], GenerationJob], spec: Mapping[str, Any]
    ) -> None:
        self.job = factory(spec)

    def ready(self) -> bool:
        """True once the job is built (the driver waits for every actor's answer)."""
        return True

    def build_shard(
        self, indexes: Sequence[int], stop: Callable[[], bool] | None = None
    ) -> tuple[list[Entry], RunSummary] | None:
        """Each index's line (or reject entry), in order, and the shard's counts; None when
        ``stop()`` turned true between two records (the shard is dropped)."""
        executor = LocalExecutor(self.job.outcome, self.job.options.in_flight(), self.job.follow_sources)
        tally = RunSummary()
        refreshes = self.job.refreshes
        entries: list[Entry] = []
        for outcome in executor.outcomes(indexes):
            if stop is not None and stop():
                return None
            for phase, seconds in outcome.timing.items():
                tally.timing[phase] = tally.timing.get(phase, 0.0) + seconds
            if outcome.reject is not None:
                tally.add_reject(outcome.reject)
                entries.append((outcome.index, None, outcome.reject))
            else:
                assert outcome.record is not None
                tally.add_record(outcome.record)
                entries.append((outcome.index, line_of(outcome.record), None))
        tally.refreshes = self.job.refreshes - refreshes
        return entries, tally

    def close(self) -> None:
        """Close the job (its engines, servers and connections)."""
        self.job.close()


#: One record of a shard as a worker sends it: index, record line, reject entry.
Entry = tuple[int, str | None, dict[str, Any] | None]


def unpack(entries: list[Entry], tally: RunSummary) -> list[Outcome]:
    """A worker's shard as outcomes; the last one carries the shard's counts."""
    outcomes = [Outcome(i, line=line, reject=reject, counted=True) for i, line, reject in entries]
    if outcomes:
        outcomes[-1].tally = tally
    return outcomes


def _import_ray() -> Any:
    try:
        import ray  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise ConfigError(
            "the ray executor needs Ray: install it with pip install 'fms_dgt[ray]', or run with "
            "--executor local"
        ) from None
    return ray


def make_executor(job: GenerationJob, options: RunOptions) -> LocalExecutor | RayExecutor:
    """The executor ``options`` asks for (``processes``: the job starts its own, see
    :mod:`~fms_dgt.databuilders.tool_calling.processes`).

    Raises:
        ConfigError: an unknown executor, or Ray asked for but not installed.
    """
    if options.executor == "local":
        return LocalExecutor(job.outcome, options.in_flight(), job.follow_sources)
    if options.executor == "ray":
        return RayExecutor(job, options)
    if options.executor == "processes":
        raise ConfigError("the processes executor is started by the job itself: ask GenerationJob.run")
    raise ConfigError(f"unknown executor {options.executor!r}: use one of {', '.join(EXECUTORS)}")


def parse_run(block: Any, where: str = "run") -> RunOptions:
    """The ``run:`` block.

    Raises:
        ConfigError: an unknown key or a bad value (the message names it).
    """
    if block is None:
        return RunOptions()
    if not isinstance(block, Mapping):
        raise ConfigError(f"invalid {where} block: expected a mapping of concurrency, executor, workers...")
    allowed = ("concurrency", "executor", "workers", "shard_size", "ray")
    for key in block:
        if key not in allowed:
            raise ConfigError(f"unknown key {key!r} in {where}: allowed keys are {', '.join(allowed)}")
    options = RunOptions()
    for key in ("concurrency", "workers", "shard_size"):
        if key in block:
            setattr(options, key, _positive(block[key], f"{where}.{key}"))
    if "executor" in block:
        options.executor = _executor(block["executor"])
    ray = block.get("ray") or {}
    if not isinstance(ray, Mapping) or set(ray) - {"address"}:
        raise ConfigError(f"invalid {where}.ray: expected {{address: ...}}")
    options.ray_address = ray.get("address")
    return options


def _positive(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"invalid {where} {value!r}: expected a whole number of at least 1")
    return value


def _executor(value: Any) -> str:
    if value not in EXECUTORS:
        raise ConfigError(f"unknown executor {value!r}: use one of {', '.join(EXECUTORS)}")
    return str(value)
