"""Tests of media type choice and recognition (fms_dgt/core/tools/openapi/media.py)."""

from __future__ import annotations

import pytest

from fms_dgt.core.tools.openapi.media import concrete, is_json, is_structured, pick_media_type


@pytest.mark.parametrize(
    ("types", "expected"),
    [
        (["text/plain", "application/vnd.api+json", "multipart/form-data"], "application/vnd.api+json"),
        (["multipart/form-data", "application/x-www-form-urlencoded"], "application/x-www-form-urlencoded"),
        (["text/plain", "Multipart/Form-Data"], "Multipart/Form-Data"),
        (["text/plain", "application/xml"], "text/plain"),
        (["application/xml", "*/*"], "*/*"),
    ],
)
def test_pick_prefers_json_then_forms_then_the_first(types: list[str], expected: str) -> None:
    assert pick_media_type(dict.fromkeys(types)) == expected


def test_recognition_and_wildcards() -> None:
    assert is_json("Application/JSON; charset=utf-8") and is_json("application/problem+json")
    assert not is_json("application/jsonl")
    assert is_structured("application/x-www-form-urlencoded") and not is_structured("text/plain")
    assert concrete("*/*") == "application/json" and concrete("application/*") == "application/json"
    assert concrete("text/csv") == "text/csv"
