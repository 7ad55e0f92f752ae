"""Training-grade records (issue 10): the default demo run measured against every target.

Runs ``configs/demo.yaml`` at ``-n 1000`` offline (its MCP server over stdio, every ``demo::``
call made on it) into a temporary folder, reads ``records.jsonl`` back and prints each target with
the figure measured from the file (not the run's own summary) and PASS or FAIL:

* 0 error results in records kept under ``on_call_error: reject`` (results that are errors in
  records not marked ``error_handling``);
* at least 95% of records offer a tool they do not call (distractors);
* the share of records without a call within 2 points of ``no_call_rate``;
* 0 records where two calls disagree on an entity value (same argument, different values, neither
  wired from a result) or a call disagrees with the value the record's context fixed (its city,
  country code, ids, dates);
* 0 final answers holding a JSON object;
* at least 98% distinct user turns;
* at least 1,000 records/s: measured on the local executor at the default concurrency (8) and on
  worker processes (``--executor processes``: one process per core, 1 record in flight in each,
  their defaults); the best of the two is judged, and both are printed.

The demo's MCP server is ``data/mcp/demo_server.py`` (standard library). The same tools served by
the MCP SDK's server (``data/mcp/sdk_demo_server.py``, the same answers) are timed too, on worker
processes, to show what a typical SDK server costs a run; that row is not judged.

Baselines measured in the same run: the same job at ``--concurrency 1``, and the previous
implementation (git revision ``--baseline``, default :data:`BASELINE_REV`) at the default
concurrency. Each timed run is a fresh process; records/s is records over the time of
``job.run()``, and the job's construction before it (imports, registry, server start-up and, with
worker processes, their start-up, which overlaps the driver's) is printed beside it, with the whole
command's time. The best of ``--repeat`` runs is shown, since other work on the machine only ever
slows a run down. The records of every run must be byte-identical.

Run: ``python benchmarks/bench_records.py [--count 1000] [--repeat 3] [--baseline REV]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
CONFIG = Path("configs") / "demo.yaml"
#: The implementation before the throughput work of issue 10 (the baseline of the figures).
BASELINE_REV = "248d64c"
_JSON_OBJECT = re.compile(r"\{\s*\"[^\"]*\"\s*:")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
_ENTITY_NAMES = re.compile(
    r"(^|_)(id|user|username|email|phone|city|country|country_code|company|account|customer|"
    r"order|booking|currency|timezone|date)$"
)


# --------------------------------------------------------------------------- timed runs


@dataclass(frozen=True)
class Run:
    """One timed run of the job in a fresh process."""

    seconds: float
    records: int
    rejects: int
    build: float

    @property
    def rate(self) -> float:
        return (self.records + self.rejects) / self.seconds


def worker(spec: dict[str, Any]) -> dict[str, Any]:
    """Build the job of ``spec`` (in this process) and time its run."""
    from fms_dgt.databuilders.tool_calling.job import GenerationJob

    extra = {"executor": spec["executor"]} if spec.get("executor") else {}
    constructed = time.perf_counter()
    with GenerationJob(
        spec["config"],
        count=spec["count"],
        out=spec["out"],
        overwrite=True,
        concurrency=spec["concurrency"],
        **extra,
    ) as job:
        started = time.perf_counter()
        job.run()
        seconds = time.perf_counter() - started
    out = Path(spec["out"])
    return {
        "seconds": seconds,
        "build": started - constructed,
        "records": _lines(out / "records.jsonl"),
        "rejects": _lines(out / "rejects.jsonl"),
    }


def timed(
    tree: Path,
    out: Path,
    count: int,
    concurrency: int | None,
    executor: str | None = None,
    config: Path | None = None,
) -> Run:
    """A run of the demo of ``tree`` (the package, configs and data of one revision), or of
    ``config`` with the data of ``tree``."""
    spec = {
        "config": str(config or tree / CONFIG),
        "count": count,
        "out": str(out),
        "concurrency": concurrency,
        "executor": executor,
    }
    env = {**os.environ, "PYTHONPATH": str(tree), "DGT_DATA_DIR": str(tree / "data")}
    done = subprocess.run(
        [sys.executable, __file__, "--worker", json.dumps(spec)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"the run in {tree} failed:\n{done.stderr[-3000:]}")
    return Run(**json.loads(done.stdout.strip().splitlines()[-1]))


def best(
    tree: Path,
    out: Path,
    count: int,
    concurrency: int | None,
    repeat: int,
    executor: str | None = None,
    config: Path | None = None,
) -> Run:
    """The fastest of ``repeat`` runs (the output of the last one stays in ``out``)."""
    runs = (timed(tree, out, count, concurrency, executor, config) for _ in range(repeat))
    return min(runs, key=lambda r: r.seconds)


def baseline_tree(rev: str, into: Path) -> Path | None:
    """The package, configs and data at git revision ``rev`` under ``into`` (None without git)."""
    done = subprocess.run(
        ["git", "archive", rev, "fms_dgt", "configs", "data"], cwd=REPO, capture_output=True, check=False
    )
    if done.returncode != 0:
        return None
    archive = into / "baseline.tar"
    archive.write_bytes(done.stdout)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "tree", filter="data")
    return into / "tree"


def _lines(path: Path) -> int:
    return (
        sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
        if path.exists()
        else 0
    )


# --------------------------------------------------------------------------- figures from the file


@dataclass
class Turns:
    """What the figures need of one record in the OpenAI layout."""

    user: str
    final: str
    offered: set[str]
    calls: list[tuple[str, dict[str, Any]]]
    results: list[str]
    wired: list[dict[str, Any]]
    context: dict[str, Any]
    error_handling: bool


def read_records(path: Path) -> Iterator[Turns]:
    """The records of an OpenAI-layout ``records.jsonl``, read from the layout itself."""
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        messages, meta = record["messages"], record["metadata"]
        calls = [
            c["function"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []
        ]
        finals = [m["content"] for m in messages if m["role"] == "assistant" and not m.get("tool_calls")]
        yield Turns(
            user=next(m["content"] for m in messages if m["role"] == "user"),
            final=finals[-1] if finals else "",
            offered={t["function"]["name"] for t in record.get("tools") or []},
            calls=[(c["name"], json.loads(c["arguments"])) for c in calls],
            results=[m["content"] for m in messages if m["role"] == "tool"],
            wired=list(meta.get("wired") or []),
            context=dict(meta.get("context") or {}),
            error_handling=bool(meta.get("error_handling")),
        )


def is_error(content: str) -> bool:
    """A tool message that is a failed call's error (``{"error": ...}`` alone)."""
    try:
        value = json.loads(content)
    except ValueError:
        return False
    return isinstance(value, dict) and list(value) == ["error"]


def disagreements(turns: Turns) -> list[str]:
    """Entity values two calls, or a call and the record's context, disagree on (wired ones aside)."""
    found: list[str] = []
    seen: dict[str, Any] = {}
    for position, (_, arguments) in enumerate(turns.calls):
        wired = turns.wired[position] if position < len(turns.wired) else {}
        for name, value in arguments.items():
            if name in wired or isinstance(value, (dict, list)):
                continue
            key = _CAMEL.sub("_", name).lower()
            if _ENTITY_NAMES.search(key) and seen.setdefault(key, value) != value:
                found.append(f"{name}: {seen[key]!r} and {value!r}")
            found += _against_context(key, value, turns.context)
    return found


def _against_context(key: str, value: Any, context: dict[str, Any]) -> list[str]:
    place = context.get("place@") or {}
    fixed = {
        "city": place.get("city"),
        "country_code": place.get("country_code"),
        "country": place.get("country"),
    }
    if fixed.get(key) is not None and str(value).lower() != str(fixed[key]).lower():
        return [f"{key} {value!r} is not the record's {fixed[key]!r}"]
    entity = key.removesuffix("_id")
    number = context.get(f"id.{entity}@") if key.endswith("_id") else None
    if isinstance(number, int) and str(number) not in str(value):
        return [f"{key} {value!r} is not the record's {entity} {number}"]
    dates = [str(v)[:10] for k, v in context.items() if k.startswith("date.")]
    if dates and isinstance(value, str) and _ISO_DATE.match(value) and value[:10] not in dates:
        return [f"{key} {value!r} is none of the record's dates {dates}"]
    return []


def figures(records: list[Turns], no_call_rate: float, rate: float) -> list[tuple[str, str, bool]]:
    """``(target, figure, passed)`` for every target."""
    n = len(records)
    unmarked = sum(is_error(r) for t in records if not t.error_handling for r in t.results)
    offering = sum(bool(t.offered - {name for name, _ in t.calls}) for t in records)
    no_call = sum(not t.calls for t in records) / n
    clashing = [t for t in records if disagreements(t)]
    json_finals = sum(bool(_JSON_OBJECT.search(t.final)) for t in records)
    distinct = len({t.user for t in records}) / n
    return [
        ("error results in kept records = 0", f"{unmarked}", unmarked == 0),
        ("records offering distractors >= 95%", f"{offering / n:.1%}", offering / n >= 0.95),
        (
            f"no-call share within 2 points of {no_call_rate:.0%}",
            f"{no_call:.1%}",
            abs(no_call - no_call_rate) <= 0.02,
        ),
        ("records whose calls disagree on an entity = 0", f"{len(clashing)}", not clashing),
        ("final answers holding a JSON object = 0", f"{json_finals}", json_finals == 0),
        ("distinct user turns >= 98%", f"{distinct:.1%}", distinct >= 0.98),
        ("throughput >= 1,000 records/s (best executor)", f"{rate:,.0f} records/s", rate >= 1000),
    ]


def sdk_config(into: Path) -> Path:
    """The demo config with its MCP tools served by the SDK's server (the same tools and answers)."""
    text = (REPO / CONFIG).read_text(encoding="utf-8")
    if "args: [demo_server.py]" not in text:
        raise SystemExit(f"{CONFIG} no longer starts demo_server.py: update sdk_config()")
    path = into / "demo_sdk.yaml"
    path.write_text(text.replace("args: [demo_server.py]", "args: [sdk_demo_server.py]"), encoding="utf-8")
    return path


def no_call_rate(tree: Path) -> float:
    generation = yaml.safe_load((tree / CONFIG).read_text(encoding="utf-8")).get("generation") or {}
    return float(generation.get("no_call_rate", 0.1))


# --------------------------------------------------------------------------- report


def report(count: int, repeat: int, baseline_rev: str) -> int:
    # Imported here: a worker of the baseline revision imports this file from its own tree.
    from fms_dgt.databuilders.tool_calling.processes import default_workers

    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        default = best(REPO, tmp / "c8", count, 8, repeat)
        one = best(REPO, tmp / "c1", count, 1, repeat)
        procs = best(REPO, tmp / "procs", count, None, repeat, "processes")
        sdk = best(REPO, tmp / "sdk", count, None, repeat, "processes", sdk_config(tmp))
        written = {(tmp / d / "records.jsonl").read_bytes() for d in ("c8", "c1", "procs", "sdk")}
        same = len(written) == 1
        tree = baseline_tree(baseline_rev, tmp) if baseline_rev else None
        before = best(tree, tmp / "before", count, 8, repeat) if tree is not None else None
        records = list(read_records(tmp / "c8" / "records.jsonl"))
    print(f"demo run, -n {count}, offline; best of {repeat} fresh processes each")
    print(f"  {'':<52} {'records/s':>9}  {'run':>6}  {'build':>6}  {'whole':>6}")
    rows = [
        ("--concurrency 8 (default)", default),
        ("--concurrency 1 [baseline]", one),
        (f"--executor processes ({default_workers() + 1} processes, 1 in flight each)", procs),
        ("  same, SDK server (sdk_demo_server.py), not judged", sdk),
    ]
    if before is not None:
        rows.append((f"before ({baseline_rev}), concurrency 8 [baseline]", before))
    for label, run in rows:
        whole = run.seconds + run.build
        print(f"  {label:<52} {run.rate:9,.0f}  {run.seconds:5.2f}s  {run.build:5.2f}s  {whole:5.2f}s")
    print(f"  threads over one at a time: {default.rate / one.rate:4.2f}x; ", end="")
    print(f"processes over threads: {procs.rate / default.rate:4.2f}x", end="")
    print(f"; over before: {max(default.rate, procs.rate) / before.rate:4.2f}x" if before else "")
    print(f"  records of every run byte-identical: {same}")
    print(f"  {default.records} records, {default.rejects} rejects\n")
    results = figures(records, no_call_rate(REPO), max(default.rate, procs.rate))
    for target, figure, passed in results:
        print(f"  {'PASS' if passed else 'FAIL'}  {target:<48} {figure}")
    return 0 if all(p for _, _, p in results) and same else 1


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--count", type=int, default=1000, help="records per run (default 1000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each kind, the best shown (default 3)")
    parser.add_argument("--baseline", default=BASELINE_REV, help="git revision of the baseline ('' for none)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        print(json.dumps(worker(json.loads(options.worker))))
        return
    raise SystemExit(report(options.count, max(1, options.repeat), options.baseline))


if __name__ == "__main__":
    main()
