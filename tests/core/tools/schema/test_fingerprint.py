from __future__ import annotations

import copy
from typing import Any

import pytest

from fms_dgt.core.tools.schema import fingerprint

BASE = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "City"},
        "units": {"type": "string", "enum": ["c", "f"], "default": "c"},
    },
    "required": ["city", "units"],
}


def test_fingerprint_ignores_order_and_annotations() -> None:
    reordered = {
        "required": ["units", "city"],
        "properties": {
            "units": {"enum": ["f", "c"], "type": "string", "title": "Units"},
            "city": {"type": "string", "examples": ["Paris"], "$comment": "x"},
        },
        "type": "object",
        "description": "another description",
    }
    assert fingerprint(reordered) == fingerprint(BASE)


@pytest.mark.parametrize(
    "change",
    [
        lambda s: s["properties"]["city"].update(type="integer"),
        lambda s: s["required"].remove("units"),
        lambda s: s["properties"]["units"]["enum"].append("k"),
        lambda s: s.update(additionalProperties=False),
        lambda s: s["properties"].update(extra={"type": "string"}),
        lambda s: s["properties"]["city"].update(minLength=1),
    ],
)
def test_fingerprint_changes_when_validation_changes(change: Any) -> None:
    changed = copy.deepcopy(BASE)
    change(changed)
    assert fingerprint(changed) != fingerprint(BASE)


def test_property_named_like_an_annotation_still_counts() -> None:
    with_description_param = copy.deepcopy(BASE)
    with_description_param["properties"]["description"] = {"type": "string"}
    assert fingerprint(with_description_param) != fingerprint(BASE)


def test_a_malformed_type_list_has_a_fingerprint_and_order_does_not_matter() -> None:
    # A hand-built tool may carry what the loaders refuse (a number or an object among the types).
    assert fingerprint({"type": ["string", 5]}) == fingerprint({"type": [5, "string", 5]})
    assert fingerprint({"type": [{"a": 1}, "x"]}) == fingerprint({"type": ["x", {"a": 1}]})
    assert fingerprint({"type": ["string", 5]}) != fingerprint({"type": ["string"]})
