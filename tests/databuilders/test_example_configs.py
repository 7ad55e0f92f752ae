from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fms_dgt.databuilders.tool_calling.job import GenerationJob

REPO = Path(__file__).resolve().parents[2]


def test_llm_example_config_runs_against_a_local_endpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from support.chat_server import serve

    def reply(body: dict[str, Any]) -> Any:
        if body["messages"][0]["content"].startswith("You verify training data"):
            return {"verdict": "pass", "reason": "fits"}
        if "response_format" in body:
            return {
                "temperature": 21.5,
                "condition": "clear",
                "latitude": 1.0,
                "longitude": 2.0,
                "days": [],
                "events": [],
            }
        return "A line written by the model."

    with serve(reply) as server:
        monkeypatch.setenv("LLM_BASE_URL", server.url)
        monkeypatch.setenv("LLM_MODEL", "stand-in")
        with GenerationJob(REPO / "configs" / "llm_run.yaml", count=4, out=tmp_path) as job:
            summary = job.run()
    assert summary.written == 4
    records = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    assert all(r["messages"][0]["content"] == "A line written by the model." for r in records)
    engines = {e for r in records for e in r["metadata"]["engines"]}
    assert engines == {"llm"}
    assert any(body.get("response_format") for body in server.requests)


def test_remote_mcp_example_runs_against_a_loopback_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from support.mcp_harness import http_server

    # Only the server's data tools: a sampled sleep, failure or add_tool would make the run depend on
    # timing (add_tool changes the tool list, which auto_refresh follows whenever it arrives).
    texts = []
    with http_server("streamable_http", "--data-only") as url:
        monkeypatch.setenv("MCP_URL", url)
        monkeypatch.setenv("MCP_TOKEN", "token-from-env")
        for run in ("first", "second"):
            out = tmp_path / run
            with GenerationJob(REPO / "configs" / "remote_mcp.yaml", count=4, out=out) as job:
                summary = job.run()
            # The server's few tools form few dataflow chains: scenarios that cannot be sampled are
            # rejected with the reason, never written short.
            assert summary.written >= 1 and summary.written + summary.rejected == 4
            assert set(summary.reasons) <= {"SamplingError"}
            texts.append((out / "records.jsonl").read_text())
    assert texts[0] == texts[1], "the same seed against the same server must give the same records"
    records = [json.loads(line) for line in texts[0].splitlines()]
    assert {e for r in records for e in r["metadata"]["engines"]} == {"mcp"}
    assert all(name.startswith("remote::") for r in records for name in r["metadata"]["tools"])
    assert all(r["metadata"]["errors"] == 0 for r in records)


def test_rest_example_with_bearer_auth_runs_against_a_loopback_api(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from support.rest_server import TOKEN, serve

    with serve() as server:
        monkeypatch.setenv("PETSTORE_URL", server.base_url)
        monkeypatch.setenv("PETSTORE_TOKEN", TOKEN)
        with GenerationJob(REPO / "configs" / "rest_example.yaml", count=6, out=tmp_path) as job:
            summary = job.run()
    assert summary.written == 6
    text = (tmp_path / "records.jsonl").read_text()
    assert TOKEN not in text
    records = [json.loads(line) for line in text.splitlines()]
    assert {e for r in records for e in r["metadata"]["engines"]} == {"petstore"}
    results = [m for r in records for m in r["messages"] if m["role"] == "tool"]
    assert results and not any("401" in m["content"] for m in results)


def test_demo_config_mixes_file_rest_and_mcp_tools(tmp_path: Path) -> None:
    with GenerationJob(REPO / "configs" / "demo.yaml", count=40, out=tmp_path) as job:
        summary = job.run()
    assert summary.written == 40
    records = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    engines = {e for r in records for e in r["metadata"]["engines"]}
    assert {"mock", "sim", "mcp"} <= engines
    assert any(any(w for w in r["metadata"]["wired"]) for r in records)


@pytest.mark.parametrize("name", ["banking_ops", "services", "catalogues"])
def test_corpus_configs_run_offline_on_real_specs(name: str, corpus: Path, tmp_path: Path) -> None:
    # The configs of configs/corpus read the shared corpus in place and simulate every call.
    with GenerationJob(REPO / "configs" / "corpus" / f"{name}.yaml", count=24, out=tmp_path) as job:
        summary = job.run()
    assert summary.written == 24 and summary.rejected == 0
    records = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    assert any(m.get("tool_calls") for r in records for m in r["messages"])
    for record in records:
        called = record["metadata"]["called"]
        for position, wires in enumerate(record["metadata"]["wired"]):
            for wire in wires.values():
                # a wire names a call of this record made before the one it feeds
                assert wire["source"] in called[:position], (name, wire, called)
