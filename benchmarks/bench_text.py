"""Text-writer benchmark (issue: training-grade records).

Prints, with a baseline measured in the same run, the offline writer's cost per record on plans
over the demo's file tools (chains with wired arguments, parallel calls, failures, approvals,
no-call records; built as the tests build them) and the variety it writes: the share of distinct
requests and distinct-2 (distinct word bigrams over all bigrams) of requests and answers.
Baseline: the template the job used before (description + arguments, "Here is what I found:" and
the results as JSON), on the same plans. Target: well under 1 ms a record (the job writes at least
1,000 records/s).

Run: ``python benchmarks/bench_text.py``.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from _timing import best_of

from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.databuilders.tool_calling.plan import RecordPlan
from fms_dgt.databuilders.tool_calling.text import RecordText, TemplateText

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the plan builder the writer's tests use

from databuilders.tool_calling.plans import make_plan  # noqa: E402

COUNT = 2000


def _former(plan: RecordPlan) -> RecordText:
    """The earlier template writer, reduced to what it wrote."""
    sentences = []
    for call in plan.calls:
        args = ", ".join(
            f"{k} {json.dumps(v) if not isinstance(v, str) else v}" for k, v in call.given.items()
        )
        sentences.append(f"{call.tool.description.rstrip('.')} ({args}).")
    lines = [f"- {c.tool.name}: {json.dumps(c.result.result if c.result else None)}" for c in plan.calls]
    return RecordText(
        user="Quick task: " + " Then ".join(sentences), final="Here is what I found:\n" + "\n".join(lines)
    )


def _distinct_2(texts: list[str]) -> float:
    bigrams = [pair for t in texts for pair in zip(t.lower().split(), t.lower().split()[1:], strict=False)]
    return len(set(bigrams)) / max(1, len(bigrams))


def main() -> None:
    tools = ToolRegistry.from_file(REPO / "data" / "weather_tools.yaml").tools()
    tools += ToolRegistry.from_file(REPO / "data" / "api_bank_sample.json", "api_bank").tools()
    plans = [make_plan(tools, i, random.Random(i)) for i in range(COUNT)]
    writer = TemplateText()
    texts: list[RecordText] = []

    def template() -> None:
        texts[:] = [writer.write(p, random.Random(p.index)) for p in plans]

    former: list[RecordText] = []

    def baseline() -> None:
        former[:] = [_former(p) for p in plans]

    base_time, time_taken = best_of(baseline), best_of(template)
    print(f"Text of {COUNT} records (demo file tools; chains, parallel calls, failures, no-call records)")
    columns = ("us/record", "distinct requests", "distinct-2 req", "distinct-2 ans")
    print(f"  {'writer':<28} {columns[0]:>10} {columns[1]:>18} {columns[2]:>15} {columns[3]:>15}")
    for label, seconds, written in (
        ("former template [baseline]", base_time, former),
        ("template", time_taken, texts),
    ):
        users = [t.user for t in written]
        print(
            f"  {label:<28} {seconds / COUNT * 1e6:10.1f} {len(set(users)) / len(users):18.1%} "
            f"{_distinct_2(users):15.3f} {_distinct_2([t.final for t in written]):15.3f}"
        )
    print(f"  template / baseline: {time_taken / base_time:.1f}x time (target: well under 1,000 us a record)")


if __name__ == "__main__":
    main()
