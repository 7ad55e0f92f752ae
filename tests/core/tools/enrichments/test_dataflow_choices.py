"""Tests for fms_dgt/core/tools/enrichments/_dataflow_choices.py: values listed on both ends must meet."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from support.schemas import schema

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.enrichments._dataflow_choices import (
    IDENTIFIER,
    KIND_INDEX,
    KINDS_APART,
    MAX_CHOICES,
    ChoiceTable,
    QualifierTable,
    closed_values,
    kind_of,
    kinds_apart,
    with_choices,
)
from fms_dgt.core.tools.enrichments._dataflow_entities import parse_role
from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment
from fms_dgt.core.tools.registry import ToolRegistry


def _converter(unit: dict[str, Any]) -> Tool:
    return Tool(
        "convert_temperature",
        "demo",
        description="Convert a temperature to Celsius or Fahrenheit.",
        parameters=schema(value="number"),
        output_parameters=schema(value="number", unit=unit),
    )


def _weather(units: dict[str, Any]) -> Tool:
    return Tool(
        "get_weather",
        "weather",
        description="Current weather at a place.",
        parameters=schema(latitude="number", units=units),
    )


def _fed(tools: list[Tool], output: str, target: str, name: str, *, cache: Path | None = None) -> bool:
    graph = DataflowEnrichment(threshold=0.05, cache_dir=cache).enrich(ToolRegistry(tools))
    return any(
        e.output == output and e.target.name == target and e.input == name
        for row in range(len(tools))
        for e in graph.edges_from(row)
    )


TEMPERATURE = {"type": "string", "enum": ["celsius", "fahrenheit"]}


def test_an_output_listing_values_feeds_no_input_listing_none_of_them() -> None:
    # The demo's converter answers a unit (celsius or fahrenheit) that reads like a weather
    # tool's units (metric or imperial), but none of its values is one the weather tool takes.
    disjoint = {"type": "string", "enum": ["metric", "imperial"]}
    assert not _fed([_converter(TEMPERATURE), _weather(disjoint)], "unit", "get_weather", "units")
    # The same pair fits when the input lists a value the output may give, or lists none.
    shared = {"type": "string", "enum": ["kelvin", "fahrenheit"]}
    assert _fed([_converter(TEMPERATURE), _weather(shared)], "unit", "get_weather", "units")
    assert _fed([_converter(TEMPERATURE), _weather({"type": "string"})], "unit", "get_weather", "units")
    assert _fed([_converter({"type": "string"}), _weather(disjoint)], "unit", "get_weather", "units")


def test_exact_names_listing_different_values_do_not_match() -> None:
    # Within one namespace, an exact name would rank first whatever the texts say: a run's state
    # (queued, running) is not a note's state (draft, published).
    def pair(states: list[str]) -> list[Tool]:
        runs = {"type": "string", "enum": ["queued", "running"]}
        return [
            Tool("get_run", "flow", output_parameters=schema(state=runs)),
            Tool("list_notes", "flow", parameters=schema(state={"type": "string", "enum": states})),
        ]

    assert not _fed(pair(["draft", "published"]), "state", "list_notes", "state")
    assert _fed(pair(["draft", "running"]), "state", "list_notes", "state")


def test_a_list_input_is_read_by_its_items_values() -> None:
    many = {"type": "array", "items": {"type": "string", "enum": ["metric", "imperial"]}}
    assert closed_values(many) == ["metric", "imperial"]
    assert not _fed([_converter(TEMPERATURE), _weather(many)], "unit", "get_weather", "units")
    many["items"]["enum"].append("celsius")
    assert _fed([_converter(TEMPERATURE), _weather(many)], "unit", "get_weather", "units")


def test_which_schemas_list_values() -> None:
    assert closed_values({"const": "fixed"}) == ["fixed"]
    assert closed_values({"type": "string"}) is None
    assert closed_values({"enum": []}) is None
    assert closed_values({"enum": [{"a": 1}, "b"]}) is None  # objects are not compared
    assert closed_values({"enum": [str(n) for n in range(MAX_CHOICES + 1)]}) is None  # too many: open
    assert closed_values({"anyOf": [{"enum": ["a"]}, {"type": "string"}]}) is None  # any string too


def test_numbers_compare_by_value_and_booleans_apart_from_them() -> None:
    table = ChoiceTable([with_choices("", {"enum": [value]}) for value in (1, 1.0, True)])
    ids = table.ids
    fits = table.fits(np.array([ids[0], ids[0], -1]), np.array([ids[1], ids[2], ids[2]]))
    assert fits.tolist() == [True, False, True]  # 1 is 1.0; 1 is not true; an open end fits


def test_the_values_do_not_change_what_the_role_says() -> None:
    for text in ("", "label@pool\x1eflow", "id:pet|animal#pet~cat,dog", "query\x1ecatalog"):
        listed = with_choices(text, {"enum": ["a", "b"]})
        assert listed != text
        assert parse_role(listed) == parse_role(text)


def test_a_warm_run_keeps_the_values_apart(tmp_path: Path) -> None:
    disjoint = {"type": "string", "enum": ["metric", "imperial"]}
    tools = [_converter(TEMPERATURE), _weather(disjoint), _weather({"type": "string"})]
    tools[2] = Tool("get_forecast", "weather", parameters=schema(units={"type": "string"}))
    for _ in range(2):  # cold, then from the memo
        assert not _fed(tools, "unit", "get_weather", "units", cache=tmp_path)
        assert _fed(tools, "unit", "get_forecast", "units", cache=tmp_path)
    assert list((tmp_path / "dataflow").glob("*/memo/memo-*.pack"))


def test_what_a_value_is_said_to_be_of() -> None:
    assert kind_of("like_count") == ("count", frozenset({"like"}))
    assert kind_of("countryCode") == ("code", frozenset({"country"}))
    assert kind_of("channelHandle") == ("name", frozenset({"channel"}))  # a handle reads as a name
    assert kind_of("room_counts") == ("count", frozenset({"room"}))
    for bare in ("date", "count", "new_price", "amount_total", "is_active", "user_id", "created_at"):
        found = kind_of(bare)  # a kind alone, modifiers or kinds only, no kind word: of nothing
        assert found is None or not found[1], bare


def _wired(outputs: dict[str, Any], inputs: dict[str, Any]) -> set[tuple[str, str]]:
    tools = [
        Tool("get_source", "a", output_parameters=schema(**outputs)),
        Tool("use_target", "b", parameters=schema(**inputs)),
    ]
    graph = DataflowEnrichment(threshold=0.05).enrich(ToolRegistry(tools))
    return {(e.output, e.input) for e in graph.edges_from(0)}


def test_values_of_one_kind_said_to_be_of_different_things_do_not_feed_each_other() -> None:
    # Hashed words made a post's like_count a hotel booking's child_count, a user's first_name a
    # last_name, a country's dial_code a countryCode: alike by their kind alone.
    wired = _wired(
        {"like_count": "integer", "first_name": "string", "dial_code": "string", "stock_price": "number"},
        {
            "child_count": "integer",
            "count": "integer",
            "last_name": "string",
            "countryCode": "string",
            "new_price": "number",
        },
    )
    assert ("like_count", "child_count") not in wired and ("like_count", "count") in wired
    assert ("first_name", "last_name") not in wired
    assert ("dial_code", "countryCode") not in wired
    assert ("stock_price", "new_price") in wired  # "new" says when, not of what
    same = _wired(
        {"first_name": "string", "hotel_count": "integer"}, {"firstName": "string", "hotel_counts": "integer"}
    )
    assert {("first_name", "firstName"), ("hotel_count", "hotel_counts")} <= same


def test_identifiers_are_told_apart_by_their_entities_not_by_qualifiers() -> None:
    table = QualifierTable(["like_count", None, "first_name"], ["child_count", "first_name", "count"])
    fits = table.fits(table.out[:, None], table.into[None, :])
    assert fits.tolist() == [[False, False, True], [True, True, True], [False, True, True]]
    known = (table.out_kind[:, None] >= 0) & (table.in_kind[None, :] >= 0)
    apart = known & KINDS_APART[table.out_kind[:, None], table.in_kind[None, :]]
    # A count is no name; an unnamed end (the whole result) is any kind.
    assert apart.tolist() == [[False, True, False], [False, False, False], [True, False, True]]
    ident = KIND_INDEX[IDENTIFIER]
    assert not KINDS_APART[ident, ident]  # identifiers: by their entities (below)
    wired = _wired({"owner_user_id": "string"}, {"author_user_id": "string"})
    assert ("owner_user_id", "author_user_id") in wired  # ids: one entity (user), whatever qualifies it


def test_values_of_kinds_that_never_stand_for_one_another_do_not_feed_each_other() -> None:
    # API-Bank's ModifyRegistration took the appointment_id it modifies as its new date and
    # doctor; an account's displayName fed ForgotPassword's status.
    wired = _wired(
        {"appointment_id": "string", "displayName": "string", "like_count": "integer", "price": "number"},
        {
            "new_appointment_date": "string",
            "appointment_id": "string",
            "status": "string",
            "total_price": "number",
            "amount": "number",
        },
    )
    assert ("appointment_id", "new_appointment_date") not in wired
    assert ("appointment_id", "appointment_id") in wired
    assert ("displayName", "status") not in wired
    assert ("like_count", "total_price") not in wired and ("like_count", "amount") not in wired
    assert ("price", "total_price") in wired
    kin = _wired(
        {"start_date": "string", "book_title": "string", "order_id": "string"},
        {"start_time": "string", "book_name": "string", "order_code": "string"},
    )
    assert {("start_date", "start_time"), ("book_title", "book_name"), ("order_id", "order_code")} <= kin


def test_which_kinds_are_apart() -> None:
    assert kind_of("date") == ("date", frozenset())
    assert kind_of("new_appointment_date") == ("date", frozenset({"appointment"}))
    assert kind_of("user") is None
    assert kinds_apart((IDENTIFIER, frozenset()), ("date", frozenset()))
    assert not kinds_apart((IDENTIFIER, frozenset()), ("code", frozenset({"country"})))
    assert not kinds_apart((IDENTIFIER, frozenset()), (IDENTIFIER, frozenset()))
    assert not kinds_apart(("price", frozenset()), ("amount", frozenset({"payment"})))
    assert kinds_apart(("status", frozenset()), ("name", frozenset({"display"})))
    assert not kinds_apart(("value", frozenset()), ("date", frozenset()))  # a value is any
