"""The output folder: one run at a time, nothing rewritten in place, damaged lines reported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from fms_dgt.cli import main
from fms_dgt.databuilders.tool_calling.output import RECORDS, REJECTS, SUMMARY, OutputFolder, line_of
from fms_dgt.errors import OutputError

REPO = Path(__file__).resolve().parents[3]


def _record(index: int) -> dict[str, object]:
    return {"messages": [], "metadata": {"index": index}}


def _folder_with(tmp_path: Path, lines: bytes) -> Path:
    out = tmp_path / "out"
    out.mkdir()
    (out / RECORDS).write_bytes(lines)
    return out


def test_resume_drops_only_a_cut_tail_in_place(tmp_path: Path) -> None:
    whole = b"".join(json.dumps(_record(i)).encode() + b"\n" for i in range(3))
    out = _folder_with(tmp_path, whole + b'{"messages": [{"ro')
    inode = (out / RECORDS).stat().st_ino
    folder = OutputFolder(out, resume=True)
    assert folder.open() == {0, 1, 2}
    folder.close()
    assert (out / RECORDS).read_bytes() == whole, "finished records kept byte for byte"
    assert (out / RECORDS).stat().st_ino == inode, "the file was truncated, not rewritten"
    assert folder.dropped_tail == len(b'{"messages": [{"ro')


def test_nul_blocks_left_by_a_crash_are_a_cut_tail(tmp_path: Path) -> None:
    whole = json.dumps(_record(0)).encode() + b"\n"
    out = _folder_with(tmp_path, whole + b"\0" * 4096 + b"\n" + b"\0" * 100)
    folder = OutputFolder(out, resume=True)
    assert folder.open() == {0}
    folder.close()
    assert (out / RECORDS).read_bytes() == whole


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b"garbage here", "not JSON"),
        (b"\0" * 10, "not JSON"),
        (b'{"messages": []}', "no record index"),
        (b'{"metadata": {"index": "3"}}', "no record index"),
        (b'{"text": "caf\xe9"}', "not UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, "JSON nested deeper than the reader goes"),
    ],
)
def test_a_damaged_line_is_reported_with_file_line_and_fix(tmp_path: Path, line: bytes, why: str) -> None:
    data = json.dumps(_record(0)).encode() + b"\n" + line + b"\n" + json.dumps(_record(2)).encode() + b"\n"
    out = _folder_with(tmp_path, data)
    with pytest.raises(OutputError, match=rf"damaged line 2 in .*records.jsonl: {why}.*sed -i '2d'"):
        OutputFolder(out, resume=True).open()
    assert (out / RECORDS).read_bytes() == data, "nothing is changed when the output is damaged"


_DEEP = "[" * 3_000 + '"x"' + "]" * 3_000


@pytest.mark.parametrize(
    ("record", "why"),
    [
        # Anthropic-like content blocks that are not objects.
        (
            {"messages": [{"role": "assistant", "content": ["x", 3]}], "metadata": {"index": 1}},
            "AttributeError",
        ),
        # Edges without their fields, from another tool or an edit.
        ({"messages": [], "metadata": {"index": 1, "edges": [{"source": "a"}]}}, "KeyError"),
        ({"messages": "text", "metadata": {"index": 1, "called": 5}}, "TypeError"),
    ],
)
def test_a_record_whose_layout_cannot_be_counted_names_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], record: dict[str, Any], why: str
) -> None:
    data = json.dumps(_record(0)).encode() + b"\n" + json.dumps(record).encode() + b"\n"
    out = _folder_with(tmp_path, data)
    assert main(["inspect", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"unreadable line 2 in {out / RECORDS}" in err and why in err and "sed -i '2d'" in err
    assert "Traceback" not in err
    assert (out / RECORDS).read_bytes() == data, "inspect changes nothing"


def test_a_record_nested_past_the_stack_is_an_error_on_inspect_and_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Python's JSON reader itself gives up on this line (RecursionError): the line is damaged.
    deep = '{"messages": [{"role": "assistant", "content": ' + _DEEP + '}], "metadata": {"index": 1}}'
    data = json.dumps(_record(0)).encode() + b"\n" + deep.encode() + b"\n"
    out = _folder_with(tmp_path, data)
    assert main(["inspect", str(out)]) == 1
    assert "damaged line 2" in capsys.readouterr().err
    with pytest.raises(OutputError, match=r"damaged line 2 .*nested deeper"):
        OutputFolder(out, resume=True).open()
    assert (out / RECORDS).read_bytes() == data


def test_overwrite_removes_the_previous_summary_first(tmp_path: Path) -> None:
    out = _folder_with(tmp_path, json.dumps(_record(0)).encode() + b"\n")
    (out / SUMMARY).write_text('{"written": 1}')
    (out / REJECTS).write_text('{"index": 1}\n')
    folder = OutputFolder(out, overwrite=True)
    assert folder.open() == set()
    folder.close()
    assert not (out / SUMMARY).exists()
    assert (out / RECORDS).read_bytes() == b"" and (out / REJECTS).read_bytes() == b""


def test_a_second_run_on_the_same_folder_is_refused_naming_the_holder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path;"
            "from fms_dgt.databuilders.tool_calling.output import OutputFolder;"
            "f = OutputFolder(Path(sys.argv[1])); f.open(); print('ready', flush=True); time.sleep(30)",
            str(out),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        with pytest.raises(OutputError, match=rf"in use by run pid {holder.pid} on host .* since"):
            OutputFolder(out, resume=True).open()
    finally:
        holder.kill()
        holder.wait()
    folder = OutputFolder(out, resume=True)  # the lock dies with its holder
    folder.open()
    folder.close()


def test_an_output_file_that_is_a_device_is_refused_without_reading_it(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    os.symlink("/dev/zero", out / RECORDS)  # endless: reading it would exhaust memory
    with pytest.raises(OutputError, match="is not a regular file"):
        OutputFolder(out, resume=True).open()


def test_a_write_that_fails_is_an_error_saying_what_to_do(tmp_path: Path) -> None:
    # A file-size limit makes the kernel refuse writes past it, as a full disk does.
    code = (
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (3000, 3000))\n"
        "from fms_dgt.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    out = tmp_path / "o"
    done = subprocess.run(
        [sys.executable, "-c", code, "run", str(_config(tmp_path, 50)), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert "cannot write" in done.stderr and "File too large" in done.stderr and "--resume" in done.stderr
    assert "Traceback" not in done.stderr
    lines = (out / RECORDS).read_bytes().split(b"\n")
    assert all(json.loads(line) for line in lines[:-1]), "every complete line is a whole record"


def _config(tmp_path: Path, count: int = 3) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(
        "tools: {registry: [{type: file, path: " + str(REPO / "data" / "weather_tools.yaml") + "}]}\n"
        f"generation: {{count: {count}, scenarios: [{{name: r, sampler: {{type: tc/random, k: 1}}}}]}}\n",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--resume", "--overwrite"], "exclude each other"),
        (["-n", "-5"], "must be 0 or more"),
        (["--seed", str(2**64)], "--seed must be between"),
    ],
)
def test_bad_flag_combinations_are_usage_errors(
    tmp_path: Path, flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main(["run", str(_config(tmp_path)), "--out", str(tmp_path / "o"), *flags])
    assert done.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_unusable_output_folders_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = str(_config(tmp_path))
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert main(["run", config, "--out", str(afile)]) == 1
    assert "is a file, not a folder" in capsys.readouterr().err
    assert main(["run", config, "--out", "/proc/fms-dgt-out"]) == 1
    assert "cannot create the output folder /proc/fms-dgt-out" in capsys.readouterr().err


def test_ctrl_c_prints_one_line_and_exits_130(tmp_path: Path) -> None:
    config = tmp_path / "slow.yaml"
    config.write_text(
        "tools:\n  registry:\n    - {type: file, path: " + str(REPO / "data" / "weather_tools.yaml") + "}\n"
        "generation: {count: 100000, scenarios: [{name: r, sampler: {type: tc/random, k: 1}}]}\n",
        encoding="utf-8",
    )
    run = subprocess.Popen(
        [sys.executable, "-m", "fms_dgt.cli", "run", str(config), "--out", str(tmp_path / "o")],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    records = tmp_path / "o" / RECORDS
    while time.monotonic() < deadline and not (records.exists() and records.stat().st_size > 1000):
        time.sleep(0.05)
    run.send_signal(2)  # SIGINT, what Ctrl-C sends
    _, err = run.communicate(timeout=60)
    assert run.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    lines = records.read_bytes().split(b"\n")
    assert all(json.loads(line)["metadata"]["index"] >= 0 for line in lines if line)


def test_no_registered_secret_reaches_the_output(tmp_path: Path) -> None:
    from fms_dgt.secrets import register_secret

    register_secret("sk-output-secret-42")
    folder = OutputFolder(tmp_path / "o")
    folder.open()
    folder.add_record({"metadata": {"index": 0}, "echo": "the gateway said key=sk-output-secret-42"})
    folder.add_reject({"index": 1, "detail": "401 for Bearer sk-output-secret-42"})
    folder.write_summary({"note": "sk-output-secret-42"})
    folder.close()
    for name in (RECORDS, REJECTS, SUMMARY):
        text = (tmp_path / "o" / name).read_text()
        assert "sk-output-secret-42" not in text and "***" in text, name


def _dumped(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"


def test_a_line_is_the_records_json_its_shared_tools_written_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from support.canonical import TOOLS, conversation

    from fms_dgt import secrets
    from fms_dgt.export import export_record

    monkeypatch.setattr(secrets, "SECRETS", secrets.Redactor())
    record = export_record(TOOLS, conversation(), {"index": 0}, fmt="openai")
    assert line_of(record) == _dumped(record) == line_of(record)
    # A record's own tool definitions (not the exporter's shared ones) are written as they are now.
    own = json.loads(json.dumps(record))
    line_of(own)
    own["tools"][0]["function"]["description"] = "Changed after a first line."
    assert line_of(own) == _dumped(own) and "Changed after" in line_of(own)
    # A secret in a shared tool's definition is hidden like any other.
    secrets.SECRETS.add("knowledge base")
    assert "knowledge base" not in line_of(record) and "knowledge base" in _dumped(record)
