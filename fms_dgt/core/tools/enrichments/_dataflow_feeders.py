"""Feeders of the ``dataflow`` enrichment: each input's best source within its API.

Each output keeps its best inputs, so an input that is nobody's favourite gets no edge at all: a
generic ``a`` or ``destination`` loses, in every output's list, to inputs whose names say more.
A person wiring calls also looks the other way: "where could this input's value come from?". So
each input's best output of another tool of its API (its *feeder*) is found, scoring at least
:data:`FEED_SHARE` of the threshold. The input competes in that output's list like the API's
other inputs (at that lower score), and the output keeps it in one of the last places of its list
(one in :data:`FEED_EVERY`) when it does not rank there already (see
:func:`~._dataflow_local.rank_edges`).

Feeders are found on signatures (:func:`score_feeders`, the transpose of the per-output ranking:
each input signature's best output signatures) and expanded to instances at every run
(:func:`feeder_pairs`). The signature-level candidates join the namespace's local candidates in
the memo: an input's best outputs among a superset of its true best are its true best, so a
cached run finds the same feeders as a cold one.
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from fms_dgt.core.tools.enrichments._dataflow_scoring import Candidates, tie_break

if TYPE_CHECKING:
    from fms_dgt.core.tools.enrichments._dataflow_params import Side
    from fms_dgt.core.tools.enrichments._dataflow_scoring import Scorer

__all__ = [
    "FEED_EVERY",
    "FEED_SHARE",
    "MOST_PRODUCERS",
    "feed_places",
    "feeder_pairs",
    "score_feeders",
    "unmatched",
]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float32]
Pairs = tuple[IntArray, IntArray, FloatArray]

#: Least score of a feeder, as a share of the threshold (2/3 of 0.3 is 0.2); set on the tune and
#: dev splits of benchmarks/data/dataflow_gold.yaml (1/3 gave no more recall, lower precision).
FEED_SHARE = 2 / 3
#: The producers of one output signature in an API an input's feeder is chosen among (each
#: tool's first before any tool's second, then in an order drawn from their content): their order
#: among equal scores is arbitrary anyway, and a spec where thousands of operations share an output
#: and an input signature otherwise made each input instance try every producer (1,000
#: operations: 29 GB).
MOST_PRODUCERS = 16
#: One place in this many at the end of an output's list goes to an input it feeds best (one of
#: 8 by default; none in a list of fewer places, where on the tune and dev splits the place cost
#: more edges than it gave).
FEED_EVERY = 8


def feed_places(max_neighbors: int) -> int:
    """How many of an output's ``max_neighbors`` places inputs it feeds best may take."""
    return max_neighbors // FEED_EVERY


def score_feeders(
    scorer: Scorer, sides: tuple[Side, Side], instances: tuple[IntArray, IntArray], qid: IntArray
) -> Candidates:
    """Per input signature of one API (``instances``: its output and input instances), its best
    output signatures of the API, enough to survive excluding the input's own tool.

    Args:
        scorer: scores signatures.
        sides: the output and input sides of the pool.
        instances: the API's output and input instances.
        qid: per tool, its qualified-name id (overloads share one).
    """
    outs, ins = sides
    out_inst, in_inst = instances
    if len(out_inst) == 0 or len(in_inst) == 0:
        return Candidates.empty()
    own = np.bincount(qid[outs.tool[out_inst]], minlength=int(qid.max()) + 1)
    width = np.zeros(len(ins.keys), dtype=np.int64)
    np.maximum.at(width, ins.sig[in_inst], own[qid[ins.tool[in_inst]]] + 1)
    in_sigs = np.unique(ins.sig[in_inst])
    out_sigs = np.unique(outs.sig[out_inst])
    return scorer.columns(out_sigs, in_sigs, width[in_sigs], scorer.threshold * FEED_SHARE)


def feeder_pairs(
    cands: Candidates,
    sides: tuple[Side, Side],
    instances: tuple[IntArray, IntArray],
    qid: IntArray,
    least: float,
) -> Pairs:
    """``(output instance, input instance, score)``: each input instance of one API and its best
    output instance of another tool of the API, among ``cands`` scoring at least ``least``."""
    outs, ins = sides
    out_inst, in_inst = instances
    if len(out_inst) == 0 or len(in_inst) == 0 or len(cands.out) == 0:
        return _empty()
    mine = np.zeros(len(outs.keys), dtype=bool)
    mine[outs.sig[out_inst]] = True
    keep = mine[cands.out] & (cands.score >= least) & np.isin(cands.inp, ins.sig[in_inst])
    if not keep.any():
        return _empty()
    # Candidates best first per input signature, in tiers of equal score (the first tier is each
    # signature's best score, the next its second best, ...).
    order = np.lexsort((-cands.score[keep], cands.inp[keep]))
    cand_out, cand_in, cand_score = cands.out[keep][order], cands.inp[keep][order], cands.score[keep][order]
    step = np.ones(len(cand_in), dtype=bool)
    step[1:] = (cand_in[1:] != cand_in[:-1]) | (cand_score[1:] != cand_score[:-1])
    count = np.cumsum(step)
    tier = count - count[np.searchsorted(cand_in, cand_in, side="left")]
    producers = _producers(outs, out_inst, qid)
    rows_in, rows_source, rows_score = _tiered(
        (cand_out, cand_in, cand_score, tier), (outs, producers), qid, len(ins.keys)
    )
    if len(rows_in) == 0:
        return _empty()
    # Per input signature, its best row (R1), and its best of another tool than R1's (R2).
    best = np.lexsort((tie_break(ins.marks[rows_in], outs.spots[rows_source]), -rows_score, rows_in))
    in_sig, source, score = rows_in[best], rows_source[best], rows_score[best]
    head = np.searchsorted(in_sig, in_sig, side="left")
    first_tool = qid[outs.tool[source[head]]]
    other = np.flatnonzero(qid[outs.tool[source]] != first_tool)
    first, second = np.full((2, len(ins.keys)), -1, dtype=np.int64)
    sigs, at = np.unique(in_sig, return_index=True)  # rows are sorted by signature
    first[sigs] = at
    sigs, at = np.unique(in_sig[other], return_index=True)
    second[sigs] = other[at]
    # Each input instance takes R1 unless R1 is its own tool's output, then R2.
    row = first[ins.sig[in_inst]]
    own = (row >= 0) & (qid[outs.tool[source[np.maximum(row, 0)]]] == qid[ins.tool[in_inst]])
    row[own] = second[ins.sig[in_inst][own]]
    found = row >= 0
    return source[row[found]], in_inst[found], score[row[found]]


def _producers(outs: Side, out_inst: IntArray, qid: IntArray) -> IntArray:
    """The API's output instances by signature, each signature's in the order feeders try them:
    every tool's first (by spot) before any tool's second, so a tool repeating an output (a list of
    40 parts each with a ``ticket_code``) does not fill the :data:`MOST_PRODUCERS` places of its
    signature and leave its own inputs without another tool's feeder."""
    sig, spot = outs.sig[out_inst], outs.spots[out_inst]
    pair = sig * (int(qid.max()) + 1) + qid[outs.tool[out_inst]]  # one key per (signature, tool)
    by_pair = np.lexsort((spot, pair))
    ranked = pair[by_pair]
    repeat = np.empty(len(by_pair), dtype=np.int64)  # each instance's rank among its tool's
    repeat[by_pair] = np.arange(len(by_pair)) - np.searchsorted(ranked, ranked, side="left")
    return out_inst[np.lexsort((spot, repeat, sig))]


def _tiered(
    cands: tuple[IntArray, IntArray, FloatArray, IntArray],
    producers: tuple[Side, IntArray],
    qid: IntArray,
    n_sigs: int,
) -> tuple[IntArray, IntArray, FloatArray]:
    """``(input signature, output instance, score)`` rows: each candidate (``cands``: output
    signature, input signature, score and tier, sorted by input signature then score) with the
    first producers of its output signature, tier by tier, until the signature has rows of two
    tools. Later tiers score lower, so its best row and its best of another tool than that one's
    are among them: a signature with thousands of candidates joins one or two tiers, not all."""
    outs, order = producers
    cand_out, cand_in, cand_score, tier = cands
    sorted_sigs = outs.sig[order]
    seen = np.full(n_sigs, -1, dtype=np.int64)  # a tool of the signature's rows so far
    done = np.zeros(n_sigs, dtype=bool)
    found: list[tuple[IntArray, IntArray, FloatArray]] = []
    by_tier = np.argsort(tier, kind="stable")
    bounds = np.searchsorted(tier[by_tier], np.arange(int(tier.max()) + 2))
    for lo, hi in pairwise(bounds.tolist()):
        pick = by_tier[lo:hi]
        pick = pick[~done[cand_in[pick]]]
        if len(pick) == 0:
            break
        rows, at = _join(cand_out[pick], sorted_sigs, MOST_PRODUCERS)
        in_sig, source = cand_in[pick][rows], order[at]
        found.append((in_sig, source, cand_score[pick][rows]))
        tools = qid[outs.tool[source]]
        first = np.flatnonzero(seen[in_sig] < 0)
        seen[in_sig[first]] = tools[first]  # any one of them: only "another tool" matters
        done[in_sig[tools != seen[in_sig]]] = True
    return (
        np.concatenate([f[0] for f in found]),
        np.concatenate([f[1] for f in found]),
        np.concatenate([f[2] for f in found]),
    )


def unmatched(feeds: Pairs, matched: IntArray) -> Pairs:
    """The feeder pairs of inputs not among ``matched`` (inputs with an exact match have their source)."""
    keep = ~np.isin(feeds[1], matched)
    return feeds[0][keep], feeds[1][keep], feeds[2][keep]


def _join(keys: IntArray, sorted_keys: IntArray, most: int) -> tuple[IntArray, IntArray]:
    """Every pair ``(i, j)`` with ``keys[i] == sorted_keys[j]``, in order of ``i``, at most
    ``most`` for each ``i`` (its first)."""
    lo = np.searchsorted(sorted_keys, keys, side="left")
    counts = np.minimum(np.searchsorted(sorted_keys, keys, side="right") - lo, most)
    rows = np.repeat(np.arange(len(keys), dtype=np.int64), counts)
    offsets = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    return rows, np.repeat(lo, counts) + offsets


def _empty() -> Pairs:
    return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32)
