"""Template families: each family's rules applied, never silently: what cannot be expressed is rejected."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.canonical import conversation

from fms_dgt.core.tools.data_objects import ToolCall, ToolResult
from fms_dgt.core.tools.wire import Message
from fms_dgt.core.tools.wire.families import FAMILIES, adapt, adapt_tools, detect, finish, get_family
from fms_dgt.errors import RejectedRecord, WireError

TEMPLATES = Path(__file__).resolve().parents[4].parent / "shared" / "chat-templates"
EXPECTED = {
    "granite3.3_official.jinja": "granite",
    "hermes3_tool_use_official.jinja": "hermes",
    "llama3.1_json_vllm.jinja": "llama3-json",
    "llama3.3_official.jinja": "llama3",
    "mistral_nemo_official.jinja": "mistral",
    "mistral_v03_vllm.jinja": "mistral",
    "qwen3_official.jinja": "qwen",
}


def test_the_family_of_every_shared_template_is_told_from_its_text() -> None:
    if not TEMPLATES.is_dir():
        pytest.skip("../shared/chat-templates is absent")
    found = {p.name: detect(p.read_text(encoding="utf-8")).name for p in sorted(TEMPLATES.glob("*.jinja"))}
    assert found == EXPECTED


def test_an_unknown_template_or_family_says_what_exists() -> None:
    with pytest.raises(WireError, match=r"cannot tell the family.*--template-family"):
        detect("{{ messages }}")
    with pytest.raises(WireError, match="unknown template family 'phi': use one of qwen, hermes"):
        get_family("phi")
    assert get_family(FAMILIES["qwen"]) is FAMILIES["qwen"]


def test_parallel_calls_become_consecutive_turns_paired_by_id() -> None:
    turns = conversation()
    # Results in another order than the calls: pairing is by id, not position.
    turns[3] = Message("tool", results=list(reversed(turns[3].results)))
    out = adapt(turns, "llama3")
    assert [(m.role, len(m.tool_calls), len(m.results)) for m in out] == [
        ("system", 0, 0),
        ("user", 0, 0),
        ("assistant", 1, 0),
        ("tool", 0, 1),
        ("assistant", 1, 0),
        ("tool", 0, 1),
        ("assistant", 1, 0),
        ("tool", 0, 1),
        ("assistant", 0, 0),
    ]
    for call_turn, result_turn in zip(out[2:8:2], out[3:8:2], strict=True):
        assert call_turn.tool_calls[0].call_id == result_turn.results[0].call_id
    assert [c for m in out for c in m.tool_calls] == [c for m in conversation() for c in m.tool_calls]


def test_parallel_calls_that_cannot_be_paired_are_rejected() -> None:
    calls = [ToolCall("a::x", {}, "c1"), ToolCall("a::y", {}, "c2")]
    no_results = [Message("user", "u"), Message("assistant", "", calls), Message("assistant", "done")]
    with pytest.raises(RejectedRecord, match="no results follow"):
        adapt(no_results, "llama3")
    stray = [
        Message("user", "u"),
        Message("assistant", "", calls),
        Message("tool", results=[ToolResult("c1", "a::x", 1), ToolResult("c9", "a::y", 2)]),
    ]
    with pytest.raises(RejectedRecord, match="'c2' has no result"):
        adapt(stray, "llama3-json")
    assert adapt(stray, "qwen") == stray, "a family that takes parallel calls keeps the turns"


def test_text_on_a_call_turn_is_rejected_where_the_template_drops_it() -> None:
    turns = [Message("user", "u"), Message("assistant", "let me look", [ToolCall("a::x", {}, "Abcdefgh1")])]
    for family in ("llama3", "hermes", "mistral"):
        with pytest.raises(RejectedRecord, match=f"{family} template family: turn 1 says something"):
            adapt(turns, family)
    assert adapt(turns, "qwen") == turns and adapt(turns, "granite") == turns


def test_mistral_ids_are_nine_alphanumerics_kept_when_they_are_and_relabelled_consistently() -> None:
    good = conversation()
    assert adapt(good, "mistral") == good
    old = [
        Message("user", "u"),
        Message("assistant", "", [ToolCall("a::x", {}, "call_0_0"), ToolCall("a::y", {}, "call_0_1")]),
        Message("tool", results=[ToolResult("call_0_1", "a::y", 2), ToolResult("call_0_0", "a::x", 1)]),
    ]
    out = adapt(old, "mistral")
    ids = [c.call_id for c in out[1].tool_calls]
    assert all(i and len(i) == 9 and i.isalnum() for i in ids) and len(set(ids)) == 2
    assert [r.call_id for r in out[2].results] == [ids[1], ids[0]]
    assert adapt(old, "mistral") == out, "deterministic"
    assert old[1].tool_calls[0].call_id == "call_0_0", "input untouched"


def test_hermes_tools_have_single_json_types_or_are_rejected() -> None:
    tool = {
        "type": "function",
        "function": {
            "name": "t",
            "description": "",
            "parameters": {"type": "object", "properties": {"a": {"type": ["string", "null"]}}},
        },
    }
    out = adapt_tools([tool], "hermes")
    assert out[0]["function"]["parameters"]["properties"]["a"] == {"type": "string", "nullable": True}
    assert adapt_tools([tool], "qwen") == [tool]
    bad = {
        **tool,
        "function": {
            **tool["function"],
            "parameters": {"type": "object", "properties": {"n": {"type": "null"}}},
        },
    }
    with pytest.raises(RejectedRecord, match=r"t.parameters.n has type 'null'"):
        adapt_tools([bad], "hermes")


def _hf_body() -> dict[str, object]:
    return {
        "messages": [
            {"role": "user", "content": "u"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "x", "arguments": {"a": 1}}}
                ],
            },
            {"role": "tool", "tool_call_id": "c", "name": "x", "content": '{"v": [1, 2]}'},
            {"role": "tool", "tool_call_id": "d", "name": "x", "content": "plain words"},
            {"role": "tool", "tool_call_id": "e", "name": "x", "content": "3.5"},
        ]
    }


def test_granite_calls_are_written_into_content() -> None:
    out = finish(_hf_body(), "granite")
    assert out["messages"][1]["content"] == '<|tool_call|>[{"name": "x", "arguments": {"a": 1}}]'
    assert out["messages"][1]["tool_calls"], "the structured calls stay for trainers that read them"


def test_llama3_results_are_json_values_the_template_encodes_once() -> None:
    out = finish(_hf_body(), "llama3")
    assert [m["content"] for m in out["messages"][2:]] == [{"v": [1, 2]}, "plain words", 3.5]
    assert finish(_hf_body(), "llama3-json") == _hf_body()
    body = _hf_body()
    body["messages"][2]["content"] = "true"  # type: ignore[index]
    with pytest.raises(RejectedRecord, match="Python literal"):
        finish(body, "llama3")
    body["messages"][2]["content"] = "null"  # type: ignore[index]
    assert finish(body, "llama3")["messages"][2]["content"] == ""  # no result (204): an empty one
