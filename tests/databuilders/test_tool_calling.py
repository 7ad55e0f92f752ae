from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from fms_dgt.cli import main
from fms_dgt.core.tools.artifacts import read_path
from fms_dgt.core.tools.data_objects import ToolCall
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.databuilders.tool_calling.job import GenerationJob
from fms_dgt.errors import ConfigError, OutputError

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "configs" / "demo.yaml"


def _config(tmp_path: Path, **generation: Any) -> dict[str, Any]:
    weather = str(REPO / "data" / "weather_tools.yaml")
    return {
        "tools": {"registry": [{"type": "file", "path": weather}], "enrichments": [{"type": "dataflow"}]},
        "generation": {
            "seed": 3,
            "count": 12,
            "output_dir": str(tmp_path / "out"),
            "scenarios": [
                {"name": "chain", "sampler": {"type": "tc/chain", "k": 2}},
                {"name": "pair", "sampler": {"type": "tc/random", "k": 2}},
            ],
            **generation,
        },
    }


def _run(config: Any, **kwargs: Any) -> Path:
    with GenerationJob(config, **kwargs) as job:
        job.run()
        return job.settings.output_dir


def _records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]


def test_every_record_names_registry_tools_with_valid_arguments(tmp_path: Path) -> None:
    out = _run(_config(tmp_path))
    records = _records(out)
    assert len(records) == 12
    registry = ToolRegistry.from_file(REPO / "data" / "weather_tools.yaml")
    for record in records:
        name_map = record["metadata"]["name_map"]
        roles = [m["role"] for m in record["messages"]]
        assert roles[0] == "user" and roles[-1] == "assistant"
        tool_names = {t["function"]["name"] for t in record["tools"]}
        assert set(name_map) == tool_names
        for message in record["messages"]:
            for call in message.get("tool_calls") or []:
                qualified = name_map[call["function"]["name"]]
                registry.match(ToolCall(qualified, json.loads(call["function"]["arguments"])))
        tool_ids = [m["tool_call_id"] for m in record["messages"] if m["role"] == "tool"]
        call_ids = [c["id"] for m in record["messages"] for c in m.get("tool_calls") or []]
        assert tool_ids == call_ids
    summary = json.loads((out / "summary.json").read_text())
    calls = sum(len(m.get("tool_calls") or []) for r in records for m in r["messages"])
    assert summary["written"] == 12 and sum(summary["tool_coverage"].values()) == calls > 0


def test_chain_arguments_are_wired_from_earlier_outputs(tmp_path: Path) -> None:
    config = _config(tmp_path, scenarios=[{"name": "chain", "sampler": {"type": "tc/chain", "k": 2}}])
    records = _records(_run(config))
    wired_seen = 0
    for record in records:
        if record["metadata"]["kind"] != "calls":
            continue
        messages = record["messages"]
        calls = [c for m in messages for c in m.get("tool_calls") or []]
        results = {m["tool_call_id"]: json.loads(m["content"]) for m in messages if m["role"] == "tool"}
        assert len([m for m in messages if m.get("tool_calls")]) == 2  # one call per turn along the chain
        for position, wired in enumerate(record["metadata"]["wired"]):
            for argument, origin in wired.items():
                upstream = results[calls[0]["id"]]
                assert origin["source"] == record["metadata"]["called"][0]
                assert json.loads(calls[position]["function"]["arguments"])[argument] == read_path(
                    upstream, origin["output"]
                )
                wired_seen += 1
    assert wired_seen > 0


def test_same_config_and_seed_give_byte_identical_output(tmp_path: Path) -> None:
    first = _run(_config(tmp_path / "a"))
    second = _run(_config(tmp_path / "b"))
    assert (first / "records.jsonl").read_bytes() == (second / "records.jsonl").read_bytes()
    other = _run(_config(tmp_path / "c"), seed=4)
    assert (other / "records.jsonl").read_bytes() != (first / "records.jsonl").read_bytes()


def test_output_is_identical_in_another_process_and_hash_seed(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(_config(tmp_path / "here")))
    local = _run(_config(tmp_path / "here"))
    code = (
        "import json,sys; from fms_dgt.databuilders.tool_calling.job import GenerationJob;"
        "j=GenerationJob(json.load(open(sys.argv[1])), out=sys.argv[2]); j.run(); j.close()"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-c", code, str(path), str(tmp_path / "there")], check=True, env=env)
    assert (tmp_path / "there" / "records.jsonl").read_bytes() == (local / "records.jsonl").read_bytes()


def test_interrupted_runs_resume_without_loss_or_duplicates(tmp_path: Path) -> None:
    full = _run(_config(tmp_path / "full"), count=20)
    expected = (full / "records.jsonl").read_bytes()
    partial = _run(_config(tmp_path / "partial"), count=9)
    records = partial / "records.jsonl"
    with records.open("ab") as handle:
        handle.write(b'{"messages": [{"role": "us')  # a crash in the middle of a write
    with pytest.raises(OutputError, match="--resume"):
        _run(_config(tmp_path / "partial"), count=20)
    _run(_config(tmp_path / "partial"), count=20, resume=True)
    assert records.read_bytes() == expected
    _run(_config(tmp_path / "partial"), count=20, overwrite=True)
    assert records.read_bytes() == expected


def test_unsatisfiable_schemas_go_to_rejects_with_a_reason(tmp_path: Path) -> None:
    config = {
        "tools": {
            "registry": [
                {
                    "type": "inline",
                    "namespace": "x",
                    "tools": [
                        {
                            "name": "impossible",
                            "parameters": {
                                "type": "object",
                                "required": ["n"],
                                "properties": {"n": {"type": "integer", "minimum": 5, "maximum": 1}},
                            },
                        },
                        {
                            "name": "fine",
                            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
                        },
                    ],
                }
            ]
        },
        "generation": {
            "count": 10,
            "output_dir": str(tmp_path / "out"),
            "scenarios": [{"sampler": {"type": "tc/random", "k": 1}}],
        },
    }
    out = _run(config)
    rejects = [json.loads(line) for line in (out / "rejects.jsonl").read_text().splitlines()]
    written = _records(out)
    assert rejects and written and len(rejects) + len(written) == 10
    assert all("x::impossible" in r["detail"] for r in rejects)
    assert sorted([r["index"] for r in rejects] + [w["metadata"]["index"] for w in written]) == list(
        range(10)
    )


@pytest.mark.parametrize("fmt", ["anthropic", "gemini", "openai-responses"])
def test_other_provider_layouts(tmp_path: Path, fmt: str) -> None:
    record = _records(_run(_config(tmp_path), count=2, fmt=fmt))[0]
    assert record["metadata"]["format"] == fmt
    if fmt == "anthropic":
        assert any(
            b.get("type") == "tool_use"
            for m in record["messages"]
            if isinstance(m["content"], list)
            for b in m["content"]
        )
        assert all("input_schema" in t for t in record["tools"])
    elif fmt == "gemini":
        assert record["contents"][0]["role"] == "user" and "functionDeclarations" in record["tools"][0]
    else:
        assert any(item.get("type") == "function_call" for item in record["input"])


def test_text_from_an_llm_endpoint(tmp_path: Path) -> None:
    from support.chat_server import serve

    from fms_dgt.databuilders.tool_calling.checks import prompt

    def reply(body: dict[str, Any]) -> Any:
        system = body["messages"][0]["content"]
        if system == prompt("check"):
            return {"verdict": "pass", "reason": "fits"}
        return "LLM: " + system[:20]

    with serve(reply) as server:
        text = {"type": "llm", "base_url": server.url, "model": "writer"}
        config = _config(tmp_path, text=text, no_call_rate=0)
        record = _records(_run(config, count=1))[0]
    assert record["messages"][0]["content"] == ("LLM: " + prompt("user_turn")[:20]).strip()
    assert record["messages"][-1]["content"] == ("LLM: " + prompt("final_turn")[:20]).strip()
    stages = [r["messages"][0]["content"] for r in server.requests]
    assert stages == [prompt("user_turn"), prompt("final_turn"), prompt("check")]
    assert all(r["model"] == "writer" for r in server.requests)


def test_bad_generation_blocks_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown key 'cuont'.*generation.cuont"):
        GenerationJob({**_config(tmp_path), "generation": {"cuont": 3}})
    with pytest.raises(ConfigError, match="tc/chian"):
        GenerationJob(_config(tmp_path, scenarios=[{"sampler": {"type": "tc/chian"}}]))


def test_cli_run_on_the_demo_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(DEMO), "-n", "5", "--out", str(tmp_path / "demo"), "--seed", "1"]) == 0
    out = capsys.readouterr()
    assert "written 5, rejected 0" in out.out and "progress: 5/5" in out.err
    assert len(_records(tmp_path / "demo")) == 5


def test_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    with GenerationJob(_config(tmp_path), count=3, progress=stream) as job:
        job.run()
    assert "3/3" in stream.getvalue() and "rec/s" in stream.getvalue(), "a bar with the rate"


def test_exported_tools_validate_as_schemas(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for fmt in ("openai", "anthropic", "gemini", "openai-responses"):
        assert main(["tools", "export", str(DEMO), "--format", fmt]) == 0
        payload = json.loads(capsys.readouterr().out)
        assert payload["name_map"]
    assert main(["tools", "export", str(DEMO), "--strict"]) == 0
    for tool in json.loads(capsys.readouterr().out)["tools"]:
        Draft202012Validator.check_schema(tool["function"]["parameters"])
        assert tool["function"]["strict"] is True


def test_sources_that_change_during_a_run_are_followed(tmp_path: Path) -> None:
    tools = tmp_path / "tools.yaml"
    tools.write_text(
        "ns:\n  - name: first\n    parameters: {type: object, properties: {q: {type: string}}}\n"
    )
    config = {
        "tools": {"registry": [{"type": "file", "path": str(tools)}]},
        "generation": {
            "count": 2,
            "output_dir": str(tmp_path / "out"),
            "scenarios": [{"sampler": {"type": "tc/random", "k": 1}}],
        },
    }
    with GenerationJob(config) as job:
        assert job.run().refreshes == 0
        tools.write_text(
            "ns:\n  - name: second\n    parameters: {type: object, properties: {n: {type: integer}}}\n"
        )
        job.registry.loaders[0].stale = True  # what a loader does when its source announces a change
        job.settings.count, job.resume = 6, True
        summary = job.run()
        assert summary.refreshes == 1 and job.registry.generation == 1
    records = _records(tmp_path / "out")
    assert [r["metadata"]["tools"] for r in records[:2]] == [["ns::first"]] * 2
    assert all(r["metadata"]["tools"] == ["ns::second"] for r in records[2:]) and len(records) == 6


def test_blocklisted_tools_are_never_sampled(tmp_path: Path) -> None:
    config = _config(tmp_path, policy={"blocklist": ["*::get_forecast"]})
    config["tools"]["engines"] = {"weather": {"type": "mock", "blocklist": ["*::geocode_city"]}}
    config["tools"]["registry"][0]["engine"] = "weather"
    records = _records(_run(config, count=30))
    used = {name for r in records for name in r["metadata"]["tools"]}
    assert used and not any(n.endswith(("::get_forecast", "::geocode_city")) for n in used)
    assert all(r["metadata"]["errors"] == 0 for r in records)
    # Without the blocklists both tools take part in the same run.
    open_run = _records(_run(_config(tmp_path / "open"), count=30))
    assert {n.split("::")[1] for r in open_run for n in r["metadata"]["tools"]} >= {
        "get_forecast",
        "geocode_city",
    }
