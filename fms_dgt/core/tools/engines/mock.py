"""The ``mock`` engine: offline, deterministic results (the default engine).

For each call, in order of precedence:

1. a per-tool entry in ``results`` (qualified name -> value or template),
2. the tool's own manifest settings (``metadata["mock_result"]`` / ``metadata["mock_template"]``),
3. the engine-wide ``template`` or ``result``,
4. a result that fits the call (:func:`~fms_dgt.core.tools.engines.results.mock_result`): an exact
   implementation of a pure tool, a result example the source carries, a value synthesised from
   ``output_parameters`` that echoes the arguments and validates, or, without an output schema, an
   object shaped by the tool's name. ``metadata["mock"]`` names the source.

Templates are strings, lists or mappings whose strings may contain ``{{ argument }}``; a string
that is exactly one placeholder becomes the argument's value itself (not its text). Synthesis is
seeded from (engine seed, session id, call id, tool, arguments), so the same run gives the same
results in any process.

A manifest tool in ``mode: live`` is meant to be called for real (the ``http`` engine, see
:mod:`fms_dgt.core.tools.engines.http`): routed here, its calls fail with a message saying so,
unless the engine is configured with ``simulate_live: true``; then it is simulated as above and
its results say ``metadata["simulated_live"] = True``.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

from fms_dgt.core.tools._json import SORTED, STABLE
from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.engines.base import CallPolicy, ToolEngine
from fms_dgt.core.tools.engines.results import mock_result
from fms_dgt.core.tools.engines.runner import error_info
from fms_dgt.errors import TemplateError
from fms_dgt.plugins import register_tool_engine

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = ["MockToolEngine", "render_template"]

# ``{{ field }}`` and the Go-template form ``{{.field}}``; dotted paths reach into objects.
_PLACEHOLDER = re.compile(r"\{\{\s*\.?([A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*)\s*\}\}")
_MISSING = object()


def render_template(template: Any, arguments: Mapping[str, Any], fields: Collection[str] = ()) -> Any:
    """Fill ``{{ name }}`` / ``{{.name}}`` placeholders from ``arguments`` (recursively).

    A string that is exactly one placeholder becomes the argument's value itself; a string whose
    filled text is JSON (``'{"temp": {{.t}}}'``) becomes that JSON value; other strings stay text.
    A placeholder naming one of ``fields`` (the tool's declared arguments) that the call left out
    renders as null.

    Raises:
        TemplateError: a placeholder names a field that is neither given nor declared (the
            template and the field are named).
    """
    if isinstance(template, str):
        return _render_text(template, arguments, fields)
    if isinstance(template, list):
        return [render_template(t, arguments, fields) for t in template]
    if isinstance(template, Mapping):
        return {k: render_template(v, arguments, fields) for k, v in template.items()}
    return template


def _render_text(template: str, arguments: Mapping[str, Any], fields: Collection[str]) -> Any:
    whole = _PLACEHOLDER.fullmatch(template.strip())
    if whole:
        return _lookup(whole.group(1), arguments, template, fields)
    if "{{" not in template:
        return template
    text = _PLACEHOLDER.sub(lambda m: _text(_lookup(m.group(1), arguments, template, fields)), template)
    stripped = text.strip()
    if stripped[:1] in ("{", "[") and stripped != template.strip():
        try:
            return json.loads(stripped)
        except json.JSONDecodeError:
            return text
    return text


def _lookup(path: str, arguments: Mapping[str, Any], template: str, fields: Collection[str]) -> Any:
    value: Any = arguments
    for part in path.split("."):
        value = value.get(part, _MISSING) if isinstance(value, Mapping) else _MISSING
        if value is _MISSING and path.split(".")[0] in fields:
            return None  # a declared argument the call left out
        if value is _MISSING:
            known = ", ".join(sorted(map(str, arguments))) or "none"
            raise TemplateError(
                f"unknown field {path!r} in mock template {template!r}: the call's arguments are "
                f"{known}. Fix the template or the tool's input schema"
            )
    return value


def _text(value: Any) -> str:
    return value if isinstance(value, str) else SORTED(value)


def call_seed(*parts: Any) -> int:
    """A seed from stable parts (independent of ``PYTHONHASHSEED``)."""
    text = STABLE(parts)  # json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


@register_tool_engine("mock")
class MockToolEngine(ToolEngine):
    """Deterministic offline results.

    Args:
        registry: the tools.
        seed: base seed of synthesised results.
        result: a static result for every tool.
        template: a template over the arguments for every tool.
        results: per qualified name, a static result or template.
        simulate_live: also simulate tools whose manifest says ``mode: live`` (their results are
            marked ``metadata["simulated_live"]``); by default their calls fail.
        max_workers: batch parallelism.
        policy: call policy.
    """

    bounded = True  # synthesis is size-capped and waits on nothing: no timeout thread per call

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        seed: int = 0,
        result: Any = None,
        template: Any = None,
        results: Mapping[str, Any] | None = None,
        simulate_live: bool = False,
        max_workers: int = 1,
        policy: CallPolicy | None = None,
    ) -> None:
        super().__init__(registry, max_workers=max_workers, policy=policy)
        self.seed = seed
        self.result = result
        self.template = template
        self.results = dict(results or {})
        self.simulate_live = simulate_live

    def call(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> ToolResult:
        """A result from the first configured source (see module docstring)."""
        live = tool.metadata.get("mode") == "live"
        if live and not self.simulate_live:
            return _live_refusal(tool, call)
        value, source = self._value(tool, call, state)
        metadata: dict[str, Any] = {"mock": source}
        if live:
            metadata["simulated_live"] = True
        return ToolResult(call.call_id, call.name, result=value, metadata=metadata)

    def _value(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> tuple[Any, str]:
        args = call.arguments
        fields = tuple(tool.parameters.get("properties") or ())
        if tool.qualified_name in self.results:
            return render_template(self.results[tool.qualified_name], args, fields), "results"
        if "mock_template" in tool.metadata:
            return render_template(tool.metadata["mock_template"], args, fields), "tool template"
        if "mock_result" in tool.metadata:
            return tool.metadata["mock_result"], "tool result"
        if self.template is not None:
            return render_template(self.template, args, fields), "template"
        if self.result is not None:
            return self.result, "result"
        seed = call_seed(self.seed, state.get("session_id"), call.call_id, tool.qualified_name, args)
        return mock_result(tool, args, random.Random(seed))


def _live_refusal(tool: Tool, call: ToolCall) -> ToolResult:
    how = (
        "route it to the http engine (remove the source's engine: key, or point it at an engine of type http)"
        if isinstance(tool.metadata.get("http"), Mapping)
        else "give its manifest an http block so the http engine can call it"
    )
    return ToolResult(
        call.call_id,
        call.name,
        error=f"not simulated: {tool.qualified_name} is a live tool (mode: live), so the mock engine "
        f"does not make up its results. To call it for real, {how}; to simulate it anyway, set "
        "simulate_live: true on the mock engine.",
        metadata={"error": error_info("policy", "execution")},
    )
