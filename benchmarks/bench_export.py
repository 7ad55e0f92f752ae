"""Export benchmarks (issue 16: trainer-ready records).

Prints, with a baseline measured in the same run:

1. Converting 100,000 records (a demo run's records repeated) from the run's layout to every format:
   records per second (target: at least 20,000/s) against the floor any converter pays, a plain
   ``json.loads`` + ``json.dumps`` of the same lines.
2. Every record of a demo run and of a run over BFCL's tools, adapted to each shared chat template's
   family and rendered through it (needs the ``templates`` extra and ../shared): the share that
   renders with everything in it (target: 100%), double-encoded arguments (target: 0) and calls
   lost (target: 0).

Run: ``python benchmarks/bench_export.py [--count N]``.
"""

from __future__ import annotations

import argparse
import json
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
from fms_dgt.export.folder import export_folder  # noqa: E402
from fms_dgt.export.records import convert_record  # noqa: E402

SEED_RECORDS = 1000


def _lines(folder: Path, count: int) -> list[str]:
    source = (folder / "records.jsonl").read_text(encoding="utf-8").splitlines()
    return [source[i % len(source)] for i in range(count)]


def _rate(count: int, seconds: float) -> str:
    return f"{count / seconds:>10,.0f}/s"


def bench_conversion(folder: Path, count: int) -> None:
    lines = _lines(folder, count)
    start = time.perf_counter()
    for line in lines:
        json.dumps(json.loads(line), ensure_ascii=False)
    baseline = time.perf_counter() - start
    print(f"\n1. converting {count:,} records (mean line {sum(map(len, lines)) // count:,} characters)")
    print(f"   {'format':<18}{'records/s':>13}{'x baseline':>12}   target >= 20,000/s")
    print(f"   {'json loads+dumps':<18}{_rate(count, baseline)}{1.0:>12.2f}")
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / "run"
        source.mkdir()
        (source / "records.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        for fmt in sorted(wire_formats()):
            start = time.perf_counter()
            summary = export_folder(source, fmt=fmt, destination=Path(scratch) / fmt)
            seconds = time.perf_counter() - start
            ok = "ok" if count / seconds >= 20_000 else "BELOW TARGET"
            print(f"   {fmt:<18}{_rate(summary.written, seconds)}{baseline / seconds:>12.2f}   {ok}")


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
    parser.add_argument("--count", type=int, default=100_000, help="records to convert (default 100,000)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        demo = run(REPO / "configs" / "demo.yaml", Path(scratch) / "demo", SEED_RECORDS)
        records = read_records(demo)
        if BFCL_TOOLS.is_file():
            out = Path(scratch) / "bfcl"
            records += read_records(run(bfcl_config(out), out, SEED_RECORDS))
        bench_conversion(demo, args.count)
        bench_templates(records)


if __name__ == "__main__":
    main()
