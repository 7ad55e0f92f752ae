from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fms_dgt.cli import main

REPO = Path(__file__).resolve().parents[1]
DEMO = str(REPO / "configs" / "demo.yaml")


def test_list_json_has_every_field(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "list", DEMO, "--json", "--namespace", "weather_api"]) == 0
    tools = json.loads(capsys.readouterr().out)
    assert {t["qualified_name"] for t in tools} == {
        "weather_api::geocode_city",
        "weather_api::get_weather",
        "weather_api::get_forecast",
    }
    assert set(tools[0]) >= {
        "qualified_name",
        "name",
        "namespace",
        "description",
        "parameters",
        "output_parameters",
        "metadata",
    }


def test_show_prints_overloads_and_unknown_names_fail(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "show", DEMO, "weather_api::get_weather"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 2
    assert main(["tools", "show", DEMO, "weather_api::nope"]) == 1
    assert "unknown tool 'weather_api::nope'" in capsys.readouterr().err


def test_validate_reports_every_problem_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"description": "x"}, {"name": "a", "parameters": {"type": "string"}}]))
    assert main(["tools", "validate", str(bad)]) == 1
    out = capsys.readouterr().out
    assert out.count("error:") == 2 and "at /0" in out and "at /1" in out
    assert main(["tools", "validate", DEMO]) == 0


def test_validate_strict_fails_on_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = tmp_path / "r.jsonl"
    records.write_text(
        "\n".join(json.dumps({"id": i, "function": [{"name": "f", "description": str(i)}]}) for i in range(2))
    )
    assert main(["tools", "validate", str(records)]) == 0
    assert main(["tools", "validate", str(records), "--strict"]) == 1
    assert "kept the first" in capsys.readouterr().out


def test_console_script_errors_are_one_line_without_traceback(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "fms_dgt.cli", "tools", "list", str(tmp_path / "missing.yaml")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "source not found" in result.stderr


def test_run_refuses_to_overwrite_without_a_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "run")
    assert main(["run", DEMO, "-n", "2", "--out", out]) == 0
    assert main(["run", DEMO, "-n", "2", "--out", out]) == 1
    assert "--resume" in capsys.readouterr().err
    assert main(["run", DEMO, "-n", "3", "--out", out, "--resume"]) == 0
    # The summary covers the whole folder: the two records found there and the one added.
    assert "written 3, rejected 0, 2 already done" in capsys.readouterr().out


def _flow_config(tmp_path: Path, suffix: str) -> Path:
    data = REPO / "data" / "weather_tools.yaml"
    config = {"tools": {"registry": [{"type": "file", "path": str(data), "namespace": "wx"}]}}
    path = tmp_path / f"c{suffix}"
    path.write_text(json.dumps(config), encoding="utf-8")  # flow style: JSON text
    return path


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_configs_are_detected_by_content_not_layout(
    tmp_path: Path, suffix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _flow_config(tmp_path, suffix)
    assert main(["tools", "list", str(path)]) == 0
    out = capsys.readouterr().out
    assert "wx::get_weather" in out and "default::tools" not in out


def test_version_and_help_name_every_argument(capsys: pytest.CaptureFixture[str]) -> None:
    from fms_dgt import __version__

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"fms-dgt {__version__}"
    for command in (["run"], ["tools", "list"], ["tools", "show"], ["tools", "export"]):
        with pytest.raises(SystemExit):
            main([*command, "--help"])
        text = capsys.readouterr().out
        positionals = text.split("positional arguments:")[1].split("options:")[0]
        rows = [line for line in positionals.splitlines() if line.strip()]
        assert rows and all(len(line.split(None, 1)) == 2 for line in rows if line.startswith("  ")), text
        if "--format" in text:
            assert "provider layout" in text


def test_a_terminal_gets_a_progress_bar_with_rate(tmp_path: Path) -> None:
    import os
    import pty

    config = tmp_path / "c.yaml"
    config.write_text(
        "tools: {registry: [{type: file, path: " + str(REPO / "data" / "weather_tools.yaml") + "}]}\n"
        "generation: {count: 20, scenarios: [{name: r, sampler: {type: tc/random, k: 1}}]}\n",
        encoding="utf-8",
    )
    code = "import sys; from fms_dgt.cli import main; sys.exit(main(sys.argv[1:]))"
    pid, fd = pty.fork()
    if pid == 0:  # the child runs the CLI with a terminal as stderr
        os.execv(
            sys.executable, [sys.executable, "-c", code, "run", str(config), "--out", str(tmp_path / "o")]
        )
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    text = b"".join(chunks).decode("utf-8", "replace")
    assert os.waitstatus_to_exitcode(status) == 0, text
    assert "20/20" in text and "rec/s" in text and "written=20" in text


def test_control_characters_never_reach_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"name": "ok", "description": "Fine.\x1b]2;owned\x07 \x1b[31mred"}]))
    assert main(["tools", "list", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\\x1b" in out
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"name": "evil\x1b[2Jname"}]))
    assert main(["tools", "validate", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "control character" in out and "\x1b" not in out


def test_graph_prints_a_tools_edges_and_writes_dot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    travel = str(REPO / "data" / "sampling" / "travel.yaml")
    assert main(["graph", travel, "--tool", "accounts::find_user", "--top", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "accounts::find_user"
    assert lines[1].startswith("  outgoing (") and len([x for x in lines if x.startswith("    ")]) == 2
    assert "user_id -> accounts::get_loyalty_status.user_id" in lines[2] and "entity user" in lines[2]
    dot = tmp_path / "graph.dot"
    assert main(["graph", travel, "--dot", str(dot), "--namespace", "flights"]) == 0
    assert "flights::book_flight" in dot.read_text() and "accounts::" not in dot.read_text()


def test_graph_usage_and_unknown_tools(capsys: pytest.CaptureFixture[str]) -> None:
    travel = str(REPO / "data" / "sampling" / "travel.yaml")
    with pytest.raises(SystemExit) as usage:
        main(["graph", travel])
    assert usage.value.code == 2 and "--tool NAME or --dot FILE" in capsys.readouterr().err
    assert main(["graph", travel, "--tool", "nope::x"]) == 1
    assert "unknown tool 'nope::x'" in capsys.readouterr().err
