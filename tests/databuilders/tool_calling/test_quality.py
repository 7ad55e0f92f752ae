"""The quality report reads every layout alike and its figures mean what they say."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from fms_dgt.core.tools.wire import NameCodec, get_wire_format
from fms_dgt.databuilders.tool_calling.job import GenerationJob
from fms_dgt.databuilders.tool_calling.quality import (
    QualityReport,
    _canonical,
    _chat_facts,
    entity_conflicts,
    facts_of,
    gini,
)

REPO = Path(__file__).resolve().parents[3]


def _config(tmp_path: Path, fmt: str) -> dict[str, Any]:
    return {
        "tools": {
            "registry": [{"type": "file", "path": str(REPO / "data" / "weather_tools.yaml")}],
            "enrichments": [{"type": "dataflow"}],
        },
        "generation": {
            "seed": 2,
            "count": 25,
            "format": fmt,
            "output_dir": str(tmp_path / fmt),
            "on_call_error": "keep",
            "scenarios": [
                {"name": "chain", "sampler": {"type": "tc/chain", "k": 2}},
                {"name": "pair", "sampler": {"type": "tc/random", "k": 2}},
            ],
        },
    }


def _records(tmp_path: Path, fmt: str) -> list[dict[str, Any]]:
    with GenerationJob(_config(tmp_path, fmt)) as job:
        job.run()
    lines = (tmp_path / fmt / "records.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_every_layout_gives_the_same_facts(tmp_path: Path) -> None:
    reference = [facts_of(r) for r in _records(tmp_path, "openai")]
    assert any(f.calls for f in reference) and all(f.user_turns and f.final for f in reference)
    for fmt in ("openai-responses", "anthropic", "gemini"):
        facts = [facts_of(r) for r in _records(tmp_path, fmt)]
        assert facts == reference, fmt


def test_figures_of_a_small_set() -> None:
    def record(user: str, final: str, calls: list[dict[str, Any]], **meta: Any) -> dict[str, Any]:
        messages: list[dict[str, Any]] = [{"role": "user", "content": user}]
        if calls:
            messages.append({"role": "assistant", "content": "", "tool_calls": calls})
            messages += [{"role": "tool", "tool_call_id": "x", "content": '{"ok": 1}'} for _ in calls]
        messages.append({"role": "assistant", "content": final})
        return {"messages": messages, "metadata": meta}

    call = {"function": {"name": "a", "arguments": json.dumps({"user_id": "u1", "q": "x"})}}
    other = {"function": {"name": "b", "arguments": json.dumps({"userId": "u2"})}}
    report = QualityReport(pool=4)
    report.add(
        record("book a table", "Done.", [call], kind="calls", tools=["a", "b"], called=["a"], wired=[{}])
    )
    report.add(record("book a table", "Done.", [call], kind="calls", tools=["a"], called=["a"], wired=[{}]))
    report.add(
        record(
            "hi there", 'Result: {"x": 1}', [call, other], tools=["a", "b"], called=["a", "b"], wired=[{}, {}]
        )
    )
    report.add(record("what is up", "I can't.", [], kind="irrelevant", tools=["c"], called=[]))
    figures = report.to_dict()
    assert figures["records"] == 4
    assert figures["distractor_ratio"] == 0.5  # records 1 and 4 offer a tool they do not call
    assert figures["no_call"] == {"share": 0.25, "irrelevant": 0.25}
    assert figures["distinct_user_turns"] == 0.5  # "book a table" twice
    assert figures["duplicate_records"] == 0  # records 1 and 2 offer different tools
    assert figures["entity_conflicts"] == 1  # user_id u1 then userId u2
    assert figures["json_final_answers"] == 1
    assert figures["coverage"]["tools_called"] == 2 and figures["coverage"]["pool"] == 4
    assert figures["wired_argument_share"] == 0.0
    report.add(record("book a table", "Done.", [call], kind="calls", tools=["a"], called=["a"], wired=[{}]))
    assert report.to_dict()["duplicate_records"] == 1  # the same as record 2


def test_wires_that_repeat_an_argument_count_as_wired_but_not_fresh() -> None:
    calls = [
        {"function": {"name": "forecast", "arguments": json.dumps({"city": "Oslo"})}},
        {"function": {"name": "weather", "arguments": json.dumps({"city": "Oslo", "station": "st-1"})}},
    ]
    messages = [{"role": "user", "content": "Forecast for Oslo, then the weather there."}]
    messages += [{"role": "assistant", "content": "", "tool_calls": calls}]
    messages += [{"role": "assistant", "content": "Done."}]
    wired = [{}, {"city": {"source": "forecast", "output": "city", "echoes": "city"}}]
    wired[1]["station"] = {"source": "forecast", "output": "station"}
    report = QualityReport()
    report.add({"messages": messages, "metadata": {"kind": "calls", "wired": wired}})
    figures = report.to_dict()
    assert figures["wired_argument_share"] == round(2 / 3, 4)  # of three arguments, two are wired
    assert figures["fresh_wired_share"] == round(1 / 3, 4)  # and one of them only a result held


def test_wired_arguments_are_not_conflicts() -> None:
    calls = [("a", {"city": "Oslo"}), ("b", {"city": "Oslo Sentrum"}), ("c", {"city_name": "Rome", "id": 1})]
    assert entity_conflicts(calls, [{}, {"city": "a.city"}, {}]) == []
    assert entity_conflicts(calls, [{}, {}, {}]) == ["city"]
    assert entity_conflicts([("a", {"id": 1}), ("b", {"id": 2})], []) == [], "a bare id is not one entity"


def test_one_id_in_two_schemas_dresses_is_no_conflict() -> None:
    # One order cancelled by a tool taking a number and returned by one whose pattern is
    # '#W' and seven digits (ToolMind's APIGen): the same order, not two.
    calls = [("cancel", {"order_id": 82642}), ("return", {"order_id": "#W0082642"})]
    assert entity_conflicts(calls, []) == []
    assert entity_conflicts([*calls, ("get", {"order_id": "#W0082643"})], []) == ["order_id"]


@pytest.mark.parametrize(
    ("counts", "pool", "expected"),
    [([5, 5, 5, 5], 0, 0.0), ([0, 0, 0, 10], 0, 0.75), ([10], 4, 0.75), ([], 3, 0.0), ([1, 3], 0, 0.25)],
)
def test_gini(counts: list[int], pool: int, expected: float) -> None:
    assert gini(counts, pool) == pytest.approx(expected)


def test_reports_merged_from_shards_equal_one_report_over_all_records(tmp_path: Path) -> None:
    records = _records(tmp_path, "openai")
    records += records[:3]  # repeats that fall in another shard are still duplicates
    whole = QualityReport(pool=9)
    for record in records:
        whole.add(record)
    merged = QualityReport(pool=9)
    for start in range(0, len(records), 4):
        shard = QualityReport()
        for record in records[start : start + 4]:
            shard.add(record)
        merged.merge(shard)
    assert whole.duplicates == 3
    assert merged.to_dict() == whole.to_dict()


def test_a_summary_merged_from_shards_counts_their_refreshes_too(tmp_path: Path) -> None:
    from fms_dgt.databuilders.tool_calling.summary import RunSummary

    records = _records(tmp_path, "openai")
    merged = RunSummary()
    for start, refreshes in ((0, 2), (4, 0), (8, 1)):
        shard = RunSummary(refreshes=refreshes)
        for record in records[start : start + 4]:
            shard.add_record(record)
        merged.merge(shard)
    assert merged.refreshes == 3
    assert merged.written == len(records[:12])


def _read_back(record: dict[str, Any]) -> Any:
    """The facts of a chat-layout record as its format's reader gives them, or what it raised."""
    meta = record["metadata"]
    try:
        _, messages = get_wire_format(meta["format"]).read(
            {**record, "tools": None}, NameCodec.from_name_map(meta["name_map"])
        )
    except Exception as exc:
        return type(exc)
    return _canonical(messages)


def _mutants(record: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    """The record spoiled in one place each: what a hand-edited or foreign file may hold."""
    replacements: list[Any] = [
        None, 3, "", "text", [], {}, ["x"], {"a": 1}, '{"error": "gone"}', ' \n{"error": "gone"} ',
        '{"\\u0065rror": "gone"}', '{"error": 5}', '{"error": "a", "b": 1}', {"error": "gone"},
        '{"error"', "[[1]]", "not::known", "weather::nothing", "unqualified", "call_0", "call_9",
        "user", "assistant", "tool", "system", '{"a": 1}', "[1]",
    ]  # fmt: skip
    out = []
    for _ in range(60):
        mutant = json.loads(json.dumps(record))
        turn = rng.choice(mutant["messages"])
        calls = turn.get("tool_calls") or []
        target = rng.choice([turn, *calls, *(c.get("function", {}) for c in calls)])
        key = rng.choice([*target, "role", "content", "name", "tool_call_id", "id", "tool_calls"])
        if rng.random() < 0.2:
            target.pop(key, None)
        else:
            target[key] = rng.choice(replacements)
        out.append(mutant)
    return out


@pytest.mark.parametrize("fmt", ["openai", "hf"])
def test_chat_records_give_the_facts_their_reader_gives(tmp_path: Path, fmt: str) -> None:
    """The report reads chat records without building their turns: the same facts, and no facts
    (the reader decides) wherever the reader refuses the record."""
    wire = get_wire_format(fmt)
    rng = random.Random(3)
    read = errors = 0
    records = _records(tmp_path, fmt)
    for record in records:
        codec = NameCodec.from_name_map(record["metadata"]["name_map"])
        assert _chat_facts(record, codec, wire) == _read_back(record) == facts_of(record)
        for mutant in _mutants(record, rng):
            expected, facts = _read_back(mutant), _chat_facts(mutant, codec, wire)
            assert facts is None or facts == expected, mutant
            read += facts is not None
            errors += facts is not None and facts.error_results > 0
    assert 200 < read < len(records) * 60 - 200, "mutants both read and left to the reader"
    assert errors > 10, "results read as failed calls"


def test_inspect_makes_up_no_share_an_older_summary_lacks() -> None:
    from fms_dgt.databuilders.tool_calling.inspect import report_lines

    report = QualityReport(pool=2)
    figures = report.to_dict()
    summary = {"written": 0, "rejected": 0, "quality": figures}
    assert any("from a result only" in line for line in report_lines(summary))
    older = {**summary, "quality": {k: v for k, v in figures.items() if k != "fresh_wired_share"}}
    wired = next(line for line in report_lines(older) if line.startswith("wired arguments"))
    assert "from a result only" not in wired, wired
