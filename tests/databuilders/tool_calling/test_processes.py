"""Worker processes (``run.executor: processes``) write what a local run writes, and a failure, a
Ctrl-C or a killed driver leaves no process behind and nothing lost."""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from fms_dgt.cli import main
from fms_dgt.databuilders.tool_calling.executors import Outcome, RunOptions
from fms_dgt.databuilders.tool_calling.interrupts import Stopped
from fms_dgt.databuilders.tool_calling.job import GenerationJob
from fms_dgt.databuilders.tool_calling.processes import ProcessExecutor
from fms_dgt.errors import ConfigError, WorkerError

REPO = Path(__file__).resolve().parents[3]
#: The bundled demo: file tools, a simulated REST API and a stdio MCP server (one per worker).
DEMO = REPO / "configs" / "demo.yaml"


def _records(out: Path) -> bytes:
    return (out / "records.jsonl").read_bytes() + b"|" + (out / "rejects.jsonl").read_bytes()


def _run(out: Path, count: int, **kwargs: Any) -> bytes:
    with GenerationJob(str(DEMO), count=count, out=out, overwrite=True, **kwargs) as job:
        job.run()
    return _records(out)


def _summary(out: Path) -> dict[str, Any]:
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    summary.pop("elapsed", None)
    summary.pop("timing", None)
    return summary


def test_worker_processes_write_the_bytes_and_summary_of_a_local_run(tmp_path: Path) -> None:
    local = _run(tmp_path / "local", 60, concurrency=1)
    with GenerationJob(str(DEMO), count=60, out=tmp_path / "procs", executor="processes", workers=2) as job:
        job.options.shard_size = 7
        job.run()
        workers = job._processes
        assert isinstance(workers, ProcessExecutor) and len(workers.workers) == 2
        processes = [w.process for w in workers.workers]
        # A second run of the same job uses the same workers; closing the job stops them.
        job.settings.output_dir = tmp_path / "again"
        job.run()
        assert job._processes is workers and [w.process for w in workers.workers] == processes
        ready = [w.ready for w in workers.workers]
    # Closing the job stops them: a worker that built its job closes it and exits cleanly; one
    # still starting (spawned on a busy machine, still importing) is ended by the SIGTERM.
    exits = [p.exitcode for p in processes]
    assert all(
        code == 0 or (code == -signal.SIGTERM and not built) for code, built in zip(exits, ready, strict=True)
    ), (
        exits,
        ready,
    )
    assert _records(tmp_path / "procs") == local
    assert _records(tmp_path / "again") == local
    assert _summary(tmp_path / "procs") == _summary(tmp_path / "local")
    assert _summary(tmp_path / "procs")["written"] > 50


def test_the_records_of_a_worker_that_dies_are_built_by_the_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    local = _run(tmp_path / "local", 40, concurrency=1)
    out = tmp_path / "procs"
    with GenerationJob(str(DEMO), count=40, out=out, executor="processes", workers=2) as job:
        job.options.shard_size = 3
        workers = job._processes
        assert isinstance(workers, ProcessExecutor)
        workers.ready()
        os.kill(workers.workers[0].process.pid, signal.SIGKILL)  # worker 1, before its first shard
        with caplog.at_level(logging.WARNING):
            summary = job.run()
    assert re.search(r"worker process 1 exited with code -9 while building records \d+\.\.\d+", caplog.text)
    assert "built by the run's own process" in caplog.text
    assert _records(out) == local
    assert summary.interrupted is False
    assert _summary(out) == _summary(tmp_path / "local")


class _Broken:
    """A job whose workers cannot build it (the driver's own build went fine)."""

    @classmethod
    def from_worker_spec(cls, spec: dict[str, Any]) -> Any:
        raise ConfigError(f"no way to build {spec['name']}")

    def worker_spec(self) -> dict[str, Any]:
        return {"name": "this job"}

    def outcome(self, index: int) -> Outcome:
        return Outcome(index, reject={"index": index, "reason": "test"})

    def follow_sources(self) -> None:
        """Nothing to follow."""


def test_a_worker_that_cannot_build_its_job_says_why() -> None:
    options = RunOptions(executor="processes", workers=1, shard_size=1)
    executor = ProcessExecutor(_Broken(), options)  # type: ignore[arg-type]
    try:
        with pytest.raises(WorkerError, match="worker process 1 failed: no way to build this job"):
            executor.ready()
    finally:
        executor.close()
    assert executor.workers == []


def test_worker_processes_keep_one_record_in_flight_unless_told() -> None:
    # a second thread per process only took turns with the interpreter lock (12% slower on the demo)
    assert RunOptions(executor="processes").in_flight() == 1
    assert RunOptions(executor="processes", concurrency=4).in_flight() == 4
    assert RunOptions().in_flight() == 8


class _Big:
    """A job whose records are big (100 kB rejects): a shard's answer does not fit in a pipe."""

    options = RunOptions(concurrency=1)
    refreshes = 0

    @classmethod
    def from_worker_spec(cls, spec: dict[str, Any]) -> Any:
        return cls()

    def worker_spec(self) -> dict[str, Any]:
        return {}

    def outcome(self, index: int) -> Outcome:
        return Outcome(index, reject={"index": index, "reason": "big", "detail": "x" * 100_000})

    def follow_sources(self) -> None:
        """Nothing to follow."""

    def close(self) -> None:
        """Nothing to close."""


def test_a_worker_killed_in_the_middle_of_sending_a_shard_does_not_hang_the_run() -> None:
    executor = ProcessExecutor(_Big(), RunOptions(executor="processes", workers=1, shard_size=2))  # type: ignore[arg-type]
    try:
        executor.ready()
        worker = executor.workers[0].process
        outcomes = executor.outcomes(range(8))
        first = next(outcomes)
        # While nobody reads, the worker builds its next shard and blocks sending its 100 kB.
        time.sleep(1.0)
        os.kill(worker.pid, signal.SIGKILL)  # type: ignore[arg-type]
        worker.join(10)
        rest: list[Outcome] = []
        reader = threading.Thread(target=lambda: rest.extend(outcomes), daemon=True)
        reader.start()
        reader.join(60)
        assert not reader.is_alive(), "the driver hung on the dead worker's half-sent answer"
    finally:
        executor.close()
    assert [o.index for o in [first, *rest]] == list(range(8))
    assert all((o.reject or {}).get("reason") == "big" for o in rest)


class _Slow(_Big):
    """A job that takes a while to build and whose records take a while, closing into a file."""

    def __init__(self, spec: dict[str, Any] | None = None) -> None:
        self.spec = spec or {}

    @classmethod
    def from_worker_spec(cls, spec: dict[str, Any]) -> Any:
        Path(spec["closed"]).with_name("building").write_text("building")
        time.sleep(spec["build"])
        return cls(spec)

    def worker_spec(self) -> dict[str, Any]:
        return self.spec

    def outcome(self, index: int) -> Outcome:
        time.sleep(self.spec.get("record", 0.0))
        return Outcome(index, reject={"index": index, "reason": "slow"})

    def close(self) -> None:
        Path(self.spec["closed"]).write_text("closed")


def test_a_worker_stopped_while_it_builds_its_job_still_closes_it(tmp_path: Path) -> None:
    spec = {"build": 1.0, "closed": str(tmp_path / "closed")}
    executor = ProcessExecutor(_Slow(spec), RunOptions(executor="processes", workers=1))  # type: ignore[arg-type]
    process = executor.workers[0].process
    _wait(lambda: (tmp_path / "building").exists(), "the worker building its job")
    executor.close()  # while the worker is still building its job
    assert process.exitcode == 0  # it stopped of itself, not killed
    assert (tmp_path / "closed").read_text() == "closed"


def test_a_stop_request_is_not_held_up_by_a_worker_busy_with_a_shard(tmp_path: Path) -> None:
    spec = {"build": 0.0, "record": 30.0, "closed": str(tmp_path / "closed")}
    options = RunOptions(executor="processes", workers=1, shard_size=1)
    executor = ProcessExecutor(_Slow(spec), options)  # type: ignore[arg-type]
    try:
        executor.ready()
        # Both shards go to the worker, whose records take 30 s: the stop is seen while waiting.
        with pytest.raises(Stopped):
            next(executor.outcomes([0, 1], stopping=lambda: True))
    finally:
        executor.close()


def _children(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False)
    return [int(p) for p in found.stdout.split()]


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return True
    return state == "Z"  # a zombie has exited; only its parent's reaping is left


def _wait(condition: Any, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"{what} did not happen in {seconds} s")


def _started(out: Path, tmp_path: Path) -> tuple[subprocess.Popen[str], list[int]]:
    """``fms-dgt run`` of the demo on worker processes, once it writes records; with the process
    trees of its workers (their own MCP servers included)."""
    command = [
        *(sys.executable, "-m", "fms_dgt.cli", "run", str(DEMO), "-n", "200000", "--out", str(out)),
        *("--executor", "processes", "--workers", "2"),
    ]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    records = out / "records.jsonl"
    _wait(lambda: records.exists() and records.stat().st_size > 0, "writing records")
    tree: list[int] = []

    def whole() -> bool:
        tree[:] = _children(process.pid)
        tree.extend(grandchild for child in list(tree) for grandchild in _children(child))
        return len(tree) >= 5  # 2 workers, their servers, the driver's server

    _wait(whole, "every worker starting its server")
    return process, tree


def test_ctrl_c_stops_the_workers_and_resume_gives_the_records_of_a_straight_run(tmp_path: Path) -> None:
    out = tmp_path / "out"
    process, tree = _started(out, tmp_path)
    os.killpg(process.pid, signal.SIGINT)  # what a terminal sends to the whole process group
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert "Traceback" not in err
    assert [line for line in err.splitlines() if not line.startswith("progress:")] == [
        "interrupted: stopped before finishing; run again with --resume to continue"
    ]
    _wait(lambda: all(_gone(pid) for pid in tree), "every worker and server exiting", 30)
    summary = json.loads((out / "summary.json").read_text())
    written = (out / "records.jsonl").read_text().splitlines()
    assert summary["interrupted"] is True and summary["written"] == len(written) > 0
    total = len(written) + summary["rejected"] + 30
    assert main(["run", str(DEMO), "-n", str(total), "--out", str(out), "--resume"]) == 0
    straight = tmp_path / "straight"
    assert main(["run", str(DEMO), "-n", str(total), "--out", str(straight)]) == 0
    assert _records(out) == _records(straight)
    assert _summary(out)["quality"] == _summary(straight)["quality"]


def test_workers_of_a_killed_driver_exit_with_their_servers(tmp_path: Path) -> None:
    process, tree = _started(tmp_path / "out", tmp_path)
    os.kill(process.pid, signal.SIGKILL)  # no chance to stop anything
    process.communicate(timeout=60)
    _wait(lambda: all(_gone(pid) for pid in tree), "every worker and server exiting", 30)
