"""The ``dataflow`` enrichment: which output of one tool can feed which input of another.

The artifact (``artifacts["dataflow"]``) is a :class:`DataflowGraph` of parameter-level edges
``A.output -> B.input``. An edge's score is ``type compatibility x text similarity``:

* **type compatibility** in ``[0, 1]`` compares JSON types: equal types 1.0, ``integer`` into
  ``number`` 0.9, ``number`` into ``integer`` 0.5, scalars into ``string`` 0.3, an untyped side 0.6,
  arrays by their item types; a union output scores the mean over its members; a nullable output
  feeding a non-nullable input loses 10%.
* **text similarity** is the cosine of hashed word and character n-gram vectors of the parameter
  name (split on ``_`` and camelCase, weighted double) and description.

Each output parameter keeps its ``max_neighbors`` best input parameters of *other* tools (another
overload of the same name counts as the same tool) whose score reaches ``threshold``. Equal scores
are ordered by a fixed hash of the output's signature and the input parameter's position in the
registry, so the result is exact and the same in every process.

**Scaling.** No parameter-by-parameter matrix is ever built. Parameters with the same name,
description and type are scored once (a *signature*); output signatures are scored against input
signatures in chunks of a bounded number of cells, keeping only the top candidates per row; the
top list is then expanded to the tools that carry each signature. Memory is linear in the number
of parameters. With a cache directory, the candidate lists are stored, and a later run with more
tools only scores what is new (new outputs against everything, old outputs against new inputs) and
merges, which gives the same result as a cold run. The parameters of namespaces seen before (by
content key) come from the memo, so such a run builds no signature for them either.

Tools without ``output_parameters`` have no outgoing edges; tools without parameters have no
incoming edges. Overloads are distinct nodes.

The artifact type, :class:`~fms_dgt.core.tools.artifacts.DataflowGraph`, is in
:mod:`fms_dgt.core.tools.artifacts`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from fms_dgt.core.tools.artifacts import WHOLE_RESULT, DataflowGraph, Edge
from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.enrichments._cache import (
    MemoStore,
    StateStore,
    VectorStore,
    memo_positions,
    pool_groups,
)
from fms_dgt.core.tools.enrichments._ordering import score_order
from fms_dgt.core.tools.enrichments._vectors import HashedEncoder, l2_normalise, quantise
from fms_dgt.core.tools.enrichments.base import ToolEnrichment, resolve_cache_dir, stable_hash
from fms_dgt.core.tools.schema import json_type
from fms_dgt.errors import ConfigError
from fms_dgt.plugins import register_tool_enrichment

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

# DataflowGraph and Edge live in fms_dgt.core.tools.artifacts; they are still exported here for
# code that imported them from this module.
__all__ = ["DataflowEnrichment", "DataflowGraph", "Edge", "type_compatibility", "type_key"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float32]

_CHUNK_CELLS = 1 << 22
_MEMO_ARRAYS = (
    *(
        f"{side}_{part}"
        for side in ("out", "in")
        for part in ("ptr", "local", "name", "sig", "keys", "order", "types", "vectors", "inverse")
    ),
    "names",
    "type_names",
)
_JSON_TYPES = ("string", "integer", "number", "boolean", "array", "object")


# --------------------------------------------------------------------------- types


def _schema_types(schema: Any) -> set[str]:
    """The JSON types a schema admits (``any`` when unconstrained)."""
    if not isinstance(schema, dict):
        return {"any"}
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list) and kind:
        return {str(k) for k in kind}
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            return set().union(*(_schema_types(b) for b in branches))
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if isinstance(values, list) and values:
        return {json_type(v) for v in values}
    return {"any"}


def type_key(schema: Any) -> str:
    """A canonical string for the type of a parameter schema.

    Examples: ``string``, ``integer|string``, ``number?`` (nullable), ``array<string>``, ``any``.
    """
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, str) and kind != "array":
        return kind  # the common case, without building sets
    types = _schema_types(schema)
    if "any" in types:
        return "any"
    nullable = "null" in types and len(types) > 1
    types.discard("null")
    key = "|".join(sorted(types))
    if key == "array" and isinstance(schema, dict) and isinstance(schema.get("items"), dict):
        key = f"array<{type_key(schema['items'])}>"
    return key + ("?" if nullable else "")


def _parse_key(key: str) -> tuple[list[str], bool]:
    nullable = key.endswith("?")
    body = key[:-1] if nullable else key
    if body.startswith("array<"):
        return [body], nullable
    return body.split("|"), nullable


def _scalar_fit(out: str, into: str) -> float:
    if out == into:
        return 1.0
    if "any" in (out, into):
        return 0.6
    if out.startswith("array") and into.startswith("array"):
        inner_out = out[6:-1] if out.startswith("array<") else "any"
        inner_in = into[6:-1] if into.startswith("array<") else "any"
        return 0.2 + 0.8 * type_compatibility(inner_out, inner_in)
    if (out, into) == ("integer", "number"):
        return 0.9
    if (out, into) == ("number", "integer"):
        return 0.5
    if into == "string" and out in ("integer", "number", "boolean"):
        return 0.3
    return 0.0


def type_compatibility(out_key: str, in_key: str) -> float:
    """How well a value of type ``out_key`` fits an input of type ``in_key`` (both from :func:`type_key`)."""
    outs, out_null = _parse_key(out_key)
    ins, in_null = _parse_key(in_key)
    best = [max(_scalar_fit(o, i) for i in ins) for o in outs]
    score = sum(best) / len(best)
    return score * 0.9 if out_null and not in_null else score


# --------------------------------------------------------------------------- fields


def _input_fields(tool: Tool) -> list[tuple[str, Mapping[str, Any]]]:
    props = tool.parameters.get("properties")
    if not isinstance(props, dict):
        return []
    return [(str(n), s if isinstance(s, dict) else {}) for n, s in props.items()]


def _output_fields(tool: Tool) -> list[tuple[str, Mapping[str, Any]]]:
    schema = _root(tool.output_parameters)
    if not schema:
        return []
    props = schema.get("properties")
    if isinstance(props, dict) and props:
        return [(str(n), s if isinstance(s, dict) else {}) for n, s in props.items()]
    return [(WHOLE_RESULT, schema)]


def _root(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """The schema a root ``$ref`` into ``$defs`` points to (REST outputs are often written so)."""
    ref = schema.get("$ref") if schema else None
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = schema.get("$defs", {}).get(ref[len("#/$defs/") :])
        if isinstance(target, dict):
            return target
    return schema


def _signature_key(signature: tuple[str, str, str]) -> str:
    return hashlib.sha256("\x1f".join(signature).encode()).hexdigest()[:32]


class _Names:
    """Strings by id (parameter names, type keys): the memo's first, new ones appended."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self._ids: dict[str, int] | None = None

    def id(self, name: str) -> int:
        ids = self._ids
        if ids is None:
            ids = self._ids = {n: i for i, n in enumerate(self.names)}
        found = ids.get(name)
        if found is None:
            found = ids[name] = len(self.names)
            self.names.append(name)
        return found


class _Side:
    """The parameters of one side (inputs or outputs) of every tool, grouped into signatures.

    A signature is (name text, description, type key); parameters that share one are scored once.
    Signatures are numbered in order of first appearance in registry order.

    Attributes:
        tool, name, sig: per parameter instance, its tool (registry position), name id and
            signature id; instances are in registry order, fields in schema order.
        keys, types: per signature, its content key (ASCII bytes) and type key id (into the
            pool's shared type table).
        texts: per signature without a vector yet, its ``(name text, description)``.
        vectors, inverse: per signature, the quantised vector and its inverse norm (filled by
            the enrichment for signatures listed in ``texts``).
        members, ptr: instances grouped by signature (``members[ptr[s]:ptr[s + 1]]``).
    """

    def __init__(
        self,
        tool: IntArray,
        name: IntArray,
        combined: IntArray,
        table: _SignatureTable,
    ) -> None:
        if len(tool) and bool((np.diff(tool) < 0).any()):  # namespaces interleave in the registry
            order = np.argsort(tool, kind="stable")
            tool, name, combined = tool[order], name[order], combined[order]
        self.tool, self.name = tool, name
        combined = table.resolve(combined)
        # Number the signatures in order of first appearance (ids are dense: no sort of instances).
        first = np.full(table.size, len(combined), dtype=np.int64)
        np.minimum.at(first, combined, np.arange(len(combined), dtype=np.int64))
        used = np.flatnonzero(first < len(combined))
        chosen = used[np.argsort(first[used], kind="stable")]
        rank = np.zeros(table.size, dtype=np.int64)
        rank[chosen] = np.arange(len(chosen), dtype=np.int64)
        self.sig = rank[combined]
        self.combined, self.rank, self.table = combined, rank, table
        self.keys, self.types, self.texts, self.vectors, self.inverse = table.select(chosen)
        self.members = np.argsort(self.sig, kind="stable")
        counts = np.bincount(self.sig, minlength=len(self.keys))
        self.ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)

    def __len__(self) -> int:
        return len(self.sig)


class _SignatureTable:
    """The signatures a side can use: the memo's (ids ``0..M-1``) and new ones (ids ``M..``)."""

    def __init__(self, memo: _Memo | None, side: str, dim: int, types: _Names) -> None:
        self.type_table = types
        if memo is None:
            self.keys = np.zeros(0, dtype="S32")
            self.order = np.zeros(0, dtype=np.int32)
            self.types = np.zeros(0, dtype=np.int64)
            self.vectors = np.zeros((0, dim), dtype=np.int8)
            self.inverse = np.zeros(0, dtype=np.float32)
        else:
            table = memo.tables[side]
            self.keys, self.order, self.types = table["keys"], table["order"], table["types"]
            self.vectors, self.inverse = table["vectors"], table["inverse"]
        self.stored = len(self.keys)
        self.new: dict[tuple[str, str, str], int] = {}
        self.new_rows: list[tuple[tuple[str, str, str], str]] = []

    @property
    def size(self) -> int:
        """Number of ids in use (stored and new)."""
        return self.stored + len(self.new_rows)

    def id(self, signature: tuple[str, str, str]) -> int:
        """A provisional id for a signature met in a namespace the memo does not hold."""
        found = self.new.get(signature)
        if found is None:
            found = self.new[signature] = self.stored + len(self.new_rows)
            self.new_rows.append((signature, _signature_key(signature)))
        return found

    def resolve(self, combined: IntArray) -> IntArray:
        """Map provisional ids of signatures the memo already holds (by key) to the memo's ids."""
        if not self.new_rows or not self.stored:
            return combined
        wanted = np.asarray([key for _, key in self.new_rows], dtype="S32")
        place = np.minimum(np.searchsorted(self.keys, wanted, sorter=self.order), self.stored - 1)
        match = self.order[place].astype(np.int64)
        known = self.keys[match] == wanted
        remap = np.where(known, match, -1)
        unknown = np.flatnonzero(~known)
        remap[unknown] = self.stored + np.arange(len(unknown))
        self.new_rows = [self.new_rows[i] for i in unknown.tolist()]
        return np.where(combined >= self.stored, remap[np.maximum(combined - self.stored, 0)], combined)

    def select(
        self, chosen: IntArray
    ) -> tuple[npt.NDArray[np.bytes_], IntArray, dict[int, tuple[str, str]], FloatArray, FloatArray]:
        """Keys (ASCII bytes), type keys, texts (new signatures only), vectors and inverse norms."""
        stored = chosen < self.stored
        old = np.flatnonzero(stored)
        fresh = np.flatnonzero(~stored).tolist()
        keys = np.empty(len(chosen), dtype="S32")
        types = np.zeros(len(chosen), dtype=np.int64)
        vectors = np.zeros((len(chosen), self.vectors.shape[1]), dtype=np.float32)
        inverse = np.zeros(len(chosen), dtype=np.float32)
        if len(old):
            ids = chosen[old]
            keys[old] = self.keys[ids]
            types[old] = self.types[ids]
            vectors[old] = self.vectors[ids]
            inverse[old] = self.inverse[ids]
        texts: dict[int, tuple[str, str]] = {}
        for position in fresh:
            signature, key = self.new_rows[int(chosen[position]) - self.stored]
            keys[position] = key.encode()
            types[position] = self.type_table.id(signature[2])
            texts[position] = (signature[0], signature[1])
        return keys, types, texts, vectors, inverse


def _build_side(
    tools: Sequence[Tool],
    groups: Sequence[tuple[str | None, IntArray]],
    memo: _Memo | None,
    outputs: bool,
    names: _Names,
    types: _Names,
    dim: int,
) -> _Side:
    """A side of the pool: memo rows for known namespaces, per-tool work for the others."""
    side = "out" if outputs else "in"
    table = _SignatureTable(memo, side, dim, types)
    fields = _output_fields if outputs else _input_fields
    parts: list[tuple[IntArray, IntArray, IntArray]] = []
    for key, rows in groups:
        found = memo.positions.get(key) if memo is not None and key is not None else None
        if memo is not None and found is not None:
            arrays, position = memo.shards[found[0]], found[1]
            lo, hi = (int(v) for v in arrays[f"{side}_ptr"][position : position + 2])
            parts.append(
                (
                    rows[arrays[f"{side}_local"][lo:hi]],
                    arrays[f"{side}_name"][lo:hi].astype(np.int64),
                    arrays[f"{side}_sig"][lo:hi].astype(np.int64),
                )
            )
            continue
        tool_ids: list[int] = []
        name_ids: list[int] = []
        sig_ids: list[int] = []
        for t_id in rows.tolist():
            tool = tools[t_id]
            for name, schema in fields(tool):
                text = name or tool.name
                sig_ids.append(table.id((text, str(schema.get("description", "")), type_key(schema))))
                tool_ids.append(t_id)
                name_ids.append(names.id(name))
        parts.append(
            (np.asarray(tool_ids, np.int64), np.asarray(name_ids, np.int64), np.asarray(sig_ids, np.int64))
        )
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return _Side(empty, empty, empty, table)
    instance_tool, instance_name, combined = (np.concatenate([p[i] for p in parts]) for i in range(3))
    return _Side(instance_tool, instance_name, combined, table)


@dataclass(slots=True)
class _Memo:
    """A read memo: a chain of shards, oldest (the full one) first, each adding to the tables.

    Attributes:
        head: file name of the newest shard (the one a new delta extends).
        shards: the shards' arrays, oldest first.
        positions: content key -> (shard, group position).
        names, types: parameter names and type keys, by id across the chain.
        tables: per side, the signatures of the whole chain: ``keys``, ``order`` (their sorted
            order), ``types``, ``vectors`` (int8) and ``inverse``.
    """

    head: str
    shards: list[Mapping[str, npt.NDArray[Any]]]
    positions: dict[str, tuple[int, int]]
    names: list[str]
    types: list[str]
    tables: dict[str, dict[str, npt.NDArray[Any]]]


def _graph(
    tools: Sequence[Tool],
    edges: Mapping[str, npt.NDArray[Any]],
    names: Sequence[str],
    settings: Mapping[str, Any],
) -> DataflowGraph:
    """The artifact: edges sorted by source node, best score first, with the reverse index."""
    count = len(tools)
    order = score_order(edges["src"], edges["score"], edges["dst"], count)
    src, dst = _frozen(edges["src"][order]), _frozen(edges["dst"][order])
    score = _frozen(edges["score"][order].astype(np.float32))
    in_order = _frozen(score_order(dst, score, src, count))
    arrays = {
        "src": src,
        "dst": dst,
        "output": _frozen(edges["output"][order]),
        "input": _frozen(edges["input"][order]),
        "score": score,
        "out_ptr": _frozen(_ptr(src, count)),
        "in_order": in_order,
        "in_ptr": _frozen(_ptr(dst[in_order], count)),
    }
    return DataflowGraph(tools, arrays, names, settings)


def _frozen(array: npt.NDArray[Any]) -> npt.NDArray[Any]:
    array = np.ascontiguousarray(array)
    array.setflags(write=False)
    return array


def _ptr(sorted_ids: npt.NDArray[Any], count: int) -> IntArray:
    return np.concatenate(([0], np.cumsum(np.bincount(sorted_ids, minlength=count)))).astype(np.int64)


# --------------------------------------------------------------------------- scoring


@dataclass(slots=True)
class _Candidates:
    """Signature-level candidate pairs: output sig, input sig, score."""

    out: IntArray
    inp: IntArray
    score: FloatArray

    @classmethod
    def empty(cls) -> _Candidates:
        return cls(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32))

    @classmethod
    def concat(cls, parts: Sequence[_Candidates]) -> _Candidates:
        if not parts:
            return cls.empty()
        return cls(
            np.concatenate([p.out for p in parts]),
            np.concatenate([p.inp for p in parts]),
            np.concatenate([p.score for p in parts]),
        )


class _Scorer:
    """Scores output signatures against input signatures, keeping each row's top ``width`` with ties."""

    def __init__(self, outs: _Side, ins: _Side, type_keys: Sequence[str], threshold: float) -> None:
        self.out_vec, self.out_inv = outs.vectors, outs.inverse
        self.in_vec, self.in_inv = ins.vectors, ins.inverse
        self.table = np.array(
            [[type_compatibility(o, i) for i in type_keys] for o in type_keys], dtype=np.float32
        ).reshape(len(type_keys), len(type_keys))
        self.out_type = outs.types
        self.in_type = ins.types
        self.threshold = threshold

    def rows(self, out_sigs: IntArray, in_sigs: IntArray, width: IntArray) -> _Candidates:
        """Top ``width[r]`` inputs among ``in_sigs`` for each output signature ``out_sigs[r]``."""
        if len(out_sigs) == 0 or len(in_sigs) == 0:
            return _Candidates.empty()
        step = max(1, _CHUNK_CELLS // len(in_sigs))
        parts = [
            self._chunk(out_sigs[lo : lo + step], in_sigs, width[lo : lo + step])
            for lo in range(0, len(out_sigs), step)
        ]
        return _Candidates.concat(parts)

    def _chunk(self, out_sigs: IntArray, in_sigs: IntArray, width: IntArray) -> _Candidates:
        # ``in_sigs`` is sorted and distinct, so at full length it is every input: no gather copy.
        everything = len(in_sigs) == len(self.in_inv)
        in_vec = self.in_vec if everything else self.in_vec[in_sigs]
        in_inv = self.in_inv if everything else self.in_inv[in_sigs]
        in_type = self.in_type if everything else self.in_type[in_sigs]
        dots = self.out_vec[out_sigs] @ in_vec.T
        dots *= self.out_inv[out_sigs][:, None]
        dots *= in_inv[None, :]
        dots *= self.table[self.out_type[out_sigs]][:, in_type]
        count = dots.shape[1]
        k = int(min(int(width.max()), count))
        top = np.sort(np.partition(dots, count - k, axis=1)[:, count - k :], axis=1)[:, ::-1]
        kth = top[np.arange(len(top)), np.minimum(width, k) - 1]
        flat = np.flatnonzero(dots >= np.maximum(kth, self.threshold)[:, None])
        rows, cols = np.divmod(flat, count)
        return _Candidates(out_sigs[rows], in_sigs[cols], dots[rows, cols])

    def merge(self, cands: _Candidates, width: IntArray) -> _Candidates:
        """Per output signature, the top ``width[out]`` candidates (with ties) of ``cands``."""
        if len(cands.out) == 0:
            return cands
        order = np.lexsort((-cands.score, cands.out))
        out, score = cands.out[order], cands.score[order]
        start = np.searchsorted(out, out, side="left")
        last = np.searchsorted(out, out, side="right") - 1
        kth = score[np.minimum(start + width[out] - 1, last)]
        chosen = order[(score >= kth) & (score >= self.threshold)]
        return _Candidates(cands.out[chosen], cands.inp[chosen], cands.score[chosen])


# --------------------------------------------------------------------------- enrichment


_EXPAND_ROWS = 1 << 22


def _tie_break(out_sig: IntArray, in_inst: IntArray) -> npt.NDArray[np.uint64]:
    """A fixed pseudo-random order among equal scores, different for each output signature.

    It depends on the output *signature* (not the producing tool), so every producer of a
    signature shares one ranking and the expansion to tools stays linear.
    """
    h = (out_sig.astype(np.uint64) << np.uint64(32)) ^ in_inst.astype(np.uint64)
    h = h * np.uint64(0x9E3779B97F4A7C15)
    return h ^ (h >> np.uint64(29))


@register_tool_enrichment("dataflow")
class DataflowEnrichment(ToolEnrichment):
    """Build the parameter-level dataflow graph.

    Args:
        threshold: minimum edge score, in ``(0, 1]``.
        max_neighbors: input parameters kept per output parameter.
        dim: size of the hashed text vectors of parameters (8 to 1024).
        cache_dir: cache directory (the config passes ``tools.cache_dir``); None disables caching
            unless ``$DGT_CACHE_DIR`` is set.
        force: recompute everything and overwrite the cache.
    """

    artifact_key = "dataflow"
    runs_after = ("output_parameters",)

    def __init__(
        self,
        *,
        threshold: float = 0.3,
        max_neighbors: int = 8,
        dim: int = 256,
        cache_dir: str | PathLike[str] | None = None,
        force: bool = False,
    ) -> None:
        _check_settings(threshold, max_neighbors, dim)
        self.threshold = float(threshold)
        self.max_neighbors = int(max_neighbors)
        self.encoder = HashedEncoder(dim=dim)
        self.force = force
        self.settings = {
            "version": 1,
            "threshold": self.threshold,
            "max_neighbors": self.max_neighbors,
            "encoder": self.encoder.identity(),
        }
        root = resolve_cache_dir(cache_dir)
        base = root / "dataflow" / stable_hash(self.settings, size=16) if root else None
        self.states = StateStore(base / "states") if base else None
        self.vector_store = VectorStore(base / "vectors") if base else None
        self.memo = MemoStore(base / "memo", _MEMO_ARRAYS) if base else None

    def enrich(self, registry: ToolRegistry) -> DataflowGraph:
        """The dataflow graph of every tool in ``registry``."""
        tools = registry.tools()
        if self.memo is not None:
            groups = pool_groups(registry, tools)
        else:
            groups = [(None, np.arange(len(tools), dtype=np.int64))]
        memo = None if self.force else self._read_memo()
        names = _Names(list(memo.names) if memo is not None else [])
        types = _Names(list(memo.types) if memo is not None else [])
        outs = _build_side(tools, groups, memo, True, names, types, self.encoder.dim)
        ins = _build_side(tools, groups, memo, False, names, types, self.encoder.dim)
        self._fill_vectors(outs)
        self._fill_vectors(ins)
        scorer = _Scorer(outs, ins, types.names, self.threshold)
        qid, qcount = _qualified_ids(registry, tools)
        width = self._widths(qid, qcount, outs, ins)
        cands = self._candidates(scorer, outs, ins, width)
        used, remap = _used_names(names.names, outs, ins)
        edges = self._expand(cands, qid, outs, ins, remap, width)
        if self.memo is not None:
            missed = [
                (k, rows) for k, rows in groups if k is not None and (memo is None or k not in memo.positions)
            ]
            if memo is None or (missed and (len(memo.shards) >= MemoStore.max_shards or self.memo.crowded())):
                self._write_memo(groups, len(tools), outs, ins, names.names, types.names)
            elif missed:
                self._write_delta(memo, missed, len(tools), outs, ins, names.names, types.names)
        return _graph(tools, edges, used, self.settings)

    # ------------------------------------------------------------------ memo

    def _read_memo(self) -> _Memo | None:
        """The newest memo chain when complete and consistent with these settings, else None."""
        named = self.memo.read_named() if self.memo is not None else []
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
            return self._combine(named[0][0], [arrays for _, arrays in chain])
        except (KeyError, TypeError, ValueError):
            return None

    def _combine(self, head: str, shards: list[Mapping[str, npt.NDArray[Any]]]) -> _Memo | None:
        names: list[str] = []
        types: list[str] = []
        sizes = {"out": 0, "in": 0}
        positions: dict[str, tuple[int, int]] = {}
        for number, arrays in enumerate(shards):
            names += _json_of(arrays["names"])
            types += _json_of(arrays["type_names"])
            groups = len(arrays["keys"])
            for side in ("out", "in"):
                ptr, sig, name = arrays[f"{side}_ptr"], arrays[f"{side}_sig"], arrays[f"{side}_name"]
                added = len(arrays[f"{side}_keys"])
                sizes[side] += added
                count = len(arrays[f"{side}_local"])
                ok = (
                    len(ptr) == groups + 1
                    and int(ptr[-1]) == count == len(sig) == len(name)
                    and arrays[f"{side}_vectors"].shape == (added, self.encoder.dim)
                    and len(arrays[f"{side}_inverse"]) == len(arrays[f"{side}_types"]) == added
                    and len(arrays[f"{side}_order"]) == sizes[side]
                    and (count == 0 or (int(sig.max()) < sizes[side] and int(name.max()) < len(names)))
                    and (added == 0 or int(arrays[f"{side}_types"].max()) < len(types))
                )
                if not ok:
                    return None
            for key, position in memo_positions(arrays).items():
                positions[key] = (number, position)
        tables = {
            side: {
                "keys": _joined([a[f"{side}_keys"] for a in shards]),
                "order": shards[-1][f"{side}_order"],
                "types": _joined([a[f"{side}_types"] for a in shards]),
                "vectors": _joined([a[f"{side}_vectors"] for a in shards]),
                "inverse": _joined([a[f"{side}_inverse"] for a in shards]),
            }
            for side in ("out", "in")
        }
        return _Memo(head, list(shards), positions, names, types, tables)

    def _write_memo(
        self,
        groups: Sequence[tuple[str | None, IntArray]],
        count: int,
        outs: _Side,
        ins: _Side,
        names: Sequence[str],
        type_names: Sequence[str],
    ) -> None:
        """Store, per keyed namespace, its parameter instances and the signatures they use."""
        assert self.memo is not None
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
            "type_names": _json_array(list(type_names)),
        }
        for label, side in (("out", outs), ("in", ins)):
            ptr, local, keep = _grouped(keyed, count, side)
            arrays[f"{label}_ptr"] = ptr
            arrays[f"{label}_local"] = local
            arrays[f"{label}_name"] = name_map[side.name[keep]].astype(np.int32)
            arrays[f"{label}_sig"] = side.sig[keep].astype(np.int32)
            arrays[f"{label}_keys"] = side.keys
            arrays[f"{label}_order"] = np.argsort(side.keys, kind="stable").astype(np.int32)
            arrays[f"{label}_types"] = side.types.astype(np.int32)
            arrays[f"{label}_vectors"] = side.vectors.astype(np.int8)
            arrays[f"{label}_inverse"] = side.inverse
        self.memo.replace(arrays)

    def _write_delta(
        self,
        memo: _Memo,
        missed: Sequence[tuple[str | None, IntArray]],
        count: int,
        outs: _Side,
        ins: _Side,
        names: Sequence[str],
        type_names: Sequence[str],
    ) -> None:
        """Store only the namespaces the memo lacked, as a shard that extends the memo's newest one.

        Its instances use the chain's ids (the memo's signatures and names first, then the ones
        this shard adds), so nothing already stored is rewritten.
        """
        assert self.memo is not None
        arrays: dict[str, npt.NDArray[Any]] = {
            "keys": np.asarray([key for key, _ in missed], dtype="U32"),
            "base": _json_array(memo.head),
            "names": _json_array(list(names[len(memo.names) :])),
            "type_names": _json_array(list(type_names[len(memo.types) :])),
        }
        for label, side in (("out", outs), ("in", ins)):
            ptr, local, keep = _grouped(missed, count, side)
            table = side.table
            added = side.rank[table.stored + np.arange(len(table.new_rows), dtype=np.int64)]
            new_keys = np.asarray([key for _, key in table.new_rows], dtype="S32")
            arrays[f"{label}_ptr"] = ptr
            arrays[f"{label}_local"] = local
            arrays[f"{label}_name"] = side.name[keep].astype(np.int32)
            arrays[f"{label}_sig"] = side.combined[keep].astype(np.int32)
            arrays[f"{label}_keys"] = new_keys
            arrays[f"{label}_order"] = np.argsort(
                np.concatenate((table.keys, new_keys)), kind="stable"
            ).astype(np.int32)
            arrays[f"{label}_types"] = side.types[added].astype(np.int32)
            arrays[f"{label}_vectors"] = side.vectors[added].astype(np.int8)
            arrays[f"{label}_inverse"] = side.inverse[added]
        self.memo.add(arrays)

    # ------------------------------------------------------------------ vectors and widths

    def _fill_vectors(self, side: _Side) -> None:
        """Quantised vectors of the signatures the memo did not hold (vector cache, else encoder)."""
        if not side.texts:
            return
        positions = list(side.texts)
        keys = [side.keys[i].decode() for i in positions]
        rows, missing = (None, list(range(len(keys))))
        if self.vector_store is not None and not self.force:
            rows, missing = self.vector_store.load(keys)
        if rows is None:
            rows = np.zeros((len(keys), self.encoder.dim), dtype=np.float32)
        if missing:
            fresh = self._encode([side.texts[positions[i]] for i in missing])
            rows[missing] = fresh
            if self.vector_store is not None:
                self.vector_store.store([keys[i] for i in missing], fresh)
        side.vectors[positions], side.inverse[positions] = quantise(rows)

    def _encode(self, texts: Sequence[tuple[str, str]]) -> FloatArray:
        names = self.encoder.encode([t[0] for t in texts])
        descriptions = self.encoder.encode([t[1] for t in texts])
        return l2_normalise(2.0 * l2_normalise(names) + l2_normalise(descriptions))

    def _widths(self, qid: IntArray, qcount: int, outs: _Side, ins: _Side) -> IntArray:
        """Per output signature: ``max_neighbors`` plus the most inputs a producing tool may exclude."""
        own_inputs = np.bincount(qid[ins.tool], minlength=qcount) if len(ins) else np.zeros(qcount, np.int64)
        margin = np.zeros(len(outs.keys), dtype=np.int64)
        if len(outs):
            np.maximum.at(margin, outs.sig, own_inputs[qid[outs.tool]])
        return margin + self.max_neighbors

    # ------------------------------------------------------------------ candidates (cached)

    def _candidates(self, scorer: _Scorer, outs: _Side, ins: _Side, width: IntArray) -> _Candidates:
        all_outs = np.arange(len(outs.keys), dtype=np.int64)
        all_ins = np.arange(len(ins.keys), dtype=np.int64)
        if self.states is None:
            return scorer.rows(all_outs, all_ins, width)
        key = _pool_key(outs.keys, width, ins.keys)
        if not self.force:
            hit = self.states.get(key)
            if hit is not None:
                return _from_state(hit, outs, ins)
        previous = None if self.force else self.states.latest()
        if previous is None:
            cands = scorer.rows(all_outs, all_ins, width)
        else:
            cands = _update(previous, scorer, outs, ins, width)
        self.states.put(key, _to_state(cands, outs, ins, width))
        return cands

    # ------------------------------------------------------------------ expansion to tools

    def _expand(
        self,
        cands: _Candidates,
        qid: IntArray,
        outs: _Side,
        ins: _Side,
        name_map: IntArray,
        width: IntArray,
    ) -> dict[str, npt.NDArray[Any]]:
        """Signature candidates -> edges between tools: each output keeps its best inputs of other tools."""
        ranked, row_of_sig = _rank_inputs(cands, ins, width)
        parts = [
            self._pick(ranked, row_of_sig, outs, ins, qid, np.arange(lo, min(lo + step, len(outs))))
            for step in [max(1, _EXPAND_ROWS // max(1, ranked[0].shape[1]))]
            for lo in range(0, len(outs), step)
        ]
        out_names = name_map[outs.name] if len(outs) else np.zeros(1, np.int64)
        in_names = name_map[ins.name] if len(ins) else np.zeros(1, np.int64)
        out_inst = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int64)
        in_inst = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.int64)
        score = np.concatenate([p[2] for p in parts]) if parts else np.zeros(0, np.float32)
        tool_of_in = ins.tool if len(ins) else np.zeros(1, np.int64)
        return {
            "src": outs.tool[out_inst] if len(outs) else out_inst,
            "dst": tool_of_in[in_inst],
            "output": out_names[out_inst],
            "input": in_names[in_inst],
            "score": score,
        }

    def _pick(
        self,
        ranked: tuple[IntArray, FloatArray],
        row_of_sig: IntArray,
        outs: _Side,
        ins: _Side,
        qid: IntArray,
        out_inst: IntArray,
    ) -> tuple[IntArray, IntArray, FloatArray]:
        """For each output instance, the first ``max_neighbors`` ranked inputs of another tool.

        Most producers are not among the first ``max_neighbors`` entries of their signature's row,
        so they take the row's first entries as they are; only the others skip their own inputs
        entry by entry. Edges come out in (output instance, rank) order either way.
        """
        inst_table, score_table = ranked
        rows = row_of_sig[outs.sig[out_inst]]
        has = rows >= 0
        out_inst, rows = out_inst[has], rows[has]
        if len(out_inst) == 0 or len(ins) == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32)
        valid = inst_table >= 0
        owner = np.where(valid, qid[ins.tool[np.maximum(inst_table, 0)]], -1)
        first = valid & (np.cumsum(valid, axis=1) <= self.max_neighbors)
        span = int(qid.max()) + 2
        # Sorted (row, owner) pairs; duplicates are harmless to the lookup below.
        taken = np.sort((np.arange(len(inst_table))[:, None] * span + owner + 1)[first])
        own = qid[outs.tool[out_inst]]
        probe = rows * span + own + 1
        place = np.minimum(np.searchsorted(taken, probe), max(len(taken) - 1, 0))
        clash = taken[place] == probe if len(taken) else np.zeros(len(probe), dtype=bool)
        # Producers absent from their row's first entries: repeat the row's first entries.
        plain = ~clash
        per_row = first.sum(axis=1)
        row_start = np.concatenate(([0], np.cumsum(per_row)))
        flat_inst, flat_score = inst_table[first], score_table[first]
        counts = per_row[rows[plain]]
        offsets = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        gather = np.repeat(row_start[rows[plain]], counts) + offsets
        parts_out = [np.repeat(out_inst[plain], counts)]
        parts_in = [flat_inst[gather]]
        parts_score = [flat_score[gather]]
        if clash.any():
            c_inst, c_rows = out_inst[clash], rows[clash]
            inputs = inst_table[c_rows]
            keep = (inputs >= 0) & (owner[c_rows] != own[clash][:, None])
            keep &= np.cumsum(keep, axis=1) <= self.max_neighbors
            r, c = np.nonzero(keep)
            parts_out.append(c_inst[r])
            parts_in.append(inputs[r, c])
            parts_score.append(score_table[c_rows[r], c])
        out_all = np.concatenate(parts_out)
        order = np.argsort(out_all, kind="stable")  # each part is in order: this merges them
        return out_all[order], np.concatenate(parts_in)[order], np.concatenate(parts_score)[order]


def _rank_inputs(
    cands: _Candidates, ins: _Side, width: IntArray
) -> tuple[tuple[IntArray, FloatArray], IntArray]:
    """Per output signature with candidates, its best ``width[sig]`` input *instances* (padded table).

    ``width[sig]`` is ``max_neighbors`` plus the most inputs a producer of the signature can skip
    as its own, so no producer ever needs a column beyond it.

    Returns:
        ``((instances, scores), row_of_sig)``: row ``row_of_sig[sig]`` of both tables (``-1``
        when the signature has no candidate) lists input instances and scores, padded with -1 / 0.
    """
    n_in = ins.ptr[cands.inp + 1] - ins.ptr[cands.inp]
    pair = np.repeat(np.arange(len(cands.out)), n_in)
    local = np.arange(int(n_in.sum())) - np.repeat(np.cumsum(n_in) - n_in, n_in)
    out_sig = cands.out[pair]
    in_inst = ins.members[ins.ptr[cands.inp[pair]] + local] if len(ins) else local
    score = cands.score[pair]
    order = np.lexsort((_tie_break(out_sig, in_inst), -score, out_sig))
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


def _qualified_ids(registry: ToolRegistry, tools: Sequence[Tool]) -> tuple[IntArray, int]:
    """An id per tool that overloads of one qualified name share, and the number of ids."""
    if registry.distinct_names() == len(tools):  # no overloads: every tool is its own name
        return np.arange(len(tools), dtype=np.int64), len(tools)
    # (namespace, name) pairs stand for qualified names (neither part may contain "::").
    qids: dict[tuple[str, str], int] = {}
    qid = np.array([qids.setdefault((t.namespace, t.name), len(qids)) for t in tools], dtype=np.int64)
    return qid, len(qids)


def _grouped(
    groups: Sequence[tuple[str | None, IntArray]], count: int, side: _Side
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


def _used_names(names: Sequence[str], outs: _Side, ins: _Side) -> tuple[list[str], IntArray]:
    """The parameter names in use, sorted, and a map from name id to position in that list."""
    present = np.zeros(len(names), dtype=bool)
    present[outs.name] = True
    present[ins.name] = True
    ids = np.flatnonzero(present).tolist()
    ids.sort(key=names.__getitem__)
    name_map = np.full(max(len(names), 1), -1, dtype=np.int64)
    name_map[ids] = np.arange(len(ids), dtype=np.int64)
    return [names[i] for i in ids], name_map


def _check_settings(threshold: float, max_neighbors: int, dim: int) -> None:
    if not 0 < threshold <= 1:
        raise ConfigError(
            f"invalid threshold {threshold!r} for the dataflow enrichment: it must be in (0, 1]. Try 0.3."
        )
    if max_neighbors < 1:
        raise ConfigError(
            f"invalid max_neighbors {max_neighbors!r} for the dataflow enrichment: it must be at least 1."
        )
    if not 8 <= dim <= 1024:
        raise ConfigError(f"invalid dim {dim!r} for the dataflow enrichment: use 8 to 1024 (e.g. 256).")


def _to_state(cands: _Candidates, outs: _Side, ins: _Side, width: IntArray) -> dict[str, npt.NDArray[Any]]:
    return {
        "out_keys": outs.keys,
        "in_keys": ins.keys,
        "width": width,
        "cand_out": cands.out,
        "cand_in": cands.inp,
        "cand_score": cands.score,
    }


def _from_state(state: Mapping[str, npt.NDArray[Any]], outs: _Side, ins: _Side) -> _Candidates:
    out_map = _remap(state["out_keys"], outs.keys)
    in_map = _remap(state["in_keys"], ins.keys)
    return _Candidates(out_map[state["cand_out"]], in_map[state["cand_in"]], state["cand_score"])


def _remap(stored: npt.NDArray[Any], current: npt.NDArray[np.bytes_]) -> IntArray:
    """For each stored key, its index among ``current`` keys (distinct), or -1 when it is gone."""
    stored = np.asarray(stored).astype("S32")
    if len(current) == 0 or len(stored) == 0:
        return np.full(len(stored), -1, dtype=np.int64)
    order = np.argsort(current, kind="stable")
    place = np.minimum(np.searchsorted(current, stored, sorter=order), len(current) - 1)
    found = order[place]
    return np.where(current[found] == stored, found, -1).astype(np.int64)


def _pool_key(out_keys: npt.NDArray[np.bytes_], width: IntArray, in_keys: npt.NDArray[np.bytes_]) -> str:
    """A digest of the pool's signatures (order-free) and widths: the key of a candidate state."""
    order = np.argsort(out_keys, kind="stable")
    digest = hashlib.blake2b(digest_size=16)
    for part in (out_keys[order], np.asarray(width, dtype="<i8")[order], np.sort(in_keys)):
        digest.update(np.ascontiguousarray(part).tobytes())
        digest.update(b"|")
    return digest.hexdigest()


def _update(
    state: Mapping[str, npt.NDArray[Any]], scorer: _Scorer, outs: _Side, ins: _Side, width: IntArray
) -> _Candidates:
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
    old = _Candidates(cand_out[kept], cand_in[kept], state["cand_score"][kept])
    fresh = scorer.rows(reuse, np.flatnonzero(~seen_in), width[reuse])
    # Only lists that gained candidates, or must now be cut shorter, go through a merge; the
    # others are already exactly the top of their row.
    wider = np.zeros(len(outs.keys), dtype=bool)
    wider[out_map[present]] = state["width"][present] > width[out_map[present]]
    touched = wider
    touched[fresh.out] = True
    merge = touched[old.out]
    settled = _Candidates(old.out[~merge], old.inp[~merge], old.score[~merge])
    merged = scorer.merge(
        _Candidates.concat([_Candidates(old.out[merge], old.inp[merge], old.score[merge]), fresh]), width
    )
    full = scorer.rows(redo, np.arange(len(ins.keys), dtype=np.int64), width[redo])
    return _Candidates.concat([settled, merged, full])
