"""Simulated results agree with earlier results of the record on the entities they share."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fms_dgt.databuilders.tool_calling.agreement import agree
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
