"""Checks of a record's words, and the model path: prompts that carry the plan, verdicts that reject."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from support.chat_server import serve

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.databuilders.tool_calling.checks import (
    PROMPT_STAGES,
    ChatModel,
    ModelCheck,
    offline_check,
    prompt,
)
from fms_dgt.databuilders.tool_calling.plan import PlannedCall, RecordPlan, Wire
from fms_dgt.databuilders.tool_calling.text import Confirmation, LLMText, RecordText
from fms_dgt.errors import TextError

REPO = Path(__file__).resolve().parents[3]
REGISTRY = ToolRegistry.from_file(REPO / "data" / "weather_tools.yaml")
GEOCODE = REGISTRY.get("weather_api::geocode_city")
WEATHER = next(
    t for t in REGISTRY.overloads("weather_api::get_weather") if "latitude" in t.parameters["properties"]
)
CREATE = REGISTRY.get("calendar::create_event")


def _planned(tool: Tool, args: dict[str, Any], result: Any = None, error: str | None = None) -> PlannedCall:
    call = ToolCall(tool.qualified_name, args, f"call_{tool.name}")
    planned = PlannedCall(tool=tool, call=call, given=dict(args))
    planned.result = ToolResult(call.call_id, call.name, result=result, error=error)
    return planned


def _chain() -> RecordPlan:
    first = _planned(GEOCODE, {"city": "Lisbon"}, {"latitude": 38.72, "longitude": -9.14})
    second = _planned(
        WEATHER, {"latitude": 38.72, "longitude": -9.14, "units": "metric"}, error="upstream timeout"
    )
    second.given = {"units": "metric"}
    second.wired = {"latitude": Wire("weather_api::geocode_city", "latitude")}
    third = _planned(CREATE, {"title": "Picnic", "start": "2026-05-04T10:30:00Z"})
    third.approval, third.result = "declined", None
    return RecordPlan(
        index=4, scenario="chain", offered=[GEOCODE, WEATHER, CREATE], steps=[[first], [second], [third]]
    )


def _stage(body: dict[str, Any]) -> str:
    system = body["messages"][0]["content"]
    return next(s for s in PROMPT_STAGES if prompt(s) == system)


def _payload(body: dict[str, Any]) -> Any:
    return json.loads(body["messages"][1]["content"])


def _replies(**answers: Any) -> Any:
    def reply(body: dict[str, Any]) -> Any:
        return answers[_stage(body)]

    return reply


def test_every_stage_has_a_prompt_file() -> None:
    for stage in PROMPT_STAGES:
        assert len(prompt(stage)) > 100
    with pytest.raises(TextError, match="unknown prompt stage 'summary'"):
        prompt("summary")


def test_the_model_writes_every_turn_from_the_plan() -> None:
    answers = {
        "user_turn": "Find Lisbon, then the weather there in metric, and book a picnic.",
        "approval": {"question": "Shall I create the Picnic event on 4 May?", "reply": "No, leave it."},
        "final_turn": "Lisbon is at 38.72, -9.14; the weather service timed out; no picnic booked.",
    }
    with serve(_replies(**answers)) as server:
        writer = LLMText(base_url=server.url, model="writer", temperature=0.3)
        text = writer.write(_chain(), random.Random(0))
        writer.close()
    assert text.user == answers["user_turn"] and text.final == answers["final_turn"]
    assert text.confirmations == {
        "call_create_event": Confirmation(
            question="Shall I create the Picnic event on 4 May?", reply="No, leave it."
        )
    }
    bodies = {_stage(b): b for b in server.requests}
    request = _payload(bodies["user_turn"])["calls"]
    assert [c["tool"] for c in request] == ["geocode_city", "get_weather", "create_event"]
    assert request[0]["stated_by_user"] == {"city": "Lisbon"} and request[0]["step"] == 0
    assert request[1]["from_earlier_results"] == {"latitude": "weather_api::geocode_city.latitude"}
    assert request[1]["stated_by_user"] == {"units": "metric"}
    answer = _payload(bodies["final_turn"])
    assert answer["request"] == answers["user_turn"]
    assert answer["calls"][0]["result"] == {"latitude": 38.72, "longitude": -9.14}
    assert answer["calls"][1]["error"] == "upstream timeout" and answer["calls"][2]["declined"] is True
    approval = _payload(bodies["approval"])
    assert approval["decision"] == "declined" and approval["arguments"]["title"] == "Picnic"
    assert bodies["approval"]["response_format"] == {"type": "json_object"}
    assert all(b["model"] == "writer" and b["temperature"] == 0.3 for b in server.requests)


def test_the_check_stage_passes_or_rejects_with_the_models_reason() -> None:
    plan = _chain()
    text = RecordText(user="Find Lisbon then the weather.", final="Done.")
    verdicts = iter(
        [
            {"verdict": "pass", "reason": "fits"},
            {"verdict": "fail", "reason": "the request never asks for a picnic event"},
            "Looks fine to me!",
            {"verdict": "maybe", "reason": "unsure"},
            '```json\n{"verdict": "FAIL", "reason": "values\\u0007 missing"}\n```',
        ]
    )
    with serve(lambda body: next(verdicts)) as server:
        writer = LLMText(base_url=server.url, model="writer")
        results = [writer.check(plan, text, random.Random(0)) for _ in range(5)]
        writer.close()
    assert results[0].ok and results[0].check == "model"
    assert not results[1].ok and results[1].reason == "check model: the request never asks for a picnic event"
    assert (
        not results[2].ok and "gave no verdict" in results[2].reason and "no JSON object" in results[2].reason
    )
    assert not results[3].ok and "gave no verdict" in results[3].reason and "maybe" in results[3].reason
    assert not results[4].ok and results[4].reason == "check model: values missing"
    seen = _payload(server.requests[0])
    assert seen["user_request"] == text.user and seen["kind"] == "calls"
    assert seen["calls"][1]["from_earlier_results"] == {"latitude": "weather_api::geocode_city.latitude"}
    assert all(_stage(b) == "check" and b["temperature"] == 0.0 for b in server.requests)


def test_the_check_judges_no_call_records_by_their_subject() -> None:
    plan = RecordPlan(
        index=1, scenario="x", kind="missing_value", offered=[WEATHER], missing=(WEATHER, "latitude")
    )
    text = RecordText(user="What's the weather at longitude 3?", final="Which latitude?")
    with serve(lambda body: {"verdict": "pass"}) as server:
        assert ModelCheck(ChatModel(base_url=server.url, model="m")).judge(plan, text, random.Random(0)).ok
    seen = _payload(server.requests[0])
    assert seen["missing"] == {"tool": "weather_api::get_weather", "argument": "latitude"}
    assert seen["assistant_reply"] == "Which latitude?" and "calls" not in seen


def test_offline_checks_run_before_the_model_and_without_it() -> None:
    plan = _chain()
    dumped = RecordText(user="Find Lisbon.", final='Here: {"latitude": 38.72}')
    with serve(lambda body: {"verdict": "pass"}) as server:
        writer = LLMText(base_url=server.url, model="writer")
        verdict = writer.check(plan, dumped, random.Random(0))
        writer.close()
        unchecked = LLMText(base_url=server.url, model="writer", check=False)
        assert unchecked.check(plan, RecordText(user="Find Lisbon.", final="Done."), random.Random(0)).ok
        unchecked.close()
    assert not verdict.ok and "JSON dump" in verdict.reason and verdict.check == "offline"
    assert not server.requests, "neither check asked the model"


def test_no_call_records_come_back_as_two_turns() -> None:
    topic = CREATE
    plan = RecordPlan(index=2, scenario="x", kind="irrelevant", offered=[GEOCODE, WEATHER], topic=topic)
    answer = {
        "user": "Put a picnic in my calendar.",
        "assistant": "I can't; I can look up places or weather.",
    }
    with serve(lambda body: answer) as server:
        writer = LLMText(base_url=server.url, model="writer")
        text = writer.write(plan, random.Random(0))
        writer.close()
    assert (text.user, text.final) == (answer["user"], answer["assistant"])
    seen = _payload(server.requests[0])
    assert _stage(server.requests[0]) == "no_call" and seen["kind"] == "irrelevant"
    assert seen["topic_tool"] == {"tool": "create_event", "purpose": "Create a calendar event."}
    assert [t["tool"] for t in seen["offered_tools"]] == ["geocode_city", "get_weather"]
    assert set(seen["values"]) <= {"title", "start"}


@pytest.mark.parametrize("answer", ["no json here", {"user": "hi"}, {"user": "hi", "assistant": 3}])
def test_an_unusable_no_call_answer_is_an_error(answer: Any) -> None:
    plan = RecordPlan(
        index=2, scenario="x", kind="missing_value", offered=[WEATHER], missing=(WEATHER, "latitude")
    )
    with serve(lambda body: answer) as server:
        writer = LLMText(base_url=server.url, model="writer")
        with pytest.raises(
            TextError, match=r"unusable answer .*\(no_call\): expected a JSON object with user"
        ):
            writer.write(plan, random.Random(0))
        writer.close()


def test_model_answers_are_cleaned_and_bounded() -> None:
    with serve(lambda body: "  Find\x1b the\x00 weather\u202e in Lisbon.\x07 ") as server:
        model = ChatModel(base_url=server.url, model="m", max_chars=30)
        assert model.ask("user_turn", {}, random.Random(0)) == "Find the weather in Lisbon."
        model.close()
    with serve(lambda body: "word " * 50) as server:
        model = ChatModel(base_url=server.url, model="m", max_chars=30)
        with pytest.raises(TextError, match=r"answer too long .*249 characters, more than max_chars=30"):
            model.ask("user_turn", {}, random.Random(0))
        model.close()
    with serve(lambda body: "\x00\x01 ") as server:
        model = ChatModel(base_url=server.url, model="m")
        with pytest.raises(TextError, match="empty answer"):
            model.ask("final_turn", {}, random.Random(0))
        model.close()


def test_a_passing_failure_is_retried() -> None:
    with serve(lambda body: "A request.") as server:
        server.status.extend([503, 429])
        model = ChatModel(base_url=server.url, model="writer", retries=2)
        assert model.ask("user_turn", {}, random.Random(0)) == "A request."
        model.close()
    assert len(server.requests) == 3


def test_network_failures_are_clear_errors() -> None:
    with serve() as server:
        server.status.extend([503, 503, 503])  # every attempt (retries: 2) fails
        writer = LLMText(base_url=server.url, model="writer")
        with pytest.raises(
            TextError,
            match=r"text model request failed at http://127\.0\.0\.1:\d+/v1/chat/completions \(user_turn\)",
        ):
            writer.write(_chain(), random.Random(0))
        writer.close()
    closed = LLMText(base_url=server.url, model="writer", request_timeout=2)
    with pytest.raises(TextError, match="Check base_url, the model name and the API key variable"):
        closed.check(_chain(), RecordText(user="u", final="f"), random.Random(0))
    closed.close()


def test_offline_check_names_what_is_wrong() -> None:
    plan = _chain()
    good = RecordText(
        user='Look up Lisbon. Then use that to get the weather in metric. Also add "Picnic" on 4 May.',
        final="Done.",
    )
    assert offline_check(plan, good).ok
    cases = {
        "is empty": RecordText(user=" ", final="Done."),
        "JSON dump": RecordText(user=good.user, final="[1, 2]"),
        "implementation notes: Other cities get": RecordText(
            user=good.user + " Other cities get a mild default.", final="Done."
        ),
        "does not state the value 'metric'": RecordText(
            user="Look up Lisbon, then use that for the weather.", final="x"
        ),
    }
    for reason, text in cases.items():
        verdict = offline_check(plan, text)
        assert not verdict.ok and reason.split(": ")[-1] in verdict.reason, (reason, verdict.reason)
    unwired = RecordPlan(index=0, scenario="x", steps=[[_planned(GEOCODE, {"city": "Lisbon"})]])
    linked = offline_check(unwired, RecordText(user="Look up Lisbon. Then use that.", final="Done."))
    assert not linked.ok and "links calls no value flows between" in linked.reason


def test_a_value_the_user_gives_is_no_implementation_note() -> None:
    # Up Banking's webhooks take a URL: "create a webhook for https://api.example.com/events/1"
    # was rejected as carrying notes ("https://", "api"), 5 of 60 records of a real spec.
    hook = Tool(
        "post_webhooks",
        "up",
        description="Create a webhook.",
        parameters={"type": "object", "properties": {"url": {"type": "string"}}},
    )
    url = "https://api.example.com/events/98379"
    plan = RecordPlan(index=0, scenario="single", steps=[[_planned(hook, {"url": url}, {"id": "w-1"})]])
    assert offline_check(plan, RecordText(user=f"Please create a webhook for {url}.", final="Done.")).ok
    noted = RecordText(user=f"Please create a webhook for {url} using the https:// API.", final="Done.")
    verdict = offline_check(plan, noted)
    assert not verdict.ok and "implementation notes" in verdict.reason  # the request's own words still count


def test_the_writing_model_never_sees_implementation_notes() -> None:
    noted = Tool(
        "get_forecast",
        "demo",
        description="Today's forecast for a city (other cities get a mild default). Note: cached for 1 hour.",
        parameters={"type": "object", "properties": {"city": {"type": "string"}}},
    )
    plan = RecordPlan(index=0, scenario="x", offered=[noted], steps=[[_planned(noted, {"city": "Oslo"}, {})]])
    with serve(lambda body: "What's the forecast in Oslo today?") as server:
        writer = LLMText(base_url=server.url, model="writer")
        writer.write(plan, random.Random(0))
        writer.close()
    seen = [json.dumps(_payload(b)) for b in server.requests]
    assert _payload(server.requests[0])["calls"][0]["purpose"] == "get today's forecast for a city"
    assert not any("default" in s or "cached" in s for s in seen)
