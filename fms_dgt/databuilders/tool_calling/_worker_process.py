"""The life of one worker process of the processes executor (see ``processes.py``).

A worker talks to its driver over two one-way pipes: shards come in on ``tasks`` (``None``: stop),
messages go out on ``answers``: ``("ready", None)`` once its job is built, ``("shard", (lines,
tally))`` per shard, ``("error", text)`` when it cannot go on. It holds no other end of them, so
each side sees the other's death as the end of its pipe.

Stopping: SIGINT is ignored (a Ctrl-C reaches the whole terminal's process group; the driver
decides). SIGTERM only sets a flag, checked between records, before answering and after the job is
built, so the job is always closed on the way out (its servers exit with it). A worker whose
driver is gone (killed) notices at its next wait and leaves.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable, Mapping, Sequence
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from fms_dgt.databuilders.tool_calling.executors import ShardBuilder
from fms_dgt.errors import DGTError

if TYPE_CHECKING:
    from fms_dgt.databuilders.tool_calling.job import GenerationJob

__all__ = ["POLL", "serve"]

#: Seconds between a worker's checks that its driver is still there.
POLL = 1.0

Factory = Callable[[Mapping[str, Any]], "GenerationJob"]


def serve(
    factory: Factory,
    spec: Mapping[str, Any],
    tasks: Connection,
    answers: Connection,
    driver: int,
    inherited: Sequence[Connection] = (),
) -> None:
    """A worker's life: build the job, answer shards until told to stop or the driver is gone.

    Args:
        factory: builds the job from ``spec`` (the job class's ``from_worker_spec``).
        spec: the driver's job as a worker builds it.
        tasks: shards to build (``None``: stop).
        answers: where messages go.
        driver: the driver's process id (a different parent means the driver is gone).
        inherited: the driver's ends of other workers' pipes, copied by a fork: closed at once,
            so only their own ends keep those pipes open.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda signum, frame: stopping.set())
    for connection in inherited:
        connection.close()
    try:
        builder = _build(factory, spec)
    except Exception as exc:  # any failure is reported to the driver, not lost
        _send(answers, ("error", _reason(exc)))
        return
    try:
        if not stopping.is_set() and _send(answers, ("ready", None)):
            _answer_shards(builder, tasks, answers, driver, stopping)
    finally:
        builder.close()


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


def _answer_shards(
    builder: ShardBuilder, tasks: Connection, answers: Connection, driver: int, stopping: threading.Event
) -> None:
    while not stopping.is_set():
        shard = _next_shard(tasks, driver)
        if shard is None:
            return
        if not shard:
            continue  # nothing yet
        try:
            answer = builder.build_shard(shard, stop=stopping.is_set)
        except Exception as exc:  # reported to the driver, which stops the run
            _send(answers, ("error", _reason(exc)))
            return
        if answer is None or not _send(answers, ("shard", answer)):
            return


def _next_shard(tasks: Connection, driver: int) -> list[int] | None:
    """The next shard; ``[]`` when none came within :data:`POLL`; None to stop (asked, or the
    driver is gone)."""
    try:
        if not tasks.poll(POLL):
            return [] if os.getppid() == driver else None
        shard: list[int] | None = tasks.recv()
    except (EOFError, OSError):
        return None
    return shard


def _send(answers: Connection, message: tuple[str, Any]) -> bool:
    """Send ``message``; False when the driver is gone (its end of the pipe closed)."""
    try:
        answers.send(message)
    except (BrokenPipeError, EOFError, OSError):
        return False
    return True


def _reason(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, DGTError) else f"{type(exc).__name__}: {exc}"
