"""Arguments from schema synthesis alone, until the coherent value vocabulary lands (values.py)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.schema import get_validator
from fms_dgt.core.tools.synth import synthesise

__all__ = ["EntityContext", "arguments"]


class EntityContext:
    """The record's entity values (none are tracked by plain synthesis)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def values(self) -> dict[str, Any]:
        """The values the record fixed."""
        return {}

    def conflicts(self, calls: Any) -> list[str]:
        """Calls that disagree on an entity value (plain synthesis tracks none)."""
        return []


def arguments(
    tool: Tool,
    context: EntityContext,
    rng: random.Random,
    *,
    fixed: Mapping[str, Any] = (),  # type: ignore[assignment]
) -> dict[str, Any]:
    """Schema-valid arguments for ``tool``; ``fixed`` values (wired from earlier results) win."""
    made = synthesise(tool.parameters, rng, optional_probability=0.5, fingerprint=tool.fingerprint)
    if fixed:
        candidate = {**made, **dict(fixed)}
        if get_validator(tool.parameters, tool.fingerprint).is_valid(candidate):
            return dict(candidate)
    return dict(made)
