"""Scoring of the ``dataflow`` enrichment: signature-level candidates and their cached states.

:class:`Scorer` scores output signatures against input signatures in chunks of a bounded number of
cells and keeps each row's top candidates with their ties (or each column's:
:meth:`Scorer.columns`); :func:`rank_inputs` turns the candidates into per-signature tables of
input *instances*, ordered by score and :func:`tie_break`.
A pool's candidates are stored as a *state* (:func:`to_state`); a later pool reuses a previous
state where it stays exact (:func:`update_candidates`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from fms_dgt.core.tools.enrichments._dataflow_choices import (
    IDENTIFIER,
    KIND_INDEX,
    KINDS_APART,
    ChoiceTable,
    QualifierTable,
)
from fms_dgt.core.tools.enrichments._dataflow_entities import MAX_VARIANTS, entity_key, parse_role
from fms_dgt.core.tools.enrichments._dataflow_params import type_compatibility

if TYPE_CHECKING:
    from fms_dgt.core.tools.enrichments._dataflow_params import Side

__all__ = [
    "ID_INTO_PLAIN",
    "KINDS",
    "KIN_FLOOR",
    "PLAIN_INTO_ID",
    "QUERY_FLOOR",
    "Candidates",
    "Scorer",
    "class_table",
    "from_state",
    "pool_key",
    "rank_inputs",
    "role_compatibility",
    "role_kind",
    "tie_break",
    "to_state",
    "update_candidates",
]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float32]

_CHUNK_CELLS = 1 << 22

#: Factor of an edge from a plain value into an identifier input (``product_photos`` ->
#: ``product_id``): possible, but an identifier is normally fed by an identifier.
PLAIN_INTO_ID = 0.5
#: Factor of an edge from an identifier into a plain input (``event_id`` -> ``title``).
ID_INTO_PLAIN = 0.6
#: Least text similarity of a label (a title, a name) fed into a search input (``query``,
#: ``keyword``): any such text can be searched for, whatever words it shares with the input.
QUERY_FLOOR = 0.5
#: Least text similarity of two identifiers of one entity (a promotion code's ``id`` and the
#: ``{promotion_code}`` of a path, whose texts share few words and one has no description).
KIN_FLOOR = 0.5

#: The kinds of parameter a role names (see :mod:`._dataflow_entities`): index 0 is plain.
KINDS = ("", "id", "label", "query")


def role_kind(text: str) -> int:
    """The index in :data:`KINDS` of a role string."""
    kind = parse_role(text).kind  # "id" for an identifier; a bare label's entity follows its kind
    return KINDS.index(kind) if kind in KINDS else 0


def _opaque(key: str) -> bool:
    """Whether identifiers of type ``key`` are interchangeable tokens (scalars, or lists of them)."""
    body = key.rstrip("?")
    if body.startswith("array<"):
        body = body[6:-1].rstrip("?")
    return body in ("string", "integer", "number", "any") or body.startswith(("string|", "integer|"))


def role_compatibility(out_key: str, out_kind: str, in_key: str, in_kind: str) -> float:
    """Type compatibility of an edge, given the kinds of its ends (``""``, ``id``, ``label``, ``query``).

    Two identifiers of scalar types fit whatever the types (an id is an opaque token, written as a
    number by one API and a string by the next; the entity check decides the rest); an identifier
    on one end only scales the type compatibility by :data:`ID_INTO_PLAIN` or :data:`PLAIN_INTO_ID`.
    """
    base = type_compatibility(out_key, in_key)
    if out_kind == "id" and in_kind == "id":
        return 1.0 if _interchangeable(out_key, in_key) else base
    if in_kind == "id":
        return base * PLAIN_INTO_ID
    return base * ID_INTO_PLAIN if out_kind == "id" else base


def _interchangeable(out_key: str, in_key: str) -> bool:
    both_lists = out_key.startswith("array") == in_key.startswith("array")
    return both_lists and _opaque(out_key) and _opaque(in_key)


def class_table(type_keys: Sequence[str]) -> FloatArray:
    """:func:`role_compatibility` for every (type, kind) pair; class ``kind * len(type_keys) + type``."""
    count = len(type_keys)
    base = np.array([[type_compatibility(o, i) for i in type_keys] for o in type_keys], dtype=np.float64)
    base = base.reshape(count, count)
    fits = np.array([[_interchangeable(o, i) for i in type_keys] for o in type_keys], dtype=bool)
    factor = np.ones((len(KINDS), len(KINDS)))
    factor[:, 1] = PLAIN_INTO_ID
    factor[1, :] = ID_INTO_PLAIN
    blocks = [[base * factor[ko, ki] for ki in range(len(KINDS))] for ko in range(len(KINDS))]
    blocks[1][1] = np.where(fits.reshape(count, count), 1.0, base)
    return np.block(blocks).astype(np.float32) if count else np.zeros((0, 0), np.float32)


def entity_table(role_names: Sequence[str]) -> Entities:
    """Per role id: its kind (index in :data:`KINDS`), its two entities and, for a bare label, the
    entity it sits in, as ids (-1 when unknown); for a label or a search input, its namespace's
    id (-1 for other roles); and for a polymorphic identifier, its group of variants."""
    entities: dict[str, int] = {}
    spaces: dict[str, int] = {}
    groups: dict[tuple[str, ...], int] = {}
    kinds = np.zeros(max(len(role_names), 1), dtype=np.int64)
    slots = np.full((5, max(len(role_names), 1)), -1, dtype=np.int64)
    for number, text in enumerate(role_names):
        kinds[number] = role_kind(text)
        parsed = parse_role(text)
        for slot, entity in enumerate((parsed.a, parsed.b, parsed.place)):
            if entity:
                slots[slot, number] = entities.setdefault(entity_key(entity), len(entities))
        if parsed.kind in ("label", "query"):
            slots[3, number] = spaces.setdefault(parsed.space, len(spaces))
        if parsed.variants:
            keys = tuple(sorted({entity_key(v) for v in parsed.variants}))[:MAX_VARIANTS]
            for key in keys:
                entities.setdefault(key, len(entities))
            slots[4, number] = groups.setdefault(keys, len(groups))
    return Entities(kinds, slots[0], slots[1], slots[2], slots[3], slots[4], variant_table(groups, entities))


def variant_table(groups: Mapping[tuple[str, ...], int], entities: Mapping[str, int]) -> Variants:
    """Which entities each group of variants holds, in memory that grows with the variants (at
    most :data:`MAX_VARIANTS` a group), never with the groups squared or all entities."""
    bit_of = np.full(max(len(entities), 1), -1, dtype=np.int64)
    named = sorted({entities[k] for keys in groups for k in keys})
    bit_of[named] = np.arange(len(named), dtype=np.int64)
    held = np.full((max(len(groups), 1), MAX_VARIANTS), -1, dtype=np.int64)
    for keys, group in groups.items():
        bits = sorted(int(bit_of[entities[k]]) for k in keys)[:MAX_VARIANTS]
        held[group, : len(bits)] = bits
    held = held[:, : max(1, int((held >= 0).sum(axis=1).max()))]  # as wide as the widest group
    width = max(len(named), 1)
    flat = held.reshape(-1)
    rows = np.repeat(np.arange(len(held), dtype=np.int64), held.shape[1])
    valid = flat >= 0
    return Variants(bit_of, held, np.unique(rows[valid] * width + flat[valid]), width)


@dataclass(slots=True)
class Variants:
    """The variants of each group: per entity id its bit (-1 for an entity of no group), per
    group its bits (padded with -1), and every (group, bit) pair as ``group * width + bit``,
    sorted."""

    bit_of: IntArray
    held: IntArray
    keys: IntArray
    width: int

    def holds(self, group: IntArray, bit: IntArray) -> npt.NDArray[np.bool_]:
        """Whether each ``group`` (>= 0) holds ``bit`` (-1: no)."""
        wanted = group * self.width + bit
        if not len(self.keys):
            return np.zeros(np.shape(wanted), dtype=bool)
        at = np.minimum(np.searchsorted(self.keys, wanted), len(self.keys) - 1)
        found: npt.NDArray[np.bool_] = (bit >= 0) & (group >= 0) & (self.keys[at] == wanted)
        return found


@dataclass(slots=True)
class Entities:
    """What :func:`entity_table` reads from a pool's roles (arrays by role id), and the variants
    of each group (:func:`variant_table`)."""

    kinds: IntArray
    first: IntArray
    second: IntArray
    place: IntArray
    space: IntArray
    group: IntArray
    variants: Variants

    def kin(self, out: tuple[IntArray, ...], into: tuple[IntArray, ...]) -> npt.NDArray[np.bool_]:
        """Where an output and an input (each: entities ``a``, ``b`` and group of variants, as
        ids; arrays that broadcast) may name one thing: a shared entity, one's entity among the
        other's variants, or variants in common."""
        oa, ob, og = out
        ia, ib, ig = into
        found = same_entity(oa, ob, ia, ib)
        variants = self.variants
        for group, one, two in ((og, ia, ib), (ig, oa, ob)):
            for entity in (one, two):
                bit = np.where(entity >= 0, variants.bit_of[np.maximum(entity, 0)], -1)
                if bool(((group >= 0) & (bit >= 0)).any()):
                    found = found | variants.holds(group, bit)
        both = np.nonzero(np.broadcast_to((og >= 0) & (ig >= 0), found.shape))
        if len(both[0]):
            mine = np.broadcast_to(og, found.shape)[both]
            theirs = np.broadcast_to(ig, found.shape)[both]
            shared = np.zeros(len(mine), dtype=bool)
            for column in range(variants.held.shape[1]):  # one variant of the input's at a time
                shared |= variants.holds(mine, variants.held[theirs, column])
            found = np.array(found, copy=True)
            found[both] |= shared
        return found


def same_entity(oa: IntArray, ob: IntArray, ia: IntArray, ib: IntArray) -> npt.NDArray[np.bool_]:
    """Where an output's entities (``oa``, ``ob``) and an input's (``ia``, ``ib``) share one."""
    found: npt.NDArray[np.bool_] = ((oa == ia) | (oa == ib)) & (oa >= 0)
    found |= ((ob == ia) | (ob == ib)) & (ob >= 0)
    return found


@dataclass(slots=True)
class Candidates:
    """Signature-level candidate pairs: output sig, input sig, score."""

    out: IntArray
    inp: IntArray
    score: FloatArray

    @classmethod
    def empty(cls) -> Candidates:
        return cls(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32))

    def at_least(self, least: float) -> Candidates:
        """The candidates scoring at least ``least``."""
        keep = self.score >= least
        return self if bool(keep.all()) else Candidates(self.out[keep], self.inp[keep], self.score[keep])

    @classmethod
    def concat(cls, parts: Sequence[Candidates]) -> Candidates:
        if not parts:
            return cls.empty()
        return cls(
            np.concatenate([p.out for p in parts]),
            np.concatenate([p.inp for p in parts]),
            np.concatenate([p.score for p in parts]),
        )


class Scorer:
    """Scores output signatures against input signatures, keeping each row's top ``width`` with ties.

    A score is text similarity x :func:`role_compatibility`, 0 between identifiers of different
    entities, and at least :data:`KIN_FLOOR` x the type factor between identifiers of one entity.

    Args:
        outs, ins: the two sides.
        labels: the pool's type keys and roles, by id.
        threshold: the lowest score kept.
    """

    def __init__(
        self,
        outs: Side,
        ins: Side,
        labels: tuple[Sequence[str], Sequence[str]],
        threshold: float,
        qualifiers: QualifierTable | None = None,
    ) -> None:
        type_keys, role_names = labels
        self.out_vec, self.out_inv = outs.vectors, outs.inverse
        self.in_vec, self.in_inv = ins.vectors, ins.inverse
        table = entity_table(role_names)
        self.entities = table
        kinds, first, second, place, space = table.kinds, table.first, table.second, table.place, table.space
        count = len(type_keys)
        self.table = class_table(type_keys)
        self.out_base, self.in_base = outs.types, ins.types
        self.out_type = outs.types + count * kinds[outs.roles]
        self.in_type = ins.types + count * kinds[ins.roles]
        self.out_label = kinds[outs.roles] == KINDS.index("label")
        self.in_query = kinds[ins.roles] == KINDS.index("query")
        self.out_entity = (first[outs.roles], second[outs.roles], table.group[outs.roles])
        self.in_entity = (first[ins.roles], second[ins.roles], table.group[ins.roles])
        self.out_place, self.in_place = place[outs.roles], place[ins.roles]
        self.out_space, self.in_space = space[outs.roles], space[ins.roles]
        self.choices = ChoiceTable(role_names)
        self.out_set, self.in_set = self.choices.ids[outs.roles], self.choices.ids[ins.roles]
        # Identifiers are one kind here, told apart by their entities (:meth:`_separate_entities`).
        self.qualifiers = qualifiers or QualifierTable([None] * len(outs.keys), [None] * len(ins.keys))
        ident = KIND_INDEX[IDENTIFIER]
        self.out_kind = np.where(kinds[outs.roles] == 1, ident, self.qualifiers.out_kind)
        self.in_kind = np.where(kinds[ins.roles] == 1, ident, self.qualifiers.in_kind)
        self.out_qual = np.where(kinds[outs.roles] == 1, -1, self.qualifiers.out)
        self.in_qual = np.where(kinds[ins.roles] == 1, -1, self.qualifiers.into)
        self.threshold = threshold

    def kin(self, out_sig: IntArray, in_sig: IntArray) -> npt.NDArray[np.bool_]:
        """Whether each output and input signature (paired) are identifiers that may name one thing."""
        out = tuple(e[out_sig] for e in self.out_entity)
        return self.entities.kin(out, tuple(e[in_sig] for e in self.in_entity))

    def values_fit(self, out_sig: IntArray, in_sig: IntArray) -> npt.NDArray[np.bool_]:
        """Whether each output signature (paired) can give a value its input accepts: false only
        when both list their values and share none (:mod:`._dataflow_choices`)."""
        return self.choices.fits(self.out_set[out_sig], self.in_set[in_sig])

    def rows(self, out_sigs: IntArray, in_sigs: IntArray, width: IntArray) -> Candidates:
        """Top ``width[r]`` inputs among ``in_sigs`` for each output signature ``out_sigs[r]``."""
        if len(out_sigs) == 0 or len(in_sigs) == 0:
            return Candidates.empty()
        step = max(1, _CHUNK_CELLS // len(in_sigs))
        parts = [
            self._chunk(out_sigs[lo : lo + step], in_sigs, width[lo : lo + step])
            for lo in range(0, len(out_sigs), step)
        ]
        return Candidates.concat(parts)

    def _chunk(self, out_sigs: IntArray, in_sigs: IntArray, width: IntArray) -> Candidates:
        dots = self.block(out_sigs, in_sigs)
        count = dots.shape[1]
        k = int(min(int(width.max()), count))
        top = np.sort(np.partition(dots, count - k, axis=1)[:, count - k :], axis=1)[:, ::-1]
        kth = top[np.arange(len(top)), np.minimum(width, k) - 1]
        flat = np.flatnonzero(dots >= np.maximum(kth, self.threshold)[:, None])
        rows, cols = np.divmod(flat, count)
        return Candidates(out_sigs[rows], in_sigs[cols], dots[rows, cols])

    def block(self, out_sigs: IntArray, in_sigs: IntArray) -> FloatArray:
        """The scores of every pair of ``out_sigs`` x ``in_sigs`` (``in_sigs`` sorted and distinct)."""
        # At full length ``in_sigs`` is every input: no gather copy.
        everything = len(in_sigs) == len(self.in_inv)
        in_vec = self.in_vec if everything else self.in_vec[in_sigs]
        in_inv = self.in_inv if everything else self.in_inv[in_sigs]
        in_type = self.in_type if everything else self.in_type[in_sigs]
        dots: FloatArray = self.out_vec[out_sigs] @ in_vec.T
        dots *= self.out_inv[out_sigs][:, None]
        dots *= in_inv[None, :]
        dots *= self.table[self.out_type[out_sigs]][:, in_type]
        self._searchable(dots, out_sigs, in_sigs, in_type)
        self._separate_entities(dots, out_sigs, in_sigs if not everything else None, in_type)
        self._separate_values(dots, out_sigs, in_sigs)
        self._separate_qualified(dots, out_sigs, in_sigs)
        return dots

    def columns(self, out_sigs: IntArray, in_sigs: IntArray, width: IntArray, least: float) -> Candidates:
        """Top ``width[c]`` outputs among ``out_sigs`` (with ties, scoring at least ``least``) for
        each input signature ``in_sigs[c]``; the transpose of :meth:`rows`."""
        if len(out_sigs) == 0 or len(in_sigs) == 0:
            return Candidates.empty()
        step = max(1, _CHUNK_CELLS // len(in_sigs))
        parts = []
        for lo in range(0, len(out_sigs), step):
            dots = self.block(out_sigs[lo : lo + step], in_sigs)
            count = dots.shape[0]
            k = int(min(int(width.max()), count))
            top = np.sort(np.partition(dots, count - k, axis=0)[count - k :], axis=0)[::-1]
            kth = top[np.minimum(width, k) - 1, np.arange(len(in_sigs))]
            rows, cols = np.nonzero(dots >= np.maximum(kth, least)[None, :])
            parts.append(Candidates(in_sigs[cols], out_sigs[lo + rows], dots[rows, cols]))
        # Transposed (input first) so that :meth:`merge` keeps each input's top.
        full = np.zeros(int(in_sigs.max()) + 1, dtype=np.int64)
        full[in_sigs] = width
        top_cols = self.merge(Candidates.concat(parts), full, least)
        return Candidates(top_cols.inp, top_cols.out, top_cols.score)

    def _searchable(self, dots: FloatArray, out_sigs: IntArray, in_sigs: IntArray, in_type: IntArray) -> None:
        """Raise label -> search-input cells of one namespace to :data:`QUERY_FLOOR` x their type
        factor (in place)."""
        rows = np.flatnonzero(self.out_label[out_sigs])
        cols = np.flatnonzero(self.in_query[in_sigs])
        if len(rows) == 0 or len(cols) == 0:
            return
        block = np.ix_(rows, cols)
        floor = np.float32(QUERY_FLOOR) * self.table[self.out_type[out_sigs[rows]]][:, in_type[cols]]
        floor *= self.out_space[out_sigs[rows]][:, None] == self.in_space[in_sigs[cols]][None, :]
        dots[block] = np.maximum(dots[block], floor)

    def _separate_values(self, dots: FloatArray, out_sigs: IntArray, in_sigs: IntArray) -> None:
        """Zero the cells whose ends list their values and share none (in place)."""
        rows = np.flatnonzero(self.out_set[out_sigs] >= 0)
        cols = np.flatnonzero(self.in_set[in_sigs] >= 0)
        if len(rows) == 0 or len(cols) == 0:
            return
        apart = ~self.values_fit(out_sigs[rows][:, None], in_sigs[cols][None, :])
        r, c = np.nonzero(apart)
        dots[rows[r], cols[c]] = 0.0

    def _separate_qualified(self, dots: FloatArray, out_sigs: IntArray, in_sigs: IntArray) -> None:
        """Zero the cells of values of kinds that never stand for one another (an id into a date),
        and of two values of one kind said to be of different things (a post's ``like_count``
        into a booking's ``child_count``; in place, :mod:`._dataflow_choices`)."""
        out_kind, in_kind = self.out_kind[out_sigs], self.in_kind[in_sigs]
        rows, cols = np.flatnonzero(out_kind >= 0), np.flatnonzero(in_kind >= 0)
        if len(rows) == 0 or len(cols) == 0:
            return
        # By output kind (a few dozen at most): the input columns of kinds apart from it.
        for kind in np.unique(out_kind[rows]).tolist():
            apart = cols[KINDS_APART[kind][in_kind[cols]]]
            if len(apart):
                dots[np.ix_(rows[out_kind[rows] == kind], apart)] = 0.0
        rows = np.flatnonzero(self.out_qual[out_sigs] >= 0)
        cols = np.flatnonzero(self.in_qual[in_sigs] >= 0)
        if len(rows) == 0 or len(cols) == 0:
            return
        fits = self.qualifiers.fits(
            self.out_qual[out_sigs[rows]][:, None], self.in_qual[in_sigs[cols]][None, :]
        )
        r, c = np.nonzero(~fits)
        dots[rows[r], cols[c]] = 0.0

    def _separate_entities(
        self, dots: FloatArray, out_sigs: IntArray, in_sigs: IntArray | None, in_type: IntArray
    ) -> None:
        """Zero the cells between identifiers that name different entities, and raise those
        between identifiers of one entity to :data:`KIN_FLOOR` x their type factor (in place;
        ``in_type``: the type classes of the block's inputs)."""
        oa, ob, og = (e[out_sigs] for e in self.out_entity)
        ia, ib, ig = self.in_entity if in_sigs is None else (e[in_sigs] for e in self.in_entity)
        rows = np.flatnonzero((oa >= 0) | (ob >= 0) | (og >= 0))
        cols = np.flatnonzero((ia >= 0) | (ib >= 0) | (ig >= 0))
        if len(rows) == 0 or len(cols) == 0:
            return
        kin = self.entities.kin(
            (oa[rows, None], ob[rows, None], og[rows, None]), (ia[None, cols], ib[None, cols], ig[None, cols])
        )
        r, c = np.nonzero(~kin)
        dots[rows[r], cols[c]] = 0.0
        r, c = np.nonzero(kin)
        floor = np.float32(KIN_FLOOR) * self.table[self.out_type[out_sigs[rows[r]]], in_type[cols[c]]]
        dots[rows[r], cols[c]] = np.maximum(dots[rows[r], cols[c]], floor)

    def merge(self, cands: Candidates, width: IntArray, least: float | None = None) -> Candidates:
        """Per output signature, the top ``width[out]`` candidates (with ties) of ``cands``
        scoring at least ``least`` (the threshold by default)."""
        if len(cands.out) == 0:
            return cands
        order = np.lexsort((-cands.score, cands.out))
        out, score = cands.out[order], cands.score[order]
        start = np.searchsorted(out, out, side="left")
        last = np.searchsorted(out, out, side="right") - 1
        kth = score[np.minimum(start + width[out] - 1, last)]
        floor = self.threshold if least is None else least
        chosen = order[(score >= kth) & (score >= floor)]
        return Candidates(cands.out[chosen], cands.inp[chosen], cands.score[chosen])


def tie_break(mark: npt.NDArray[np.uint64], spot: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """A fixed pseudo-random order among equal scores, different for each output signature.

    ``mark`` is the ranking side's signature mark and ``spot`` the ranked instance's
    (:class:`~._dataflow_params.Side`): both come from content, not positions, so adding tools
    to a pool does not reorder the ties of the others. It depends on the output *signature* (not
    the producing tool), so every producer of a signature shares one ranking and the expansion to
    tools stays linear.
    """
    h = (mark * np.uint64(0xBF58476D1CE4E5B9)) ^ spot
    h = h * np.uint64(0x9E3779B97F4A7C15)
    return h ^ (h >> np.uint64(29))


def rank_inputs(
    cands: Candidates, sides: tuple[Side, Side], width: IntArray
) -> tuple[tuple[IntArray, FloatArray], IntArray]:
    """Per output signature with candidates, its best ``width[sig]`` input *instances* (padded table).

    ``width[sig]`` is ``max_neighbors`` plus the most inputs a producer of the signature can skip
    as its own, so no producer ever needs a column beyond it.

    Returns:
        ``((instances, scores), row_of_sig)``: row ``row_of_sig[sig]`` of both tables (``-1``
        when the signature has no candidate) lists input instances and scores, padded with -1 / 0.
    """
    outs, ins = sides
    n_in = ins.ptr[cands.inp + 1] - ins.ptr[cands.inp]
    pair = np.repeat(np.arange(len(cands.out)), n_in)
    local = np.arange(int(n_in.sum())) - np.repeat(np.cumsum(n_in) - n_in, n_in)
    out_sig = cands.out[pair]
    in_inst = ins.members[ins.ptr[cands.inp[pair]] + local] if len(ins) else local
    score = cands.score[pair]
    order = np.lexsort((tie_break(outs.marks[out_sig], ins.spots[in_inst]), -score, out_sig))
    out_sig, in_inst, score = out_sig[order], in_inst[order], score[order]
    sigs, start, counts = np.unique(out_sig, return_index=True, return_counts=True)
    column = np.arange(len(out_sig)) - np.repeat(start, counts)
    row = np.repeat(np.arange(len(sigs)), counts)
    kept = column < width[out_sig]
    row, column, in_inst, score = row[kept], column[kept], in_inst[kept], score[kept]
    columns = int(column.max()) + 1 if len(column) else 1
    inst_table = np.full((max(len(sigs), 1), columns), -1, dtype=np.int64)
    score_table = np.zeros((max(len(sigs), 1), columns), dtype=np.float32)
    inst_table[row, column] = in_inst
    score_table[row, column] = score
    row_of_sig = np.full(max(len(width), 1), -1, dtype=np.int64)
    row_of_sig[sigs] = np.arange(len(sigs))
    return (inst_table, score_table), row_of_sig


def to_state(cands: Candidates, outs: Side, ins: Side, width: IntArray) -> dict[str, npt.NDArray[Any]]:
    return {
        "out_keys": outs.keys,
        "in_keys": ins.keys,
        "width": width,
        "cand_out": cands.out,
        "cand_in": cands.inp,
        "cand_score": cands.score,
    }


def from_state(state: Mapping[str, npt.NDArray[Any]], outs: Side, ins: Side) -> Candidates:
    out_map = _remap(state["out_keys"], outs.keys)
    in_map = _remap(state["in_keys"], ins.keys)
    return Candidates(out_map[state["cand_out"]], in_map[state["cand_in"]], state["cand_score"])


def _remap(stored: npt.NDArray[Any], current: npt.NDArray[np.bytes_]) -> IntArray:
    """For each stored key, its index among ``current`` keys (distinct), or -1 when it is gone."""
    stored = np.asarray(stored).astype("S32")
    if len(current) == 0 or len(stored) == 0:
        return np.full(len(stored), -1, dtype=np.int64)
    order = np.argsort(current, kind="stable")
    place = np.minimum(np.searchsorted(current, stored, sorter=order), len(current) - 1)
    found = order[place]
    return np.where(current[found] == stored, found, -1).astype(np.int64)


def pool_key(out_keys: npt.NDArray[np.bytes_], width: IntArray, in_keys: npt.NDArray[np.bytes_]) -> str:
    """A digest of the pool's signatures (order-free) and widths: the key of a candidate state."""
    order = np.argsort(out_keys, kind="stable")
    digest = hashlib.blake2b(digest_size=16)
    for part in (out_keys[order], np.asarray(width, dtype="<i8")[order], np.sort(in_keys)):
        digest.update(np.ascontiguousarray(part).tobytes())
        digest.update(b"|")
    return digest.hexdigest()


def update_candidates(
    state: Mapping[str, npt.NDArray[Any]], scorer: Scorer, outs: Side, ins: Side, width: IntArray
) -> Candidates:
    """Candidates for the current pool, reusing a previous pool's lists where they stay exact.

    A previous list of an output signature stays valid when it was at least as wide as needed now
    and none of its inputs disappeared; it is then merged with the scores against the new inputs.
    Every other output signature is scored from scratch.
    """
    out_map = _remap(state["out_keys"], outs.keys)
    in_map = _remap(state["in_keys"], ins.keys)
    cand_out, cand_in = out_map[state["cand_out"]], in_map[state["cand_in"]]
    valid = np.zeros(len(outs.keys), dtype=bool)
    present = out_map >= 0
    valid[out_map[present]] = state["width"][present] >= width[out_map[present]]
    valid[cand_out[(cand_in < 0) & (cand_out >= 0)]] = False
    seen_in = np.zeros(len(ins.keys), dtype=bool)
    seen_in[in_map[in_map >= 0]] = True
    reuse, redo = np.flatnonzero(valid), np.flatnonzero(~valid)
    kept = cand_out >= 0
    kept[kept] = valid[cand_out[kept]]
    old = Candidates(cand_out[kept], cand_in[kept], state["cand_score"][kept])
    fresh = scorer.rows(reuse, np.flatnonzero(~seen_in), width[reuse])
    # Only lists that gained candidates, or must now be cut shorter, go through a merge; the
    # others are already exactly the top of their row.
    wider = np.zeros(len(outs.keys), dtype=bool)
    wider[out_map[present]] = state["width"][present] > width[out_map[present]]
    touched = wider
    touched[fresh.out] = True
    merge = touched[old.out]
    settled = Candidates(old.out[~merge], old.inp[~merge], old.score[~merge])
    merged = scorer.merge(
        Candidates.concat([Candidates(old.out[merge], old.inp[merge], old.score[merge]), fresh]), width
    )
    full = scorer.rows(redo, np.arange(len(ins.keys), dtype=np.int64), width[redo])
    return Candidates.concat([settled, merged, full])
