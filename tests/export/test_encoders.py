"""Encoders built once give json.dumps's text, with and without the C accelerator."""

from __future__ import annotations

import json
import json.encoder
from typing import Any

import pytest

from fms_dgt.export import encoders

VALUES: list[Any] = [
    {"b": [1, 2.5, -0.0, 1e300, 10**30, True, None], "a": {"z": 'é\n\t"\\\x01\u2028', "y": []}},
    [float("nan"), float("inf"), -float("inf"), "🙂", "\ud800", {"k": {}}],
    "just text",
    12,
]
MIXED_KEYS = {3: "int key", 1.5: "float key", True: "bool key", None: "null key", "s": {}}


@pytest.mark.parametrize("value", VALUES)
def test_each_encoder_gives_the_text_of_json_dumps(value: Any) -> None:
    assert encoders.COMPACT(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert encoders.SORTED(value) == json.dumps(value, ensure_ascii=False, sort_keys=True)
    assert encoders.PLAIN(value) == json.dumps(value, ensure_ascii=False)


def test_keys_that_are_not_text_are_written_as_json_dumps_writes_them() -> None:
    assert encoders.COMPACT(MIXED_KEYS) == json.dumps(MIXED_KEYS, ensure_ascii=False, separators=(",", ":"))
    assert encoders.PLAIN(MIXED_KEYS) == json.dumps(MIXED_KEYS, ensure_ascii=False)


def test_without_the_c_accelerator_the_reference_encoder_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(json.encoder, "c_make_encoder", None)
    encode = encoders.encoder(separators=(",", ":"), sort_keys=True)
    assert isinstance(getattr(encode, "__self__", None), json.JSONEncoder)
    value = VALUES[0]
    assert encode(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def test_what_json_cannot_encode_fails_as_in_json_dumps() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        encoders.COMPACT({"a": {1, 2}})
