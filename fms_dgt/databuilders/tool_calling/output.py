"""The output folder of a run: one run at a time, records appended, never rewritten in place.

:class:`OutputFolder` owns ``records.jsonl``, ``rejects.jsonl``, ``summary.json`` and ``manifest.json``
of one folder:

* an exclusive lock (``.fms-dgt.lock``, ``flock``) is held for the whole run; a second run on the
  same folder fails at once with a message naming the holder (pid, host, start time);
* ``overwrite`` removes the previous run's files (summary included) before anything is written;
* the run manifest (:mod:`~fms_dgt.databuilders.tool_calling.manifest`) is written when the run
  starts on an empty folder; ``resume`` on a folder whose manifest differs (another config, seed,
  format or version) is an error listing every difference;
* ``resume`` reads what is there: a line cut by a crash is dropped by truncating only that tail
  (finished records are never rewritten), a damaged line (garbage, NUL bytes, JSON without an
  index, invalid UTF-8) is an error naming file and line and how to repair it;
* records are appended and flushed one at a time; a write that fails (full disk, read-only folder)
  is an :class:`~fms_dgt.errors.OutputError` saying so; the summary is replaced atomically;
* every record, reject and summary passes through the process's redactor (:mod:`fms_dgt.secrets`)
  on its way out.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from fms_dgt.core.tools._json import COMPACT_SORTED
from fms_dgt.databuilders.tool_calling.manifest import MANIFEST, differences
from fms_dgt.errors import OutputError
from fms_dgt.export.records import shared_text
from fms_dgt.secrets import redact, redact_value

__all__ = ["LOCK", "MANIFEST", "RECORDS", "REJECTS", "SUMMARY", "OutputFolder", "line_of"]

RECORDS = "records.jsonl"
REJECTS = "rejects.jsonl"
SUMMARY = "summary.json"
LOCK = ".fms-dgt.lock"


def line_of(item: Mapping[str, Any]) -> str:
    """The line ``item`` is written as: secrets redacted, keys sorted, compact, newline-ended.

    The last exit of every record: no configured secret leaves in it, whatever echoed one.
    """
    return _encoded(redact_value(item)) + "\n"


def _encoded(item: Any) -> str:
    """``COMPACT_SORTED(item)``, with the text of the tool definitions the exporter shares between
    records made once (a tool's text is 40% of a line)."""
    if type(item) is not dict or type(item.get("tools")) is not list or any(type(k) is not str for k in item):
        return COMPACT_SORTED(item)
    parts = [
        f"{COMPACT_SORTED(key)}:{_tools_text(item[key]) if key == 'tools' else COMPACT_SORTED(item[key])}"
        for key in sorted(item)
    ]
    return "{" + ",".join(parts) + "}"


def _tools_text(tools: list[Any]) -> str:
    return "[" + ",".join(shared_text(tool) or COMPACT_SORTED(tool) for tool in tools) + "]"


class OutputFolder:
    """One run's output folder (see the module docstring).

    Args:
        path: the folder (created when missing).
        resume: continue the run whose records are there.
        overwrite: replace what is there.
        manifest: this run's manifest (written to a fresh folder, compared on resume); None to
            keep none.
    """

    def __init__(
        self,
        path: Path,
        *,
        resume: bool = False,
        overwrite: bool = False,
        manifest: Mapping[str, Any] | None = None,
    ) -> None:
        self.path = path
        self.resume = resume
        self.overwrite = overwrite
        self.manifest = manifest
        self._lock: IO[str] | None = None
        self._records: IO[str] | None = None
        self._rejects: IO[str] | None = None
        self.dropped_tail = 0

    # ------------------------------------------------------------------ opening

    def open(self) -> set[int]:
        """Lock and prepare the folder; returns the indexes already written (resume).

        Raises:
            OutputError: the folder cannot be made or written, another run holds it, earlier
                output exists without ``resume``/``overwrite``, or a line is damaged.
        """
        self._make()
        self._acquire()
        try:
            done = self._prepare()
            self._records = self._append_handle(RECORDS)
            self._rejects = self._append_handle(REJECTS)
        except BaseException:
            self.close()
            raise
        return done

    def _make(self) -> None:
        if self.path.exists() and not self.path.is_dir():
            raise OutputError(f"output {self.path} is a file, not a folder: give --out a folder")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"cannot create the output folder {self.path}: {exc.strerror or exc}") from exc

    def _acquire(self) -> None:
        import fcntl

        lock_path = self.path / LOCK
        try:
            handle = lock_path.open("a+", encoding="utf-8")
        except OSError as exc:
            raise OutputError(
                f"cannot write to the output folder {self.path}: {exc.strerror or exc}. Check its "
                "permissions or choose another --out"
            ) from exc
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise OutputError(
                f"output folder {self.path} is in use by {holder}: one run at a time writes a folder. "
                "Wait for that run to finish, or give this one another --out"
            ) from None
        handle.seek(0)
        handle.truncate()
        started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        handle.write(f"run pid {os.getpid()} on host {socket.gethostname()} since {started}\n")
        handle.flush()
        self._lock = handle

    def _prepare(self) -> set[int]:
        paths = [self.path / RECORDS, self.path / REJECTS]
        existing = [p for p in paths if p.exists() and p.stat().st_size]
        if existing and not (self.resume or self.overwrite):
            raise OutputError(
                f"output exists in {self.path}: pass --resume to continue that run or --overwrite to "
                "replace it"
            )
        if self.overwrite:
            for name in (SUMMARY, RECORDS, REJECTS, MANIFEST):
                _remove(self.path / name)
            existing = []
        if existing:
            self._check_manifest()
        elif self.manifest is not None:
            self._write_json(MANIFEST, self.manifest)
        done: set[int] = set()
        for path in paths:
            done |= {index for _, index, _ in self._scan(path)}
        return done

    def _check_manifest(self) -> None:
        """A resumed run must be the run that wrote the folder."""
        if self.manifest is None:
            return
        path = self.path / MANIFEST
        try:
            before = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise OutputError(
                f"cannot resume in {self.path}: it has records but no {MANIFEST}, so nothing says which "
                "run wrote them. Start again with --overwrite (or another --out)"
            ) from None
        except (OSError, ValueError) as exc:
            raise OutputError(f"cannot read {path}: {exc}. Start again with --overwrite") from exc
        changed = differences(before if isinstance(before, Mapping) else {}, self.manifest)
        if changed:
            raise OutputError(
                f"cannot resume in {self.path}: this run differs from the one that wrote it "
                f"({'; '.join(changed)}). Resume with the same config and options, or start again "
                "with --overwrite (or another --out)"
            )

    def _append_handle(self, name: str) -> IO[str]:
        try:
            return (self.path / name).open("a", encoding="utf-8")
        except OSError as exc:
            raise OutputError(f"cannot write {self.path / name}: {exc.strerror or exc}") from exc

    # ------------------------------------------------------------------ reading back

    def records(self) -> Iterator[dict[str, Any]]:
        """Every complete record already in ``records.jsonl`` (after :meth:`open`)."""
        for _, _, item in self._scan(self.path / RECORDS, truncate=False):
            yield item

    def rejects(self) -> Iterator[dict[str, Any]]:
        """Every complete reject already in ``rejects.jsonl`` (after :meth:`open`)."""
        for _, _, item in self._scan(self.path / REJECTS, truncate=False):
            yield item

    def tally(self, add_record: Callable[[Any], None], add_reject: Callable[[Any], None]) -> None:
        """Pass every complete record and reject already written to ``add_record`` and
        ``add_reject`` (a run's summary counting them on ``--resume`` or ``fms-dgt inspect``).

        The lines are JSON with an index but may have been edited or written by other code: a line
        whose layout the counting cannot read is an :class:`OutputError` naming it, not a crash.
        """
        for name, add in ((RECORDS, add_record), (REJECTS, add_reject)):
            for number, _, item in self._scan(self.path / name, truncate=False):
                try:
                    add(item)
                except (LookupError, TypeError, AttributeError, ValueError, RecursionError) as exc:
                    why = (
                        "nested too deeply"
                        if isinstance(exc, RecursionError)
                        else f"{type(exc).__name__}: {exc}"
                    )
                    raise OutputError(
                        f"unreadable line {number} in {self.path / name}: its layout cannot be counted "
                        f"({why}). {_fix(self.path / name, number)}"
                    ) from None

    def _scan(self, path: Path, *, truncate: bool = True) -> Iterator[tuple[int, int, dict[str, Any]]]:
        if not path.exists():
            return
        if not path.is_file():
            raise OutputError(
                f"{path} is not a regular file (a device, pipe or folder): a run writes plain files. "
                "Remove it or give another --out"
            )
        data = path.read_bytes()
        good = _complete_prefix(data)
        if truncate and good < len(data):
            # A crash mid-write leaves a cut last line: drop that tail only, in place.
            os.truncate(path, good)
            self.dropped_tail += len(data) - good
        for number, line in enumerate(data[:good].split(b"\n")[:-1], 1):
            if line.strip():
                yield (number, *_parse_line(path, number, line))

    # ------------------------------------------------------------------ writing

    def add_record(self, record: Mapping[str, Any]) -> None:
        """Append one record and flush it."""
        self._write(self._records, RECORDS, line_of(record))

    def add_record_line(self, line: str) -> None:
        """Append one record already made a line by :func:`line_of` (in a Ray worker) and flush it.

        Secrets are redacted again here: the line was made in another process, and a secret
        registered only in this one must not leave either.
        """
        self._write(self._records, RECORDS, redact(line))

    def add_reject(self, reject: Mapping[str, Any]) -> None:
        """Append one reject and flush it."""
        self._write(self._rejects, REJECTS, line_of(reject))

    def _write(self, handle: IO[str] | None, name: str, line: str) -> None:
        if handle is None:
            raise OutputError(f"output folder {self.path} is not open: call open() first")
        try:
            handle.write(line)
            handle.flush()
        except OSError as exc:
            raise OutputError(
                f"cannot write {self.path / name}: {exc.strerror or exc}. Every record before this one "
                "is complete; free space (or fix the folder) and run again with --resume"
            ) from exc

    def write_summary(self, summary: Mapping[str, Any]) -> None:
        """Replace ``summary.json`` atomically (a new file renamed over the old one)."""
        self._write_json(SUMMARY, summary)

    def _write_json(self, name: str, data: Mapping[str, Any]) -> None:
        path = self.path / name
        temp = path.with_name(f".{name}.tmp")
        try:
            temp.write_text(json.dumps(redact_value(data), indent=2, sort_keys=True) + "\n", encoding="utf-8")
            temp.replace(path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                temp.unlink()
            raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from exc

    def close(self) -> None:
        """Close the files and release the lock. Idempotent."""
        for handle in (self._records, self._rejects, self._lock):
            if handle is not None:
                with contextlib.suppress(OSError):
                    handle.close()
        self._records = self._rejects = self._lock = None


def _complete_prefix(data: bytes) -> int:
    """Bytes up to the last complete line, with NUL padding a crash left at the end dropped."""
    end = data.rfind(b"\n") + 1
    while end > 0:
        start = data.rfind(b"\n", 0, end - 1) + 1
        if data[start : end - 1].strip(b"\0 \t\r"):
            return end
        if b"\0" not in data[start:end]:
            return end
        end = start  # a line of NUL bytes at the end: unwritten blocks after a crash
    return end


def _fix(path: Path, number: int) -> str:
    return (
        f"Remove or repair that line (e.g. sed -i '{number}d' {path}) and resume, or start again "
        "with --overwrite"
    )


def _parse_line(path: Path, number: int, line: bytes) -> tuple[int, dict[str, Any]]:
    fix = _fix(path, number)
    try:
        item = json.loads(line.decode("utf-8"))
        index = item["metadata"]["index"] if "metadata" in item else item["index"]
        if isinstance(index, bool) or not isinstance(index, int):
            raise TypeError(f"index {index!r} is not an integer")
    except UnicodeDecodeError:
        raise OutputError(f"damaged line {number} in {path}: not UTF-8 text. {fix}") from None
    except json.JSONDecodeError as exc:
        raise OutputError(f"damaged line {number} in {path}: not JSON ({exc.msg}). {fix}") from None
    except RecursionError:
        raise OutputError(
            f"damaged line {number} in {path}: JSON nested deeper than the reader goes. {fix}"
        ) from None
    except (KeyError, TypeError) as exc:
        raise OutputError(f"damaged line {number} in {path}: no record index ({exc}). {fix}") from None
    return index, item


def _remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot remove {path} for --overwrite: {exc.strerror or exc}") from exc
