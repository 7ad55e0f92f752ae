"""The arrow-safe layout: the same keys and value types in every record, and back exactly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.canonical import TOOLS, conversation
from support.runs import read_records

from fms_dgt.core.tools.wire import Message, wire_formats
from fms_dgt.errors import WireError
from fms_dgt.export import convert_record, export_record, from_arrow_safe, to_arrow_safe


def _shape(value: Any) -> Any:
    """The Arrow-relevant shape of a value: keys of objects, item shapes of lists, scalar types."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return ["list", *sorted({json.dumps(_shape(v), sort_keys=True) for v in value})]
    return type(value).__name__ if value is not None else "null"


def _records(demo_run: Path, fmt: str) -> list[dict[str, Any]]:
    run = read_records(demo_run)
    plain = [convert_record(r, fmt=fmt) for r in run]
    # Records of one run share their metadata keys; these two differ in everything else.
    meta = {**run[0]["metadata"], "edges": [], "wired": [{"b": "x::y.z"}], "sample_seed": 2**64 - 1}
    plain.append(export_record(TOOLS, conversation(), meta, fmt=fmt))
    bare = [Message("user", "hi"), Message("assistant", "hello")]
    plain.append(export_record(TOOLS[1:], bare, {**meta, "tools": []}, fmt=fmt))
    return plain


@pytest.mark.parametrize("fmt", sorted(wire_formats()))
def test_arrow_safe_records_share_one_shape_and_give_back_what_was_written(demo_run: Path, fmt: str) -> None:
    plain = _records(demo_run, fmt)
    safe = [json.loads(json.dumps(to_arrow_safe(r))) for r in plain]
    assert [from_arrow_safe(s) for s in safe] == plain
    top = {json.dumps(sorted(s)) for s in safe}
    assert len(top) == 1, f"top-level keys differ between records: {top}"
    # Every list holds one kind of item and every object one set of keys, in all records together.
    for key in safe[0]:
        if key == "metadata":
            continue
        shapes = {json.dumps(_shape(s[key]), sort_keys=True) for s in safe}
        merged = _merge(shapes)
        assert merged, f"{fmt}: the shape of {key!r} varies between records: {shapes}"


def _merge(shapes: set[str]) -> bool:
    """True when the shapes can share one Arrow type (equal, or lists whose non-empty forms agree)."""
    decoded = [json.loads(s) for s in shapes]
    non_empty = {json.dumps(d, sort_keys=True) for d in decoded if d != ["list"]}
    if len(non_empty) <= 1:
        return True
    # Lists of one item kind each may differ only by being empty; objects recurse.
    if all(isinstance(d, dict) for d in decoded):
        keys = {json.dumps(sorted(d)) for d in decoded}
        return len(keys) == 1 and all(
            _merge({json.dumps(d[k], sort_keys=True) for d in decoded}) for k in decoded[0]
        )
    if all(isinstance(d, list) for d in decoded):
        items = {i for d in decoded for i in d[1:]}
        return len(items) <= 1
    return False


def test_metadata_maps_are_text_and_the_name_map_pairs(demo_run: Path) -> None:
    record = read_records(demo_run)[0]
    safe = to_arrow_safe(record)
    meta = safe["metadata"]
    assert meta["name_map"] == [[p, q] for p, q in record["metadata"]["name_map"].items()]
    assert set(meta["json_keys"]) >= {"edges", "wired", "sample_seed"}
    assert all(isinstance(meta[k], str) for k in meta["json_keys"])
    assert meta["tools"] == record["metadata"]["tools"] and meta["index"] == record["metadata"]["index"]
    assert safe["layout"] == "arrow-safe" and from_arrow_safe(safe) == record


def test_parquet_gives_back_every_record_of_every_format(demo_run: Path, tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    for fmt in sorted(wire_formats()):
        plain = _records(demo_run, fmt)
        pq.write_table(pa.Table.from_pylist([to_arrow_safe(r) for r in plain]), tmp_path / f"{fmt}.parquet")
        rows = pq.read_table(tmp_path / f"{fmt}.parquet").to_pylist()
        assert [from_arrow_safe(r) for r in rows] == plain, fmt


def test_a_record_that_is_not_arrow_safe_comes_back_unchanged_and_damage_is_an_error() -> None:
    record = export_record(TOOLS, conversation(), {}, fmt="hf")
    assert from_arrow_safe(record) == record
    safe = to_arrow_safe(record)
    safe["messages"][0] = {"role": "user"}
    with pytest.raises(WireError, match="expected JSON text"):
        from_arrow_safe(safe)
    with pytest.raises(WireError, match="cannot lay out a record of format 'csv'"):
        to_arrow_safe({**record, "metadata": {"format": "csv"}})
