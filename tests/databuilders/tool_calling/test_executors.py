"""Records in flight at once and on Ray come out in index order, byte-identical to one at a time."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from fms_dgt.cli import main
from fms_dgt.databuilders.tool_calling.executors import LocalExecutor, Outcome, parse_run
from fms_dgt.databuilders.tool_calling.job import GenerationJob
from fms_dgt.errors import ConfigError

REPO = Path(__file__).resolve().parents[3]


def _config(tmp_path: Path, **run: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "tools": {
            "registry": [
                {"type": "file", "path": str(REPO / "data" / "weather_tools.yaml")},
                {
                    "type": "file",
                    "path": str(REPO / "data" / "api_bank_sample.json"),
                    "namespace": "api_bank",
                },
            ],
            "enrichments": [{"type": "dataflow"}],
        },
        "generation": {
            "seed": 9,
            "count": 60,
            "output_dir": str(tmp_path / "out"),
            "scenarios": [
                {"name": "chain", "sampler": {"type": "tc/chain", "k": 2}},
                {"name": "pair", "sampler": {"type": "tc/random", "k": 2}},
            ],
        },
    }
    if run:
        config["run"] = run
    return config


def _bytes(config: dict[str, Any], out: Path, **kwargs: Any) -> bytes:
    with GenerationJob(config, out=out, **kwargs) as job:
        job.run()
    return (out / "records.jsonl").read_bytes() + b"|" + (out / "rejects.jsonl").read_bytes()


def _summary(out: Path) -> dict[str, Any]:
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    assert summary["written"] > 0
    return summary


def test_any_concurrency_writes_the_same_bytes(tmp_path: Path) -> None:
    one = _bytes(_config(tmp_path), tmp_path / "c1", concurrency=1)
    assert _bytes(_config(tmp_path), tmp_path / "c7", concurrency=7) == one
    assert _bytes(_config(tmp_path, concurrency=3), tmp_path / "cfg3") == one


def test_outcomes_come_in_index_order_whatever_order_they_finish_in() -> None:
    finished: list[int] = []
    lock = threading.Lock()

    def build(index: int) -> Outcome:
        time.sleep(0.002 * (index % 5))  # later indexes often finish first
        with lock:
            finished.append(index)
        return Outcome(index, record={"index": index})

    indexes = list(range(40))
    out = [o.index for o in LocalExecutor(build, 8).outcomes(indexes)]
    assert out == indexes and finished != indexes


def test_records_in_flight_overlap_their_waiting(tmp_path: Path) -> None:
    """With a slow text model, several records in flight take a fraction of the time of one."""
    from support.chat_server import serve

    from fms_dgt.databuilders.tool_calling.checks import prompt

    def reply(body: dict[str, Any]) -> Any:
        time.sleep(0.05)
        if body["messages"][0]["content"] == prompt("check"):
            return {"verdict": "pass", "reason": "fits"}
        return "A request a person would write."

    with serve(reply) as server:
        config = _config(tmp_path)
        config["generation"].update(
            count=16, no_call_rate=0, text={"type": "llm", "base_url": server.url, "model": "m"}
        )
        timings = {}
        for concurrency in (1, 8):
            started = time.perf_counter()
            _bytes(config, tmp_path / f"llm{concurrency}", concurrency=concurrency)
            timings[concurrency] = time.perf_counter() - started
    assert (tmp_path / "llm1" / "records.jsonl").read_bytes() == (
        tmp_path / "llm8" / "records.jsonl"
    ).read_bytes()
    # 16 records x 3 model requests x 50 ms is at least 2.4 s one at a time.
    assert timings[1] >= 2.4 and timings[8] < timings[1] / 2, timings


def test_bad_run_blocks_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown key 'workerz' in run.*\(at run\)"):
        GenerationJob(_config(tmp_path, workerz=2))
    with pytest.raises(ConfigError, match=r"invalid run\.concurrency 0"):
        parse_run({"concurrency": 0})
    with pytest.raises(ConfigError, match="unknown executor 'dask'"):
        parse_run({"executor": "dask"})


def test_usage_errors_for_the_run_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["run", str(REPO / "configs" / "demo.yaml"), "--concurrency", "0"])
    assert info.value.code == 2 and "--concurrency must be 1 or more" in capsys.readouterr().err


def test_the_ray_executor_writes_the_same_bytes_and_survives_a_dead_worker(tmp_path: Path) -> None:
    ray = pytest.importorskip("ray")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        local = _bytes(_config(tmp_path), tmp_path / "local", concurrency=1)
        config = _config(tmp_path, executor="ray", workers=2, shard_size=7)
        assert _bytes(config, tmp_path / "ray") == local
        # Workers count their shards; the merged summary is the one the local run wrote.
        assert _summary(tmp_path / "ray") == _summary(tmp_path / "local")
        # A worker killed in the middle of a shard is restarted and its shard built again (a
        # longer run, so that the killer finds a shard in progress on a busy machine too).
        config["run"]["shard_size"] = 20
        longer = _bytes(_config(tmp_path), tmp_path / "local-longer", concurrency=1, count=300)
        killed: list[int] = []
        killer = threading.Thread(target=_kill_a_worker, args=(killed,), daemon=True)
        killer.start()
        assert _bytes(config, tmp_path / "ray-killed", count=300) == longer
        assert _summary(tmp_path / "ray-killed") == _summary(tmp_path / "local-longer")
        killer.join(timeout=5)
        assert killed, "a worker was killed during the run"
        # --resume works across executors: a local run resumed on Ray.
        partial = _config(tmp_path)
        _bytes(
            {**partial, "generation": {**partial["generation"], "count": 25}},
            tmp_path / "mixed",
            concurrency=1,
        )
        with GenerationJob(config, out=tmp_path / "mixed", resume=True) as job:
            job.run()
        assert (tmp_path / "mixed" / "records.jsonl").read_bytes() + b"|" + (
            tmp_path / "mixed" / "rejects.jsonl"
        ).read_bytes() == local
    finally:
        ray.shutdown()


def _kill_a_worker(killed: list[int]) -> None:
    """Kill one Ray actor process of the executor (Ray titles it ``ray::ShardBuilder...``) mid-shard."""
    import subprocess

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = subprocess.run(
            ["pgrep", "-f", "ray::ShardBuilder.build_shard"], capture_output=True, text=True
        )
        pids = [int(p) for p in found.stdout.split()]
        if pids:
            os.kill(pids[0], 9)
            killed.append(pids[0])
            return
        time.sleep(0.05)
