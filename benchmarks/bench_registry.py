"""Registry benchmarks (issue: core).

Prints, with baselines measured in the same run:

1. The When2Call pool (3,448 tools, 1.5 MB YAML): file -> registry, against libyaml's C loader alone
   (target: within 1.3x) and ``yaml.safe_load`` in pure Python alone (target: at least 3x faster).
2. A generated 100,000-tool JSON file: file -> registry (target: under 3 s), against ``json.load``.
3. ``match()`` on a name with 5 overloads (target: at least 50,000 calls/s), against validating the
   candidates one by one with ``jsonschema``; then the same ``match()`` with each validator in turn:
   jsonschema-rs (what the package uses), the closure compiler the package used before
   (``_closure_validator.py``) and pure-Python ``jsonschema``.
4. ``is_valid`` alone with the same three validators on a few real BFCL schemas (valid and invalid
   arguments), and which validator is faster per workload.

The package keeps jsonschema-rs unless it is more than 2x slower than the closures on ``match()``;
the last line says what this run found.

Run: ``python benchmarks/bench_registry.py`` (the corpus parts fall back to the overload schemas
when ../shared/corpus is absent).
"""

from __future__ import annotations

import contextlib
import json
import random
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml
from _closure_validator import ClosureValidator
from _timing import best_of
from jsonschema import Draft202012Validator

from fms_dgt.core.tools import registry as registry_module
from fms_dgt.core.tools.data_objects import ToolCall
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.core.tools.schema import fingerprint, get_validator, normalise_parameters
from fms_dgt.core.tools.synth import synthesise

REPO = Path(__file__).resolve().parents[1]
WHEN2CALL = REPO.parent / "shared" / "corpus" / "toolsets" / "toolmind" / "When2Call-query_tools.yaml"
BFCL = REPO.parent / "shared" / "corpus" / "toolsets" / "bfcl" / "BFCL_v4_multiple.json"
#: BFCL tools for the is_valid workloads: flat scalars, an enum, an array of objects.
BFCL_TOOLS = ("triangle_properties.get", "route_planner.calculate_route", "database.query")


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


class PythonValidator:
    """Pure-Python ``jsonschema`` behind the package's validator interface (the reference)."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.validator = Draft202012Validator(schema)

    def is_valid(self, instance: Any) -> bool:
        return bool(self.validator.is_valid(instance))

    def explain(self, instance: Any) -> str | None:
        error = next(iter(self.validator.iter_errors(instance)), None)
        return None if error is None else str(error.message)


def cached(factory: Callable[[Mapping[str, Any]], Any]) -> Callable[..., Any]:
    """A ``get_validator`` look-alike that builds validators with ``factory``, cached by fingerprint."""
    cache: dict[str, Any] = {}

    def get(schema: Mapping[str, Any], fp: str | None = None) -> Any:
        key = fp or fingerprint(schema)
        validator = cache.get(key)
        if validator is None:
            validator = cache[key] = factory(schema)
        return validator

    return get


#: label -> (get_validator look-alike, how much of the round count it runs: pure Python is slow).
VALIDATORS: dict[str, tuple[Callable[..., Any], int]] = {
    "jsonschema-rs [package]": (get_validator, 1),
    "closures [previous]": (cached(ClosureValidator), 1),
    "jsonschema [pure Python]": (cached(PythonValidator), 20),
}


@contextlib.contextmanager
def registry_validators(getter: Callable[..., Any]) -> Iterator[None]:
    """``registry.match`` looks ``get_validator`` up in its module: swap it for one measurement."""
    original = registry_module.get_validator
    registry_module.get_validator = getter
    try:
        yield
    finally:
        registry_module.get_validator = original


OVERLOADS = [
    ({"query": {"type": "string"}}, ["query"]),
    ({"query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}}, ["query", "limit"]),
    ({"lat": {"type": "number"}, "lon": {"type": "number"}}, ["lat", "lon"]),
    ({"ids": {"type": "array", "items": {"type": "integer"}}}, ["ids"]),
    ({"tag": {"type": "string", "enum": ["a", "b", "c"]}, "page": {"type": "integer"}}, ["tag"]),
]
OVERLOAD_CALLS = (
    {"query": "x"},
    {"query": "x", "limit": 5},
    {"lat": 1.5, "lon": 2},
    {"ids": [1, 2, 3]},
    {"tag": "b", "page": 2},
)


def _overload_schema(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


def bench_match() -> float:
    """Prints the match() figures; returns how many times slower jsonschema-rs is than the closures."""
    overloads = [{"name": "search", "parameters": _overload_schema(p, r)} for p, r in OVERLOADS]
    registry = ToolRegistry.from_config(
        {"tools": {"registry": [{"type": "inline", "namespace": "s", "tools": overloads}]}}
    )
    calls = [ToolCall("s::search", args) for args in OVERLOAD_CALLS]
    rounds = 20_000
    validators = [Draft202012Validator(t.parameters) for t in registry.overloads("s::search")]

    def run_naive() -> None:
        for _ in range(rounds // len(calls) // 4):
            for call in calls:
                next(v for v in validators if v.is_valid(call.arguments))

    naive_time = best_of(run_naive, 3) * 4
    print(f"match() on a name with {len(validators)} overloads ({rounds} calls)")
    row("jsonschema is_valid per candidate [baseline]", naive_time, f"{rounds / naive_time:,.0f} calls/s")
    times = {
        label: _time_match(registry, calls, rounds, getter, share)
        for label, (getter, share) in VALIDATORS.items()
    }
    for label, seconds in times.items():
        target = " (target >= 50,000)" if label.endswith("[package]") else ""
        row(
            f"registry.match, {label}",
            seconds,
            f"{rounds / seconds:,.0f} calls/s{target}, {naive_time / seconds:.1f}x baseline",
        )
    _faster("match()", times)
    return times["jsonschema-rs [package]"] / times["closures [previous]"]


def _time_match(
    registry: ToolRegistry, calls: list[ToolCall], rounds: int, getter: Callable[..., Any], share: int
) -> float:
    def run() -> None:
        match = registry.match
        for _ in range(rounds // len(calls) // share):
            for call in calls:
                match(call)

    with registry_validators(getter):
        return best_of(run, 3) * share


def _faster(workload: str, times: dict[str, float]) -> None:
    ranked = sorted(times, key=times.__getitem__)
    first, second = ranked[0], ranked[1]
    print(f"  -> fastest on {workload}: {first}, {times[second] / times[first]:.1f}x {second}")


def workload_schemas() -> list[tuple[str, dict[str, Any]]]:
    """A few real BFCL schemas (normalised as the loaders do), or the overloads without the corpus."""
    if not BFCL.exists():
        print("is_valid workloads: ../shared/corpus is absent, using the overload schemas")
        return [(f"overload {i}", _overload_schema(p, r)) for i, (p, r) in enumerate(OVERLOADS[:3])]
    found: dict[str, dict[str, Any]] = {}
    with BFCL.open() as lines:
        for line in lines:
            for function in json.loads(line)["function"]:
                if function["name"] in BFCL_TOOLS and function["name"] not in found:
                    found[function["name"]] = normalise_parameters(function["parameters"])[0]
    return [(name, found[name]) for name in BFCL_TOOLS]


def workload_instances(schema: dict[str, Any], rng: random.Random) -> list[Any]:
    """Eight synthesised valid argument objects and eight made invalid (one argument of a wrong type)."""
    valid = [synthesise(schema, rng, optional_probability=0.7) for _ in range(8)]
    invalid = []
    for arguments in valid:
        broken = dict(arguments)
        broken[rng.choice(sorted(broken))] = {"unexpected": [None]}
        invalid.append(broken)
    return valid + invalid


def bench_is_valid() -> None:
    rng = random.Random(11)
    rounds = 4_000
    for name, schema in workload_schemas():
        instances = workload_instances(schema, rng)
        share_valid = sum(get_validator(schema).is_valid(i) for i in instances) / len(instances)
        print(f"is_valid on {name}: {len(instances)} argument objects ({share_valid:.0%} valid)")
        times = {}
        for label, (getter, share) in VALIDATORS.items():
            times[label] = _time_is_valid(getter(schema), instances, rounds // share) * share
            calls = rounds * len(instances)
            row(f"is_valid, {label}", times[label], f"{calls / times[label]:,.0f} calls/s")
        _faster(f"is_valid ({name})", times)


def _time_is_valid(validator: Any, instances: list[Any], rounds: int) -> float:
    def run() -> None:
        is_valid = validator.is_valid
        for _ in range(rounds):
            for instance in instances:
                is_valid(instance)

    return best_of(run, 3)


def report_choice(rs_over_closures: float) -> None:
    backend = get_validator(_overload_schema(*OVERLOADS[0])).backend
    verdict = (
        "more than 2x slower than the closures: the closures should take the hot path back"
        if rs_over_closures > 2
        else "not more than 2x slower than the closures, so the package keeps it"
    )
    print(f"The package validates with {backend} (CompiledValidator.backend).")
    print(f"On match() jsonschema-rs takes {rs_over_closures:.2f}x the closures' time: {verdict}.")


def main() -> int:
    print(f"python {sys.version.split()[0]}, libyaml {yaml.__with_libyaml__}")
    if WHEN2CALL.exists():
        bench_when2call()
    else:
        print("When2Call pool: skipped (../shared/corpus is absent)")
    bench_100k()
    rs_over_closures = bench_match()
    bench_is_valid()
    report_choice(rs_over_closures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
