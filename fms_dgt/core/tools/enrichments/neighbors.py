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

The artifact type, :class:`~fms_dgt.core.tools.artifacts.ToolNeighbors`, is in
:mod:`fms_dgt.core.tools.artifacts`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from fms_dgt.core.tools.artifacts import ToolEmbeddings, ToolNeighbors
from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.enrichments._cache import (
    MemoStore,
    StateStore,
    group_slice,
    memo_index,
    per_tool_shard,
    pool_groups,
)
from fms_dgt.core.tools.enrichments._ordering import rank_in_runs, score_order
from fms_dgt.core.tools.enrichments._vectors import quantise
from fms_dgt.core.tools.enrichments.base import ToolEnrichment, resolve_cache_dir, stable_hash
from fms_dgt.errors import ConfigError, EnrichmentError
from fms_dgt.plugins import register_tool_enrichment

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

# ToolNeighbors lives in fms_dgt.core.tools.artifacts; it is still exported here for earlier imports.
__all__ = ["NeighborsEnrichment", "ToolNeighbors", "nearest"]

_CHUNK_CELLS = 1 << 24


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
        tools = embeddings.tools
        distinct = len(tools) if registry.distinct_names() == len(tools) else None
        search = _Search(embeddings.matrix, tools, self.k, self._prepared(registry, embeddings), distinct)
        return ToolNeighbors(embeddings.tools, *search.table(self._lists(search, embeddings)))

    def _base(self, embeddings: ToolEmbeddings) -> Path | None:
        if self.root is None:
            return None
        return self.root / "neighbors" / stable_hash([self.k, embeddings.encoder], size=16)

    def _states(self, embeddings: ToolEmbeddings) -> StateStore | None:
        base = self._base(embeddings)
        return StateStore(base / "states") if base else None

    def _prepared(self, registry: ToolRegistry, embeddings: ToolEmbeddings) -> _Prepared | None:
        """Quantised rows, inverse norms and identities, from the memo where a namespace is known.

        Returns None without a cache (the search then prepares every row itself).
        """
        base = self._base(embeddings)
        if base is None or list(registry.tools()) != list(embeddings.tools):
            return None
        tools = embeddings.tools
        memo = MemoStore(base / "memo", ("ptr", "vectors", "inverse", "idents"))
        groups = pool_groups(registry, tools)
        shards = [] if self.force else memo.read()
        found = memo_index(shards)
        dim = embeddings.matrix.shape[1]
        vectors = np.empty((len(tools), dim), dtype=np.float32)
        inverse = np.empty(len(tools), dtype=np.float32)
        idents = np.empty(len(tools), dtype="S32")
        todo: list[tuple[str | None, npt.NDArray[np.int64]]] = []
        for key, rows in groups:
            hit = found.get(key) if key is not None else None
            shard = shards[hit[0]] if hit is not None else None
            if hit is None or shard is None or shard["vectors"].shape[1] != dim:
                todo.append((key, rows))
                continue
            part = group_slice(shard, hit[1])
            vectors[rows] = shard["vectors"][part]
            inverse[rows] = shard["inverse"][part]
            idents[rows] = shard["idents"][part]
        if todo:
            missing = np.concatenate([rows for _, rows in todo])
            vectors[missing], inverse[missing] = quantise(embeddings.matrix[missing])
            idents[missing] = [
                _identity(tools[i].qualified_name, row)
                for i, row in zip(missing.tolist(), vectors[missing], strict=True)
            ]

            def build(chosen: Sequence[tuple[str, npt.NDArray[np.int64]]]) -> dict[str, npt.NDArray[Any]]:
                shard = per_tool_shard(chosen, {"vectors": vectors, "inverse": inverse, "idents": idents})
                shard["vectors"] = shard["vectors"].astype(np.int8)  # integers in [-127, 127]
                return shard

            memo.remember(
                [(k, r) for k, r in groups if k is not None],
                [(k, r) for k, r in todo if k is not None],
                build,
                rewrite=self.force or not shards,
            )
        return vectors, inverse, idents

    def _lists(self, search: _Search, embeddings: ToolEmbeddings) -> _Lists:
        states = self._states(embeddings)
        if states is None:
            return search.rows(np.arange(search.count), None)
        key = _pool_key(search.idents)
        exact = None if self.force else states.get(key)
        previous = exact if exact is not None or self.force else states.latest()
        lists = search.rows(np.arange(search.count), None) if previous is None else search.update(previous)
        if exact is not None:
            return lists
        states.put(key, search.state(lists))
        return lists


_Lists = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float32]]


class _Search:
    """Exact top-k search over one embedding matrix; ranking value = dot x column inverse norm.

    A row's own norm does not change its ranking, so it is applied only to the final scores.
    """

    def __init__(
        self,
        matrix: npt.NDArray[np.float32],
        tools: Sequence[Tool] | Sequence[str],
        k: int,
        prepared: _Prepared | None = None,
        distinct: int | None = None,
    ) -> None:
        self.count = len(matrix)
        self.k = k
        if distinct == self.count:  # no overloads: no siblings, every row its own name
            self.siblings: Mapping[int, list[int]] = {}
            self.qid = np.arange(self.count, dtype=np.int64)
            qnames: list[str] | None = None
        else:
            qnames = _qualified_names(tools)
            self.siblings = _siblings(qnames)
            qids: dict[str, int] = {}
            self.qid = np.array([qids.setdefault(q, len(qids)) for q in qnames], dtype=np.int64)
        if prepared is not None:
            self.vectors, self.inverse, self.idents = prepared
        else:
            self.vectors, self.inverse = quantise(matrix) if self.count else (matrix, np.zeros(0, np.float32))
            names = qnames if qnames is not None else _qualified_names(tools)
            self.idents = np.asarray(
                [_identity(q, row) for q, row in zip(names, self.vectors, strict=True)], dtype="S32"
            )
        self.by_ident = np.argsort(self.idents, kind="stable")
        self.tie = np.empty(self.count, dtype=np.int64)
        self.tie[self.by_ident] = np.arange(self.count, dtype=np.int64)

    def rows(
        self,
        rows: npt.NDArray[np.int64],
        cols: npt.NDArray[np.int64] | None,
        floor: npt.NDArray[np.float32] | None = None,
    ) -> _Lists:
        """Top-k candidates (row, column, ranking value) of ``rows`` among ``cols`` (all when None).

        ``floor`` (per row) drops candidates below it: a row whose list is merged with known
        entries needs no new entry below its current k-th value.
        """
        parts: list[_Lists] = []
        width = self.count if cols is None else len(cols)
        if width == 0 or len(rows) == 0 or self.vectors.shape[1] == 0:
            return _empty()
        step = max(1, _CHUNK_CELLS // width)
        for lo in range(0, len(rows), step):
            part = None if floor is None else floor[lo : lo + step]
            parts.append(self._chunk(rows[lo : lo + step], cols, part))
        return _concat(parts)

    def _chunk(
        self,
        rows: npt.NDArray[np.int64],
        cols: npt.NDArray[np.int64] | None,
        floor: npt.NDArray[np.float32] | None = None,
    ) -> _Lists:
        dots = self.vectors[rows] @ (self.vectors if cols is None else self.vectors[cols]).T
        dots *= self.inverse[None, :] if cols is None else self.inverse[cols][None, :]
        return self._select(dots, rows, cols, floor)

    def _select(
        self,
        dots: npt.NDArray[np.float32],
        rows: npt.NDArray[np.int64],
        cols: npt.NDArray[np.int64] | None,
        floor: npt.NDArray[np.float32] | None,
    ) -> _Lists:
        """Top-k candidates of ``rows`` from their ranking values ``dots`` (modified in place)."""
        self._exclude(dots, rows, cols)
        k = min(self.k, dots.shape[1])
        if floor is not None and bool(np.isfinite(floor).all()):
            bound = floor  # every row already has k entries: only better new ones matter
        else:
            bound = _lower_bound(dots, k) if floor is None else np.maximum(_lower_bound(dots, k), floor)
        flat = np.flatnonzero(dots >= bound[:, None])  # flatnonzero beats 2-D nonzero
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
        order = score_order(r, value, self.tie[c], self.count)
        r, c, value = r[order], c[order], value[order]
        keep = rank_in_runs(r) < self.k
        return r[keep], c[keep], value[keep]

    def update(self, state: Mapping[str, npt.NDArray[Any]]) -> _Lists:
        """Reuse a previous run's lists where they stay exact; recompute the other rows."""
        stored = np.asarray(state["idents"], dtype="S32")  # older states hold str
        if self.count and len(stored):
            place = np.minimum(np.searchsorted(self.idents, stored, sorter=self.by_ident), self.count - 1)
            found = self.by_ident[place]
            mapping = np.where(self.idents[found] == stored, found, -1).astype(np.int64)
        else:
            mapping = np.full(max(len(stored), 1), -1, dtype=np.int64)
        old_r, old_c = mapping[state["row"]], mapping[state["col"]]
        known = np.zeros(self.count, dtype=bool)
        known[mapping[mapping >= 0]] = True
        valid = known.copy()
        valid[old_r[(old_c < 0) & (old_r >= 0)]] = False
        reuse, redo = np.flatnonzero(valid), np.flatnonzero(~valid)
        kept = (old_r >= 0) & valid[np.maximum(old_r, 0)]
        old = (old_r[kept], old_c[kept], state["value"][kept].astype(np.float32))
        # A row's stored entries are contiguous and best first, so its k-th value is at rank k - 1.
        floor = np.full(self.count, -np.inf, dtype=np.float32)
        last = rank_in_runs(old[0]) == self.k - 1
        floor[old[0][last]] = old[2][last]
        new = np.flatnonzero(~known)
        if len(new) > 0 and len(new) * self.count <= _CHUNK_CELLS and len(reuse) > 0:
            # Few new tools: one product of them with every tool serves both the reused rows
            # (against the new columns, transposed) and the new rows (dot products of integer
            # vectors are exact, so the values are the ones a direct product gives).
            cross = self.vectors[new] @ self.vectors.T
            fresh = self._select(cross[:, reuse].T * self.inverse[new][None, :], reuse, new, floor[reuse])
            position = np.full(self.count, -1, dtype=np.int64)
            position[new] = np.arange(len(new))
            fresh_rows, other_rows = redo[position[redo] >= 0], redo[position[redo] < 0]
            redone = _concat(
                [
                    self._select(cross[position[fresh_rows]] * self.inverse[None, :], fresh_rows, None, None),
                    self.rows(other_rows, None),
                ]
            )
        else:
            fresh = self.rows(reuse, new, floor[reuse])
            redone = self.rows(redo, None)
        merged = self.top(*_concat([old, fresh])) if len(fresh[0]) else old
        return _concat([merged, redone])

    def state(self, lists: _Lists) -> dict[str, npt.NDArray[Any]]:
        r, c, value = lists
        return {"idents": self.idents, "row": r, "col": c, "value": value}

    def table(self, lists: _Lists) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """The lists as ``(indices, scores)`` arrays, best first, padded with -1 / 0.

        Each row's entries in ``lists`` are already best first (they come from :meth:`top`), so a
        stable sort by row is enough.
        """
        order = np.argsort(lists[0], kind="stable")
        r, c, value = lists[0][order], lists[1][order], lists[2][order]
        indices = np.full((self.count, self.k), -1, dtype=np.int64)
        scores = np.zeros((self.count, self.k), dtype=np.float32)
        rank = rank_in_runs(r)
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


def _pool_key(idents: npt.NDArray[np.bytes_]) -> str:
    """The key of a pool's state: a digest of its tool identities, in any order."""
    ordered = np.sort(idents)
    return hashlib.sha256(ordered.tobytes()).hexdigest()[:32]


_Prepared = tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.bytes_]]


def _identity(qualified_name: str, row: npt.NDArray[np.float32]) -> str:
    """A tool's tie-break identity: a hash of its qualified name and quantised vector."""
    return hashlib.sha256(qualified_name.encode() + b"\x1f" + row.tobytes()).hexdigest()[:32]


def _qualified_names(tools: Sequence[Tool] | Sequence[str]) -> list[str]:
    return [t if isinstance(t, str) else t.qualified_name for t in tools]


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
