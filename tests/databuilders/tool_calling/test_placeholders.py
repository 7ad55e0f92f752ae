"""Records say how many placeholder values their tool results hold (``metadata.placeholders``),
and the run's summary and ``fms-dgt inspect`` count the records that hold any."""

from __future__ import annotations

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.databuilders.tool_calling.inspect import report_lines
from fms_dgt.databuilders.tool_calling.plan import PlannedCall, RecordPlan
from fms_dgt.databuilders.tool_calling.record import placeholders
from fms_dgt.databuilders.tool_calling.summary import RunSummary

TOOL = Tool("QueryMeeting", "b")


def _plan(*results: object, error: str | None = None) -> RecordPlan:
    calls = []
    for i, result in enumerate(results):
        call = ToolCall(TOOL.qualified_name, {}, f"call_{i}")
        planned = PlannedCall(tool=TOOL, call=call, given={})
        planned.result = ToolResult(call.call_id, call.name, result=result, error=error)
        calls.append(planned)
    return RecordPlan(index=0, scenario="random", offered=[TOOL], steps=[calls])


def test_placeholder_values_of_a_records_results_are_counted() -> None:
    # API-Bank's QueryMeeting answered {"meeting_info": "signal-683"}
    assert (
        placeholders(_plan({"meeting_info": "signal-683"}, ["river-1", "Budget review", {"a": ["orbit-2"]}]))
        == 3
    )
    assert placeholders(_plan({"meeting_info": "Budget review", "room": "signal"})) == 0
    assert placeholders(_plan({"meeting_info": "signal-683"}, error="boom")) == 0  # a failed call's result


def test_a_hostile_result_is_read_to_a_bound() -> None:
    huge = ["river-1"] * 200_000
    assert 0 < placeholders(_plan(huge)) <= 10_000


def test_the_summary_counts_records_with_placeholders_and_merges_shards() -> None:
    one, two = RunSummary(), RunSummary()
    one.add_record({"metadata": {"placeholders": 2}})
    one.add_record({"metadata": {"placeholders": 0}})
    two.add_record({"metadata": {"placeholders": 1}})
    one.merge(two)
    assert one.placeholder_records == 2 and one.to_dict()["placeholder_records"] == 2
    said = report_lines(
        {
            **one.to_dict(),
            "quality": {**one.quality.to_dict(), "coverage": {"tools_called": 0, "pool": 0, "gini": 0.0}},
        }
    )
    assert any(line.startswith("placeholders       2 records") for line in said), said
