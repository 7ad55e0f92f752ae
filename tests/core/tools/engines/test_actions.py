"""What an action's result says of what it did (fms_dgt/core/tools/engines/results.py): the state
it set, under a longer name, and a new thing's counts."""

from __future__ import annotations

import random
from typing import Any

from jsonschema import Draft202012Validator

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.engines.results import mock_result


def _made(tool: Tool, arguments: dict[str, Any], seed: int) -> Any:
    made = mock_result(tool, arguments, random.Random(seed))[0]
    assert Draft202012Validator(tool.output_parameters).is_valid(made), made
    return made


def test_an_action_answers_with_the_state_it_set_under_a_longer_name() -> None:
    # BFCL's vehicle: adjustClimateControl(mode="auto", temperature=31.4) answered climateMode
    # "cool" at 22.5 degrees
    climate = Tool(
        "adjustClimateControl",
        "vehicle",
        parameters={
            "type": "object",
            "properties": {
                "mode": {"type": "string"},
                "temperature": {"type": "number"},
                "to": {"type": "string"},
            },
        },
        output_parameters={
            "type": "object",
            "properties": {
                "climateMode": {"type": "string"},
                "currentTemperature": {"type": "number"},
                "replyTo": {"type": "string"},
            },
            "required": ["climateMode", "currentTemperature", "replyTo"],
        },
    )
    for seed in range(10):
        made = _made(climate, {"mode": "auto", "temperature": 31.4, "to": "ops"}, seed)
        assert made["climateMode"] == "auto" and made["currentTemperature"] == 31.4, made
        assert made["replyTo"] != "ops", made  # "to" says too little to be read inside a name
    # a lookup reports the state it finds, whatever the call asked
    lookup = Tool(
        "getClimate", "vehicle", parameters=climate.parameters, output_parameters=climate.output_parameters
    )
    found = {_made(lookup, {"mode": "auto", "temperature": 31.4}, seed)["climateMode"] for seed in range(10)}
    assert found != {"auto"}, found


def test_a_thing_just_made_has_no_replies_or_likes_but_what_holds_it_keeps_its_own() -> None:
    # PeerTube: a comment thread just started had 447 replies
    count = {"type": "integer", "minimum": 0}
    comment = {
        "type": "object",
        "properties": {
            "totalReplies": count,
            "likes_count": count,
            "account": {
                "type": "object",
                "properties": {"followersCount": count},
                "required": ["followersCount"],
            },
        },
        "required": ["totalReplies", "likes_count", "account"],
    }
    out = {"type": "object", "properties": {"comment": comment}, "required": ["comment"]}
    post = Tool(
        "addCommentThread", "peertube", parameters={"type": "object", "properties": {}}, output_parameters=out
    )
    followers = set()
    for seed in range(10):
        made = _made(post, {}, seed)["comment"]
        assert made["totalReplies"] == 0 and made["likes_count"] == 0, made
        followers.add(made["account"]["followersCount"])
    assert followers != {0}, followers
    got = Tool(
        "getCommentThread", "peertube", parameters={"type": "object", "properties": {}}, output_parameters=out
    )
    assert any(_made(got, {}, seed)["comment"]["totalReplies"] for seed in range(10))
