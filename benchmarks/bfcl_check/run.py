"""BFCL's AST checker on the ``bfcl`` export of a demo run and of a run over BFCL's own tools.

Manual benchmark step, never part of the test run: bfcl-eval pulls torch (about 6 GB) and pins an
old numpy, so it lives in its own virtualenv, ``.cache/bfcl-venv`` (made on first use, with
``soundfile``, which importing the checker needs). Target: 100% of records pass, each record's
calls used as both the possible answer and the model output.

Run: ``python benchmarks/bfcl_check/run.py [--count N]`` (from the repository, in the project's
own virtualenv).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from support.runs import BFCL_TOOLS, bfcl_config, run  # noqa: E402

from fms_dgt.export.folder import export_folder  # noqa: E402

VENV = REPO / ".cache" / "bfcl-venv"
CHECK = Path(__file__).resolve().parent / "check.py"


def _venv() -> Path:
    python = VENV / "bin" / "python"
    if not (VENV / ".ready").exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "bfcl-eval", "soundfile"], check=True)
        (VENV / ".ready").touch()
    return python


def _check(python: Path, records: Path) -> dict[str, object]:
    done = subprocess.run(
        [str(python), str(CHECK), str(records)], capture_output=True, text=True, check=False
    )
    if done.returncode:
        raise SystemExit(f"the checker failed:\n{done.stderr[-2000:]}")
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000, help="records per run (default 1,000)")
    args = parser.parse_args()
    python = _venv()
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        runs = {"demo": run(REPO / "configs" / "demo.yaml", scratch / "demo", args.count)}
        if BFCL_TOOLS.is_file():
            runs["bfcl tools"] = run(bfcl_config(scratch / "bfcl", args.count), scratch / "bfcl", args.count)
        print(f"{'run':<12}{'checked':>9}{'passed':>9}{'share':>9}{'no calls':>10}")
        for name, out in runs.items():
            exported = export_folder(out, fmt="bfcl", destination=scratch / f"{name}-bfcl").destination
            result = _check(python, exported / "records.jsonl")
            checked, passed = int(str(result["checked"])), int(str(result["passed"]))
            share = 100 * passed / checked if checked else 0.0
            print(f"{name:<12}{checked:>9}{passed:>9}{share:>8.1f}%{result['skipped']!s:>10}")
            for failure in result["failures"] or []:  # type: ignore[attr-defined]
                print(f"   {failure}")


if __name__ == "__main__":
    main()
