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
import time
from pathlib import Path
from typing import Any

import pytest

from fms_dgt.cli import main
from fms_dgt.databuilders.tool_calling.executors import Outcome, RunOptions
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
        # A second run of the same job starts its workers anew.
        job.settings.output_dir = tmp_path / "again"
        job.run()
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

    def outcome(self, index: int) -> Outcome:
        return Outcome(index, reject={"index": index, "reason": "test"})

    def follow_sources(self) -> None:
        """Nothing to follow."""

    @classmethod
    def from_worker_spec(cls, spec: dict[str, Any]) -> Any:
        raise ConfigError(f"no way to build {spec['name']}")

    def worker_spec(self) -> dict[str, Any]:
        return {"name": "this job"}


def test_a_worker_that_cannot_build_its_job_says_why() -> None:
    options = RunOptions(executor="processes", workers=1, shard_size=1)
    executor = ProcessExecutor(_Broken(), options)  # type: ignore[arg-type]
    built: list[int] = []
    try:
        with pytest.raises(WorkerError, match="worker process 1 failed: no way to build this job"):
            for outcome in executor.outcomes([0, 1]):
                built.append(outcome.index)
        assert built == []  # both shards went to the worker; its error stops the run
    finally:
        executor.close()
    assert executor.workers == []


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
    tree = _children(process.pid)
    tree += [grandchild for child in tree for grandchild in _children(child)]
    assert len(tree) >= 5, tree  # 2 workers, their servers, the driver's server
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
