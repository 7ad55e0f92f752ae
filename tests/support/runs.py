"""Runs whose records the export tests and benchmarks use: the demo config and a config over BFCL's tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fms_dgt.databuilders.tool_calling.job import GenerationJob

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
TEMPLATES = SHARED / "chat-templates"
BFCL_TOOLS = SHARED / "corpus" / "toolsets" / "bfcl" / "BFCL_v4_simple_python.json"


def bfcl_config(out: Path, count: int = 30) -> dict[str, Any]:
    """A run over BFCL's own tools (one namespace), one to three tools a record."""
    return {
        "tools": {"registry": [{"type": "file", "path": str(BFCL_TOOLS), "namespace": "bfcl"}]},
        "generation": {
            "seed": 5,
            "count": count,
            "output_dir": str(out),
            "scenarios": [{"name": f"k{k}", "sampler": {"type": "tc/random", "k": k}} for k in (1, 2, 3)],
        },
    }


def run(config: Any, out: Path, count: int) -> Path:
    """Run a config into ``out`` (OpenAI layout, seed 7)."""
    with GenerationJob(config, count=count, seed=7, out=out, fmt="openai") as job:
        job.run()
    return out


def read_records(folder: Path) -> list[dict[str, Any]]:
    """The records of a run's folder."""
    return [json.loads(line) for line in (folder / "records.jsonl").read_text(encoding="utf-8").splitlines()]
