"""Benchmark: enrichments and samplers on synthetic pools of 1k, 8k and 50k tools.

Pools are built by replicating real tool sets (``../shared/corpus/toolsets``: the three ToolMind pools
and the BFCL multi-turn functions) into many namespaces; tools without a result schema get one drawn
from the real BFCL ``response`` schemas. Without the corpus, ``data/sampling/travel.yaml`` is used.

Every measurement runs in a fresh subprocess, so peak memory (``ru_maxrss``) is per size. Each figure
is printed beside a baseline measured in the same run:

* dataflow: a naive dense implementation (every output parameter against every input parameter,
  one float64 matrix) on the 1k pool, and its memory extrapolated to 8k and 50k;
* cache: the cold run on 8,000 tools against a re-run after adding 100 new tools;
* samplers: a naive chain sampler that scans the edge arrays for successors at every step.

Usage: ``python benchmarks/bench_sampling.py [--sizes 1000,8000,50000] [--quick]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "toolsets"
sys.path.insert(0, str(REPO))

from fms_dgt.core.tools.data_objects import Tool  # noqa: E402
from fms_dgt.core.tools.loaders.file import FileToolLoader  # noqa: E402


def base_tools() -> tuple[list[Tool], str]:
    """The real tool sets to replicate, and where they came from."""
    paths = sorted((CORPUS / "bfcl" / "multi_turn_func_doc").glob("*.json"))
    paths += sorted((CORPUS / "toolmind").glob("*.yaml"))
    if not paths:
        return FileToolLoader(REPO / "data" / "sampling" / "travel.yaml").load(), "data/sampling/travel.yaml"
    tools: list[Tool] = []
    for path in paths:
        tools += FileToolLoader(path, namespace=path.stem.replace("-", "_").replace(".", "_")).load()
    return tools, f"{len(paths)} corpus files"


def _tag(schema: dict[str, Any], tag: str) -> dict[str, Any]:
    """``schema`` with every property description suffixed by ``tag`` (new parameter signatures)."""
    props = schema.get("properties")
    if not isinstance(props, dict) or not props:
        return schema
    tagged = {n: {**p, "description": f"{p.get('description', n)} [{tag}]"} for n, p in props.items()}
    return {**schema, "properties": tagged}


def make_pool(size: int, fresh: int = 0, distinct: bool = False) -> list[Tool]:
    """``size`` replicated tools, plus ``fresh`` tools whose content is new (for the cache test).

    With ``distinct``, every copy's parameter descriptions carry the copy number, so no two copies
    share a parameter signature (the worst case for the dataflow enrichment).
    """
    base, _ = base_tools()
    outputs = [t.output_parameters for t in base if t.output_parameters]
    rng = random.Random(0)
    pool: list[Tool] = []
    copy = 0
    while len(pool) < size:
        for tool in base[: size - len(pool)]:
            output = tool.output_parameters or rng.choice(outputs)
            if distinct:
                tool = dataclasses.replace(tool, parameters=_tag(tool.parameters, f"r{copy}"))
                output = _tag(output, f"r{copy}")
            pool.append(
                dataclasses.replace(tool, namespace=f"{tool.namespace}_r{copy}", output_parameters=output)
            )
        copy += 1
    for i, tool in enumerate(base[:fresh]):
        pool.append(
            dataclasses.replace(
                tool,
                name=f"{tool.name}_v{i}",
                namespace="fresh",
                description=f"{tool.description} (version {i})",
                output_parameters=tool.output_parameters or outputs[i % len(outputs)],
            )
        )
    return pool


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --------------------------------------------------------------------------- workers (subprocesses)


def work_enrich(size: int, neighbors: bool, distinct: bool = False) -> dict[str, Any]:
    from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment
    from fms_dgt.core.tools.enrichments.embeddings import EmbeddingsEnrichment
    from fms_dgt.core.tools.enrichments.neighbors import NeighborsEnrichment
    from fms_dgt.core.tools.registry import ToolRegistry

    pool = make_pool(size, distinct=distinct)
    registry = ToolRegistry(pool)
    before = peak_mb()
    start = time.perf_counter()
    registry.artifacts["embeddings"] = EmbeddingsEnrichment().enrich(registry)
    middle = time.perf_counter()
    graph = DataflowEnrichment().enrich(registry)
    end = time.perf_counter()
    result = {
        "tools": len(registry),
        "embeddings_s": middle - start,
        "dataflow_s": end - middle,
        "edges": len(graph),
        "rss_before_mb": before,
        "rss_peak_mb": peak_mb(),
    }
    if neighbors:
        start = time.perf_counter()
        NeighborsEnrichment().enrich(registry)
        result["neighbors_s"] = time.perf_counter() - start
        result["rss_peak_nb_mb"] = peak_mb()
    return result


def work_shared(count: int, unique: bool) -> dict[str, Any]:
    """The graph of ``count`` operations of one API sharing 200 output and 20 input names (every
    output signature has ``count`` producers); ``unique`` gives each input a description of its
    own (``count * 20`` input signatures, each with candidates in many tiers of score)."""
    from fms_dgt.core.tools.data_objects import Tool
    from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment
    from fms_dgt.core.tools.registry import ToolRegistry

    nouns = ["ticket", "order", "seat", "route", "station", "fare", "train", "coach", "platform", "trip"]

    def field(k: int, suffix: str) -> tuple[str, dict[str, Any]]:
        a, b = nouns[k % 10], nouns[k // 10 % 10]
        return f"{a}_{b}_code{k // 100}", {"type": "string", "description": f"The {a} {b} code{suffix}."}

    outputs = {"type": "object", "properties": dict(field(k, "") for k in range(200))}
    tools = [
        Tool(
            name=f"desk{n}",
            namespace="rail",
            description=f"Desk {n}.",
            parameters={
                "type": "object",
                "properties": dict(field(k, f" for desk {n}" if unique else "") for k in range(20)),
            },
            output_parameters=outputs,
        )
        for n in range(count)
    ]
    registry = ToolRegistry(tools)
    start = time.perf_counter()
    graph = DataflowEnrichment().enrich(registry)
    return {"seconds": time.perf_counter() - start, "edges": len(graph), "rss_peak_mb": peak_mb()}


def work_naive(size: int) -> dict[str, Any]:
    """A dense output x input parameter score matrix (float64), as earlier implementations build."""
    import numpy as np

    from fms_dgt.core.tools.enrichments._dataflow_params import (
        input_fields,
        output_fields,
        type_compatibility,
        type_key,
    )
    from fms_dgt.core.tools.enrichments._vectors import HashedEncoder

    pool = make_pool(size)
    start = time.perf_counter()
    outs = [(t, f.name, f.schema) for t in pool for f in output_fields(t)]
    ins = [(t, f.name, f.schema) for t in pool for f in input_fields(t)]
    encoder = HashedEncoder()
    out_vec = encoder.encode([f"{n} {s.get('description', '')}" for _, n, s in outs]).astype(np.float64)
    in_vec = encoder.encode([f"{n} {s.get('description', '')}" for _, n, s in ins]).astype(np.float64)
    out_types = [type_key(s) for _, _, s in outs]
    in_types = [type_key(s) for _, _, s in ins]
    keys = sorted(set(out_types) | set(in_types))
    index = {k: i for i, k in enumerate(keys)}
    table = np.array([[type_compatibility(o, i) for i in keys] for o in keys])
    compat = table[np.array([index[t] for t in out_types])][:, np.array([index[t] for t in in_types])]
    scores = (out_vec @ in_vec.T) * compat
    order = np.argsort(-scores, axis=1)[:, :8]
    edges = int((np.take_along_axis(scores, order, axis=1) >= 0.3).sum())
    return {
        "tools": len(pool),
        "params": [len(outs), len(ins)],
        "seconds": time.perf_counter() - start,
        "edges": edges,
        "rss_peak_mb": peak_mb(),
    }


def work_naive_neighbors(size: int) -> dict[str, Any]:
    """Neighbours from a dense tool x tool similarity matrix and a full sort of every row."""
    import numpy as np

    from fms_dgt.core.tools.enrichments.embeddings import EmbeddingsEnrichment
    from fms_dgt.core.tools.registry import ToolRegistry

    registry = ToolRegistry(make_pool(size))
    matrix = EmbeddingsEnrichment().enrich(registry).matrix
    start = time.perf_counter()
    similarity = matrix @ matrix.T
    np.fill_diagonal(similarity, -np.inf)
    np.argsort(-similarity, axis=1)[:, :10]
    return {"seconds": time.perf_counter() - start, "rss_peak_mb": peak_mb()}


def work_cache(size: int, fresh: int, cache_dir: str, neighbors: bool) -> dict[str, Any]:
    """Build a registry with the enrichments, as a run does (its construction is what is timed)."""
    from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment
    from fms_dgt.core.tools.enrichments.embeddings import EmbeddingsEnrichment
    from fms_dgt.core.tools.enrichments.neighbors import NeighborsEnrichment
    from fms_dgt.core.tools.registry import ToolRegistry

    pool = make_pool(size, fresh)
    enrichments: list[Any] = [
        EmbeddingsEnrichment(cache_dir=cache_dir),
        DataflowEnrichment(cache_dir=cache_dir),
    ]
    if neighbors:
        enrichments.append(NeighborsEnrichment(cache_dir=cache_dir))
    start = time.perf_counter()
    registry = ToolRegistry(pool, enrichments=enrichments)
    return {"tools": len(registry), "seconds": time.perf_counter() - start}


def work_samplers(size: int, count: int) -> dict[str, Any]:
    from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment
    from fms_dgt.core.tools.registry import ToolRegistry
    from fms_dgt.core.tools.samplers.base import get_tool_sampler

    registry = ToolRegistry(make_pool(size), enrichments=[DataflowEnrichment()])
    result: dict[str, Any] = {}
    for name in ("tc/random", "tc/chain", "tc/fan_out", "tc/fan_in", "tc/dag"):
        start = time.perf_counter()
        sampler = get_tool_sampler(name, registry=registry, k=4, seed=0)
        built = time.perf_counter() - start
        start = time.perf_counter()
        for _ in range(count):
            sampler.sample()
        result[name] = {"init_s": built, "per_s": count / (time.perf_counter() - start)}
    result["naive chain"] = {
        "init_s": 0.0,
        "per_s": naive_chain_rate(registry.artifacts["dataflow"], count // 20),
    }
    return result


def naive_chain_rate(graph: Any, count: int) -> float:
    """Chains of 4 found by scanning the edge arrays for successors at every step."""
    import numpy as np

    rng = random.Random(0)
    sources = np.unique(graph.src)
    start = time.perf_counter()
    for _ in range(count):
        path = [int(sources[rng.randrange(len(sources))])]
        while len(path) < 4:
            options = [int(n) for n in np.unique(graph.dst[graph.src == path[-1]]) if int(n) not in path]
            if not options:
                path = [int(sources[rng.randrange(len(sources))])]
                continue
            path.append(rng.choice(options))
    return count / (time.perf_counter() - start)


WORKERS = {
    "enrich": work_enrich,
    "naive": work_naive,
    "naive_neighbors": work_naive_neighbors,
    "cache": work_cache,
    "samplers": work_samplers,
    "shared": work_shared,
}


def run(worker: str, *args: Any) -> dict[str, Any]:
    """Run a worker in a fresh interpreter and return its JSON result."""
    command = [sys.executable, __file__, "--worker", worker, json.dumps(args)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"worker {worker}{args} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- report


def report_enrichments(sizes: list[int]) -> None:
    ours = {size: run("enrich", size, size >= 8000) for size in sizes}
    dense = {size: run("naive", size) for size in sizes if size <= 8000}
    print(
        "\n| tools | embeddings s | dataflow s | emb+dataflow s | target | edges | peak RSS MB "
        "| neighbors s |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    targets = {8000: "10 s, 1 GB", 50000: "120 s, 3 GB"}
    for size, r in ours.items():
        total = r["embeddings_s"] + r["dataflow_s"]
        nb = f"{r['neighbors_s']:.1f}" if "neighbors_s" in r else "-"
        nb += " (target 60)" if size >= 50000 else ""
        peak = max(r["rss_peak_mb"], r.get("rss_peak_nb_mb", 0))
        print(
            f"| {size:,} | {r['embeddings_s']:.2f} | {r['dataflow_s']:.2f} | {total:.2f} | "
            f"{targets.get(size, '-')} | {r['edges']:,} | {peak:.0f} | {nb} |"
        )
    print("\nworst case: no two copies share a parameter signature (copy number in every description):")
    print("| tools | embeddings s | dataflow s | emb+dataflow s | target | edges | peak RSS MB |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for size in (n for n in sizes if n >= 8000):
        r = run("enrich", size, False, True)
        total = r["embeddings_s"] + r["dataflow_s"]
        print(
            f"| {size:,} | {r['embeddings_s']:.2f} | {r['dataflow_s']:.2f} | {total:.2f} | "
            f"{targets.get(size, '-')} | {r['edges']:,} | {r['rss_peak_mb']:.0f} |"
        )
    print(
        "\nbaseline: dense output x input parameter matrices (float64 numpy), same pools, same process setup:"
    )
    print(
        "| tools | parameters (out x in) | dense s | dense peak RSS MB | ours: dataflow s "
        "| ours: peak RSS MB |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    cells = 0.0
    for size, r in ours.items():
        d = dense.get(size)
        if d is not None:
            cells = d["params"][0] * d["params"][1] / size**2
            figures = f"{d['params'][0]:,} x {d['params'][1]:,} | {d['seconds']:.2f} | {d['rss_peak_mb']:.0f}"
        else:
            figures = f"(extrapolated) | - | {cells * size * size * 8 * 2 / 1e6:,.0f} (two matrices alone)"
        print(f"| {size:,} | {figures} | {r['dataflow_s']:.2f} | {r['rss_peak_mb']:.0f} |")
    if 8000 in ours:
        naive = run("naive_neighbors", 8000)
        print(
            "\nbaseline: neighbors from a dense 8,000 x 8,000 matrix and full row sorts: "
            f"{naive['seconds']:.2f} s, "
            f"peak RSS {naive['rss_peak_mb']:.0f} MB; ours: {ours[8000]['neighbors_s']:.2f} s "
            f"(the dense matrix alone would be {50000**2 * 4 / 1e9:.0f} GB at 50,000 tools)"
        )


def report_cache(size: int, repeats: int = 7) -> None:
    """Cold run, then +100 tools and an unchanged re-run on a copy of the cold cache (medians)."""
    for label, neighbors in (("embeddings + dataflow", False), ("embeddings + dataflow + neighbors", True)):
        runs: dict[str, list[float]] = {"cold": [], "+100 new tools": [], "unchanged, re-run": []}
        shares: list[float] = []
        for _ in range(repeats):
            with tempfile.TemporaryDirectory() as base:
                cold_dir, warm_dir = Path(base) / "cold", Path(base) / "warm"
                cold = run("cache", size, 0, str(cold_dir), neighbors)["seconds"]
                shutil.copytree(cold_dir, warm_dir)
                os.sync()  # the cold run's and the copy's writes are not flushed during the re-run
                warm = run("cache", size, 100, str(warm_dir), neighbors)["seconds"]
                same = run("cache", size, 100, str(warm_dir), neighbors)["seconds"]
            for name, seconds in zip(runs, (cold, warm, same), strict=True):
                runs[name].append(seconds)
            shares.append(warm / cold)
        cold_median = statistics.median(runs["cold"])
        print(f"\ncache ({label}), {size:,} tools, each run in a fresh process, median of {repeats}:")
        for name, values in runs.items():
            median = statistics.median(values)
            print(f"  {name + ':':22}{median:.3f} s = {median / cold_median:.1%} of cold")
        spread = ", ".join(f"{share:.1%}" for share in shares)
        print(f"  +100 tools / cold, per repetition: {spread}")
    print("  (target: +100 tools under 10% of cold)")


def report_samplers(size: int, count: int) -> None:
    r = run("samplers", size, count)
    print(f"\nsamplers on {size:,} tools, k=4, one thread ({count:,} samples each):")
    print("| sampler | build s | samples/s |")
    print("|---|---:|---:|")
    for name, figures in r.items():
        print(f"| {name} | {figures['init_s']:.2f} | {figures['per_s']:,.0f} |")
    speedup = r["tc/chain"]["per_s"] / r["naive chain"]["per_s"]
    print(f"  tc/chain is {speedup:.0f}x the naive chain sampler (target: tc/chain and tc/dag >= 20,000/s)")


def report_shared(count: int) -> None:
    """One API whose operations share their parameter names: the feeders' worst case."""
    print(f"\n{count:,} operations of one API sharing 200 output and 20 input names (dataflow only):")
    print("| inputs' descriptions | input signatures | dataflow s | edges | peak RSS MB |")
    print("|---|---:|---:|---:|---:|")
    for label, unique, signatures in (("shared (baseline)", False, 20), ("one per input", True, count * 20)):
        r = run("shared", count, unique)
        print(f"| {label} | {signatures:,} | {r['seconds']:.1f} | {r['edges']:,} | {r['rss_peak_mb']:.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,8000,50000")
    parser.add_argument("--quick", action="store_true", help="1k and 8k only, fewer samples")
    parser.add_argument("--shared", type=int, metavar="N", help="only the API of N operations sharing names")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("args", nargs="?", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        print(json.dumps(WORKERS[options.worker](*json.loads(options.args))))
        return
    if options.shared:
        report_shared(options.shared)
        return
    sizes = [1000, 8000] if options.quick else [int(s) for s in options.sizes.split(",")]
    _, origin = base_tools()
    print(f"pools replicated from {origin}")
    report_enrichments(sizes)
    report_cache(8000)
    report_samplers(8000, 20000 if options.quick else 100000)
    report_shared(200 if options.quick else 1000)


if __name__ == "__main__":
    main()
