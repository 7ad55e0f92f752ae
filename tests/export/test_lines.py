"""JSON Lines exports: the same bytes, counts and errors from one process or several.

Processes are forked only from a process without other threads, and earlier tests leave threads
running (the MCP event loop), so the exports with several processes run in a fresh interpreter.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from support.lines import written_otherwise

from fms_dgt.errors import ExportError
from fms_dgt.export.lines import Target, _ranges, _workers, write_jsonl

_FRESH = """
import json, sys
from collections import Counter
from pathlib import Path
from fms_dgt.errors import ExportError
from fms_dgt.export.lines import Target, _workers, write_jsonl
source, out, fmt, workers = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
assert _workers(source, workers) == min(workers, 8), "a fresh interpreter may fork"
skipped = Counter()
try:
    count = write_jsonl(source, out, Target(fmt=fmt), skipped, workers=workers)
    print(json.dumps({"count": count, "skipped": list(skipped.items())}))
except ExportError as exc:
    print(json.dumps({"error": str(exc), "line": exc.line}))
"""


def _fresh(source: Path, out: Path, fmt: str, workers: int) -> dict[str, Any]:
    args = [sys.executable, "-c", _FRESH, str(source), str(out), fmt, str(workers)]
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _source(tmp_path: Path, demo_run: Path) -> Path:
    lines = (demo_run / "records.jsonl").read_bytes().splitlines(keepends=True)
    speaking = json.loads(lines[0])
    speaking["messages"][1]["content"] = "let me check"  # a call turn that also speaks: not sharegpt
    blank_and_odd = [b"\n", *written_otherwise(), b"   \n", json.dumps(speaking).encode() + b"\n"]
    path = tmp_path / "records.jsonl"
    path.write_bytes(b"".join(lines + blank_and_odd + lines))
    return path


@pytest.mark.parametrize("fmt", ["sharegpt", "hf"])
def test_several_processes_write_the_bytes_one_writes(tmp_path: Path, demo_run: Path, fmt: str) -> None:
    source = _source(tmp_path, demo_run)
    skipped: Counter[str] = Counter()
    count = write_jsonl(source, tmp_path / "one.jsonl", Target(fmt=fmt), skipped, workers=1)
    expected = {"count": count, "skipped": [list(item) for item in skipped.items()]}
    assert count == len((tmp_path / "one.jsonl").read_bytes().splitlines()) > 60
    assert (fmt == "sharegpt") == bool(skipped), "records sharegpt cannot hold are counted"
    for workers in (3, 64):
        out = tmp_path / f"{workers}.jsonl"
        assert _fresh(source, out, fmt, workers) == expected
        assert out.read_bytes() == (tmp_path / "one.jsonl").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["3.jsonl", "64.jsonl", "one.jsonl", "records.jsonl"]


def test_an_error_names_the_first_bad_line_of_the_file(tmp_path: Path, demo_run: Path) -> None:
    source = _source(tmp_path, demo_run)
    lines = source.read_bytes().splitlines(keepends=True)
    bad = len(lines) - 5
    lines[bad - 1] = b'{"damaged\n'
    lines[-2] = b"[]\n"
    source.write_bytes(b"".join(lines))
    with pytest.raises(ExportError) as caught:
        write_jsonl(source, tmp_path / "out.jsonl", Target(fmt="hf"), Counter(), workers=1)
    assert caught.value.line == bad and str(caught.value).startswith(
        f"{source}:{bad}: damaged line: not JSON"
    )
    assert _fresh(source, tmp_path / "out.jsonl", "hf", 4) == {"error": str(caught.value), "line": bad}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl", "records.jsonl"], "no part left behind"


def test_ranges_start_at_line_starts_and_cover_the_file(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"".join(json.dumps({"n": "x" * (n % 7)}).encode() + b"\n" for n in range(50)))
    data = path.read_bytes()
    for count in (1, 2, 3, 7, 50, 80):
        ranges = _ranges(path, count)
        assert ranges[0][0] == 0 and ranges[-1][1] is None and len(ranges) <= count
        assert len(ranges) == count or count > 7
        assert all(start < end for start, end in ranges[:-1] if end is not None)
        assert all(data[start - 1 : start] == b"\n" for start, _ in ranges[1:])
        assert all(end == following for (_, end), (following, _) in itertools.pairwise(ranges))
    path.write_bytes(b'{"no": "newline at the end"}')
    assert _ranges(path, 4) == [(0, None)]


def test_processes_are_used_for_large_inputs_and_where_forking_is_safe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"{}\n" * 10)
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    assert _workers(path, None) == 1, "a small input"
    assert _workers(path, 3) == 3 and _workers(path, 100) == 8 and _workers(path, 0) == 1
    monkeypatch.setattr("fms_dgt.export.lines.MIN_PARALLEL_BYTES", 10)
    assert _workers(path, None) >= 1
    monkeypatch.setattr(threading, "active_count", lambda: 2)
    assert _workers(path, 3) == 1, "another thread is running: no fork"
