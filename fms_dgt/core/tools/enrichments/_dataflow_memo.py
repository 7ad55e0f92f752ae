"""The ``dataflow`` enrichment's memo: per namespace, its parameter instances and signatures.

Besides the parameters, each namespace keeps its *local candidates*: its outputs' best inputs
among its own inputs, as signature pairs with scores (see :mod:`._dataflow_local`).

A memo is a chain of pack files (see :class:`~fms_dgt.core.tools.enrichments._cache.MemoStore`):
a full one, then deltas that each name the shard they extend (``base``) and add only the
namespaces, signatures, parameter names and type keys it lacked, so nothing stored is rewritten.
The packs hold only numeric arrays and JSON text, never pickled objects or class names, so the
layout of the Python modules does not matter to them. A chain that is broken or disagrees with
the settings is ignored (the run recomputes and writes a full memo), never trusted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from fms_dgt.core.tools.enrichments._cache import MemoStore, memo_positions
from fms_dgt.core.tools.enrichments._dataflow_scoring import Candidates

if TYPE_CHECKING:
    from fms_dgt.core.tools.enrichments._dataflow_params import Side

__all__ = ["MEMO_ARRAYS", "Memo", "local_candidates", "read_memo", "update_memo"]

IntArray = npt.NDArray[np.int64]

MEMO_ARRAYS = (
    *(
        f"{side}_{part}"
        for side in ("out", "in")
        for part in ("ptr", "local", "name", "sig", "keys", "order", "types", "roles", "vectors", "inverse")
    ),
    "names",
    "type_names",
    "role_names",
    "loc_ptr",
    "loc_out",
    "loc_in",
    "loc_score",
)


@dataclass(slots=True)
class Memo:
    """A read memo: a chain of shards, oldest (the full one) first, each adding to the tables.

    Attributes:
        head: file name of the newest shard (the one a new delta extends).
        shards: the shards' arrays, oldest first.
        positions: content key -> (shard, group position).
        names, types, roles: parameter names, type keys and roles, by id across the chain.
        tables: per side, the signatures of the whole chain: ``keys``, ``order`` (their sorted
            order), ``types``, ``roles``, ``vectors`` (int8) and ``inverse``.
    """

    head: str
    shards: list[Mapping[str, npt.NDArray[Any]]]
    positions: dict[str, tuple[int, int]]
    names: list[str]
    types: list[str]
    roles: list[str]
    tables: dict[str, dict[str, npt.NDArray[Any]]]


def read_memo(store: MemoStore, dim: int) -> Memo | None:
    """The newest memo chain when complete and consistent with vectors of size ``dim``, else None."""
    named = store.read_named()
    if not named:
        return None
    by_name = dict(named)
    chain = [named[0]]
    try:
        while "base" in chain[-1][1]:
            base = _json_of(chain[-1][1]["base"])
            if base not in by_name or len(chain) > MemoStore.max_shards:
                return None  # a broken or runaway chain: start over with a full memo
            chain.append((base, by_name[base]))
        chain.reverse()
        return _combine(named[0][0], [arrays for _, arrays in chain], dim)
    except (KeyError, TypeError, ValueError):
        return None


def _combine(head: str, shards: list[Mapping[str, npt.NDArray[Any]]], dim: int) -> Memo | None:
    """The chain ``shards`` (oldest first) as one :class:`Memo`, or None when inconsistent."""
    names: list[str] = []
    types: list[str] = []
    roles: list[str] = []
    sizes = {"out": 0, "in": 0}
    positions: dict[str, tuple[int, int]] = {}
    for number, arrays in enumerate(shards):
        names += _json_of(arrays["names"])
        types += _json_of(arrays["type_names"])
        roles += _json_of(arrays["role_names"])
        groups = len(arrays["keys"])
        for side in ("out", "in"):
            ptr, sig, name = arrays[f"{side}_ptr"], arrays[f"{side}_sig"], arrays[f"{side}_name"]
            added = len(arrays[f"{side}_keys"])
            sizes[side] += added
            count = len(arrays[f"{side}_local"])
            ok = (
                len(ptr) == groups + 1
                and int(ptr[-1]) == count == len(sig) == len(name)
                and arrays[f"{side}_vectors"].shape == (added, dim)
                and len(arrays[f"{side}_inverse"]) == len(arrays[f"{side}_types"]) == added
                and len(arrays[f"{side}_roles"]) == added
                and (added == 0 or int(arrays[f"{side}_roles"].max()) < len(roles))
                and len(arrays[f"{side}_order"]) == sizes[side]
                and (count == 0 or (int(sig.max()) < sizes[side] and int(name.max()) < len(names)))
                and (added == 0 or int(arrays[f"{side}_types"].max()) < len(types))
            )
            if not ok:
                return None
        if not _local_ok(arrays, groups, sizes):
            return None
        for key, position in memo_positions(arrays).items():
            positions[key] = (number, position)
    tables = {
        side: {
            "keys": _joined([a[f"{side}_keys"] for a in shards]),
            "order": shards[-1][f"{side}_order"],
            "types": _joined([a[f"{side}_types"] for a in shards]),
            "roles": _joined([a[f"{side}_roles"] for a in shards]),
            "vectors": _joined([a[f"{side}_vectors"] for a in shards]),
            "inverse": _joined([a[f"{side}_inverse"] for a in shards]),
        }
        for side in ("out", "in")
    }
    return Memo(head, list(shards), positions, names, types, roles, tables)


def _local_ok(arrays: Mapping[str, npt.NDArray[Any]], groups: int, sizes: Mapping[str, int]) -> bool:
    ptr, out, inp = arrays["loc_ptr"], arrays["loc_out"], arrays["loc_in"]
    count = len(out)
    return (
        len(ptr) == groups + 1
        and int(ptr[-1]) == count == len(inp) == len(arrays["loc_score"])
        and (count == 0 or (int(out.max()) < sizes["out"] and int(inp.max()) < sizes["in"]))
    )


def local_candidates(memo: Memo, key: str, sides: tuple[Side, Side]) -> Candidates:
    """The local candidates the memo holds for namespace ``key``, in the pool's signature ids."""
    shard, position = memo.positions[key]
    arrays = memo.shards[shard]
    lo, hi = (int(v) for v in arrays["loc_ptr"][position : position + 2])
    return Candidates(
        sides[0].rank[arrays["loc_out"][lo:hi].astype(np.int64)],
        sides[1].rank[arrays["loc_in"][lo:hi].astype(np.int64)],
        np.asarray(arrays["loc_score"][lo:hi], dtype=np.float32),
    )


def _local_arrays(
    chosen: Sequence[Candidates], sides: tuple[Side, Side], table_ids: bool
) -> dict[str, npt.NDArray[Any]]:
    """The ``loc_*`` arrays of ``chosen`` groups (signature ids of the pool, or of the tables)."""
    outs, ins = sides
    out = np.concatenate([c.out for c in chosen]) if chosen else np.zeros(0, np.int64)
    inp = np.concatenate([c.inp for c in chosen]) if chosen else np.zeros(0, np.int64)
    if table_ids:
        out, inp = outs.chosen[out], ins.chosen[inp]
    return {
        "loc_ptr": np.concatenate(([0], np.cumsum([len(c.out) for c in chosen]))).astype(np.int64),
        "loc_out": out.astype(np.int32),
        "loc_in": inp.astype(np.int32),
        "loc_score": np.concatenate([c.score for c in chosen]) if chosen else np.zeros(0, np.float32),
    }


def update_memo(
    store: MemoStore,
    memo: Memo | None,
    groups: Sequence[tuple[str | None, IntArray]],
    count: int,
    outs: Side,
    ins: Side,
    names: Sequence[str],
    labels: tuple[Sequence[str], Sequence[str]],
    local: Sequence[Candidates],
) -> None:
    """Store the namespaces ``memo`` lacked: as a delta, or as a new full memo when one is due.

    ``labels`` are the pool's type keys and roles, by id; ``local`` the local candidates of each
    group, in the pool's signature ids.

    A full memo is written when there is none, or when the chain is as long as allowed or the
    store holds too many packs; it then covers every keyed namespace of the pool.
    """
    missing = [
        i for i, (k, _) in enumerate(groups) if k is not None and (memo is None or k not in memo.positions)
    ]
    missed = [groups[i] for i in missing]
    if memo is None or (missed and (len(memo.shards) >= MemoStore.max_shards or store.crowded())):
        keyed = [local[i] for i, (k, _) in enumerate(groups) if k is not None]
        _write_memo(store, groups, count, (outs, ins), names, labels, keyed)
    elif missed:
        _write_delta(store, memo, missed, count, (outs, ins), names, labels, [local[i] for i in missing])


def _write_memo(
    store: MemoStore,
    groups: Sequence[tuple[str | None, IntArray]],
    count: int,
    sides: tuple[Side, Side],
    names: Sequence[str],
    labels: tuple[Sequence[str], Sequence[str]],
    local: Sequence[Candidates],
) -> None:
    """Store, per keyed namespace, its parameter instances, the signatures they use and its
    local candidates (``local``, one per keyed namespace)."""
    outs, ins = sides
    keyed = [(key, rows) for key, rows in groups if key is not None]
    present = np.zeros(len(names), dtype=bool)
    present[outs.name] = True
    present[ins.name] = True
    used = np.flatnonzero(present)
    name_map = np.full(len(names), -1, dtype=np.int64)
    name_map[used] = np.arange(len(used))
    arrays: dict[str, npt.NDArray[Any]] = {
        "keys": np.asarray([key for key, _ in keyed], dtype="U32"),
        "names": _json_array([names[i] for i in used.tolist()]),
        "type_names": _json_array(list(labels[0])),
        "role_names": _json_array(list(labels[1])),
        **_local_arrays(local, sides, table_ids=False),
    }
    for label, side in (("out", outs), ("in", ins)):
        ptr, positions, keep = _grouped(keyed, count, side)
        arrays[f"{label}_ptr"] = ptr
        arrays[f"{label}_local"] = positions
        arrays[f"{label}_name"] = name_map[side.name[keep]].astype(np.int32)
        arrays[f"{label}_sig"] = side.sig[keep].astype(np.int32)
        arrays[f"{label}_keys"] = side.keys
        arrays[f"{label}_order"] = np.argsort(side.keys, kind="stable").astype(np.int32)
        arrays[f"{label}_types"] = side.types.astype(np.int32)
        arrays[f"{label}_roles"] = side.roles.astype(np.int32)
        arrays[f"{label}_vectors"] = side.vectors.astype(np.int8)
        arrays[f"{label}_inverse"] = side.inverse
    store.replace(arrays)


def _write_delta(
    store: MemoStore,
    memo: Memo,
    missed: Sequence[tuple[str | None, IntArray]],
    count: int,
    sides: tuple[Side, Side],
    names: Sequence[str],
    labels: tuple[Sequence[str], Sequence[str]],
    local: Sequence[Candidates],
) -> None:
    """Store only the namespaces the memo lacked, as a shard that extends the memo's newest one.

    Its instances use the chain's ids (the memo's signatures and names first, then the ones
    this shard adds), so nothing already stored is rewritten.
    """
    outs, ins = sides
    arrays: dict[str, npt.NDArray[Any]] = {
        "keys": np.asarray([key for key, _ in missed], dtype="U32"),
        "base": _json_array(memo.head),
        "names": _json_array(list(names[len(memo.names) :])),
        "type_names": _json_array(list(labels[0][len(memo.types) :])),
        "role_names": _json_array(list(labels[1][len(memo.roles) :])),
        **_local_arrays(local, sides, table_ids=True),
    }
    for label, side in (("out", outs), ("in", ins)):
        ptr, positions, keep = _grouped(missed, count, side)
        table = side.table
        added = side.rank[table.stored + np.arange(len(table.new_rows), dtype=np.int64)]
        new_keys = np.asarray([key for _, key in table.new_rows], dtype="S32")
        arrays[f"{label}_ptr"] = ptr
        arrays[f"{label}_local"] = positions
        arrays[f"{label}_name"] = side.name[keep].astype(np.int32)
        arrays[f"{label}_sig"] = side.combined[keep].astype(np.int32)
        arrays[f"{label}_keys"] = new_keys
        arrays[f"{label}_order"] = np.argsort(np.concatenate((table.keys, new_keys)), kind="stable").astype(
            np.int32
        )
        arrays[f"{label}_types"] = side.types[added].astype(np.int32)
        arrays[f"{label}_roles"] = side.roles[added].astype(np.int32)
        arrays[f"{label}_vectors"] = side.vectors[added].astype(np.int8)
        arrays[f"{label}_inverse"] = side.inverse[added]
    store.add(arrays)


def _grouped(
    groups: Sequence[tuple[str | None, IntArray]], count: int, side: Side
) -> tuple[IntArray, npt.NDArray[np.int32], IntArray]:
    """The instances of ``side`` that belong to ``groups``, grouped in their order.

    Returns:
        ``(ptr, local, keep)``: group ``g``'s instances are ``keep[ptr[g]:ptr[g + 1]]``, and
        ``local`` gives each one's tool as a position within its group.
    """
    group = np.full(count, -1, dtype=np.int64)
    local = np.zeros(count, dtype=np.int64)
    for position, (_, rows) in enumerate(groups):
        group[rows] = position
        local[rows] = np.arange(len(rows))
    owner = group[side.tool]
    keep = np.flatnonzero(owner >= 0)
    keep = keep[np.argsort(owner[keep], kind="stable")]
    counts = np.bincount(owner[keep], minlength=len(groups))
    ptr = np.concatenate((np.zeros(1, np.int64), np.cumsum(counts)))
    return ptr, local[side.tool[keep]].astype(np.int32), keep


def _joined(parts: Sequence[npt.NDArray[Any]]) -> npt.NDArray[Any]:
    """One array from a chain's parts (no copy for a chain of one)."""
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _json_array(value: Any) -> npt.NDArray[np.uint8]:
    """``value`` as UTF-8 JSON bytes in a uint8 array (how the memo stores lists of strings)."""
    return np.frombuffer(json.dumps(value, ensure_ascii=False).encode(), dtype=np.uint8)


def _json_of(array: npt.NDArray[Any]) -> Any:
    return json.loads(np.asarray(array, dtype=np.uint8).tobytes().decode())
