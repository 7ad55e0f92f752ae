"""``tc/random``: ``k`` distinct tools drawn at random, namespace by namespace.

Each draw first picks a namespace, then a tool of it uniformly. ``balance: proportional`` (default)
weighs namespaces by their number of tools, which is uniform over tools; ``balance: uniform`` gives
every namespace the same chance, so small namespaces are not drowned by large ones. ``weights``
gives explicit per-namespace weights instead (non-negative, normalised; unlisted namespaces are not
sampled). ``namespaces`` restricts the pool. No qualified name appears twice in a sample.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.samplers.base import Seed, ToolSample, ToolSampler, below
from fms_dgt.errors import ConfigError, SamplingError
from fms_dgt.plugins import register_tool_sampler

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = ["RandomSampler"]

_BALANCES = ("proportional", "uniform")


@register_tool_sampler("tc/random")
class RandomSampler(ToolSampler):
    """Sample ``k`` distinct tools at random.

    Args:
        registry: the registry (no artifact needed).
        k: default number of tools.
        seed: the sampler's seed.
        namespaces: only sample these namespaces; overridable per call.
        balance: ``proportional`` or ``uniform`` across namespaces; overridable per call.
        weights: namespace -> weight (replaces ``balance``); overridable per call.
        exclude: qualified names or globs never sampled.
    """

    overridable = ("namespaces", "balance", "weights")
    extra_config_keys = ("namespace", "strategy")

    @classmethod
    def prepare_config(cls, settings: Mapping[str, Any]) -> dict[str, Any]:
        """Also accept the seed's ``strategy`` for ``balance``."""
        out = super().prepare_config(settings)
        if "strategy" in out:
            if "balance" in out:
                raise ConfigError("conflicting keys: give strategy or balance, not both")
            out["balance"] = out.pop("strategy")
        return out

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        k: int = 3,
        seed: Seed = 0,
        namespaces: Sequence[str] | None = None,
        balance: str = "proportional",
        weights: Mapping[str, float] | None = None,
        exclude: Sequence[str] = (),
    ) -> None:
        super().__init__(registry, k=k, seed=seed, exclude=exclude)
        groups: dict[str, list[Tool]] = {}
        for tool in self.registry.tools():
            if not self.excluded(tool):
                groups.setdefault(tool.namespace, []).append(tool)
        self.groups = {ns: _by_name(tools) for ns, tools in groups.items()}
        self.options: dict[str, Any] = {"namespaces": namespaces, "balance": balance, "weights": weights}
        self.default = self._plan(namespaces, balance, weights)

    def _plan(
        self, namespaces: Sequence[str] | None, balance: str, weights: Mapping[str, float] | None
    ) -> tuple[tuple[str, ...], tuple[float, ...]]:
        """Namespaces to sample and their normalised weights."""
        if balance not in _BALANCES:
            raise SamplingError(
                f"invalid balance {balance!r} for sampler 'tc/random': use {' or '.join(_BALANCES)}."
            )
        chosen = (
            list(self.groups)
            if namespaces is None
            else list(dict.fromkeys([namespaces] if isinstance(namespaces, str) else namespaces))
        )
        if weights is not None:
            chosen = [ns for ns in chosen if ns in _check_weights(weights, self.groups)]
        for ns in chosen:
            if ns not in self.groups:
                raise SamplingError(
                    f"unknown namespace {ns!r} for sampler 'tc/random': the registry has "
                    f"{', '.join(sorted(self.groups)) or 'no namespaces'}. Fix the namespaces key."
                )
        raw = [_weight(ns, weights, balance, self.groups) for ns in chosen]
        total = sum(raw)
        kept = [(ns, w / total) for ns, w in zip(chosen, raw, strict=True) if w > 0] if total > 0 else []
        return tuple(ns for ns, _ in kept), tuple(w for _, w in kept)

    def _draw(self, k: int, rng: random.Random, seed: int, overrides: Mapping[str, Any]) -> ToolSample:
        plan = self.default
        if overrides:
            merged = {**self.options, **overrides}
            plan = self._plan(merged["namespaces"], merged["balance"], merged["weights"])
        names, weights = plan
        available = sum(len(self.groups[ns]) for ns in names)
        if available < k:
            partial = [group[0] for ns in names for group in self.groups[ns]]
            raise self._fail(
                k,
                partial,
                f"only {available} distinct tool names are available",
                "Lower k or sample more namespaces",
            )
        return ToolSample(_pick(k, rng, names, weights, self.groups), (), seed)


def _by_name(tools: Sequence[Tool]) -> tuple[tuple[Tool, ...], ...]:
    """Tools grouped by qualified name (overloads together), so a name is drawn at most once."""
    names: dict[str, list[Tool]] = {}
    for tool in tools:
        names.setdefault(tool.qualified_name, []).append(tool)
    return tuple(tuple(group) for group in names.values())


def _check_weights(weights: Mapping[str, float], groups: Mapping[str, Any]) -> Mapping[str, float]:
    if not isinstance(weights, Mapping):
        raise SamplingError(
            f"invalid weights {weights!r} for sampler 'tc/random': use a namespace -> number map."
        )
    for ns, value in weights.items():
        if ns not in groups:
            raise SamplingError(
                f"unknown namespace {ns!r} in weights of sampler 'tc/random': the registry has "
                f"{', '.join(sorted(groups)) or 'no namespaces'}."
            )
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or value < 0
        ):
            raise SamplingError(
                f"invalid weight {value!r} for namespace {ns!r} in sampler 'tc/random': weights must be "
                "finite non-negative numbers."
            )
    if not any(v > 0 for v in weights.values()):
        raise SamplingError(
            "invalid weights for sampler 'tc/random': they sum to zero. Give one a positive weight."
        )
    return weights


def _weight(ns: str, weights: Mapping[str, float] | None, balance: str, groups: Mapping[str, Any]) -> float:
    if weights is not None:
        return float(weights.get(ns, 0.0))
    return 1.0 if balance == "uniform" else float(len(groups[ns]))


def _pick(
    k: int,
    rng: random.Random,
    names: Sequence[str],
    weights: Sequence[float],
    groups: Mapping[str, Sequence[tuple[Tool, ...]]],
) -> list[Tool]:
    """``k`` distinct names; a namespace that runs out is dropped and the rest renormalised."""
    live, cumulative = list(names), list(itertools.accumulate(weights))
    taken: dict[str, set[int]] = {}
    picked: list[Tool] = []
    while len(picked) < k:
        slot = min(bisect.bisect_right(cumulative, rng.random() * cumulative[-1]), len(live) - 1)
        ns = live[slot]
        used = taken.setdefault(ns, set())
        index = _fresh_index(len(groups[ns]), used, rng)
        used.add(index)
        group = groups[ns][index]
        picked.append(group[below(rng, len(group))] if len(group) > 1 else group[0])
        if len(used) == len(groups[ns]):
            del live[slot]
            kept = [w for n, w in zip(names, weights, strict=True) if n in live]
            cumulative = list(itertools.accumulate(kept))
    return picked


def _fresh_index(size: int, used: set[int], rng: random.Random) -> int:
    """A uniformly random index in ``range(size)`` not in ``used`` (which is never all of it)."""
    if 2 * len(used) < size:
        while True:
            index = below(rng, size)
            if index not in used:
                return index
    remaining = [i for i in range(size) if i not in used]
    return remaining[below(rng, len(remaining))]
