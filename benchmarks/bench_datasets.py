"""``datasets`` round trip of every format (issue 16): what a trainer loads is what was written.

For each wire format, the records of a demo run are exported (``fms-dgt export``) as JSON Lines in
the plain and the arrow-safe layout and as Parquet, then loaded with ``datasets.load_dataset`` in
two throwaway virtualenvs under ``.cache/``: the newest ``datasets`` release and 2.21.0 (before 4.7,
still pinned by many trainers). Prints, per release, format and file: records given back exactly
(after ``from_arrow_safe``; target: all of them in the arrow-safe layout and Parquet) and keys
padded with null (target: 0). The plain layout in the old release is the baseline: what records
without the arrow-safe layout get.

Slow (two virtualenvs, a few minutes the first time; reused afterwards), so outside the test run:
``python benchmarks/bench_datasets.py [--count N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support.runs import read_records, run  # noqa: E402

from fms_dgt.core.tools.wire import wire_formats  # noqa: E402
from fms_dgt.export.folder import export_folder  # noqa: E402
from fms_dgt.export.layout import from_arrow_safe  # noqa: E402

RELEASES = {"newest": "datasets", "2.21.0": "datasets==2.21.0"}
CACHE = REPO / ".cache" / "bench-datasets"

#: Runs inside a release's virtualenv: loads one dataset and prints its rows as JSON Lines.
LOADER = """
import json, sys
from datasets import load_dataset
kind, path, out = sys.argv[1:4]
try:
    if kind == "parquet":
        data = load_dataset(path, split="train")
    else:
        data = load_dataset("json", data_files=path, split="train")
    with open(out, "w") as f:
        for row in data:
            f.write(json.dumps(row, default=str) + "\\n")
except Exception as exc:
    print(f"{type(exc).__name__}: {str(exc)[:200]}")
    sys.exit(3)
"""


def _venv(name: str, requirement: str) -> Path:
    folder = CACHE / name
    python = folder / "bin" / "python"
    if not (folder / ".ready").exists():
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", requirement], check=True)
        (folder / ".ready").touch()
    return python


def _version(python: Path) -> str:
    out = subprocess.run(
        [str(python), "-c", "import datasets; print(datasets.__version__)"], capture_output=True, text=True
    )
    return out.stdout.strip()


def _padded(written: Any, loaded: Any) -> int:
    """Keys the loaded value has with null that the written one does not have at all."""
    if isinstance(written, dict) and isinstance(loaded, dict):
        extra = sum(1 for k, v in loaded.items() if k not in written and v is None)
        return extra + sum(_padded(v, loaded.get(k)) for k, v in written.items())
    if isinstance(written, list) and isinstance(loaded, list):
        return sum(_padded(w, v) for w, v in zip(written, loaded, strict=False))
    return 0


def _compare(expected: list[dict[str, Any]], out: Path) -> tuple[int, int]:
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    exact = sum(1 for want, row in zip(expected, rows, strict=False) if from_arrow_safe(row) == want)
    padded = sum(_padded(want, row) for want, row in zip(expected, rows, strict=False))
    return exact, padded


def _exports(source: Path, scratch: Path, fmt: str) -> dict[str, tuple[str, Path]]:
    plain = export_folder(source, fmt=fmt, destination=scratch / f"{fmt}-plain").destination
    safe = export_folder(
        source, fmt=fmt, layout="arrow-safe", destination=scratch / f"{fmt}-safe"
    ).destination
    parquet = export_folder(source, fmt=fmt, to="parquet", destination=scratch / f"{fmt}-parquet").destination
    return {
        "jsonl plain": ("json", plain / "records.jsonl"),
        "jsonl arrow-safe": ("json", safe / "records.jsonl"),
        "parquet": ("parquet", parquet),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200, help="records of the demo run (default 200)")
    args = parser.parse_args()
    pythons = {release: _venv(release, requirement) for release, requirement in RELEASES.items()}
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        source = run(REPO / "configs" / "demo.yaml", scratch / "run", args.count)
        loader = scratch / "load.py"
        loader.write_text(LOADER)
        print(f"{'datasets':<10}{'format':<18}{'file':<18}{'exact':>12}{'null-padded':>13}")
        for release, python in pythons.items():
            for fmt in sorted(wire_formats()):
                expected = [r for r in read_records(_plain_export(source, scratch, fmt))]
                for label, (kind, path) in _exports(source, scratch / release, fmt).items():
                    out = scratch / "rows.jsonl"
                    # A cache of its own per load: datasets keys a local folder's cache by its name
                    # and card, so a folder exported again under a used name would load stale rows.
                    cache = tempfile.mkdtemp(dir=scratch)
                    done = subprocess.run(
                        [str(python), str(loader), kind, str(path), str(out)],
                        capture_output=True,
                        text=True,
                        env={**os.environ, "HF_DATASETS_CACHE": cache},
                    )
                    if done.returncode:
                        cell = f"fails: {done.stdout.strip()[:60]}"
                        print(f"{_version(python):<10}{fmt:<18}{label:<18}{cell}")
                        continue
                    exact, padded = _compare(expected, out)
                    print(
                        f"{_version(python):<10}{fmt:<18}{label:<18}{exact:>6}/{len(expected):<5}{padded:>13}"
                    )


def _plain_export(source: Path, scratch: Path, fmt: str) -> Path:
    target = scratch / "expected" / fmt
    if not (target / "records.jsonl").exists():
        export_folder(source, fmt=fmt, destination=target)
    return target


if __name__ == "__main__":
    main()
