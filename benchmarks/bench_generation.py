"""Generation-job and wire-projection benchmarks (issue: engines, wire formats, run job).

Prints, with baselines measured in the same run:

1. The offline pipeline (mock engine) on the demo tool set: scenarios per second on one core
   (target: at least 1,000/s) and how the time splits between sampling, argument synthesis,
   execution, validation and writing. Baseline: serialising the same number of records with
   ``json.dumps`` alone (the floor any writer pays).
2. Wire projection of 10,000 tools to each provider format (target: under 1 s each). Baseline:
   ``copy.deepcopy`` of the same tools' schemas.

Run: ``python benchmarks/bench_generation.py``.
"""

from __future__ import annotations

import copy
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.wire import FORMATS, project_tools
from fms_dgt.databuilders.tool_calling.job import RECORDS, GenerationJob

REPO = Path(__file__).resolve().parents[1]
COUNT = 5000


def _config(out: Path) -> dict[str, Any]:
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
        "generation": {
            "seed": 1,
            "count": COUNT,
            "output_dir": str(out),
            "scenarios": [
                {"name": "chain", "weight": 2, "sampler": {"type": "tc/chain", "k": 2}},
                {"name": "parallel", "sampler": {"type": "tc/random", "k": 3}},
            ],
        },
    }


def bench_pipeline() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        with GenerationJob(_config(out)) as job:
            start = time.perf_counter()
            summary = job.run()
            elapsed = time.perf_counter() - start
        records = [json.loads(line) for line in (out / RECORDS).read_text().splitlines()]
        start = time.perf_counter()
        for record in records:
            json.dumps(record, sort_keys=True)
        dump_time = time.perf_counter() - start
    print(f"Offline pipeline (mock engine), {COUNT} scenarios, one process")
    print(f"  json.dumps of the records alone [baseline]   {dump_time:8.2f} s")
    print(
        f"  fms-dgt run                                   {elapsed:8.2f} s  "
        f"{COUNT / elapsed:,.0f} scenarios/s (target >= 1,000), written {summary.written}, "
        f"rejected {summary.rejected}"
    )
    total = sum(summary.timing.values())
    for phase, seconds in summary.timing.items():
        print(f"    {phase:<12} {seconds:6.2f} s  {seconds / total:5.0%}")


def _tools(n: int) -> list[Tool]:
    tools = []
    for i in range(n):
        props = {
            f"arg_{j}": {"type": ["string", "integer", "number", "boolean"][j % 4], "description": f"arg {j}"}
            for j in range(1 + i % 6)
        }
        props["nested"] = {"type": "object", "properties": {"x": {"$ref": "#/$defs/leaf"}}}
        tools.append(
            Tool(
                f"tool.{i}",
                f"ns_{i % 100}",
                description=f"Tool {i}.",
                parameters={
                    "type": "object",
                    "properties": props,
                    "required": ["arg_0"],
                    "$defs": {"leaf": {"type": "string", "enum": ["a", "b"]}},
                },
            )
        )
    return tools


def bench_wire() -> None:
    tools = _tools(10_000)
    start = time.perf_counter()
    for tool in tools:
        copy.deepcopy(tool.parameters)
    baseline = time.perf_counter() - start
    print("Wire projection of 10,000 tools")
    print(f"  deepcopy of the schemas [baseline]            {baseline:8.3f} s")
    for fmt in FORMATS:
        start = time.perf_counter()
        project_tools(tools, fmt)
        elapsed = time.perf_counter() - start
        print(f"  {fmt:<44} {elapsed:8.3f} s  (target < 1 s, {elapsed / baseline:.1f}x baseline)")
    start = time.perf_counter()
    project_tools(tools, "openai", strict=True)
    print(f"  {'openai strict':<44} {time.perf_counter() - start:8.3f} s")


def main() -> int:
    bench_pipeline()
    bench_wire()
    return 0


if __name__ == "__main__":
    sys.exit(main())
