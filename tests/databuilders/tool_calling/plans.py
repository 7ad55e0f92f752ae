"""Record plans over real tools, for the text writer's tests.

Arguments and results are synthesised from the tools' schemas (as the job does); a later call is
wired to an earlier one when an output of the earlier tool has the name of one of its inputs (else
one of its required inputs is wired to an earlier result, as a dataflow edge would). Some calls fail
or wait for approval, and some records call nothing.
"""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path
from typing import Any

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.loaders.file import FileToolLoader
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.core.tools.synth import SynthesisError, synthesise
from fms_dgt.databuilders.tool_calling.plan import PlannedCall, RecordPlan, Wire

#: Corpus tool sets the text is tested on (relative to ``corpus/toolsets``).
TOOLSETS = (
    "bfcl/BFCL_v4_multiple.json",
    "bfcl/BFCL_v4_simple_python.json",
    "toolbench/G1_query.json",
    "api-bank/tool_catalog.json",
    "toolmind/APIGen-MT-5k-query_tools.yaml",
    "toolmind/glaive-function-calling-v2-query_tools.yaml",
    "toolmind/When2Call-query_tools.yaml",
)
ERRORS = (
    "network error: the service did not answer (injected)",
    'HTTP 404: {"error": {"message": "flight not found", "code": 404}}',
    "ValueError: seat class must be economy or business",
    "call refused: the batch exceeds max_calls_per_batch=1 of engine 'rest'. Split the batch.",
)


@cache
def corpus_tools(corpus: Path, relative: str) -> list[Tool]:
    """The tools of one corpus file that take arguments we can synthesise (loaded once per run)."""
    tools = ToolRegistry.from_loaders([FileToolLoader(corpus / "toolsets" / relative)]).tools()
    return [t for t in tools if _can_call(t)]


def _can_call(tool: Tool) -> bool:
    try:
        synthesise(tool.parameters, random.Random(0), fingerprint=tool.fingerprint)
    except SynthesisError:
        return False
    return True


def _value(schema: dict[str, Any], rng: random.Random, name: str = "") -> Any:
    try:
        return synthesise(schema, rng, name=name, optional_probability=0.5)
    except SynthesisError:
        return None


def _result(tool: Tool, call: ToolCall, rng: random.Random, fail: bool) -> ToolResult:
    if fail:
        return ToolResult(call.call_id, call.name, error=rng.choice(ERRORS))
    value = _value(tool.output_parameters, rng) if tool.output_parameters else None
    return ToolResult(call.call_id, call.name, result=value if value is not None else {"status": "ok"})


def _wire(
    tool: Tool, args: dict[str, Any], source: PlannedCall | None, rng: random.Random
) -> dict[str, Wire]:
    """Arguments of ``tool`` taken from ``source``'s result (same name first, else a required one)."""
    if source is None or source.result is None or not isinstance(source.result.result, dict):
        return {}
    produced = source.result.result
    same = [k for k in args if k in produced]
    if not same and tool.parameters.get("required") and produced:
        target = tool.parameters["required"][0]
        output = rng.choice(sorted(produced))
        return {target: Wire(source.tool.qualified_name, output)} if target in args else {}
    return {k: Wire(source.tool.qualified_name, k) for k in same}


def _call(
    tool: Tool, index: int, position: int, source: PlannedCall | None, rng: random.Random, fail: bool
) -> PlannedCall:
    args = _value(tool.parameters, rng) or {}
    wired = _wire(tool, args, source, rng)
    call = ToolCall(tool.qualified_name, args, f"call_{index}_{position}")
    planned = PlannedCall(
        tool=tool, call=call, given={k: v for k, v in args.items() if k not in wired}, wired=wired
    )
    planned.result = _result(tool, call, rng, fail)
    return planned


def make_plan(tools: list[Tool], index: int, rng: random.Random, *, no_calls: bool = True) -> RecordPlan:
    """A plan over 1-3 of ``tools``: parallel or chained, some calls failed or approved."""
    roll = rng.random()
    picked = rng.sample(tools, min(len(tools), rng.randint(1, 3)))
    offered = picked + rng.sample(tools, min(len(tools), 2))
    if no_calls and roll < 0.08:
        topic = rng.choice([t for t in tools if t not in offered] or tools)
        return RecordPlan(index=index, scenario="test", kind="irrelevant", offered=offered, topic=topic)
    required = [t for t in picked if t.parameters.get("required")]
    if no_calls and roll < 0.16 and required:
        tool = required[0]
        missing = (tool, tool.parameters["required"][0])
        return RecordPlan(
            index=index, scenario="test", kind="missing_value", offered=offered, missing=missing
        )
    return _calls_plan(picked, offered, index, rng)


def _calls_plan(picked: list[Tool], offered: list[Tool], index: int, rng: random.Random) -> RecordPlan:
    keep = rng.random() < 0.15
    chained = rng.random() < 0.5
    steps: list[list[PlannedCall]] = []
    for position, tool in enumerate(picked):
        source = steps[-1][-1] if chained and steps else None
        call = _call(tool, index, position, source, rng, keep and position == len(picked) - 1)
        if rng.random() < 0.1:
            call.approval = rng.choice(("approved", "declined"))
            if call.approval == "declined":
                call.result = None
        if chained or not steps:
            steps.append([call])
        else:
            steps[0].append(call)
    return RecordPlan(index=index, scenario="test", offered=offered, steps=steps)
