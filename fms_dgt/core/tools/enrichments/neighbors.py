"""The ``neighbors`` enrichment: each tool's ``k`` nearest tools by embedding, in ``artifacts["neighbors"]``.

The search is exact (no approximate index): tool vectors are rounded to integers so every dot
product is computed exactly in float32 whatever the chunking, rows are scored in chunks of a bounded
number of cells, and each row keeps its top ``k`` by cosine similarity. Equal scores are ordered by
a per-tool identity (a hash of the tool's qualified name and vector), so the result does not
depend on registry order. Another overload of the same qualified name is never a neighbour. Memory
is linear in the number of tools. Needs the ``embeddings`` enrichment.

With a cache directory, a later run reuses the previous lists: rows whose tool is unchanged and
whose neighbours all still exist are only compared with the *new* tools and merged; other rows are
recomputed. The result is identical to a cold run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from os import PathLike
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.enrichments._cache import StateStore
from fms_dgt.core.tools.enrichments.base import ToolEnrichment, resolve_cache_dir, stable_hash
from fms_dgt.core.tools.enrichments.embeddings import ToolEmbeddings, quantise, row_index
from fms_dgt.errors import ConfigError, EnrichmentError
from fms_dgt.plugins import register_tool_enrichment

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = ["NeighborsEnrichment", "ToolNeighbors"]

_CHUNK_CELLS = 1 << 24


class ToolNeighbors:
    """The ``neighbors`` artifact.

    Attributes:
        tools: the registry's tools (row order of the arrays).
        indices: ``(len(tools), k)`` neighbour rows, best first, ``-1`` where a row has fewer.
        scores: the matching cosine similarities.
        k: neighbours per tool.
    """

    __slots__ = ("_rows", "indices", "k", "scores", "tools")

    def __init__(
        self, tools: Sequence[Tool], indices: npt.NDArray[np.int64], scores: npt.NDArray[np.float32]
    ):
        self.tools = tuple(tools)
        self.indices = indices
        self.scores = scores
        self.indices.setflags(write=False)
        self.scores.setflags(write=False)
        self.k = int(indices.shape[1]) if indices.ndim == 2 else 0
        self._rows: dict[tuple[str, str], int] | None = None

    def row(self, tool: Tool) -> int:
        """The row of ``tool`` (KeyError when it was not in the registry)."""
        return row_index(self, tool)

    def neighbors(self, tool: Tool) -> list[tuple[Tool, float]]:
        """The nearest tools of ``tool`` with their similarity, best first."""
        row = self.row(tool)
        return [
            (self.tools[int(i)], float(s))
            for i, s in zip(self.indices[row], self.scores[row], strict=True)
            if i >= 0
        ]


@register_tool_enrichment("neighbors")
class NeighborsEnrichment(ToolEnrichment):
    """Find the ``k`` nearest tools of every tool.

    Args:
        k: neighbours per tool.
        cache_dir: cache directory (the config passes ``tools.cache_dir``); None disables caching
            unless ``$DGT_CACHE_DIR`` is set.
        force: recompute and overwrite the cache.
    """

    artifact_key = "neighbors"
    depends_on = ("embeddings",)

    def __init__(self, *, k: int = 10, cache_dir: str | PathLike[str] | None = None, force: bool = False):
        if k < 1:
            raise ConfigError(f"invalid k {k!r} for the neighbors enrichment: it must be at least 1.")
        self.k = int(k)
        self.force = force
        self.root = resolve_cache_dir(cache_dir)

    def enrich(self, registry: ToolRegistry) -> ToolNeighbors:
        """Neighbours of every tool, from ``registry.artifacts["embeddings"]``."""
        embeddings = registry.artifacts.get("embeddings")
        if not isinstance(embeddings, ToolEmbeddings):
            raise EnrichmentError(
                "missing artifact 'embeddings' for the neighbors enrichment: it was not computed. "
                "Add the embeddings enrichment before neighbors."
            )
        qnames = [t.qualified_name for t in embeddings.tools]
        search = _Search(embeddings.matrix, qnames, self.k)
        return ToolNeighbors(embeddings.tools, *search.table(self._lists(search, embeddings)))

    def _states(self, embeddings: ToolEmbeddings) -> StateStore | None:
        if self.root is None:
            return None
        settings = stable_hash([self.k, embeddings.encoder], size=16)
        return StateStore(self.root / "neighbors" / settings / "states")

    def _lists(self, search: _Search, embeddings: ToolEmbeddings) -> _Lists:
        states = self._states(embeddings)
        if states is None:
            return search.rows(np.arange(search.count), None)
        key = stable_hash(sorted(search.idents))
        previous = None if self.force else states.get(key)
        if previous is None and not self.force:
            previous = states.latest()
        lists = search.rows(np.arange(search.count), None) if previous is None else search.update(previous)
        states.put(key, search.state(lists))
        return lists


_Lists = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float32]]


class _Search:
    """Exact top-k search over one embedding matrix; ranking value = dot x column inverse norm.

    A row's own norm does not change its ranking, so it is applied only to the final scores.
    """

    def __init__(self, matrix: npt.NDArray[np.float32], qnames: Sequence[str], k: int) -> None:
        self.count = len(matrix)
        self.k = k
        self.vectors, self.inverse = quantise(matrix) if self.count else (matrix, np.zeros(0, np.float32))
        self.siblings = _siblings(qnames)
        qids: dict[str, int] = {}
        self.qid = np.array([qids.setdefault(q, len(qids)) for q in qnames], dtype=np.int64)
        self.idents = [
            hashlib.sha256(q.encode() + b"\x1f" + row.tobytes()).hexdigest()[:32]
            for q, row in zip(qnames, self.vectors, strict=True)
        ]
        self.tie = np.argsort(np.argsort(np.asarray(self.idents, dtype="U32"), kind="stable"), kind="stable")

    def rows(self, rows: npt.NDArray[np.int64], cols: npt.NDArray[np.int64] | None) -> _Lists:
        """Top-k candidates (row, column, ranking value) of ``rows`` among ``cols`` (all when None)."""
        parts: list[_Lists] = []
        width = self.count if cols is None else len(cols)
        if width == 0 or len(rows) == 0 or self.vectors.shape[1] == 0:
            return _empty()
        step = max(1, _CHUNK_CELLS // width)
        for lo in range(0, len(rows), step):
            parts.append(self._chunk(rows[lo : lo + step], cols))
        return _concat(parts)

    def _chunk(self, rows: npt.NDArray[np.int64], cols: npt.NDArray[np.int64] | None) -> _Lists:
        dots = self.vectors[rows] @ (self.vectors if cols is None else self.vectors[cols]).T
        dots *= self.inverse[None, :] if cols is None else self.inverse[cols][None, :]
        self._exclude(dots, rows, cols)
        k = min(self.k, dots.shape[1])
        flat = np.flatnonzero(dots >= _lower_bound(dots, k)[:, None])  # flatnonzero beats 2-D nonzero
        r, c = np.divmod(flat, dots.shape[1])
        value = dots[r, c]
        keep = value > -np.inf
        r, c, value = r[keep], c[keep], value[keep]
        columns = c if cols is None else cols[c]
        return self.top(rows[r], columns, value)

    def _exclude(
        self, dots: npt.NDArray[np.float32], rows: npt.NDArray[np.int64], cols: npt.NDArray[np.int64] | None
    ) -> None:
        """A tool is not its own neighbour, nor is another overload of its name."""
        if cols is not None:
            dots[self.qid[rows][:, None] == self.qid[cols][None, :]] = -np.inf
            return
        dots[np.arange(len(rows)), rows] = -np.inf
        for offset, row in enumerate(rows.tolist()):
            if row in self.siblings:
                dots[offset, self.siblings[row]] = -np.inf

    def top(
        self, r: npt.NDArray[np.int64], c: npt.NDArray[np.int64], value: npt.NDArray[np.float32]
    ) -> _Lists:
        """The best ``k`` per row: value descending, then tool identity."""
        order = np.lexsort((self.tie[c], -value, r))
        r, c, value = r[order], c[order], value[order]
        rank = np.arange(len(r)) - np.searchsorted(r, r, side="left")
        keep = rank < self.k
        return r[keep], c[keep], value[keep]

    def update(self, state: Mapping[str, npt.NDArray[Any]]) -> _Lists:
        """Reuse a previous run's lists where they stay exact; recompute the other rows."""
        index = {ident: i for i, ident in enumerate(self.idents)}
        mapping = np.array([index.get(i, -1) for i in state["idents"].tolist()] or [0], dtype=np.int64)
        old_r, old_c = mapping[state["row"]], mapping[state["col"]]
        known = np.zeros(self.count, dtype=bool)
        known[mapping[mapping >= 0]] = True
        valid = known.copy()
        valid[old_r[(old_c < 0) & (old_r >= 0)]] = False
        reuse, redo = np.flatnonzero(valid), np.flatnonzero(~valid)
        kept = (old_r >= 0) & valid[np.maximum(old_r, 0)]
        old = (old_r[kept], old_c[kept], state["value"][kept].astype(np.float32))
        fresh = self.rows(reuse, np.flatnonzero(~known))
        merged = self.top(*_concat([old, fresh]))
        return _concat([merged, self.rows(redo, None)])

    def state(self, lists: _Lists) -> dict[str, npt.NDArray[Any]]:
        r, c, value = lists
        return {"idents": np.asarray(self.idents, dtype="U32"), "row": r, "col": c, "value": value}

    def table(self, lists: _Lists) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """The lists as ``(indices, scores)`` arrays, best first, padded with -1 / 0.

        Each row's entries in ``lists`` are already best first (they come from :meth:`top`), so a
        stable sort by row is enough.
        """
        order = np.argsort(lists[0], kind="stable")
        r, c, value = lists[0][order], lists[1][order], lists[2][order]
        indices = np.full((self.count, self.k), -1, dtype=np.int64)
        scores = np.zeros((self.count, self.k), dtype=np.float32)
        rank = np.arange(len(r)) - np.searchsorted(r, r, side="left")
        indices[r, rank] = c
        scores[r, rank] = value * self.inverse[r]
        return indices, scores


def _empty() -> _Lists:
    return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32)


def _concat(parts: Sequence[_Lists]) -> _Lists:
    if not parts:
        return _empty()
    return (
        np.concatenate([p[0] for p in parts]),
        np.concatenate([p[1] for p in parts]),
        np.concatenate([p[2] for p in parts]),
    )


def nearest(
    matrix: npt.NDArray[np.float32], qnames: Sequence[str], k: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """Exact top-``k`` cosine neighbours of every row (excluding rows with the same qualified name).

    Returns:
        ``(indices, scores)``, both ``(len(matrix), k)``, best first, padded with ``-1`` / ``0``.
    """
    search = _Search(matrix, qnames, k)
    return search.table(search.rows(np.arange(search.count), None))


def _siblings(qnames: Sequence[str]) -> Mapping[int, list[int]]:
    """Rows that share a qualified name with another row (overloads), including themselves."""
    groups: dict[str, list[int]] = {}
    for row, name in enumerate(qnames):
        groups.setdefault(name, []).append(row)
    return {row: group for group in groups.values() if len(group) > 1 for row in group}


def _lower_bound(dots: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.float32]:
    """Per row, a value no larger than its k-th largest: the k-th largest of a column sample.

    Filtering by it first means the exact top-k is chosen among a few hundred candidates per row
    instead of partitioning whole rows.
    """
    sample = dots[:, : max(4096, 4 * k)]
    width = sample.shape[1]
    bound: npt.NDArray[np.float32] = np.partition(sample, width - k, axis=1)[:, width - k]
    return bound
