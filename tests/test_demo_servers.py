"""The bundled demo MCP servers: ``data/mcp/demo_server.py`` (standard library, used by the
default run) must serve exactly what ``data/mcp/sdk_demo_server.py`` (the MCP SDK's server)
serves, so that the default run writes the same records with either."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fms_dgt.databuilders.tool_calling.job import GenerationJob

REPO = Path(__file__).resolve().parents[1]
SERVERS = REPO / "data" / "mcp"

_CONVERSATION: list[dict[str, Any]] = [
    {
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    },
    {"method": "notifications/initialized"},
    {"method": "tools/list", "params": {}},
    {"method": "tools/call", "params": {"name": "get_forecast", "arguments": {"city": "Oslo"}}},
    {"method": "tools/call", "params": {"name": "get_forecast", "arguments": {"city": "Quito"}}},
    {
        "method": "tools/call",
        "params": {"name": "convert_temperature", "arguments": {"value": 21.5, "to": "fahrenheit"}},
    },
    {
        "method": "tools/call",
        "params": {"name": "convert_temperature", "arguments": {"value": 70, "to": "celsius"}},
    },
    {"method": "tools/call", "params": {"name": "add_note", "arguments": {"text": "buy milk"}}},
    {"method": "tools/call", "params": {"name": "add_note", "arguments": {"text": "call Ada"}}},
    {"method": "tools/call", "params": {"name": "list_notes", "arguments": {}}},
    {"method": "tools/call", "params": {"name": "reset", "arguments": {}}},
    {"method": "tools/call", "params": {"name": "list_notes", "arguments": {}}},
    {"method": "ping"},
]


def _talk(script: str, lines: list[str]) -> list[dict[str, Any]]:
    """Send ``lines`` to a server one at a time and read its answers (a notification gets none)."""
    server = subprocess.Popen(
        [sys.executable, script],
        cwd=SERVERS,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    answers = []
    try:
        for line in lines:
            server.stdin.write(line + "\n")
            server.stdin.flush()
            if '"id"' in line or not line.startswith("{"):
                answers.append(json.loads(server.stdout.readline()))
    finally:
        server.stdin.close()
        server.wait(timeout=10)
    return answers


def _numbered(messages: list[dict[str, Any]]) -> list[str]:
    lines = []
    for number, message in enumerate(messages, 1):
        full = {"jsonrpc": "2.0", **message}
        if not message["method"].startswith("notifications/"):
            full["id"] = number
        lines.append(json.dumps(full))
    return lines


def test_both_servers_list_the_same_tools_and_answer_the_same() -> None:
    light = _talk("demo_server.py", _numbered(_CONVERSATION))
    sdk = _talk("sdk_demo_server.py", _numbered(_CONVERSATION))
    assert len(light) == len(sdk) == len(_CONVERSATION) - 1
    # The SDK server also declares empty prompts and resources; the light one offers tools only.
    assert light[0]["result"]["capabilities"] == {"tools": {"listChanged": False}}
    assert light[0]["result"]["protocolVersion"] == sdk[0]["result"]["protocolVersion"] == "2025-06-18"
    assert light[1:] == sdk[1:]
    assert len(light[1]["result"]["tools"]) == 5
    assert light[8]["result"]["structuredContent"] == {"result": ["buy milk", "call Ada"]}
    assert light[10]["result"]["structuredContent"] == {"result": []}


def test_cities_get_their_own_forecast_and_one_city_always_the_same() -> None:
    # Every city but three got 15 °C and cloudy, so the demo's records said so for Miami,
    # Vancouver and Amsterdam alike.
    cities = ["Miami", "Vancouver", "Amsterdam", "Quito", "Perth", "Miami", "Oslo"]
    calls = [
        {"method": "tools/call", "params": {"name": "get_forecast", "arguments": {"city": city}}}
        for city in cities
    ]
    for script in ("demo_server.py", "sdk_demo_server.py"):
        answers = _talk(script, _numbered(_CONVERSATION[:2] + calls))[1:]
        found = [a["result"]["structuredContent"] for a in answers]
        assert [f["city"] for f in found] == cities
        assert found[0] == found[5]  # Miami twice: one forecast
        assert found[6] == {"city": "Oslo", "celsius": 4.5, "conditions": "snow"}
        assert len({(f["celsius"], f["conditions"]) for f in found[:5]}) == 5
        assert all(4 <= f["celsius"] < 27 for f in found[:6])  # mild: a canned forecast, no season


def test_the_default_run_writes_the_same_records_with_either_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = (REPO / "configs" / "demo.yaml").read_text()
    assert "args: [demo_server.py]" in config
    sdk_config = tmp_path / "demo_sdk.yaml"
    sdk_config.write_text(config.replace("args: [demo_server.py]", "args: [sdk_demo_server.py]"))
    monkeypatch.setenv("DGT_DATA_DIR", str(REPO / "data"))  # the copy's own folder has no data/
    written = {}
    for name, path in (("light", REPO / "configs" / "demo.yaml"), ("sdk", sdk_config)):
        with GenerationJob(path, count=120, out=tmp_path / name) as job:
            summary = job.run()
        assert summary.written == 120
        written[name] = (tmp_path / name / "records.jsonl").read_bytes()
    assert written["light"] == written["sdk"]
    assert b"demo::" in written["light"]  # the MCP tools were called, not only offered


@pytest.mark.parametrize(
    ("line", "code", "words"),
    [
        ("not json", -32700, "Parse error"),
        ("[" * 100_000 + "]" * 100_000, -32700, "Parse error"),
        ("[1, 2]", -32600, "Invalid request"),
        ('{"jsonrpc": "2.0", "id": 4}', -32600, "Invalid request"),
        ('{"jsonrpc": "2.0", "id": 4, "method": "resources/list"}', -32601, "Method not found"),
        (
            '{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "rm"}}',
            -32602,
            "Unknown tool: rm",
        ),
        (
            '{"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": [1]}',
            -32602,
            "params must be an object",
        ),
    ],
    ids=["not-json", "nested-100k", "batch", "no-method", "unknown-method", "unknown-tool", "bad-params"],
)
def test_the_light_server_answers_a_broken_message_with_an_error(line: str, code: int, words: str) -> None:
    [answer] = _talk("demo_server.py", [line])
    assert answer["error"]["code"] == code
    assert words in answer["error"]["message"]


def test_the_light_server_answers_bytes_that_are_not_utf8_and_goes_on() -> None:
    ping = b'{"jsonrpc": "2.0", "id": 2, "method": "ping"}\n'
    strict = {**os.environ, "PYTHONIOENCODING": "utf-8:strict"}  # a locale that allows no stray byte
    done = subprocess.run(
        [sys.executable, "demo_server.py"],
        cwd=SERVERS,
        input=b"\xff\xfe{\n" + ping,
        capture_output=True,
        timeout=20,
        env=strict,
    )
    broken, answered = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert broken["error"]["code"] == -32700
    assert answered == {"jsonrpc": "2.0", "id": 2, "result": {}}


def test_the_light_server_says_what_is_wrong_with_arguments() -> None:
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "convert_temperature",
            "arguments": {"value": "hot", "to": "kelvin", "round": True},
        },
    }
    [answer] = _talk("demo_server.py", [json.dumps(call)])
    result = answer["result"]
    assert result["isError"] is True and "structuredContent" not in result
    text = result["content"][0]["text"]
    assert "value: expected a number" in text
    assert "to: expected one of celsius, fahrenheit" in text
    assert "round: not an argument of this tool" in text
    call["params"] = {"name": "add_note", "arguments": {}}
    [answer] = _talk("demo_server.py", [json.dumps(call)])
    assert answer["result"]["isError"] is True and "text: missing" in answer["result"]["content"][0]["text"]


def test_the_light_server_answers_an_unknown_protocol_version_with_its_newest() -> None:
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "1999-01-01"}}
    [answer] = _talk("demo_server.py", [json.dumps(hello)])
    assert answer["result"]["protocolVersion"] == "2025-11-25"
