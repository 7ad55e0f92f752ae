"""MCP benchmarks (issue: MCP loader and engine).

Prints, with baselines measured in the same run:

1. Per-call latency of ``MCPToolEngine.execute`` on a persistent stdio session to our test server
   (target: median under 3 ms), beside the cost of opening a fresh session for every call (start
   the server, handshake, call, close), which is what loaders that do not keep sessions pay.
2. Loading 8 MCP servers listed in one config: total time against the slowest single server
   (target: under 2x) and against the sum of the singles (what a sequential load would take).
   Three settings: servers behind 100 ms of network latency (the waiting a concurrent load
   overlaps), servers on loopback, and stdio servers started by the load. The last two are bound
   by CPU on a small machine: every load spends CPU in the client and the server (a stdio server
   spends over a second starting Python and the SDK), and 8 loads need 8 times that CPU, which no
   client can overlap beyond the number of cores; the report prints that floor for both.
3. The first connect to a bare URL (``http://127.0.0.1:PORT``) whose transport the config leaves
   out, against the same connect with the transport given: finding it out costs one POST for a
   streamable-HTTP server, and a POST and a GET for an SSE server (connect + call + close each).

Run: ``python benchmarks/bench_mcp.py``.
"""

from __future__ import annotations

import os
import resource
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fms_dgt.core.tools.data_objects import ToolCall
from fms_dgt.core.tools.engines.mcp import MCPToolEngine
from fms_dgt.core.tools.loaders.mcp import MCPToolLoader
from fms_dgt.core.tools.mcp import MCPClient, MCPServerSpec, clear_connections
from fms_dgt.core.tools.registry import ToolRegistry

REPO = Path(__file__).resolve().parents[1]
SERVER = REPO / "tests" / "support" / "mcp_server.py"
PERSISTENT_CALLS = 500
FRESH_CALLS = 5
SERVERS = 8
LATENCY = 0.1  # seconds a simulated remote server adds to each answer
FIRST_CONNECTS = 15


def stdio_entry(name: str) -> dict[str, Any]:
    return {"type": "mcp", "server": name, "command": sys.executable, "args": [str(SERVER)]}


def ms(seconds: float) -> str:
    return f"{seconds * 1000:9.2f} ms"


def bench_persistent_call() -> tuple[float, float]:
    """Median and 90th percentile of one execute() on an open session."""
    loader = MCPToolLoader(server="bench", command=sys.executable, args=[str(SERVER)])
    with ToolRegistry(loaders=[loader]) as registry, MCPToolEngine(registry) as engine:
        engine.setup("s")
        call = [ToolCall("bench::add", {"a": 1, "b": 2})]
        for _ in range(50):  # warm-up: compiled validators, first-call paths
            engine.execute("s", call)
        times = []
        for _ in range(PERSISTENT_CALLS):
            start = time.perf_counter()
            [result] = engine.execute("s", call)
            times.append(time.perf_counter() - start)
            if not result.ok:
                raise SystemExit(f"benchmark call failed: {result.error}")
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.9)]


def bench_fresh_session_call() -> float:
    """Median of open session + call + close, the no-session-reuse baseline."""
    times = []
    for i in range(FRESH_CALLS):
        start = time.perf_counter()
        client = MCPClient(MCPServerSpec(name=f"fresh-{i}", command=sys.executable, args=(str(SERVER),)))
        client.call_tool("add", {"a": 1, "b": 2})
        client.close()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def load_config(entries: list[dict[str, Any]]) -> float:
    start = time.perf_counter()
    with ToolRegistry.from_config({"tools": {"registry": entries}}) as registry:
        elapsed = time.perf_counter() - start
        if len(registry) == 0:
            raise SystemExit("benchmark load returned no tools")
    clear_connections()
    return elapsed


def compare_loads(make_entry: Callable[[int, str], dict[str, Any]]) -> tuple[float, float, float]:
    """(all servers in one config, slowest single server, sum of the singles)."""
    singles = [load_config([make_entry(i, f"single-{i}")]) for i in range(SERVERS)]
    together = load_config([make_entry(i, f"multi-{i}") for i in range(SERVERS)])
    return together, max(singles), sum(singles)


def stdio_loads() -> tuple[tuple[float, float, float], float]:
    """Loads of 8 stdio servers, and the CPU seconds one server process spends starting."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = compare_loads(lambda _i, name: stdio_entry(name))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return result, cpu / (2 * SERVERS)


@contextmanager
def http_servers(latency: float) -> Iterator[tuple[list[str], list[int]]]:
    """8 of our servers over streamable HTTP on loopback, started before any timing (urls, pids)."""
    ports = [free_port() for _ in range(SERVERS)]
    argv = [
        sys.executable,
        str(SERVER),
        "--transport",
        "streamable-http",
        "--latency",
        str(latency),
        "--port",
    ]
    processes = [subprocess.Popen([*argv, str(p)], stderr=subprocess.DEVNULL) for p in ports]
    try:
        for port in ports:
            wait_for_port(port)
        yield [f"http://127.0.0.1:{p}/mcp" for p in ports], [process.pid for process in processes]
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=10)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"benchmark server on port {port} did not start")


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a running process has used, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def http_loads(latency: float) -> tuple[tuple[float, float, float], float]:
    """Load times, and the CPU seconds (client and all servers) one one-config load spends."""
    with http_servers(latency) as (urls, pids):

        def entry(i: int, name: str) -> dict[str, Any]:
            return {"type": "mcp", "server": name, "transport": "streamable_http", "url": urls[i]}

        times = compare_loads(entry)
        own, servers = resource.getrusage(resource.RUSAGE_SELF), sum(process_cpu(p) for p in pids)
        load_config([entry(i, f"cpu-{i}") for i in range(SERVERS)])
        after = resource.getrusage(resource.RUSAGE_SELF)
        client = (after.ru_utime + after.ru_stime) - (own.ru_utime + own.ru_stime)
        return times, client + sum(process_cpu(p) for p in pids) - servers


@contextmanager
def root_server(transport: str) -> Iterator[str]:
    """Our server over ``transport``, at the root of a free loopback port (yields the bare URL)."""
    port = free_port()
    flag = "sse" if transport == "sse" else "streamable-http"
    argv = [sys.executable, str(SERVER), "--transport", flag, "--port", str(port), "--path", "/"]
    process = subprocess.Popen(argv, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def first_call(url: str, transport: str) -> float:
    """Median of a fresh client's connect + call + close (``transport`` "" finds it out)."""
    times = []
    for i in range(FIRST_CONNECTS):
        start = time.perf_counter()
        client = MCPClient(MCPServerSpec(name=f"first-{i}", url=url, transport=transport))
        client.call_tool("add", {"a": 1, "b": 2})
        client.close()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def transport_probes() -> list[tuple[str, float, float]]:
    """(transport, median with it given, median with it found out) for SSE and streamable HTTP."""
    rows = []
    for transport in ("streamable_http", "sse"):
        with root_server(transport) as url:
            first_call(url, transport)  # warm-up: imports, the server's first requests
            rows.append((transport, first_call(url, transport), first_call(url, "")))
    return rows


def report_loads(label: str, together: float, slowest: float, total: float) -> None:
    ratio = together / slowest
    verdict = "ok" if ratio < 2 else "MISSED"
    sequential = f"({total / together:.1f}x the one-config load)"
    print(f"  {label}")
    print(f"    {'all servers, one config':<42} {ms(together)}")
    print(f"    {'slowest single server':<42} {ms(slowest)}  (ratio {ratio:.2f}x, target < 2x: {verdict})")
    print(f"    {'sum of single servers (sequential)':<42} {ms(total)}  {sequential}")


def main() -> None:
    print("MCP benchmarks (our test server: tests/support/mcp_server.py)")
    median, p90 = bench_persistent_call()
    fresh = bench_fresh_session_call()
    verdict = "ok" if median < 0.003 else "MISSED"
    print("\n1. tools/call through MCPToolEngine.execute (stdio)")
    print(f"  {'persistent session, median':<44} {ms(median)}  (target < 3 ms: {verdict})")
    print(f"  {'persistent session, p90':<44} {ms(p90)}")
    print(f"  {'fresh session per call, median (baseline)':<44} {ms(fresh)}  ({fresh / median:.0f}x slower)")
    print(f"\n2. loading {SERVERS} MCP servers listed in one config")
    cores = os.cpu_count() or 1
    remote, _ = http_loads(LATENCY)
    report_loads(f"streamable_http, servers {LATENCY * 1000:.0f} ms away (I/O-bound)", *remote)
    (together, slowest, total), cpu = http_loads(0.0)
    report_loads("streamable_http on loopback, no latency (CPU-bound)", together, slowest, total)
    print(
        f"    one one-config load spends {cpu * 1000:.0f} ms of CPU (client and servers); on {cores} cores "
        f"that needs >= {cpu / cores * 1000:.0f} ms"
    )
    print(
        f"    {'one-config load / max(slowest, CPU floor)':<42} {together / max(slowest, cpu / cores):9.2f} x"
    )
    (together, slowest, total), cpu = stdio_loads()
    report_loads("stdio (each load starts its server process)", together, slowest, total)
    floor = SERVERS * cpu / cores
    print(
        f"    one server process spends {cpu * 1000:.0f} ms of CPU starting; {SERVERS} of them on {cores} "
        f"cores need >= {floor * 1000:.0f} ms whatever the client does"
    )
    print(f"    {'one-config load / max(slowest, CPU floor)':<42} {together / max(slowest, floor):9.2f} x")
    print("\n3. first connect + call + close on a bare URL: transport given vs found out")
    for transport, given, found in transport_probes():
        print(f"  {transport}")
        print(f"    {'transport given (baseline)':<42} {ms(given)}")
        print(f"    {'transport found out':<42} {ms(found)}  ({found / given:.2f}x)")


if __name__ == "__main__":
    main()
