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
merges, which gives the same result as a cold run.

Tools without ``output_parameters`` have no outgoing edges; tools without parameters have no
incoming edges. Overloads are distinct nodes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.enrichments._cache import StateStore, VectorStore
from fms_dgt.core.tools.enrichments.base import ToolEnrichment, resolve_cache_dir, stable_hash
from fms_dgt.core.tools.enrichments.embeddings import HashedEncoder, l2_normalise, quantise, row_index
from fms_dgt.core.tools.schema import json_type
from fms_dgt.errors import ConfigError
from fms_dgt.plugins import register_tool_enrichment

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = ["DataflowEnrichment", "DataflowGraph", "Edge", "type_compatibility", "type_key"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float32]

#: Name of the output "parameter" that stands for the whole result when it is not an object.
WHOLE_RESULT = ""

_CHUNK_CELLS = 1 << 22
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


class _Side:
    """The parameters of one side (inputs or outputs) of every tool, grouped into signatures.

    A signature is (name text, description, type key); parameters that share one are scored once.
    """

    def __init__(self, tools: Sequence[Tool], outputs: bool) -> None:
        sig_index: dict[tuple[str, str, str], int] = {}
        tool_ids: list[int] = []
        names: list[str] = []
        sigs: list[int] = []
        for t_id, tool in enumerate(tools):
            for name, schema in _output_fields(tool) if outputs else _input_fields(tool):
                text = name or tool.name
                signature = (text, str(schema.get("description", "")), type_key(schema))
                sigs.append(sig_index.setdefault(signature, len(sig_index)))
                tool_ids.append(t_id)
                names.append(name)
        self.signatures = list(sig_index)
        self.tool = np.asarray(tool_ids, dtype=np.int64)
        self.names = names
        self.sig = np.asarray(sigs, dtype=np.int64)
        self.keys = [_signature_key(s) for s in self.signatures]
        order = np.argsort(self.sig, kind="stable")
        self.members = order
        counts = np.bincount(self.sig, minlength=len(self.signatures))
        self.ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)

    def __len__(self) -> int:
        return len(self.sig)


# --------------------------------------------------------------------------- artifact


@dataclass(frozen=True, slots=True)
class Edge:
    """One dataflow edge: ``source``'s output ``output`` can feed ``target``'s input ``input``.

    Attributes:
        source: the producing tool.
        output: its output parameter (``""`` for the whole result).
        target: the consuming tool.
        input: its input parameter.
        score: type compatibility x name/description similarity, in ``(0, 1]``.
    """

    source: Tool
    output: str
    target: Tool
    input: str
    score: float


class DataflowGraph:
    """Parameter-level dataflow edges with forward (``out``) and reverse (``in``) indexes.

    Edge arrays are sorted by source node, best score first; :attr:`in_order` lists the same edges
    sorted by target node. Nodes are indexes into :attr:`tools` (registry order).

    Attributes:
        tools: the nodes.
        src, dst: source and target node of each edge.
        output, input: parameter names of each edge, as indexes into :attr:`names`.
        score: each edge's score.
        out_ptr: edges of node ``n`` are ``out_ptr[n]:out_ptr[n + 1]``.
        in_order, in_ptr: edge ids sorted by target and their per-node ranges.
    """

    __slots__ = (
        "__weakref__",
        "_rows",
        "dst",
        "in_order",
        "in_ptr",
        "input",
        "names",
        "out_ptr",
        "output",
        "score",
        "settings",
        "src",
        "tools",
    )

    def __init__(
        self,
        tools: Sequence[Tool],
        edges: Mapping[str, npt.NDArray[Any]],
        names: Sequence[str],
        settings: Mapping[str, Any],
    ) -> None:
        self.tools = tuple(tools)
        order = np.lexsort((edges["dst"], -edges["score"], edges["src"]))
        self.src = _frozen(edges["src"][order])
        self.dst = _frozen(edges["dst"][order])
        self.output = _frozen(edges["output"][order])
        self.input = _frozen(edges["input"][order])
        self.score = _frozen(edges["score"][order].astype(np.float32))
        self.names = tuple(names)
        self.settings = dict(settings)
        count = len(self.tools)
        self.out_ptr = _frozen(_ptr(self.src, count))
        self.in_order = _frozen(np.lexsort((self.src, -self.score, self.dst)))
        self.in_ptr = _frozen(_ptr(self.dst[self.in_order], count))
        self._rows: dict[tuple[str, str], int] | None = None

    def __len__(self) -> int:
        """The number of edges."""
        return len(self.src)

    def node(self, tool: Tool) -> int:
        """The node index of ``tool`` (overloads are different nodes).

        Raises:
            KeyError: the tool was not in the registry when the graph was built.
        """
        return row_index(self, tool)

    def edge(self, edge_id: int) -> Edge:
        """Edge ``edge_id`` as an :class:`Edge`."""
        return Edge(
            source=self.tools[int(self.src[edge_id])],
            output=self.names[int(self.output[edge_id])],
            target=self.tools[int(self.dst[edge_id])],
            input=self.names[int(self.input[edge_id])],
            score=float(self.score[edge_id]),
        )

    def edges_from(self, node: int) -> list[Edge]:
        """Outgoing edges of ``node``, best first."""
        return [self.edge(e) for e in range(int(self.out_ptr[node]), int(self.out_ptr[node + 1]))]

    def edges_to(self, node: int) -> list[Edge]:
        """Incoming edges of ``node``, best first."""
        lo, hi = int(self.in_ptr[node]), int(self.in_ptr[node + 1])
        return [self.edge(int(e)) for e in self.in_order[lo:hi]]

    def successors(self, node: int) -> list[int]:
        """Distinct target nodes of ``node``'s edges, best first."""
        return list(dict.fromkeys(self.dst[self.out_ptr[node] : self.out_ptr[node + 1]].tolist()))

    def predecessors(self, node: int) -> list[int]:
        """Distinct source nodes of edges into ``node``, best first."""
        ids = self.in_order[self.in_ptr[node] : self.in_ptr[node + 1]]
        return list(dict.fromkeys(self.src[ids].tolist()))


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

    def __init__(
        self,
        outs: _Side,
        ins: _Side,
        vectors: tuple[FloatArray, FloatArray],
        threshold: float,
    ) -> None:
        self.out_vec, self.out_inv = quantise(vectors[0])
        self.in_vec, self.in_inv = quantise(vectors[1])
        keys = sorted({s[2] for s in outs.signatures} | {s[2] for s in ins.signatures})
        index = {k: i for i, k in enumerate(keys)}
        self.table = np.array(
            [[type_compatibility(o, i) for i in keys] for o in keys], dtype=np.float32
        ).reshape(len(keys), len(keys))
        self.out_type = np.array([index[s[2]] for s in outs.signatures], dtype=np.int64)
        self.in_type = np.array([index[s[2]] for s in ins.signatures], dtype=np.int64)
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
        dots = self.out_vec[out_sigs] @ self.in_vec[in_sigs].T
        dots *= self.out_inv[out_sigs][:, None]
        dots *= self.in_inv[in_sigs][None, :]
        dots *= self.table[self.out_type[out_sigs]][:, self.in_type[in_sigs]]
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

    def enrich(self, registry: ToolRegistry) -> DataflowGraph:
        """The dataflow graph of every tool in ``registry``."""
        tools = registry.tools()
        outs, ins = _Side(tools, outputs=True), _Side(tools, outputs=False)
        scorer = _Scorer(outs, ins, (self._vectors(outs), self._vectors(ins)), self.threshold)
        width = self._widths(tools, outs, ins)
        cands = self._candidates(scorer, outs, ins, width)
        names = sorted(set(outs.names) | set(ins.names))
        edges = self._expand(cands, tools, outs, ins, names)
        return DataflowGraph(tools, edges, names, self.settings)

    # ------------------------------------------------------------------ vectors and widths

    def _vectors(self, side: _Side) -> FloatArray:
        if not side.signatures:
            return np.zeros((0, self.encoder.dim), dtype=np.float32)
        rows, missing = (None, list(range(len(side.keys))))
        if self.vector_store is not None and not self.force:
            rows, missing = self.vector_store.load(side.keys)
        if rows is None:
            rows = np.zeros((len(side.keys), self.encoder.dim), dtype=np.float32)
        if missing:
            fresh = self._encode([side.signatures[i] for i in missing])
            rows[missing] = fresh
            if self.vector_store is not None:
                self.vector_store.store([side.keys[i] for i in missing], fresh)
        return rows

    def _encode(self, signatures: Sequence[tuple[str, str, str]]) -> FloatArray:
        names = self.encoder.encode([s[0] for s in signatures])
        descriptions = self.encoder.encode([s[1] for s in signatures])
        return l2_normalise(2.0 * l2_normalise(names) + l2_normalise(descriptions))

    def _widths(self, tools: Sequence[Tool], outs: _Side, ins: _Side) -> IntArray:
        """Per output signature: ``max_neighbors`` plus the most inputs a producing tool may exclude."""
        qids: dict[str, int] = {}
        qid = np.array([qids.setdefault(t.qualified_name, len(qids)) for t in tools], dtype=np.int64)
        own_inputs = (
            np.bincount(qid[ins.tool], minlength=len(qids)) if len(ins) else np.zeros(len(qids), np.int64)
        )
        margin = np.zeros(len(outs.signatures), dtype=np.int64)
        if len(outs):
            np.maximum.at(margin, outs.sig, own_inputs[qid[outs.tool]])
        return margin + self.max_neighbors

    # ------------------------------------------------------------------ candidates (cached)

    def _candidates(self, scorer: _Scorer, outs: _Side, ins: _Side, width: IntArray) -> _Candidates:
        all_outs = np.arange(len(outs.signatures), dtype=np.int64)
        all_ins = np.arange(len(ins.signatures), dtype=np.int64)
        if self.states is None:
            return scorer.rows(all_outs, all_ins, width)
        key = stable_hash([sorted(zip(outs.keys, width.tolist(), strict=True)), sorted(ins.keys)])
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
        tools: Sequence[Tool],
        outs: _Side,
        ins: _Side,
        names: Sequence[str],
    ) -> dict[str, npt.NDArray[Any]]:
        """Signature candidates -> edges between tools: each output keeps its best inputs of other tools."""
        qids: dict[str, int] = {}
        qid = np.array([qids.setdefault(t.qualified_name, len(qids)) for t in tools], dtype=np.int64)
        ranked, row_of_sig = _rank_inputs(cands, ins, len(outs.signatures))
        parts = [
            self._pick(ranked, row_of_sig, outs, ins, qid, np.arange(lo, min(lo + step, len(outs))))
            for step in [max(1, _EXPAND_ROWS // max(1, ranked[0].shape[1]))]
            for lo in range(0, len(outs), step)
        ]
        name_id = {n: i for i, n in enumerate(names)}
        out_names = np.array([name_id[n] for n in outs.names] or [0], dtype=np.int64)
        in_names = np.array([name_id[n] for n in ins.names] or [0], dtype=np.int64)
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
        """For each output instance, the first ``max_neighbors`` ranked inputs of another tool."""
        inst_table, score_table = ranked
        rows = row_of_sig[outs.sig[out_inst]]
        has = rows >= 0
        out_inst, rows = out_inst[has], rows[has]
        inputs = inst_table[rows]
        valid = inputs >= 0
        own = qid[outs.tool[out_inst]][:, None]
        other = np.where(valid, qid[ins.tool[np.maximum(inputs, 0)]] if len(ins) else -1, -1)
        keep = valid & (other != own)
        keep &= np.cumsum(keep, axis=1) <= self.max_neighbors
        r, c = np.nonzero(keep)
        return out_inst[r], inputs[r, c], score_table[rows[r], c]


def _rank_inputs(cands: _Candidates, ins: _Side, n_sigs: int) -> tuple[tuple[IntArray, FloatArray], IntArray]:
    """Per output signature with candidates, its input *instances* best first (padded table).

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
    width = int(counts.max()) if len(counts) else 1
    column = np.arange(len(out_sig)) - np.repeat(start, counts)
    row = np.repeat(np.arange(len(sigs)), counts)
    inst_table = np.full((max(len(sigs), 1), width), -1, dtype=np.int64)
    score_table = np.zeros((max(len(sigs), 1), width), dtype=np.float32)
    inst_table[row, column] = in_inst
    score_table[row, column] = score
    row_of_sig = np.full(max(n_sigs, 1), -1, dtype=np.int64)
    row_of_sig[sigs] = np.arange(len(sigs))
    return (inst_table, score_table), row_of_sig


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
        "out_keys": np.asarray(outs.keys, dtype="U32"),
        "in_keys": np.asarray(ins.keys, dtype="U32"),
        "width": width,
        "cand_out": cands.out,
        "cand_in": cands.inp,
        "cand_score": cands.score,
    }


def _from_state(state: Mapping[str, npt.NDArray[Any]], outs: _Side, ins: _Side) -> _Candidates:
    out_map = _remap(state["out_keys"], outs.keys)
    in_map = _remap(state["in_keys"], ins.keys)
    return _Candidates(out_map[state["cand_out"]], in_map[state["cand_in"]], state["cand_score"])


def _remap(stored: npt.NDArray[Any], current: Sequence[str]) -> IntArray:
    """For each stored key, its index among ``current`` keys, or -1 when it is gone."""
    index = {k: i for i, k in enumerate(current)}
    return np.array([index.get(k, -1) for k in stored.tolist()], dtype=np.int64)


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
    valid = np.zeros(len(outs.signatures), dtype=bool)
    present = out_map >= 0
    valid[out_map[present]] = state["width"][present] >= width[out_map[present]]
    valid[cand_out[(cand_in < 0) & (cand_out >= 0)]] = False
    seen_in = np.zeros(len(ins.signatures), dtype=bool)
    seen_in[in_map[in_map >= 0]] = True
    reuse, redo = np.flatnonzero(valid), np.flatnonzero(~valid)
    kept = (cand_out >= 0) & np.isin(cand_out, reuse)
    old = _Candidates(cand_out[kept], cand_in[kept], state["cand_score"][kept])
    fresh = scorer.rows(reuse, np.flatnonzero(~seen_in), width[reuse])
    merged = scorer.merge(_Candidates.concat([old, fresh]), width)
    full = scorer.rows(redo, np.arange(len(ins.signatures), dtype=np.int64), width[redo])
    return _Candidates.concat([merged, full])
