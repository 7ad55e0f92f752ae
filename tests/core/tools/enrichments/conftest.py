"""Fixtures for the enrichment tests: the travel tool set and a stand-in OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fms_dgt.core.tools.loaders.file import FileToolLoader
from fms_dgt.core.tools.registry import ToolRegistry

REPO = Path(__file__).resolve().parents[4]
TRAVEL = REPO / "data" / "sampling" / "travel.yaml"


@pytest.fixture
def travel_tools() -> list[Any]:
    """The tools of data/sampling/travel.yaml (11 tools, 4 namespaces, one overload)."""
    return FileToolLoader(TRAVEL).load()


@pytest.fixture
def travel_registry(travel_tools: list[Any]) -> ToolRegistry:
    return ToolRegistry(travel_tools)


def _reply(body: dict[str, Any]) -> Any:
    """Embeddings ``[len, 1, count of "a"]`` for each input text; ``{}`` for chat requests."""
    if set(body) == {"input"}:
        text = body["input"]
        return [float(len(text)), 1.0, float(text.count("a"))]
    return "{}"


@pytest.fixture
def stand_in() -> Iterator[Any]:
    """The OpenAI-compatible stand-in of tests/support/chat_server.py (``reply`` answers chat)."""
    from support.chat_server import serve

    with serve(_reply) as server:
        yield server
