"""Per-call cost of realistic arguments (values.py) and mock results (results.py).

Prints, for the demo tool set of ``bench_generation.py`` (weather, calendar, API-Bank sample) and,
when ``../shared/corpus`` is there, every tool of the BFCL, ToolBench, API-Bank and ToolMind
files, microseconds of CPU per call (process time, so that other load on the machine weighs
less) with the baseline measured in the same run:

1. arguments: plain schema synthesis (``synthesise``, what the job did) [baseline] against
   ``values.arguments`` with a record context;
2. results: the previous mock result (synthesis from ``output_parameters``, or ``{"status":
   "ok"}``) [baseline] against ``results.mock_result``.

Run: ``python benchmarks/bench_values.py``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.engines.results import mock_result
from fms_dgt.core.tools.loaders.file import FileToolLoader
from fms_dgt.core.tools.synth import SynthesisError, synthesise
from fms_dgt.databuilders.tool_calling.values import EntityContext, arguments

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "toolsets"
CORPUS_FILES = (
    "bfcl/BFCL_v4_multiple.json",
    "bfcl/BFCL_v4_simple_python.json",
    "toolbench/G1_query.json",
    "api-bank/tool_catalog.json",
    "toolmind/APIGen-MT-5k-query_tools.yaml",
    "toolmind/glaive-function-calling-v2-query_tools.yaml",
    "toolmind/When2Call-query_tools.yaml",
)


def _demo() -> list[Tool]:
    data = REPO / "data"
    return [
        *FileToolLoader(data / "weather_tools.yaml").load(),
        *FileToolLoader(data / "api_bank_sample.json", namespace="api_bank").load(),
    ]


def _corpus() -> list[Tool]:
    if not CORPUS.is_dir():
        return []
    return [t for name in CORPUS_FILES for t in FileToolLoader(CORPUS / name).load()]


def _cpu_us(run: Callable[[int], Any], count: int, repeat: int = 3) -> float:
    """Fewest CPU microseconds per call over ``repeat`` runs of ``count`` calls."""
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        for i in range(count):
            run(i)
        best = min(best, time.process_time() - started)
    return best / count * 1e6


def _calls(tools: list[Tool], per_tool: int) -> list[tuple[Tool, dict[str, Any]]]:
    rng = random.Random(1)
    calls = []
    for tool in tools:
        for _ in range(per_tool):
            try:
                calls.append((tool, synthesise(tool.parameters, rng, fingerprint=tool.fingerprint)))
            except SynthesisError:
                break
    return calls


def _old_result(tool: Tool, rng: random.Random) -> Any:
    if not tool.output_parameters:
        return {"status": "ok"}
    return synthesise(tool.output_parameters, rng, optional_probability=0.7, validator=tool.output_validator)


def bench(label: str, tools: list[Tool], per_tool: int) -> None:
    calls = _calls(tools, per_tool)
    if not calls:
        return
    n = len(calls)
    contexts = [EntityContext.for_record(1, i // 3) for i in range(n)]
    plain = _cpu_us(
        lambda i: synthesise(calls[i][0].parameters, random.Random(i), fingerprint=calls[i][0].fingerprint), n
    )
    steered = _cpu_us(lambda i: arguments(calls[i][0], contexts[i], random.Random(i)), n)
    old = _cpu_us(lambda i: _old_result(calls[i][0], random.Random(i)), n)
    new = _cpu_us(lambda i: mock_result(calls[i][0], calls[i][1], random.Random(i)), n)
    print(f"{label}: {len(tools):,} tools, {n:,} calls (CPU microseconds per call)")
    print(f"  arguments  synthesise [baseline]    {plain:6.1f}   values.arguments     {steered:6.1f}", end="")
    print(f"  ({steered / plain:4.1f}x)")
    print(f"  results    previous mock [baseline] {old:6.1f}   results.mock_result  {new:6.1f}", end="")
    print(f"  ({new / old:4.1f}x)")


def main() -> None:
    bench("demo tool set", _demo(), 200)
    bench("corpus toolsets", _corpus(), 2)


if __name__ == "__main__":
    main()
