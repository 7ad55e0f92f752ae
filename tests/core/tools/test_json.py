"""The encoders built once give json.dumps's text for every option set a run uses."""

from __future__ import annotations

import datetime
import json
import json.encoder
from typing import Any

import pytest

from fms_dgt.core.tools import _json

VALUES: list[Any] = [
    {"b": [1, 2.5, -0.0, 1e300, 10**30, True, None], "a": {"z": 'é\n\t"\\\x01\u2028', "y": []}},
    [float("nan"), float("inf"), "🙂", "\ud800", {"k": {}}, (1, "tuple")],
    (7, "session", None, "ns::tool", {"b": 1, "a": [2, 3]}),
    "just text",
    12,
]


@pytest.mark.parametrize("value", VALUES)
def test_each_encoder_gives_the_text_of_json_dumps(value: Any) -> None:
    compact = (",", ":")
    assert _json.COMPACT(value) == json.dumps(value, ensure_ascii=False, separators=compact)
    assert _json.COMPACT_SORTED(value) == json.dumps(
        value, ensure_ascii=False, separators=compact, sort_keys=True
    )
    assert _json.SORTED(value) == json.dumps(value, ensure_ascii=False, sort_keys=True)
    assert _json.STABLE(value) == json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    assert _json.PLAIN(value) == json.dumps(value, ensure_ascii=False)


def test_a_default_writes_what_json_cannot_as_json_dumps_does() -> None:
    value = {"when": datetime.date(2024, 5, 1), "set": {1}, "n": [b"x"]}
    assert _json.STABLE(value) == json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    with pytest.raises(TypeError, match="not JSON serializable"):
        _json.SORTED(value)


MIXED_KEYS = {3: "int key", 1.5: "float key", True: "bool key", None: "null key", "s": {}}


def test_keys_that_are_not_text_are_written_as_json_dumps_writes_them() -> None:
    assert _json.COMPACT(MIXED_KEYS) == json.dumps(MIXED_KEYS, ensure_ascii=False, separators=(",", ":"))
    assert _json.PLAIN(MIXED_KEYS) == json.dumps(MIXED_KEYS, ensure_ascii=False)


def test_without_the_c_accelerator_the_reference_encoder_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(json.encoder, "c_make_encoder", None)
    encode = _json.encoder(separators=(",", ":"), sort_keys=True)
    assert isinstance(getattr(encode, "__self__", None), json.JSONEncoder)
    value = VALUES[0]
    assert encode(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def test_what_json_cannot_encode_fails_as_in_json_dumps() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        _json.COMPACT({"a": {1, 2}})


def test_scalars_are_read_depth_first_to_a_bound_without_recursion() -> None:
    from fms_dgt.core.tools._json import scalars

    assert list(scalars({"a": [1, {"b": None}], "c": "x"}, 100)) == ["x", None, 1]
    deep: object = "leaf"
    for _ in range(100_000):  # nested far past the recursion limit
        deep = [deep]
    assert list(scalars(deep, 200_000)) == ["leaf"]
    assert len(list(scalars(["v"] * 1_000_000, 5_000))) == 4_999  # the list itself is one visit
