"""Registry benchmarks (issue: core).

Prints, with baselines measured in the same run:

1. The When2Call pool (3,448 tools, 1.5 MB YAML): file -> registry, against libyaml's C loader alone
   (target: within 1.3x) and ``yaml.safe_load`` in pure Python alone (target: at least 3x faster).
2. A generated 100,000-tool JSON file: file -> registry (target: under 3 s), against ``json.load``.
3. ``match()`` on a name with 5 overloads (target: at least 50,000 calls/s), against validating the
   candidates one by one with ``jsonschema``.

Run: ``python benchmarks/bench_registry.py`` (the corpus part is skipped when ../shared/corpus is
absent).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml
from _timing import best_of
from jsonschema import Draft202012Validator

from fms_dgt.core.tools.data_objects import ToolCall
from fms_dgt.core.tools.registry import ToolRegistry

REPO = Path(__file__).resolve().parents[1]
WHEN2CALL = REPO.parent / "shared" / "corpus" / "toolsets" / "toolmind" / "When2Call-query_tools.yaml"


def row(label: str, seconds: float, note: str = "") -> None:
    print(f"  {label:<44} {seconds * 1000:>10.1f} ms  {note}")


def bench_when2call() -> None:
    print(f"When2Call pool: {WHEN2CALL.name} ({WHEN2CALL.stat().st_size / 1e6:.2f} MB)")

    def c_loader() -> Any:
        with WHEN2CALL.open() as f:
            return yaml.load(f, Loader=yaml.CSafeLoader)

    def pure_python() -> Any:
        with WHEN2CALL.open() as f:
            return yaml.safe_load(f)

    c_time = best_of(c_loader, 5)
    registry_time = best_of(lambda: ToolRegistry.from_file(WHEN2CALL), 5)
    pure_time = best_of(pure_python, 1)
    count = len(ToolRegistry.from_file(WHEN2CALL))
    row("yaml.load(CSafeLoader) alone [baseline]", c_time)
    row("yaml.safe_load (pure Python) alone [baseline]", pure_time)
    row(
        f"file -> registry ({count} tools)",
        registry_time,
        f"{registry_time / c_time:.2f}x C loader (target <= 1.3x), "
        f"{pure_time / registry_time:.1f}x faster than safe_load (target >= 3x)",
    )


def _generated_tools(n: int) -> list[dict[str, Any]]:
    kinds = ["string", "integer", "number", "boolean"]
    tools = []
    for i in range(n):
        props = {
            f"arg_{j}": {"type": kinds[(i + j) % 4], "description": f"argument {j} of tool {i}"}
            for j in range(1 + i % 5)
        }
        tools.append(
            {
                "name": f"tool_{i}",
                "namespace": f"ns_{i % 200}",
                "description": f"Generated tool number {i}.",
                "parameters": {"type": "object", "properties": props, "required": ["arg_0"]},
                "output_parameters": {"type": "object", "properties": {"value": {"type": "string"}}},
            }
        )
    return tools


def bench_100k() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tools.json"
        path.write_text(json.dumps(_generated_tools(100_000)))
        print(f"Generated pool: 100,000 tools ({path.stat().st_size / 1e6:.1f} MB JSON)")

        def parse() -> Any:
            with path.open() as f:
                return json.load(f)

        parse_time = best_of(parse, 3)
        registry_time = best_of(lambda: ToolRegistry.from_file(path), 3)
        row("json.load alone [baseline]", parse_time)
        row("file -> registry", registry_time, f"{registry_time / parse_time:.1f}x json.load (target < 3 s)")


def bench_match() -> None:
    overloads = [
        {
            "name": "search",
            "parameters": {
                "type": "object",
                "properties": props,
                "required": req,
                "additionalProperties": False,
            },
        }
        for props, req in [
            ({"query": {"type": "string"}}, ["query"]),
            ({"query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}}, ["query", "limit"]),
            ({"lat": {"type": "number"}, "lon": {"type": "number"}}, ["lat", "lon"]),
            ({"ids": {"type": "array", "items": {"type": "integer"}}}, ["ids"]),
            ({"tag": {"type": "string", "enum": ["a", "b", "c"]}, "page": {"type": "integer"}}, ["tag"]),
        ]
    ]
    registry = ToolRegistry.from_config(
        {"tools": {"registry": [{"type": "inline", "namespace": "s", "tools": overloads}]}}
    )
    calls = [
        ToolCall("s::search", args)
        for args in (
            {"query": "x"},
            {"query": "x", "limit": 5},
            {"lat": 1.5, "lon": 2},
            {"ids": [1, 2, 3]},
            {"tag": "b", "page": 2},
        )
    ]
    rounds = 20_000

    def run_match() -> None:
        match = registry.match
        for _ in range(rounds // len(calls)):
            for call in calls:
                match(call)

    validators = [Draft202012Validator(t.parameters) for t in registry.overloads("s::search")]

    def run_naive() -> None:
        for _ in range(rounds // len(calls) // 4):
            for call in calls:
                next(v for v in validators if v.is_valid(call.arguments))

    match_time = best_of(run_match, 3)
    naive_time = best_of(run_naive, 3) * 4
    print(f"match() on a name with {len(validators)} overloads ({rounds} calls)")
    row("jsonschema is_valid per candidate [baseline]", naive_time, f"{rounds / naive_time:,.0f} calls/s")
    row(
        "registry.match",
        match_time,
        f"{rounds / match_time:,.0f} calls/s (target >= 50,000), {naive_time / match_time:.1f}x baseline",
    )


def main() -> int:
    print(f"python {sys.version.split()[0]}, libyaml {yaml.__with_libyaml__}")
    if WHEN2CALL.exists():
        bench_when2call()
    else:
        print("When2Call pool: skipped (../shared/corpus is absent)")
    bench_100k()
    bench_match()
    return 0


if __name__ == "__main__":
    sys.exit(main())
