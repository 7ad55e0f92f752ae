"""Tests for benchmarks/data/dataflow_gold.yaml: every gold edge names parameters that exist."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fms_dgt.core.tools.enrichments._dataflow_fields import input_fields, output_fields

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.corpus
def test_gold_edges_name_existing_tools_and_parameters(corpus: Path) -> None:
    del corpus  # the gold sources live there
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from bench_dataflow import gold_edges, load_gold, load_tools
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    gold = load_gold()
    outputs: dict[str, set[str]] = {}
    inputs: dict[str, set[str]] = {}
    for tool in load_tools(gold["sources"]):
        outputs.setdefault(tool.qualified_name, set()).update(f.name for f in output_fields(tool))
        inputs.setdefault(tool.qualified_name, set()).update(f.name for f in input_fields(tool))
    splits = gold_edges(gold)
    assert set(splits) == {"tune", "dev", "held_out"} and set(gold["splits"]) == set(gold["gold"])
    for families in gold.get("rounds", {}).values():
        assert set(families) <= set(gold["gold"]), set(families) - set(gold["gold"])
    for _, (source, output, target, name) in splits["tune"] + splits["dev"] + splits["held_out"]:
        assert output in outputs[source], (source, output)
        assert name in inputs[target], (target, name)
