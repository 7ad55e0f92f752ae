"""``tc/fan_out``: one seed tool whose outputs feed ``k - 1`` other tools (seed first)."""

from __future__ import annotations

import bisect
import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from fms_dgt.core.tools.samplers.base import GraphToolSampler, Seed, ToolSample, below
from fms_dgt.plugins import register_tool_sampler

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = ["FanOutSampler", "pick_hub"]


def pick_hub(hubs: Sequence[int], degrees: Sequence[int], need: int, rng: random.Random) -> int | None:
    """A uniformly random hub with at least ``need`` neighbours (``hubs`` sorted by degree)."""
    first = bisect.bisect_left(degrees, need)
    if first == len(hubs):
        return None
    return hubs[first + below(rng, len(hubs) - first)]


@register_tool_sampler("tc/fan_out")
class FanOutSampler(GraphToolSampler):
    """Sample a seed tool and ``k - 1`` distinct tools its outputs can feed.

    Args:
        registry: registry with a ``dataflow`` artifact.
        k: default number of tools (seed included).
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
        self.hubs = tuple(sorted(self.nodes, key=lambda n: (len(self.succ[n]), n)))
        self.degrees = tuple(len(self.succ[n]) for n in self.hubs)

    def _draw(self, k: int, rng: random.Random, seed: int, overrides: Mapping[str, Any]) -> ToolSample:
        hub = pick_hub(self.hubs, self.degrees, k - 1, rng)
        if hub is None:
            most = self.degrees[-1] if self.degrees else 0
            best = self.hubs[-1:] if self.hubs else ()
            partial = [self.tools[n] for n in (*best, *(self.succ[best[0]] if best else ()))]
            raise self._fail(
                k,
                partial,
                f"no tool feeds {k - 1} distinct tools (the most is {most})",
                "Lower k, lower the dataflow threshold or raise its max_neighbors",
            )
        chosen = rng.sample(self.succ[hub], k - 1)
        return self._result([hub, *chosen], [(hub, n) for n in chosen], seed)
