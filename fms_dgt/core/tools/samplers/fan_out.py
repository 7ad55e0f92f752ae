"""``tc/fan_out``: one seed tool whose outputs feed ``k - 1`` other tools (seed first).

Also the shared base of ``tc/fan_in`` (:class:`HubSampler`), its mirror image.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from fms_dgt.core.tools.samplers.base import GraphToolSampler, ToolSample, below
from fms_dgt.plugins import register_tool_sampler

if TYPE_CHECKING:
    pass

__all__ = ["FanOutSampler", "HubSampler", "pick_hub"]


def pick_hub(hubs: Sequence[int], degrees: Sequence[int], need: int, rng: random.Random) -> int | None:
    """A uniformly random hub with at least ``need`` neighbours (``hubs`` sorted by degree)."""
    first = bisect.bisect_left(degrees, need)
    if first == len(hubs):
        return None
    return hubs[first + below(rng, len(hubs) - first)]


class HubSampler(GraphToolSampler):
    """A hub tool and ``k - 1`` distinct neighbours on one side of it in the dataflow graph.

    Subclasses say which side (``feeds``: True for the tools the hub's outputs feed, False for
    the tools that feed the hub) and describe a hub that has too few neighbours.

    Args:
        registry: registry with a ``dataflow`` artifact.
        k: default number of tools (hub included).
        seed: the sampler's seed.
        namespaces: only use tools of these namespaces.
        max_attempts: unused by this sampler's exact selection; accepted for a uniform config.
    """

    feeds: ClassVar[bool] = True
    shortage: ClassVar[str] = ""

    def _prepare(self) -> None:
        side = self.succ if self.feeds else self.pred
        self.side = side
        self.hubs = tuple(sorted(self.nodes, key=lambda n: (len(side[n]), n)))
        self.degrees = tuple(len(side[n]) for n in self.hubs)

    def _draw(self, k: int, rng: random.Random, seed: int, overrides: Mapping[str, Any]) -> ToolSample:
        hub = pick_hub(self.hubs, self.degrees, k - 1, rng)
        if hub is None:
            most = self.degrees[-1] if self.degrees else 0
            best = self.hubs[-1] if self.hubs else None
            others = list(self.side[best]) if best is not None else []
            hub_part = [best] if best is not None else []
            order = [*hub_part, *others] if self.feeds else [*others, *hub_part]
            raise self._fail(
                k,
                [self.tools[n] for n in order],
                self.shortage.format(n=k - 1, most=most),
                "Lower k, lower the dataflow threshold or raise its max_neighbors",
            )
        chosen = rng.sample(self.side[hub], k - 1)
        if self.feeds:
            return self._result([hub, *chosen], [(hub, n) for n in chosen], seed)
        return self._result([*chosen, hub], [(n, hub) for n in chosen], seed)


@register_tool_sampler("tc/fan_out")
class FanOutSampler(HubSampler):
    """Sample a seed tool and ``k - 1`` distinct tools its outputs can feed (seed first)."""

    feeds = True
    shortage = "no tool feeds {n} distinct tools (the most is {most})"
