"""Tests for fms_dgt/core/tools/samplers/{chain,fan_out,fan_in,dag}.py: order, edges, limits, errors."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from fms_dgt.core.tools.artifacts import split_path
from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.core.tools.samplers.base import ToolSample, get_tool_sampler
from fms_dgt.errors import SamplingError


def key(tool: Tool) -> tuple[str, str]:
    return tool.qualified_name, tool.fingerprint


def schema_at(schema: Any, path: str) -> Any:
    """The schema of the value at an output path (None when the path leaves the schema)."""
    for step in split_path(path):
        if not isinstance(schema, dict):
            return None
        schema = schema.get("items") if isinstance(step, int) else schema.get("properties", {}).get(step)
    return schema


def assert_edges_among(sample: ToolSample) -> None:
    members = {key(t) for t in sample}
    assert sample.edges
    for edge in sample.edges:
        assert key(edge.source) in members and key(edge.target) in members
        assert edge.output and schema_at(edge.source.output_parameters, edge.output) is not None
        assert edge.input in edge.target.parameters["properties"]


def test_chain_follows_edges_in_call_order(pool: ToolRegistry) -> None:
    sampler = get_tool_sampler("tc/chain", registry=pool, k=4, seed=3)
    for call in range(50):
        sample = sampler.sample(seed=call)
        assert_edges_among(sample)
        links = {(key(e.source), key(e.target)) for e in sample.edges}
        for first, second in zip(sample.tools, sample.tools[1:], strict=False):
            assert (key(first), key(second)) in links


def test_chain_too_long_raises_with_the_longest_partial(travel: ToolRegistry) -> None:
    sampler = get_tool_sampler("tc/chain", registry=travel, max_attempts=20)
    with pytest.raises(SamplingError, match="no chain of 9 connected tools") as info:
        sampler.sample(9, seed=0)
    assert info.value.requested == 9
    assert 2 <= len(info.value.tools) < 9


def test_chain_of_one_and_namespace_filter(pool: ToolRegistry) -> None:
    sampler = get_tool_sampler("tc/chain", registry=pool, namespaces=["flights0", "accounts0"])
    assert len(sampler.sample(1, seed=0)) == 1
    for call in range(20):
        assert {t.namespace for t in sampler.sample(3, seed=call)} <= {"flights0", "accounts0"}
    with pytest.raises(SamplingError, match="unknown namespace 'nope'"):
        get_tool_sampler("tc/chain", registry=pool, namespaces=["nope"])


def test_single_tool_namespace_without_outputs_cannot_chain(pool: ToolRegistry) -> None:
    sampler = get_tool_sampler("tc/chain", registry=pool, namespaces=["weather0"])
    assert sampler.sample(1, seed=0).names == ["weather0::forecast"]
    with pytest.raises(SamplingError, match="no edges among the allowed tools"):
        sampler.sample(2)


def test_fan_out_puts_the_seed_first(pool: ToolRegistry) -> None:
    sampler = get_tool_sampler("tc/fan_out", registry=pool, k=4, seed=1)
    for call in range(50):
        sample = sampler.sample(seed=call)
        assert_edges_among(sample)
        assert {key(e.source) for e in sample.edges} == {key(sample[0])}
        assert {key(e.target) for e in sample.edges} == {key(t) for t in sample[1:]}


def test_fan_in_puts_the_sink_last(pool: ToolRegistry) -> None:
    sampler = get_tool_sampler("tc/fan_in", registry=pool, k=4, seed=1)
    for call in range(50):
        sample = sampler.sample(seed=call)
        assert_edges_among(sample)
        assert {key(e.target) for e in sample.edges} == {key(sample[-1])}
        assert {key(e.source) for e in sample.edges} == {key(t) for t in sample[:-1]}


@pytest.mark.parametrize("name", ["tc/fan_out", "tc/fan_in"])
def test_fans_too_wide_raise(travel: ToolRegistry, name: str) -> None:
    with pytest.raises(SamplingError, match="distinct tools \\(the most is") as info:
        get_tool_sampler(name, registry=travel).sample(8)
    assert info.value.requested == 8 and info.value.tools


def levels(sample: ToolSample) -> dict[tuple[str, str], int]:
    """Longest-path level of each tool in the sample's edges."""
    order = [key(t) for t in sample]
    depth = dict.fromkeys(order, 0)
    for node in order:
        for edge in sample.edges:
            if key(edge.target) == node:
                depth[node] = max(depth[node], depth[key(edge.source)] + 1)
    return depth


def connected(sample: ToolSample) -> bool:
    members = [key(t) for t in sample]
    reach, frontier = {members[0]}, [members[0]]
    while frontier:
        node = frontier.pop()
        for e in sample.edges:
            for a, b in ((key(e.source), key(e.target)), (key(e.target), key(e.source))):
                if a == node and b not in reach:
                    reach.add(b)
                    frontier.append(b)
    return reach == set(members)


def test_dag_is_connected_and_topologically_ordered(pool: ToolRegistry) -> None:
    sampler = get_tool_sampler("tc/dag", registry=pool, k=5, seed=2)
    shapes = Counter()
    for call in range(60):
        sample = sampler.sample(seed=call)
        position = {key(t): i for i, t in enumerate(sample)}
        assert all(position[key(e.source)] < position[key(e.target)] for e in sample.edges)
        assert connected(sample)
        shapes[max(Counter(levels(sample).values()).values())] += 1
    assert len(shapes) > 1, "both chain-like and wide DAGs appear"


def test_dag_respects_width_and_depth(pool: ToolRegistry) -> None:
    sampler = get_tool_sampler("tc/dag", registry=pool, k=4, max_width=1, seed=5)
    for call in range(30):
        sample = sampler.sample(seed=call)
        assert len(sample.edges) >= 3
        assert sorted(levels(sample).values()) == [0, 1, 2, 3]
    flat = get_tool_sampler("tc/dag", registry=pool, seed=5)
    for call in range(30):
        sample = flat.sample(4, seed=call, max_depth=2)
        assert set(levels(sample).values()) == {0, 1}


def test_dag_impossible_shape_raises(pool: ToolRegistry) -> None:
    sampler = get_tool_sampler("tc/dag", registry=pool, max_attempts=5)
    with pytest.raises(SamplingError, match="max_depth=1") as info:
        sampler.sample(3, max_depth=1)
    assert len(info.value.tools) == 1
    with pytest.raises(SamplingError, match="invalid max_width 0"):
        sampler.sample(3, max_width=0)


def test_overloads_are_sampled_as_distinct_tools(pool: ToolRegistry) -> None:
    seen: set[str] = set()
    sampler = get_tool_sampler("tc/fan_in", registry=pool, k=2, seed=0)
    for call in range(300):
        sample = sampler.sample(seed=call)
        seen.update(t.fingerprint for t in sample if t.name == "get_booking")
        assert len(set(sample.names)) == 2
    assert len(seen) == 2


def test_tools_without_parameters_start_chains(make_registry: Any, travel_tools: list[Tool]) -> None:
    source = Tool(
        "current_user",
        "session",
        output_parameters={
            "type": "object",
            "properties": {
                "user_id": {"type": "string", "description": "Identifier of the customer account."}
            },
        },
    )
    registry = make_registry([*travel_tools, source])
    sampler = get_tool_sampler("tc/chain", registry=registry, namespaces=["session", "accounts"])
    starts = [sampler.sample(2, seed=call) for call in range(40)]
    from_source = [s for s in starts if s.names[0] == "session::current_user"]
    assert from_source
    assert all(e.output == "user_id" and e.input == "user_id" for s in from_source for e in s.edges)
