"""Simulated results agree with earlier results of the record on the entities they share, and
on the weather of one place."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fms_dgt.databuilders.tool_calling.agreement import agree, same_weather
from fms_dgt.databuilders.tool_calling.job import GenerationJob

REPO = Path(__file__).resolve().parents[3]


def test_an_object_naming_an_earlier_id_takes_the_earlier_values() -> None:
    added = {"id": "pet-45868", "name": "Luna", "tag": "urgent"}
    found = {"id": "pet-45868", "name": "Milo", "tag": "finance", "age": 3}
    value, changed = agree(found, [added], {"petId": "pet-45868"})
    assert value == {"id": "pet-45868", "name": "Luna", "tag": "urgent", "age": 3}
    assert changed == ["/name", "/tag"]
    assert found["name"] == "Milo", "the result given is not changed in place"


def test_nested_objects_and_lists_are_matched_by_any_id_field() -> None:
    created = {"order": {"order_id": "ord-1234", "status": "placed", "total": 12.5}}
    listed = {
        "orders": [{"orderId": "x-99999", "status": "sent"}, {"order_id": "ord-1234", "status": "lost"}]
    }
    value, changed = agree(listed, [created], {})
    assert value["orders"][1]["status"] == "placed" and value["orders"][0]["status"] == "sent"
    assert changed == ["/orders/1/status"]


def test_what_the_call_set_short_ids_and_other_types_are_kept() -> None:
    before = {"event_id": "evt-1000", "start": "09:00", "title": "Standup", "count": 2}
    # An update's new start is the call's own value; the title comes from the record.
    value, changed = agree(
        {"event_id": "evt-1000", "start": "10:00", "title": "X"}, [before], {"start": "10:00"}
    )
    assert value == {"event_id": "evt-1000", "start": "10:00", "title": "Standup"} and changed == ["/title"]
    # A short number names something else in every API; a list never replaces a string.
    assert agree({"id": 7, "name": "b"}, [{"id": 7, "name": "a"}], {}) == ({"id": 7, "name": "b"}, [])
    assert agree({"id": "abcd", "tag": "x"}, [{"id": "abcd", "tag": ["x"]}], {})[1] == []
    # "paid" and "valid" end in "id" but are not ids.
    assert agree({"paid": "abcdef", "v": 1}, [{"paid": "abcdef", "v": 2}], {})[1] == []


def test_a_generated_run_never_gives_one_entity_two_names(tmp_path: Path) -> None:
    config: dict[str, Any] = {
        "tools": {
            "registry": [
                {
                    "type": "rest",
                    "spec": str(REPO / "data" / "rest" / "petstore.yaml"),
                    "namespace": "petstore",
                    "include": {"tags": ["pets"]},
                    "engine": "sim",
                }
            ],
            "enrichments": [{"type": "dataflow"}],
            "engines": {"sim": {"type": "mock", "seed": 3}},
        },
        "generation": {
            "seed": 3,
            "count": 80,
            "output_dir": str(tmp_path),
            "scenarios": [{"name": "chain", "sampler": {"type": "tc/chain", "k": 2}}],
        },
    }
    with GenerationJob(config) as job:
        job.run()
    shared = 0
    for line in (tmp_path / "records.jsonl").read_text().splitlines():
        seen: dict[str, dict[str, Any]] = {}
        for message in json.loads(line)["messages"]:
            result = json.loads(message["content"]) if message["role"] == "tool" else None
            if not isinstance(result, dict) or not isinstance(result.get("id"), str):
                continue
            earlier = seen.setdefault(result["id"], result)
            if earlier is not result:
                shared += 1
                assert earlier.get("name") == result.get("name"), line
    assert shared >= 3, "the run has records where two results name one pet"


FORECAST = ({"city": "Seattle"}, {"celsius": 9.1, "city": "Seattle", "conditions": "partly cloudy"})
SKY = {"properties": {"condition": {"type": "string", "enum": ["clear", "clouds", "rain", "snow", "fog"]}}}


def test_a_reading_for_a_place_an_earlier_result_gave_the_weather_of_takes_that_weather() -> None:
    reading = {"temperature": 16.5, "condition": "fog", "feels_like": 15.0}
    value, changed = same_weather(reading, [FORECAST], {"city": "seattle"}, {})
    assert value == {"temperature": 9.1, "condition": "partly cloudy", "feels_like": 7.6}
    assert sorted(changed) == ["/condition", "/feels_like", "/temperature"]
    assert reading["temperature"] == 16.5, "the result is not changed in place"
    # In Fahrenheit when the call asks so, and a schema's own word for the same sky.
    value, _ = same_weather(reading, [FORECAST], {"city": "Seattle", "units": "imperial"}, SKY)
    assert value["temperature"] == 48.4 and value["condition"] == "clouds"


def test_a_geocoded_citys_coordinates_are_that_city() -> None:
    geocoded = ({"city": "Seattle"}, {"latitude": 47.6062, "longitude": -122.3321})
    at = {"latitude": 47.6062, "longitude": -122.3321}
    value, _ = same_weather({"temperature": 30.0, "condition": "clear"}, [FORECAST, geocoded], at, SKY)
    assert value == {"temperature": 9.1, "condition": "clouds"}


def test_another_place_or_a_sky_the_schema_cannot_say_is_left_alone() -> None:
    reading = {"temperature": 30.0, "condition": "clear"}
    assert same_weather(reading, [FORECAST], {"city": "Lisbon"}, SKY) == (reading, [])
    windy = ({"city": "Oslo"}, {"temp": 4.0, "city": "Oslo", "conditions": "windy"})
    value, changed = same_weather(reading, [windy], {"city": "Oslo"}, SKY)
    assert value == {"temperature": 4.0, "condition": "clear"} and changed == ["/temperature"]
    no_reading = {"condition": "fog"}
    assert same_weather(no_reading, [FORECAST], {"city": "Seattle"}, {}) == (no_reading, [])


def test_the_demo_run_says_one_weather_per_city(tmp_path: Path) -> None:
    with GenerationJob(REPO / "configs" / "demo.yaml", count=120, seed=7, out=tmp_path) as job:
        job.run()
    checked = 0
    for line in (tmp_path / "records.jsonl").read_text().splitlines():
        record = json.loads(line)
        results = [json.loads(m["content"]) for m in record["messages"] if m["role"] == "tool"]
        forecasts = {r["city"]: r for r in results if isinstance(r, dict) and "celsius" in r}
        calls = [
            json.loads(c["function"]["arguments"])
            for m in record["messages"]
            for c in m.get("tool_calls") or []
        ]
        for args, result in zip(calls, results, strict=True):
            city = args.get("city")
            if city in forecasts and isinstance(result, dict) and "temperature" in result:
                checked += 1
                expected = forecasts[city]["celsius"]
                if args.get("units") == "imperial":
                    expected = round(expected * 9 / 5 + 32, 1)
                assert result["temperature"] == expected, line
    assert checked >= 5, checked


def test_a_real_servers_huge_or_infinite_reading_is_left_alone() -> None:
    # A hostile MCP server's forecast: 10**400 degrees or Infinity, and a latitude past a float.
    reading = {"temperature": 3.0, "condition": "fog"}
    huge = json.loads('{"city": "Oslo", "temperature": ' + "9" * 400 + "}")
    endless = json.loads('{"city": "Oslo", "temperature": Infinity}')
    far = json.loads('{"latitude": ' + "9" * 400 + ', "longitude": 1, "temperature": 5}')
    for theirs in (huge, endless):
        assert same_weather(reading, [({"city": "Oslo"}, theirs)], {"city": "Oslo"}, {}) == (reading, [])
    at = {"latitude": 1.0, "longitude": 1.0}
    assert same_weather(reading, [({}, far)], at, {}) == (reading, [])


def test_a_stock_updated_reports_its_new_price_when_looked_up() -> None:
    # When2Call: update_stock_price(AAPL, 325.83) then get_stock_info(AAPL) reported 380.85.
    updated = {"new_price": 325.83, "old_price": 190.66, "symbol": "AAPL"}
    info = {"percent_change": 17.01, "price": 380.85, "volume": 15.94}
    value, changed = agree(info, [updated], {"symbol": "AAPL"})
    assert value["price"] == 325.83 and changed == ["/price"]
    assert agree(info, [updated], {"symbol": "MSFT"})[0]["price"] == 380.85  # another stock
    # an order's price is no stock's price: only what an update set is carried
    order = {"symbol": "AAPL", "price": 158.04, "order_type": "limit"}
    assert agree(info, [order], {"symbol": "AAPL"})[0]["price"] == 380.85
    # and an id a call is given names no result that names none (a pet's owner is no pet)
    assert agree({"name": "Ann"}, [{"id": "pet-45868", "name": "Luna"}], {"petId": "pet-45868"})[1] == []


def test_two_ids_in_two_dresses_are_two_things_and_a_bare_number_is_either() -> None:
    from fms_dgt.databuilders.tool_calling.agreement import alike

    assert alike(82642, "#W0082642") and alike("ord-82642", "ORD-82642")
    assert not alike("pet-3", "cat-3") and not alike("USR1", "ORD01")  # were counted as one
