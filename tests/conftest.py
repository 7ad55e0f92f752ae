"""Shared fixtures: repository paths and the real-world corpus beside the checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The ../shared/corpus folder; tests using it skip when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is absent")
    return CORPUS


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """tests/data."""
    return DATA
