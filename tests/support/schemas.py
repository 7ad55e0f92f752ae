"""Small JSON Schemas for tests that build tools inline."""

from __future__ import annotations

from typing import Any


def schema(**props: Any) -> dict[str, Any]:
    """An object schema of ``props``: a type name (``"string"``) or a whole property schema each."""
    return {
        "type": "object",
        "properties": {n: p if isinstance(p, dict) else {"type": p} for n, p in props.items()},
    }
