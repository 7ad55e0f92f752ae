"""A misbehaving MCP server for the tests: raw JSON-RPC over stdio, standard library only.

The SDK's server cannot be made to send what a broken or hostile server sends (a tool without a
name, garbage on stdout, an answer nested 5,000 levels deep...), so this one writes its answers
by hand. What it does is read from a JSON scenario, given inline or as a file::

    python tests/support/hostile_mcp_server.py '{"tools": [{"name": "a", "inputSchema": {}}]}'
    python tests/support/hostile_mcp_server.py @scenario.json

Scenario keys (all optional):

* ``tools``: the ``tools/list`` answer's tools, sent as they are (malformed ones included);
  ``tool_count``: that many well-formed tools ``t0``, ``t1``... instead;
* ``pages``: ``{cursor: {"tools": [...], "next": cursor or null}}`` (the first page's cursor is
  ``""``), for pagination that loops or never ends;
* ``noise``: lines written to stdout before every answer (protocol noise);
* ``silent``: read requests and never answer any (not even ``initialize``);
* ``stderr_bytes``: write that many bytes to stderr at start (lines of 99 characters and a newline);
* ``grandchild``: a file path: start ``sleep 600`` in the server's process group, write its pid there;
  ``grandchild_keeps_pipes``: the grandchild inherits the server's stdout and stderr;
* ``call``: what ``tools/call`` does: ``{"exit": code, "stderr": text}`` dies mid-call;
  ``{"text_bytes": n}`` answers with n bytes of text; ``{"depth": n}`` answers with
  ``structuredContent`` nested n levels; ``{"line": text}`` writes that line as the answer
  (``{id}`` in it becomes the request's id);
  ``{"pad_bytes": n}`` answers a valid result padded to about n bytes; ``{"error_bytes": n}`` a
  JSON-RPC error whose message is n characters long. Without ``call``, a call
  answers ``{"echo": arguments}`` as structured content.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

SCENARIO: dict[str, Any] = {}


def main() -> None:
    """Read the scenario, do what it says at start, then answer requests until stdin ends."""
    global SCENARIO
    text = sys.argv[1] if len(sys.argv) > 1 else "{}"
    if text.startswith("@"):
        with open(text[1:], encoding="utf-8") as file:
            text = file.read()
    SCENARIO = json.loads(text)
    _start()
    for line in sys.stdin:
        if line.strip():
            _handle(json.loads(line))


def _start() -> None:
    size = int(SCENARIO.get("stderr_bytes", 0))
    chunk = ("x" * 99 + "\n") * 1000
    while size > 0:
        sys.stderr.write(chunk[:size])
        size -= len(chunk)
    sys.stderr.flush()
    if "grandchild" in SCENARIO:
        keep = bool(SCENARIO.get("grandchild_keeps_pipes"))
        out = None if keep else subprocess.DEVNULL
        child = subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL, stdout=out, stderr=out)
        with open(SCENARIO["grandchild"], "w", encoding="utf-8") as file:
            file.write(str(child.pid))


def _handle(message: dict[str, Any]) -> None:
    if "id" not in message or SCENARIO.get("silent"):
        return  # a notification, or a server that never answers
    method = message.get("method")
    params = message.get("params") or {}
    if method == "initialize":
        _answer(message["id"], _initialize(params))
    elif method == "tools/list":
        _answer(message["id"], _page(params.get("cursor") or ""))
    elif method == "tools/call":
        _call(message["id"], params)
    elif method == "ping":
        _answer(message["id"], {})
    else:
        error = {"code": -32601, "message": "no such method"}
        _write({"jsonrpc": "2.0", "id": message["id"], "error": error})


def _initialize(params: dict[str, Any]) -> dict[str, Any]:
    return {
        "protocolVersion": params.get("protocolVersion", "2025-11-25"),
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {"name": "hostile", "version": "0"},
    }


def _page(cursor: str) -> dict[str, Any]:
    if "pages" in SCENARIO:
        page = SCENARIO["pages"][cursor]
        result = {"tools": page["tools"]}
        if page.get("next") is not None:
            result["nextCursor"] = page["next"]
        return result
    if "tool_count" in SCENARIO:
        schema = {"type": "object", "properties": {"x": {"type": "string"}}}
        return {"tools": [{"name": f"t{i}", "inputSchema": schema} for i in range(SCENARIO["tool_count"])]}
    default = [{"name": "echo", "inputSchema": {"type": "object"}}]
    return {"tools": SCENARIO.get("tools", default)}


def _call(request_id: Any, params: dict[str, Any]) -> None:
    how = SCENARIO.get("call", {})
    if "exit" in how:
        sys.stderr.write(how.get("stderr", "") + "\n")
        sys.stderr.flush()
        os._exit(int(how["exit"]))
    if "line" in how:
        _raw(how["line"].replace("{id}", json.dumps(request_id)))
    elif "depth" in how:
        depth = int(how["depth"])
        nested = '{"a":' * depth + "1" + "}" * depth
        _raw(
            f'{{"jsonrpc":"2.0","id":{json.dumps(request_id)},"result":{{"content":[],"structuredContent":{nested}}}}}'
        )
    elif "error_bytes" in how:
        error = {"code": -32000, "message": "E" * int(how["error_bytes"])}
        _write({"jsonrpc": "2.0", "id": request_id, "error": error})
    elif "text_bytes" in how:
        _answer(request_id, {"content": [{"type": "text", "text": "y" * int(how["text_bytes"])}]})
    elif "pad_bytes" in how:
        _answer(request_id, {"content": [], "structuredContent": {"pad": "z" * int(how["pad_bytes"])}})
    else:
        _answer(request_id, {"content": [], "structuredContent": {"echo": params.get("arguments") or {}}})


def _answer(request_id: Any, result: dict[str, Any]) -> None:
    _write({"jsonrpc": "2.0", "id": request_id, "result": result})


def _write(message: dict[str, Any]) -> None:
    _raw(json.dumps(message))


def _raw(line: str) -> None:
    for noise in SCENARIO.get("noise", []):
        sys.stdout.write(noise + "\n")
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
