"""Export benchmarks (issue 16: trainer-ready records).

Prints, with baselines measured in the same run:

1. ``fms-dgt export`` of 100,000 records (a demo run's records repeated) from the run's layout to
   every format: records per second, the best of ``--repeat`` rounds over the formats (target: at
   least 20,000/s), and CPU time per record, against

   * the implementation before the export was made fast (commit ``BEFORE``, checked out into a
     throwaway worktree under ``.cache/bench-export/``) on the first ``--before-count`` records (its
     cost per record does not depend on the count, and all of them would take minutes);
   * a plain ``json.loads`` + ``json.dumps`` of the first 10,000 lines in one process, best of
     three (the floor of a converter that parses and writes every record in one process);

   and whether the output is the same bytes as before: the first ``--before-count`` records of the
   demo run and all the records of a run over BFCL's tools, every format. Exports run in a fresh
   interpreter per implementation (the export forks its workers only from a process without other
   threads, and the runs that make the records leave the MCP event loop running).
2. Every record of a demo run and of a run over BFCL's tools, adapted to each shared chat template's
   family and rendered through it (needs the ``templates`` extra and ../shared): the share that
   renders with everything in it (target: 100%), double-encoded arguments (target: 0) and calls
   lost (target: 0).

Run: ``python benchmarks/bench_export.py [--count N] [--repeat R] [--before-count M]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support.runs import BFCL_TOOLS, TEMPLATES, bfcl_config, read_records, run  # noqa: E402

from fms_dgt.core.tools.wire import wire_formats  # noqa: E402
from fms_dgt.export.records import convert_record  # noqa: E402

SEED_RECORDS = 1000
TARGET = 20_000
BEFORE = "248d64c"  # the last commit before the export was made fast
WORK = REPO / ".cache" / "bench-export"

# Run in a fresh interpreter with PYTHONPATH set to a checkout: export each folder to each format.
_SNIPPET = r"""
import json, resource, sys, time
from pathlib import Path
import fms_dgt
from fms_dgt.export.folder import export_folder
def cpu():
    own, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime
folders, formats = json.loads(sys.argv[1]), sys.argv[2].split(",")
repeat, out = int(sys.argv[3]), Path(sys.argv[4])
result = {"package": fms_dgt.__file__, "exports": {}}
# Round after round over the formats: a burst of other work on the machine spoils one export of each.
for _ in range(repeat):
    for name, folder in folders.items():
        for fmt in formats:
            dest = out / name / fmt
            start, used = time.perf_counter(), cpu()
            summary = export_folder(folder, fmt=fmt, destination=dest, overwrite=True)
            seconds, used = time.perf_counter() - start, cpu() - used
            file = str(dest / "records.jsonl")
            measured = {"seconds": seconds, "cpu": used, "written": summary.written, "file": file}
            best = result["exports"].setdefault(f"{name}/{fmt}", measured)
            if seconds < best["seconds"]:
                result["exports"][f"{name}/{fmt}"] = measured
print(json.dumps(result))
"""


def _worktree(commit: str) -> Path:
    target = WORK / commit
    if not target.exists():
        WORK.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", str(target), commit],
            check=True,
            capture_output=True,
        )
    return target


def _exports(root: Path, folders: dict[str, Path], repeat: int, out: Path) -> dict[str, Any]:
    """Every folder exported to every format by the checkout at ``root``, in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    named = json.dumps({k: str(v) for k, v in folders.items()})
    args = [sys.executable, "-c", _SNIPPET, named, ",".join(sorted(wire_formats())), str(repeat), str(out)]
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=False, cwd=root)
    if done.returncode:
        raise SystemExit(f"exporting with {root} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if not result["package"].startswith(str(root)):
        raise SystemExit(f"measured the wrong checkout: {result['package']}")
    exports: dict[str, Any] = result["exports"]
    return exports


def _folder(path: Path, lines: list[bytes]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "records.jsonl").write_bytes(b"".join(lines))
    return path


def _head(path: str, count: int) -> bytes:
    with open(path, "rb") as handle:
        return b"".join(handle.readline() for _ in range(count))


def _floor(lines: list[bytes]) -> float:
    """Records per second of a plain json.loads + json.dumps of each line, best of three."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for line in lines:
            json.dumps(json.loads(line), ensure_ascii=False)
        best = min(best, time.perf_counter() - start)
    return len(lines) / best


def bench_conversion(demo: Path, bfcl: Path | None, count: int, before_count: int, repeat: int) -> None:
    source = (demo / "records.jsonl").read_bytes().splitlines(keepends=True)
    lines = [source[i % len(source)] for i in range(count)]
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        big = _folder(tmp / "big", lines)
        head = _folder(tmp / "head", lines[:before_count])
        small = {"head": head, **({"bfcl": bfcl} if bfcl else {})}
        floor = _floor(lines[: min(count, 10_000)])
        mean = sum(map(len, lines)) // count
        print(f"\n1. exporting {count:,} records (mean line {mean:,} bytes), best of {repeat}; ", end="")
        print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} before the exports")
        before = _exports(_worktree(BEFORE), small, 1, tmp / "before")
        now_small = _exports(REPO, small, 1, tmp / "now")
        now = _exports(REPO, {"big": big}, repeat, tmp / "now")
        _table(count, before_count, floor, before, now_small, now, bool(bfcl))


def _table(count: int, head: int, floor: float, before: Any, small: Any, now: Any, bfcl: bool) -> None:
    compared = "those records and the BFCL run's" if bfcl else "those records"
    print(f"   before: {BEFORE} on the first {head:,} records; same bytes: {compared}, before and now")
    print("   CPU: microseconds of CPU time per record, every process of the export counted")
    print(
        f"   {'format':<18}{'before/s':>10}{'now/s':>10}{'x before':>10}{'x floor':>9}{'CPU before':>12}",
        end="",
    )
    print(f"{'CPU now':>9}  {'same bytes':<12}target >= {TARGET:,}/s")
    print(f"   {'json loads+dumps':<18}{'':>10}{floor:>10,.0f}{'':>10}{1.0:>9.2f}{'':>12}{1e6 / floor:>9.0f}")
    for fmt in sorted(wire_formats()):
        old, new = before[f"head/{fmt}"], now[f"big/{fmt}"]
        old_rate, rate = old["written"] / old["seconds"], new["written"] / new["seconds"]
        same = _head(new["file"], head) == Path(old["file"]).read_bytes()
        if bfcl:
            same = same and _same(small[f"bfcl/{fmt}"]["file"], before[f"bfcl/{fmt}"]["file"])
        print(
            f"   {fmt:<18}{old_rate:>10,.0f}{rate:>10,.0f}{rate / old_rate:>10.1f}{rate / floor:>9.2f}"
            f"{1e6 * old['cpu'] / old['written']:>12.0f}{1e6 * new['cpu'] / new['written']:>9.0f}  "
            f"{'yes' if same else 'NO':<12}{'ok' if rate >= TARGET else 'BELOW TARGET'}"
        )


def _same(one: str, other: str) -> bool:
    return Path(one).read_bytes() == Path(other).read_bytes()


def bench_templates(records: list[dict[str, Any]]) -> None:
    try:
        from fms_dgt.core.tools.wire.families import detect
        from fms_dgt.export.templates import check_record
    except ImportError:
        return
    if not TEMPLATES.is_dir():
        print("\n2. skipped: ../shared/chat-templates is absent")
        return
    print(f"\n2. {len(records)} records through each shared template (adapted to its family)")
    print(f"   {'template':<34}{'family':<13}{'rendered ok':>12}{'double-enc.':>12}{'calls lost':>11}")
    for path in sorted(TEMPLATES.glob("*.jinja")):
        template = path.read_text(encoding="utf-8")
        family = detect(template).name
        problems: Counter[str] = Counter()
        clean = 0
        for record in records:
            found = check_record(convert_record(record, fmt="hf", family=family), template)
            clean += not found
            problems.update(p.split(":")[0] for p in found)
        share = 100 * clean / len(records)
        print(
            f"   {path.name:<34}{family:<13}{share:>11.1f}%{problems['double-encoded']:>12}"
            f"{problems['call lost']:>11}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000, help="records to export (default 100,000)")
    parser.add_argument(
        "--repeat", type=int, default=2, help="exports per format, the best counts (default 2)"
    )
    parser.add_argument(
        "--before-count",
        type=int,
        default=3_000,
        help="records the old implementation exports (default 3,000)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        demo = run(REPO / "configs" / "demo.yaml", Path(scratch) / "demo", SEED_RECORDS)
        records = read_records(demo)
        bfcl = None
        if BFCL_TOOLS.is_file():
            bfcl = Path(scratch) / "bfcl"
            records += read_records(run(bfcl_config(bfcl), bfcl, SEED_RECORDS))
        bench_conversion(demo, bfcl, args.count, min(args.before_count, args.count), args.repeat)
        bench_templates(records)


if __name__ == "__main__":
    main()
