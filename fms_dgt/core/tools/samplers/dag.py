"""``tc/dag``: a connected DAG of dataflow edges, returned in a topological order.

The DAG grows from a random tool: each step attaches a new tool that one of the chosen tools feeds
(one level below it) or that feeds one of them (one level above). Levels bound the shape:
``max_depth`` is the most levels, ``max_width`` the most tools on one level. Because every edge
used goes from a lower level to a higher one, the result is acyclic by construction; the edges
reported are all dataflow edges between chosen tools that go down the levels.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from fms_dgt.core.tools.samplers.base import GraphToolSampler, Seed, ToolSample, below
from fms_dgt.errors import SamplingError
from fms_dgt.plugins import register_tool_sampler

if TYPE_CHECKING:
    from fms_dgt.core.tools.artifacts import Edge
    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = ["DagSampler"]

_QUICK_TRIES = 12


class _Growth:
    """One DAG being grown: chosen nodes, their levels, names used and tools per level."""

    __slots__ = ("level", "nodes", "used", "width")

    def __init__(self, root: int, qid: int) -> None:
        self.nodes = [root]
        self.level = {root: 0}
        self.used = {qid}
        self.width = {0: 1}

    def fits(self, level: int, max_depth: int | None, max_width: int | None) -> bool:
        if max_width is not None and self.width.get(level, 0) >= max_width:
            return False
        if max_depth is None:
            return True
        return max(level, *self.width) - min(level, *self.width) < max_depth

    def add(self, node: int, level: int, qid: int) -> None:
        self.nodes.append(node)
        self.level[node] = level
        self.used.add(qid)
        self.width[level] = self.width.get(level, 0) + 1


@register_tool_sampler("tc/dag")
class DagSampler(GraphToolSampler):
    """Sample connected DAGs of ``k`` tools.

    Args:
        registry: registry with a ``dataflow`` artifact.
        k: default number of tools.
        seed: the sampler's seed.
        namespaces: only use tools of these namespaces.
        max_attempts: starting points tried before raising ``SamplingError``.
        max_depth: most levels (None: unbounded); overridable per call.
        max_width: most tools on one level (None: unbounded); overridable per call.
        exclude: qualified names or globs never sampled (nor walked through).
    """

    overridable = ("max_depth", "max_width")

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        k: int = 4,
        seed: Seed = 0,
        namespaces: Sequence[str] | None = None,
        max_attempts: int = 64,
        max_depth: int | None = None,
        max_width: int | None = None,
        exclude: Sequence[str] = (),
        min_score: float = 0.0,
    ) -> None:
        super().__init__(
            registry,
            k=k,
            seed=seed,
            namespaces=namespaces,
            max_attempts=max_attempts,
            exclude=exclude,
            min_score=min_score,
        )
        self.max_depth = _check_bound(max_depth, "max_depth")
        self.max_width = _check_bound(max_width, "max_width")
        self.roots = tuple(n for n in self.nodes if self.succ[n] or self.pred[n])

    def _draw(self, k: int, rng: random.Random, seed: int, overrides: Mapping[str, Any]) -> ToolSample:
        depth, width = self.max_depth, self.max_width
        if overrides:
            depth = _check_bound(overrides.get("max_depth", depth), "max_depth")
            width = _check_bound(overrides.get("max_width", width), "max_width")
        pool = self.roots if k > 1 else self.nodes
        if not pool:
            raise self._fail(
                k,
                [],
                "the dataflow graph has no edges among the allowed tools",
                "Add tools with output_parameters, lower the dataflow threshold, or widen namespaces",
            )
        best: list[int] = []
        for _ in range(self.max_attempts):
            root = pool[below(rng, len(pool))]
            growth = self._grow(_Growth(root, self.qid[root]), k, rng, depth, width)
            if len(growth.nodes) == k:
                return self._finish(growth, seed)
            best = growth.nodes if len(growth.nodes) > len(best) else best
        raise self._fail(
            k,
            [self.tools[n] for n in best],
            f"no connected DAG of {k} tools within max_depth={depth}, max_width={width} found from "
            f"{self.max_attempts} starting points (largest: {len(best)})",
            "Lower k, relax max_depth/max_width, or lower the dataflow threshold",
        )

    def _grow(
        self, growth: _Growth, k: int, rng: random.Random, depth: int | None, width: int | None
    ) -> _Growth:
        while len(growth.nodes) < k:
            step = self._quick_step(growth, rng, depth, width) or self._full_step(growth, rng, depth, width)
            if step is None:
                break
            growth.add(step[0], step[1], self.qid[step[0]])
        return growth

    def _quick_step(
        self, growth: _Growth, rng: random.Random, depth: int | None, width: int | None
    ) -> tuple[int, int] | None:
        """A few O(1) random proposals; most steps succeed here."""
        for _ in range(_QUICK_TRIES):
            anchor = growth.nodes[below(rng, len(growth.nodes))]
            down = rng.random() < 0.5
            options = self.succ[anchor] if down else self.pred[anchor]
            if not options:
                continue
            node = options[below(rng, len(options))]
            level = growth.level[anchor] + (1 if down else -1)
            if self.qid[node] not in growth.used and growth.fits(level, depth, width):
                return node, level
        return None

    def _full_step(
        self, growth: _Growth, rng: random.Random, depth: int | None, width: int | None
    ) -> tuple[int, int] | None:
        """Every possible attachment, when random proposals keep failing (exact fallback)."""
        found: dict[int, int] = {}
        for anchor in growth.nodes:
            for options, delta in ((self.succ[anchor], 1), (self.pred[anchor], -1)):
                level = growth.level[anchor] + delta
                for node in options:
                    if (
                        node not in found
                        and self.qid[node] not in growth.used
                        and growth.fits(level, depth, width)
                    ):
                        found[node] = level
        if not found:
            return None
        node = sorted(found)[below(rng, len(found))]
        return node, found[node]

    def _finish(self, growth: _Growth, seed: int) -> ToolSample:
        level, pairs = growth.level, self.pair_edges
        order = sorted(growth.nodes, key=level.__getitem__)
        edges: list[Edge] = []
        for i, a in enumerate(order):
            for b in order[i + 1 :]:
                found = pairs.get((a, b)) if level[a] < level[b] else None
                if found:
                    edges.extend(found)
        return ToolSample([self.tools[n] for n in order], edges, seed)


def _check_bound(value: Any, key: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SamplingError(f"invalid {key} {value!r} for sampler 'tc/dag': use a positive integer or null.")
    return value
