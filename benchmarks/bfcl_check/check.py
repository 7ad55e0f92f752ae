"""Runs inside the bfcl-eval virtualenv: BFCL's AST checker on the entries of a ``bfcl`` export.

Each record's calls are both the possible answer and the model output. Prints one line of JSON:
``{"checked", "passed", "skipped", "failures": [...]}`` (records without calls are BFCL's
``irrelevance`` category, which the AST checker does not score, and are skipped).

Usage: ``python check.py RECORDS_JSONL``.
"""

from __future__ import annotations

import json
import sys

from bfcl_eval.constants.enums import Language
from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

# A prompt-mode model whose function names keep their dots (no '.' -> '_' rewriting).
MODEL = "gpt-4o-2024-11-20"


def main(path: str) -> None:
    checked = passed = skipped = 0
    failures = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            entry = json.loads(line)
            category = entry["id"].rsplit("_", 1)[0]
            truth = entry["possible_answer"]["ground_truth"]
            if not truth:
                skipped += 1
                continue
            output = [
                {name: {k: v[0] for k, v in args.items()}} for call in truth for name, args in call.items()
            ]
            output = [_plain(o, entry["function"]) for o in output]
            result = ast_checker(entry["function"], output, truth, Language.PYTHON, category, MODEL)
            checked += 1
            if result["valid"]:
                passed += 1
            elif len(failures) < 5:
                failures.append(
                    {"id": entry["id"], "error": result["error"], "type": result.get("error_type")}
                )
    print(
        json.dumps(
            {"checked": checked, "passed": passed, "skipped": skipped, "failures": failures}, default=str
        )
    )


def _plain(call: dict, functions: list) -> dict:
    """The model output of a call: the ground truth's values with dict and list-of-dict arguments
    unwrapped again (the ground truth lists each key's value, as BFCL's dict checker wants)."""
    ((name, args),) = call.items()
    props = next((f["parameters"].get("properties", {}) for f in functions if f["name"] == name), {})
    out = {}
    for key, value in args.items():
        kind = props.get(key, {}).get("type")
        item = props.get(key, {}).get("items", {}).get("type")
        if kind == "dict" and isinstance(value, dict):
            value = {k: v[0] for k, v in value.items()}
        elif kind in ("array", "tuple") and item == "dict" and isinstance(value, list):
            value = [{k: v[0] for k, v in d.items()} if isinstance(d, dict) else d for d in value]
        out[key] = value
    return {name: out}


if __name__ == "__main__":
    main(sys.argv[1])
