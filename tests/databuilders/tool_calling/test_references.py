"""A later request names the values it takes from earlier calls: a result's own value as "the ID
from that", a value the user said before (the result repeats the call's argument) as "that city"."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from support.runs import REPO, read_records, run

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.databuilders.tool_calling.checks import offline_check
from fms_dgt.databuilders.tool_calling.plan import PlannedCall, RecordPlan, Wire
from fms_dgt.databuilders.tool_calling.text import TemplateText

WRITER = TemplateText()


def _tool(name: str, description: str, *params: str, namespace: str = "t") -> Tool:
    properties = {p: {"type": "number" if p.endswith(("price", "itude")) else "string"} for p in params}
    schema = {"type": "object", "properties": properties, "required": list(params)}
    return Tool(name, namespace, description=description, parameters=schema)


def _call(tool: Tool, args: dict[str, Any], result: Any, wired: dict[str, Wire] | None = None) -> PlannedCall:
    call = ToolCall(tool.qualified_name, args, f"call_{tool.name}")
    wired = wired or {}
    planned = PlannedCall(
        tool=tool, call=call, given={k: v for k, v in args.items() if k not in wired}, wired=wired
    )
    planned.result = ToolResult(call.call_id, call.name, result=result)
    return planned


def _requests(first: PlannedCall, second: PlannedCall, seeds: int = 30) -> list[str]:
    plan = RecordPlan(index=0, scenario="chain", offered=[first.tool, second.tool], steps=[[first], [second]])
    said = []
    for seed in range(seeds):
        text = WRITER.write(plan, random.Random(seed))
        verdict = offline_check(plan, text)
        assert verdict.ok, (verdict.reason, text.user)
        said.append(text.user)
    return said


def test_a_city_the_forecast_repeats_is_that_city_not_the_city_from_that() -> None:
    forecast = _tool("get_forecast", "Get today's forecast for a city.", "city")
    weather = _tool("get_current_weather", "Get the current weather.", "city")
    first = _call(forecast, {"city": "Nairobi"}, {"city": "Nairobi", "high": 24})
    second = _call(
        weather, {"city": "Nairobi"}, {"temperature": 21}, {"city": Wire("t::get_forecast", "city", "city")}
    )
    for user in _requests(first, second):
        assert re.search(r"\b(?:that|the same) city\b", user), user
        assert "from that" not in user and not re.search(r"\b(?:use|take) the city\b", user), user
        assert user.count("Nairobi") == 1, user  # said once, by the user, then referred to


def test_a_pet_id_the_lookup_repeats_is_that_pet_in_the_object() -> None:
    get = _tool("getPet", "Find a pet by ID.", "petId", namespace="petstore")
    delete = _tool("deletePet", "Delete a pet.", "petId", namespace="petstore")
    first = _call(get, {"petId": "pet-93236"}, {"id": "pet-93236", "name": "Lola"})
    second = _call(delete, {"petId": "pet-93236"}, None, {"petId": Wire("petstore::getPet", "id", "petId")})
    for user in _requests(first, second):
        assert re.search(r"\b(?:delete|remove|get rid of) (?:that|the same) pet\b", user), user


def test_a_value_the_earlier_call_named_otherwise_says_both_names() -> None:
    update = _tool("update_stock_price", "Update the price of a stock.", "symbol", "new_price")
    profit = _tool("calculate_profit", "Calculate the profit of a sale.", "selling_price")
    first = _call(update, {"symbol": "INTC", "new_price": 454.26}, {"symbol": "INTC", "new_price": 454.26})
    wire = Wire("t::update_stock_price", "new_price", "new_price")
    second = _call(profit, {"selling_price": 454.26}, {"profit": 12.5}, {"selling_price": wire})
    for user in _requests(first, second):
        assert "with that new price as the selling price" in user, user


def test_echoed_coordinates_and_a_bare_id_are_named_as_the_same() -> None:
    locate = _tool("locate", "Find the weather station at a coordinate.", "latitude", "longitude", "id")
    read = _tool("read_station", "Read a weather station.", "latitude", "longitude", "id")
    args = {"latitude": 38.72, "longitude": -9.14, "id": "st-4411"}
    first = _call(locate, args, dict(args))
    wired = {name: Wire("t::locate", name, name) for name in args}
    for user in _requests(first, _call(read, dict(args), {"ok": True}, wired)):
        assert "at the same coordinates" in user and "with the same ID" in user, user
        assert user.count("38.72") == 1, user


def test_a_value_only_the_result_holds_still_points_at_the_result() -> None:
    create = _tool("createPet", "Add a pet.", "name", namespace="petstore")
    upload = _tool("uploadPhoto", "Upload a photo.", "petId", namespace="petstore")
    first = _call(create, {"name": "Lola"}, {"id": "pet-1", "name": "Lola"})
    second = _call(upload, {"petId": "pet-1"}, None, {"petId": Wire("petstore::createPet", "id")})
    for user in _requests(first, second):
        assert re.search(r"\bthe ID\b", user), user


def test_an_id_of_what_the_call_acts_on_names_the_thing() -> None:
    # "Add a pet for Lola. Once you have the ID from that, delete a pet." became "... Then delete
    # that pet."; a listing's first item is "the first pet".
    create = _tool("createPet", "Add a pet.", "name", namespace="petstore")
    delete = _tool("deletePet", "Delete a pet.", "petId", namespace="petstore")
    first = _call(create, {"name": "Lola"}, {"id": "pet-1", "name": "Lola"})
    second = _call(delete, {"petId": "pet-1"}, None, {"petId": Wire("petstore::createPet", "id")})
    for user in _requests(first, second):
        assert re.search(r"\bthat pet\b", user) and "ID" not in user, user
    listing = _tool("listPets", "List pets.", namespace="petstore")
    found = _call(listing, {}, [{"id": "pet-1", "name": "Lola"}])
    chosen = _call(delete, {"petId": "pet-1"}, None, {"petId": Wire("petstore::listPets", "[].id")})
    for user in _requests(found, chosen):
        assert re.search(r"\bthe first pet\b", user), user


@pytest.fixture(scope="module")
def demo_records(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    out: Path = run(REPO / "configs" / "demo.yaml", tmp_path_factory.mktemp("echo"), 80)
    return read_records(out)


def _calls(record: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """Each call's step (calls of one assistant turn run together) and arguments."""
    return [
        (step, json.loads(c["function"]["arguments"]))
        for step, m in enumerate(record["messages"])
        for c in m.get("tool_calls") or []
    ]


def test_the_run_marks_exactly_the_wires_whose_value_an_earlier_call_took(
    demo_records: list[dict[str, Any]],
) -> None:
    echoed = fresh = 0
    for record in demo_records:
        calls = _calls(record)
        for position, wires in enumerate(record["metadata"]["wired"]):
            for name, wire in wires.items():
                value = calls[position][1][name]
                said = value if isinstance(value, list) else [value]  # a list of one is its value
                step = calls[position][0]
                earlier = [args for at, args in calls[:position] if at < step]
                if "echoes" in wire:
                    echoed += 1
                    took = [args[wire["echoes"]] for args in earlier if wire["echoes"] in args]
                    assert any(v in (value, *said) for v in took), (record["messages"][0]["content"], wire)
                else:
                    fresh += 1  # a string no earlier call was given
                    given = [v for args in earlier for v in args.values()]
                    assert not any(isinstance(v, str) and len(v) > 1 and v in said for v in given), (
                        name,
                        wire,
                    )
    assert echoed and fresh, (echoed, fresh)


def test_a_run_request_whose_only_wires_echo_refers_and_does_not_point_at_a_result(
    demo_records: list[dict[str, Any]],
) -> None:
    checked = 0
    for record in demo_records:
        wires = [w for step in record["metadata"]["wired"] for w in step.values()]
        if not wires or not all("echoes" in w for w in wires):
            continue
        checked += 1
        user = record["messages"][0]["content"]
        assert "from that" not in user and not re.search(r"\b(?:use|take) the\b", user, re.I), user
        assert re.search(r"\b(?:that|the same) \w+", user), user
    assert checked >= 3, checked


def test_an_output_named_like_an_implementation_note_is_not_said() -> None:
    # SureVoIP's announcement has a file_internal: "use the file internal to add ..." is a note.
    found = _tool("get_announcement", "Get an announcement.", "id", namespace="voip")
    add = _tool("post_announcement", "Add an announcement.", "file", namespace="voip")
    first = _call(found, {"id": "a-1"}, {"file_internal": "x.mp3"})
    second = _call(add, {"file": "x.mp3"}, None, {"file": Wire("voip::get_announcement", "file_internal")})
    for user in _requests(first, second):
        assert "internal" not in user, user
