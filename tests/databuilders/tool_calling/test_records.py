"""What a record offers and asks: distractors, no-call records, approvals, failed calls."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from fms_dgt.cli import main
from fms_dgt.core.tools.artifacts import Edge
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.databuilders.tool_calling.job import GenerationJob
from fms_dgt.databuilders.tool_calling.planner import is_copy

REPO = Path(__file__).resolve().parents[3]
WEATHER = str(REPO / "data" / "weather_tools.yaml")
API_BANK = str(REPO / "data" / "api_bank_sample.json")


def _config(tmp_path: Path, **generation: Any) -> dict[str, Any]:
    return {
        "tools": {
            "registry": [
                {"type": "file", "path": WEATHER},
                {"type": "file", "path": API_BANK, "namespace": "api_bank"},
            ],
            "enrichments": [{"type": "dataflow"}],
        },
        "generation": {
            "seed": 5,
            "count": 120,
            "output_dir": str(tmp_path / "out"),
            "scenarios": [
                {"name": "chain", "sampler": {"type": "tc/chain", "k": 2}},
                {"name": "pair", "sampler": {"type": "tc/random", "k": 2}},
            ],
            **generation,
        },
    }


def _run(config: dict[str, Any], **kwargs: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    with GenerationJob(config, **kwargs) as job:
        job.run()
        out = job.settings.output_dir
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    return records, json.loads((out / "summary.json").read_text())


def _calls(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for m in record["messages"] for c in m.get("tool_calls") or []]


def test_records_offer_distractors_that_are_not_called(tmp_path: Path) -> None:
    records, summary = _run(_config(tmp_path))
    registry = ToolRegistry.from_config(_config(tmp_path))
    with_calls = [r for r in records if r["metadata"]["kind"] == "calls"]
    assert with_calls
    for record in with_calls:
        meta = record["metadata"]
        offered, called = meta["tools"], meta["called"]
        assert set(called) <= set(offered)
        assert meta["distractors"] == [t for t in offered if t not in set(called)]
        # A distractor never serves the request as well: no overload or same-named tool of a called one.
        called_names = {registry.overloads(q)[0].name for q in called}
        assert not any(registry.overloads(q)[0].name in called_names for q in meta["distractors"])
        assert {t["function"]["name"] for t in record["tools"]} == set(meta["name_map"])
        assert len(record["tools"]) == len(offered)
    share = sum(bool(r["metadata"]["distractors"]) for r in with_calls) / len(with_calls)
    assert share >= 0.95
    assert summary["quality"]["distractor_ratio"] >= 0.95
    # The offered order is shuffled: called tools are not always first.
    assert any(r["metadata"]["tools"][0] not in r["metadata"]["called"] for r in with_calls)


def test_no_chain_copies_an_item_it_read_into_a_new_one() -> None:
    tools = {t.name: t for t in ToolRegistry.from_config(_config(Path("."))).tools()}
    listed, create = tools["list_events"], tools["create_event"]
    assert is_copy(Edge(listed, "events[].title", create, "title", 1.0))
    assert not is_copy(Edge(listed, "events[].date", create, "start", 1.0))  # the same day: a plan
    assert not is_copy(Edge(create, "event_id", listed, "date", 1.0))
    search = tools["SearchEngine"]
    assert not is_copy(Edge(listed, "events[].title", search, "keyword", 1.0))  # looking it up


def test_records_hold_no_copy_of_an_item_into_a_new_one(tmp_path: Path) -> None:
    records, _ = _run(
        _config(tmp_path, count=300, scenarios=[{"name": "chain", "sampler": {"type": "tc/chain", "k": 2}}])
    )
    chains = [r for r in records if r["metadata"]["kind"] == "calls"]
    pairs = {(e["source"], e["target"]) for r in chains for e in r["metadata"]["edges"]}
    # Only the copy is gone: a forecast's day still feeds the listing of that day's events (the
    # listed titles fed API-Bank's search too before labels fed search inputs of other
    # namespaces by their texts only).
    assert ("weather_api::get_forecast", "calendar::list_events") in pairs
    assert ("calendar::list_events", "calendar::create_event") not in pairs
    for record in chains:
        for edge in record["metadata"]["edges"]:
            copied = edge["target"] == "calendar::create_event" and edge["input"] == "title"
            assert not (copied and edge["source"] == "calendar::list_events"), record["messages"][0]


def test_distractors_zero_offers_only_the_called_tools(tmp_path: Path) -> None:
    records, _ = _run(_config(tmp_path, distractors=0, no_call_rate=0.0, count=20))
    for record in records:
        assert sorted(set(record["metadata"]["tools"])) == sorted(set(record["metadata"]["called"]))


def test_no_call_records_call_nothing_and_name_their_category(tmp_path: Path) -> None:
    records, summary = _run(_config(tmp_path, no_call_rate=0.3, count=200))
    kinds = Counter(r["metadata"]["kind"] for r in records)
    assert set(kinds) == {"calls", "irrelevant", "missing_value"}
    share = (kinds["irrelevant"] + kinds["missing_value"]) / len(records)
    assert abs(share - 0.3) < 0.08
    for record in records:
        meta = record["metadata"]
        if meta["kind"] == "calls":
            continue
        assert _calls(record) == [] and meta["called"] == []
        assert [m["role"] for m in record["messages"]] == ["user", "assistant"]
        if meta["kind"] == "irrelevant":
            # The request is about a tool that is not offered.
            assert meta["topic"] not in meta["tools"]
        else:
            tool, argument = meta["missing"]["tool"], meta["missing"]["argument"]
            assert tool in meta["tools"]
            assert argument.replace("_", " ") in record["messages"][-1]["content"]
    assert summary["quality"]["no_call"]["share"] == pytest.approx(share, abs=1e-3)


def test_no_call_rate_zero_and_one(tmp_path: Path) -> None:
    none, _ = _run(_config(tmp_path / "a", no_call_rate=0.0, count=30))
    assert all(r["metadata"]["kind"] == "calls" for r in none)
    every, _ = _run(_config(tmp_path / "b", no_call_rate=1.0, count=30))
    assert all(r["metadata"]["kind"] != "calls" for r in every)


def _approval_config(tmp_path: Path, rate: float) -> dict[str, Any]:
    config = _config(tmp_path, approval_rate=rate, no_call_rate=0.0, count=40)
    config["generation"]["policy"] = {"requires_approval": ["*::create_event"]}
    config["generation"]["scenarios"] = [{"name": "one", "sampler": {"type": "tc/random", "k": 1}}]
    config["tools"]["registry"] = config["tools"]["registry"][:1]
    return config


def test_calls_that_need_approval_become_a_confirmation_exchange(tmp_path: Path) -> None:
    records, _ = _run(_approval_config(tmp_path, 0.5))
    asked = [r for r in records if r["metadata"].get("approvals")]
    decisions = Counter(a["decision"] for r in asked for a in r["metadata"]["approvals"])
    assert decisions["approved"] and decisions["declined"]
    for record in asked:
        roles = [m["role"] for m in record["messages"]]
        decision = record["metadata"]["approvals"][0]["decision"]
        # request, the assistant asks, the user answers, then the call only when approved.
        assert roles[:3] == ["user", "assistant", "user"]
        assert not record["messages"][1].get("tool_calls")
        if decision == "approved":
            assert roles[3:] == ["assistant", "tool", "assistant"] and _calls(record)
        else:
            assert roles[3:] == ["assistant"] and not _calls(record)
    unasked = [r for r in records if not r["metadata"].get("approvals")]
    assert all("create_event" not in json.dumps(r["metadata"]["called"]) for r in unasked)


def test_approval_rate_one_approves_every_call(tmp_path: Path) -> None:
    records, _ = _run(_approval_config(tmp_path, 1.0))
    decisions = {a["decision"] for r in records for a in r["metadata"].get("approvals", [])}
    assert decisions == {"approved"}


def _rest_config(tmp_path: Path, **generation: Any) -> Path:
    config = (REPO / "configs" / "rest_example.yaml").read_text()
    config = config.replace("../data/rest/petstore.yaml", str(REPO / "data" / "rest" / "petstore.yaml"))
    config = config.replace("${PETSTORE_URL:-http://127.0.0.1:8765/v1}", "http://127.0.0.1:9/v1")
    config = config.replace("retries: 2", "retries: 0").replace("timeout: 10", "timeout: 2")
    path = tmp_path / "rest.yaml"
    extra = "".join(f"  {k}: {v}\n" for k, v in generation.items())
    path.write_text(config.replace("generation:\n", "generation:\n" + extra))
    return path


def test_failed_calls_are_rejected_and_the_run_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["run", str(_rest_config(tmp_path, no_call_rate=0)), "--out", str(out), "-n", "4"]) == 1
    assert "no record was written" in capsys.readouterr().err
    assert (out / "records.jsonl").read_text() == ""
    rejects = [json.loads(x) for x in (out / "rejects.jsonl").read_text().splitlines()]
    assert len(rejects) == 4 and {r["reason"] for r in rejects} == {"call_error"}
    assert all(r["call"]["engine"] == "petstore" and r["call"]["error"] for r in rejects)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["rejected"] == 4 and sum(summary["call_errors"]["by_engine"].values()) == 4
    assert set(summary["call_errors"]["by_tool"]) <= {r["call"]["tool"] for r in rejects}


def test_failed_calls_kept_as_error_handling_examples(tmp_path: Path) -> None:
    out = tmp_path / "out"
    config = _rest_config(tmp_path, no_call_rate=0, on_call_error="keep")
    assert main(["run", str(config), "--out", str(out), "-n", "3"]) == 0
    records = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    assert len(records) == 3
    for record in records:
        meta = record["metadata"]
        assert meta["error_handling"] is True and meta["errors"] == 1
        assert meta["failed"][0]["engine"] == "petstore"
        assert "error" in json.loads(record["messages"][2]["content"])
    summary = json.loads((out / "summary.json").read_text())
    assert summary["quality"]["error_result_rate"] == 1.0
    assert summary["quality"]["error_handling_records"] == 3


def test_too_many_rejects_fail_the_run_after_the_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = [
        {
            "name": "impossible",
            "parameters": {
                "type": "object",
                "required": ["n"],
                "properties": {"n": {"type": "integer", "minimum": 5, "maximum": 1}},
            },
        },
        {"name": "fine", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}},
    ]
    config = {
        "tools": {"registry": [{"type": "inline", "namespace": "x", "tools": tools}]},
        "generation": {
            "count": 40,
            "no_call_rate": 0,
            "scenarios": [{"sampler": {"type": "tc/random", "k": 1}}],
        },
    }
    for limit, status in ((0.1, 1), (0.9, 0)):
        path = tmp_path / f"c{limit}.json"
        path.write_text(
            json.dumps({**config, "generation": {**config["generation"], "max_reject_rate": limit}})
        )
        out = tmp_path / f"out{limit}"
        assert main(["run", str(path), "--out", str(out)]) == status
        summary = json.loads((out / "summary.json").read_text())
        assert (
            summary["written"]
            and summary["rejected"]
            and summary["reject_reasons"] == {"arguments": summary["rejected"]}
        )
    assert "max_reject_rate=0.1" in capsys.readouterr().err


@pytest.mark.parametrize("no_call_rate", [0.0, 1.0])
def test_a_sample_joined_only_by_a_copy_is_rejected_not_written(tmp_path: Path, no_call_rate: float) -> None:
    # The only edge of this pool copies a listed item's title into a new item: no draw avoids it.
    item = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}
    config = {
        "tools": {
            "registry": [
                {
                    "type": "inline",
                    "namespace": "notes",
                    "tools": [
                        {
                            "name": "list_notes",
                            "description": "List the notes.",
                            "parameters": {"type": "object", "properties": {}},
                            "output_parameters": {
                                "type": "object",
                                "properties": {"notes": {"type": "array", "items": item}},
                                "required": ["notes"],
                            },
                        },
                        {
                            "name": "create_note",
                            "description": "Create a note.",
                            "parameters": item,
                            "output_parameters": {
                                "type": "object",
                                "properties": {"note_id": {"type": "string"}},
                            },
                        },
                    ],
                }
            ],
            "enrichments": [{"type": "dataflow"}],
        },
        "generation": {
            "seed": 3,
            "count": 5,
            "no_call_rate": no_call_rate,
            "output_dir": str(tmp_path / "out"),
            "scenarios": [{"name": "chain", "sampler": {"type": "tc/chain", "k": 2}}],
        },
    }
    records, summary = _run(config)
    if no_call_rate:  # a record that calls nothing wires nothing: the copy cannot reach it
        assert len(records) == 5 and {r["metadata"]["kind"] for r in records} <= {
            "irrelevant",
            "missing_value",
        }
        assert summary["rejected"] == 0
        return
    assert records == []
    assert summary["reject_reasons"] == {"copy": 5}
    rejects = [json.loads(line) for line in (tmp_path / "out" / "rejects.jsonl").read_text().splitlines()]
    assert len(rejects) == 5 and all("copying a label" in str(r) for r in rejects)


def test_a_draw_joined_only_by_values_no_call_takes_is_drawn_again() -> None:
    # A car's lock status "feeds" a video upload's body in the graph; no call takes it, so the
    # record would hold two unrelated calls asked for as a chain. The next draw is taken.
    from types import SimpleNamespace

    from fms_dgt.core.tools.data_objects import Tool
    from fms_dgt.core.tools.samplers.base import ToolSample
    from fms_dgt.databuilders.tool_calling.planner import Planner

    def tool(name: str, namespace: str, inputs: str = "", outputs: str = "") -> Tool:
        def props(name: str) -> dict[str, Any]:
            return {"type": "object", "properties": {name: {"type": "string"}}} if name else {}

        return Tool(name, namespace, parameters=props(inputs), output_parameters=props(outputs))

    car = tool("displayCarStatus", "vehicle", outputs="lockStatus")
    upload = tool("uploadVideo", "tube", inputs="status")
    found = tool("getCustomer", "voip", outputs="city")
    distance = tool("estimate_distance", "vehicle", inputs="city")
    draws = iter(
        [
            ToolSample([car, upload], [Edge(car, "lockStatus", upload, "status", 0.9)], "a"),
            ToolSample([found, distance], [Edge(found, "city", distance, "city", 0.9)], "b"),
        ]
    )
    sampler = SimpleNamespace(sample=lambda seed: next(draws))
    planner = SimpleNamespace(settings=SimpleNamespace(seed=1))
    sample, copied = Planner._sample(planner, sampler, 0)  # type: ignore[arg-type]
    assert not copied and [t.name for t in sample.tools] == ["getCustomer", "estimate_distance"]


def test_a_draw_of_one_operation_named_twice_is_drawn_again() -> None:
    # NESTFUL holds Tripadvisor_Search_Restaurants and TripadvisorSearchRestaurants: a record
    # asked "search restaurants for location ID loca-91808. Can you also search for restaurants
    # for location ID loca-91808?"
    from types import SimpleNamespace

    from fms_dgt.core.tools.data_objects import Tool
    from fms_dgt.core.tools.samplers.base import ToolSample
    from fms_dgt.databuilders.tool_calling.planner import Planner

    one, twin = Tool("Tripadvisor_Search_Restaurants", "n"), Tool("TripadvisorSearchRestaurants", "n")
    other = Tool("Tripadvisor_Get_Restaurant_Details", "n")
    draws = iter([ToolSample([one, twin], [], "a"), ToolSample([one, other], [], "b")])
    sampler = SimpleNamespace(sample=lambda seed: next(draws))
    planner = SimpleNamespace(settings=SimpleNamespace(seed=1))
    sample, _ = Planner._sample(planner, sampler, 0)  # type: ignore[arg-type]
    assert [t.name for t in sample.tools] == [
        "Tripadvisor_Search_Restaurants",
        "Tripadvisor_Get_Restaurant_Details",
    ]
