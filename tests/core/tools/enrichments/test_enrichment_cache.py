"""Tests for fms_dgt/core/tools/enrichments/_cache.py: shards, compaction, atomic multi-process writes."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import numpy as np

from fms_dgt.core.tools.enrichments import _cache
from fms_dgt.core.tools.enrichments._cache import StateStore, VectorStore


def test_vectors_round_trip_and_report_missing(tmp_path: Path) -> None:
    store = VectorStore(tmp_path / "v")
    store.store(["a", "b"], np.array([[1, 0], [0, 1]], dtype=np.float32))
    rows, missing = store.load(["b", "zz", "a", "b"])
    assert missing == [1]
    assert rows is not None
    assert rows[[0, 2, 3]].tolist() == [[0, 1], [1, 0], [0, 1]]


def test_empty_store_finds_nothing(tmp_path: Path) -> None:
    rows, missing = VectorStore(tmp_path / "none").load(["a"])
    assert rows is None and missing == [0]


def test_compaction_keeps_every_vector(tmp_path: Path, monkeypatch: object) -> None:
    store = VectorStore(tmp_path)
    setattr(_cache, "_MAX_SHARDS", 3)  # noqa: B010 - shrink the limit for the test
    try:
        for i in range(7):
            store.store([f"k{i}"], np.full((1, 2), i, dtype=np.float32))
    finally:
        setattr(_cache, "_MAX_SHARDS", 32)  # noqa: B010
    assert len(list(tmp_path.glob("shard-*.npz"))) <= 3
    rows, missing = store.load([f"k{i}" for i in range(7)])
    assert missing == [] and rows is not None
    assert rows[:, 0].tolist() == list(range(7))


def test_writes_leave_no_temporary_files(tmp_path: Path) -> None:
    StateStore(tmp_path).put("x", {"a": np.arange(3)})
    assert [p.name for p in tmp_path.iterdir()] == ["x.npz"]


def test_state_store_keeps_the_latest(tmp_path: Path) -> None:
    store = StateStore(tmp_path, keep=2)
    for i in range(4):
        store.put(f"s{i}", {"i": np.array([i])})
    latest = store.latest()
    assert latest is not None and latest["i"].tolist() == [3]
    assert store.get("s0") is None
    assert len(list(tmp_path.glob("*.npz"))) == 2


def _writer(directory: str, worker: int) -> None:
    store = VectorStore(Path(directory))
    for round_ in range(20):
        keys = [f"k{(worker + 5 * round_ + j) % 30}" for j in range(5)]
        values = np.array([[float(k[1:])] * 4 for k in keys], dtype=np.float32)
        store.store(keys, values)
        store.load(keys)


def test_several_processes_fill_one_cache(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(str(tmp_path), w)) for w in range(4)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(60)
    assert all(p.exitcode == 0 for p in workers)
    rows, missing = VectorStore(tmp_path).load([f"k{i}" for i in range(30)])
    assert missing == [] and rows is not None
    assert rows[:, 0].tolist() == [float(i) for i in range(30)]
    assert not list(tmp_path.glob("*.tmp"))
