"""``tc/chain``: tools in call order, each one's output feeding the next one's input.

A randomised depth-first walk over the ``dataflow`` graph from a random tool with outgoing edges,
backtracking out of dead ends; several starting points are tried before giving up. No qualified
name appears twice in a chain.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from fms_dgt.core.tools.samplers.base import GraphToolSampler, ToolSample, below
from fms_dgt.plugins import register_tool_sampler

if TYPE_CHECKING:
    pass

__all__ = ["ChainSampler"]


@register_tool_sampler("tc/chain")
class ChainSampler(GraphToolSampler):
    """Sample chains ``t1 -> t2 -> ... -> tk`` along dataflow edges.

    Args:
        registry: registry with a ``dataflow`` artifact.
        k: default chain length.
        seed: the sampler's seed.
        namespaces: only use tools of these namespaces.
        max_attempts: starting points tried before raising ``SamplingError``.
    """

    def _prepare(self) -> None:
        self.starts = tuple(n for n in self.nodes if self.succ[n])

    def _draw(self, k: int, rng: random.Random, seed: int, overrides: Mapping[str, Any]) -> ToolSample:
        if k == 1 and self.nodes:
            return self._result([self.nodes[below(rng, len(self.nodes))]], [], seed)
        if not self.starts:
            raise self._fail(
                k,
                [],
                "the dataflow graph has no edges among the allowed tools",
                "Add tools with output_parameters, lower the dataflow threshold, or widen namespaces",
            )
        best: list[int] = []
        for _ in range(self.max_attempts):
            path = self._walk(self.starts[below(rng, len(self.starts))], k, rng)
            if len(path) == k:
                return self._result(path, list(itertools.pairwise(path)), seed)
            best = path if len(path) > len(best) else best
        raise self._fail(
            k,
            [self.tools[n] for n in best],
            f"no chain of {k} connected tools found from {self.max_attempts} starting points "
            f"(longest: {len(best)})",
            "Lower k, lower the dataflow threshold, or raise max_attempts",
        )

    def _walk(self, start: int, k: int, rng: random.Random) -> list[int]:
        """Randomised DFS with backtracking; returns a path of length ``k`` or the longest seen."""
        path, used = [start], {self.qid[start]}
        options: list[list[int]] = [list(self.succ[start])]
        best, steps = [start], 0
        while options and len(path) < k and steps < 16 * k:
            steps += 1
            nxt = _pop_random(options[-1], rng, used, self.qid)
            if nxt is None:
                options.pop()
                used.discard(self.qid[path.pop()])
                continue
            path.append(nxt)
            used.add(self.qid[nxt])
            options.append(list(self.succ[nxt]))
            best = list(path) if len(path) > len(best) else best
        return path if len(path) == k else best


def _pop_random(options: list[int], rng: random.Random, used: set[int], qid: Sequence[int]) -> int | None:
    """Remove and return a random option whose name is not used yet (None when none is left)."""
    while options:
        i = below(rng, len(options))
        node = options[i]
        options[i] = options[-1]
        options.pop()
        if qid[node] not in used:
            return node
    return None
