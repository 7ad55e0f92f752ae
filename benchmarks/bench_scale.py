"""Scale-out figures (issue: concurrency, Ray, record/replay): ratios measured in one run.

1. **Concurrency**: the job with its text written by a loopback OpenAI-compatible stand-in (in a
   process of its own, as an endpoint is) that answers in 50 ms (three requests per record):
   records/s at ``--concurrency 1`` (the baseline) and 8, 16, 32; output byte-identical.
   Target: 32 >= 20x the baseline.
2. **Ray**: the offline weather + API-Bank job (mock engine, CPU-bound) with ``--executor ray``
   on 1 worker (the baseline) and 2 workers; output byte-identical to the local executor.
   Target: 2 workers >= 1.6x one worker.
3. **Per-worker rate with a 200 ms model** (for docs/scale.md): records/s of one process at
   ``--concurrency 32`` when each model request takes 200 ms.
4. **Driver merge cost**: records/s the driver writes when outcomes arrive (writing in index order,
   redaction, summary and quality report), from records already built.

Run: ``python benchmarks/bench_scale.py`` (Ray needs the ``ray`` extra: ``pip install 'fms_dgt[ray]'``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RAY_COUNT = 6000
sys.path.insert(0, str(REPO / "tests"))

from support.chat_server import serve  # noqa: E402

from fms_dgt.databuilders.tool_calling.checks import prompt  # noqa: E402
from fms_dgt.databuilders.tool_calling.job import GenerationJob  # noqa: E402


def _config(out: Path, count: int, text: dict[str, Any] | None = None) -> dict[str, Any]:
    generation: dict[str, Any] = {
        "seed": 1,
        "count": count,
        "output_dir": str(out),
        "no_call_rate": 0.0 if text else 0.1,
        "scenarios": [
            {"name": "chain", "weight": 2, "sampler": {"type": "tc/chain", "k": 2}},
            {"name": "parallel", "sampler": {"type": "tc/random", "k": 2}},
        ],
    }
    if text:
        generation["text"] = text
    return {
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
        "generation": generation,
    }


def _run(config: dict[str, Any], **kwargs: Any) -> tuple[float, bytes, int]:
    with GenerationJob(config, **kwargs) as job:
        summary = job.run()
    out = Path(config["generation"]["output_dir"])
    return summary.elapsed, (out / "records.jsonl").read_bytes(), summary.written + summary.rejected


def _model(delay: float) -> Any:
    def reply(body: dict[str, Any]) -> Any:
        time.sleep(delay)
        if body["messages"][0]["content"] == prompt("check"):
            return {"verdict": "pass", "reason": "fits"}
        return "Could you look that up for me and tell me what you find?"

    return reply


@contextmanager
def _model_process(delay: float) -> Iterator[str]:
    """The stand-in in a process of its own, as a model endpoint is: in the job's process its
    request handling would take turns with the job for the interpreter. Yields its base URL."""
    command = [sys.executable, __file__, "--serve", str(delay)]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None and proc.stdin is not None
        try:
            yield proc.stdout.readline().strip()
        finally:
            proc.stdin.close()
            proc.wait(timeout=10)


def _serve_until_stdin_closes(delay: float) -> None:
    with serve(_model(delay)) as server:
        print(server.url, flush=True)
        sys.stdin.read()


def bench_concurrency(tmp: Path) -> None:
    print("1. concurrency, text model answering in 50 ms (3 requests per record)")
    with _model_process(0.05) as url:
        text = {"type": "llm", "base_url": url, "model": "stand-in"}
        base_seconds, reference, base_count = _run(_config(tmp / "c1", 40, text), concurrency=1)
        base = base_count / base_seconds
        print(f"   concurrency  1: {base:8.1f} records/s (baseline, {base_count} records)")
        for concurrency in (8, 16, 32):
            count = 40 * concurrency // 2
            seconds, data, done = _run(_config(tmp / f"c{concurrency}", count, text), concurrency=concurrency)
            same = data[: len(reference)] == reference
            rate = done / seconds
            print(
                f"   concurrency {concurrency:2d}: {rate:8.1f} records/s = {rate / base:5.1f}x "
                f"({done} records; first 40 byte-identical: {same})"
            )


def bench_ray(tmp: Path) -> None:
    print(f"2. Ray executor, offline mock job (CPU-bound), {RAY_COUNT:,} records")
    try:
        import ray
    except ImportError:
        print("   skipped: pip install 'fms_dgt[ray]'")
        return
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        _, local, _ = _run(_config(tmp / "local", RAY_COUNT), concurrency=1)
        rates = {}
        for workers in (1, 2):
            config = _config(tmp / f"ray{workers}", RAY_COUNT)
            config["run"] = {"executor": "ray", "workers": workers, "concurrency": 1, "shard_size": 250}
            seconds, data, done = _run(config)
            rates[workers] = done / seconds
            print(
                f"   {workers} worker{'s' if workers > 1 else ' '}: {rates[workers]:8.1f} records/s "
                f"(byte-identical to the local executor: {data == local})"
            )
        print(f"   2 workers / 1 worker: {rates[2] / rates[1]:.2f}x (target >= 1.6x)")
    finally:
        ray.shutdown()


def bench_per_worker(tmp: Path) -> None:
    print("3. one process, text model answering in 200 ms, --concurrency 32")
    with _model_process(0.2) as url:
        text = {"type": "llm", "base_url": url, "model": "stand-in"}
        seconds, _, done = _run(_config(tmp / "w200", 256, text), concurrency=32)
    print(f"   {done / seconds:8.1f} records/s per worker ({done} records, {seconds:.1f} s)")


def bench_merge(tmp: Path) -> None:
    print("4. driver merge: what the driver does per record once workers have built it")
    seconds, _, done = _run(_config(tmp / "built", 3000), concurrency=1)
    records = [json.loads(x) for x in (tmp / "built" / "records.jsonl").read_text().splitlines()]
    import pickle

    from fms_dgt.databuilders.tool_calling.output import OutputFolder, line_of
    from fms_dgt.databuilders.tool_calling.summary import RunSummary

    # Before: the driver received records and serialised, redacted and counted each one.
    folder = OutputFolder(tmp / "merged-records")
    folder.open()
    summary = RunSummary()
    started = time.perf_counter()
    for record in pickle.loads(pickle.dumps(records)):
        folder.add_record(record)
        summary.add_record(record)
    before = time.perf_counter() - started
    folder.close()
    # Now: workers send lines and one tally per 256-record shard; the driver writes and merges.
    shards = []
    for start in range(0, len(records), 256):
        tally = RunSummary()
        for record in records[start : start + 256]:
            tally.add_record(record)
        shards.append(pickle.dumps(([line_of(r) for r in records[start : start + 256]], tally)))
    folder = OutputFolder(tmp / "merged-lines")
    folder.open()
    summary = RunSummary()
    started = time.perf_counter()
    for shard in shards:
        lines, tally = pickle.loads(shard)
        for line in lines:
            folder.add_record_line(line)
        summary.merge(tally)
    after = time.perf_counter() - started
    folder.close()
    same = (tmp / "merged-lines" / "records.jsonl").read_bytes() == (
        tmp / "merged-records" / "records.jsonl"
    ).read_bytes()
    print(f"   building (one process): {done / seconds:8.1f} records/s")
    print(f"   merging records (before):  {len(records) / before:8.1f} records/s")
    print(f"   merging lines + tallies:   {len(records) / after:8.1f} records/s (same bytes: {same})")


SECTIONS = {
    "concurrency": "bench_concurrency",
    "ray": "bench_ray",
    "worker": "bench_per_worker",
    "merge": "bench_merge",
}


def main() -> None:
    """Every section, or those named on the command line (concurrency, ray, worker, merge)."""
    if sys.argv[1:2] == ["--serve"]:
        _serve_until_stdin_closes(float(sys.argv[2]))
        return
    print(f"load average: {os.getloadavg()[0]:.2f}")
    wanted = sys.argv[1:] or list(SECTIONS)
    with tempfile.TemporaryDirectory() as name:
        for section in wanted:
            globals()[SECTIONS[section]](Path(name))


if __name__ == "__main__":
    main()
