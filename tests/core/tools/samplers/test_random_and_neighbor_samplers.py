"""Tests for fms_dgt/core/tools/samplers/random.py and neighbor.py."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.core.tools.samplers.base import get_tool_sampler
from fms_dgt.errors import SamplingError


def namespace_counts(sampler: Any, calls: int = 2000, **overrides: Any) -> Counter[str]:
    counts: Counter[str] = Counter()
    for call in range(calls):
        counts.update(t.namespace for t in sampler.sample(1, seed=call, **overrides))
    return counts


def test_proportional_follows_namespace_sizes_and_uniform_evens_them(travel: ToolRegistry) -> None:
    sampler = get_tool_sampler("tc/random", registry=travel, seed=0)
    proportional = namespace_counts(sampler)
    assert proportional["flights"] > 3 * proportional["weather"]
    uniform = namespace_counts(sampler, balance="uniform")
    assert max(uniform.values()) < 1.3 * min(uniform.values())


def test_weights_are_validated_and_normalised(travel: ToolRegistry) -> None:
    sampler = get_tool_sampler("tc/random", registry=travel, weights={"weather": 3, "payments": 1})
    counts = namespace_counts(sampler)
    assert set(counts) == {"weather", "payments"}
    assert 2.4 < counts["weather"] / counts["payments"] < 3.6
    for weights, message in (
        ({"weather": -1}, "invalid weight -1"),
        ({"weather": float("nan")}, "invalid weight nan"),
        ({"weather": 0}, "sum to zero"),
        ({"mars": 1}, "unknown namespace 'mars'"),
    ):
        with pytest.raises(SamplingError, match=message):
            get_tool_sampler("tc/random", registry=travel, weights=weights)
    with pytest.raises(SamplingError, match="invalid balance 'even'"):
        get_tool_sampler("tc/random", registry=travel, balance="even")


def test_per_call_overrides_keep_the_other_settings(travel: ToolRegistry) -> None:
    sampler = get_tool_sampler("tc/random", registry=travel, balance="uniform", seed=3)
    both = namespace_counts(sampler, namespaces=["flights", "weather"])
    assert set(both) == {"flights", "weather"}
    assert max(both.values()) < 1.3 * min(both.values()), "balance: uniform still applies"


def test_random_exhausts_namespaces_without_repeats(travel: ToolRegistry) -> None:
    sampler = get_tool_sampler("tc/random", registry=travel, namespaces=["flights", "weather"])
    sample = sampler.sample(5, seed=1)
    assert sorted(sample.names) == [
        "flights::book_flight",
        "flights::cancel_booking",
        "flights::get_booking",
        "flights::search_flights",
        "weather::forecast",
    ]
    with pytest.raises(SamplingError, match="only 5 distinct tool names") as info:
        sampler.sample(6)
    assert info.value.requested == 6 and len(info.value.tools) == 5


def test_random_picks_either_overload(travel: ToolRegistry) -> None:
    sampler = get_tool_sampler("tc/random", registry=travel, namespaces=["flights"])
    fingerprints = {
        t.fingerprint for call in range(60) for t in sampler.sample(4, seed=call) if t.name == "get_booking"
    }
    assert len(fingerprints) == 2


def test_neighbor_sampler_takes_the_nearest(pool: ToolRegistry) -> None:
    sampler = get_tool_sampler("tc/neighbor", registry=pool, k=3, seed=0)
    nearest = pool.artifacts["neighbors"]
    for call in range(30):
        sample = sampler.sample(seed=call)
        expected = [t for t, _ in nearest.neighbors(sample[0])][:2]
        assert list(sample[1:]) == expected
        assert sample.edges == ()


def test_neighbor_pool_adds_variety_within_the_nearest(pool: ToolRegistry) -> None:
    sampler = get_tool_sampler("tc/neighbor", registry=pool, k=2, pool=5, seed=0)
    nearest = pool.artifacts["neighbors"]
    for call in range(30):
        sample = sampler.sample(seed=call)
        assert sample[1] in [t for t, _ in nearest.neighbors(sample[0])][:5]
    with pytest.raises(SamplingError, match="invalid pool 0"):
        sampler.sample(pool=0)


def test_neighbor_sampler_needs_enough_neighbours(pool: ToolRegistry) -> None:
    with pytest.raises(
        SamplingError, match=r"no tool has 9 distinct neighbours.*Raise k of the neighbors"
    ) as info:
        get_tool_sampler("tc/neighbor", registry=pool).sample(10)
    assert len(info.value.tools) > 1
