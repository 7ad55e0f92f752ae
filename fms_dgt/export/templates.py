"""Rendering records through chat templates and reporting what a template lost.

A chat template is a Jinja program each model family ships; a record is only worth training on if
the template prints every call, argument, result and tool of it. :func:`render_record` renders an
``hf`` record with transformers' chat-template machinery (the ``templates`` extra: ``pip install
'fms_dgt[templates]'``; no torch); :func:`check_record` renders it and compares the text with the
record:

* the template refuses the record (it raises) -> ``does not render: ...``;
* the calls parsed back out of the text (``<tool_call>`` tags, Llama's ``{"name", "parameters"}``
  turns, Mistral's ``[TOOL_CALLS]``, Granite's ``<|tool_call|>``) differ from the record's ->
  ``call lost``, ``argument lost``, ``argument changed`` or ``call added``;
* a call's arguments printed as a JSON string instead of an object -> ``double-encoded``;
* a result or an offered tool (name, description, parameter names) missing from the text.

:func:`check_messages` does the same from a canonical conversation: it exports it in the ``hf``
layout adapted to the template's family (told from the template) first.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.wire.base import Message
from fms_dgt.core.tools.wire.families import Family, detect, get_family
from fms_dgt.errors import ChatTemplateError, ExportError, RejectedRecord
from fms_dgt.export.layout import from_arrow_safe

__all__ = ["calls_in_text", "check_messages", "check_record", "read_template", "render_record"]

_INSTALL = "pip install 'fms_dgt[templates]'"
#: Where a call starts in each family's rendered text.
_MARKERS = (
    "<tool_call>",
    "<|tool_call|>",
    "[TOOL_CALLS]",
    "<|start_header_id|>assistant<|end_header_id|>",
)
_DECODER = json.JSONDecoder()


def read_template(path: str | Path) -> str:
    """The text of a chat-template file (a ``.jinja`` file, or a tokenizer config's ``chat_template``).

    Raises:
        ExportError: the file cannot be read or holds no template.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ExportError(
            f"cannot read the chat template: {exc}. Give a .jinja file", path=str(file)
        ) from None
    if file.suffix == ".json":
        return _template_of_config(text, str(file))
    return text


def _template_of_config(text: str, path: str) -> str:
    try:
        template = json.loads(text).get("chat_template")
    except (ValueError, AttributeError):
        template = None
    if isinstance(template, list):
        template = next((t.get("template") for t in template if t.get("name") == "tool_use"), None)
    if not isinstance(template, str):
        raise ExportError("no chat_template in this tokenizer config. Give a .jinja file", path=path)
    return template


def _render_function() -> Any:
    try:
        module = importlib.import_module("transformers.utils.chat_template_utils")
    except ImportError as exc:
        raise ExportError(
            f"missing optional dependency for rendering chat templates: transformers (and jinja2) are not "
            f"installed. Install them with {_INSTALL}"
        ) from exc
    return module.render_jinja_template


def render_record(record: Mapping[str, Any], template: str, *, add_generation_prompt: bool = False) -> str:
    """The text a chat template makes of an ``hf`` record (arrow-safe records are decoded first).

    Raises:
        ExportError: transformers is not installed (the message says how to install it).
        ChatTemplateError: the template raised (its message is kept) or is not valid Jinja.
    """
    plain = from_arrow_safe(record)
    render = _render_function()
    try:
        rendered, _ = render(
            conversations=[plain["messages"]],
            tools=plain.get("tools") or None,
            chat_template=template,
            add_generation_prompt=add_generation_prompt,
            bos_token="<s>",
            eos_token="</s>",
        )
    except Exception as exc:  # a template is a program: whatever it raises is its refusal
        raise ChatTemplateError(f"does not render: {type(exc).__name__}: {exc}") from exc
    return str(rendered[0])


def check_messages(
    tools: Sequence[Tool],
    messages: Sequence[Message],
    template: str,
    *,
    family: str | Family | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> list[str]:
    """Problems of a canonical conversation rendered through ``template`` (empty: none).

    The conversation is exported in the ``hf`` layout adapted to ``family`` (told from the template
    when not given); a conversation the family cannot express is one problem, with its reason.

    Raises:
        ExportError: transformers is not installed, or the template's family cannot be told.
    """
    from fms_dgt.export.records import export_record

    rules = get_family(family) if family is not None else _detect(template)
    try:
        record = export_record(tools, messages, metadata or {}, fmt="hf", family=rules)
    except RejectedRecord as exc:
        return [str(exc)]
    return check_record(record, template)


def _detect(template: str) -> Family:
    from fms_dgt.errors import WireError

    try:
        return detect(template)
    except WireError as exc:
        raise ExportError(str(exc)) from None


def check_record(record: Mapping[str, Any], template: str) -> list[str]:
    """Problems of an ``hf`` record rendered through ``template`` (empty: the template keeps everything).

    Raises:
        ExportError: transformers is not installed.
    """
    plain = from_arrow_safe(record)
    try:
        text = render_record(plain, template)
    except ChatTemplateError as exc:
        return [str(exc)]
    problems = _compare_calls(_record_calls(plain), calls_in_text(text), _without_results(plain, text))
    problems.extend(_missing_results(plain, text))
    problems.extend(_missing_tools(plain, text))
    return problems


# ---------------------------------------------------------------------------------- calls


def calls_in_text(text: str) -> list[tuple[str, Any]]:
    """Every call printed in a rendered conversation, as ``(name, arguments)`` in order.

    Arguments are what the text holds: an object, or a string when the template encoded them twice.
    """
    found: list[tuple[int, str, Any]] = []
    for marker in _MARKERS:
        for match in re.finditer(re.escape(marker), text):
            found.extend((match.end(), n, a) for n, a in _calls_at(text, match.end()))
    return [(name, arguments) for _, name, arguments in sorted(found, key=lambda f: f[0])]


def _calls_at(text: str, start: int) -> list[tuple[str, Any]]:
    position = start + len(text[start:]) - len(text[start:].lstrip())
    try:
        value, _ = _DECODER.raw_decode(text, position)
    except ValueError:
        return []
    listed = value if isinstance(value, list) else [value]
    calls = []
    for item in listed:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            arguments = item.get("arguments", item.get("parameters"))
            if arguments is not None:
                calls.append((item["name"], arguments))
    return calls


def _record_calls(record: Mapping[str, Any]) -> list[tuple[str, Any]]:
    return [
        (c["function"]["name"], c["function"]["arguments"])
        for m in record["messages"]
        for c in m.get("tool_calls") or ()
    ]


def _compare_calls(expected: list[tuple[str, Any]], rendered: list[tuple[str, Any]], text: str) -> list[str]:
    problems = [
        f"double-encoded: the arguments of {n} are printed as a JSON string"
        for n, a in rendered
        if isinstance(a, str)
    ]
    decoded = [(n, _decoded(a)) for n, a in rendered]
    problems.extend(_escaped(expected, text))
    if decoded == expected:
        return problems
    remaining = list(decoded)
    for name, arguments in expected:
        if (name, arguments) in remaining:
            remaining.remove((name, arguments))
            continue
        same_name = next((r for r in remaining if r[0] == name), None)
        if same_name is None:
            problems.append(f"call lost: {name} {_short(arguments)} is not in the rendered text")
            continue
        remaining.remove(same_name)
        problems.extend(_argument_problems(name, arguments, same_name[1]))
    problems.extend(f"call added: {n} {_short(a)} is rendered but not in the record" for n, a in remaining)
    if not problems:
        problems.append("calls rendered in another order than the record's")
    return problems


def _decoded(arguments: Any) -> Any:
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


def _without_results(record: Mapping[str, Any], text: str) -> str:
    """The text without the results' own printed forms: a call whose arguments equal an earlier
    result (a wired value) must not be taken for that result, printed as a template's string."""
    for m in record["messages"]:
        content = m["content"]
        if m["role"] == "tool" and isinstance(content, str) and content:
            text = text.replace(json.dumps({"output": content}, ensure_ascii=False), "")
            text = text.replace(json.dumps(content, ensure_ascii=False)[1:-1], "")
    return text


def _escaped(expected: list[tuple[str, Any]], text: str) -> list[str]:
    out = []
    for name, arguments in expected:
        if isinstance(arguments, dict) and arguments:
            escaped = json.dumps(json.dumps(arguments, ensure_ascii=False), ensure_ascii=False)[1:-1]
            if escaped in text:
                out.append(f"double-encoded: the arguments of {name} appear as an escaped JSON string")
    return out


def _argument_problems(name: str, expected: Any, rendered: Any) -> list[str]:
    if not isinstance(expected, dict) or not isinstance(rendered, dict):
        return [f"argument changed: {name} has {_short(rendered)} instead of {_short(expected)}"]
    out = [f"argument lost: {name}.{key}" for key in expected if key not in rendered]
    out.extend(
        f"argument changed: {name}.{key} is {_short(rendered[key])} instead of {_short(value)}"
        for key, value in expected.items()
        if key in rendered and rendered[key] != value
    )
    out.extend(f"argument added: {name}.{key}" for key in rendered if key not in expected)
    return out


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


# ---------------------------------------------------------------------------------- results, tools


def _missing_results(record: Mapping[str, Any], text: str) -> list[str]:
    problems = []
    for m in record["messages"]:
        if m["role"] != "tool":
            continue
        found = _result_found(m["content"], text)
        if found is not True:
            problems.append(
                found or f"result lost: the result of {m.get('tool_call_id')} is not in the rendered text"
            )
    return problems


def _result_found(content: Any, text: str) -> bool | str:
    if not isinstance(content, str):
        forms = [json.dumps(content, ensure_ascii=False), str(content)]
        return any(f in text for f in forms)
    if content in text or json.dumps({"output": content}, ensure_ascii=False) in text:
        return True
    escaped = json.dumps(content, ensure_ascii=False)[1:-1]
    if escaped not in text:
        return False
    value = _decoded(content)
    if isinstance(value, (dict, list)):
        return "double-encoded: a result is printed as an escaped JSON string"
    return True


def _missing_tools(record: Mapping[str, Any], text: str) -> list[str]:
    problems = []
    for tool in record.get("tools") or ():
        function = tool.get("function", tool)
        name = function.get("name", "")
        if name not in text:
            problems.append(f"tool lost: {name} is not in the rendered text")
            continue
        description = function.get("description") or ""
        if description and not _text_found(description, text):
            problems.append(f"tool description lost: the description of {name} is not in the rendered text")
        for prop in (function.get("parameters") or {}).get("properties") or {}:
            if prop not in text:
                problems.append(f"tool parameter lost: {name}.{prop} is not in the rendered text")
    return problems


def _text_found(value: str, text: str) -> bool:
    return value in text or json.dumps(value, ensure_ascii=False)[1:-1] in text or value.strip() in text
