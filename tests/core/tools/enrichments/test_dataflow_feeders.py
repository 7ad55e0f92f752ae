"""Tests of fms_dgt.core.tools.enrichments._dataflow_feeders: each input's best source in its API."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.enrichments import _dataflow_feeders
from fms_dgt.core.tools.enrichments._dataflow_feeders import FEED_SHARE, feed_places, unmatched
from fms_dgt.core.tools.enrichments._dataflow_scoring import tie_break
from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment
from fms_dgt.core.tools.registry import ToolRegistry


def tool(name: str, inputs: dict[str, str], outputs: dict[str, str], namespace: str = "car") -> Tool:
    def schema(fields: dict[str, str]) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {k: {"type": "string", "description": d} for k, d in fields.items()},
        }

    return Tool(
        name=name,
        namespace=namespace,
        description=name,
        parameters=schema(inputs),
        output_parameters=schema(outputs),
    )


@pytest.fixture(autouse=True)
def short_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    """One feeder place in every list of 2 or 3 (the default is one in 8), to keep the tools few."""
    monkeypatch.setattr(_dataflow_feeders, "FEED_EVERY", 2)


@pytest.fixture
def shop_tools() -> list[Tool]:
    """``find_nearest_shop.shop_location`` ranks ``location`` and ``shop_name`` above
    ``destination``, but those two have better sources (``get_shop``) and ``destination`` none."""
    return [
        tool("find_nearest_shop", {}, {"shop_location": "The location of the nearest shop."}),
        tool("set_navigation", {"destination": "The destination location to navigate to."}, {}),
        tool("shop_info", {"shop_name": "Name of the shop."}, {}),
        tool("shop_hours", {"shop_id": "The shop."}, {}),
        tool("get_shop", {}, {"shop_name": "Name of the shop.", "location": "City of the shop."}),
        tool("locate", {"location": "A location to look up."}, {}),
    ]


def edges_from(tools: list[Tool], output: str, **options: Any) -> list[tuple[str, str]]:
    graph = DataflowEnrichment(**options).enrich(ToolRegistry(tools))
    return [
        (graph.tools[int(b)].name, graph.names[i])
        for o, b, i in zip(graph.output, graph.dst, graph.input, strict=True)
        if graph.names[o] == output
    ]


def test_an_input_nobody_ranks_first_is_kept_by_its_best_source(shop_tools: list[Tool]) -> None:
    kept = edges_from(shop_tools, "shop_location", max_neighbors=2)
    assert kept == [("locate", "location"), ("set_navigation", "destination")]
    # It takes the last place: the output's best input stays first, the one it displaced is third.
    assert edges_from(shop_tools, "shop_location", max_neighbors=3)[:2] == [
        ("locate", "location"),
        ("shop_info", "shop_name"),
    ]


def test_without_feeder_places_the_list_is_by_score(
    shop_tools: list[Tool], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_dataflow_feeders, "FEED_EVERY", 8)  # the default: no place in a list of 2
    assert edges_from(shop_tools, "shop_location", max_neighbors=2) == [
        ("locate", "location"),
        ("shop_info", "shop_name"),
    ]


def test_a_feeder_never_displaces_an_exact_match(shop_tools: list[Tool]) -> None:
    # get_shop.shop_name keeps its exact match even in a list of one place.
    assert edges_from(shop_tools, "shop_name", max_neighbors=1) == [("shop_info", "shop_name")]


def test_feeders_stay_within_the_api(shop_tools: list[Tool]) -> None:
    elsewhere = [
        tool("set_navigation", {"destination": "The destination location to navigate to."}, {}, "maps")
    ]
    kept = edges_from([*shop_tools[:1], *elsewhere, *shop_tools[2:]], "shop_location", max_neighbors=2)
    assert ("set_navigation", "destination") not in kept


def test_a_feeder_scores_at_least_its_share_of_the_threshold(shop_tools: list[Tool]) -> None:
    # destination scores about 0.34 from shop_location: above 2/3 of 0.45, not of 0.6.
    assert 0.45 * FEED_SHARE < 0.34 < 0.6 * FEED_SHARE
    assert ("set_navigation", "destination") in edges_from(
        shop_tools, "shop_location", max_neighbors=2, threshold=0.45
    )
    assert ("set_navigation", "destination") not in edges_from(
        shop_tools, "shop_location", max_neighbors=2, threshold=0.6
    )


def test_one_place_in_eight(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_dataflow_feeders, "FEED_EVERY", 8)
    assert [feed_places(n) for n in (1, 4, 7, 8, 15, 16)] == [0, 0, 0, 1, 1, 2]


def test_inputs_with_an_exact_match_have_no_feeder() -> None:
    feeds = (np.array([0, 1, 2]), np.array([5, 6, 7]), np.array([0.5, 0.4, 0.3], dtype=np.float32))
    kept = unmatched(feeds, np.array([6]))
    assert kept[1].tolist() == [5, 7]
    assert kept[0].tolist() == [0, 2]


def test_cached_runs_find_the_same_feeders(shop_tools: list[Tool], tmp_path: Any) -> None:
    cold = edges_from(shop_tools, "shop_location", max_neighbors=2, cache_dir=tmp_path)
    warm = edges_from(shop_tools, "shop_location", max_neighbors=2, cache_dir=tmp_path)
    assert warm == cold == [("locate", "location"), ("set_navigation", "destination")]
    assert any((tmp_path / "dataflow").rglob("*.pack"))


def _reference(cands: Any, sides: Any, instances: Any, qid: Any, least: float) -> set[tuple[int, int]]:
    """Each input instance's feeder as the first version found it: every producer of every
    candidate signature of the API, best by score then tie-break, of another tool."""
    outs, ins = sides
    out_inst, in_inst = instances
    api_sigs = set(outs.sig[out_inst].tolist())
    found = set()
    for target in in_inst.tolist():
        rows = []
        for o, i, s in zip(cands.out.tolist(), cands.inp.tolist(), cands.score.tolist(), strict=True):
            if i != ins.sig[target] or s < least or o not in api_sigs:
                continue
            for source in out_inst[outs.sig[out_inst] == o].tolist():
                if qid[outs.tool[source]] != qid[ins.tool[target]]:
                    mark, spot = ins.marks[ins.sig[[target]]], outs.spots[[source]]
                    rows.append((-s, int(tie_break(mark, spot)[0]), source))
        if rows:
            found.add((min(rows)[2], target))
    return found


def _shared(count: int) -> list[Tool]:
    """``count`` tools sharing their output and input names (every signature has ``count`` producers)."""
    fields = {"ticket_code": "The code of the ticket.", "seat": "A seat."}
    return [
        tool(f"desk{n}", {"ticket_code": "The code of a ticket.", "row": "A row."}, fields)
        for n in range(count)
    ]


@pytest.mark.parametrize("count", [3, 12, 40])
def test_feeders_are_each_inputs_best_producer_of_another_tool(
    count: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    (args, found), *_ = _feeders_found(_shared(count), monkeypatch)
    outs, ins = args[1]
    pairs = set(zip(found[0].tolist(), found[1].tolist(), strict=True))
    assert pairs and all(args[3][outs.tool[o]] != args[3][ins.tool[i]] for o, i in pairs)
    if count <= _dataflow_feeders.MOST_PRODUCERS:
        assert pairs == _reference(*args)  # exact: every producer was tried
    else:  # at most MOST_PRODUCERS producers of a signature are tried: the first by their spots
        tried = {o for sig in set(outs.sig.tolist()) for o in _first_producers(outs, sig)}
        assert {o for o, _ in pairs} <= tried
        # every input the uncapped search gives a feeder still has one
        assert {i for _, i in pairs} == {i for _, i in _reference(*args)}


def _first_producers(outs: Any, sig: int) -> list[int]:
    members = np.flatnonzero(outs.sig == sig)
    first: list[int] = members[np.argsort(outs.spots[members], kind="stable")].tolist()
    return first[: _dataflow_feeders.MOST_PRODUCERS]


def _feeders_found(tools: list[Tool], monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, Any]]:
    """Every call of ``feeder_pairs`` while the graph of ``tools`` is built: its arguments and result."""
    from fms_dgt.core.tools.enrichments import dataflow

    calls: list[tuple[Any, Any]] = []
    real = _dataflow_feeders.feeder_pairs

    def spy(*args: Any) -> Any:
        found = real(*args)
        calls.append((args, found))
        return found

    monkeypatch.setattr(dataflow, "feeder_pairs", spy)
    DataflowEnrichment().enrich(ToolRegistry(tools))
    return calls


@pytest.mark.parametrize("parts", [17, 40])
def test_a_tool_repeating_an_output_leaves_room_for_the_other_tools(
    parts: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ``booking`` lists its parts, each with a ``ticket_code`` (one output signature, ``parts``
    # producers in one tool); ``issue_ticket`` is the one other tool making that output.
    code = {"type": "string", "description": "The code of the ticket."}
    part = {"type": "object", "properties": {"ticket_code": code}}
    booking = Tool(
        name="booking",
        namespace="car",
        description="booking",
        parameters={"type": "object", "properties": {"ticket_code": code}},
        output_parameters={"type": "object", "properties": {f"part{k}": part for k in range(parts)}},
    )
    issuer = tool("issue_ticket", {}, {"ticket_code": "The code of the ticket."})
    (args, found), *_ = _feeders_found([booking, issuer], monkeypatch)
    outs, ins = args[1]
    assert (outs.tool == 0).sum() > _dataflow_feeders.MOST_PRODUCERS  # booking fills the places
    fed = {int(i): int(outs.tool[o]) for o, i in zip(found[0], found[1], strict=True)}
    (booking_input,) = np.flatnonzero(ins.tool == 0).tolist()
    assert fed == {booking_input: 1}  # fed by issue_ticket, not left without a feeder


def test_an_api_without_feeder_candidates_has_no_feeders(monkeypatch: pytest.MonkeyPatch) -> None:
    # A catalogue namespace of three APIs: the candidates of its hotel and car APIs are none of
    # the paint API's, whose one output can feed nothing of its own.
    tools = [
        tool("hotel_search", {"city": "The city."}, {"hotel_id": "The id of the hotel."}, "trips"),
        tool("hotel_book", {"hotel_id": "The id of the hotel to book."}, {}, "trips"),
        tool("car_find", {"city": "The city."}, {"car_id": "The id of the car."}, "trips"),
        tool("car_rent", {"car_id": "The id of the car to rent."}, {}, "trips"),
        tool("paint_weigh", {}, {"mass": "The mass in kilograms."}, "trips"),
        tool("paint_mix", {"hue": "A colour."}, {}, "trips"),
    ]
    calls = _feeders_found(tools, monkeypatch)
    assert len(calls) == 3  # one per API
    fed = [{(int(o), int(i)) for o, i in zip(*found[:2], strict=True)} for _, found in calls]
    assert fed[0] and fed[1] and fed[2] == set()


def _many_candidates(count: int) -> list[Tool]:
    """``count`` tools whose inputs each have a description of their own (many input signatures,
    each with candidates in many tiers of score)."""
    outputs = {f"ticket_{w}": f"The {w} of the ticket." for w in ("code", "seat", "row", "coach", "price")}
    return [
        tool(f"desk{n}", {"ticket_code": f"The code of the ticket at desk {n}.", "row": f"Row {n}."}, outputs)
        for n in range(count)
    ]


@pytest.mark.parametrize("count", [2, 5, 12])
def test_feeders_joined_tier_by_tier_are_the_exhaustive_searchs(
    count: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _feeders_found(_many_candidates(count), monkeypatch)
    (args, found), *_ = calls
    pairs = set(zip(found[0].tolist(), found[1].tolist(), strict=True))
    assert len(pairs) == 2 * count  # every input has a feeder
    assert pairs == _reference(*args)
