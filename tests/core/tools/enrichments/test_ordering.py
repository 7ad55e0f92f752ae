"""Tests for fms_dgt/core/tools/enrichments/_ordering.py."""

from __future__ import annotations

import numpy as np
import pytest

from fms_dgt.core.tools.enrichments._ordering import rank_in_runs, score_order


@pytest.mark.parametrize("count", [300, 1 << 17])  # the packed path and the lexsort path
def test_score_order_is_a_stable_three_key_sort(count: int) -> None:
    rng = np.random.default_rng(4)
    values = np.array([-np.inf, -3.0, -1e-30, -0.0, 0.0, 1e-30, 0.25, 3.0], dtype=np.float32)
    size = 5000
    major = np.sort(rng.integers(0, 100, size))
    score = rng.choice(values, size)
    minor = rng.integers(0, 300, size)
    # -0.0 and 0.0 are equal scores, as for lexsort on the negated values.
    assert np.array_equal(score_order(major, score, minor, count), np.lexsort((minor, -score, major)))


def test_rank_in_runs() -> None:
    assert rank_in_runs(np.array([4, 4, 4, 1, 7, 7], dtype=np.int64)).tolist() == [0, 1, 2, 0, 0, 1]
    assert rank_in_runs(np.zeros(0, dtype=np.int64)).tolist() == []
