"""REST loader and engine benchmarks (issue 3).

Prints, with baselines measured in the same run:

1. Loading real specs: Stripe (417 tools, target < 1.0 s) and Kubernetes (1,067 tools, target
   < 1.5 s), each as a ratio to ``json.load`` of the same file and to prance's ``BaseParser``
   (which only parses and validates, without producing tools). prance is only a baseline: it is
   in the ``bench`` extra (``make bench`` installs it), and without it that column is skipped.
2. Linear growth: Stripe's paths repeated 1x, 4x and 16x in one spec; the time per tool should
   stay flat.
3. Engine: sequential calls per second to a loopback server through one pooled connection
   (target >= 500/s), as a ratio to bare ``httpx2.Client.get`` calls on the same server.

Run: ``make bench`` or ``python benchmarks/bench_rest.py`` (sections 1 and 2 need ../shared/corpus).
"""

from __future__ import annotations

import importlib.util
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _timing import best_of

from fms_dgt.core.tools.data_objects import ToolCall
from fms_dgt.core.tools.engines.rest import RESTToolEngine
from fms_dgt.core.tools.loaders.rest import RESTToolLoader
from fms_dgt.core.tools.registry import ToolRegistry

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "openapi"
SPECS = [
    ("Stripe", CORPUS / "stripe" / "spec3.json", 1.0),
    ("Kubernetes", CORPUS / "kubernetes" / "swagger.json", 1.5),
]
ENGINE_CALLS = 2000


def load_tools(path: Path) -> int:
    return len(RESTToolLoader(str(path)).load())


def prance_parse(path: Path) -> None:
    import prance

    prance.BaseParser(str(path), lazy=False)


def bench_specs() -> None:
    has_prance = importlib.util.find_spec("prance") is not None
    print(f"\n1. Loading real specs (best of 3{'; prance once' if has_prance else ''})")
    if not has_prance:
        print("prance not installed: baseline skipped (pip install -e '.[bench]' or make bench)")
    header = (
        f"{'spec':<11} {'tools':>6} {'load s':>8} {'json.load s':>12} {'x json':>7} {'prance s':>9} "
        f"{'x prance':>9} {'target':>7}  ok"
    )
    print(header)
    print("-" * len(header))
    for name, path, target in SPECS:
        tools = load_tools(path)
        ours = best_of(lambda p=path: load_tools(p))
        raw = best_of(lambda p=path: json.loads(p.read_bytes()))
        if has_prance:
            prance_s = best_of(lambda p=path: prance_parse(p), repeat=1)
            versus = f"{prance_s:>9.2f} {ours / prance_s:>9.3f}"
        else:
            versus = f"{'-':>9} {'-':>9}"
        ok = "yes" if ours < target else "NO"
        print(
            f"{name:<11} {tools:>6} {ours:>8.3f} {raw:>12.3f} {ours / raw:>7.1f} {versus} "
            f"{'<' + str(target):>7}  {ok}"
        )


def repeated_stripe(factor: int, out: Path) -> Path:
    spec = json.loads((CORPUS / "stripe" / "spec3.json").read_bytes())
    paths: dict[str, Any] = {}
    for copy in range(factor):
        for path, item in spec["paths"].items():
            renamed = {
                m: {**op, "operationId": f"{op['operationId']}_r{copy}"} if isinstance(op, dict) else op
                for m, op in item.items()
            }
            paths[f"/r{copy}{path}"] = renamed
    spec["paths"] = paths
    target = out / f"stripe_x{factor}.json"
    target.write_text(json.dumps(spec))
    return target


def bench_growth() -> None:
    print("\n2. Linear growth: Stripe's paths repeated (best of 3)")
    header = f"{'copies':>6} {'tools':>6} {'MB':>6} {'load s':>8} {'ms/tool':>8} {'vs 1x':>6}"
    print(header)
    print("-" * len(header))
    base = None
    with tempfile.TemporaryDirectory() as tmp:
        for factor in (1, 4, 16):
            path = repeated_stripe(factor, Path(tmp))
            tools = load_tools(path)
            seconds = best_of(lambda p=path: load_tools(p))
            per_tool = seconds / tools * 1000
            base = base or per_tool
            size = path.stat().st_size / 1e6
            ratio = per_tool / base
            print(f"{factor:>6} {tools:>6} {size:>6.1f} {seconds:>8.3f} {per_tool:>8.3f} {ratio:>6.2f}")


def bench_engine() -> None:
    import httpx2

    sys.path.insert(0, str(REPO / "tests"))
    from support.rest_server import serve

    print(f"\n3. Engine: {ENGINE_CALLS} sequential calls on loopback, one pooled connection")
    registry = ToolRegistry(
        loaders=[RESTToolLoader(str(REPO / "data" / "rest" / "petstore.yaml"), namespace="p")]
    )
    calls = [ToolCall("p::echo", {"value": "x", "q": "a b", "X-Trace": "t"})]
    with (
        serve() as state,
        RESTToolEngine(registry, base_url=state.base_url) as engine,
        httpx2.Client() as client,
    ):
        engine.setup("bench")
        url = f"{state.base_url}/echo/x?q=a%20b"
        ours = statistics.median(_rate(lambda: engine.execute("bench", calls)) for _ in range(3))
        bare = statistics.median(_rate(lambda: client.get(url, headers={"X-Trace": "t"})) for _ in range(3))
        connections = len({r["client_port"] for r in state.requests if "client_port" in r})
    header = f"{'client':<22} {'calls/s':>9} {'x bare':>7} {'target':>8}  ok"
    print(header)
    print("-" * len(header))
    print(f"{'bare httpx2.get':<22} {bare:>9.0f} {1.0:>7.2f} {'':>8}")
    verdict = "yes" if ours >= 500 else "NO"
    print(f"{'RESTToolEngine':<22} {ours:>9.0f} {ours / bare:>7.2f} {'>=500':>8}  {verdict}")
    print(f"(server saw {connections} client connection(s) in total: engine and baseline)")


def _rate(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    for _ in range(ENGINE_CALLS):
        fn()
    return ENGINE_CALLS / (time.perf_counter() - start)


def main() -> None:
    if CORPUS.is_dir():
        bench_specs()
        bench_growth()
    else:
        print(f"{CORPUS} is absent: skipping the spec benchmarks")
    bench_engine()


if __name__ == "__main__":
    main()
