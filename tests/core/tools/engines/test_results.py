"""Tests of mock results that fit the call (fms_dgt/core/tools/engines/results.py)."""

from __future__ import annotations

import itertools
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from fms_dgt.core.tools._fake_data import PLACE_INDEX
from fms_dgt.core.tools.data_objects import Tool, ToolCall
from fms_dgt.core.tools.engines.mock import MockToolEngine
from fms_dgt.core.tools.engines.results import examples_of, mock_result
from fms_dgt.core.tools.loaders.file import FileToolLoader
from fms_dgt.core.tools.registry import ToolRegistry

REPO = Path(__file__).resolve().parents[4]
NUMBER = {"type": "number"}
ADD = Tool(
    "add",
    "calc",
    parameters={"type": "object", "properties": {"a": NUMBER, "b": NUMBER}, "required": ["a", "b"]},
    output_parameters={"type": "object", "properties": {"result": NUMBER}, "required": ["result"]},
)
DAY = {
    "type": "object",
    "properties": {"date": {"type": "string", "format": "date"}, "high": NUMBER, "low": NUMBER},
}
FORECAST = Tool(
    "get_forecast",
    "weather",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1, "maximum": 14}},
    },
    output_parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "array", "items": DAY, "maxItems": 10}},
        "required": ["city", "days"],
    },
)


def _results(tool: Tool, arguments: dict[str, Any], seeds: range = range(30)) -> list[Any]:
    found = []
    for seed in seeds:
        value, source = mock_result(tool, arguments, random.Random(seed))
        if tool.output_parameters:
            assert Draft202012Validator(tool.output_parameters).is_valid(value), value
        found.append((value, source))
    return found


def test_a_pure_tool_with_an_implementation_returns_the_exact_answer() -> None:
    assert mock_result(ADD, {"a": 47.22, "b": 58.08}, random.Random(1)) == (
        {"result": 105.3},
        "implementation",
    )
    bare = Tool("calculate_triangle_area", "bfcl", parameters={"type": "object", "properties": {}})
    assert mock_result(bare, {"base": 10, "height": 5}, random.Random(1)) == (
        {"area": 25.0},
        "implementation",
    )


def test_what_an_implementation_cannot_compute_is_synthesised() -> None:
    divide = Tool("divide", "calc", parameters=ADD.parameters, output_parameters=ADD.output_parameters)
    assert {source for _, source in _results(divide, {"a": 1, "b": 0})} == {"synthesised"}
    narrow = {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]}
    integer = Tool("add", "calc", parameters=ADD.parameters, output_parameters=narrow)
    assert {source for _, source in _results(integer, {"a": 1.5, "b": 1})} == {"synthesised"}
    assert mock_result(integer, {"a": 2, "b": 1}, random.Random(0)) == ({"result": 3}, "implementation")


def test_the_examples_a_tool_carries_come_first_and_echo_the_arguments() -> None:
    output = {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}
    tool = Tool(
        "get_pet",
        "shop",
        parameters={"type": "object", "properties": {"id": {"type": "integer"}}},
        output_parameters={**output, "examples": [{"id": 1, "name": "Rex"}]},
        metadata={"result_examples": [{"id": 2, "name": "Tom"}, {"id": "not an integer"}]},
    )
    assert examples_of(tool) == [{"id": 2, "name": "Tom"}, {"id": 1, "name": "Rex"}], (
        "invalid ones are left out"
    )
    results = _results(tool, {"id": 77})
    assert {source for _, source in results} == {"example"}
    assert {value["name"] for value, _ in results} == {"Tom", "Rex"}
    assert all(value["id"] == 77 for value, _ in results)
    from_file = Tool("ping", "x", metadata={"extra": {"response_examples": [{"pong": True}]}})
    assert mock_result(from_file, {}, random.Random(0)) == ({"pong": True}, "example")


def test_lists_have_the_size_the_call_asks_within_the_schema() -> None:
    for value, source in _results(FORECAST, {"city": "Oslo", "days": 4}):
        assert source == "synthesised" and len(value["days"]) == 4
    assert all(len(v["days"]) == 10 for v, _ in _results(FORECAST, {"days": 14})), "maxItems wins"
    search = Tool(
        "search",
        "web",
        parameters={"type": "object", "properties": {"limit": {"type": "integer"}}},
        output_parameters={"type": "object", "properties": {"results": {"type": "array", "items": {}}}},
    )
    assert all(len(v["results"]) == 6 for v, _ in _results(search, {"limit": 6}))


def test_bounds_are_ordered_and_dated_items_consecutive() -> None:
    for value, _ in _results(FORECAST, {"city": "Lima", "days": 5}):
        days = value["days"]
        assert all(day["low"] <= day["high"] for day in days)
        dates = [day["date"] for day in days]
        assert dates == sorted(dates) and len(set(dates)) == 5
        assert dates[-1][:8] == dates[0][:8] or dates[-1] > dates[0]
    stay = Tool(
        "stay",
        "t",
        output_parameters={
            "type": "object",
            "properties": {
                "check_in": {"type": "string", "format": "date"},
                "check_out": {"type": "string", "format": "date"},
                "nights": {"type": "array", "items": {"type": "string", "format": "date"}, "minItems": 3},
            },
            "required": ["check_in", "check_out", "nights"],
        },
    )
    for value, _ in _results(stay, {}):
        assert value["check_in"] < value["check_out"] and value["nights"] == sorted(value["nights"])


def test_a_forecasts_temperatures_move_as_weather_does() -> None:
    for value, _ in _results(FORECAST, {"city": "Lima", "days": 7}, range(60)):
        days = value["days"]
        assert all(0 <= day["high"] - day["low"] <= 15.05 + 1e-9 for day in days), days
        for before, after in itertools.pairwise(days):
            assert abs(after["high"] - before["high"]) <= 4.0 + 1e-9, days
            narrowed = abs(after["low"] - (after["high"] - 15)) < 0.06  # raised to 15 below the high
            assert abs(after["low"] - before["low"]) <= 4.0 + 1e-9 or narrowed, days


def test_the_sky_agrees_with_the_temperature_and_the_units_asked_for() -> None:
    weather = Tool(
        "get_weather",
        "weather",
        parameters={
            "type": "object",
            "properties": {"city": {"type": "string"}, "units": {"enum": ["metric", "imperial"]}},
        },
        output_parameters={
            "type": "object",
            "properties": {
                "temperature": NUMBER,
                "condition": {"type": "string", "enum": ["clear", "clouds", "rain", "snow", "fog"]},
            },
            "required": ["temperature", "condition"],
        },
    )
    metric = [value for value, _ in _results(weather, {"city": "Oslo", "units": "metric"}, range(200))]
    assert not [v for v in metric if v["condition"] == "snow" and v["temperature"] > 3]
    assert not [v for v in metric if v["condition"] == "rain" and v["temperature"] < -3]
    assert {"snow", "rain"} <= {v["condition"] for v in metric}  # both still happen, where they fit
    imperial = [value for value, _ in _results(weather, {"city": "Oslo", "units": "imperial"}, range(200))]
    # The same made-up temperatures (same seeds), said in Fahrenheit.
    assert [v["temperature"] for v in imperial] == [round(v["temperature"] * 9 / 5 + 32, 1) for v in metric]
    assert not [v for v in imperial if v["condition"] == "snow" and v["temperature"] > 37.4]
    # Only a unit says Fahrenheit: a country "us" or a grade "F" among the arguments does not.
    others = _results(
        weather, {"city": "Austin", "units": "metric", "country": "us", "grade": "F"}, range(50)
    )
    assert max(value["temperature"] for value, _ in others) <= 35


def test_temperatures_follow_the_climate_of_the_place_and_the_season() -> None:
    tools = {t.name: t for t in FileToolLoader(REPO / "data" / "weather_tools.yaml").load()}
    forecast, weather = tools["get_forecast"], tools["get_weather"]

    def highs(city: str) -> dict[str, list[float]]:
        place = PLACE_INDEX[city]
        by_season: dict[str, list[float]] = {"jan": [], "jul": []}
        for value, _ in _results(
            forecast, {"latitude": place.latitude, "longitude": place.longitude, "days": 1}, range(200)
        ):
            month = int(value["days"][0]["date"][5:7])
            season = "jan" if month in (12, 1, 2) else "jul" if month in (6, 7, 8) else None
            if season:
                by_season[season].append(value["days"][0]["high"])
        return by_season

    oslo, sydney = highs("oslo"), highs("sydney")
    assert max(oslo["jan"]) < min(oslo["jul"])  # winter is colder than summer
    assert max(sydney["jul"]) < min(sydney["jan"])  # and south of the equator it is the other way
    for value, _ in _results(weather, {"city": "Singapore"}):
        assert 20 <= value["temperature"] <= 35, value  # no frost on the equator


def test_results_echo_arguments_and_carry_the_calls_entities() -> None:
    tools = {t.name: t for t in FileToolLoader(REPO / "data" / "weather_tools.yaml").load()}
    for value, _ in _results(tools["geocode_city"], {"city": "Oslo"}):
        oslo = PLACE_INDEX["oslo"]
        assert (value["latitude"], value["longitude"]) == (oslo.latitude, oslo.longitude)
        assert value.get("timezone", oslo.timezone) == oslo.timezone
    for value, _ in _results(FORECAST, {"city": "Lima", "days": 2}):
        assert value["city"] == "Lima"
    upload = Tool(
        "uploadPhoto",
        "petstore",
        parameters={
            "type": "object",
            "properties": {"petId": {"type": "string"}, "file": {"format": "binary"}},
        },
        output_parameters={"type": "object", "properties": {"filename": {"type": "string"}, "petId": {}}},
    )
    for value, _ in _results(upload, {"petId": "p-1", "file": "dog_2026.jpg"}):
        assert value["filename"] == "dog_2026.jpg" and value["petId"] == "p-1"
    for value, _ in _results(upload, {"petId": "p-1"}):
        assert re.fullmatch(r"[A-Za-z_]+_\d+(_\d+)?\.[a-z0-9]+", value["filename"]), value


def test_listed_items_agree_with_the_calls_filters() -> None:
    text = {"type": "string"}
    item = {
        "type": "object",
        "properties": {"id": text, "name": text, "tag": text, "status": text, "username": text},
    }
    lister = Tool(
        "list_things",
        "shop",
        parameters={
            "type": "object",
            "properties": {
                "tags": {"type": "array", "items": text},
                "status": text,
                "username": text,
                "id": text,
            },
        },
        output_parameters={"type": "array", "items": item, "minItems": 3},
    )
    arguments = {"tags": ["urgent", "travel"], "status": "open", "username": "ada", "id": "t-1"}
    seen_tags = set()
    for value, _ in _results(lister, arguments):
        for place, thing in enumerate(value):
            assert thing["tag"] in {"urgent", "travel"} and thing["status"] == "open", thing
            seen_tags.add(thing["tag"])
            # An id names one item only; a user asked about is not every listed item's user (the
            # first item may be that user: a search for "ada" finds her first).
            assert thing["id"] != "t-1", thing
            assert place == 0 or thing["username"] != "ada", thing
    assert seen_tags == {"urgent", "travel"}  # both tags asked for appear, not only the first


def test_files_a_search_finds_are_named_for_what_it_looked_for() -> None:
    search = Tool(
        "search_documents",
        "docs",
        parameters={"type": "object", "properties": {"keyword": {"type": "string"}}},
        output_parameters={
            "type": "object",
            "properties": {"documents": {"type": "array", "items": {"type": "string"}, "minItems": 2}},
        },
    )
    for value, _ in _results(search, {"keyword": "Review of the budget"}):
        assert all(d.startswith("review_budget_") for d in value["documents"]), value
    for value, _ in _results(search, {"keyword": "Budget review Q3 2026"}):
        for document in value["documents"]:
            assert re.fullmatch(r"budget_review_q3_[a-z_]+_\d+(_\d+)?\.[a-z]+", document), document
    # Without a query the names are the vocabulary's own.
    assert not any("review" in d for value, _ in _results(search, {}) for d in value["documents"])


def test_an_account_found_by_email_bears_the_name_in_it() -> None:
    text = {"type": "string"}
    find = Tool(
        "find_user",
        "accounts",
        parameters={"type": "object", "properties": {"email": {"type": "string", "format": "email"}}},
        output_parameters={
            "type": "object",
            "properties": {"user_id": text, "full_name": text, "email": text},
        },
    )
    for value, _ in _results(find, {"email": "omar.booker@example.net"}):
        assert value["full_name"] == "Omar Booker" and value["email"] == "omar.booker@example.net"
    names = {value["full_name"] for value, _ in _results(find, {"email": "jsmith42@example.net"})}
    assert len(names) > 1  # no name in the address: any name


def test_the_items_of_a_list_have_names_of_their_own() -> None:
    tools = {t.name: t for t in FileToolLoader(REPO / "data" / "weather_tools.yaml").load()}
    pet = {"type": "object", "properties": {"name": {"type": "string"}, "id": {"type": "string"}}}
    lister = Tool(
        "list_pets",
        "petstore",
        parameters={"type": "object", "properties": {"limit": {"type": "integer"}}},
        output_parameters={"type": "array", "items": pet, "maxItems": 20},
    )
    for value, _ in _results(tools["list_events"], {"date": "2026-03-15"}, range(100)):
        titles = [event["title"] for event in value["events"]]
        assert len(titles) == len(set(titles)), titles
    for value, _ in _results(lister, {"limit": 8}, range(100)):
        names = [p["name"] for p in value]
        assert len(names) == 8 and len(names) == len(set(names)), names


def test_a_call_that_acted_reports_a_status_of_success() -> None:
    def tool(name: str, status: dict[str, Any]) -> Tool:
        output = {"type": "object", "properties": {"status": status}, "required": ["status"]}
        return Tool(name, "t", parameters={"type": "object", "properties": {}}, output_parameters=output)

    states = {"enum": ["cancelled", "pending", "confirmed", "failed"]}
    assert {v["status"] for v, _ in _results(tool("book_table", states), {})} == {"confirmed"}
    described = {"type": "string", "description": "success or failed"}
    assert {v["status"] for v, _ in _results(tool("AddReminder", described), {})} == {"success"}
    assert {v["status"] for v, _ in _results(tool("cancel_order", {"type": "string"}), {})} == {"cancelled"}
    # BFCL's resolve_ticket answered "active"
    assert {v["status"] for v, _ in _results(tool("resolve_ticket", {"type": "string"}), {})} == {"resolved"}
    # A lookup reports whatever state the thing is in.
    assert len({v["status"] for v, _ in _results(tool("get_order", states), {})}) > 1


def test_a_tool_without_an_output_schema_gets_a_result_shaped_by_its_name() -> None:
    def shaped(name: str, arguments: dict[str, Any]) -> Any:
        value, source = mock_result(Tool(name, "bfcl"), arguments, random.Random(3))
        assert source == "shaped"
        return value

    price = shaped("get_stock_price", {"symbol": "AAPL"})
    assert price["symbol"] == "AAPL" and isinstance(price["stock_price"], float) and price["stock_price"] >= 0
    booking = shaped("book_flight", {"from_city": "Lisbon", "to_city": "Oslo"})
    assert booking["status"] == "booked" and re.fullmatch(r"[A-Z]{2}\d{3,4}", booking["flight_id"])
    restaurants = shaped("find_restaurants", {"location": "Lima, Peru", "limit": 4})
    assert restaurants["location"] == "Lima, Peru" and len(restaurants["restaurants"]) == 4
    weather = shaped("get_weather", {"city": "Oslo"})
    assert set(weather["weather"]) == {"temperature", "condition", "humidity"}
    assert shaped("ping", {}) == {"status": "ok"}, "nothing to shape a result by"


def test_the_mock_engine_names_the_source_of_each_result() -> None:
    bare = Tool("get_capital", "bfcl", parameters={"type": "object", "properties": {"country": {}}})
    engine = MockToolEngine(ToolRegistry([ADD, FORECAST, bare]), seed=4)
    engine.setup("s")
    results = engine.execute(
        "s",
        [
            ToolCall("calc::add", {"a": 47.22, "b": 58.08}, "1"),
            ToolCall("weather::get_forecast", {"days": 3}, "2"),
            ToolCall("bfcl::get_capital", {"country": "Peru"}, "3"),
        ],
    )
    assert [r.metadata["mock"] for r in results] == ["implementation", "synthesised", "shaped"]
    assert results[0].result == {"result": 105.3} and len(results[1].result["days"]) == 3
    assert results[2].result["country"] == "Peru"


@pytest.mark.corpus
def test_every_result_validates_on_the_corpus_toolsets(corpus: Path) -> None:
    folder = corpus / "toolsets" / "bfcl" / "multi_turn_func_doc"
    tools = [t for path in sorted(folder.glob("*.json")) for t in FileToolLoader(path).load()]
    assert len(tools) > 100
    for i, tool in enumerate(tools):
        value, _ = mock_result(tool, {}, random.Random(i))
        assert not tool.output_parameters or tool.output_validator.is_valid(value), (tool.name, value)


def test_the_same_results_in_another_process_and_hash_seed() -> None:
    code = (
        "import random, json;"
        "from fms_dgt.core.tools.engines.results import mock_result;"
        "from fms_dgt.core.tools.loaders.file import FileToolLoader;"
        "tools = FileToolLoader('data/weather_tools.yaml').load();"
        "print(json.dumps([mock_result(t, {'city': 'Oslo', 'days': 3}, random.Random(i)) "
        "for i, t in enumerate(tools * 3)]))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            cwd=REPO,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("3", "4242")
    }
    assert len(outputs) == 1 and "synthesised" in outputs.pop()


def test_a_rest_operation_without_a_response_body_answers_nothing() -> None:
    # PeerTube's DELETE of an abuse message answers 204 with no body, as the rest engine returns
    # it (None); the mock made up {"id_id": "id-15270", "status": "deleted"} from the name.
    def rest(status: str, content_type: str | None) -> Tool:
        response = {"status": status, **({"content_type": content_type} if content_type else {})}
        route = {"method": "DELETE", "path": "/abuses/{abuseId}", "arguments": {}, "response": response}
        params = {"type": "object", "properties": {"abuseId": {"type": "integer"}}}
        return Tool("delete_abuse", "tube", parameters=params, metadata={"kind": "rest", "route": route})

    for status in ("204", "200", "201"):
        assert mock_result(rest(status, None), {"abuseId": 4}, random.Random(1)) == (None, "empty")
    value, source = mock_result(rest("200", "application/json"), {"abuseId": 4}, random.Random(1))
    assert source == "shaped" and value is not None  # a body of no declared shape: shaped by the name


def test_listed_items_take_no_example_after_the_first_and_the_total_covers_them() -> None:
    # PeerTube's schemas give examples (id 42, name "What is PeerTube?"): every listed video had
    # them, and a listing said {"total": 1, "data": [15 videos]}.
    video = {
        "type": "object",
        "properties": {
            "id": {"type": "integer", "examples": [42]},
            "name": {"type": "string", "examples": ["What is PeerTube?"]},
        },
        "required": ["id", "name"],
    }
    listing = {
        "type": "object",
        "properties": {
            "total": {"type": "integer", "examples": [1]},
            "data": {"type": "array", "items": video, "minItems": 5, "maxItems": 5},
        },
        "required": ["total", "data"],
    }
    tool = Tool("getVideos", "tube", output_parameters=listing)
    for seed in range(10):
        value, _ = mock_result(tool, {}, random.Random(seed))
        ids = [v["id"] for v in value["data"]]
        assert len(set(ids)) == len(ids), ids
        assert value["total"] >= len(value["data"])


@pytest.mark.parametrize("total", ["total_entries", "totalElements", "total_hits"])
def test_a_total_however_named_covers_the_listed_items(total: str) -> None:
    # Airflow's DAG run listing said "the total entries are 74 and there are 100 dag runs".
    run = {"type": "object", "properties": {"dag_run_id": {"type": "string"}}}
    listing = {
        "type": "object",
        "properties": {
            total: {"type": "integer"},
            "dag_runs": {"type": "array", "items": run, "minItems": 20, "maxItems": 20},
        },
        "required": [total, "dag_runs"],
    }
    tool = Tool("get_dag_runs", "airflow", output_parameters=listing)
    for seed in range(10):
        value, _ = mock_result(tool, {}, random.Random(seed))
        assert value[total] >= len(value["dag_runs"]) == 20


def test_a_created_resource_echoes_the_nested_values_its_body_set() -> None:
    # Up Banking's POST /webhooks: the body's data.attributes.description and url are the new
    # webhook's, not a made-up "Follow-up appointment to review test results."
    attributes = {
        "type": "object",
        "properties": {"description": {"type": "string"}, "url": {"type": "string"}},
    }
    document = {
        "type": "object",
        "properties": {"data": {"type": "object", "properties": {"attributes": attributes}}},
    }
    made = {
        "type": "object",
        "properties": {"createdAt": {"type": "string", "format": "date-time"}, **attributes["properties"]},
    }
    result = {
        "type": "object",
        "properties": {
            "data": {"type": "object", "properties": {"attributes": made, "id": {"type": "string"}}}
        },
    }
    webhooks = Tool("post_webhooks", "up", parameters=document, output_parameters=result)
    body = {
        "data": {"attributes": {"description": "Payments to Slack", "url": "https://hooks.example.com/up"}}
    }
    for seed in range(5):
        value, _ = mock_result(webhooks, body, random.Random(seed))
        said = value["data"]["attributes"]
        assert said["description"] == "Payments to Slack" and said["url"] == "https://hooks.example.com/up"
    # A body wrapped in one property echoes into the result's top level (a created account's name).
    account = Tool(
        "create_account",
        "bank",
        parameters={
            "type": "object",
            "properties": {"body": {"type": "object", "properties": {"accountName": {"type": "string"}}}},
        },
        output_parameters={
            "type": "object",
            "properties": {"accountName": {"type": "string"}, "id": {"type": "string"}},
        },
    )
    assert (
        mock_result(account, {"body": {"accountName": "Holiday fund"}}, random.Random(1))[0]["accountName"]
        == "Holiday fund"
    )


def test_a_result_that_succeeded_carries_no_error_message() -> None:
    # Codat's push operation answered status Success with errorMessage "Happy birthday! ...".
    output = {
        "type": "object",
        "properties": {
            "status": {"type": "string"},
            "errorMessage": {"type": ["string", "null"]},
            "error": {"type": "string"},
        },
        "required": ["status", "errorMessage", "error"],
    }
    push = Tool("push", "codat", output_parameters=output)
    for seed in range(5):
        value, _ = mock_result(push, {}, random.Random(seed))
        assert value["errorMessage"] is None and value["error"] == "", value


def test_arguments_nested_thousands_deep_are_read_to_a_bound() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(5000):
        node["a"] = {}
        node = node["a"]
    tool = Tool("x", "n", output_parameters={"type": "object", "properties": {"a": {"type": "string"}}})
    value, _ = mock_result(tool, deep, random.Random(1))
    assert isinstance(value["a"], str)


def test_funding_an_account_reports_that_it_went_through() -> None:
    status = {"type": "object", "properties": {"status": {"type": "string"}}, "required": ["status"]}
    fund = Tool("fund_account", "bank", output_parameters=status)
    said = {mock_result(fund, {"amount": 10}, random.Random(seed))[0]["status"] for seed in range(8)}
    assert "cancelled" not in said and said <= {"completed", "success", "successful", "ok", "done"}, said


@pytest.mark.skipif(not (REPO.parent / "shared" / "corpus").is_dir(), reason="../shared/corpus is absent")
def test_every_peertube_video_result_synthesises() -> None:
    from fms_dgt.core.tools.loaders.rest import RESTToolLoader

    spec = REPO.parent / "shared" / "corpus" / "openapi" / "apis-guru" / "cpy.re_peertube.json"
    tool = ToolRegistry.from_loaders([RESTToolLoader(str(spec), namespace="tube")]).get("tube::getVideo")
    for seed in range(60):  # one in six failed: a channel name, a magnet URI
        value, _ = mock_result(tool, {"id": 42}, random.Random(seed))
        assert tool.output_validator.is_valid(value)


def test_listed_items_keep_within_the_bounds_a_call_sets() -> None:
    # Airflow: task instances asked for with a duration of at most 39.03 lasted 52.18.
    item = {
        "type": "object",
        "properties": {
            "duration": {"type": "number"},
            "start_date": {"type": "string", "format": "date-time"},
            "tries": {"type": "integer"},
            "price": {"type": "number"},
        },
        "required": ["duration", "start_date", "tries", "price"],
    }
    output = {"type": "object", "properties": {"items": {"type": "array", "items": item, "minItems": 3}}}
    tool = Tool("get_task_instances_batch", "airflow", output_parameters=output)
    asked = {
        "duration_lte": 39.03,
        "start_date_gte": "2026-05-01T00:00:00Z",
        "tries_gte": 2,
        "tries_lte": 4,
        "min_price": 10,
        "max_price": 20,
    }
    for seed in range(20):
        value, _ = mock_result(tool, asked, random.Random(seed))
        for listed in value["items"]:
            assert listed["duration"] <= 39.03 and 2 <= listed["tries"] <= 4 and 10 <= listed["price"] <= 20
            assert listed["start_date"] >= "2026-05-01T00:00:00Z"
    # bounds that cannot hold (a minimum above the maximum) bound nothing, and the result stays valid
    value, _ = mock_result(tool, {"min_price": 30, "max_price": 20}, random.Random(1))
    assert Draft202012Validator(output).is_valid(value)


def test_a_list_of_things_created_echoes_the_list_given() -> None:
    # Codat's create-bank-feed was given accounts 'keithm65' in EUR and answered 'joshua_johnson'
    # in JPY: the accounts created are the accounts sent.
    account = {
        "type": "object",
        "properties": {
            "accountName": {"type": "string"},
            "currency": {"type": "string"},
            "id": {"type": "string"},
        },
        "required": ["accountName", "currency", "id"],
    }
    body = {"type": "array", "items": account}
    tool = Tool("create-bank-feed", "codat", parameters={"type": "object", "properties": {"body": body}},
                output_parameters=body)  # fmt: skip
    sent = [
        {"accountName": "keithm65", "currency": "EUR"},
        {"accountName": "tiffany_diaz", "currency": "GBP"},
    ]
    for seed in range(8):
        value, _ = mock_result(tool, {"body": sent}, random.Random(seed))
        for made, given in zip(value, sent, strict=False):
            assert (made["accountName"], made["currency"]) == (given["accountName"], given["currency"])


def test_a_call_that_worked_never_reports_failure_whatever_its_verb() -> None:
    # API-Bank's ForgotPassword (no verb the engine knows) answered {"status": "failed"} in a
    # record that passed the call off as done: "I've sent an email; status failed."
    output = {
        "type": "object",
        "properties": {"status": {"type": "string", "description": "success or failed"}},
    }
    tool = Tool("ForgotPassword", "api_bank", output_parameters=output)
    assert {
        mock_result(tool, {"status": "Forgot Password"}, random.Random(s))[0]["status"] for s in range(12)
    } == {"success"}


def test_bounds_at_the_edges_of_numbers_and_the_calendar_bound_nothing() -> None:
    # A hostile or careless call: bounds no value fits between, or none can be drawn near.
    from fms_dgt.core.tools.engines._agreement import within_bounds

    rng = random.Random(1)  # (names are plain: "pricegte" is price_gte)
    assert within_bounds({"pricegte": 1e308}, "price", False, rng) is None
    assert within_bounds({"triesgte": 1e308}, "tries", True, rng) is None
    assert within_bounds({"startdategte": "9999-12-31T23:00:00Z"}, "startdate", False, rng) is None
    assert within_bounds({"startdatelte": "0001-01-01T00:00:00Z"}, "startdate", False, rng) is None
    assert within_bounds({"pricemin": "cheap"}, "price", False, rng) is None
    assert within_bounds({"pricegte": 10**400}, "price", False, rng) is None  # was OverflowError
    mixed = {"startdategte": "2024-01-01T00:00+05:00", "startdatelte": "2024-01-05"}  # was TypeError
    assert str(within_bounds(mixed, "startdate", False, rng)).startswith("2024-01-0")
    assert within_bounds(
        {"startdategte": "yesterday", "startdatelte": "2024-01-05"}, "startdate", False, rng
    ) in {"2024-01-02", "2024-01-03", "2024-01-04", "2024-01-05"}  # written like the bound that was read
    assert within_bounds({"pricemin": 10, "pricemax": 20}, "price", False, rng) is not None  # (they are read)


def test_a_place_searched_for_is_the_place_answered_for() -> None:
    # WeatherAPI's forecast for q="Paris" answered for Beijing, China.
    location = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "country": {"type": "string"}},
        "required": ["name", "country"],
    }
    output = {"type": "object", "properties": {"location": location}, "required": ["location"]}
    query = {"type": "object", "properties": {"q": {"type": "string"}, "days": {"type": "integer"}}}
    tool = Tool("Forecast_Weather_API", "n", parameters=query, output_parameters=output)
    for seed in range(8):
        found = mock_result(tool, {"q": "Paris", "days": 3}, random.Random(seed))[0]["location"]
        assert found["name"].startswith("Paris") and found["country"] == "France", found


def test_a_log_holds_the_messages_the_call_gave() -> None:
    # BFCL's display_log(messages=[...]) answered {"log": ["atlas-25"]}.
    output = {"type": "object", "properties": {"log": {"type": "array", "items": {"type": "string"}}}}
    messages = {"type": "object", "properties": {"messages": {"type": "array", "items": {"type": "string"}}}}
    tool = Tool("display_log", "vehicle", parameters=messages, output_parameters=output)
    given = ["Hello / Bonjour!", "Engine started."]
    for seed in range(6):
        assert set(mock_result(tool, {"messages": given}, random.Random(seed))[0]["log"]) <= set(given)


def test_a_yes_or_no_that_says_the_call_worked_says_yes() -> None:
    # glaive's add_contact answered added_status false, a Spotify overview status false with an
    # errorId, in records that passed both off as done
    added = Tool(
        "add_contact",
        "g",
        parameters={"type": "object", "properties": {"name": {"type": "string"}}},
        output_parameters={"type": "object", "properties": {"added_status": {"type": "boolean"}}},
    )
    found = Tool(
        "Spotify_Get_Artist_Overview",
        "n",
        parameters={"type": "object", "properties": {"id": {"type": "string"}}},
        output_parameters={
            "type": "object",
            "properties": {
                "status": {"type": "boolean"},
                "errorId": {"type": "string"},
                "verified": {"type": "boolean"},
            },
        },
    )
    verified = set()
    for seed in range(12):
        assert mock_result(added, {"name": "Ann"}, random.Random(seed))[0]["added_status"] is True
        overview = mock_result(found, {"id": "x"}, random.Random(seed))[0]
        assert overview["status"] is True and not overview.get("errorId")
        verified.add(overview["verified"])
    assert verified == {True, False}  # a yes-or-no that says nothing of the call stays free
    # a lookup's state found is either: a door's lock status is no sign the lookup worked
    door = Tool(
        "get_door_status",
        "car",
        parameters={"type": "object", "properties": {}},
        output_parameters={"type": "object", "properties": {"lock_status": {"type": "boolean"}}},
    )
    assert {mock_result(door, {}, random.Random(seed))[0]["lock_status"] for seed in range(12)} == {
        True,
        False,
    }


def test_a_things_id_is_not_given_to_the_things_it_holds() -> None:
    # PeerTube's getVideo(id=25084) gave its account, channel and category the id 25084; Up's
    # transaction named its account by the transaction's id
    def obj(**props: Any) -> dict[str, Any]:
        return {"type": "object", "properties": props, "required": list(props)}

    integer = {"type": "integer"}
    video = Tool(
        "getVideo",
        "peertube",
        parameters=obj(id=integer),
        output_parameters=obj(id=integer, account=obj(id=integer), channel=obj(id=integer)),
    )
    made = mock_result(video, {"id": 25084}, random.Random(1))[0]
    assert made["id"] == 25084 and 25084 not in (made["account"]["id"], made["channel"]["id"])
    text = {"type": "string"}
    linked = obj(id=text, relationships=obj(account=obj(data=obj(id=text))))
    transaction = Tool(
        "get_transactions_by_id", "up", parameters=obj(id=text), output_parameters=obj(data=linked)
    )
    data = mock_result(transaction, {"id": "txn-123"}, random.Random(1))[0]["data"]
    assert data["id"] == "txn-123"  # an envelope's id is the call's thing
    assert data["relationships"]["account"]["data"]["id"].startswith("acc")


def test_listed_items_belong_to_what_the_call_named_and_take_the_states_it_asked_for() -> None:
    # Airflow's get_task_instances(dag_id=...) listed task instances of other DAGs, and a listing
    # of failed runs held successful ones
    item = {
        "type": "object",
        "properties": {
            "dag_id": {"type": "string"},
            "task_id": {"type": "string"},
            "state": {"type": "string"},
        },
        "required": ["dag_id", "task_id", "state"],
    }
    tool = Tool(
        "get_task_instances",
        "airflow",
        parameters={
            "type": "object",
            "properties": {
                "dag_id": {"type": "string"},
                "state": {"type": "array", "items": {"type": "string"}},
            },
        },
        output_parameters={
            "type": "object",
            "properties": {"task_instances": {"type": "array", "items": item, "minItems": 3}},
            "required": ["task_instances"],
        },
    )
    for seed in range(5):
        listed = mock_result(tool, {"dag_id": "dag-42", "state": ["failed", "queued"]}, random.Random(seed))[
            0
        ]
        items = listed["task_instances"]
        assert {i["dag_id"] for i in items} == {"dag-42"}
        assert {i["state"] for i in items} <= {"failed", "queued"}
        assert len({i["task_id"] for i in items}) == len(items)  # the items themselves are others


def test_a_flag_that_is_off_has_no_reason_and_nothing_is_updated_before_it_was_created() -> None:
    # PeerTube's videos said blacklisted: false with a blacklistedReason, and were updated before
    # they were created
    out = {
        "type": "object",
        "properties": {
            "blacklisted": {"type": "boolean"},
            "blacklistedReason": {"type": ["string", "null"]},
            "deleted": {"type": "boolean"},
            "deletedAt": {"type": "string", "format": "date-time"},
            "createdAt": {"type": "string", "format": "date-time"},
            "updatedAt": {"type": "string", "format": "date-time"},
        },
        "required": ["blacklisted", "blacklistedReason", "deleted", "createdAt", "updatedAt"],
    }
    tool = Tool(
        "getVideo", "peertube", parameters={"type": "object", "properties": {}}, output_parameters=out
    )
    flags = set()
    for seed in range(16):
        made = mock_result(tool, {}, random.Random(seed))[0]
        flags.add(made["blacklisted"])
        assert (made["blacklistedReason"] is None) == (not made["blacklisted"]), made
        assert made["deleted"] or "deletedAt" not in made, made
        assert made["createdAt"] <= made["updatedAt"], made
    assert flags == {True, False}


def test_an_action_answers_with_no_input_it_was_not_given() -> None:
    # the demo's uploadPhoto without a caption answered with one, and the answer reported it
    inputs = {
        "type": "object",
        "properties": {
            "petId": {"type": "string"},
            "file": {"type": "string"},
            "caption": {"type": "string"},
        },
        "required": ["petId", "file"],
    }
    out = {"type": "object", "properties": {"filename": {"type": "string"}, "caption": {"type": "string"}}}
    upload = Tool("uploadPhoto", "petstore", parameters=inputs, output_parameters=out)
    for seed in range(6):
        assert (
            "caption" not in mock_result(upload, {"petId": "pet-1", "file": "a.png"}, random.Random(seed))[0]
        )
        given = {"petId": "pet-1", "file": "a.png", "caption": "Asleep on the sofa"}
        assert mock_result(upload, given, random.Random(seed))[0]["caption"] == "Asleep on the sofa"
    lookup = Tool("getPhoto", "petstore", parameters=inputs, output_parameters=out)
    assert any("caption" in mock_result(lookup, {"petId": "pet-1"}, random.Random(s))[0] for s in range(6))


def test_the_object_an_argument_names_is_that_one() -> None:
    # Canada holidays: Province(provinceId="NB") answered for province "MB"
    def obj(**props: Any) -> dict[str, Any]:
        return {"type": "object", "properties": props, "required": list(props)}

    text = {"type": "string"}
    tool = Tool(
        "Province",
        "holidays",
        parameters=obj(provinceId=text),
        output_parameters=obj(province=obj(id=text, name=text)),
    )
    for seed in range(4):
        assert mock_result(tool, {"provinceId": "NB"}, random.Random(seed))[0]["province"]["id"] == "NB"
    # at the top, or inside an envelope, the tool's own thing: PeerTube's playlist 37996 came back
    # as playlist 97537
    for output in (obj(id=text, displayName=text), obj(data=obj(id=text))):
        playlist = Tool(
            "getVideoPlaylist", "peertube", parameters=obj(playlistId=text), output_parameters=output
        )
        for seed in range(4):
            made = mock_result(playlist, {"playlistId": "37996"}, random.Random(seed))[0]
            assert made.get("id", made.get("data", {}).get("id")) == "37996", made


def test_what_is_new_is_at_most_the_total() -> None:
    # NESTFUL's COVID statistics: newDeaths 2,163 and totalDeaths 162
    names = ("newDeaths", "totalDeaths", "newlyConfirmedCases", "totalConfirmedCases")
    out = {"type": "object", "properties": {n: {"type": "number"} for n in names}, "required": list(names)}
    tool = Tool("GetStats", "n", parameters={"type": "object", "properties": {}}, output_parameters=out)
    for seed in range(10):
        stats = mock_result(tool, {}, random.Random(seed))[0]
        assert stats["newDeaths"] <= stats["totalDeaths"], stats
        assert stats["newlyConfirmedCases"] <= stats["totalConfirmedCases"], stats
    quote = {n: {"type": "number"} for n in ("Bid Price", "Ask Price")}
    rate = Tool("CURRENCY_EXCHANGE_RATE", "n", output_parameters={"type": "object", "properties": quote})
    for seed in range(10):
        said = mock_result(rate, {}, random.Random(seed))[0]
        assert said["Bid Price"] <= said["Ask Price"], said


def test_every_reason_of_many_flags_that_are_off_goes() -> None:
    # a hostile schema of 20,000 flags, each with its reason (read in one pass, not one per flag)
    from fms_dgt.core.tools.engines._agreement import flags_hold_their_details

    value: dict[str, Any] = {f"f{i}": False for i in range(20_000)}
    value.update({f"f{i}Reason": "x" for i in range(20_000)})
    schema = {"type": "object", "properties": {k: {"type": ["string", "null"]} for k in value}}
    flags_hold_their_details(value, schema)
    assert all(value[f"f{i}Reason"] is None for i in range(20_000))
