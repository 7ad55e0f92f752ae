"""The ``dataflow`` enrichment: which value of one tool's result can feed which input of another.

The artifact (``artifacts["dataflow"]``) is a :class:`DataflowGraph` of parameter-level edges
``A.output -> B.input``, where ``output`` is a *path* into A's result (``user_id``,
``location.name``, ``author[].id``; see :mod:`._dataflow_fields` and
:func:`~fms_dgt.core.tools.artifacts.read_path`). An edge's score is ``type fit x text similarity``:

* **type fit** compares JSON types (equal types 1.0, ``integer`` into ``number`` 0.9, ...) and the
  parameters' roles (:mod:`._dataflow_entities`): two identifiers of one entity fit whatever their
  scalar types, identifiers of different entities score 0, a plain value into an identifier or an
  identifier into a plain value is scaled down, and a label fed to a search input of its own
  namespace scores at least :data:`~._dataflow_scoring.QUERY_FLOOR` (other namespaces' by text).
* **text similarity** is the cosine of the parameters' text vectors: the name as words and the
  description, each normalised, weighted by :data:`NAME_WEIGHT` and 1 (``encoder:`` chooses the
  vectors; ``hashed`` by default).

Each output keeps its ``max_neighbors`` best inputs of *other* tools (another overload of the same
name counts as the same tool): edges its OpenAPI spec's response links declare first
(:mod:`._dataflow_links`), then exact name matches within its namespace
(:mod:`._dataflow_exact`), then up to :data:`~._dataflow_local.LOCAL_SLOTS` places for the best
inputs of its own API (an API is its namespace, or a part of a catalogue namespace), then the rest by
score (:mod:`._dataflow_local`); every one scores at least ``threshold``. Looking the other way,
an input's best output in its API (its *feeder*, :mod:`._dataflow_feeders`) keeps the input in
the last place of its list, so that an input no output ranks first still has a source. Equal scores are
ordered by a fixed hash of the output's signature and the input (its tool and its name, not its
position), so the result is exact, the same in every process, and a namespace's ties stay put
when other tools join the pool.

**Scaling.** No parameter-by-parameter matrix is ever built. Parameters with the same name,
description, type and role are scored once (a *signature*); output signatures are scored against
input signatures in chunks of a bounded number of cells, keeping only the top candidates per row;
the top list is then expanded to the tools that carry each signature. Memory is linear in the
number of parameters. With a cache directory, the candidate lists are stored, and a later run with
more tools only scores what is new (new outputs against everything, old outputs against new
inputs) and merges, which gives the same result as a cold run. The parameters and per-namespace
candidates of namespaces seen before (by content key) come from the memo.

Tools without ``output_parameters`` (or only an action's status) have no outgoing edges; tools
without parameters have no incoming edges. Overloads are distinct nodes.

The artifact type, :class:`~fms_dgt.core.tools.artifacts.DataflowGraph`, is in
:mod:`fms_dgt.core.tools.artifacts`. This module is the plug-in; the parameters are in
:mod:`._dataflow_fields` and :mod:`._dataflow_params`, the scoring and candidate states in
:mod:`._dataflow_scoring`, and the memo in :mod:`._dataflow_memo`; :mod:`.dataflow_view` shows a
graph (``fms-dgt graph``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from os import PathLike
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from fms_dgt.core.tools.artifacts import DataflowGraph, Edge
from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.enrichments._cache import MemoStore, StateStore, VectorStore, pool_groups
from fms_dgt.core.tools.enrichments._dataflow_choices import qualifier_table
from fms_dgt.core.tools.enrichments._dataflow_exact import EXACT_FIT, exact_pairs, leaf_keys
from fms_dgt.core.tools.enrichments._dataflow_feeders import (
    FEED_EVERY,
    FEED_SHARE,
    feeder_pairs,
    score_feeders,
    unmatched,
)
from fms_dgt.core.tools.enrichments._dataflow_fields import MAX_DEPTH, MAX_NESTED
from fms_dgt.core.tools.enrichments._dataflow_links import declared_pairs
from fms_dgt.core.tools.enrichments._dataflow_local import (
    LOCAL_SLOTS,
    Pairs,
    api_groups,
    empty_pairs,
    expand_namespace,
    instances_of,
    place_ids,
    rank_edges,
    score_namespace,
    sections,
    union,
)
from fms_dgt.core.tools.enrichments._dataflow_memo import (
    MEMO_ARRAYS,
    Memo,
    local_candidates,
    read_memo,
    update_memo,
)
from fms_dgt.core.tools.enrichments._dataflow_params import (
    ONE_ITEM,
    Names,
    Side,
    build_side,
    type_compatibility,
    type_key,
)
from fms_dgt.core.tools.enrichments._dataflow_scoring import (
    ID_INTO_PLAIN,
    KIN_FLOOR,
    PLAIN_INTO_ID,
    QUERY_FLOOR,
    Candidates,
    Scorer,
    from_state,
    pool_key,
    rank_inputs,
    to_state,
    update_candidates,
)
from fms_dgt.core.tools.enrichments._ordering import score_order
from fms_dgt.core.tools.enrichments._vectors import TextEncoder, l2_normalise, make_encoder, quantise
from fms_dgt.core.tools.enrichments.base import ToolEnrichment, resolve_cache_dir, stable_hash
from fms_dgt.errors import ConfigError
from fms_dgt.plugins import register_tool_enrichment

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

# DataflowGraph and Edge live in fms_dgt.core.tools.artifacts, the type helpers in
# _dataflow_params; they are still exported here for code that imported them from this module.
__all__ = ["DataflowEnrichment", "DataflowGraph", "Edge", "type_compatibility", "type_key"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float32]

_EXPAND_ROWS = 1 << 22
#: Weight of a parameter's name against its description in its text vector (each normalised
#: first); 1.0 was the best of 0.5 to 2.0 on the tune split of benchmarks/data/dataflow_gold.yaml.
NAME_WEIGHT = 1.0
#: The most dimensions :func:`quantise` keeps exact (1024 x 127^2 < 2^24).
_MAX_DIM = 1024


@register_tool_enrichment("dataflow")
class DataflowEnrichment(ToolEnrichment):
    """Build the parameter-level dataflow graph.

    Args:
        threshold: minimum edge score, in ``(0, 1]``.
        max_neighbors: input parameters kept per output parameter.
        dim: size of the text vectors of parameters (8 to 1024; ``wordllama``: 64, 128 or 256).
        encoder: ``hashed`` (default), ``wordllama`` (extra ``fms_dgt[semantic]``), ``minilm``
            (all-MiniLM-L6-v2 run by numpy, 384 dimensions whatever ``dim`` says: see
            ``docs/sampling.md``), ``sentence-transformers`` or ``openai`` (see the ``embeddings``
            enrichment), several joined by ``+`` (``hashed+wordllama``), or an encoder object; a
            ``model`` alone implies
            ``sentence-transformers``, as the seed's ``model: sentence-transformers/...`` does.
        model: the model of a ``sentence-transformers`` or ``openai`` encoder.
        base_url: the API root of an ``openai`` encoder.
        api_key_env: variable holding the API key of an ``openai`` encoder.
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
        encoder: str | TextEncoder | None = None,
        model: str | None = None,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        cache_dir: str | PathLike[str] | None = None,
        force: bool = False,
    ) -> None:
        _check_settings(threshold, max_neighbors, dim)
        self.threshold = float(threshold)
        self.max_neighbors = int(max_neighbors)
        self.encoder: TextEncoder = (
            encoder
            if isinstance(encoder, TextEncoder)
            else make_encoder(
                encoder, dim=dim, model=model, base_url=base_url, api_key_env=api_key_env, batch_size=64
            )
        )
        self.force = force
        # Version 2: nested outputs named by paths, identifier roles and entities, exact matches.
        # Version 3: items of untyped arrays, abbreviations, bare labels, text inputs, APIs of a
        # catalogue namespace. Version 4: each input's best feeder in its API.
        # Version 5: identifiers of REST path parameters and results read their entity from the
        # path; version words (``v1``) and a second id word ("id, uuid") name no entity.
        # Version 6: a nested identifier or label reads the entity of the nearest object holding
        # it (``children[].comment.id`` is a comment's), not the whole result's title; bare
        # labels carry that entity in their role and match exactly only within one entity;
        # identifiers of the output's own entity in its API are not limited to its reserved places.
        # Version 7: exact matches span the APIs of a catalogue namespace, and exact names spell
        # abbreviations out (``lat`` is ``latitude``).
        # Version 8: "entity" and "metadata" name no entity; a REST path parameter named for its
        # path's entity (``/refunds/{refund}``) is its identifier; exact names ignore the
        # plain/identifier kinds and the plural (``dag_id`` -> ``dag_ids``: a value fits a list of
        # its type); exact matches of the output's OpenAPI tag rank first; a description
        # that starts by declaring an identifier ("The ID of the origin station") makes one; so
        # do a reference field (a string or the object it names: Stripe's ``original_payout``) and
        # a path parameter named for its collection in several words (``/tax_rates/{tax_rate}``);
        # a compound ending in item, entry or record is one entity (``subscription item``), and a
        # dotted schema name reads its last part (``io.k8s.api.core.v1.Service``); two identifiers
        # of one entity score at least ``kin_floor`` whatever their texts; ``uid`` is an identifier
        # word; plurals in -ies and -sses, schema-name suffixes (``MovieFull``) and path segments
        # led by a verb read as their entity; the ids of a list's items (``tax_rates[].id``) match
        # an input named for the list exactly.
        # Version 9: schema names ending in Header, Summary, Meta or Reference name no entity (a
        # reference is about another object); a bare identifier in an object whose schema name
        # differs from the property holding it names both (``mainDirector`` in a ``StaffHeader``).
        # Version 10: descriptions read Markdown links as their text and end a phrase at a dash,
        # comma or parenthesis; qualifiers before a noun are skipped ("the original expired
        # Checkout Session" names a session); "A tax code ID" declares an identifier; entities
        # compare without spaces (``invoice item`` from a description, ``invoiceitem`` from a path);
        # an input named for the entity an output identifies is an exact match (``location``);
        # a handle reads as a name (``channelHandle``); possessives, adverbs ("once managed"),
        # short participles ("tied to") and a word that ends a phrase end it; Constant and Spec
        # are schema suffixes; "foreign" qualifies; a try number counts attempts; a reference
        # field's scalar is a string without an enum (Stripe's ``anyOf: [address, enum: [""]]``
        # clears an address; ``anyOf: [range_query_specs, integer]`` is a time), and ``param``
        # (Stripe's request schemas) names no entity; an id word names no entity (``/tax_ids``);
        # a qualifying noun (source, destination, target, origin) names the entity as a schema's
        # name or as the only noun of a description's phrase (a top-up's ``source.id``).
        # An operation without tags is in the section of its path's first resource (Stripe's
        # ``/v1/customers/{customer}/tax_ids`` in ``customers``): its exact matches rank first.
        # A bare label read with the entity it sits in matches an input so named exactly (a
        # channel's ``name`` and ``channelHandle``, ``channelName``).
        # Version 11: a bare identifier's role keeps the compound name of the object it sits in
        # (``id:|method#payment method``): an input so named takes it exactly. Response links
        # declared by a spec rank first (found at every run, like exact matches). An acronym
        # ending in u takes an s (``/v1/skus/{id}`` is a SKU's).
        # Version 12: labels and search inputs carry their namespace in their role; a label feeds
        # any search input of its own namespace (``query_floor``), others by text only.
        # Version 13: a polymorphic identifier names any of its variants (a reference field that
        # may be one of several objects; the parameter ending the path of an operation whose result
        # is a union of other objects); an input without an identifier role takes the role of
        # the result's property of its name, or its listed items' (a list's filter, a new
        # object's reference); a qualifying noun followed by a clause is the phrase's noun ("the
        # source this transaction is attached to").
        # Version 14: version 13's rules corrected before release: only the parameter that ends
        # a path is what a union result is; a union of an object and its extension (User,
        # UserWithStats) is one object; a result's own properties lend their roles, not only
        # listed items'; a role with variants and no entity of its own reads its name alone.
        # Version 15: an input whose description links to an operation (Redoc's
        # ``#operation/getCategories``) is declared fed by that operation's result; an input
        # named for an entity as a reference to one (``original_source``) takes its id exactly;
        # an input's feeder is one of the first 16 producers of a signature.
        # 16: listed values apart, 17: lone status, 18/19: kinds apart, 20: envelopes' entities.
        self.settings = {
            "version": 20,
            "threshold": self.threshold,
            "max_neighbors": self.max_neighbors,
            "encoder": self.encoder.identity(),
            "fields": {"max_depth": MAX_DEPTH, "max_nested": MAX_NESTED, "name_weight": NAME_WEIGHT},
            "roles": {
                "plain_into_id": PLAIN_INTO_ID,
                "id_into_plain": ID_INTO_PLAIN,
                "query_floor": QUERY_FLOOR,
                "kin_floor": KIN_FLOOR,
                "exact_fit": EXACT_FIT,
                "one_item": ONE_ITEM,
                "local_slots": LOCAL_SLOTS,
                "feed_share": FEED_SHARE,
                "feed_every": FEED_EVERY,
            },
        }
        root = resolve_cache_dir(cache_dir)
        base = root / "dataflow" / stable_hash(self.settings, size=16) if root else None
        self.states = StateStore(base / "states") if base else None
        self.vector_store = VectorStore(base / "vectors") if base else None
        self.memo = MemoStore(base / "memo", MEMO_ARRAYS) if base else None

    def enrich(self, registry: ToolRegistry) -> DataflowGraph:
        """The dataflow graph of every tool in ``registry``."""
        tools = registry.tools()
        groups = pool_groups(registry, tools) if self.memo is not None else _namespace_groups(tools)
        memo = None if self.force else self._read_memo()
        names = Names(list(memo.names) if memo is not None else [])
        tables = (Names(list(memo.types if memo else [])), Names(list(memo.roles if memo else [])))
        outs = build_side(tools, groups, memo, True, names, tables, self.encoder.dim)
        ins = build_side(tools, groups, memo, False, names, tables, self.encoder.dim)
        self._fill_vectors(outs)
        self._fill_vectors(ins)
        labels = (tables[0].names, tables[1].names)
        scorer = Scorer(outs, ins, labels, self.threshold, qualifier_table(outs, ins, names.names))
        qid, qcount = _qualified_ids(registry, tools)
        width = self._widths(qid, qcount, outs, ins)
        cands = self._candidates(scorer, outs, ins, width)
        used, remap = _used_names(names.names, outs, ins)
        apis = [api_groups(tools, rows) for _, rows in groups]
        places = (place_ids(len(tools), apis), qid)
        spaces = place_ids(len(tools), [[rows] for _, rows in groups])
        exact = exact_pairs(outs, ins, leaf_keys(names.names, labels[1]), (spaces, qid), scorer)
        local, feeds, by_group = self._local(scorer, (outs, ins), (groups, apis), memo, qid)
        declared = declared_pairs(tools, (outs, ins), names.names, (spaces, qid))
        feeds = unmatched(feeds, np.concatenate([declared[1], exact[1]]))
        wide = self._expand(cands, qid, outs, ins, width)
        lists = (_scored(declared), _scored(exact), feeds, local, wide)
        ranked = rank_edges(lists, (outs, ins), (places[0], sections(tools)), self.max_neighbors, scorer)
        edges = _edges(ranked, (outs, ins), remap)
        if self.memo is not None:
            update_memo(self.memo, memo, groups, len(tools), outs, ins, names.names, labels, by_group)
        return _graph(tools, edges, used, self.settings)

    # ------------------------------------------------------------------ memo

    def _read_memo(self) -> Memo | None:
        """The newest memo chain when complete and consistent with these settings, else None."""
        return read_memo(self.memo, self.encoder.dim) if self.memo is not None else None

    # ------------------------------------------------------------------ vectors and widths

    def _fill_vectors(self, side: Side) -> None:
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
        if self.encoder.dim > _MAX_DIM:
            raise ConfigError(
                f"invalid encoder for the dataflow enrichment: its vectors have {self.encoder.dim} "
                f"dimensions, more than {_MAX_DIM} (scores are exact only up to {_MAX_DIM}). Use a "
                "smaller dim or model, or fewer encoders joined by '+'."
            )
        names = self.encoder.encode([t[0] for t in texts])
        descriptions = self.encoder.encode([t[1] for t in texts])
        return l2_normalise(NAME_WEIGHT * l2_normalise(names) + l2_normalise(descriptions))

    def _widths(self, qid: IntArray, qcount: int, outs: Side, ins: Side) -> IntArray:
        """Per output signature: ``max_neighbors`` plus the most inputs a producing tool may exclude."""
        own_inputs = np.bincount(qid[ins.tool], minlength=qcount) if len(ins) else np.zeros(qcount, np.int64)
        margin = np.zeros(len(outs.keys), dtype=np.int64)
        if len(outs):
            np.maximum.at(margin, outs.sig, own_inputs[qid[outs.tool]])
        return margin + self.max_neighbors

    # ------------------------------------------------------------------ local candidates

    def _local(
        self,
        scorer: Scorer,
        sides: tuple[Side, Side],
        grouping: tuple[Sequence[tuple[str | None, IntArray]], Sequence[Sequence[IntArray]]],
        memo: Memo | None,
        qid: IntArray,
    ) -> tuple[Pairs, Pairs, list[Candidates]]:
        """Each API's outputs against its own inputs, and its inputs' feeders (from the memo for
        known namespaces).

        ``grouping`` is the namespaces and, per namespace, its APIs. Returns the local instance
        pairs, the feeder pairs and, per namespace, the union of its APIs' signature-level
        candidates (for the memo).
        """
        outs, ins = sides
        own_inputs = np.bincount(ins.tool, minlength=len(qid)) if len(ins) else np.zeros(len(qid), np.int64)
        found: list[Candidates] = []
        parts: list[Pairs] = []
        feeds: list[Pairs] = []
        for (key, rows), apis in zip(*grouping, strict=True):
            every = (instances_of(outs, rows), instances_of(ins, rows))
            each = [_within(sides, every, api) for api in apis] if len(apis) > 1 else [every]
            if memo is not None and key is not None and key in memo.positions:
                cands = local_candidates(memo, key, sides)
            else:
                cands = union(
                    [score_namespace(scorer, sides, i, own_inputs, self.max_neighbors) for i in each]
                    + [score_feeders(scorer, sides, i, qid) for i in each]
                )
            found.append(cands)
            strong = cands.at_least(self.threshold)
            for instances in each:
                parts.append(
                    expand_namespace(strong, sides, instances, (qid, own_inputs), self.max_neighbors)
                )
                feeds.append(feeder_pairs(cands, sides, instances, qid, self.threshold * FEED_SHARE))
        return _joined(parts), _joined(feeds), found

    # ------------------------------------------------------------------ candidates (cached)

    def _candidates(self, scorer: Scorer, outs: Side, ins: Side, width: IntArray) -> Candidates:
        all_outs = np.arange(len(outs.keys), dtype=np.int64)
        all_ins = np.arange(len(ins.keys), dtype=np.int64)
        if self.states is None:
            return scorer.rows(all_outs, all_ins, width)
        key = pool_key(outs.keys, width, ins.keys)
        if not self.force:
            hit = self.states.get(key)
            if hit is not None:
                return from_state(hit, outs, ins)
        previous = None if self.force else self.states.latest()
        if previous is None:
            cands = scorer.rows(all_outs, all_ins, width)
        else:
            cands = update_candidates(previous, scorer, outs, ins, width)
        self.states.put(key, to_state(cands, outs, ins, width))
        return cands

    # ------------------------------------------------------------------ expansion to tools

    def _expand(self, cands: Candidates, qid: IntArray, outs: Side, ins: Side, width: IntArray) -> Pairs:
        """Signature candidates -> each output instance's best inputs of other tools, by score."""
        ranked, row_of_sig = rank_inputs(cands, (outs, ins), width)
        parts = [
            self._pick(ranked, row_of_sig, outs, ins, qid, np.arange(lo, min(lo + step, len(outs))))
            for step in [max(1, _EXPAND_ROWS // max(1, ranked[0].shape[1]))]
            for lo in range(0, len(outs), step)
        ]
        return (
            np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int64),
            np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.int64),
            np.concatenate([p[2] for p in parts]) if parts else np.zeros(0, np.float32),
        )

    def _pick(
        self,
        ranked: tuple[IntArray, FloatArray],
        row_of_sig: IntArray,
        outs: Side,
        ins: Side,
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


def _scored(pairs: tuple[IntArray, IntArray]) -> Pairs:
    """Pairs that score 1.0 (declared edges, exact matches)."""
    return pairs[0], pairs[1], np.ones(len(pairs[0]), np.float32)


def _joined(parts: Sequence[Pairs]) -> Pairs:
    if not parts:
        return empty_pairs()
    return (
        np.concatenate([p[0] for p in parts]),
        np.concatenate([p[1] for p in parts]),
        np.concatenate([p[2] for p in parts]),
    )


def _qualified_ids(registry: ToolRegistry, tools: Sequence[Tool]) -> tuple[IntArray, int]:
    """An id per tool that overloads of one qualified name share, and the number of ids."""
    if registry.distinct_names() == len(tools):  # no overloads: every tool is its own name
        return np.arange(len(tools), dtype=np.int64), len(tools)
    # (namespace, name) pairs stand for qualified names (neither part may contain "::").
    qids: dict[tuple[str, str], int] = {}
    qid = np.array([qids.setdefault((t.namespace, t.name), len(qids)) for t in tools], dtype=np.int64)
    return qid, len(qids)


def _edges(pairs: Pairs, sides: tuple[Side, Side], name_map: IntArray) -> dict[str, npt.NDArray[Any]]:
    """Instance pairs -> the graph's edge arrays (tools and parameter names)."""
    outs, ins = sides
    out_inst, in_inst, score = pairs
    out_names = name_map[outs.name] if len(outs) else np.zeros(1, np.int64)
    in_names = name_map[ins.name] if len(ins) else np.zeros(1, np.int64)
    tool_of_in = ins.tool if len(ins) else np.zeros(1, np.int64)
    return {
        "src": outs.tool[out_inst] if len(outs) else out_inst,
        "dst": tool_of_in[in_inst],
        "output": out_names[out_inst],
        "input": in_names[in_inst],
        "score": score,
    }


def _namespace_groups(tools: Sequence[Tool]) -> list[tuple[str | None, IntArray]]:
    """The tools of each namespace, as ``(None, rows)`` (no content keys: nothing is cached)."""
    rows: dict[str, list[int]] = {}
    for position, tool in enumerate(tools):
        rows.setdefault(tool.namespace, []).append(position)
    return [(None, np.asarray(r, dtype=np.int64)) for r in rows.values()]


def _within(
    sides: tuple[Side, Side], instances: tuple[IntArray, IntArray], rows: IntArray
) -> tuple[IntArray, IntArray]:
    """The output and input instances among ``instances`` whose tool is one of ``rows``."""
    return (
        instances[0][np.isin(sides[0].tool[instances[0]], rows)],
        instances[1][np.isin(sides[1].tool[instances[1]], rows)],
    )


def _used_names(names: Sequence[str], outs: Side, ins: Side) -> tuple[list[str], IntArray]:
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
