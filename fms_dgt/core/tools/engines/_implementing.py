"""What an exact implementation of a pure tool reads and raises: :class:`Inputs`,
:class:`NotComputable`, the registry. :mod:`implementations` holds the lookup and the common
tools, :mod:`_everyday` more of them; both register here, so neither imports the other's module
for its names (an import cycle otherwise).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from fms_dgt.core.tools._fake_kinds import tokens
from fms_dgt.core.tools._fake_names import SETTINGS

__all__ = ["NOT_COMPUTED", "REGISTRY", "Implementation", "Inputs", "NotComputable", "is_setting", "register"]


class NotComputable(Exception):
    """The arguments do not have the shape an implementation needs (not an error of the call)."""


class _NotComputed:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NOT_COMPUTED"


#: What :func:`~fms_dgt.core.tools.engines.implementations.compute` returns when no
#: implementation applies.
NOT_COMPUTED: Any = _NotComputed()
Implementation = Callable[["Inputs"], Any]
#: Implementations by tool name (words run together: ``addnumbers``).
REGISTRY: dict[str, Implementation] = {}

#: Arguments that say how to compute, not what (their words run together); ``digits`` and
#: ``places`` too, though a value of theirs is no number of places to draw (a list of digits).
_SETTINGS = frozenset(SETTINGS) | {"digits", "places"}


def is_setting(name: str) -> bool:
    """Whether an argument says how to compute, not what (``precision``, ``decimal_places``)."""
    return "".join(tokens(name)) in _SETTINGS


class Inputs:
    """A call's arguments as an implementation reads them (in the schema's property order)."""

    __slots__ = ("arguments", "order")

    def __init__(self, parameters: Mapping[str, Any], arguments: Mapping[str, Any]) -> None:
        props = parameters.get("properties")
        declared = list(props) if isinstance(props, Mapping) else []
        self.order = [n for n in declared if n in arguments] + [n for n in arguments if n not in declared]
        self.arguments = arguments

    def numbers(self, at_least: int = 0) -> list[float]:
        """Every number among the arguments, arrays of numbers flattened, in order, but those
        that say how to compute (``precision``, ``decimal_places``); fewer than ``at_least``
        cannot be computed."""
        out: list[float] = []
        for name in self.order:
            value = self.arguments[name]
            if is_setting(name) and not isinstance(value, list):
                continue  # the square root of 9 to a precision of 46 is 3; a list of digits is summed
            values = value if isinstance(value, list) else [value]
            out.extend(v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool))
        if len(out) < at_least:
            raise NotComputable(f"expected at least {at_least} numbers, got {len(out)}")
        return out

    def number(self, index: int, count: int | None = None) -> float:
        """The ``index``-th number; with ``count``, there must be exactly that many."""
        found = self.numbers()
        if (count is not None and len(found) != count) or index >= len(found):
            raise NotComputable(f"expected {count or index + 1} numbers, got {len(found)}")
        return found[index]

    def measure(self, *names: str) -> float:
        """The number given by the first argument whose words include one of ``names``."""
        value = self.named(*names)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise NotComputable(f"{' or '.join(names)} is not a number")
        return float(value)

    def fraction(self, *names: str) -> float:
        """A percentage given by the first argument named one of ``names``, as a fraction (a
        rate below 1 already is one: 0.16 and 16 are both 16%); a negative one is no rate."""
        rate = self.measure(*names)
        if rate < 0:
            raise NotComputable("a negative rate")
        return rate if rate < 1 else rate / 100

    def named(self, *names: str) -> Any:
        """The first argument whose words include one of ``names``."""
        for name in self.order:
            if set(tokens(name)) & set(names) or name.lower() in names:
                return self.arguments[name]
        raise NotComputable(f"no argument named {' or '.join(names)}")

    def text(self) -> str:
        """The one string argument."""
        found = [v for v in (self.arguments[n] for n in self.order) if isinstance(v, str)]
        if len(found) != 1:
            raise NotComputable(f"expected one text argument, got {len(found)}")
        return found[0]


def register(*names: str) -> Callable[[Implementation], Implementation]:
    """Register an implementation under tool names, at import time (before any lookup; use
    :func:`~fms_dgt.core.tools.engines.implementations.register_implementation` after)."""

    def add(implementation: Implementation) -> Implementation:
        for name in names:
            REGISTRY["".join(tokens(name))] = implementation
        return implementation

    return add
