"""Executing planned records (fms_dgt/databuilders/tool_calling/executor.py): wiring between calls."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from typing import Any

import pytest
from support.schemas import schema

from fms_dgt.core.tools.artifacts import Edge
from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.engines.handlers import clear_name_handlers, register_name_handler
from fms_dgt.core.tools.engines.multi import MultiToolEngine
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.core.tools.samplers.base import ToolSample
from fms_dgt.databuilders.tool_calling.config import GenerationConfig
from fms_dgt.databuilders.tool_calling.executor import RecordExecutor, _listed, call_id
from fms_dgt.databuilders.tool_calling.plan import RecordPlan
from fms_dgt.databuilders.tool_calling.planner import PlannedRecord, feeds_of, levels

_PET = {"type": "object", "properties": {"petId": {"type": "string"}}, "required": ["petId"]}
_FOUND = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
LIST = Tool(
    "listPets",
    "pets",
    description="List pets",
    output_parameters={"type": "array", "items": _FOUND},
)
GET = Tool("getPet", "pets", description="Find a pet by id", parameters=_PET, output_parameters=_FOUND)
DELETE = Tool("deletePet", "pets", description="Remove a pet", parameters=_PET)
_IDS = {"type": "array", "items": {"type": "string"}, "minItems": 1}
ADOPT = Tool(
    "adoptPets",
    "pets",
    description="Adopt several pets",
    parameters={"type": "object", "properties": {"petIds": _IDS}, "required": ["petIds"]},
)


@pytest.fixture
def executor() -> Iterator[RecordExecutor]:
    # The listing finds some other pet; looking a pet up answers with the id asked for.
    register_name_handler("pets::listPets", lambda arguments: [{"id": "pet-11111"}])
    register_name_handler("pets::getPet", lambda arguments: {"id": arguments["petId"]})
    register_name_handler("pets::deletePet", lambda arguments: {"status": "deleted"})
    register_name_handler("pets::adoptPets", lambda arguments: {"adopted": len(arguments["petIds"])})
    registry = ToolRegistry([LIST, GET, DELETE, ADOPT])
    engine = MultiToolEngine(registry)
    try:
        yield RecordExecutor(engine, GenerationConfig(seed=3))
    finally:
        engine.close()
        clear_name_handlers()


def _planned(tools: list[Tool], edges: list[Edge]) -> PlannedRecord:
    sample = ToolSample(tools, edges)
    feeds = feeds_of(sample)
    steps = levels(len(tools), feeds)
    plan = RecordPlan(index=0, scenario="dag", offered=list(tools), steps=[[] for _ in steps])
    return PlannedRecord(plan=plan, sample=sample, levels=steps, feeds=feeds, sampler="tc/dag")


def _timing() -> dict[str, Any]:
    return dict.fromkeys(("sampling", "arguments", "execution", "text", "validation", "writing"), 0.0)


def _answering(result: dict[str, Any]) -> Any:
    """A handler that answers ``result`` whatever it is called with."""
    return lambda arguments: result


def _run(tools: list[Tool], edges: list[Edge], results: dict[str, dict[str, Any]]) -> PlannedRecord:
    """One record over ``tools`` along ``edges``, each tool answering its fixed result."""
    for name, result in results.items():
        register_name_handler(name, _answering(result))
    planned = _planned(tools, edges)
    engine = MultiToolEngine(ToolRegistry(tools))
    try:
        RecordExecutor(engine, GenerationConfig(seed=3)).run(planned, random.Random(5), _timing())
    finally:
        engine.close()
        clear_name_handlers()
    return planned


def test_of_two_results_feeding_one_argument_the_one_the_record_used_wins(executor: RecordExecutor) -> None:
    # listPets and getPet run in one step; both feed deletePet's petId. The listing's first pet
    # validates too, but the record looked up another pet: deleting the listed one would make two
    # calls disagree on the pet (the record was rejected for it).
    planned = _planned(
        [LIST, GET, DELETE],
        [Edge(LIST, "[].id", DELETE, "petId", 0.9), Edge(GET, "id", DELETE, "petId", 0.8)],
    )
    context = executor.run(planned, random.Random(5), _timing())
    looked_up, deleted = planned.plan.calls[1], planned.plan.calls[2]
    assert deleted.call.arguments["petId"] == looked_up.call.arguments["petId"] != "pet-11111"
    assert deleted.wired["petId"].source == "pets::getPet"
    assert context.conflicts(planned.plan.calls) == []


def test_one_result_feeding_an_argument_is_taken_as_before(executor: RecordExecutor) -> None:
    planned = _planned([LIST, DELETE], [Edge(LIST, "[].id", DELETE, "petId", 0.9)])
    executor.run(planned, random.Random(5), _timing())
    deleted = planned.plan.calls[1]
    assert deleted.call.arguments["petId"] == "pet-11111"
    assert deleted.wired["petId"].source == "pets::listPets"


def test_one_value_wired_into_a_list_argument_is_passed_as_a_list_of_one(executor: RecordExecutor) -> None:
    # The graph may feed getPet's id into a list of pet ids (dag_id -> dag_ids in Airflow).
    planned = _planned([GET, ADOPT], [Edge(GET, "id", ADOPT, "petIds", 0.9)])
    executor.run(planned, random.Random(5), _timing())
    looked_up, adopted = planned.plan.calls
    assert adopted.call.arguments["petIds"] == [looked_up.call.arguments["petId"]]
    assert adopted.wired["petIds"].source == "pets::getPet"


def test_a_date_is_no_time_and_a_time_no_date() -> None:
    # A forecast's local date "2026-05-08" became a meeting's time (format time): the validators
    # do not assert formats, so a wired moment is checked for its shape.
    forecast = Tool("forecast", "w", output_parameters=schema(localtime="string"))
    moment = {
        "type": "object",
        "properties": {"time": {"type": "string", "format": "time"}},
        "required": ["time"],
    }
    meeting = Tool("schedule_meeting", "g", parameters=moment)
    edges = [Edge(forecast, "localtime", meeting, "time", 0.9)]
    for sent, wired in (("2026-05-08", False), ("14:30", True), ("14:30:00Z", True)):
        answers = {"w::forecast": {"localtime": sent}, "g::schedule_meeting": {"ok": True}}
        assert bool(_run([forecast, meeting], edges, answers).plan.calls[1].wired) is wired, sent


def test_one_value_from_two_results_is_not_both_ends_of_a_range() -> None:
    # When2Call: an order's price and the stock's new price, both 158.04, became a filter's
    # max_price and min_price.
    order = Tool("place_order", "w", output_parameters=schema(price="number"))
    update = Tool("update_stock_price", "w", output_parameters=schema(new_price="number"))
    bounds = schema(min_price="number", max_price="number")
    search = Tool(
        "filter_stocks_by_price", "w", parameters={**bounds, "required": ["min_price", "max_price"]}
    )
    edges = [
        Edge(order, "price", search, "max_price", 0.9),
        Edge(update, "new_price", search, "min_price", 0.9),
    ]
    answers = {"w::place_order": {"price": 158.04}, "w::update_stock_price": {"new_price": 158.04}}
    planned = _run([order, update, search], edges, {**answers, "w::filter_stocks_by_price": {"ok": True}})
    searched = planned.plan.calls[2]
    assert (
        len(searched.wired) == 1
        and searched.call.arguments["min_price"] != searched.call.arguments["max_price"]
    )


def test_a_call_takes_what_names_its_thing_and_a_value_or_two_more() -> None:
    # Airflow: a note's task instance handed its pool, execution date, start date, end date,
    # queue, duration and created date to a listing's filters, all seven.
    fields = ("dag_id", "dag_run_id", "task_id", "map_index", "pool", "queue", "duration", "hostname")
    found = Tool("set_note", "airflow", output_parameters=schema(**dict.fromkeys(fields, "string")))
    listed = Tool("get_task_instances", "airflow", parameters=schema(**dict.fromkeys(fields, "string")))
    edges = [Edge(found, f, listed, f, 0.9) for f in fields]
    answers = {
        "airflow::set_note": {f: f"{f}-1" for f in fields},
        "airflow::get_task_instances": {"ok": True},
    }
    wired = _run([found, listed], edges, answers).plan.calls[1].wired
    assert {"dag_id", "dag_run_id", "task_id", "map_index"} <= set(wired) and len(wired) == 6, wired


def test_a_number_alone_is_no_list_of_numbers() -> None:
    # glaive: add(24.21, 5.64) gave 29.85, wired into find_largest_number as numbers [29.85].
    added = Tool("add", "calc", output_parameters=schema(result="number"))
    numbers = {"type": "object", "properties": {"numbers": {"type": "array", "items": {"type": "number"}}}}
    largest = Tool("find_largest_number", "calc", parameters={**numbers, "required": ["numbers"]})
    answers = {"calc::add": {"result": 29.85}, "calc::find_largest_number": {"result": 40}}
    planned = _run([added, largest], [Edge(added, "result", largest, "numbers", 0.9)], answers)
    assert planned.plan.calls[1].wired == {}
    ids = {"type": "object", "properties": {"videoIds": {"type": "array", "items": {"type": "integer"}}}}
    found = Tool("getVideo", "tube", output_parameters=schema(id="integer"))
    listed = Tool("addToPlaylist", "tube", parameters={**ids, "required": ["videoIds"]})
    answers = {"tube::getVideo": {"id": 42}, "tube::addToPlaylist": {"ok": True}}
    planned = _run([found, listed], [Edge(found, "id", listed, "videoIds", 0.9)], answers)
    assert planned.plan.calls[1].call.arguments["videoIds"] == [42]  # an id is one of a list of ids


def test_call_ids_are_nine_characters_of_the_alphabet_by_the_digests_bytes() -> None:
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    for seed in (0, 7, 2**63 - 1, -5):
        for index in range(200):
            for position in range(4):
                digest = hashlib.sha256(f"{seed}:{index}:{position}".encode()).digest()
                expected = "".join(alphabet[b % 62] for b in digest[:9])
                assert call_id(seed, index, position) == expected


_BOOKED = {
    "type": "object",
    "properties": {"appointment_id": {"type": "string"}},
    "required": ["appointment_id"],
}
_STATUS = {"type": "object", "properties": {"status": {"type": "string"}}, "required": ["status"]}
BOOK = Tool(
    "AppointmentRegistration", "clinic", description="Register an appointment", output_parameters=_BOOKED
)
MODIFY = Tool(
    "ModifyRegistration",
    "clinic",
    description="Modify the registration of a patient given appointment ID.",
    parameters={
        "type": "object",
        "properties": {
            "appointment_id": {"type": "string"},
            "new_appointment_date": {"type": "string", "description": "The new appointment date."},
            "new_appointment_doctor": {"type": "string", "description": "The new appointment doctor."},
        },
        "required": ["appointment_id", "new_appointment_date", "new_appointment_doctor"],
    },
)
SWITCH = Tool("TimedSwitch", "home", description="Set a timed switch", output_parameters=_STATUS)
FORGOT = Tool(
    "ForgotPassword",
    "home",
    description="Sends an email to reset the password.",
    parameters={
        "type": "object",
        "properties": {
            "status": {
                "type": "string",
                "description": "'Forgot Password' for first call, then 'Verification Code' to change it.",
            }
        },
        "required": ["status"],
    },
)


@pytest.fixture
def clinic() -> Iterator[RecordExecutor]:
    register_name_handler("clinic::AppointmentRegistration", lambda arguments: {"appointment_id": "apt-123"})
    register_name_handler("clinic::ModifyRegistration", lambda arguments: {"status": "updated"})
    register_name_handler("home::TimedSwitch", lambda arguments: {"status": "completed"})
    register_name_handler("home::ForgotPassword", lambda arguments: {"status": "success"})
    engine = MultiToolEngine(ToolRegistry([BOOK, MODIFY, SWITCH, FORGOT]))
    try:
        yield RecordExecutor(engine, GenerationConfig(seed=3))
    finally:
        engine.close()
        clear_name_handlers()


def test_an_id_is_never_wired_into_a_date_or_a_name(clinic: RecordExecutor) -> None:
    # The graph may score an appointment id against a new appointment date and doctor by their
    # words; the record takes the id where an id goes and makes a date and a doctor's name.
    edges = [Edge(BOOK, "appointment_id", MODIFY, name, 0.5) for name in MODIFY.parameters["properties"]]
    planned = _planned([BOOK, MODIFY], edges)
    clinic.run(planned, random.Random(5), _timing())
    modified = planned.plan.calls[1]
    assert set(modified.wired) == {"appointment_id"}
    arguments = modified.call.arguments
    assert arguments["appointment_id"] == "apt-123"
    assert "apt-123" not in (arguments["new_appointment_date"], arguments["new_appointment_doctor"])


def test_a_value_outside_the_values_an_argument_lists_is_not_wired(clinic: RecordExecutor) -> None:
    planned = _planned([SWITCH, FORGOT], [Edge(SWITCH, "status", FORGOT, "status", 1.0)])
    clinic.run(planned, random.Random(5), _timing())
    sent = planned.plan.calls[1]
    assert sent.wired == {}
    assert sent.call.arguments["status"] in ("Forgot Password", "Verification Code")


def test_one_value_is_not_wired_into_both_ends_of_a_call() -> None:
    # NESTFUL's gold wires an airport search's skyId into a flight search's origin and
    # destination alike; one record takes it as the origin only.
    found = Tool("search_airport", "fly", output_parameters=schema(skyId="string"))
    flights = Tool(
        "search_flights", "fly", parameters=schema(originSkyId="string", destinationSkyId="string")
    )
    edges = [
        Edge(found, "skyId", flights, "originSkyId", 0.9),
        Edge(found, "skyId", flights, "destinationSkyId", 0.9),
    ]
    answers = {"fly::search_airport": {"skyId": "LOND"}, "fly::search_flights": {"flights": []}}
    planned = _run([found, flights], edges, answers)
    searched = planned.plan.calls[1]
    assert list(searched.wired) == ["originSkyId"]
    assert searched.call.arguments.get("destinationSkyId") != "LOND"


@pytest.mark.parametrize(
    ("output", "first", "second"),
    [
        ("zipcode", "cityA", "cityB"),
        ("start_date", "start_date_gte", "start_date_lte"),
        ("team", "team1", "team2"),
        ("date", "since", "until"),
    ],
)
def test_one_value_is_not_wired_into_both_of_a_pair(output: str, first: str, second: str) -> None:
    # BFCL's estimate_distance took a zipcode found for Mumbai as cityA and cityB: a distance
    # from a place to itself; Airflow's batch listing took one date as both bounds.
    found = Tool("find_it", "v", output_parameters=schema(**{output: "string"}))
    target = Tool("use_it", "v", parameters=schema(**{first: "string", second: "string"}))
    edges = [Edge(found, output, target, first, 0.9), Edge(found, output, target, second, 0.9)]
    value = "2026-05-01" if "date" in output else "400222"
    answers = {"v::find_it": {output: value}, "v::use_it": {"ok": True}}
    planned = _run([found, target], edges, answers)
    used = planned.plan.calls[1]
    assert list(used.wired) == [first]
    assert used.call.arguments.get(second) != value


def test_a_wired_resource_of_another_type_than_the_body_lists_is_not_wired() -> None:
    # Up Banking's tags body takes resources of type 'tags': a webhook resource is no tag.
    typed = {"type": {"type": "string", "description": "The type of this resource: `tags`"}}
    tag = {"type": "object", "properties": {**typed, "id": {"type": "string"}}}
    body = {"type": "array", "items": {"allOf": [tag]}}
    assert _listed(body, [{"type": "tags", "id": "Holiday"}])
    assert not _listed(body, [{"type": "webhooks", "id": "data-71739", "attributes": {"url": "x"}}])
    assert _listed({"type": "object", "properties": {"data": body}}, {"data": []})
    # Up's category relationship: a category, or null (anyOf); a webhook event is neither.
    category = {"anyOf": [{"allOf": [tag]}, {"type": "null"}]}
    assert _listed(category, {"type": "tags", "id": "Holiday"})
    assert not _listed(category, {"type": "webhook-events", "id": "data-58818"})


def test_a_flag_from_a_result_is_never_wired() -> None:
    # NESTFUL's restaurant search answered restaurantSpecialOffer: true, and the graph wired it
    # into a password generator's include_special_characters; PeerTube's video listing fed its
    # first video's isLive and isLocal into the next search ("once you have the live and local
    # of the first one"). A yes or no is read, not handed on, even where the names agree.
    found = Tool(
        "search_restaurants",
        "eat",
        output_parameters=schema(restaurantSpecialOffer="boolean", is_open="boolean", name="string"),
    )
    again = Tool(
        "search_more",
        "eat",
        parameters=schema(
            include_special_characters="boolean", open="boolean", is_open="boolean", name="string"
        ),
    )
    edges = [
        Edge(found, "restaurantSpecialOffer", again, "include_special_characters", 0.9),
        Edge(found, "is_open", again, "open", 0.9),
        Edge(found, "is_open", again, "is_open", 1.0),
        Edge(found, "name", again, "name", 1.0),
    ]
    answers = {"restaurantSpecialOffer": True, "is_open": True, "name": "Chez Anna"}
    planned = _run([found, again], edges, {"eat::search_restaurants": answers, "eat::search_more": {}})
    assert list(planned.plan.calls[1].wired) == ["name"]


def test_an_object_is_wired_only_into_an_object_of_its_kind() -> None:
    # PeerTube: the playlist element just added ({id: 2}) was reported as the abused video.
    added = Tool("addVideoPlaylistVideo", "tube", output_parameters=schema(videoPlaylistElement="object"))
    report = Tool("post_abuses", "tube", parameters=schema(video="object"))
    answers = {"tube::addVideoPlaylistVideo": {"videoPlaylistElement": {"id": 2}}, "tube::post_abuses": {}}
    planned = _run([added, report], [Edge(added, "videoPlaylistElement", report, "video", 0.9)], answers)
    assert planned.plan.calls[1].wired == {}


def test_a_call_that_deletes_comes_after_the_other_calls_on_what_it_deletes() -> None:
    # The demo deleted the listing's first pet while uploading its photo, in one step.
    listing = Tool("listPets", "petstore")
    upload = Tool("uploadPhoto", "petstore")
    delete = Tool("deletePet", "petstore")
    other = Tool("getWeather", "weather")
    feeds = {1: [(0, "[].id", "petId")], 2: [(0, "[].id", "petId")], 3: [(0, "[].name", "q")]}
    tools = [listing, delete, upload, other]
    assert levels(4, feeds, tools) == [[0], [2, 3], [1]]
    assert levels(4, feeds) == [[0], [1, 2, 3]]  # without the tools, by the feeds alone


def test_a_deleting_call_does_not_wait_for_what_its_own_result_feeds() -> None:
    # The delete's answer feeds a log call, whose result feeds an upload that also takes the
    # listing's id: waiting for that upload would put the delete after its own consequences
    # (the upload came before the log it reads).
    listing, upload, log, delete = (
        Tool(n, "t") for n in ("listPets", "uploadPhoto", "logEvent", "deletePet")
    )
    feeds = {
        3: [(0, "[].id", "petId")],
        2: [(3, "status", "message")],
        1: [(0, "[].id", "petId"), (2, "ref", "note")],
    }
    assert levels(4, feeds, [listing, upload, log, delete]) == [[0], [3], [2], [1]]


def test_a_number_is_no_name() -> None:
    # When2Call's divide(65.23, 43.2) fed its quotient to district details as a division's name.
    divide = Tool("divide", "w", output_parameters={"type": "object", "properties": {"result": {}}})
    untyped = {"type": "object", "properties": {"division_name": {"description": "The division."}}}
    details = Tool("district_detail_of_division", "w", parameters=untyped)
    answers = {"w::divide": {"result": 1.5099537037}, "w::district_detail_of_division": {"ok": True}}
    planned = _run([divide, details], [Edge(divide, "result", details, "division_name", 0.9)], answers)
    assert planned.plan.calls[1].wired == {}
    # a latitude is a number
    found = Tool("geocode", "w", output_parameters=schema(latitude="number"))
    weather = Tool("get_weather", "w", parameters=schema(latitude="number"))
    answers = {"w::geocode": {"latitude": 38.72}, "w::get_weather": {"ok": True}}
    planned = _run([found, weather], [Edge(found, "latitude", weather, "latitude", 0.9)], answers)
    assert planned.plan.calls[1].call.arguments["latitude"] == 38.72


def test_words_are_no_number() -> None:
    # When2Call: a price alert's notification ("Happy birthday! ...") became a paper weight.
    alert = Tool("notify_price_change", "w", output_parameters=schema(notification="string"))
    trees = Tool("treeequivalent", "w", parameters=schema(weight="string"))
    edges = [Edge(alert, "notification", trees, "weight", 0.9)]
    for said, wired in (("Happy birthday! Hope you have a wonderful day.", False), ("12.5 kg", True)):
        answers = {"w::notify_price_change": {"notification": said}, "w::treeequivalent": {"ok": True}}
        assert bool(_run([alert, trees], edges, answers).plan.calls[1].wired) is wired, said


def test_a_placeholder_is_handed_on_to_no_call() -> None:
    # API-Bank: QueryMeeting's meeting_info ("signal-683", synthesis's placeholder for a value
    # nothing says the sense of) became ModifyMeeting's topic.
    query = Tool("QueryMeeting", "b", output_parameters=schema(meeting_info="string"))
    modify = Tool("ModifyMeeting", "b", parameters=schema(meeting_topic="string"))
    edges = [Edge(query, "meeting_info", modify, "meeting_topic", 0.9)]
    for said, wired in (("signal-683", False), (["signal-683", "orbit-2"], False), ("Budget review", True)):
        answers = {"b::QueryMeeting": {"meeting_info": said}, "b::ModifyMeeting": {"status": "success"}}
        assert bool(_run([query, modify], edges, answers).plan.calls[1].wired) is wired, said


def test_a_sentence_is_no_keyword() -> None:
    # API-Bank: a speech transcript ("Can we move our call to Thursday afternoon?") was looked up
    # in the dictionary; a word or two is still handed on.
    speech = Tool("SpeechRecognition", "b", output_parameters=schema(transcript="string"))
    dictionary = Tool("Dictionary", "b", parameters=schema(keyword="string"))
    edges = [Edge(speech, "transcript", dictionary, "keyword", 0.9)]
    for said, wired in (
        ("Can we move our call to Thursday afternoon?", False),
        ("Budget review.", False),
        ("solar panels", True),
    ):
        answers = {"b::SpeechRecognition": {"transcript": said}, "b::Dictionary": {"results": []}}
        assert bool(_run([speech, dictionary], edges, answers).plan.calls[1].wired) is wired, said
