"""One writer, its inverse, and conversion between every pair of formats that lose nothing."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from support.canonical import TOOLS, conversation
from support.runs import read_records

from fms_dgt.core.tools.data_objects import ToolCall
from fms_dgt.core.tools.wire import Message, wire_formats
from fms_dgt.errors import RejectedRecord, WireError
from fms_dgt.export import convert_record, export_record, read_record

LOSSLESS = ["openai", "openai-responses", "anthropic", "hf", "sharegpt"]
METADATA = {
    "index": 9,
    "seed": 7,
    "sample_seed": 2**63 - 1,
    "wired": [{}, {"b": "calc::add.result"}],
    "tools": ["kb::lookup"],
}


@pytest.mark.parametrize("layout", [None, "arrow-safe"])
@pytest.mark.parametrize("fmt", LOSSLESS)
def test_canonical_to_format_and_back_is_the_same_canonical(fmt: str, layout: str | None) -> None:
    record = export_record(TOOLS, conversation(), METADATA, fmt=fmt, layout=layout)
    back = read_record(record)
    assert back.messages == conversation()
    assert [t.qualified_name for t in back.tools] == [t.qualified_name for t in TOOLS]
    assert back.metadata == METADATA
    assert export_record(back.tools, back.messages, back.metadata, fmt=fmt, layout=layout) == record


def test_metadata_says_the_format_and_carries_the_name_map() -> None:
    record = export_record(TOOLS, conversation(), {**METADATA, "format": "stale"}, fmt="hf", family="qwen")
    meta = record["metadata"]
    assert meta["format"] == "hf" and meta["template_family"] == "qwen"
    assert meta["name_map"] == {
        "calc__add": "calc::add",
        "kb__lookup": "kb::lookup",
        "net__ping": "net::ping",
    }


def test_nine_character_ids_survive_every_lossless_format() -> None:
    for fmt in LOSSLESS:
        back = read_record(export_record(TOOLS, conversation(), {}, fmt=fmt))
        ids = [c.call_id for m in back.messages for c in m.tool_calls]
        assert ids == ["Ab3dE6gH9", "Zz9Yy8Xx7", "Qq1Ww2Ee3"] and all(len(i or "") == 9 for i in ids)


def test_a_family_needs_the_hf_format_and_an_adapted_record_is_not_read_back() -> None:
    with pytest.raises(WireError, match="families adapt records in the hf layout"):
        export_record(TOOLS, conversation(), {}, fmt="openai", family="qwen")
    adapted = export_record(TOOLS, conversation(), {}, fmt="hf", family="llama3")
    with pytest.raises(WireError, match="adapted to the llama3 template family"):
        read_record(adapted)
    with pytest.raises(WireError, match="unknown layout 'columnar'"):
        export_record(TOOLS, conversation(), {}, fmt="hf", layout="columnar")


def test_what_a_format_cannot_express_is_rejected_with_the_reason() -> None:
    speaking = [
        Message("user", "u"),
        Message("assistant", "one moment", [ToolCall("net::ping", {}, "Abcdefgh1")]),
    ]
    with pytest.raises(RejectedRecord, match="sharegpt"):
        export_record(TOOLS, speaking, {}, fmt="sharegpt")
    with pytest.raises(RejectedRecord, match="llama3 template family"):
        export_record(TOOLS, speaking, {}, fmt="hf", family="llama3")


def test_a_record_without_a_format_or_name_map_is_an_error() -> None:
    record = export_record(TOOLS, conversation(), {}, fmt="openai")
    with pytest.raises(WireError, match=r"metadata\.format is missing"):
        read_record({**record, "metadata": {}})
    with pytest.raises(WireError, match="name_map"):
        read_record({**record, "metadata": {"format": "openai"}})
    with pytest.raises(WireError, match="unknown wire format 'nope'"):
        read_record({**record, "metadata": {**record["metadata"], "format": "nope"}})
    renamed = {**record, "metadata": {**record["metadata"], "name_map": {}}}
    with pytest.raises(WireError, match="invented"):
        read_record(renamed)


def _both_runs(demo_run: Path, bfcl_run: Path) -> list[dict[str, object]]:
    return read_records(demo_run) + read_records(bfcl_run)


def test_records_of_a_run_convert_to_every_format_and_back_exactly(demo_run: Path, bfcl_run: Path) -> None:
    records = _both_runs(demo_run, bfcl_run)
    assert any(len(m.get("tool_calls") or ()) > 1 for r in records for m in r["messages"]), "parallel calls"
    for record in records:
        assert convert_record(record, fmt="openai") == record, "the run's writer and export_record agree"
        for fmt in LOSSLESS:
            there = convert_record(record, fmt=fmt)
            assert convert_record(there, fmt="openai") == record, fmt
            assert (
                convert_record(convert_record(record, fmt=fmt, layout="arrow-safe"), fmt="openai") == record
            )
        for fmt in set(wire_formats()) - set(LOSSLESS):
            assert convert_record(record, fmt=fmt)["metadata"]["format"] == fmt


def test_bfcl_records_of_bfcl_tools_use_bfcls_names(bfcl_run: Path) -> None:
    for record in read_records(bfcl_run):
        entry = convert_record(record, fmt="bfcl")
        names = {f["name"] for f in entry["function"]}
        assert all("::" not in n and not n.startswith("bfcl__") for n in names)
        assert set(entry["metadata"]["name_map"]) == names
        called = {next(iter(t)) for t in entry["possible_answer"]["ground_truth"]}
        assert called <= names


def test_each_record_is_written_with_its_own_tools_whatever_was_exported_before() -> None:
    first = export_record(TOOLS, conversation(), {}, fmt="openai")
    add = first["tools"][1]["function"]
    changed = {
        **add,
        "description": "Add, described again.",
        "parameters": dict(reversed(add["parameters"].items())),
    }
    record = {
        **first,
        "tools": [first["tools"][0], {"type": "function", "function": changed}, first["tools"][2]],
    }
    again = convert_record(record, fmt="openai")["tools"][1]["function"]
    assert again["description"] == "Add, described again."
    assert list(again["parameters"]) == list(changed["parameters"]), "the schema's own key order"
    assert convert_record(first, fmt="openai") == first


def test_a_tool_a_refresh_rebuilds_is_written_anew_after_the_one_it_replaces() -> None:
    first = export_record(TOOLS, conversation(), {}, fmt="openai")
    assert export_record(TOOLS, conversation(), {}, fmt="openai") == first
    schema = {**TOOLS[1].parameters, "description": "the sum's terms"}
    rebuilt = [
        TOOLS[0],
        dataclasses.replace(TOOLS[1], description="Add again.", parameters=schema),
        *TOOLS[2:],
    ]
    again = export_record(rebuilt, conversation(), {}, fmt="openai")["tools"][1]["function"]
    assert again["description"] == "Add again." and again["parameters"]["description"] == "the sum's terms"
    assert export_record(TOOLS, conversation(), {}, fmt="openai") == first
