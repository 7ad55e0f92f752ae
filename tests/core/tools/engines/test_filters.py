"""Listed items take the filters a call asked for (results.py: ResultHooks._filtered), a yes or no
and a JSON:API ``filter[...]`` too."""

from __future__ import annotations

import random
from typing import Any

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.engines.results import mock_result


def _listing(name: str, params: dict[str, Any], item: dict[str, Any]) -> Tool:
    out = {"type": "object", "properties": {"data": {"type": "array", "items": item, "minItems": 2}}}
    return Tool(name, "x", parameters={"type": "object", "properties": params}, output_parameters=out)


def test_a_yes_or_no_asked_for_is_every_listed_items() -> None:
    # PeerTube's getVideos(isLive=false, isLocal=true) listed a live video from another instance
    flag = {"type": "boolean"}
    item = {
        "type": "object",
        "properties": {"isLive": flag, "isLocal": flag},
        "required": ["isLive", "isLocal"],
    }
    tool = _listing("getVideos", {"isLive": flag, "isLocal": flag}, item)
    for seed in range(10):
        for video in mock_result(tool, {"isLive": False, "isLocal": True}, random.Random(seed))[0]["data"]:
            assert video == {"isLive": False, "isLocal": True}, video


def test_a_json_api_filter_filters_by_the_field_it_names() -> None:
    # Up's get_transactions(filter[status]="HELD") listed settled transactions
    status = {"type": "string", "enum": ["HELD", "SETTLED"]}
    item = {"type": "object", "properties": {"status": status}, "required": ["status"]}
    tool = _listing("get_transactions", {"filter[status]": status}, item)
    for seed in range(10):
        listed = mock_result(tool, {"filter[status]": "HELD"}, random.Random(seed))[0]["data"]
        assert {t["status"] for t in listed} == {"HELD"}, listed
