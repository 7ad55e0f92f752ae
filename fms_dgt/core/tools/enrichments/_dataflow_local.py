"""Candidates within one namespace for the ``dataflow`` enrichment, and the final ranking.

A person wiring a call sequence looks in the same API first. So :data:`LOCAL_SLOTS` places of
each output's list are kept for inputs of tools of its own namespace (exact matches first, then
by score), and the rest go to the best inputs of the whole pool, by score. Identifiers of the
output's own entity in its API (a video's ``id`` path parameter for a ``videoId`` output) keep
their place after those too: the API takes that value wherever it asks for a video. In a large pool the
global candidate lists (cut per output signature over every namespace) may hold no input of the
output's own namespace at all, so each namespace's outputs are also scored against the same
namespace's inputs (:func:`score_namespace`). Those signature-level lists depend only on the
namespace's content and the settings, so the memo keeps them per namespace; their expansion to
tools (:func:`expand_namespace`) is redone every run, which keeps cached runs identical to cold
ones.

:func:`rank_edges` merges an output instance's lists (edges its spec declares, exact matches,
feeders, local candidates, global candidates) into its ``max_neighbors`` best. The union is
enough: an input of the output's namespace that makes the final list is among the namespace's
``max_neighbors`` best, and one of another namespace is among the global best by score.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from fms_dgt.core.tools.enrichments._dataflow_entities import api_prefix
from fms_dgt.core.tools.enrichments._dataflow_feeders import feed_places
from fms_dgt.core.tools.enrichments._dataflow_params import route_path
from fms_dgt.core.tools.enrichments._dataflow_scoring import Candidates, tie_break

if TYPE_CHECKING:
    from fms_dgt.core.tools.data_objects import Tool
    from fms_dgt.core.tools.enrichments._dataflow_params import Side
    from fms_dgt.core.tools.enrichments._dataflow_scoring import Scorer

__all__ = [
    "LOCAL_SLOTS",
    "MIN_APIS",
    "MIN_COVERED",
    "Pairs",
    "api_groups",
    "expand_namespace",
    "instances_of",
    "place_ids",
    "rank_edges",
    "score_namespace",
    "sections",
    "union",
]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float32]
#: Edges as ``(output instance, input instance, score)``.
Pairs = tuple[IntArray, IntArray, FloatArray]

#: Places of an output's list kept for inputs of its own API (:func:`api_groups`) (when it has that many).
LOCAL_SLOTS = 4


#: A namespace is a catalogue of APIs when at least this many API prefixes...
MIN_APIS = 3
#: ... cover at least this share of its tools.
MIN_COVERED = 0.75


def api_groups(tools: Sequence[Tool], rows: IntArray) -> list[IntArray]:
    """The APIs of one namespace (``rows``): the tools whose names start with the same
    :func:`api_prefix` (shared by two tools at least), and the rest together.

    Most namespaces are one API and stay one group, even when a few of their operations share a
    first word (``trading_login``, ``trading_logout``). A catalogue of many APIs in one namespace
    (``Tripadvisor_*``, ``Spotify_*``...: :data:`MIN_APIS` prefixes or more, covering
    :data:`MIN_COVERED` of its tools) is split, so each API keeps its reserved places.
    """
    prefixes = [api_prefix(tools[i].name) for i in rows.tolist()]
    counts: dict[str, int] = {}
    for prefix in prefixes:
        counts[prefix] = counts.get(prefix, 0) + 1
    labels = [p if p and counts[p] > 1 else "" for p in prefixes]
    apis = {label for label in labels if label}
    covered = sum(1 for label in labels if label) / max(len(labels), 1)
    if len(apis) < MIN_APIS or covered < MIN_COVERED:
        return [rows]
    order: dict[str, list[int]] = {}
    for row, label in zip(rows.tolist(), labels, strict=True):
        order.setdefault(label, []).append(row)
    return [np.asarray(part, dtype=np.int64) for part in order.values()]


def place_ids(count: int, apis: Sequence[Sequence[IntArray]]) -> IntArray:
    """Per tool, an id that the tools of one API (:func:`api_groups`) share."""
    ids = np.zeros(count, dtype=np.int64)
    number = 0
    for parts in apis:
        for rows in parts:
            ids[rows] = number
            number += 1
    return ids


def union(parts: Sequence[Candidates]) -> Candidates:
    """The distinct signature pairs of ``parts`` (the APIs of one namespace may share some)."""
    if len(parts) == 1:
        return parts[0]
    joined = Candidates.concat(parts)
    if len(joined.out) == 0:
        return joined
    span = int(joined.inp.max()) + 1
    _, first = np.unique(joined.out * span + joined.inp, return_index=True)
    return Candidates(joined.out[first], joined.inp[first], joined.score[first])


def empty_pairs() -> Pairs:
    return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32)


def instances_of(side: Side, rows: IntArray) -> IntArray:
    """The instances of ``side`` whose tool is one of ``rows`` (ascending tool positions)."""
    if len(rows) == 0 or len(side) == 0:
        return np.zeros(0, np.int64)
    if int(rows[-1]) - int(rows[0]) + 1 == len(rows):  # a contiguous namespace: a range
        lo = np.searchsorted(side.tool, rows[0], side="left")
        hi = np.searchsorted(side.tool, rows[-1], side="right")
        return np.arange(lo, hi, dtype=np.int64)
    return np.flatnonzero(np.isin(side.tool, rows)).astype(np.int64)


def _widths(outs: Side, out_inst: IntArray, own_inputs: IntArray, max_neighbors: int) -> IntArray:
    """Per output signature of the pool: ``max_neighbors`` plus the most inputs one of this
    namespace's producers skips as its own (0 for signatures the namespace does not produce)."""
    width = np.zeros(len(outs.keys), dtype=np.int64)
    np.maximum.at(width, outs.sig[out_inst], own_inputs[outs.tool[out_inst]] + max_neighbors)
    return width


def score_namespace(
    scorer: Scorer,
    sides: tuple[Side, Side],
    instances: tuple[IntArray, IntArray],
    own_inputs: IntArray,
    max_neighbors: int,
) -> Candidates:
    """The signature-level candidates of one namespace's outputs among its own inputs.

    Args:
        scorer: scores signatures.
        sides: the output and input sides of the pool.
        instances: the namespace's output and input instances.
        own_inputs: per tool, its number of inputs.
        max_neighbors: inputs kept per output.
    """
    outs, ins = sides
    out_inst, in_inst = instances
    if len(out_inst) == 0 or len(in_inst) == 0:
        return Candidates.empty()
    out_sigs = np.unique(outs.sig[out_inst])
    width = _widths(outs, out_inst, own_inputs, max_neighbors)
    return scorer.rows(out_sigs, np.unique(ins.sig[in_inst]), width[out_sigs])


def expand_namespace(
    cands: Candidates,
    sides: tuple[Side, Side],
    instances: tuple[IntArray, IntArray],
    tools: tuple[IntArray, IntArray],
    max_neighbors: int,
) -> Pairs:
    """Each output instance's ``max_neighbors`` best inputs of other tools of its namespace.

    Args:
        cands: the namespace's candidates (:func:`score_namespace`).
        sides: the output and input sides of the pool.
        instances: the namespace's output and input instances.
        tools: per tool, its qualified-name id and its number of inputs.
        max_neighbors: inputs kept per output.
    """
    outs, ins = sides
    out_inst, in_inst = instances
    qid, own_inputs = tools
    if len(cands.out) == 0:
        return empty_pairs()
    by_sig = in_inst[np.argsort(ins.sig[in_inst], kind="stable")]
    sig_sorted = ins.sig[by_sig]
    lo = np.searchsorted(sig_sorted, cands.inp, side="left")
    counts = np.searchsorted(sig_sorted, cands.inp, side="right") - lo
    pair = np.repeat(np.arange(len(cands.out)), counts)
    sig, inst, score = cands.out[pair], by_sig[np.repeat(lo, counts) + _offsets(counts)], cands.score[pair]
    # Rank each output signature's inputs once; its producers share the ranking (the width
    # covers the inputs a producer skips as its own).
    order = np.lexsort((tie_break(outs.marks[sig], ins.spots[inst]), -score, sig))
    sig, inst, score = sig[order], inst[order], score[order]
    width = _widths(outs, out_inst, own_inputs, max_neighbors)
    kept = np.arange(len(sig)) - np.searchsorted(sig, sig, side="left") < width[sig]
    return _per_instance((outs, ins), qid, out_inst, (sig[kept], inst[kept], score[kept]), max_neighbors)


def _offsets(counts: IntArray) -> IntArray:
    """``0..c-1`` for each count ``c``, concatenated."""
    offsets: IntArray = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(
        np.cumsum(counts) - counts, counts
    )
    return offsets


def _per_instance(
    sides: tuple[Side, Side], qid: IntArray, out_inst: IntArray, ranked: Pairs, max_neighbors: int
) -> Pairs:
    """Each output instance's first ``max_neighbors`` ranked inputs of another tool."""
    outs, ins = sides
    sig, inst, score = ranked
    starts = np.searchsorted(sig, outs.sig[out_inst], side="left")
    counts = np.searchsorted(sig, outs.sig[out_inst], side="right") - starts
    owner = np.repeat(out_inst, counts)
    at = np.repeat(starts, counts) + _offsets(counts)
    inst, score = inst[at], score[at]
    other = qid[outs.tool[owner]] != qid[ins.tool[inst]]
    owner, inst, score = owner[other], inst[other], score[other]
    kept = np.arange(len(owner)) - np.searchsorted(owner, owner, side="left") < max_neighbors
    return owner[kept], inst[kept], score[kept]


def rank_edges(
    lists: tuple[Pairs, Pairs, Pairs, Pairs, Pairs],
    sides: tuple[Side, Side],
    places: tuple[IntArray, IntArray],
    max_neighbors: int,
    scorer: Scorer,
) -> Pairs:
    """Each output instance's ``max_neighbors`` best inputs from its candidate lists.

    Edges the spec declares (its response links, :mod:`._dataflow_links`) come first, then exact
    matches, then inputs of the output's namespace up to :data:`LOCAL_SLOTS` places (counting the
    declared edges and exact matches; identifiers of the output's own entity do not count:
    a video's id feeds every input of its API taking a video's id), then the rest by score;
    equal scores follow the tie-break, except that exact matches of the output's section of its
    API come before the others (the spec's tag: Airflow's ``dag_run_id`` of a run feeds the run
    operations before the task instances', where more inputs have the name than places). An
    input the output is the best feeder of (:mod:`._dataflow_feeders`) takes one of the last
    :func:`~._dataflow_feeders.feed_places` places when it does not rank higher.

    Args:
        lists: declared edges and exact matches (both scored 1.0), feeders, local candidates and
            global candidates.
        sides: the output and input sides.
        places: per tool, its namespace id and its section id (-1 for none).
        max_neighbors: inputs kept per output instance.
        scorer: gives the entities of the signatures.
    """
    outs, ins = sides
    namespace, section = places
    out_inst = np.concatenate([part[0] for part in lists])
    in_inst = np.concatenate([part[1] for part in lists])
    if len(out_inst) == 0:
        return empty_pairs()
    score = np.concatenate([part[2] for part in lists])
    starts = np.cumsum([0, *(len(part[0]) for part in lists)])
    # Tiers: 0 declared, 1 exact, 2 the output's namespace, 3 the rest.
    tier = np.full(len(out_inst), 3, dtype=np.int64)
    tier[: starts[1]] = 0
    tier[starts[1] : starts[2]] = 1
    tier[(tier == 3) & (namespace[outs.tool[out_inst]] == namespace[ins.tool[in_inst]])] = 2
    fed = np.zeros(len(out_inst), dtype=bool)
    fed[starts[2] : starts[3]] = True
    mine = section[outs.tool[out_inst]]
    apart = (mine < 0) | (mine != section[ins.tool[in_inst]]) | (tier != 1)
    tie = tie_break(outs.marks[outs.sig[out_inst]], ins.spots[in_inst]) >> np.uint64(1)
    tie |= apart.astype(np.uint64) << np.uint64(63)
    order = np.lexsort((tie, _sort_key(out_inst, tier, score)))
    order = order[_first_of_each_pair(out_inst[order], in_inst[order])]
    out_inst, in_inst, score, tier, tie, fed = (
        out_inst[order],
        in_inst[order],
        score[order],
        tier[order],
        tie[order],
        fed[order],
    )
    # Inputs of the output's namespace beyond its reserved places compete by score: re-sort the
    # rows of the outputs that have such inputs (each output's rows are contiguous).
    rank = np.arange(len(out_inst)) - np.searchsorted(out_inst, out_inst, side="left")
    late = (tier == 2) & (rank >= LOCAL_SLOTS)
    late[late] = ~_kin(scorer, outs.sig[out_inst[late]], ins.sig[in_inst[late]])
    if late.any():
        tier[late] = 3
        rows = np.flatnonzero(np.isin(out_inst, np.unique(out_inst[late])))
        again = rows[np.lexsort((tie[rows], _sort_key(out_inst[rows], tier[rows], score[rows])))]
        in_inst[rows], score[rows], fed[rows] = in_inst[again], score[again], fed[again]
    if fed.any() and feed_places(max_neighbors):  # declared and exact edges never moved: still first
        order = _promote(out_inst, (tier <= 1, fed), max_neighbors)
        in_inst, score = in_inst[order], score[order]
    kept = np.arange(len(out_inst)) - np.searchsorted(out_inst, out_inst, side="left") < max_neighbors
    return out_inst[kept], in_inst[kept], score[kept]


def _kin(scorer: Scorer, out_sig: IntArray, in_sig: IntArray) -> npt.NDArray[np.bool_]:
    """Whether each output and input are identifiers sharing a known entity."""
    return scorer.kin(out_sig, in_sig)


def _promote(
    out_inst: IntArray, flags: tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]], max_neighbors: int
) -> IntArray:
    """A stable reordering of each output's rows (contiguous, best first) that keeps in front its
    exact matches, its first ``max_neighbors - places`` rows and its first ``places`` fed rows
    (``places``: :func:`~._dataflow_feeders.feed_places`; ``flags``: which rows are exact
    matches, which are fed)."""
    exact, fed = flags
    places = feed_places(max_neighbors)
    start = np.searchsorted(out_inst, out_inst, side="left")
    rank = np.arange(len(out_inst)) - start
    seen: IntArray = np.cumsum(fed, dtype=np.int64) - fed  # fed rows before each row
    fed_rank: IntArray = seen - seen[start]
    front = exact | (rank < max_neighbors - places) | (fed & (fed_rank < places))
    order: IntArray = np.lexsort((rank, ~front, out_inst))
    return order


def _sort_key(out_inst: IntArray, tier: IntArray, score: FloatArray) -> IntArray:
    """One integer ordering rows by output, then tier (0 to 3), then score (best first).

    The bits of a non-negative float32 order like its value, so the score takes 31 bits.
    """
    bits = np.maximum(score, np.float32(0)).astype(np.float32).view(np.int32).astype(np.int64)
    key: IntArray = (out_inst << 33) | (tier << 31) | (np.int64(0x7FFFFFFF) - bits)
    return key


def _first_of_each_pair(out_inst: IntArray, in_inst: IntArray) -> IntArray:
    """Positions of the first row of each (output, input) pair, in order."""
    span = int(in_inst.max()) + 1 if len(in_inst) else 1
    _, first = np.unique(out_inst * span + in_inst, return_index=True)
    positions: IntArray = np.sort(first)
    return positions


def sections(tools: Sequence[Tool]) -> IntArray:
    """Per tool, an id of the section of its API it was published in (its namespace and first
    OpenAPI tag: ``DAGRun``, ``TaskInstance``; for an operation without tags, the first resource
    of its path: ``/v1/customers/{customer}/tax_ids`` is in ``customers``), -1 for a tool without
    one. Among an output's exact matches, those of its section rank first (see
    :func:`rank_edges`)."""
    ids: dict[tuple[str, str], int] = {}
    section = np.full(len(tools), -1, dtype=np.int64)
    for number, tool in enumerate(tools):
        tags = tool.metadata.get("tags")
        if isinstance(tags, list) and tags and isinstance(tags[0], str):
            section[number] = ids.setdefault((tool.namespace, tags[0]), len(ids))
        elif resource := _first_resource(tool):
            section[number] = ids.setdefault((tool.namespace, "/" + resource), len(ids))
    return section


def _first_resource(tool: Tool) -> str:
    """The first segment of a REST tool's path that names a resource (not ``api`` or ``v1``)."""
    for segment in route_path(tool).split("/"):
        if (
            segment
            and not segment.startswith("{")
            and segment.lower() != "api"
            and not _VERSION.fullmatch(segment)
        ):
            return segment
    return ""


_VERSION = re.compile(r"v\d+(?:(?:alpha|beta)\d*)?(?:\.\d+)*", re.IGNORECASE)
