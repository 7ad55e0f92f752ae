"""The lines of an export: each record line converted, and JSON Lines written, in parallel when large.

:func:`convert_line` is the reference path of one line (``json.loads``,
:func:`~fms_dgt.export.records.convert_record`); :func:`write_jsonl` writes every converted line,
taking the fast path (:class:`~fms_dgt.export.fast.FastConverter`) first. A large input is cut into
byte ranges at line ends, each range converted by a process of its own into a file of its own, and
the files joined in order: the output is the bytes one process writes, errors name the same line
and skipped records are counted under the same reasons in the same order. Processes are forked (no
re-import, nothing pickled but counts), so this happens only where forking is safe: a platform
that has it and a process with no other thread running; elsewhere one process converts everything.
"""

from __future__ import annotations

import gc
import json
import multiprocessing
import os
import shutil
import threading
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fms_dgt.core.tools._json import COMPACT
from fms_dgt.errors import ExportError, RejectedRecord, WireError
from fms_dgt.export.fast import FastConverter
from fms_dgt.export.records import convert_record

__all__ = ["MIN_PARALLEL_BYTES", "Target", "convert_line", "numbered", "write_jsonl"]

#: Below this input size one process converts everything: starting others would cost more.
MIN_PARALLEL_BYTES = 16 << 20
_MAX_WORKERS = 8
_BUFFER = 1 << 20
_RANGES_PER_WORKER = 2


@dataclass(slots=True, frozen=True, kw_only=True)
class Target:
    """What the lines are converted to: a format, a template family and a layout (None: plain)."""

    fmt: str
    family: str | None = None
    layout: str | None = None


@dataclass(slots=True, kw_only=True)
class _Part:
    """The outcome of one byte range: records written, skipped by reason, and the first error."""

    written: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    error: tuple[str, int] | None = None


def numbered(path: Path, start: int = 0, end: int | None = None) -> Iterator[tuple[int, bytes]]:
    """The non-blank lines of ``path`` from byte ``start`` (a line start) to ``end``, numbered from 1."""
    with path.open("rb") as handle:
        handle.seek(start)
        position = start
        for number, line in enumerate(handle, 1):
            if end is not None and position >= end:
                return
            position += len(line)
            if line.strip():
                yield number, line


def convert_line(line: bytes, path: Path, number: int, target: Target, skipped: Counter[str]) -> Any:
    """The reference path: one record line converted (None: skipped, its reason counted).

    Raises:
        ExportError: the line is damaged, or its record cannot be read or written (file:line).
    """
    record = _parse(line, path, number)
    try:
        return convert_record(record, fmt=target.fmt, family=target.family, layout=target.layout)
    except RejectedRecord as exc:
        skipped[str(exc)] += 1
    except WireError as exc:
        raise ExportError(str(exc), path=str(path), line=number) from None
    return None


def _parse(line: bytes, path: Path, number: int) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except UnicodeDecodeError:
        raise ExportError("damaged line: not UTF-8 text", path=str(path), line=number) from None
    except ValueError as exc:
        raise ExportError(f"damaged line: not JSON ({exc})", path=str(path), line=number) from None
    if not isinstance(record, dict):
        raise ExportError("damaged line: a record is a JSON object", path=str(path), line=number)
    return record


def write_jsonl(
    source: Path, out: Path, target: Target, skipped: Counter[str], *, workers: int | None = None
) -> int:
    """Convert every record of ``source`` and write them to ``out``; the number written.

    Args:
        source: the run's ``records.jsonl``.
        out: the file to write.
        target: what to convert to.
        skipped: counts records the target cannot express, by reason.
        workers: processes to use (None: one per CPU for an input of at least
            :data:`MIN_PARALLEL_BYTES`, else one).

    Raises:
        ExportError: a damaged line or a record that cannot be read or written (file:line).
    """
    count = _workers(source, workers)
    if count == 1:
        part = _convert_range(source, 0, None, out, target, path_in_errors=True)
    else:
        part = _in_parallel(source, count, out, target)
    skipped.update(part.skipped)
    return part.written


def _workers(source: Path, asked: int | None) -> int:
    if asked is not None:
        count = asked
    elif source.stat().st_size < MIN_PARALLEL_BYTES:
        return 1
    else:
        count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    forkable = "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1
    return max(1, min(count, _MAX_WORKERS)) if forkable else 1


def _ranges(source: Path, count: int) -> list[tuple[int, int | None]]:
    """``count`` byte ranges of about the same size, each starting at a line start."""
    size = source.stat().st_size
    starts = [0]
    with source.open("rb") as handle:
        for k in range(1, count):
            handle.seek(max(size * k // count - 1, starts[-1]))
            handle.readline()
            if handle.tell() >= size:
                break
            if handle.tell() > starts[-1]:
                starts.append(handle.tell())
    ends: list[int | None] = [*starts[1:], None]
    return list(zip(starts, ends, strict=True))


def _convert_range(
    source: Path, start: int, end: int | None, out: Path, target: Target, *, path_in_errors: bool = False
) -> _Part:
    part = _Part()
    with out.open("w", encoding="utf-8", buffering=_BUFFER) as handle:
        # A line at a time: joining lines into large strings costs more (fresh memory pages).
        for text in _texts(source, start, end, target, part, path_in_errors):
            handle.write(text + "\n")
    return part


def _texts(
    source: Path, start: int, end: int | None, target: Target, part: _Part, path_in_errors: bool
) -> Iterator[str]:
    """Each converted record of the range as a line of JSON text; an error ends the range."""
    fast = FastConverter(target.fmt, family=target.family, layout=target.layout)
    for number, line in numbered(source, start, end):
        text = fast.convert(line)
        if text is None:
            try:
                record = convert_line(line, source, number, target, part.skipped)
            except ExportError as exc:
                if path_in_errors:
                    raise
                part.error = (exc.reason, number)
                return
            if record is None:
                continue
            text = COMPACT(record)
        part.written += 1
        yield text


def _in_parallel(source: Path, workers: int, out: Path, target: Target) -> _Part:
    # More ranges than processes: a process slowed down by other work on the machine takes fewer.
    ranges = _ranges(source, workers * _RANGES_PER_WORKER)
    files = [out, *(out.with_name(f"{out.name}.{k}") for k in range(1, len(ranges)))]
    try:
        context = multiprocessing.get_context("fork")
        # gc.freeze: what a worker inherits is never collected there, so it is neither walked nor copied.
        with ProcessPoolExecutor(
            min(workers, len(ranges)), mp_context=context, initializer=gc.freeze
        ) as pool:
            futures = [
                pool.submit(_convert_range, source, start, end, file, target)
                for (start, end), file in zip(ranges, files, strict=True)
            ]
            parts = [f.result() for f in futures]
        total = _joined(source, ranges, parts)
        _append(out, files[1:])
    finally:
        for file in files[1:]:
            file.unlink(missing_ok=True)
    return total


def _joined(source: Path, ranges: list[tuple[int, int | None]], parts: list[_Part]) -> _Part:
    total = _Part()
    for (start, _), part in zip(ranges, parts, strict=True):
        if part.error is not None:
            reason, number = part.error
            raise ExportError(reason, path=str(source), line=_lines_before(source, start) + number)
        total.written += part.written
        total.skipped.update(part.skipped)
    return total


def _lines_before(source: Path, start: int) -> int:
    """The number of lines before byte ``start`` (only counted when an error needs it)."""
    count = 0
    with source.open("rb") as handle:
        while handle.tell() < start:
            count += handle.read(min(_BUFFER, start - handle.tell())).count(b"\n")
    return count


def _append(out: Path, files: list[Path]) -> None:
    with out.open("ab") as handle:
        for file in files:
            with file.open("rb") as part:
                shutil.copyfileobj(part, handle, _BUFFER)
