"""``fms-dgt inspect OUT_DIR``: the summary and quality report of an output folder, in words.

The report is recomputed from the folder's records and rejects (so it is right even when the run
was killed before it could write ``summary.json``); the pool size for coverage comes from the run
manifest.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fms_dgt.databuilders.tool_calling.manifest import MANIFEST
from fms_dgt.databuilders.tool_calling.output import RECORDS, OutputFolder
from fms_dgt.databuilders.tool_calling.summary import RunSummary
from fms_dgt.errors import OutputError

__all__ = ["inspect_folder", "report_lines"]


def inspect_folder(path: str | Path) -> dict[str, Any]:
    """The summary of the folder ``path`` (as in ``summary.json``), recomputed from its files.

    Raises:
        OutputError: the folder holds no run, or a line of it is damaged.
    """
    folder = Path(path)
    if not (folder / RECORDS).is_file():
        raise OutputError(f"no run in {folder}: it has no {RECORDS}. Give the --out folder of a run")
    reader = OutputFolder(folder)
    summary = RunSummary()
    summary.quality.pool = _pool(folder / MANIFEST)
    reader.tally(summary.add_record, summary.add_reject)
    out = summary.to_dict()
    out.pop("interrupted")
    out.pop("resumed_over")
    out.pop("source_refreshes")
    return out


def _pool(path: Path) -> int:
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    sources = manifest.get("sources") if isinstance(manifest, Mapping) else None
    return sum(int(s.get("tools", 0)) for s in sources or [] if isinstance(s, Mapping))


def report_lines(summary: Mapping[str, Any]) -> list[str]:
    """The summary as lines a person reads."""
    q = summary["quality"]
    cov = q["coverage"]
    no_call = q["no_call"]
    kinds = ", ".join(f"{k} {v:.1%}" for k, v in no_call.items() if k != "share") or "none"
    # A summary written before fresh_wired_share existed says nothing of it: no figure is made up.
    fresh = q.get("fresh_wired_share")
    fresh_said = (
        f" ({fresh:.1%} from a result only, the others repeat a value an earlier call was given)"
        if fresh is not None
        else ""
    )
    lines = [
        f"records            {summary['written']} written, {summary['rejected']} rejected",
        f"error results      {q['error_result_rate']:.2%} of tool results "
        f"({q['error_handling_records']} records kept as error-handling examples)",
        f"distractors        {q['distractor_ratio']:.1%} of records offer a tool they do not call "
        f"({q['mean_offered']} tools offered on average)",
        f"no-call records    {no_call['share']:.1%} ({kinds})",
        f"wired arguments    {q['wired_argument_share']:.1%} of arguments come from an earlier result"
        f"{fresh_said}",
        f"tool sets          {q['distinct_tool_sets']} distinct offered, "
        f"{q['distinct_called_sets']} distinct called",
        f"user turns         {q['distinct_user_turns']:.1%} distinct, distinct-2 {q['distinct_2']:.3f}",
        f"duplicates         {q['duplicate_records']} records",
        f"coverage           {cov['tools_called']} of {cov['pool'] or '?'} tools called, "
        f"Gini {cov['gini']:.3f}",
        f"entity conflicts   {q['entity_conflicts']} records",
        f"JSON in answers    {q['json_final_answers']} final answers",
    ]
    if "placeholder_records" in summary:  # (a summary written before it existed says nothing)
        lines.append(
            f"placeholders       {summary['placeholder_records']} records hold a placeholder value in a "
            "tool result (metadata.placeholders)"
        )
    for reason, count in summary.get("reject_reasons", {}).items():
        lines.append(f"  rejected for {reason}: {count}")
    errors = summary.get("call_errors", {}).get("by_tool", {})
    for tool, count in sorted(errors.items(), key=lambda kv: -kv[1])[:10]:
        lines.append(f"  call errors of {tool}: {count}")
    return lines
