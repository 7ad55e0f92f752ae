"""Timing helper shared by the benchmark scripts (run as ``python benchmarks/<script>.py``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def best_of(fn: Callable[[], Any], repeat: int = 3) -> float:
    """Fastest of ``repeat`` runs, in seconds (the least disturbed by other load on the machine)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)
