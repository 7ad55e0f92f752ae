"""What the hardening limits cost: loads and offline generation before and after, in one run.

The hardening (bounded YAML/JSON parsing, duplicate-key checks, reference checks, bounded synthesis,
time budgets, redaction, locked output folders) must cost nothing measurable. This script checks
out the commit before the hardening and the commit that finished it into throwaway worktrees under
``.cache/bench-limits/``, then times the same three workloads on each, with the same interpreter,
in separate processes, best of five:

1. an xlam-style tool file of 3,653 distinct tools (records ``{query, tools, answers}`` with the
   tools as a JSON string, as in Salesforce's xlam-function-calling-60k), built from the ToolMind
   pools of ``../shared/corpus`` (the xlam file itself is not in the corpus);
2. the largest real OpenAPI spec of the corpus (Stripe, 4 MB; the GitHub spec is not in the
   corpus) through the ``rest`` loader;
3. offline generation: 2,000 records of the weather + API-Bank tool set on the mock engine.

A third checkout, "after + fix", is the hardening commit with the later change that runs bounded
mock calls on the caller's thread (the hardening's record time budget had sent every mock call
through a timeout thread). It also times the current checkout (which adds the record pipeline of
later issues, so its generation figure is not a measure of the limits). Target: "after" (and
"after + fix") within 10% of "before".

Run: ``python benchmarks/bench_limits.py`` (needs git and ``../shared/corpus``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
WORK = REPO / ".cache" / "bench-limits"
BEFORE = "ed5e731"  # the last commit before the hardening (issue 15) began
AFTER = "2a0d771"  # the hardening done, before the record pipeline changed
XLAM_TOOLS = 3653
# The hardening's record time budget capped every call's timeout, which sent each mock call through
# a timeout thread; FIX (later) runs bounded in-process calls on the caller's thread. "after + fix"
# is AFTER with only that change to the engine files applied.
FIX = "5cc0c81"
FIX_FILES = (
    "fms_dgt/core/tools/engines/base.py",
    "fms_dgt/core/tools/engines/mock.py",
    "fms_dgt/core/tools/engines/runner.py",
)

_SNIPPET = r"""
import json, sys, tempfile, time
from pathlib import Path
import fms_dgt
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.databuilders.tool_calling.job import GenerationJob
xlam, stripe, data, repeat = sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])

def best(fn):
    times = []
    for _ in range(repeat):
        start = time.perf_counter(); out = fn(); times.append(time.perf_counter() - start)
    return min(times), out

def xlam_load():
    with ToolRegistry.from_file(xlam) as registry:
        return len(registry)

def stripe_load():
    config = {"tools": {"registry": [{"type": "rest", "spec": stripe, "namespace": "stripe"}]}}
    with ToolRegistry.from_config(config) as registry:
        return len(registry)

def generate():
    with tempfile.TemporaryDirectory() as tmp:
        config = {
            "tools": {
                "registry": [
                    {"type": "file", "path": str(data / "weather_tools.yaml")},
                    {"type": "file", "path": str(data / "api_bank_sample.json"), "namespace": "api_bank"},
                ],
                "enrichments": [{"type": "dataflow"}],
            },
            "generation": {
                "seed": 1, "count": 2000, "output_dir": tmp,
                "scenarios": [{"name": "chain", "sampler": {"type": "tc/chain", "k": 2}}],
            },
        }
        with GenerationJob(config) as job:
            job.run()
        return sum(1 for _ in open(Path(tmp) / "records.jsonl"))

out = {"package": fms_dgt.__file__}
for name, fn in (("xlam", xlam_load), ("stripe", stripe_load), ("generation", generate)):
    seconds, size = best(fn)
    out[name] = {"seconds": seconds, "size": size}
print(json.dumps(out))
"""


def _xlam_file() -> Path:
    """An xlam-style JSONL file of 3,653 distinct tools, three per record."""
    path = WORK / f"xlam_{XLAM_TOOLS}.jsonl"
    if path.exists():
        return path
    pools = ["When2Call-query_tools.yaml", "glaive-function-calling-v2-query_tools.yaml"]
    tools: list[dict[str, Any]] = []
    for pool in pools:
        entries = yaml.safe_load((CORPUS / "toolsets" / "toolmind" / pool).read_text())
        for name, tool in entries.items():
            props = ((tool or {}).get("parameters") or {}).get("properties") or {}
            flat = {
                k: {"type": v.get("type", "string"), "description": v.get("description", "")}
                for k, v in props.items()
                if isinstance(v, dict)
            }
            tools.append(
                {
                    "name": f"{name}_{len(tools)}",
                    "description": tool.get("description", ""),
                    "parameters": flat,
                }
            )
            if len(tools) == XLAM_TOOLS:
                break
    lines = []
    for start in range(0, len(tools), 3):
        group = tools[start : start + 3]
        lines.append(json.dumps({"id": start // 3, "query": "", "tools": json.dumps(group), "answers": "[]"}))
    path.write_text("\n".join(lines) + "\n")
    return path


def _worktree(commit: str, fix: str | None = None) -> Path:
    """A throwaway checkout of ``commit``; with ``fix``, that commit's engine files applied on top."""
    target = WORK / (f"{commit}+{fix}" if fix else commit)
    if not target.exists():
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", str(target), commit],
            check=True,
            capture_output=True,
        )
        if fix:
            patch = subprocess.run(
                ["git", "-C", str(REPO), "show", fix, "--", *FIX_FILES],
                check=True,
                capture_output=True,
            ).stdout
            subprocess.run(["git", "-C", str(target), "apply"], input=patch, check=True, capture_output=True)
    return target


def _measure(root: Path, xlam: Path, stripe: Path, repeat: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    args = [sys.executable, "-c", _SNIPPET, str(xlam), str(stripe), str(REPO / "data"), str(repeat)]
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=False, cwd=root)
    if done.returncode:
        raise SystemExit(f"measuring {root} failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if not result["package"].startswith(str(root)):
        raise SystemExit(f"measured the wrong checkout: {result['package']}")
    return result


def main() -> None:
    if not CORPUS.is_dir():
        raise SystemExit(f"needs the corpus at {CORPUS}")
    WORK.mkdir(parents=True, exist_ok=True)
    xlam, stripe = _xlam_file(), CORPUS / "openapi" / "stripe" / "spec3.json"
    if not stripe.exists():
        stripe = next((CORPUS / "openapi" / "stripe").glob("*.json"))
    runs = {
        f"before ({BEFORE})": _measure(_worktree(BEFORE), xlam, stripe, 5),
        f"after ({AFTER})": _measure(_worktree(AFTER), xlam, stripe, 5),
        f"after + fix ({FIX})": _measure(_worktree(AFTER, FIX), xlam, stripe, 5),
        "current checkout": _measure(REPO, xlam, stripe, 5),
    }
    header = "".join(f"{name:>24}" for name in runs)
    print(f"{'workload':<12}{header}{'after/before':>14}{'+fix/before':>13}")
    for workload in ("xlam", "stripe", "generation"):
        row = [runs[name][workload] for name in runs]
        cells = "".join(f"{r['seconds']:>15.3f} s ({r['size']:>5})" for r in row)
        after, fixed = (row[i]["seconds"] / row[0]["seconds"] for i in (1, 2))
        print(f"{workload:<12}{cells}{after:>13.2f}x{fixed:>12.2f}x")
    print("(size: tools loaded, or records written; target: after/before <= 1.10)")
    print("(the current checkout's generation also builds distractors, text and the quality report)")


if __name__ == "__main__":
    main()
