"""configs/sampling_example.yaml builds, and every scenario's sampler draws from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from fms_dgt.config import load_config
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.core.tools.samplers.base import get_tool_sampler

CONFIG = Path(__file__).resolve().parents[4] / "configs" / "sampling_example.yaml"


def test_example_config_builds_every_artifact_and_sampler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DGT_CACHE_DIR", str(tmp_path))
    registry = ToolRegistry.from_config(CONFIG)
    assert set(registry.artifacts) == {"output_parameters", "embeddings", "neighbors", "dataflow"}
    assert registry.get("weather::forecast").output_parameters["properties"]["temperature_c"] == {
        "type": "number"
    }
    assert {p.name for p in tmp_path.iterdir()} == {"embeddings", "neighbors", "dataflow"}
    for scenario in load_config(CONFIG).data["generation"]["scenarios"]:
        options = dict(scenario["sampler"])
        sampler = get_tool_sampler(options.pop("type"), registry=registry, **options)
        assert len(sampler.sample(seed=1)) == options["k"]
