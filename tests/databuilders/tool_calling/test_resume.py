"""Resuming never mixes runs; the summary is written on every exit and covers the whole folder."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from fms_dgt.cli import main
from fms_dgt.databuilders.tool_calling.job import GenerationJob
from fms_dgt.errors import OutputError

REPO = Path(__file__).resolve().parents[3]


def _config(tmp_path: Path, name: str = "c.json", **generation: Any) -> Path:
    config = {
        "tools": {
            "registry": [{"type": "file", "path": str(REPO / "data" / "weather_tools.yaml")}],
            "enrichments": [{"type": "dataflow"}],
        },
        "generation": {
            "seed": 11,
            "count": 30,
            "scenarios": [{"name": "chain", "sampler": {"type": "tc/chain", "k": 2}}],
            **generation,
        },
    }
    path = tmp_path / name
    path.write_text(json.dumps(config))
    return path


def test_resume_with_another_seed_format_or_config_is_refused(tmp_path: Path) -> None:
    config, out = _config(tmp_path), str(tmp_path / "out")
    assert main(["run", str(config), "-n", "5", "--out", out]) == 0
    with pytest.raises(OutputError, match=r"seed: 11 in the folder, 12 now"):
        GenerationJob(str(config), out=out, seed=12, resume=True).run()
    with pytest.raises(OutputError, match=r"format: 'openai' in the folder, 'anthropic' now"):
        GenerationJob(str(config), out=out, fmt="anthropic", resume=True).run()
    other = _config(tmp_path, "d.json", distractors=1)
    with pytest.raises(OutputError, match="the config's content"):
        GenerationJob(str(other), out=out, resume=True).run()
    # A larger count or another output folder is the same run.
    moved = _config(tmp_path, "e.json", count=99, output_dir="elsewhere")
    assert main(["run", str(moved), "-n", "8", "--out", out, "--resume"]) == 0
    lines = (tmp_path / "out" / "records.jsonl").read_text().splitlines()
    assert [json.loads(x)["metadata"]["index"] for x in lines] == list(range(8))


def test_resume_without_a_manifest_is_refused(tmp_path: Path) -> None:
    config, out = _config(tmp_path), tmp_path / "out"
    assert main(["run", str(config), "-n", "3", "--out", str(out)]) == 0
    (out / "manifest.json").unlink()
    with pytest.raises(OutputError, match=r"no manifest\.json"):
        GenerationJob(str(config), out=str(out), resume=True).run()
    assert main(["run", str(config), "-n", "3", "--out", str(out), "--overwrite"]) == 0
    assert json.loads((out / "manifest.json").read_text())["seed"] == 11


def _wait_for_lines(path: Path, count: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if path.exists() and path.read_bytes().count(b"\n") >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"the run did not write {count} records in time")


def test_ctrl_c_writes_the_summary_prints_one_line_and_resume_completes_the_same_records(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "fms_dgt.cli", "run", str(config), "-n", "200000", "--out", str(out)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for_lines(out / "records.jsonl", 40, process)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert "Traceback" not in err
    assert [line for line in err.splitlines() if not line.startswith("progress:")] == [
        "interrupted: stopped before finishing; run again with --resume to continue"
    ]
    summary = json.loads((out / "summary.json").read_text())
    written = (out / "records.jsonl").read_text().splitlines()
    assert summary["interrupted"] is True and summary["written"] == len(written) >= 40
    total = len(written) + 25
    assert main(["run", str(config), "-n", str(total), "--out", str(out), "--resume"]) == 0
    resumed = json.loads((out / "summary.json").read_text())
    assert resumed["interrupted"] is False and resumed["written"] + resumed["rejected"] == total
    assert resumed["quality"]["records"] == resumed["written"]
    straight = tmp_path / "straight"
    assert main(["run", str(config), "-n", str(total), "--out", str(straight)]) == 0
    assert (out / "records.jsonl").read_bytes() == (straight / "records.jsonl").read_bytes()
    assert json.loads((straight / "summary.json").read_text())["quality"] == resumed["quality"]


def test_a_killed_run_is_summarised_whole_after_resume_and_by_inspect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "fms_dgt.cli", "run", str(config), "-n", "200000", "--out", str(out)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    _wait_for_lines(out / "records.jsonl", 30, process)
    os.kill(process.pid, signal.SIGKILL)  # no chance to write a summary
    process.wait()
    assert not (out / "summary.json").exists()
    assert main(["inspect", str(out), "--json"]) == 0
    seen = json.loads(capsys.readouterr().out)
    lines = [x for x in (out / "records.jsonl").read_bytes().split(b"\n") if x.strip()]
    # A line cut by the kill is not counted as a record.
    assert seen["written"] in (len(lines), len(lines) - 1)
    assert seen["quality"]["coverage"]["pool"] == 6
    total = len(lines) + 20
    assert main(["run", str(config), "-n", str(total), "--out", str(out), "--resume"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["written"] + summary["rejected"] == total
    assert main(["inspect", str(out)]) == 0
    report = capsys.readouterr().out
    assert f"records            {summary['written']} written" in report
    assert "distractors" in report and "Gini" in report


def test_inspect_of_a_folder_without_a_run_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["inspect", str(tmp_path)]) == 1
    assert "no run in" in capsys.readouterr().err


def test_the_demo_killed_and_resumed_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    """The demo's stdio MCP server keeps notes: isolation per record makes a resume exact."""
    demo = REPO / "configs" / "demo.yaml"
    out, total = tmp_path / "out", 1500
    command = [sys.executable, "-m", "fms_dgt.cli", "run", str(demo), "-n", str(total), "--out", str(out)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Late enough that records before the kill added notes (the straight run would list them).
    _wait_for_lines(out / "records.jsonl", 250, process)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert (out / "records.jsonl").read_bytes().count(b"\n") < total, "killed before the end"
    assert main(["run", str(demo), "-n", str(total), "--out", str(out), "--resume"]) == 0
    straight = tmp_path / "straight"
    assert main(["run", str(demo), "-n", str(total), "--out", str(straight)]) == 0
    assert (out / "records.jsonl").read_bytes() == (straight / "records.jsonl").read_bytes()
    notes = [
        json.loads(line)
        for line in (straight / "records.jsonl").read_text().splitlines()
        if "demo::list_notes" in json.loads(line)["metadata"]["called"]
    ]
    assert notes, "some records list the notebook"
