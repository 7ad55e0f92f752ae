"""On-disk caches for enrichments: content-addressed vectors and whole-artifact states.

Layout under the cache directory::

    <cache_dir>/<enrichment>/<settings hash>/vectors/shard-<hash>.npz   keys + float32 rows
    <cache_dir>/<enrichment>/<settings hash>/states/<pool hash>.npz       a complete artifact state
    <cache_dir>/<enrichment>/<settings hash>/memo/memo-<hash>.pack        per-namespace rows (memo)

The settings hash covers every option that changes the result (encoder, model, dimension...), so
two configurations never read each other's entries. Vector keys are hashes of exactly the text an
encoder sees. Every file is written to a temporary name in the same directory and renamed with
``os.replace``, which is atomic: several processes may fill the same cache at once, and a reader
sees a complete file or none. Shards are content-addressed, so two processes that compute the same
vectors write the same name and one rename wins harmlessly; readers skip files that vanish under
them (compaction) and simply recompute what they could not read.

The *memo* keeps what an enrichment derived from each namespace of recent pools, under the
namespace's content key (:meth:`ToolRegistry.namespace_keys`). A later run takes
the rows of every namespace whose key it finds and does per-tool work only for the others, so
adding a namespace to a large pool costs about as much as the new namespace.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import mmap
import os
import tempfile
import zipfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from fms_dgt.core.tools.enrichments.base import stable_hash

if TYPE_CHECKING:
    from fms_dgt.core.tools.data_objects import Tool
    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = [
    "MemoStore",
    "StateStore",
    "VectorStore",
    "atomic_savez",
    "group_slice",
    "memo_index",
    "memo_positions",
    "per_tool_shard",
    "pool_groups",
]

_MAX_SHARDS = 32


def atomic_savez(path: Path, arrays: Mapping[str, npt.NDArray[np.generic]]) -> None:
    """Write ``arrays`` to ``path`` (``.npz``) through a temporary file and an atomic rename.

    There is no disk flush: every file here is a cache, and a file torn by a power cut fails its
    zip checksum or the reader's shape checks and is recomputed, never used.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            np.savez(handle, **arrays)  # type: ignore[arg-type]
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _read_npz(path: Path) -> dict[str, npt.NDArray[np.generic]] | None:
    """The arrays of an ``.npz`` file, or None when it vanished or cannot be read."""
    try:
        with np.load(path, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError):
        return None


def _fill(
    data: Mapping[str, npt.NDArray[np.generic]],
    wanted: npt.NDArray[np.bytes_],
    found: npt.NDArray[np.bool_],
    rows: npt.NDArray[np.float32] | None,
) -> npt.NDArray[np.float32] | None:
    """Copy the rows of one shard whose keys are wanted (a sorted join, no per-key Python loop).

    ``data`` may be an open ``.npz``: its vectors are read only when a key is found.
    """
    stored: npt.NDArray[np.bytes_] = np.asarray(data["keys"], dtype="S")  # older shards hold str
    ascending = len(stored) < 2 or bool((stored[:-1] <= stored[1:]).all())
    order = np.arange(len(stored)) if ascending else np.argsort(stored)
    place = np.searchsorted(stored, wanted) if ascending else np.searchsorted(stored, wanted, sorter=order)
    place = np.minimum(place, max(len(stored) - 1, 0))
    hit = (~found) & (stored[order[place]] == wanted) if len(stored) else np.zeros_like(found)
    if not hit.any():
        return rows
    vectors = data["vectors"].astype(np.float32, copy=False)
    if rows is None:
        rows = np.zeros((len(wanted), vectors.shape[1]), dtype=np.float32)
    rows[hit] = vectors[order[place[hit]]]
    found |= hit
    return rows


def _sorted_shard(
    keys: Sequence[str], vectors: npt.NDArray[np.float32]
) -> dict[str, npt.NDArray[np.generic]]:
    """A shard with its keys (ASCII, stored as bytes) in ascending order, so lookups need no sort."""
    stored = np.asarray(keys, dtype="S")
    order = np.argsort(stored, kind="stable")
    return {"keys": stored[order], "vectors": vectors[order]}


class VectorStore:
    """Float32 vectors by string key, stored as append-only shards.

    Args:
        directory: the ``vectors`` directory of one enrichment setting.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _shards(self) -> list[Path]:
        if not self.directory.is_dir():
            return []
        return sorted(self.directory.glob("shard-*.npz"))

    def load(self, keys: Sequence[str]) -> tuple[npt.NDArray[np.float32] | None, list[int]]:
        """Look ``keys`` up.

        Returns:
            ``(rows, missing)``: ``rows`` has one row per key (zeros where missing) or is None when
            nothing was found; ``missing`` lists the positions of keys not in the cache.
        """
        wanted = np.asarray(keys, dtype="S")
        found = np.zeros(len(keys), dtype=bool)
        rows: npt.NDArray[np.float32] | None = None
        for shard in self._shards():
            try:
                with np.load(shard, allow_pickle=False) as data:
                    if "keys" in data.files and "vectors" in data.files:
                        rows = _fill(data, wanted, found, rows)
            except (OSError, ValueError, zipfile.BadZipFile, EOFError):
                continue  # vanished (compaction) or torn: what it held is recomputed
            if found.all():
                break
        return rows, np.flatnonzero(~found).tolist()

    def store(self, keys: Sequence[str], vectors: npt.NDArray[np.float32]) -> None:
        """Add vectors (one row per key) as a new shard, compacting when shards pile up."""
        if not keys:
            return
        name = f"shard-{stable_hash(sorted(keys))}.npz"
        atomic_savez(self.directory / name, _sorted_shard(list(keys), vectors))
        shards = self._shards()
        if len(shards) > _MAX_SHARDS:
            self._compact(shards)

    def _compact(self, shards: list[Path]) -> None:
        keys: list[str] = []
        parts: list[npt.NDArray[np.float32]] = []
        seen: set[str] = set()
        for shard in shards:
            data = _read_npz(shard)
            if data is None:
                continue
            names = [k.decode() if isinstance(k, bytes) else str(k) for k in data["keys"].tolist()]
            fresh = [i for i, k in enumerate(names) if k not in seen]
            seen.update(names[i] for i in fresh)
            keys.extend(names[i] for i in fresh)
            parts.append(data["vectors"][fresh].astype(np.float32, copy=False))
        if not parts:
            return
        target = self.directory / f"shard-{stable_hash(sorted(keys))}.npz"
        atomic_savez(target, _sorted_shard(keys, np.concatenate(parts)))
        for shard in shards:
            if shard != target:
                with contextlib.suppress(OSError):
                    shard.unlink()

    def clear(self) -> None:
        """Remove every shard (``force: true``)."""
        for shard in self._shards():
            with contextlib.suppress(OSError):
                shard.unlink()


class StateStore:
    """Complete artifact states by key, plus "the most recent state" for incremental updates.

    Args:
        directory: the ``states`` directory of one enrichment setting.
        keep: how many states to keep (older ones are deleted after a write).
    """

    def __init__(self, directory: Path, keep: int = 4) -> None:
        self.directory = directory
        self.keep = keep

    def get(self, key: str) -> dict[str, npt.NDArray[np.generic]] | None:
        """The state stored under ``key``, or None."""
        return _read_npz(self.directory / f"{key}.npz")

    def latest(self) -> dict[str, npt.NDArray[np.generic]] | None:
        """The most recently written state, or None."""
        for path in self._by_age():
            data = _read_npz(path)
            if data is not None:
                return data
        return None

    def put(self, key: str, arrays: Mapping[str, npt.NDArray[np.generic]]) -> None:
        """Store a state and drop the oldest beyond :attr:`keep`."""
        atomic_savez(self.directory / f"{key}.npz", arrays)
        for old in self._by_age()[self.keep :]:
            with contextlib.suppress(OSError):
                old.unlink()

    def _by_age(self) -> list[Path]:
        if not self.directory.is_dir():
            return []
        stamped = []
        for path in self.directory.glob("*.npz"):
            with contextlib.suppress(OSError):
                stamped.append((path.stat().st_mtime_ns, path.name, path))
        return [p for _, _, p in sorted(stamped, reverse=True)]

    def clear(self) -> None:
        """Remove every state (``force: true``)."""
        for path in self._by_age():
            with contextlib.suppress(OSError):
                path.unlink()


def pool_groups(
    registry: ToolRegistry, tools: Sequence[Tool]
) -> list[tuple[str | None, npt.NDArray[np.int64]]]:
    """The namespaces of ``tools`` (in order of first appearance) as ``(content key, rows)``.

    ``rows`` are the positions of the namespace's tools in ``tools``, ascending; the key is None
    when the namespace cannot be keyed (its rows are then always recomputed).
    """
    keys = registry.namespace_keys()
    spaces = [t.namespace for t in tools]
    runs = [(ns, len(list(run))) for ns, run in itertools.groupby(spaces)]
    if len(runs) == len({ns for ns, _ in runs}):
        # Each namespace is one contiguous run (the usual case): ranges, no per-tool bucketing.
        groups = []
        start = 0
        for ns, size in runs:
            groups.append((keys.get(ns), np.arange(start, start + size, dtype=np.int64)))
            start += size
        return groups
    rows: dict[str, list[int]] = {}
    for position, ns in enumerate(spaces):
        bucket = rows.get(ns)
        if bucket is None:
            rows[ns] = [position]
        else:
            bucket.append(position)
    return [(keys.get(ns), np.asarray(r, dtype=np.int64)) for ns, r in rows.items()]


class MemoStore:
    """The memo of one enrichment setting: arrays derived per namespace, keyed by content key.

    The memo is a set of shards, each holding ``keys`` (one content key per namespace) and the
    arrays derived from those namespaces. A run that saw new namespaces adds a small shard with
    just those (:meth:`add`), or rewrites everything into one shard (:meth:`replace`) when shards
    pile up. A shard is one pack file (``memo-<hash>.pack``, see :func:`_write_arrays`) flushed
    to disk and then renamed into place, so it is complete or absent; readers map it into memory
    instead of reading and checksumming it, which keeps a warm run's reads cheap.

    Args:
        directory: the ``memo`` directory of one enrichment setting.
        required: array names a usable shard must hold (``keys`` is always required).
    """

    max_shards = 8

    def __init__(self, directory: Path, required: Sequence[str]) -> None:
        self.directory = directory
        self.required = ("keys", *required)

    def _shards(self) -> list[Path]:
        """Shard files, newest first."""
        if not self.directory.is_dir():
            return []
        stamped = []
        for path in self.directory.glob("memo-*.pack"):
            with contextlib.suppress(OSError):
                stamped.append((path.stat().st_mtime_ns, path.name, path))
        return [p for _, _, p in sorted(stamped, reverse=True)]

    def read(self) -> list[dict[str, npt.NDArray[np.generic]]]:
        """The readable shards that hold every required array, newest first."""
        return [arrays for _, arrays in self.read_named()]

    def read_named(self) -> list[tuple[str, dict[str, npt.NDArray[np.generic]]]]:
        """Like :meth:`read`, with each shard's file name."""
        found = []
        for path in self._shards():
            data = _read_arrays(path, self.required)
            if data is not None:
                found.append((path.name, data))
        return found

    def add(self, arrays: Mapping[str, npt.NDArray[np.generic]]) -> Path:
        """Write one more shard; returns its path."""
        target = self.directory / f"memo-{stable_hash(np.asarray(arrays['keys']).tolist())}.pack"
        _write_arrays(target, arrays)
        return target

    def replace(self, arrays: Mapping[str, npt.NDArray[np.generic]]) -> None:
        """Write ``arrays`` as the only shard."""
        old = self._shards()
        target = self.add(arrays)
        for path in old:
            if path != target:
                with contextlib.suppress(OSError):
                    path.unlink()

    def crowded(self) -> bool:
        """True when the next write should :meth:`replace` rather than :meth:`add`."""
        return len(self._shards()) >= self.max_shards

    def remember(
        self,
        everything: Sequence[tuple[str, npt.NDArray[np.int64]]],
        new: Sequence[tuple[str, npt.NDArray[np.int64]]],
        build: Callable[[Sequence[tuple[str, npt.NDArray[np.int64]]]], Mapping[str, npt.NDArray[np.generic]]],
        *,
        rewrite: bool,
    ) -> None:
        """Store the ``new`` namespaces: as one more shard, or (with ``rewrite``, or when shards
        have piled up) ``everything`` as the only shard. ``build(groups)`` makes a shard."""
        if not new:
            return
        if rewrite or self.crowded():
            self.replace(build(everything))
        else:
            self.add(build(new))


def memo_index(shards: Sequence[Mapping[str, npt.NDArray[np.generic]]]) -> dict[str, tuple[int, int]]:
    """Content key -> (shard, group position) over ``shards`` (newest first; the newest wins)."""
    found: dict[str, tuple[int, int]] = {}
    for number, shard in enumerate(shards):
        for key, position in memo_positions(shard).items():
            found.setdefault(key, (number, position))
    return found


def group_slice(shard: Mapping[str, npt.NDArray[np.generic]], position: int) -> slice:
    """The rows of group ``position`` in a per-tool shard."""
    ptr = shard["ptr"]
    return slice(int(ptr[position]), int(ptr[position + 1]))


def per_tool_shard(
    groups: Sequence[tuple[str, npt.NDArray[np.int64]]], arrays: Mapping[str, npt.NDArray[np.generic]]
) -> dict[str, npt.NDArray[np.generic]]:
    """A shard of per-tool rows: ``keys``, ``ptr`` and each array's rows of the groups, in order."""
    sizes = [len(rows) for _, rows in groups]
    order = np.concatenate([rows for _, rows in groups]) if groups else np.zeros(0, dtype=np.int64)
    return {
        "keys": np.asarray([key for key, _ in groups], dtype="U32"),
        "ptr": np.concatenate((np.zeros(1, np.int64), np.cumsum(sizes, dtype=np.int64))),
        **{name: array[order] for name, array in arrays.items()},
    }


def _write_arrays(target: Path, arrays: Mapping[str, npt.NDArray[np.generic]]) -> None:
    """Write ``arrays`` as one pack file, flushed to disk and then renamed to ``target``.

    A pack is an 8-byte header length, a JSON header (name -> dtype, shape, offset; the total
    size) and the arrays' bytes, each 64-byte aligned. One file means one flush per shard.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    blobs = {name: np.asarray(array, order="C") for name, array in arrays.items()}
    entries: dict[str, Any] = {}
    offset = 0
    for name, array in blobs.items():
        if array.dtype.hasobject:
            raise TypeError(f"cannot pack {name!r}: object arrays are not stored in the cache")
        entries[name] = [array.dtype.str, list(array.shape), offset]
        offset += -(-array.nbytes // 64) * 64
    header = json.dumps({"arrays": entries, "data": offset}).encode()
    start = -(-(8 + len(header)) // 64) * 64
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(len(header).to_bytes(8, "little") + header)
            handle.write(bytes(start - 8 - len(header)))
            for name, array in blobs.items():
                handle.seek(start + entries[name][2])
                handle.write(array.tobytes())
            handle.truncate(start + offset)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _read_arrays(path: Path, required: Sequence[str]) -> dict[str, npt.NDArray[np.generic]] | None:
    """The arrays of a pack file as read-only views of a memory map, or None when it is unusable."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size < 8:
                return None
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        length = int.from_bytes(mapped[:8], "little")
        header = json.loads(mapped[8 : 8 + length].decode())
        start = -(-(8 + length) // 64) * 64
        if start + int(header["data"]) != size:
            return None
        arrays: dict[str, npt.NDArray[np.generic]] = {}
        for name, (dtype, shape, offset) in header["arrays"].items():
            kind = np.dtype(dtype)
            count = int(np.prod(shape)) if shape else 1
            flat = np.frombuffer(mapped, dtype=kind, count=count, offset=start + int(offset))
            arrays[name] = flat.reshape(tuple(shape))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if any(name not in arrays for name in required):
        return None
    return arrays


def memo_positions(memo: Mapping[str, npt.NDArray[np.generic]]) -> dict[str, int]:
    """Content key -> group position in a memo."""
    return {str(k): i for i, k in enumerate(memo["keys"].tolist())}
