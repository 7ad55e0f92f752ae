"""Lazy re-exports for package ``__init__`` modules (PEP 562).

A package's front door lists its public names, but importing it must not import every plug-in
behind them (the MCP SDK, the OpenAPI libraries, numpy-heavy algorithms). Each name maps to the
module defining it, imported the first time the name is used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A module ``__getattr__`` and ``__dir__`` serving ``name -> defining module`` on first use.

    Args:
        package: the package's ``__name__`` (for messages).
        exports: public name -> fully qualified module that defines it.
    """
    table = dict(exports)

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    def __dir__() -> list[str]:
        return sorted(table)

    return __getattr__, __dir__
