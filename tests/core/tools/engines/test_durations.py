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
    params = {"type": "object", "properties": {"duration_lte": {"type": "number"}}}
    return Tool("get_task_instance", "airflow", parameters=params, output_parameters=out)


def _span(made: dict[str, Any]) -> float:
    start, end = (datetime.fromisoformat(made[k].replace("Z", "")) for k in ("start_date", "end_date"))
    return (end - start).total_seconds()


def test_a_duration_is_the_seconds_between_its_start_and_end() -> None:
    tool = _instance({"type": "number"})
    for seed in range(12):
        made = mock_result(tool, {}, random.Random(seed))[0]
        assert Draft202012Validator(tool.output_parameters).is_valid(made), made
        assert made["duration"] == round(_span(made), 2) or abs(made["duration"] - _span(made)) < 1, made


def test_a_duration_keeps_the_bound_the_call_asked_for() -> None:
    # Airflow's get_task_instances(duration_lte=31.38) listed task instances of 3600 seconds
    item = _instance({"type": "number"}).output_parameters
    out = {"type": "object", "properties": {"task_instances": {"type": "array", "items": item}}}
    tool = Tool("get_task_instances", "airflow", parameters=_instance({}).parameters, output_parameters=out)
    for seed in range(12):
        for made in mock_result(tool, {"duration_lte": 31.38}, random.Random(seed))[0]["task_instances"]:
            assert made["duration"] <= 31.38 and abs(made["duration"] - _span(made)) < 1, made


def test_a_duration_said_in_minutes_is_counted_in_minutes() -> None:
    tool = _instance({"type": "integer", "description": "How long it ran, in minutes."})
    for seed in range(12):
        made = mock_result(tool, {}, random.Random(seed))[0]
        assert _span(made) == made["duration"] * 60, made


def test_unreadable_moments_or_durations_are_left_alone() -> None:
    for start, duration in (("soon", 5.0), ("2026-07-26T16:30:00Z", -3), ("2026-07-26T16:30:00Z", 10.0**300)):
        odd = {"start_date": start, "end_date": "2026-07-26T18:30:00Z", "duration": duration}
        duration_spans(odd, {})
        assert odd["end_date"] == "2026-07-26T18:30:00Z", odd
    offset = {
        "start_date": "2026-07-26T16:30:00+02:00",
        "end_date": "2026-07-26T18:30:00+02:00",
        "duration": 90,
    }
    duration_spans(offset, {})
    assert offset["end_date"] == "2026-07-26T16:31:30+02:00", offset
