"""Schemas that are costly to satisfy and slow calls cannot hold a run: bounds and a time budget."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from fms_dgt.cli import main
from fms_dgt.core.tools.engines.handlers import clear_name_handlers, register_name_handler
from fms_dgt.core.tools.synth import synthesise
from fms_dgt.errors import SynthesisError

_LIST = {"type": "array", "minItems": 60}
_ONE = [{"name": "one", "sampler": {"type": "tc/random", "k": 1}}]
_HUGE = {"type": "object", "properties": {"s": {"type": "string", "minLength": 10**9}}, "required": ["s"]}


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        ({"type": "string", "minLength": 1_000_000_000}, "a string of at least 1,000,000,000 characters"),
        ({"type": "array", "minItems": 100_000_000}, "at least 100,000,000 items"),
        (
            {
                "type": "array",
                "minItems": 60,
                "items": {"type": "array", "minItems": 60, "items": {"type": "array", "minItems": 60}},
            },
            "more than 100,000 values",
        ),
    ],
    ids=["long-string", "many-items", "nested-product"],
)
def test_costly_schemas_fail_fast_with_a_reason(schema: dict[str, Any], why: str) -> None:
    started = time.monotonic()
    with pytest.raises(SynthesisError, match=why):
        synthesise(schema, random.Random(1))
    assert time.monotonic() - started < 5


def _run(tmp_path: Path, tools: list[dict[str, Any]], **generation: Any) -> tuple[list[Any], list[Any]]:
    config = {
        "tools": {"registry": [{"type": "inline", "namespace": "t", "tools": tools}]},
        "generation": {
            "count": 2,
            "scenarios": [{"name": "one", "sampler": {"type": "tc/random", "k": 1}}],
            **generation,
        },
    }
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config))
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out)]) in (0, 1)
    records = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    rejects = [json.loads(x) for x in (out / "rejects.jsonl").read_text().splitlines()]
    return records, rejects


def test_a_hostile_argument_schema_rejects_the_record_with_its_reason(tmp_path: Path) -> None:
    tools = [
        {
            "name": "huge",
            "parameters": {
                "type": "object",
                "properties": {"s": {"type": "string", "minLength": 10**9}},
                "required": ["s"],
            },
        }
    ]
    started = time.monotonic()
    records, rejects = _run(tmp_path, tools)
    assert time.monotonic() - started < 30
    assert records == [] and len(rejects) == 2
    assert all("at least 1,000,000,000 characters" in r["detail"] for r in rejects)


def test_a_record_over_its_time_budget_is_rejected(tmp_path: Path) -> None:
    def slow(arguments: dict[str, Any]) -> str:
        time.sleep(5)
        return "late"

    register_name_handler("t::slow", slow)
    try:
        started = time.monotonic()
        records, rejects = _run(tmp_path, [{"name": "slow", "description": "Slow."}], record_time_budget=0.5)
    finally:
        clear_name_handlers()
    assert time.monotonic() - started < 9, "each record stops at its budget"
    assert records == [] and len(rejects) == 2
    assert all("record_time_budget=0.5 s" in r["detail"] for r in rejects)
