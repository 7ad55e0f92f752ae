"""The fast path gives the reference path's bytes, or leaves the record to it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.lines import edited, left_to_reference, refused, written_otherwise

from fms_dgt.core.tools._json import COMPACT
from fms_dgt.core.tools.wire import wire_formats
from fms_dgt.errors import DGTError
from fms_dgt.export import convert_record
from fms_dgt.export.fast import FastConverter

FORMATS = sorted(wire_formats())


def _reference(line: bytes, fmt: str, layout: str | None) -> str | None:
    """What the reference path writes for a line (None: it refuses the line)."""
    try:
        record = json.loads(line)
        return COMPACT(convert_record(record, fmt=fmt, layout=layout)) if isinstance(record, dict) else None
    except (DGTError, ValueError):
        return None


def _run_lines(demo_run: Path, bfcl_run: Path) -> list[bytes]:
    return [
        line for run in (demo_run, bfcl_run) for line in (run / "records.jsonl").read_bytes().splitlines()
    ]


@pytest.mark.parametrize("layout", [None, "arrow-safe"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_the_fast_path_writes_the_reference_bytes_for_every_line_it_takes(
    demo_run: Path, bfcl_run: Path, fmt: str, layout: str | None
) -> None:
    common = _run_lines(demo_run, bfcl_run) + written_otherwise() + edited()
    lines = common + left_to_reference() + refused()
    # Twice, and backwards: what an export learnt from earlier lines must not change a later one.
    for order in (lines, lines[::-1]):
        fast = FastConverter(fmt, layout=layout)
        for line in order * 2:
            expected, got = _reference(line, fmt, layout), fast.convert(line)
            assert got is None or got == expected, line[:120]
            if line in common and expected is not None:
                assert got is not None, (
                    f"the fast path left a common line to the reference path: {line[:120]!r}"
                )


@pytest.mark.parametrize("fmt", FORMATS)
def test_lines_the_reference_path_refuses_are_left_to_it(fmt: str) -> None:
    fast = FastConverter(fmt)
    for line in refused():
        assert _reference(line, fmt, None) is None, line[:120]
        assert fast.convert(line) is None


def test_left_to_reference_and_families_are_left_to_the_reference_path() -> None:
    for line in left_to_reference():
        assert _reference(line, "hf", None) is not None
        assert FastConverter("hf").convert(line) is None
    line = written_otherwise()[0]
    assert FastConverter("hf", family="qwen").convert(line) is None
    assert FastConverter("hf", layout="columnar").convert(line) is None
    assert FastConverter("yaml").convert(line) is None
    assert FastConverter("hf").convert(line.decode()) == _reference(line, "hf", None)


def test_a_tool_is_read_once_and_found_again_by_its_text(demo_run: Path) -> None:
    lines = (demo_run / "records.jsonl").read_bytes().splitlines()
    fast = FastConverter("openai")
    for line in lines:
        assert fast.convert(line) is not None
    offered = {json.dumps(t, sort_keys=True) for line in lines for t in json.loads(line)["tools"]}
    known = [tool for bucket in fast._known.values() for tool in bucket]
    assert len(known) == len(offered), "each distinct tool is read once"
    assert len({id(t) for t in known}) == len(known)
