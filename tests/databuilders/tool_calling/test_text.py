"""The offline writer on real tools: requests from purposes, answers in words, links only with wiring."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from databuilders.tool_calling.plans import TOOLSETS, corpus_tools, make_plan

from fms_dgt.config import load_config
from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.databuilders.tool_calling.checks import (
    _stated_values,
    _without,
    implementation_notes,
    json_dump,
    linking_phrases,
    offline_check,
)
from fms_dgt.databuilders.tool_calling.job import GenerationJob
from fms_dgt.databuilders.tool_calling.phrases import error_words
from fms_dgt.databuilders.tool_calling.plan import PlannedCall, RecordPlan, Wire
from fms_dgt.databuilders.tool_calling.text import (
    LLMText,
    RecordText,
    TemplateText,
    TextWriter,
    make_text_writer,
)
from fms_dgt.errors import DGTError

REPO = Path(__file__).resolve().parents[3]
DEMO = REPO / "configs" / "demo.yaml"
WRITER = TemplateText()


@pytest.fixture(scope="module")
def demo_tools() -> Iterator[list[Tool]]:
    """Every tool of the demo config (its MCP server included)."""
    registry = ToolRegistry.from_config(load_config(DEMO))
    try:
        yield registry.tools()
    finally:
        registry.close()


def _written(tools: list[Tool], count: int = 1000) -> list[tuple[RecordPlan, RecordText]]:
    plans = [make_plan(tools, i, random.Random(i)) for i in range(count)]
    return [(p, WRITER.write(p, random.Random(p.index))) for p in plans]


def distinct_share(texts: list[str]) -> float:
    return len(set(texts)) / len(texts)


def distinct_2(texts: list[str]) -> float:
    """Distinct word bigrams over all word bigrams."""
    bigrams = [pair for t in texts for pair in zip(t.lower().split(), t.lower().split()[1:], strict=False)]
    return len(set(bigrams)) / len(bigrams)


def _assert_training_grade(written: list[tuple[RecordPlan, RecordText]]) -> None:
    users = [t.user for _, t in written]
    assert distinct_share(users) >= 0.98
    assert distinct_2(users) >= 0.15
    for plan, text in written:
        assert not json_dump(text.final), text.final
        # A value the user gives is theirs, not a note ('json' of a format listed as 'json' or 'xml').
        given = [v for c in plan.calls for v in _stated_values(c.given) if len(v) >= 3]
        assert not implementation_notes(_without(text.user, given)), text.user
        links = linking_phrases(text.user)
        if any(c.wired for c in plan.calls):
            assert links, f"a wired call is asked for without saying so: {text.user}"
        else:
            assert not links, f"calls linked with no value flowing: {text.user}"
        verdict = offline_check(plan, text)
        assert verdict.ok, (verdict.reason, text.user)


def test_demo_tools_give_training_grade_text(demo_tools: list[Tool]) -> None:
    written = _written(demo_tools)
    _assert_training_grade(written)
    kinds = {p.kind for p, _ in written}
    assert kinds == {"calls", "irrelevant", "missing_value"}, "every kind of record was written"
    assert any(any(c.wired for c in p.calls) for p, _ in written), "some requests were wired"


@pytest.mark.corpus
@pytest.mark.parametrize("relative", TOOLSETS)
def test_corpus_tools_give_training_grade_text(corpus: Path, relative: str) -> None:
    _assert_training_grade(_written(corpus_tools(corpus, relative)))


def test_the_same_seed_writes_the_same_text(demo_tools: list[Tool]) -> None:
    plan = make_plan(demo_tools, 7, random.Random(7))
    first = TemplateText().write(plan, random.Random(1))
    assert TemplateText().write(plan, random.Random(1)) == first
    others = {TemplateText().write(plan, random.Random(seed)).user for seed in range(20)}
    assert len(others) > 10, "the rng picks among phrasings"


def _weather() -> tuple[Tool, Tool]:
    registry = ToolRegistry.from_file(REPO / "data" / "weather_tools.yaml")
    geocode = registry.get("weather_api::geocode_city")
    weather = next(
        t for t in registry.overloads("weather_api::get_weather") if "latitude" in t.parameters["properties"]
    )
    return geocode, weather


def _call(
    tool: Tool, args: dict[str, object], result: object = None, error: str | None = None, **kw: object
) -> PlannedCall:
    call = ToolCall(tool.qualified_name, args, f"call_{tool.name}")
    planned = PlannedCall(tool=tool, call=call, given=dict(args), **kw)  # type: ignore[arg-type]
    planned.result = ToolResult(call.call_id, call.name, result=result, error=error)
    return planned


def test_a_chain_says_the_value_flows_and_the_answer_reads_as_sentences() -> None:
    geocode, weather = _weather()
    first = _call(geocode, {"city": "Lisbon"}, {"latitude": 38.72, "longitude": -9.14})
    second = _call(
        weather,
        {"latitude": 38.72, "longitude": -9.14, "units": "metric"},
        {"temperature": 21.5, "condition": "clear"},
    )
    second.given = {"units": "metric"}
    second.wired = {
        "latitude": Wire("weather_api::geocode_city", "latitude"),
        "longitude": Wire("weather_api::geocode_city", "longitude"),
    }
    plan = RecordPlan(index=0, scenario="chain", offered=[geocode, weather], steps=[[first], [second]])
    for seed in range(30):
        text = WRITER.write(plan, random.Random(seed))
        assert "Lisbon" in text.user and "metric" in text.user and "38.72" not in text.user
        assert linking_phrases(text.user), text.user
        said = text.final.replace(" is ", " ").replace("the ", "")
        assert "it's 21.5 °C and clear" in said and "latitude 38.72" in said, said
        assert not json_dump(text.final)


def test_temperatures_are_said_in_the_unit_the_call_asked_for() -> None:
    _, weather = _weather()
    thermostat = Tool(
        "set_thermostat",
        "home",
        description="Set the thermostat.",
        parameters={"type": "object", "properties": {"temperature": {"type": "number"}}},
    )
    cases = [
        (weather, {"latitude": 1.0, "longitude": 2.0, "units": "imperial"}, " °F"),
        (weather, {"latitude": 1.0, "longitude": 2.0, "units": "metric"}, " °C"),
        (weather, {"latitude": 1.0, "longitude": 2.0}, " °C"),
        (weather, {"latitude": 1.0, "longitude": 2.0, "units": "standard"}, ""),  # Kelvin: not said
        (thermostat, {"temperature": 21}, ""),  # a setting, not the weather
    ]
    for tool, arguments, unit in cases:
        call = _call(tool, arguments, {"temperature": 21.5})
        plan = RecordPlan(index=0, scenario="single", offered=[tool], steps=[[call]])
        for seed in range(10):
            final = WRITER.write(plan, random.Random(seed)).final
            assert f"21.5{unit}" in final, (arguments, final)
            assert ("°" in final) == bool(unit.strip()), final


def test_a_listed_result_after_a_colon_is_not_a_second_colon() -> None:
    search = Tool(
        "SearchEngine",
        "api_bank",
        description="Search for documents.",
        parameters={"type": "object", "properties": {"keyword": {"type": "string"}}},
    )
    found = {"documents": ["budget_2026.pdf", "plan_2026.docx"]}
    lookup = Tool(
        "get_folder",
        "files",
        description="Get a folder.",
        parameters={"type": "object", "properties": {"name": {"type": "string"}}},
    )
    for tool in (search, lookup):
        plan = RecordPlan(
            index=0, scenario="x", offered=[tool], steps=[[_call(tool, {"keyword": "budget"}, found)]]
        )
        for seed in range(20):
            final = WRITER.write(plan, random.Random(seed)).final
            assert "budget_2026.pdf" in final, final
            assert not any(part.count(": ") > 1 for part in final.split(". ")), final


def test_a_value_that_picks_one_of_the_purposes_alternatives_settles_it() -> None:
    convert = Tool(
        "convert_temperature",
        "demo",
        description="Convert a temperature to Celsius or Fahrenheit (the input is in the other unit).",
        parameters={
            "type": "object",
            "properties": {"value": {"type": "number"}, "to": {"enum": ["celsius", "fahrenheit"]}},
            "required": ["value", "to"],
        },
    )
    call = _call(convert, {"value": 24.0, "to": "fahrenheit"}, {"value": 75.2, "unit": "fahrenheit"})
    plan = RecordPlan(index=0, scenario="single", offered=[convert], steps=[[call]])
    for seed in range(30):
        text = WRITER.write(plan, random.Random(seed))
        assert "to fahrenheit" in text.user and "Celsius or Fahrenheit" not in text.user, text.user
        assert "24" in text.user
        assert "Celsius or Fahrenheit" not in text.final, text.final
    # A request no offered tool serves is declined in its own words.
    stated = {"value": 35.25, "to": "fahrenheit"}
    declined = RecordPlan(
        index=1, scenario="single", offered=[], kind="irrelevant", topic=convert, stated=stated
    )
    for seed in range(30):
        text = WRITER.write(declined, random.Random(seed))
        assert "to fahrenheit" in text.user and "to fahrenheit" in text.final, (text.user, text.final)
        assert "Celsius or Fahrenheit" not in text.final, text.final


def test_a_value_that_ends_a_sentence_gets_one_full_stop() -> None:
    geocode, weather = _weather()
    call = _call(weather, {"latitude": 1.5, "longitude": 2.5}, {"condition": "Clear skies. Light wind."})
    plan = RecordPlan(index=0, scenario="x", offered=[geocode, weather], steps=[[call]])
    finals = [WRITER.write(plan, random.Random(seed)).final for seed in range(40)]
    assert all("Light wind" in f for f in finals)
    assert not [f for f in finals if ".." in f], "a full stop doubled after the value"


def test_parallel_calls_read_as_one_request() -> None:
    geocode, weather = _weather()
    step = [_call(geocode, {"city": "Lisbon"}, {}), _call(weather, {"latitude": 1.5, "longitude": 2.5}, {})]
    plan = RecordPlan(index=0, scenario="pair", offered=[geocode, weather], steps=[step])
    for seed in range(30):
        user = WRITER.write(plan, random.Random(seed)).user
        request = next(s for s in user.replace("!", ".").split(". ") if "Lisbon" in s)
        assert "1.5, 2.5" in request, "both calls are in one sentence"
        assert not linking_phrases(user)


def test_failures_are_acknowledged_with_what_the_service_said() -> None:
    geocode, _ = _weather()
    failed = _call(geocode, {"city": "Lisbon"}, error='HTTP 503: {"error": {"message": "geocoder is down"}}')
    plan = RecordPlan(index=0, scenario="x", offered=[geocode], steps=[[failed]])
    finals = [WRITER.write(plan, random.Random(seed)).final for seed in range(20)]
    assert all("geocoder is down" in f and "look up the coordinates" in f for f in finals)
    assert all(not json_dump(f) for f in finals)
    assert error_words(failed.result.error or "") == "geocoder is down"  # type: ignore[union-attr]


def test_confirmations_say_the_values_and_follow_the_approval() -> None:
    registry = ToolRegistry.from_file(REPO / "data" / "weather_tools.yaml")
    create = registry.get("calendar::create_event")
    args = {"title": "Team sync", "start": "2026-05-04T10:30:00Z"}
    approved = _call(create, args, {"event_id": "ev-1"}, approval="approved")
    declined = _call(create, args, approval="declined")
    declined.result = None
    for seed in range(20):
        rng = random.Random(seed)
        yes = WRITER.write(RecordPlan(index=0, scenario="x", offered=[create], steps=[[approved]]), rng)
        exchange = yes.confirmations["call_create_event"]
        assert '"Team sync"' in exchange.question and "2026" in exchange.question
        assert exchange.reply.lower().startswith(
            ("yes", "confirmed", "sure", "that's right", "go for it", "yep")
        )
        assert "ev-1" in yes.final
        no = WRITER.write(RecordPlan(index=0, scenario="x", offered=[create], steps=[[declined]]), rng)
        assert (
            no.confirmations["call_create_event"]
            .reply.lower()
            .startswith(("no", "actually", "hold", "let's", "on second"))
        )
        assert any(w in no.final for w in ("didn't", "won't", "did not", "haven't")), no.final


def test_irrelevant_requests_are_declined_with_what_the_tools_can_do() -> None:
    geocode, weather = _weather()
    registry = ToolRegistry.from_file(REPO / "data" / "weather_tools.yaml")
    topic = registry.get("calendar::create_event")
    plan = RecordPlan(index=0, scenario="x", kind="irrelevant", offered=[geocode, weather], topic=topic)
    for seed in range(20):
        text = WRITER.write(plan, random.Random(seed))
        assert "calendar event" in text.user
        assert "create a calendar event" in text.final
        assert "look up the coordinates" in text.final and "get the current weather" in text.final
        assert offline_check(plan, text).ok


def test_missing_values_are_asked_for_in_words() -> None:
    _, weather = _weather()
    plan = RecordPlan(
        index=0, scenario="x", kind="missing_value", offered=[weather], missing=(weather, "latitude")
    )
    for seed in range(20):
        text = WRITER.write(plan, random.Random(seed))
        assert "latitude" not in text.user and "longitude" in text.user
        assert "latitude" in text.final and "?" in text.final


def test_a_missing_choice_is_asked_for_with_its_choices() -> None:
    unit = {"type": "string", "enum": ["celsius", "fahrenheit"]}
    convert = Tool(
        "convert_temperature",
        "demo",
        description="Convert a temperature to Celsius or Fahrenheit.",
        parameters={
            "type": "object",
            "properties": {"value": {"type": "number"}, "to": unit},
            "required": ["value", "to"],
        },
    )
    plan = RecordPlan(index=0, scenario="x", kind="missing_value", offered=[convert], missing=(convert, "to"))
    for seed in range(20):
        final = WRITER.write(plan, random.Random(seed)).final
        assert "celsius or fahrenheit?" in final and "the to" not in final, final
        assert final[0].isupper() and final.count("?") == 1, final


def test_a_no_call_plan_without_its_subject_is_an_error() -> None:
    with pytest.raises(DGTError, match="has no topic or missing value"):
        WRITER.write(RecordPlan(index=3, scenario="x", kind="irrelevant"), random.Random(0))


def test_unwired_steps_are_not_linked_and_a_failure_is_said() -> None:
    geocode, weather = _weather()
    first = PlannedCall(tool=geocode, call=ToolCall(geocode.qualified_name, {"city": "Oslo"}, "c0"))
    first.given = {"city": "Oslo"}
    first.result = ToolResult("c0", geocode.qualified_name, result={"latitude": 59.9})
    second = PlannedCall(
        tool=weather, call=ToolCall(weather.qualified_name, {"latitude": 1, "longitude": 2}, "c1")
    )
    second.result = ToolResult("c1", weather.qualified_name, error="timeout")
    plan = RecordPlan(index=0, scenario="t", offered=[geocode, weather], steps=[[first], [second]])
    text = TemplateText().write(plan, random.Random(0))
    assert "Oslo" in text.user and not linking_phrases(text.user)
    assert (
        "the latitude is 59.9" in text.final and "timeout" in text.final and "current weather" in text.final
    )


def test_the_config_picks_the_writer_and_both_writers_conform() -> None:
    template = make_text_writer({"type": "template"})
    assert isinstance(template, TemplateText) and isinstance(template, TextWriter)
    writer = make_text_writer({"type": "llm", "base_url": "http://127.0.0.1:9/v1", "model": "m"})
    assert isinstance(writer, LLMText) and isinstance(writer, TextWriter)
    writer.close()  # type: ignore[attr-defined]


def test_the_demo_run_writes_no_json_answers_and_no_notes(tmp_path: Path) -> None:
    with GenerationJob(DEMO, count=40, out=tmp_path, overwrite=True) as job:
        assert job.run().written == 40
    records = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    for record in records:
        user, final = record["messages"][0]["content"], record["messages"][-1]["content"]
        assert not implementation_notes(user) and "other cities get" not in user, user
        assert not json_dump(final) and "Here is what I found:" not in final, final


def test_a_no_call_request_states_the_realistic_values_made_for_it(tmp_path: Path) -> None:
    """The values a no-call request states are the ones the executor made from the record's
    context (a pet's id, a photo's file name), not plain synthesis (``petid-1992``, ``signal-143``)."""
    stated = 0
    with GenerationJob(DEMO, count=300, out=tmp_path, overwrite=True) as job:
        for index in range(300):
            record = job.build(index)
            plan = record.plan
            if plan.kind == "calls" or not plan.stated:
                continue
            user = record.messages[0].content
            for value in plan.stated.values():
                if isinstance(value, str) and not value[:4].isdigit():  # dates are said in words
                    assert value in user, (value, user)
                    stated += 1
    assert stated >= 5


def test_an_actions_bare_count_is_left_out_of_the_answer_and_its_fields_are_not() -> None:
    note = Tool(
        "add_note",
        "demo",
        description="Store a note; returns how many notes there are.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
    )
    for result, said in (({"result": 3}, None), ({"id": "note-7", "result": 3}, "note-7")):
        plan = RecordPlan(
            index=0, scenario="single", offered=[note], steps=[[_call(note, {"text": "Call Ana"}, result)]]
        )
        for seed in range(10):
            final = WRITER.write(plan, random.Random(seed)).final
            assert "note" in final.lower(), final
            if said is None:
                assert "3" not in final, final  # "I've stored a note; result 3" said nothing
            else:
                assert said in final, final  # a result with more than the count is still said


def test_a_number_computed_from_numbers_is_said_not_taken_for_a_count() -> None:
    # add(a, b) answers {"result": 64.35}: that number is what the user asked for ("I've added
    # two numbers." alone hid it), unlike add_note's count of the notes it keeps.
    numbers = {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}
    add = Tool("add", "calc", description="Add two numbers.", parameters=numbers)
    for arguments, result, said in (({"a": 26.55, "b": 37.8}, 64.35, "64.35"), ({"a": 2, "b": 3}, 5, "5")):
        plan = RecordPlan(
            index=0, scenario="single", offered=[add], steps=[[_call(add, arguments, {"result": result})]]
        )
        for seed in range(10):
            final = WRITER.write(plan, random.Random(seed)).final
            assert "added two numbers" in final and said in final, final


def test_a_looked_up_list_is_said_in_a_sentence() -> None:
    # "The daily forecast; there are 2 days: ..." was one of the answer's phrasings: a topic
    # followed by a semicolon is no sentence, where "For the daily forecast, there are ..." is.
    forecast = Tool(
        "get_forecast",
        "weather_api",
        description="Get the daily forecast for a location.",
        parameters={"type": "object", "properties": {"days": {"type": "integer"}}},
    )
    days = {"days": [{"date": "2026-03-02", "high": 9.5}, {"date": "2026-03-03", "high": 11.0}]}
    plan = RecordPlan(
        index=0, scenario="single", offered=[forecast], steps=[[_call(forecast, {"days": 2}, days)]]
    )
    said = set()
    for seed in range(40):
        final = WRITER.write(plan, random.Random(seed)).final
        assert "forecast; there" not in final.lower() or "looked up" in final.lower(), final
        said.add(final.split(" there ")[0])
    assert len(said) >= 2  # still more than one phrasing


def test_a_result_that_is_only_what_was_asked_for_is_said_once() -> None:
    # QueryStock answers {"stock_price": 404.1}: "I queried the stock price; the stock price is
    # 404.1" said it twice.
    stock = Tool(
        "QueryStock",
        "api_bank",
        description="Query the stock price of a given stock code on a date.",
        parameters={"type": "object", "properties": {"stock_code": {"type": "string"}}},
    )
    plan = RecordPlan(
        index=0,
        scenario="single",
        offered=[stock],
        steps=[[_call(stock, {"stock_code": "MSFT"}, {"stock_price": 404.1})]],
    )
    for seed in range(20):
        final = WRITER.write(plan, random.Random(seed)).final
        assert "404.1" in final and final.lower().count("stock price") == 1, final


def test_every_call_of_a_later_step_that_takes_an_earlier_value_says_which() -> None:
    # createPet's name goes to a document search and its id to getPet, both in the next step:
    # the search's keyword must not come from nowhere.
    pet = {"type": "object", "properties": {"name": {"type": "string"}, "id": {"type": "string"}}}
    create = Tool("createPet", "petstore", description="Add a pet.", parameters=pet, output_parameters=pet)
    get = Tool("getPet", "petstore", description="Find a pet by ID.", parameters=pet)
    search = Tool(
        "SearchEngine",
        "api_bank",
        description="Search for documents.",
        parameters={"type": "object", "properties": {"keyword": {"type": "string"}}},
    )
    first = _call(create, {"name": "Lola"}, {"id": "pet-1", "name": "Lola"})
    looked = _call(get, {"id": "pet-1"}, {"id": "pet-1", "name": "Lola"})
    looked.given, looked.wired = {}, {"id": Wire("petstore::createPet", "id")}
    searched = _call(search, {"keyword": "Lola"}, {"documents": ["lola.pdf"]})
    searched.given, searched.wired = {}, {"keyword": Wire("petstore::createPet", "name")}
    plan = RecordPlan(
        index=0, scenario="dag", offered=[create, get, search], steps=[[first], [looked, searched]]
    )
    for seed in range(20):
        user = WRITER.write(plan, random.Random(seed)).user
        assert "the id" in user.lower() and "the name" in user.lower(), user


def test_a_value_taken_from_a_list_says_it_is_the_first_items() -> None:
    # "List pets, then take the ID and remove a pet": which pet? The wire reads the first item.
    pet = {"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}}}
    listing = Tool(
        "listPets",
        "petstore",
        description="List all pets.",
        parameters={"type": "object", "properties": {}},
        output_parameters={"type": "array", "items": pet},
    )
    delete = Tool(
        "deletePet",
        "petstore",
        description="Delete a pet.",
        parameters={"type": "object", "properties": {"petId": {"type": "string"}}},
    )
    first = _call(listing, {}, [{"id": "pet-1", "name": "Lola"}, {"id": "pet-2", "name": "Rex"}])
    removed = _call(delete, {"petId": "pet-1"}, {"petId": "pet-1", "status": "deleted"})
    removed.given, removed.wired = {}, {"petId": Wire("petstore::listPets", "[].id")}
    plan = RecordPlan(index=0, scenario="chain", offered=[listing, delete], steps=[[first], [removed]])
    for seed in range(20):
        user = WRITER.write(plan, random.Random(seed)).user
        assert "the first pet" in user.lower(), user  # which pet: the listing's first


def test_a_call_given_no_values_does_not_promise_them() -> None:
    # API-Bank's HotelAvailability, all of its arguments optional and none given: the request is
    # not "check hotel availability based on the destination and travel dates".
    schema = {"type": "object", "properties": {"destination": {"type": "string"}}}
    tool = Tool(
        "HotelAvailability",
        "apibank",
        description="API for checking hotel availability based on the destination and travel dates.",
        parameters=schema,
    )
    plan = RecordPlan(index=0, scenario="k1", offered=[tool], steps=[[_call(tool, {}, {"hotels": []})]])
    for seed in range(20):
        user = WRITER.write(plan, random.Random(seed)).user
        assert "hotel availability" in user and "destination" not in user, user


def test_a_long_text_named_by_the_object_is_quoted() -> None:
    # Airflow: "change the TaskInstance note Running about ten minutes late, see you at the entrance."
    schema = {"type": "object", "properties": {"note": {"type": "string"}}}
    tool = Tool(
        "set_task_instance_note", "airflow", description="Update the TaskInstance note.", parameters=schema
    )
    note = "Running about ten minutes late, see you at the entrance."
    plan = RecordPlan(index=0, scenario="k1", offered=[tool], steps=[[_call(tool, {"note": note}, {})]])
    for seed in range(10):
        user = WRITER.write(plan, random.Random(seed)).user
        assert f'"{note.rstrip(".")}' in user, user


def test_an_action_with_no_body_says_which_thing_it_acted_on() -> None:
    # PeerTube's and the petstore's deletes answer nothing: "I've removed a pet." said no more.
    schema = {"type": "object", "properties": {"petId": {"type": "string"}, "apiKey": {"type": "string"}}}
    delete = Tool("deletePet", "petstore", description="Delete a pet.", parameters=schema)
    call = _call(delete, {"petId": "pet-80016", "apiKey": "s3cr3t-k3y"}, None)
    plan = RecordPlan(index=0, scenario="k1", offered=[delete], steps=[[call]])
    for seed in range(10):
        final = WRITER.write(plan, random.Random(seed)).final
        assert "pet-80016" in final and "s3cr3t" not in final, final


def test_an_action_with_no_body_names_the_thing_as_the_record_named_it() -> None:
    # "Add a pet for Daisy. Then delete that pet." was answered "I've removed a pet with the pet
    # ID pet-98325": the record had just named it Daisy.
    pet = {"type": "object", "properties": {"name": {"type": "string"}, "petId": {"type": "string"}}}
    add = Tool("addPet", "petstore", description="Add a pet.", parameters=pet, output_parameters=pet)
    owned = {"type": "object", "properties": {"petId": {"type": "string"}}}
    delete = Tool("deletePet", "petstore", description="Delete a pet.", parameters=owned)
    added = _call(add, {"name": "Daisy"}, {"id": "pet-98325", "name": "Daisy", "owner_id": "pet-1"})
    plan = RecordPlan(
        index=0,
        scenario="k2",
        offered=[add, delete],
        steps=[[added], [_call(delete, {"petId": "pet-98325"}, None)]],
    )
    finals = {WRITER.write(plan, random.Random(seed)).final for seed in range(12)}
    assert all(re.search(r"I've (?:deleted|removed) (?:the pet )?Daisy\.", f) for f in finals), finals
    # another thing's id is no name of this one: an owner's id names no pet
    other = RecordPlan(
        index=0,
        scenario="k2",
        offered=[add, delete],
        steps=[[added], [_call(delete, {"petId": "pet-1"}, None)]],
    )
    for seed in range(6):
        final = WRITER.write(other, random.Random(seed)).final
        assert "pet-1" in final and not re.search(r"I've (?:deleted|removed) (?:the pet )?Daisy", final)


def test_phrases_that_open_with_with_are_said_as_one() -> None:
    # NESTFUL: "with the min price at 53.88 with the max price at 127.73"
    from fms_dgt.databuilders.tool_calling.text import _joined

    said = _joined(["with the min price at 53.88", "with the max price at 127.73", "tagged work"])
    assert said == " with the min price at 53.88 and the max price at 127.73 tagged work"
    three = _joined(["with a", "with b", "with c"])
    assert three == " with a, b and c"


def test_an_answer_to_actions_alone_does_not_say_it_found_something(tmp_path: Path) -> None:
    # "Here's what I found. I've added a pet: Simba. I've removed Simba."
    acted = 0
    with GenerationJob(DEMO, count=400, out=tmp_path, overwrite=True) as job:
        for index in range(400):
            record = job.build(index)
            names = [c.call.name.split("::")[-1] for c in record.plan.calls]
            if not names or not all(re.match(r"(?:create|delete|add|update)[A-Z_]", n) for n in names):
                continue
            acted += 1
            assert not record.messages[-1].content.startswith("Here's what I found."), record.messages[-1]
    assert acted >= 10


@pytest.mark.parametrize(
    ("name", "description", "args", "said", "unsaid"),
    [
        # When2Call: "multiply two numbers: 64 and 12", "subtract one number from another: 33 and
        # 12", "compute the logarithm: 79"
        ("multiply", "Multiply two numbers.", {"a": 64, "b": 12}, "multiply 64 and 12", "numbers:"),
        ("subtract", "Subtract one number from another.", {"a": 33, "b": 12}, "12 from 33", "another:"),
        ("logarithm", "Compute the logarithm.", {"x": 79}, "the logarithm of 79", "logarithm:"),
    ],
)
def test_bare_operands_are_said_where_a_person_says_them(
    name: str, description: str, args: dict[str, object], said: str, unsaid: str
) -> None:
    number = {"type": "number"}
    properties = dict.fromkeys(args, number)
    tool = Tool(name, "w", description=description, parameters={"type": "object", "properties": properties})
    plan = RecordPlan(index=0, scenario="random", offered=[tool], steps=[[_call(tool, args, {"result": 1})]])
    for seed in range(12):
        user = WRITER.write(plan, random.Random(seed)).user
        assert said in user.lower() and unsaid not in user, user


def test_a_conversion_is_asked_for_with_its_value_and_its_two_units_as_a_person_says_them() -> None:
    # When2Call: "convert a value between imperial and SI units: 12.88 with the unit in pound for
    # unit out kilogram"
    unit = {"type": "string"}
    properties = {"value": {"type": "number"}, "unit_in": unit, "unit_out": unit}
    tool = Tool(
        "imperial_si_conversion",
        "w",
        description="Convert a value between imperial and SI units.",
        parameters={"type": "object", "properties": properties},
    )
    args = {"value": 12.88, "unit_in": "pound", "unit_out": "kilogram"}
    plan = RecordPlan(
        index=0, scenario="random", offered=[tool], steps=[[_call(tool, args, {"result": 5.84})]]
    )
    for seed in range(12):
        user = WRITER.write(plan, random.Random(seed)).user
        assert "12.88 between imperial and SI units" in user and "from pound" in user, user
        assert "to kilogram" in user and "unit in" not in user and "a value" not in user, user


@pytest.mark.parametrize(
    ("name", "asked", "unsaid"),
    [
        ("a", "", ("the a ", "the a?", "What a ", "which a ")),
        ("unit_in", "unit to convert from", ("unit in",)),
    ],
)
def test_a_missing_value_is_asked_for_by_a_name_a_person_uses(
    name: str, asked: str, unsaid: tuple[str, ...]
) -> None:
    # When2Call: "I'll need the a", "I can convert a value, but I need the unit in first"
    number = {"type": "number"}
    properties = {"a": number, "b": number, "unit_in": {"type": "string"}}
    tool = Tool(
        "convert_sum",
        "w",
        description="Add two numbers.",
        parameters={"type": "object", "properties": properties, "required": list(properties)},
    )
    plan = RecordPlan(index=0, scenario="x", kind="missing_value", offered=[tool], missing=(tool, name))
    for seed in range(12):
        final = WRITER.write(plan, random.Random(seed)).final
        assert asked in final and not any(u in final for u in unsaid), final
