"""``fms-dgt export``: a run's output folder in another format, as JSON Lines or Parquet, with a card.

Reads ``OUT_DIR/records.jsonl`` (each record's ``metadata.format`` says its layout), converts every
record (:func:`~fms_dgt.export.records.convert_record`) and writes ``DIR/records.jsonl`` or
``DIR/data/train-00000-of-0000N.parquet`` plus ``DIR/README.md``, a dataset card that
``datasets.load_dataset(DIR)`` and the Hub read. Parquet is written arrow-safe unless another layout
is asked for. A record the target cannot express (e.g. a conversation that does not alternate, for
``sharegpt``) is skipped and counted with its reason; a damaged line, an unknown format or a record
of a format that cannot be read back is an error naming file and line. The source folder is never
written to.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fms_dgt.errors import ExportError
from fms_dgt.export.card import dataset_card
from fms_dgt.export.fast import FastConverter
from fms_dgt.export.layout import ARROW_SAFE
from fms_dgt.export.lines import Target, convert_line, numbered, write_jsonl

__all__ = ["ROWS_PER_FILE", "ExportSummary", "export_folder"]

ROWS_PER_FILE = 100_000
_TARGETS = ("jsonl", "parquet")


@dataclass(slots=True, kw_only=True)
class ExportSummary:
    """What an export wrote.

    Attributes:
        written: records written.
        skipped: records the target could not express, by reason.
        files: the data files written (relative to the destination).
        destination: the folder written.
    """

    written: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    files: list[str] = field(default_factory=list)
    destination: Path = Path()


def export_folder(
    source: str | Path,
    *,
    fmt: str,
    to: str = "jsonl",
    destination: str | Path | None = None,
    family: str | None = None,
    layout: str | None = None,
    license_id: str = "other",
    overwrite: bool = False,
    workers: int | None = None,
) -> ExportSummary:
    """Convert the records of a run's folder and write them, with a dataset card.

    Args:
        source: the run's output folder (holding ``records.jsonl``).
        fmt: the target wire format.
        to: ``jsonl`` or ``parquet``.
        destination: the folder to write (default: ``SOURCE/export-FMT[-FAMILY]``).
        family: a chat-template family (``hf`` only).
        layout: ``arrow-safe`` or ``plain`` (default: plain for JSON Lines, arrow-safe for Parquet).
        license_id: the card's ``license`` (an SPDX-style id the Hub knows, or ``other``).
        overwrite: replace earlier output in ``destination``.
        workers: processes converting a JSON Lines export (default: one per CPU for a large input,
            see :func:`~fms_dgt.export.lines.write_jsonl`).

    Raises:
        ExportError: missing folder, damaged line, unknown format, unreadable record (file:line),
            a destination with earlier output, or a missing optional extra.
    """
    records_path = _records_path(Path(source))
    if to not in _TARGETS:
        raise ExportError(f"unknown target {to!r}: use {' or '.join(_TARGETS)}.")
    chosen = layout or (ARROW_SAFE if to == "parquet" else "plain")
    dest = (
        Path(destination) if destination else Path(source) / f"export-{fmt}{'-' + family if family else ''}"
    )
    _prepare(dest, Path(source), overwrite)
    summary = ExportSummary(destination=dest)
    target = Target(fmt=fmt, family=family, layout=None if chosen == "plain" else chosen)
    if to == "jsonl":
        summary.files = [_write_jsonl(dest, records_path, target, summary, workers)]
    else:
        summary.files = _write_parquet(dest, list(_converted(records_path, target, summary)), summary)
    data_files = "records.jsonl" if to == "jsonl" else "data/train-*.parquet"
    card = dataset_card(
        count=summary.written,
        fmt=fmt,
        family=family,
        layout=chosen,
        data_files=data_files,
        license_id=license_id,
        manifest=_side_file(Path(source) / "manifest.json"),
        summary=_side_file(Path(source) / "summary.json"),
    )
    (dest / "README.md").write_text(card, encoding="utf-8")
    return summary


def _records_path(source: Path) -> Path:
    if not source.is_dir():
        raise ExportError("no such output folder: give the --out folder of a run", path=str(source))
    path = source / "records.jsonl"
    if not path.is_file():
        raise ExportError("no records.jsonl in this folder: give the --out folder of a run", path=str(source))
    return path


def _prepare(dest: Path, source: Path, overwrite: bool) -> None:
    if dest.resolve() == source.resolve():
        raise ExportError(
            "the destination is the run's own folder: an export never rewrites finished output. Give --out "
            "another folder",
            path=str(dest),
        )
    earlier = [p for p in (dest / "records.jsonl", dest / "data", dest / "README.md") if p.exists()]
    if earlier and not overwrite:
        raise ExportError("earlier export output is there: pass --overwrite to replace it", path=str(dest))
    for path in earlier:
        if path.is_dir():
            for shard in path.glob("train-*.parquet"):
                shard.unlink()
        else:
            path.unlink()
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(f"cannot create the folder: {exc.strerror or exc}", path=str(dest)) from None


def _converted(path: Path, target: Target, summary: ExportSummary) -> Iterator[dict[str, Any]]:
    fast = FastConverter(target.fmt, family=target.family, layout=target.layout)
    for number, line in numbered(path):
        text = fast.convert(line)
        # The fast path's text read back is the reference path's record, a few times sooner.
        record = (
            json.loads(text)
            if text is not None
            else convert_line(line, path, number, target, summary.skipped)
        )
        if record is not None:
            yield record


def _write_jsonl(
    dest: Path, source: Path, target: Target, summary: ExportSummary, workers: int | None
) -> str:
    target_file = dest / "records.jsonl"
    partial = dest / ".records.jsonl.partial"
    # Written aside and renamed at the end: a failed export leaves no half file under the real name.
    summary.written = write_jsonl(source, partial, target, summary.skipped, workers=workers)
    partial.replace(target_file)
    return target_file.name


def _write_parquet(dest: Path, rows: list[dict[str, Any]], summary: ExportSummary) -> list[str]:
    pa, pq = _pyarrow()
    shards = max(1, math.ceil(len(rows) / ROWS_PER_FILE))
    (dest / "data").mkdir(exist_ok=True)
    names = []
    for n in range(shards):
        chunk = rows[n * ROWS_PER_FILE : (n + 1) * ROWS_PER_FILE]
        name = f"data/train-{n:05d}-of-{shards:05d}.parquet"
        try:
            pq.write_table(pa.Table.from_pylist(chunk), dest / name)
        except (pa.ArrowException, ValueError, TypeError) as exc:
            raise ExportError(
                f"cannot write Parquet: {exc}. Records whose values change shape need the arrow-safe layout "
                "(the default for Parquet)",
                path=str(dest / name),
            ) from None
        names.append(name)
    summary.written = len(rows)
    return names


def _pyarrow() -> tuple[Any, Any]:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError as exc:
        raise ExportError(
            "missing optional dependency for --to parquet: pyarrow is not installed. Install it with "
            "pip install 'fms_dgt[parquet]'"
        ) from exc
    return pyarrow, pyarrow.parquet


def _side_file(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ExportError(f"damaged file: not JSON ({exc})", path=str(path)) from None
    return value if isinstance(value, dict) else None
