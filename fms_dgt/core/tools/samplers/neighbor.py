"""``tc/neighbor``: a random tool and tools similar to it (by embedding), seed first.

Reads the ``neighbors`` artifact. With ``pool: null`` the sample is the seed and its ``k - 1``
nearest tools; with ``pool: n`` the ``k - 1`` companions are drawn from the ``n`` nearest, for more
variety. Companions keep their similarity order. No edges are reported.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from fms_dgt.core.tools.artifacts import ToolNeighbors
from fms_dgt.core.tools.samplers.base import Seed, ToolSample, ToolSampler, _allowed
from fms_dgt.core.tools.samplers.fan_out import pick_hub
from fms_dgt.errors import SamplingError
from fms_dgt.plugins import register_tool_sampler

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = ["NeighborSampler"]


@register_tool_sampler("tc/neighbor")
class NeighborSampler(ToolSampler):
    """Sample a seed tool and ``k - 1`` of its nearest neighbours.

    Args:
        registry: registry with a ``neighbors`` artifact.
        k: default number of tools (seed included).
        seed: the sampler's seed.
        namespaces: only use tools of these namespaces.
        pool: draw companions among this many nearest tools (None: take the nearest); overridable.
        exclude: qualified names or globs never sampled.
    """

    required_artifacts = ("neighbors",)
    overridable = ("pool",)

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        k: int = 3,
        seed: Seed = 0,
        namespaces: Sequence[str] | None = None,
        pool: int | None = None,
        exclude: Sequence[str] = (),
    ) -> None:
        super().__init__(registry, k=k, seed=seed, exclude=exclude)
        artifact = self.registry.artifacts["neighbors"]
        if not isinstance(artifact, ToolNeighbors):
            raise SamplingError(
                f"invalid artifact 'neighbors' for sampler {self.name!r}: got {type(artifact).__name__}. "
                "Use the built-in neighbors enrichment."
            )
        self.tools = artifact.tools
        self.pool = _check_pool(pool)
        allowed = _allowed(self.tools, namespaces, self.name, self.exclude)
        self.lists = tuple(
            self._companions(artifact.indices[n].tolist(), n, allowed) for n in range(len(self.tools))
        )
        self.hubs = tuple(
            sorted((n for n in range(len(self.tools)) if allowed[n]), key=lambda n: (len(self.lists[n]), n))
        )
        self.degrees = tuple(len(self.lists[n]) for n in self.hubs)

    def _companions(self, row: Sequence[int], node: int, allowed: Sequence[bool]) -> tuple[int, ...]:
        if not allowed[node]:
            return ()
        seen = {self.tools[node].qualified_name}
        kept = []
        for other in row:
            if other >= 0 and allowed[other] and self.tools[other].qualified_name not in seen:
                seen.add(self.tools[other].qualified_name)
                kept.append(other)
        return tuple(kept)

    def _draw(self, k: int, rng: random.Random, seed: int, overrides: Mapping[str, Any]) -> ToolSample:
        pool = _check_pool(overrides.get("pool", self.pool))
        hub = pick_hub(self.hubs, self.degrees, k - 1, rng)
        if hub is None:
            most = self.degrees[-1] if self.degrees else 0
            best = self.hubs[-1:]
            partial = [self.tools[n] for n in (*best, *(self.lists[best[0]] if best else ()))]
            raise self._fail(
                k,
                partial,
                f"no tool has {k - 1} distinct neighbours (the most is {most})",
                "Raise k of the neighbors enrichment or lower k",
            )
        options = self.lists[hub]
        if pool is None or pool <= k - 1:
            chosen = list(options[: k - 1])
        else:
            chosen = sorted(rng.sample(range(min(pool, len(options))), k - 1))
            chosen = [options[i] for i in chosen]
        return ToolSample([self.tools[hub], *(self.tools[n] for n in chosen)], (), seed)


def _check_pool(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SamplingError(
            f"invalid pool {value!r} for sampler 'tc/neighbor': use a positive integer or null."
        )
    return value
