"""A spec's examples as one value among many (results.py, fakes.py): a whole example naming
another thing than the call is not the answer, and a property's one example is not every value."""

from __future__ import annotations

import random

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.engines.results import mock_result

_PROVINCE = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "nameEn": {"type": "string"}},
    "required": ["id", "nameEn"],
}


def test_a_whole_example_of_another_thing_than_the_call_named_is_not_the_answer() -> None:
    # Canada Holidays: Province(provinceId="NB") answered the spec's one example, Manitoba ("MB")
    tool = Tool(
        "Province",
        "holidays",
        parameters={"type": "object", "properties": {"provinceId": {"type": "string"}}},
        output_parameters=_PROVINCE,
        metadata={"result_examples": [{"id": "MB", "nameEn": "Manitoba"}]},
    )
    for seed in range(8):
        value, source = mock_result(tool, {"provinceId": "NB"}, random.Random(seed))
        assert source == "synthesised" and value["id"] != "MB", (value, source)
    # the example that holds what the call named is still the answer
    assert mock_result(tool, {"provinceId": "MB"}, random.Random(0)) == (
        {"id": "MB", "nameEn": "Manitoba"},
        "example",
    )


def test_a_property_s_one_example_is_one_value_among_many() -> None:
    # PeerTube: every video was "What is PeerTube?" and every channel's owner chocobozzz
    out = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "example": "What is PeerTube?", "examples": ["What is PeerTube?"]},
            "username": {"type": "string", "examples": ["chocobozzz"]},
        },
        "required": ["name", "username"],
    }
    tool = Tool(
        "getVideo", "peertube", parameters={"type": "object", "properties": {}}, output_parameters=out
    )
    made = [mock_result(tool, {}, random.Random(seed))[0] for seed in range(40)]
    names = {m["name"] for m in made}
    users = {m["username"] for m in made}
    assert "What is PeerTube?" in names and len(names) > 5, names  # the spec's own, now and then
    assert "chocobozzz" in users and len(users) > 5, users


def test_a_hostile_whole_example_is_read_to_a_bound() -> None:
    from fms_dgt.core.tools.engines._agreement import holds_named

    huge = {"items": [{"id": str(i)} for i in range(200_000)]}
    assert holds_named(huge, {"provinceId": "199999"})  # the last item is read first
    assert not holds_named(huge, {"provinceId": "0"})  # the first is past the 5,000 values read
    deep: object = {"id": "NB"}
    for _ in range(50_000):
        deep = {"province": deep}
    assert not holds_named(deep, {"provinceId": "NB"})  # too deep to reach within the bound
    assert holds_named({"province": {"id": "NB"}}, {"provinceId": "NB"})
