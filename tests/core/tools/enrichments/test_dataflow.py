"""Tests for fms_dgt/core/tools/enrichments/dataflow.py and its parts (``_dataflow_*.py``)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.schemas import rest_tool, schema

from fms_dgt.core.tools.artifacts import DataflowGraph, split_path
from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.enrichments import _dataflow_feeders, _dataflow_scoring, dataflow
from fms_dgt.core.tools.enrichments._dataflow_choices import IDENTIFIER, closed_values, kind_of, kinds_apart
from fms_dgt.core.tools.enrichments._dataflow_entities import entity_key, parse_role
from fms_dgt.core.tools.enrichments._dataflow_exact import same_name
from fms_dgt.core.tools.enrichments._dataflow_feeders import FEED_SHARE, feed_places
from fms_dgt.core.tools.enrichments._dataflow_local import LOCAL_SLOTS, api_groups, place_ids
from fms_dgt.core.tools.enrichments._dataflow_params import (
    input_fields,
    output_fields,
    signature,
    signature_mark,
    spot,
    type_compatibility,
    type_key,
)
from fms_dgt.core.tools.enrichments._dataflow_scoring import (
    KIN_FLOOR,
    QUERY_FLOOR,
    Scorer,
    role_compatibility,
    tie_break,
)
from fms_dgt.core.tools.enrichments._vectors import quantise
from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment
from fms_dgt.core.tools.loaders.file import FileToolLoader
from fms_dgt.core.tools.loaders.rest import RESTToolLoader
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.errors import ConfigError


def edges_of(graph: DataflowGraph) -> set[tuple[str, str, str, str]]:
    return {
        (e.source.qualified_name, e.output, e.target.qualified_name, e.input)
        for n in range(len(graph.tools))
        for e in graph.edges_from(n)
    }


def replicate(tools: list[Tool], copies: int) -> list[Tool]:
    return [dataclasses.replace(t, namespace=f"{t.namespace}{c}") for c in range(copies) for t in tools]


def variant(tool: Tool, tag: str) -> Tool:
    """A copy in namespace ``tag`` whose parameter descriptions are new (so new signatures)."""

    def retag(schema: dict[str, Any]) -> dict[str, Any]:
        props = {
            name: {**sub, "description": f"{sub.get('description', name)} ({tag})"}
            for name, sub in schema.get("properties", {}).items()
        }
        return {**schema, "properties": props} if props else schema

    return dataclasses.replace(
        tool,
        namespace=tag,
        parameters=retag(tool.parameters),
        output_parameters=retag(tool.output_parameters),
    )


@pytest.mark.parametrize(
    ("schema", "key"),
    [
        ({"type": "string"}, "string"),
        ({"type": ["integer", "null"]}, "integer?"),
        ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, "integer|string"),
        ({"type": "array", "items": {"type": "number"}}, "array<number>"),
        ({"enum": ["a", "b"]}, "string"),
        ({}, "any"),
        ({"description": "no type"}, "any"),
    ],
)
def test_type_key(schema: dict[str, Any], key: str) -> None:
    assert type_key(schema) == key


def test_type_compatibility_rules() -> None:
    assert type_compatibility("string", "string") == 1.0
    assert type_compatibility("integer", "number") == 0.9
    assert type_compatibility("number", "integer") == 0.5
    assert type_compatibility("string", "integer") == 0.0
    assert type_compatibility("any", "integer") == 0.6
    assert type_compatibility("integer?", "integer") == pytest.approx(0.9)
    assert type_compatibility("integer", "integer?") == 1.0
    assert type_compatibility("integer|string", "integer") == 0.5
    assert type_compatibility("array<string>", "array<string>") == 1.0
    assert type_compatibility("array<string>", "string") == 0.0


def test_expected_handoffs_in_the_travel_tools(travel_registry: ToolRegistry) -> None:
    found = edges_of(DataflowEnrichment().enrich(travel_registry))
    assert ("accounts::find_user", "user_id", "flights::book_flight", "user_id") in found
    assert ("flights::search_flights", "flight_id", "flights::book_flight", "flight_id") in found
    assert ("flights::book_flight", "booking_id", "flights::cancel_booking", "booking_id") in found


def test_tools_without_outputs_have_no_outgoing_edges(travel_registry: ToolRegistry) -> None:
    graph = DataflowEnrichment().enrich(travel_registry)
    forecast = graph.node(travel_registry.get("weather::forecast"))
    assert graph.edges_from(forecast) == []
    no_params = graph.node(travel_registry.get("accounts::list_recent_users"))
    assert graph.edges_to(no_params) == []


def test_overloads_are_distinct_nodes_and_never_feed_each_other(travel_registry: ToolRegistry) -> None:
    graph = DataflowEnrichment(threshold=0.05).enrich(travel_registry)
    by_id, by_code = travel_registry.overloads("flights::get_booking")
    assert graph.node(by_id) != graph.node(by_code)
    into_by_id = {e.input for e in graph.edges_to(graph.node(by_id))}
    into_by_code = {e.input for e in graph.edges_to(graph.node(by_code))}
    assert "booking_id" in into_by_id and "booking_id" not in into_by_code
    for n in range(len(graph.tools)):
        assert all(e.source.qualified_name != e.target.qualified_name for e in graph.edges_from(n))


def test_forward_and_reverse_indexes_hold_the_same_edges(travel_registry: ToolRegistry) -> None:
    graph = DataflowEnrichment(threshold=0.1).enrich(travel_registry)
    forward = [e for n in range(len(graph.tools)) for e in graph.edges_from(n)]
    reverse = [e for n in range(len(graph.tools)) for e in graph.edges_to(n)]
    assert sorted(forward, key=repr) == sorted(reverse, key=repr)
    assert all(0 < e.score <= 1 for e in forward)
    for n in range(len(graph.tools)):
        scores = [e.score for e in graph.edges_from(n)]
        assert scores == sorted(scores, reverse=True)


def test_threshold_and_max_neighbors_bound_the_edges(travel_registry: ToolRegistry) -> None:
    loose = DataflowEnrichment(threshold=0.05, max_neighbors=1).enrich(travel_registry)
    per_output: dict[tuple[int, str], int] = {}
    for n in range(len(loose.tools)):
        for e in loose.edges_from(n):
            per_output[(n, e.output)] = per_output.get((n, e.output), 0) + 1
    assert per_output and max(per_output.values()) == 1
    strict = DataflowEnrichment(threshold=0.99).enrich(travel_registry)
    assert all(e.score >= 0.99 for n in range(len(strict.tools)) for e in strict.edges_from(n))


@pytest.mark.parametrize(
    ("key", "value"), [("threshold", 0), ("threshold", 1.5), ("max_neighbors", 0), ("dim", 4)]
)
def test_invalid_settings(key: str, value: Any) -> None:
    with pytest.raises(ConfigError, match=f"invalid {key}"):
        DataflowEnrichment(**{key: value})


def test_empty_registry_gives_an_empty_graph() -> None:
    graph = DataflowEnrichment().enrich(ToolRegistry([]))
    assert len(graph) == 0 and graph.tools == ()


def _entities(role_text: str) -> set[str]:
    """The entities an identifier names, as compared (without spaces)."""
    parsed = parse_role(role_text)
    return {entity_key(e) for e in (parsed.a, parsed.b) if e} if parsed.identifier else set()


def _variants(role_text: str) -> set[str]:
    """The entities a polymorphic identifier may name, as compared."""
    return {entity_key(v) for v in parse_role(role_text).variants}


def _entities_apart(out_role: str, in_role: str) -> bool:
    mine = _entities(out_role) | _variants(out_role)
    theirs = _entities(in_role) | _variants(in_role)
    return bool(mine and theirs and not _kin(out_role, in_role))


def _values_apart(out_field: Any, in_field: Any) -> bool:
    """Whether both ends list their values (JSON Schema equality: 1 is 1.0, never true) and
    share none."""
    mine, theirs = closed_values(out_field.schema), closed_values(in_field.schema)
    if mine is None or theirs is None:
        return False
    return not {(isinstance(v, bool), v) for v in mine} & {(isinstance(v, bool), v) for v in theirs}


def _qualified_apart(out: Any, into: Any) -> bool:
    if out[1].name == "":
        return False

    def kind(end: Any) -> Any:
        return (IDENTIFIER, frozenset()) if _kind(end[2][3]) == "id" else kind_of(end[1].leaf)

    mine, theirs = kind(out), kind(into)
    return bool(mine and theirs and kinds_apart(mine, theirs))


def reference_edges(tools: list[Tool], threshold: float, max_neighbors: int) -> set[tuple[Any, ...]]:
    """A dense, per-parameter implementation of the same definition (small pools only)."""
    enrichment = DataflowEnrichment(threshold=threshold, max_neighbors=max_neighbors)
    outs = [(t_id, f, signature(t, f, True), t) for t_id, t in enumerate(tools) for f in output_fields(t)]
    ins = [(t_id, f, signature(t, f, False), t) for t_id, t in enumerate(tools) for f in input_fields(t)]

    def vectors(rows: list[Any]) -> Any:
        return quantise(enrichment._encode([(sig[0], sig[1]) for _, _, sig, _ in rows]))

    (ov, oinv), (iv, iinv) = vectors(outs), vectors(ins)
    dots = (ov @ iv.T) * oinv[:, None] * iinv[None, :]
    out_roles, in_roles = [o[2][3] for o in outs], [i[2][3] for i in ins]
    pairs = {(o, i) for o in set(out_roles) for i in set(in_roles)}
    fits = {(o[2][2], o[2][3], i[2][2], i[2][3]) for o in outs for i in ins}
    fit = {k: role_compatibility(k[0], _kind(k[1]), k[2], _kind(k[3])) for k in fits}
    compat = np.array([[fit[(o[2][2], o[2][3], i[2][2], i[2][3])] for i in ins] for o in outs], np.float32)
    scores = (dots * compat).astype(np.float32)
    # A label feeds any search input of its own namespace.
    searchable = np.array(
        [
            [_kind(o) == "label" and _kind(i) == "query" and _space(o) == _space(i) for i in in_roles]
            for o in out_roles
        ],
        dtype=bool,
    ).reshape(len(outs), len(ins))
    scores = np.where(searchable, np.maximum(scores, np.float32(QUERY_FLOOR) * compat), scores)
    apart_pairs = {p for p in pairs if _entities_apart(*p)}
    apart = np.array([[(o, i) in apart_pairs for i in in_roles] for o in out_roles], dtype=bool)
    scores[apart.reshape(scores.shape)] = 0.0
    kin = np.array([[_kin(o, i) for i in in_roles] for o in out_roles], dtype=bool).reshape(scores.shape)
    scores = np.where(kin, np.maximum(scores, np.float32(KIN_FLOOR) * compat), scores)
    # Ends that list their values and share none score 0, and so do values of one kind said to
    # be of different things (identifiers have entities instead).
    closed = np.array(
        [[_values_apart(o[1], i[1]) or _qualified_apart(o, i) for i in ins] for o in outs], dtype=bool
    )
    scores[closed.reshape(scores.shape)] = 0.0
    # An exact match asks the types alone to fit (a plain value and an identifier of one name).
    base = np.array([[type_compatibility(o[2][2], i[2][2]) for i in ins] for o in outs], np.float32)
    base = np.maximum(compat, base.reshape(compat.shape))
    api = _api_ids(tools)
    exact = np.array(
        [
            [
                itool.qualified_name != otool.qualified_name
                and otool.namespace == itool.namespace
                and ofield.name != ""
                and (
                    same_name(ifield.name) in (_leaf(ofield.name), _list_name(ofield.name))
                    or (
                        _kind(in_roles[i]) != "query"
                        and same_name(ifield.name)
                        in (*_entity_names(out_roles[o]), *_placed_names(out_roles[o], ofield.leaf))
                    )
                )
                and base[o, i] >= 0.9
                and not apart[o, i]
                and not closed[o, i]
                and _same_place(out_roles[o], in_roles[i])
                for i, (it, ifield, _, itool) in enumerate(ins)
            ]
            for o, (ot, ofield, _, otool) in enumerate(outs)
        ],
        dtype=bool,
    ).reshape(scores.shape)
    # Inputs with an exact match have their source: no feeder.
    fed_by = _feeders((outs, ins), scores, api, threshold * FEED_SHARE, exact.any(axis=0))
    found = set()
    for o, (ot, ofield, osig, otool) in enumerate(outs):
        cands = []
        for i, (it, _, _, itool) in enumerate(ins):
            if itool.qualified_name == otool.qualified_name:
                continue
            score = 1.0 if exact[o, i] else float(scores[o, i])
            fed = fed_by.get(i) == o and not exact[o, i]
            if exact[o, i] or scores[o, i] >= threshold or fed:
                tier = 0 if exact[o, i] else 1 if api[ot] == api[it] else 2
                tie = int(tie_break(_marks(osig), _spots(itool, ins[i][1]))[0]) >> 1
                tie |= (not (exact[o, i] and _same_section(otool, itool))) << 63
                cands.append([tier, -score, tie, i, score, fed, _kin(osig[3], ins[i][2][3])])
        for i, score in _kept(cands, max_neighbors):
            found.add((ot, ofield.name, ins[i][0], ins[i][1].name, round(score, 5)))
    return found


def _marks(sig: tuple[str, ...]) -> Any:
    return np.array([signature_mark(sig)], dtype=np.uint64)  # type: ignore[arg-type]


def _spots(tool: Tool, field: Any) -> Any:
    return np.array([spot(tool, field.name)], dtype=np.uint64)


def _space(role_text: str) -> str:
    return parse_role(role_text).space


def _feeders(
    sides: tuple[list[Any], list[Any]], scores: Any, api: list[int], least: float, matched: Any
) -> dict[int, int]:
    """Per input not ``matched``, its best output of another tool of its API scoring at least ``least``."""
    outs, ins = sides
    best: dict[int, int] = {}
    for i, (it, _, isig, itool) in enumerate(ins):
        if matched[i]:
            continue
        cands = [
            (-float(scores[o, i]), int(tie_break(_marks(isig), _spots(otool, outs[o][1]))[0]), o)
            for o, (ot, _, _, otool) in enumerate(outs)
            if api[ot] == api[it] and otool.qualified_name != itool.qualified_name and scores[o, i] >= least
        ]
        if cands:
            best[i] = min(cands)[2]
    return best


def _kept(cands: list[list[Any]], max_neighbors: int) -> list[tuple[int, float]]:
    """The inputs an output keeps: by tier and score, the namespace's places beyond LOCAL_SLOTS
    competing by score (except identifiers of the output's entity), and its first fed inputs in
    the last feed_places() places (never in the place of an exact match)."""
    cands.sort()
    for rank, cand in enumerate(cands):
        if cand[0] == 1 and rank >= LOCAL_SLOTS and not cand[6]:  # ids of its entity keep theirs
            cand[0] = 2
    cands.sort(key=lambda c: c[:4])
    front, back, fed, places = [], [], 0, feed_places(max_neighbors)
    for rank, cand in enumerate(cands):
        promoted = cand[5] and fed < places
        fed += cand[5]
        kept = cand[0] == 0 or rank < max_neighbors - places or promoted
        (front if kept else back).append((cand[3], cand[4]))
    return (front + back)[:max_neighbors]


def _api_ids(tools: list[Tool]) -> list[int]:
    """Per tool, the id of its API: its namespace, or a part of a catalogue namespace."""
    rows: dict[str, list[int]] = {}
    for position, tool in enumerate(tools):
        rows.setdefault(tool.namespace, []).append(position)
    apis = [api_groups(tools, np.asarray(r, dtype=np.int64)) for r in rows.values()]
    ids: list[int] = place_ids(len(tools), apis).tolist()
    return ids


def _kind(role: str) -> str:
    return parse_role(role).kind


def _kin(out_role: str, in_role: str) -> bool:
    """Identifiers sharing a known entity, or one's entity among the other's variants, or variants
    in common."""
    mine, theirs = _entities(out_role), _entities(in_role)
    mine_v, theirs_v = _variants(out_role), _variants(in_role)
    return bool(mine & theirs or mine & theirs_v or theirs & mine_v or mine_v & theirs_v)


def _placed_names(out_role: str, leaf: str) -> list[str]:
    """A bare label output's names read with the entity it sits in (``channel`` + ``name``; a
    ``name`` also as a handle: ``channelHandle``)."""
    place = parse_role(out_role).place
    if not place:
        return []
    return [same_name(f"{place}_{leaf}")] + ([same_name(f"{place}_handle")] if leaf == "name" else [])


def _entity_names(out_role: str) -> list[str]:
    """The entities an identifier output names, as input names (an input named for one takes it)."""
    parsed = parse_role(out_role)
    return [same_name(e) for e in (parsed.a, parsed.b) if e] if parsed.identifier else []


def _section(tool: Tool) -> str:
    """A tool's first OpenAPI tag, else the first resource of its REST path, else ""."""
    tags = tool.metadata.get("tags") or []
    if tags:
        return f"tag:{tags[0]}"
    path = (tool.metadata.get("route") or {}).get("path", "")
    resources = [
        s
        for s in path.split("/")
        if s and s[0] != "{" and s.lower() != "api" and not re.fullmatch(r"[vV]\d[\w.]*", s)
    ]
    return f"path:{resources[0]}" if resources else ""


def _same_section(one: Tool, other: Tool) -> bool:
    """Two tools of one namespace in one section of their API (see :func:`_section`)."""
    mine = _section(one)
    return bool(mine) and one.namespace == other.namespace and mine == _section(other)


def _same_place(out_role: str, in_role: str) -> bool:
    """Bare labels (``name``) match exactly only within one entity (when both are known)."""
    mine, theirs = parse_role(out_role).place, parse_role(in_role).place
    return not (mine and theirs and mine != theirs)


def _list_name(path: str) -> str | None:
    """For the ``id`` or ``name`` of a list's items (``tax_rates[].id``), the list's name, normalised."""
    steps = split_path(path)
    if len(steps) < 3 or not isinstance(steps[-1], str) or same_name(steps[-1]) not in ("id", "name"):
        return None
    return same_name(steps[-3]) if steps[-2] == 0 and isinstance(steps[-3], str) else None


def _leaf(path: str) -> str | None:
    steps = [s for s in split_path(path) if isinstance(s, str)]
    return same_name(steps[-1]) if steps else None


def graph_edges(graph: DataflowGraph) -> set[tuple[Any, ...]]:
    return {
        (int(a), graph.names[o], int(b), graph.names[i], round(float(s), 5))
        for a, o, b, i, s in zip(graph.src, graph.output, graph.dst, graph.input, graph.score, strict=True)
    }


def test_matches_a_dense_reference_with_ties(
    travel_tools: list[Tool], monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = replicate(travel_tools, 4)
    monkeypatch.setattr(_dataflow_scoring, "_CHUNK_CELLS", 64)
    monkeypatch.setattr(dataflow, "_EXPAND_ROWS", 16)
    monkeypatch.setattr(_dataflow_feeders, "FEED_EVERY", 3)  # one feeder place in a list of 3
    graph = DataflowEnrichment(threshold=0.2, max_neighbors=3).enrich(ToolRegistry(tools))
    assert graph_edges(graph) == reference_edges(tools, 0.2, 3)


@pytest.mark.corpus
@pytest.mark.parametrize("every", [8, 2])  # no feeder place in a list of 4, and 2 places
def test_matches_a_dense_reference_on_real_tools(
    corpus: Path, every: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_dataflow_feeders, "FEED_EVERY", every)
    tools: list[Tool] = []
    for path in sorted((corpus / "toolsets" / "bfcl" / "multi_turn_func_doc").glob("*.json"))[:6]:
        tools += FileToolLoader(path, namespace=path.stem).load()
    tools = replicate(tools, 2)
    graph = DataflowEnrichment(threshold=0.3, max_neighbors=4).enrich(ToolRegistry(tools))
    assert len(graph) > 50
    assert graph_edges(graph) == reference_edges(tools, 0.3, 4)


@pytest.mark.corpus
def test_matches_a_dense_reference_on_rest_tools_with_tags_and_path_identifiers(corpus: Path) -> None:
    # Airflow's DAGRun and TaskInstance tags share dag_id and dag_run_id (sections decide ties);
    # Stripe's refunds and payouts have path identifiers and reference fields.
    airflow = corpus / "openapi" / "apis-guru" / "apache.org_airflow.json"
    stripe = corpus / "openapi" / "stripe" / "spec3.json"
    tools = RESTToolLoader(airflow, namespace="flow", include={"tags": ["DAGRun", "TaskInstance"]}).load()
    tools += RESTToolLoader(
        stripe, namespace="pay", include={"paths": ["/v1/refunds*", "/v1/payouts*"]}
    ).load()
    graph = DataflowEnrichment(threshold=0.3, max_neighbors=4).enrich(ToolRegistry(tools))
    assert len(graph) > 20
    assert graph_edges(graph) == reference_edges(tools, 0.3, 4)


def arrays(graph: DataflowGraph) -> list[list[Any]]:
    return [a.tolist() for a in (graph.src, graph.dst, graph.output, graph.input, graph.score)]


def test_cached_incremental_runs_equal_cold_runs(
    travel_tools: list[Tool], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    updates: list[int] = []
    original = dataflow.update_candidates
    monkeypatch.setattr(dataflow, "update_candidates", lambda *a: updates.append(1) or original(*a))
    pool = replicate(travel_tools, 3)
    grown = [*pool, *(variant(t, "new") for t in travel_tools)]
    shrunk = [t for t in grown if not t.namespace.startswith("accounts")]
    regrown = [*shrunk, *(variant(t, "newer") for t in travel_tools[:5])]
    for tools in (pool, grown, shrunk, regrown, grown):
        cached = DataflowEnrichment(cache_dir=tmp_path, threshold=0.2).enrich(ToolRegistry(tools))
        cold = DataflowEnrichment(threshold=0.2).enrich(ToolRegistry(tools))
        assert arrays(cached) == arrays(cold)
    assert len(updates) == 3, "grown, shrunk and regrown pools are incremental updates"
    assert list((tmp_path / "dataflow").glob("*/states/*.npz"))


def test_incremental_run_scores_only_what_is_new(
    travel_tools: list[Tool], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = replicate(travel_tools, 3)
    DataflowEnrichment(cache_dir=tmp_path).enrich(ToolRegistry(pool))
    scored: list[tuple[int, int]] = []
    original = Scorer._chunk

    def counting(self: Any, out_sigs: Any, in_sigs: Any, width: Any) -> Any:
        scored.append((len(out_sigs), len(in_sigs)))
        return original(self, out_sigs, in_sigs, width)

    monkeypatch.setattr(Scorer, "_chunk", counting)
    extra = Tool(
        "brand_new", "extra", parameters={"type": "object", "properties": {"user_id": {"type": "string"}}}
    )
    DataflowEnrichment(cache_dir=tmp_path).enrich(ToolRegistry([*pool, extra]))
    assert scored and sum(o * i for o, i in scored) < 40


def test_force_ignores_the_cache(
    travel_tools: list[Tool], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    DataflowEnrichment(cache_dir=tmp_path).enrich(ToolRegistry(travel_tools))
    calls: list[int] = []
    original = Scorer.rows
    monkeypatch.setattr(Scorer, "rows", lambda self, *a: calls.append(1) or original(self, *a))
    DataflowEnrichment(cache_dir=tmp_path).enrich(ToolRegistry(travel_tools))
    assert calls == []
    DataflowEnrichment(cache_dir=tmp_path, force=True).enrich(ToolRegistry(travel_tools))
    assert calls


@pytest.mark.slow
@pytest.mark.corpus
def test_matches_the_dense_reference_and_the_cold_run_on_a_replicated_corpus_pool(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_dataflow_feeders, "FEED_EVERY", 5)  # one feeder place in a list of 5
    tools: list[Tool] = []
    for path in sorted((corpus / "toolsets" / "bfcl" / "multi_turn_func_doc").glob("*.json")):
        tools += FileToolLoader(path, namespace=path.stem).load()
    pool = replicate(tools, 6)
    graph = DataflowEnrichment(threshold=0.25, max_neighbors=5).enrich(ToolRegistry(pool))
    assert graph_edges(graph) == reference_edges(pool, 0.25, 5)
    grown = [*pool, *(variant(t, "extra") for t in tools[::3])]
    DataflowEnrichment(cache_dir=tmp_path, threshold=0.25, max_neighbors=5).enrich(ToolRegistry(pool))
    warm = DataflowEnrichment(cache_dir=tmp_path, threshold=0.25, max_neighbors=5).enrich(ToolRegistry(grown))
    cold = DataflowEnrichment(threshold=0.25, max_neighbors=5).enrich(ToolRegistry(grown))
    assert arrays(warm) == arrays(cold)


def test_an_id_never_feeds_an_id_of_another_entity() -> None:
    tools = [
        Tool(
            "create_event",
            "calendar",
            parameters=schema(title="string"),
            output_parameters=schema(event_id="string"),
        ),
        Tool("getPet", "petstore", parameters=schema(petId="string")),
        Tool("get_event", "agenda", parameters=schema(event_id="string")),
    ]
    found = edges_of(DataflowEnrichment(threshold=0.01).enrich(ToolRegistry(tools)))
    assert ("calendar::create_event", "event_id", "agenda::get_event", "event_id") in found
    assert not any(e[2] == "petstore::getPet" for e in found)


def test_nested_outputs_feed_inputs_by_path() -> None:
    sheet = schema(company=schema(cik={"type": "string", "description": "Central Index Key (CIK)"}))
    tools = [
        Tool("balance_sheet", "sec", parameters=schema(ticker="string"), output_parameters=sheet),
        Tool(
            "statements", "sec", parameters=schema(cik={"type": "string", "description": "Central Index Key"})
        ),
        Tool(
            "books",
            "reads",
            parameters=schema(keyword="string"),
            output_parameters=schema(author={"type": "array", "items": schema(id="string")}),
        ),
        Tool("authors_books", "reads", parameters=schema(authorID="string")),
    ]
    found = edges_of(DataflowEnrichment().enrich(ToolRegistry(tools)))
    assert ("sec::balance_sheet", "company.cik", "sec::statements", "cik") in found
    assert ("reads::books", "author[].id", "reads::authors_books", "authorID") in found


def test_exact_names_in_one_namespace_rank_first_whatever_the_types_of_ids() -> None:
    search = Tool(
        "search",
        "shop",
        parameters=schema(q="string"),
        output_parameters=schema(
            product_id={"type": "number", "description": "The unique identifier of the product."},
            product_photos={"type": "string", "description": "The URLs of the product photos."},
        ),
    )
    reviews = Tool(
        "reviews",
        "shop",
        parameters=schema(product_id={"type": "string", "description": "Product ID of the product."}),
    )
    # Lookalike inputs in other namespaces that would otherwise fill the list.
    others = [Tool(f"t{i}", f"other{i}", parameters=schema(product_id="number")) for i in range(12)]
    graph = DataflowEnrichment(max_neighbors=3).enrich(ToolRegistry([search, reviews, *others]))
    first = graph.edges_from(graph.node(search))
    by_output = [e for e in first if e.output == "product_id"]
    assert (by_output[0].target.qualified_name, by_output[0].input, by_output[0].score) == (
        "shop::reviews",
        "product_id",
        1.0,
    )
    photos = [e for e in first if e.output == "product_photos"]
    assert all(e.score < 0.5 for e in photos)


def test_the_outputs_own_namespace_keeps_places_in_a_crowded_pool() -> None:
    user = Tool(
        "get_user_id", "chat", parameters=schema(user="string"), output_parameters=schema(user_id="string")
    )
    send = Tool(
        "send_message",
        "chat",
        parameters=schema(receiver_id={"type": "string", "description": "User ID of the user to send to."}),
    )
    crowd = [Tool(f"t{i}", f"api{i}", parameters=schema(user_id="string")) for i in range(20)]
    graph = DataflowEnrichment(max_neighbors=8).enrich(ToolRegistry([user, send, *crowd]))
    targets = [e.target.qualified_name for e in graph.edges_from(graph.node(user))]
    assert "chat::send_message" in targets and len(targets) == 8


def test_labels_feed_search_inputs_of_their_namespace() -> None:
    news = Tool(
        "top_posts", "reddit", parameters=schema(sub="string"), output_parameters=schema(title="string")
    )
    search = Tool("search_posts", "reddit", parameters=schema(query="string"))
    found = DataflowEnrichment().enrich(ToolRegistry([news, search]))
    assert [(e.output, e.input, e.score) for e in found.edges_from(0)] == [("title", "query", QUERY_FLOOR)]


def test_across_namespaces_a_label_feeds_a_search_input_by_its_text_alone() -> None:
    # A pet photo's caption is no document search's keyword: the floor stays in one namespace.
    photo = Tool(
        "upload_photo",
        "petstore",
        parameters=schema(pet_id="string"),
        output_parameters=schema(caption={"type": "string", "description": "The photo's caption."}),
    )
    documents = Tool(
        "search_documents",
        "office",
        parameters=schema(keyword={"type": "string", "description": "The keyword to search documents for."}),
    )
    topics = Tool(
        "trending",
        "news",
        output_parameters=schema(topic={"type": "string", "description": "A topic to search news for."}),
    )
    news = Tool(
        "search_news",
        "wire",
        parameters=schema(query={"type": "string", "description": "The news topic to search for."}),
    )
    graph = DataflowEnrichment().enrich(ToolRegistry([photo, documents, topics, news]))
    assert graph.edges_from(graph.node(photo)) == []
    [edge] = graph.edges_from(graph.node(topics))
    assert (edge.target.qualified_name, edge.input) == ("wire::search_news", "query")
    assert edge.score != QUERY_FLOOR  # its texts carry it, not the floor


def test_encoders_of_more_than_1024_dimensions_are_refused(travel_registry: ToolRegistry) -> None:
    enrichment = DataflowEnrichment(encoder="hashed+hashed", dim=1024)
    with pytest.raises(ConfigError, match="2048 dimensions, more than 1024"):
        enrichment.enrich(travel_registry)
    assert len(DataflowEnrichment(encoder="hashed+hashed", dim=512).enrich(travel_registry)) > 0


def _named(names: list[str]) -> list[Tool]:
    return [Tool(name=n, namespace="ns", description=n, parameters={"type": "object"}) for n in names]


def test_a_catalogue_namespace_splits_into_its_apis() -> None:
    names = ["Tripadvisor_Search", "Tripadvisor_Get", "Spotify_Search", "Spotify_Get"]
    tools = _named([*names, "Goodreads_Get", "Goodreads_Search", "get_time"])
    parts = api_groups(tools, np.arange(len(tools), dtype=np.int64))
    assert sorted(p.tolist() for p in parts) == [[0, 1], [2, 3], [4, 5], [6]]


def test_a_few_shared_first_words_keep_one_api() -> None:
    tools = _named(["trading_login", "trading_logout", "get_stock", "place_order", "cancel_order"])
    parts = api_groups(tools, np.arange(len(tools), dtype=np.int64))
    assert [p.tolist() for p in parts] == [[0, 1, 2, 3, 4]]


def test_bare_labels_read_with_the_entity_where_they_sit() -> None:
    output = {"type": "object", "properties": {"location": {"type": "object", "properties": {"name": {}}}}}
    weather = Tool(name="Realtime_Weather", namespace="ns", description="", output_parameters=output)
    found = next(f for f in output_fields(weather) if f.name == "location.name")
    assert signature(weather, found, True)[0] == "location name"
    params = {"type": "object", "properties": {"name": {"type": "string", "description": "Country Name"}}}
    country = Tool(
        name="Get_Country_Details_By_Country_Name", namespace="ns", description="", parameters=params
    )
    assert signature(country, input_fields(country)[0], False)[0] == "country name"


def test_rest_path_parameters_and_results_take_the_entity_of_their_path() -> None:
    threads = rest_tool(
        "get_api_v1_videos_by_id_comment_threads",
        "/api/v1/videos/{id}/comment-threads",
        {"id": {"type": "integer", "description": "The object id, uuid or short uuid"}},
        schema(data={"type": "array", "items": schema(id="integer", videoId="integer")}),
    )
    [video_id] = input_fields(threads)
    assert signature(threads, video_id, False)[3] == "id:|video"
    thread_id = next(f for f in output_fields(threads) if f.name == "data[].id")
    assert signature(threads, thread_id, True)[3] == "id:|thread"
    # the same tool without its route: its name still gives the video (not "v" of "v1")
    plain = dataclasses.replace(threads, metadata={})
    assert signature(plain, thread_id, True)[3] == "id:|video"
    # so the video's id feeds the path parameter and the thread's id does not
    thread = rest_tool(
        "get_thread", "/videos/{id}/threads/{threadId}", {"id": "integer", "threadId": "integer"}
    )
    found = edges_of(DataflowEnrichment(threshold=0.01).enrich(ToolRegistry([threads, thread])))
    assert (
        "tube::get_api_v1_videos_by_id_comment_threads",
        "data[].videoId",
        "tube::get_thread",
        "id",
    ) in found
    assert (
        "tube::get_api_v1_videos_by_id_comment_threads",
        "data[].id",
        "tube::get_thread",
        "threadId",
    ) in found
    assert (
        "tube::get_api_v1_videos_by_id_comment_threads",
        "data[].id",
        "tube::get_thread",
        "id",
    ) not in found


def _customer_owner() -> Tool:
    return Tool(
        "get_customer",
        "shop",
        parameters=schema(email="string"),
        output_parameters=schema(customer_id="string"),
    )


def _fed_by(owner: Tool, tools: list[Tool]) -> list[Any]:
    """The edges of the default graph over ``tools`` from ``owner``'s ``customer_id``."""
    graph = DataflowEnrichment().enrich(ToolRegistry(tools))
    return [e for e in graph.edges_from(graph.node(owner)) if e.output == "customer_id"]


def test_ties_keep_their_order_when_other_namespaces_join_the_pool() -> None:
    # 12 inputs take a customer's id exactly, and 8 places hold them: which 8 is a fixed but
    # arbitrary order. It comes from what the tools are, not where they sit in the registry, so
    # a source added before this one (a refresh) does not change the shop's edges.
    owner = _customer_owner()
    users = [Tool(f"op_{i}", "shop", parameters=schema(customer_id="string")) for i in range(12)]
    others = [
        Tool(
            f"lookup_{i}",
            "crm",
            parameters=schema(**{f"field_{i}": "integer"}),
            output_parameters=schema(**{f"value_{i}": "boolean"}),
        )
        for i in range(30)
    ]

    def targets(tools: list[Tool]) -> set[str]:
        return {e.target.qualified_name for e in _fed_by(owner, tools)}

    alone = targets([owner, *users])
    assert len(alone) == 8
    assert targets([*others, owner, *users]) == alone
    assert targets([*others, *reversed(users), owner]) == alone


def test_ties_among_overloads_do_not_follow_their_order_in_the_registry() -> None:
    owner = _customer_owner()
    overloads = [
        Tool("op", "shop", parameters=schema(customer_id="string", **{f"extra_{i}": "integer"}))
        for i in range(12)
    ]

    def kept(tools: list[Tool]) -> list[str]:
        return sorted(sorted(e.target.parameters["properties"])[1] for e in _fed_by(owner, tools))

    first = kept([owner, *overloads])
    assert len(first) == 8
    assert kept([owner, *reversed(overloads)]) == first
    assert kept([*reversed(overloads), owner]) == first
