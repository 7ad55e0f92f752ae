"""Helpers for the MCP tests: start our test server or the reference server on loopback.

* :func:`hostile_kwargs` starts ``tests/support/hostile_mcp_server.py``, a server that misbehaves
  as a JSON scenario says (malformed tools, noise on stdout, huge or deep answers...).
* :func:`http_server` runs ``tests/support/mcp_server.py`` over SSE or streamable HTTP on a free
  127.0.0.1 port as a real subprocess, at the usual path or another one (``path="/"``).
* :func:`everything_command` finds ``@modelcontextprotocol/server-everything`` in
  ``<repo>/.cache/node`` (installing it there with npm when missing); None without npm.
* :func:`everything_http_server` runs the reference server over SSE or streamable HTTP bound to
  127.0.0.1. Its own options cannot choose the interface (it calls ``app.listen(PORT)``, which binds
  every interface), so a small Node preload forces the host to 127.0.0.1 and makes the process exit
  if a socket ends up bound anywhere else.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SERVER_SCRIPT = Path(__file__).resolve().with_name("mcp_server.py")
HOSTILE_SCRIPT = Path(__file__).resolve().with_name("hostile_mcp_server.py")
NODE_PREFIX = REPO / ".cache" / "node"
EVERYTHING_BIN = NODE_PREFIX / "node_modules" / ".bin" / "mcp-server-everything"
EVERYTHING_PACKAGE = "@modelcontextprotocol/server-everything"
_START_TIMEOUT = 60.0

# Loaded with `node --require`: every listen() without a host gets 127.0.0.1, and the process
# exits at once should any server socket be bound to another address.
LOOPBACK_PRELOAD = r"""
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (args.length && typeof args[0] === "object" && args[0] !== null) {
    args[0] = { ...args[0], host: "127.0.0.1" };
  } else if (typeof args[0] === "number" || typeof args[0] === "string") {
    if (typeof args[1] === "string") { args[1] = "127.0.0.1"; } else { args.splice(1, 0, "127.0.0.1"); }
  }
  this.once("listening", () => {
    const addr = this.address();
    if (!addr || addr.address !== "127.0.0.1") {
      console.error("loopback preload: refusing to serve on", addr);
      process.exit(3);
    }
  });
  return listen.apply(this, args);
};
"""


def stdio_kwargs(**extra: Any) -> dict[str, Any]:
    """Loader keyword arguments that start our test server over stdio."""
    return {
        "transport": "stdio",
        "command": sys.executable,
        "args": [str(SERVER_SCRIPT), *extra.pop("argv", [])],
        **extra,
    }


def hostile_kwargs(scenario: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """Loader keyword arguments that start the misbehaving server with ``scenario`` over stdio."""
    return {
        "transport": "stdio",
        "command": sys.executable,
        "args": [str(HOSTILE_SCRIPT), json.dumps(scenario)],
        **extra,
    }


def free_port() -> int:
    """A TCP port that was free on 127.0.0.1 a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + _START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with code {process.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"server did not listen on 127.0.0.1:{port} within {_START_TIMEOUT} s")


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """Terminate a server process (kill it if it lingers) and reap it."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@contextmanager
def _serving(
    argv: list[str], port: int, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        _wait_for_port(port, process)
        yield process
    finally:
        stop_process(process)


@contextmanager
def http_server(
    transport: str, *argv: str, port: int | None = None, path: str | None = None
) -> Iterator[str]:
    """Run our test server over ``sse`` or ``streamable_http`` on ``port`` (default: a free one).

    Args:
        transport: ``sse`` or ``streamable_http``.
        argv: more options of the server script.
        port: the port (default: a free one).
        path: the endpoint's path (default ``/sse`` or ``/mcp``); ``/`` yields the bare
            ``http://127.0.0.1:PORT``.

    Yields:
        The endpoint URL.
    """
    port = port or free_port()
    flag = "sse" if transport == "sse" else "streamable-http"
    path = path or ("/sse" if transport == "sse" else "/mcp")
    command = [sys.executable, str(SERVER_SCRIPT), "--transport", flag, "--port", str(port), "--path", path]
    with _serving([*command, *argv], port):
        yield f"http://127.0.0.1:{port}{path.rstrip('/')}"


def everything_command() -> Path | None:
    """The reference server's launcher, installed into ``.cache/node`` on demand; None without npm."""
    if EVERYTHING_BIN.exists():
        return EVERYTHING_BIN
    npm = shutil.which("npm")
    if npm is None:
        return None
    install = [
        npm,
        "install",
        "--no-audit",
        "--no-fund",
        "--silent",
        "--prefix",
        str(NODE_PREFIX),
        EVERYTHING_PACKAGE,
    ]
    subprocess.run(install, check=False, capture_output=True, timeout=600)
    return EVERYTHING_BIN if EVERYTHING_BIN.exists() else None


@contextmanager
def everything_http_server(transport: str, preload_dir: Path) -> Iterator[str]:
    """Run the reference server over ``sse`` or ``streamable_http`` on 127.0.0.1 only; yields its URL."""
    launcher = everything_command()
    node = shutil.which("node")
    if launcher is None or node is None:
        raise FileNotFoundError("server-everything or node is not available")
    preload = preload_dir / "loopback.cjs"
    preload.write_text(LOOPBACK_PRELOAD, encoding="utf-8")
    port = free_port()
    script = launcher.resolve()  # node runs the package's script, not npm's .bin symlink
    mode = "sse" if transport == "sse" else "streamableHttp"
    env = {**os.environ, "PORT": str(port)}
    with _serving([node, "--require", str(preload), str(script), mode], port, env=env):
        yield f"http://127.0.0.1:{port}/sse" if transport == "sse" else f"http://127.0.0.1:{port}/mcp"


def listening_addresses(port: int) -> set[str]:
    """Local addresses with a listening TCP socket on ``port`` (from /proc/net/tcp and tcp6)."""
    found: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        path = Path(table)
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            address, port_hex = fields[1].rsplit(":", 1)
            if int(port_hex, 16) == port and fields[3] == "0A":  # 0A = LISTEN
                found.add(_decode_address(address))
    return found


def _decode_address(hex_address: str) -> str:
    raw = bytes.fromhex(hex_address)
    if len(raw) == 4:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
    return socket.inet_ntop(socket.AF_INET6, words)


def wait_until(predicate: Any, timeout: float = 20.0, interval: float = 0.02) -> bool:
    """Poll ``predicate()`` until it is true or ``timeout`` passes; returns its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())
