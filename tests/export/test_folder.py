"""``fms-dgt export``: a run's folder in any format, JSON Lines or Parquet, with a dataset card."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.runs import read_records

from fms_dgt.cli import main
from fms_dgt.errors import ExportError
from fms_dgt.export import convert_record, export_folder, from_arrow_safe


def test_jsonl_export_writes_converted_records_and_a_card(demo_run: Path, tmp_path: Path) -> None:
    summary = export_folder(demo_run, fmt="hf", destination=tmp_path / "hf")
    assert summary.written == 30 and summary.files == ["records.jsonl"] and not summary.skipped
    assert read_records(tmp_path / "hf") == [convert_record(r, fmt="hf") for r in read_records(demo_run)]
    card = (tmp_path / "hf" / "README.md").read_text()
    assert card.startswith("---\n") and "path: records.jsonl" in card


def test_parquet_export_is_arrow_safe_and_loads_back(demo_run: Path, tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    assert (
        main(
            [
                "export",
                str(demo_run),
                "--format",
                "hf",
                "--template-family",
                "llama3",
                "--to",
                "parquet",
                "--out",
                str(tmp_path / "p"),
            ]
        )
        == 0
    )
    files = sorted((tmp_path / "p" / "data").glob("*.parquet"))
    assert [f.name for f in files] == ["train-00000-of-00001.parquet"]
    rows = pq.read_table(files[0]).to_pylist()
    expected = [convert_record(r, fmt="hf", family="llama3") for r in read_records(demo_run)]
    assert all(r["layout"] == "arrow-safe" for r in rows)
    assert [from_arrow_safe(r) for r in rows] == expected
    export_folder(demo_run, fmt="gemini", to="parquet", destination=tmp_path / "g")
    rows = pq.read_table(tmp_path / "g" / "data" / "train-00000-of-00001.parquet").to_pylist()
    assert [from_arrow_safe(r) for r in rows] == [
        convert_record(r, fmt="gemini") for r in read_records(demo_run)
    ]


def test_the_card_is_a_dataset_card_with_the_runs_provenance_and_quality(
    demo_run: Path, tmp_path: Path
) -> None:
    hub = pytest.importorskip("huggingface_hub")
    source = tmp_path / "run"
    shutil.copytree(demo_run, source)
    manifest = {
        "config_hash": "c0ffee",
        "seed": 7,
        "format": "openai",
        "versions": {"fms_dgt": "0.1.0"},
        "sources": [{"namespace": "weather_api", "tools": 3, "fingerprint": "ab12cd"}],
    }
    (source / "manifest.json").write_text(json.dumps(manifest))
    export_folder(source, fmt="sharegpt", to="parquet", destination=tmp_path / "s", license_id="apache-2.0")
    card = hub.DatasetCard.load(tmp_path / "s" / "README.md")
    data = card.data.to_dict()
    assert data["license"] == "apache-2.0" and data["size_categories"] == ["n<1K"]
    assert "sharegpt" in data["tags"] and "tool-calling" in data["tags"]
    assert data["configs"] == [
        {"config_name": "default", "data_files": [{"split": "train", "path": "data/train-*.parquet"}]}
    ]
    text = card.text
    assert "c0ffee" in text and "| weather_api | 3 | `ab12cd` |" in text and "| written | 30 |" in text
    bare = tmp_path / "bare-run"
    shutil.copytree(demo_run, bare)
    (bare / "manifest.json").unlink()
    export_folder(bare, fmt="sharegpt", destination=tmp_path / "bare")
    assert "no manifest.json" in (tmp_path / "bare" / "README.md").read_text()


def test_records_a_format_cannot_hold_are_skipped_and_counted(tmp_path: Path, demo_run: Path) -> None:
    source = tmp_path / "run"
    source.mkdir()
    records = read_records(demo_run)[:3]
    records[1]["messages"][1]["content"] = "let me check"  # a call turn that also speaks
    (source / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    summary = export_folder(source, fmt="sharegpt", destination=tmp_path / "out")
    assert summary.written == 2 and sum(summary.skipped.values()) == 1
    assert "both speaks and calls" in next(iter(summary.skipped))


def _main_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["export", *argv]) == 1
    return capsys.readouterr().err


def test_bad_input_is_a_clear_error_with_file_and_line(
    demo_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "no such output folder" in _main_error(capsys, str(tmp_path / "nope"), "--format", "hf")
    source = tmp_path / "run"
    source.mkdir()
    assert "no records.jsonl in this folder" in _main_error(capsys, str(source), "--format", "hf")
    good = (demo_run / "records.jsonl").read_text().splitlines()
    (source / "records.jsonl").write_text("\n".join([good[0], good[1][:50], good[2]]) + "\n")
    err = _main_error(capsys, str(source), "--format", "hf")
    assert f"{source / 'records.jsonl'}:2: damaged line: not JSON" in err
    bfcl = json.loads(good[0])
    bfcl["metadata"]["format"] = "bfcl"
    (source / "records.jsonl").write_text(good[0] + "\n" + json.dumps(bfcl) + "\n")
    err = _main_error(capsys, str(source), "--format", "hf")
    assert "records.jsonl:2: cannot read records of format 'bfcl' back" in err
    assert not (source / "export-hf" / "records.jsonl").exists(), "no half-written output"
    bfcl["metadata"]["format"] = "yaml"
    (source / "records.jsonl").write_text(json.dumps(bfcl) + "\n")
    assert "records.jsonl:1: unknown wire format 'yaml'" in _main_error(capsys, str(source), "--format", "hf")


def test_usage_errors_and_earlier_output(
    demo_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["export", str(demo_run), "--format", "csv"])
    assert exit_info.value.code == 2
    err = _main_error(
        capsys, str(demo_run), "--format", "openai", "--template-family", "qwen", "--out", str(tmp_path / "x")
    )
    assert "families adapt records in the hf layout" in err
    assert main(["export", str(demo_run), "--format", "hf", "--out", str(tmp_path / "y")]) == 0
    assert "pass --overwrite" in _main_error(
        capsys, str(demo_run), "--format", "hf", "--out", str(tmp_path / "y")
    )
    assert main(["export", str(demo_run), "--format", "hf", "--out", str(tmp_path / "y"), "--overwrite"]) == 0
    assert "never rewrites finished output" in _main_error(
        capsys, str(demo_run), "--format", "hf", "--out", str(demo_run)
    )
    with pytest.raises(ExportError, match="unknown target 'csv'"):
        export_folder(demo_run, fmt="hf", to="csv", destination=tmp_path / "z")
