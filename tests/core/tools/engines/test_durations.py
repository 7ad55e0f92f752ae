"""A duration beside its start and end moments is the time between them
(fms_dgt/core/tools/engines/_agreement.py: duration_spans)."""

from __future__ import annotations

import random
from datetime import datetime
from typing import Any

from jsonschema import Draft202012Validator

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.engines._agreement import duration_spans
from fms_dgt.core.tools.engines.results import mock_result

_MOMENT = {"type": "string", "format": "date-time"}


def _instance(duration: dict[str, Any]) -> Tool:
    # An Airflow task instance: it ran 16:30 to 18:30 with a duration of 51.79
    out = {
        "type": "object",
        "properties": {"start_date": _MOMENT, "end_date": _MOMENT, "duration": duration},
        "required": ["start_date", "end_date", "duration"],
    }
    return Tool(
        "get_task_instance", "airflow", parameters={"type": "object", "properties": {}}, output_parameters=out
    )


def _span(made: dict[str, Any]) -> float:
    start, end = (datetime.fromisoformat(made[k].replace("Z", "")) for k in ("start_date", "end_date"))
    return (end - start).total_seconds()


def test_a_duration_is_the_seconds_between_its_start_and_end() -> None:
    tool = _instance({"type": "number"})
    for seed in range(12):
        made = mock_result(tool, {}, random.Random(seed))[0]
        assert Draft202012Validator(tool.output_parameters).is_valid(made), made
        assert made["duration"] == _span(made), made


def test_a_duration_said_in_minutes_is_counted_in_minutes_and_an_integer_stays_one() -> None:
    tool = _instance({"type": "integer", "description": "How long it ran, in minutes."})
    for seed in range(12):
        made = mock_result(tool, {}, random.Random(seed))[0]
        assert made["duration"] == int(_span(made) / 60), made


def test_a_duration_its_bounds_cannot_hold_or_unreadable_moments_are_left_alone() -> None:
    value = {"start_date": "2026-07-26T16:30:00Z", "end_date": "2026-07-26T18:30:00Z", "duration": 5.0}
    duration_spans(value, {"properties": {"duration": {"type": "number", "maximum": 100}}})
    assert value["duration"] == 5.0  # 7,200 seconds would break the schema
    for start, end in (("soon", "2026-07-26T18:30:00Z"), ("2026-07-27T00:00:00Z", "2026-07-26T18:30:00Z")):
        odd = {"start_date": start, "end_date": end, "duration": 5.0}
        duration_spans(odd, {})
        assert odd["duration"] == 5.0, odd  # not a moment, or an end before the start
    value["duration"] = 5.0
    duration_spans(value, {"properties": {"duration": {"type": "number"}}})
    assert value["duration"] == 7200.0
