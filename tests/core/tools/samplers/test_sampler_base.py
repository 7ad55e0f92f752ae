"""Tests for fms_dgt/core/tools/samplers/base.py and the contract every sampler shares."""

from __future__ import annotations

import json
import os
import pkgutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from fms_dgt.core.tools import samplers
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.core.tools.samplers.base import ToolSample, derive_seed, get_tool_sampler
from fms_dgt.errors import SamplingError, UnknownPluginError

ALL = ("tc/random", "tc/chain", "tc/fan_out", "tc/fan_in", "tc/dag", "tc/neighbor")
GRAPH = ("tc/chain", "tc/fan_out", "tc/fan_in", "tc/dag")
MODULES = sorted(f"{samplers.__name__}.{m.name}" for m in pkgutil.iter_modules(samplers.__path__))


def test_derive_seed_is_a_fixed_function() -> None:
    # Golden values: a change here would silently change every recorded data set.
    assert derive_seed(0, 0) == derive_seed(0, 0)
    assert derive_seed(1, 2) != derive_seed(2, 1)
    assert derive_seed("run-a", 5) == derive_seed("run-a", 5) != derive_seed("run-b", 5)
    assert derive_seed(0, 0) == 7905728728188956330


@pytest.mark.parametrize("name", ALL)
def test_every_sampler_returns_exactly_k(pool: ToolRegistry, name: str) -> None:
    sampler = get_tool_sampler(name, registry=pool, k=3, seed=1)
    for call in range(30):
        sample = sampler.sample(seed=call)
        assert isinstance(sample, ToolSample) and len(sample) == 3
        assert len(set(sample.names)) == 3
        assert sampler.sample(2, seed=call).tools.__len__() == 2


@pytest.mark.parametrize("name", ALL)
def test_same_seeds_give_the_same_samples(pool: ToolRegistry, name: str) -> None:
    first = get_tool_sampler(name, registry=pool, k=3, seed="s")
    second = get_tool_sampler(name, registry=pool, k=3, seed="s")
    assert [first.sample() for _ in range(20)] == [second.sample() for _ in range(20)]
    other = get_tool_sampler(name, registry=pool, k=3, seed="t")
    assert [first.sample(seed=i) for i in range(20)] != [other.sample(seed=i) for i in range(20)]


@pytest.mark.parametrize("name", ALL)
def test_eight_threads_match_a_serial_run(pool: ToolRegistry, name: str) -> None:
    sampler = get_tool_sampler(name, registry=pool, k=3, seed=7)
    serial = [sampler.sample(seed=i) for i in range(400)]
    with ThreadPoolExecutor(max_workers=8) as executor:
        threaded = list(executor.map(lambda i: sampler.sample(seed=i), range(400)))
    assert threaded == serial


def test_samples_are_the_same_in_other_processes_whatever_the_hash_seed() -> None:
    code = f"""
import sys
sys.path.insert(0, {os.path.dirname(__file__)!r})
from conftest import enriched, TRAVEL
from fms_dgt.core.tools.loaders.file import FileToolLoader
from fms_dgt.core.tools.samplers.base import get_tool_sampler
registry = enriched(FileToolLoader(TRAVEL).load())
for name in {ALL!r}:
    sampler = get_tool_sampler(name, registry=registry, k=2, seed="x")
    print(name, [sampler.sample(seed=i).names for i in range(5)])
"""
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": s},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for s in ("0", "4242")
    }
    assert len(outputs) == 1 and outputs.pop().count("tc/") == len(ALL)


def test_every_sampler_module_is_found() -> None:
    assert {m.rsplit(".", 1)[1] for m in MODULES} >= {
        "base",
        "random",
        "chain",
        "fan_out",
        "fan_in",
        "dag",
        "neighbor",
    }


@pytest.mark.parametrize("module", MODULES)
def test_sampler_modules_import_no_enrichment_module(module: str) -> None:
    """Samplers depend on fms_dgt.core.tools.artifacts only, never on the enrichments' code.

    (``fms_dgt.plugins`` checks that the built-in enrichment modules exist with
    ``importlib.util.find_spec``, which imports the enrichments *package*; its ``__init__`` loads
    nothing until a name is used, so only sub-modules are counted.)
    """
    code = (
        "import importlib, json, sys; importlib.import_module(sys.argv[1]);"
        "print(json.dumps([m for m in sys.modules if m.startswith('fms_dgt.core.tools.enrichments.')]))"
    )
    done = subprocess.run([sys.executable, "-c", code, module], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []


def test_unknown_sampler_and_unknown_key(pool: ToolRegistry) -> None:
    with pytest.raises(UnknownPluginError, match="tc/chian"):
        get_tool_sampler("tc/chian", registry=pool)
    with pytest.raises(SamplingError, match=r"unknown key 'max_dept' for tool sampler 'tc/dag'.*'max_depth'"):
        get_tool_sampler("tc/dag", registry=pool, max_dept=2)


@pytest.mark.parametrize(
    ("name", "artifact"), [*((n, "dataflow") for n in GRAPH), ("tc/neighbor", "neighbors")]
)
def test_missing_artifact_names_the_enrichment(travel_tools: Any, name: str, artifact: str) -> None:
    with pytest.raises(
        SamplingError, match=f"missing artifact '{artifact}'.*Add the '{artifact}' enrichment"
    ):
        get_tool_sampler(name, registry=ToolRegistry(travel_tools))


def test_invalid_k_seed_and_override(pool: ToolRegistry) -> None:
    sampler = get_tool_sampler("tc/chain", registry=pool)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(SamplingError, match="invalid k"):
            sampler.sample(bad)  # type: ignore[arg-type]
    with pytest.raises(SamplingError, match=r"unknown option 'width'.*allowed are k, seed"):
        sampler.sample(width=2)
    with pytest.raises(SamplingError, match="invalid seed"):
        get_tool_sampler("tc/random", registry=pool, seed=1.5)


def test_tool_sample_is_a_sequence_of_tools(pool: ToolRegistry) -> None:
    sample = get_tool_sampler("tc/chain", registry=pool, k=3).sample(seed=1)
    assert list(sample) == list(sample.tools) and sample[0] is sample.tools[0]
    assert sample[:2] == sample.tools[:2]
    assert repr(sample).startswith("ToolSample([") and str(len(sample.edges)) in repr(sample)


@pytest.mark.parametrize("name", ALL)
def test_empty_registry_fails_clearly(name: str, make_registry: Any) -> None:
    sampler = get_tool_sampler(name, registry=make_registry([]), k=2)
    with pytest.raises(SamplingError, match="cannot sample 2 tools") as info:
        sampler.sample()
    assert info.value.requested == 2 and info.value.tools == []


def test_sampler_keeps_the_registry_it_was_built_on(pool: ToolRegistry) -> None:
    sampler = get_tool_sampler("tc/random", registry=pool)
    assert len(sampler.registry) == len(pool)


def test_samplers_of_one_graph_share_their_derived_state(pool: ToolRegistry) -> None:
    chain = get_tool_sampler("tc/chain", registry=pool)
    dag = get_tool_sampler("tc/dag", registry=pool, seed=3)
    assert chain.succ is dag.succ and chain.pair_edges is dag.pair_edges
    narrow = get_tool_sampler("tc/chain", registry=pool, namespaces=["flights0"])
    assert narrow.succ is not chain.succ
    assert get_tool_sampler("tc/fan_out", registry=pool, namespaces=["flights0"]).succ is narrow.succ


@pytest.mark.parametrize("name", ALL)
def test_excluded_tools_are_never_sampled(pool: ToolRegistry, name: str) -> None:
    globs = ["flights*::book_flight", "accounts0::*"]
    sampler = get_tool_sampler(name, registry=pool, k=3, seed=2, exclude=globs)
    seen = {n for call in range(200) for n in sampler.sample(seed=call).names}
    assert not any(n.endswith("::book_flight") or n.startswith("accounts0::") for n in seen)
    unfiltered = get_tool_sampler(name, registry=pool, k=3, seed=2)
    everything = {n for call in range(200) for n in unfiltered.sample(seed=call).names}
    assert any(n.endswith("::book_flight") or n.startswith("accounts0::") for n in everything)
    with pytest.raises(SamplingError, match="invalid exclude"):
        get_tool_sampler(name, registry=pool, exclude=[3])
