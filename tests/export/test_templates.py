"""Every record of the demo and of a BFCL-derived run renders in every shared chat template, adapted
to the template's family, with each call, argument, result and offered tool in the text once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.canonical import TOOLS, conversation
from support.runs import read_records

from fms_dgt.core.tools.wire import Message
from fms_dgt.core.tools.wire.families import detect
from fms_dgt.errors import ChatTemplateError
from fms_dgt.export import check_record, convert_record, export_record, read_record, render_record
from fms_dgt.export.templates import calls_in_text, check_messages, read_template

TEMPLATE_FILES = [
    "granite3.3_official.jinja",
    "hermes3_tool_use_official.jinja",
    "llama3.1_json_vllm.jinja",
    "llama3.3_official.jinja",
    "mistral_nemo_official.jinja",
    "mistral_v03_vllm.jinja",
    "qwen3_official.jinja",
]


def _calls(record: dict[str, Any]) -> list[tuple[str, Any]]:
    return [
        (c["function"]["name"], c["function"]["arguments"])
        for m in record["messages"]
        for c in m.get("tool_calls") or ()
    ]


def test_the_shared_templates_are_the_ones_tested(templates: dict[str, str]) -> None:
    assert sorted(templates) == TEMPLATE_FILES


@pytest.mark.parametrize("name", TEMPLATE_FILES)
def test_every_run_record_renders_with_everything_in_it(
    templates: dict[str, str], demo_run: Path, bfcl_run: Path, name: str
) -> None:
    template = templates[name]
    family = detect(template)
    records = read_records(demo_run) + read_records(bfcl_run)
    for record in records:
        adapted = convert_record(record, fmt="hf", family=family.name)
        assert check_record(adapted, template) == [], (name, record["metadata"]["index"])
        text = render_record(adapted, template)
        rendered = calls_in_text(text)
        assert rendered == _calls(adapted), "calls parsed back from the text equal the record's"
        assert all(isinstance(arguments, dict) for _, arguments in rendered), "arguments once, as objects"
        for _, arguments in rendered:
            if arguments:
                assert json.dumps(json.dumps(arguments))[1:-1] not in text, "never an escaped string"
        for tool in adapted["tools"]:
            assert tool["function"]["name"] in text


@pytest.mark.parametrize("name", TEMPLATE_FILES)
def test_the_canonical_conversation_renders_with_everything_in_it(
    templates: dict[str, str], name: str
) -> None:
    canonical = read_record(export_record(TOOLS, conversation(), {}, fmt="openai"))
    assert check_messages(canonical.tools, canonical.messages, templates[name]) == []


def test_the_check_finds_what_a_template_loses(templates: dict[str, str], demo_run: Path) -> None:
    plain = export_record(TOOLS, conversation(), {}, fmt="hf")
    granite = check_record(plain, templates["granite3.3_official.jinja"])
    assert granite and all(p.startswith("call lost: ") for p in granite), "Granite prints content only"
    llama = check_record(plain, templates["llama3.3_official.jinja"])
    assert llama == ["does not render: TemplateError: This model only supports single tool-calls at once!"]
    strings = export_record(TOOLS, conversation(), {}, fmt="hf", family="llama3-json")
    doubled = check_record(strings, templates["llama3.3_official.jinja"])
    assert "double-encoded: a result is printed as an escaped JSON string" in doubled
    # The OpenAI layout's string arguments, through a template that JSON-encodes them again.
    one_call = next(
        r for r in read_records(demo_run) if all(len(m.get("tool_calls") or ()) <= 1 for m in r["messages"])
    )
    openai = dict(one_call, metadata={**one_call["metadata"], "format": "hf"})
    problems = check_record(openai, templates["llama3.3_official.jinja"])
    assert any(p.startswith("double-encoded: the arguments of") for p in problems)


def test_a_lost_argument_or_result_or_tool_is_named(templates: dict[str, str]) -> None:
    record = export_record(TOOLS, conversation(), {}, fmt="hf", family="qwen")
    template = templates["qwen3_official.jinja"]
    dropping = template.replace("{{- tool_call.arguments | tojson }}", '{{- {"q": "other"} | tojson }}')
    problems = check_record(record, dropping)
    assert any(p.startswith("argument lost: calc__add.a") for p in problems)
    assert any(p.startswith("argument changed: kb__lookup.q") for p in problems)
    no_results = template.replace(
        "{{- message.content }}\n        {{- '\\n</tool_response>' }}", "{{- '\\n</tool_response>' }}"
    )
    assert no_results != template
    assert any(p.startswith("result lost") for p in check_record(record, no_results))
    no_tools = template.replace("{{- tool | tojson }}", "")
    lost = check_record(record, no_tools)
    assert "tool description lost: the description of kb__lookup is not in the rendered text" in lost
    assert "tool parameter lost: kb__lookup.limit is not in the rendered text" in lost


def test_a_template_that_raises_or_is_not_jinja_is_a_problem_not_a_crash(templates: dict[str, str]) -> None:
    record = export_record(TOOLS, conversation(), {}, fmt="hf")
    assert check_record(record, "{% if %}")[0].startswith("does not render: TemplateSyntaxError")
    with pytest.raises(ChatTemplateError, match="does not render: TemplateError: no"):
        render_record(record, "{{ raise_exception('no') }}")


def test_a_conversation_the_family_cannot_hold_is_reported_with_the_reason(templates: dict[str, str]) -> None:
    speaking = [Message("user", "u"), Message("assistant", "one moment", conversation()[4].tool_calls)]
    problems = check_messages(TOOLS, speaking, templates["llama3.3_official.jinja"])
    assert len(problems) == 1 and "llama3 template family" in problems[0]


def test_a_template_is_read_from_a_jinja_file_or_a_tokenizer_config(
    tmp_path: Path, templates: dict[str, str]
) -> None:
    config = tmp_path / "tokenizer_config.json"
    config.write_text(
        json.dumps(
            {"chat_template": [{"name": "default", "template": "x"}, {"name": "tool_use", "template": "T"}]}
        )
    )
    assert read_template(config) == "T"
    (tmp_path / "t.jinja").write_text(templates["qwen3_official.jinja"], encoding="utf-8")
    assert read_template(tmp_path / "t.jinja") == templates["qwen3_official.jinja"]


def test_arguments_equal_to_an_earlier_result_are_not_taken_for_double_encoding(
    templates: dict[str, str],
) -> None:
    from fms_dgt.core.tools.data_objects import ToolCall, ToolResult

    point = {"a": 1, "b": 2}
    wired = [
        Message("user", "add twice"),
        Message("assistant", "", [ToolCall("calc::add", point, "Aaaaaaaa1")]),
        Message("tool", results=[ToolResult("Aaaaaaaa1", "calc::add", point)]),
        Message("assistant", "", [ToolCall("calc::add", point, "Bbbbbbbb2")]),
        Message("tool", results=[ToolResult("Bbbbbbbb2", "calc::add", 3)]),
        Message("assistant", "3"),
    ]
    # vLLM's Llama JSON template prints results as strings inside {"output": ...} by design.
    assert check_messages(TOOLS, wired, templates["llama3.1_json_vllm.jinja"]) == []
