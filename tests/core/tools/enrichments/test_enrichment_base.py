"""Tests for fms_dgt/core/tools/enrichments/base.py: ordering (incl. runs_after), stable hashes, cache dir."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any, ClassVar

import pytest

from fms_dgt.core.tools.enrichments.base import (
    ToolEnrichment,
    order_enrichments,
    resolve_cache_dir,
    stable_hash,
)
from fms_dgt.errors import EnrichmentError


def make(key: str, depends: tuple[str, ...] = (), after: tuple[str, ...] = ()) -> ToolEnrichment:
    class Fake(ToolEnrichment):
        artifact_key: ClassVar[str] = key
        depends_on: ClassVar[tuple[str, ...]] = depends
        runs_after: ClassVar[tuple[str, ...]] = after
        plugin_name: ClassVar[str] = key

        def enrich(self, registry: Any) -> Any:
            return key

    return Fake()


def test_runs_after_orders_when_present() -> None:
    ordered = order_enrichments([make("embeddings", after=("output_parameters",)), make("output_parameters")])
    assert [e.artifact_key for e in ordered] == ["output_parameters", "embeddings"]


def test_runs_after_is_ignored_when_absent() -> None:
    ordered = order_enrichments([make("embeddings", after=("output_parameters",))])
    assert [e.artifact_key for e in ordered] == ["embeddings"]


def test_missing_dependency_names_the_enrichment() -> None:
    with pytest.raises(EnrichmentError, match=r"'neighbors'.*embeddings"):
        order_enrichments([make("neighbors", depends=("embeddings",))])


def test_cycle_names_the_enrichments() -> None:
    with pytest.raises(EnrichmentError, match=r"cyclic enrichments: .*a.*b"):
        order_enrichments([make("a", depends=("b",)), make("b", after=("a",))])


def test_stable_hash_ignores_key_order() -> None:
    assert stable_hash({"a": 1, "b": [1, 2]}) == stable_hash({"b": [1, 2], "a": 1})
    assert stable_hash({"a": 1}) != stable_hash({"a": 2})


def test_stable_hash_is_the_same_in_another_process_whatever_the_hash_seed() -> None:
    code = "from fms_dgt.core.tools.enrichments.base import stable_hash; print(stable_hash({'x': ['y', 1]}))"
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for seed in ("1", "2")
    }
    assert outputs == {stable_hash({"x": ["y", 1]})}


def test_resolve_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.delenv("DGT_CACHE_DIR", raising=False)
    assert resolve_cache_dir(None) is None
    assert resolve_cache_dir(tmp_path) == tmp_path
    monkeypatch.setenv("DGT_CACHE_DIR", str(tmp_path / "env"))
    assert resolve_cache_dir(None) == tmp_path / "env"


def test_config_builds_enrichments_with_the_cache_dir(tmp_path: Any) -> None:
    from pathlib import Path

    from fms_dgt.core.tools.registry import ToolRegistry

    travel = Path(__file__).resolve().parents[4] / "data" / "sampling" / "travel.yaml"
    registry = ToolRegistry.from_config(
        {
            "tools": {
                "registry": [{"type": "file", "path": str(travel)}],
                "enrichments": [
                    {"type": "neighbors", "k": 2},
                    {"type": "embeddings", "dim": 64},
                    {"type": "dataflow"},
                ],
                "cache_dir": str(tmp_path),
            }
        }
    )
    assert set(registry.artifacts) == {"embeddings", "neighbors", "dataflow"}
    assert {p.name for p in tmp_path.iterdir()} == {"embeddings", "neighbors", "dataflow"}


def test_config_rejects_unknown_enrichment_keys() -> None:
    from fms_dgt.core.tools.registry import ToolRegistry
    from fms_dgt.errors import ConfigError

    with pytest.raises(ConfigError, match=r"unknown key 'treshold'.*tools.enrichments\[0\].treshold"):
        ToolRegistry.from_config(
            {"tools": {"registry": [], "enrichments": [{"type": "dataflow", "treshold": 0.5}]}}
        )


def test_config_reports_invalid_enrichment_values_with_their_place() -> None:
    from fms_dgt.core.tools.registry import ToolRegistry
    from fms_dgt.errors import ConfigError

    with pytest.raises(ConfigError, match=r"invalid threshold 2.*at tools.enrichments\[1\]"):
        ToolRegistry.from_config(
            {
                "tools": {
                    "registry": [],
                    "enrichments": [{"type": "embeddings"}, {"type": "dataflow", "threshold": 2}],
                }
            }
        )
