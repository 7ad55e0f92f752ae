"""``tc/fan_in``: ``k - 1`` tools whose outputs feed one sink tool (sink last)."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from fms_dgt.core.tools.samplers.base import GraphToolSampler, Seed, ToolSample
from fms_dgt.core.tools.samplers.fan_out import pick_hub
from fms_dgt.plugins import register_tool_sampler

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = ["FanInSampler"]


@register_tool_sampler("tc/fan_in")
class FanInSampler(GraphToolSampler):
    """Sample a sink tool and ``k - 1`` distinct tools whose outputs can feed it.

    Args:
        registry: registry with a ``dataflow`` artifact.
        k: default number of tools (sink included).
        seed: the sampler's seed.
        namespaces: only use tools of these namespaces.
        max_attempts: unused by this sampler's exact selection; accepted for a uniform config.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        k: int = 3,
        seed: Seed = 0,
        namespaces: Sequence[str] | None = None,
        max_attempts: int = 64,
    ) -> None:
        super().__init__(registry, k=k, seed=seed, namespaces=namespaces, max_attempts=max_attempts)
        self.hubs = tuple(sorted(self.nodes, key=lambda n: (len(self.pred[n]), n)))
        self.degrees = tuple(len(self.pred[n]) for n in self.hubs)

    def _draw(self, k: int, rng: random.Random, seed: int, overrides: Mapping[str, Any]) -> ToolSample:
        hub = pick_hub(self.hubs, self.degrees, k - 1, rng)
        if hub is None:
            most = self.degrees[-1] if self.degrees else 0
            best = self.hubs[-1:] if self.hubs else ()
            partial = [self.tools[n] for n in (*(self.pred[best[0]] if best else ()), *best)]
            raise self._fail(
                k,
                partial,
                f"no tool is fed by {k - 1} distinct tools (the most is {most})",
                "Lower k, lower the dataflow threshold or raise its max_neighbors",
            )
        chosen = rng.sample(self.pred[hub], k - 1)
        return self._result([*chosen, hub], [(n, hub) for n in chosen], seed)
