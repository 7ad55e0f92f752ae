"""Record/replay cache benchmark (issue 12).

Prints, with baselines measured in the same run:

1. A generation run of the REST example against the loopback petstore answering in 20 ms: the run
   that records (the baseline) and the same run replayed from its cache with the server stopped
   (target: replay >= 5x faster), and whether the two ``records.jsonl`` are byte-identical.
2. Sequential engine calls, live (recorded) and replayed, per second.
3. Cache size per 1,000 and per million calls (the recorded answers of section 1), and the time an
   engine takes to read a cache when it starts, per million answers (a synthetic cache of
   ``LOAD_ENTRIES`` answers of the same size).

Run: ``make bench`` or ``python benchmarks/bench_cache.py [records]`` (default 200 records).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.engines.base import CallPolicy
from fms_dgt.core.tools.engines.cache import CacheSettings, CallCache
from fms_dgt.core.tools.engines.rest import RESTToolEngine
from fms_dgt.core.tools.loaders.rest import RESTToolLoader
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.databuilders.tool_calling.job import GenerationJob

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from support.rest_server import TOKEN, serve  # noqa: E402

SPEC = REPO / "data" / "rest" / "petstore.yaml"
LATENCY = 0.020
RECORDS = 200
ENGINE_CALLS = 300
LOAD_ENTRIES = 100_000
TARGET = 5.0


def job_config(base_url: str, cache: dict[str, Any], count: int) -> dict[str, Any]:
    """configs/rest_example.yaml (pet operations, no deletes) with a cache on its engine."""
    return {
        "tools": {
            "registry": [
                {
                    "type": "rest",
                    "spec": str(SPEC),
                    "namespace": "petstore",
                    "include": {"tags": ["pets"]},
                    "exclude": {"methods": ["delete"]},
                    "base_url": base_url,
                    "engine": "petstore",
                }
            ],
            "engines": {
                "petstore": {
                    "type": "rest",
                    "auth": {"bearerAuth": {"token": TOKEN}},
                    "timeout": 10,
                    "retries": 2,
                    "cache": cache,
                }
            },
        },
        "generation": {
            "seed": 7,
            "count": count,
            "scenarios": [
                {"name": "single", "sampler": {"type": "tc/random", "k": 1}},
                {"name": "pair", "sampler": {"type": "tc/random", "k": 2}},
            ],
        },
    }


def timed_run(config: dict[str, Any], out: Path, concurrency: int | None = None) -> float:
    """Seconds of ``job.run()`` (building the registry and engines is not counted)."""
    with GenerationJob(config, out=out, concurrency=concurrency) as job:
        start = time.perf_counter()
        job.run()
        return time.perf_counter() - start


def bench_job(work: Path, count: int) -> tuple[Path, int]:
    print(f"\n1. Generation run, {count} records, loopback petstore answering in {LATENCY * 1000:.0f} ms")
    header = f"{'run':<34} {'calls':>6} {'s':>8} {'records/s':>10}"
    print(header)
    print("-" * len(header))
    folder = work / "calls"
    calls = 0
    # At one record in flight every call's latency is waited for; at the default 8 the recorded
    # run hides most of it, so replay gains less. Both are printed, each against its own baseline.
    for concurrency in (1, 8):
        folder = work / f"calls-{concurrency}"
        calls = _record_and_replay(work, folder, count, concurrency)
    return folder, calls


def _record_and_replay(work: Path, folder: Path, count: int, concurrency: int) -> int:
    cache = {"mode": "record", "path": str(folder)}
    name = f"c{concurrency}"
    with serve(latency=LATENCY) as server:
        # An untimed warm-up (imports, compiled validators), so neither timed run pays for it.
        timed_run(job_config(server.base_url, {"mode": "off"}, 10), work / f"warm-up-{name}")
        server.requests.clear()
        recorded = timed_run(
            job_config(server.base_url, cache, count), work / f"recorded-{name}", concurrency
        )
        base_url, calls = server.base_url, len(server.requests)
    replay = {**cache, "mode": "replay"}
    replayed = timed_run(job_config(base_url, replay, count), work / f"replayed-{name}", concurrency)
    same = (work / f"recorded-{name}" / "records.jsonl").read_bytes() == (
        work / f"replayed-{name}" / "records.jsonl"
    ).read_bytes()
    ratio = recorded / replayed
    label = f"--concurrency {concurrency}"
    print(f"{'record, ' + label + ' (baseline)':<34} {calls:>6} {recorded:>8.3f} {count / recorded:>10.1f}")
    print(
        f"{'replay, ' + label + ' (server down)':<34} {calls:>6} {replayed:>8.3f} {count / replayed:>10.1f}"
    )
    verdict = "yes" if ratio >= TARGET else "NO"
    print(f"   replay speed-up: {ratio:.1f}x (target >= {TARGET:.0f}x: {verdict}); byte-identical: {same}")
    return calls


def bench_engine(work: Path) -> None:
    print(
        f"\n2. Sequential engine calls ({ENGINE_CALLS}), loopback petstore answering in "
        f"{LATENCY * 1000:.0f} ms"
    )
    registry = ToolRegistry(loaders=[RESTToolLoader(str(SPEC), namespace="pets")])
    calls = [ToolCall("pets::listPets", {"limit": n % 100 + 1}, f"c{n}") for n in range(ENGINE_CALLS)]

    def run(base_url: str, mode: str) -> float:
        policy = CallPolicy(cache=CacheSettings(mode=mode, path=str(work / "engine")))
        with RESTToolEngine(registry, base_url=base_url, policy=policy) as engine:
            engine.setup("s")
            start = time.perf_counter()
            for call in calls:
                engine.execute("s", [call])
            return time.perf_counter() - start

    with serve(latency=LATENCY) as server:
        live = run(server.base_url, "record")
        base_url = server.base_url
    replay = run(base_url, "replay")
    print(
        f"record: {ENGINE_CALLS / live:>9.0f} calls/s   replay: {ENGINE_CALLS / replay:>9.0f} calls/s   "
        f"ratio {live / replay:.0f}x"
    )


def bench_size(folder: Path, calls: int, work: Path) -> None:
    print("\n3. Cache size and start-up reading")
    size = sum(p.stat().st_size for p in folder.glob("*.jsonl"))
    lines = sum(len(p.read_bytes().splitlines()) for p in folder.glob("*.jsonl"))
    per_line = size / max(lines, 1)
    print(f"recorded answers: {lines} of {calls} calls, {size:,} bytes, {per_line:.0f} bytes per answer")
    print(
        f"cache size per 1,000 calls: {per_line * 1000 / 1e3:,.0f} kB; per million calls: "
        f"{per_line * 1e6 / 1e9:.2f} GB"
    )
    synthetic = work / "synthetic"
    writer = CallCache(synthetic, mode="record", engine="bench")
    tool = Tool("listPets", "pets")
    pad = "x" * max(0, int(per_line) - 330)  # lines about as long as the recorded ones
    for n in range(LOAD_ENTRIES):
        result = ToolResult(f"c{n}", tool.qualified_name, result=[{"id": str(n), "name": pad}])
        writer.answer(tool, ToolCall(tool.qualified_name, {"n": n}), ("s", f"c{n}"), {}, lambda r=result: r)
    writer.close()
    start = time.perf_counter()
    reader = CallCache(synthetic, mode="replay", engine="bench")
    loaded = time.perf_counter() - start
    print(
        f"reading {len(reader):,} answers at start: {loaded:.2f} s "
        f"({loaded * 1e6 / LOAD_ENTRIES:.1f} s per million answers)"
    )


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else RECORDS
    print("Record/replay cache benchmarks (baseline: the recorded run, measured in the same run)")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        folder, calls = bench_job(work, count)
        bench_engine(work)
        bench_size(folder, calls, work)


if __name__ == "__main__":
    main()
