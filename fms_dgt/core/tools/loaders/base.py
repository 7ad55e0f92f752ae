"""The :class:`ToolLoader` contract and the :class:`LoadReport` every loader fills.

A loader turns one source (a file, an inline list, an MCP server, an OpenAPI spec) into
:class:`~fms_dgt.core.tools.data_objects.Tool` objects. Loaders are constructed from the keyword
arguments of a ``tools.registry`` entry in the YAML config: the accepted keys are exactly the
keyword parameters of ``__init__``, so a misspelt key is reported with its YAML path.

Nothing is dropped silently: whatever a loader skips, folds or changes goes into its
:attr:`ToolLoader.report`, which ``fms-dgt tools validate`` prints.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from fms_dgt.core.tools.data_objects import Tool

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = ["LoadReport", "Problem", "ToolLoader"]


@dataclass(slots=True, frozen=True, kw_only=True)
class Problem:
    """One thing a loader reports.

    Attributes:
        severity: ``error`` (the load fails), ``skipped`` (an item was not converted) or
            ``warning`` (loaded, but something was changed or folded).
        message: what and why.
        source: file, URL or server.
        pointer: JSON pointer inside the source, when known.
        line: 1-based line, when known.
    """

    severity: str
    message: str
    source: str | None = None
    pointer: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        where = self.source or ""
        if self.line:
            where += f":{self.line}"
        if self.pointer is not None:
            where += f" at {self.pointer or '/'}"
        return f"{self.severity}: {self.message}" + (f" [{where.strip()}]" if where else "")


@dataclass(slots=True, kw_only=True)
class LoadReport:
    """What one ``load()`` did besides returning tools.

    Attributes:
        source: what was loaded.
        tools: how many tools were returned.
        folded: how many repeated identical definitions were folded into one tool.
        problems: warnings and skipped items (errors raise instead).
    """

    source: str = ""
    tools: int = 0
    folded: int = 0
    problems: list[Problem] = field(default_factory=list)

    def warn(self, message: str, *, pointer: str | None = None, line: int | None = None) -> None:
        """Record a warning about this source."""
        self.problems.append(
            Problem(severity="warning", message=message, source=self.source, pointer=pointer, line=line)
        )

    def skip(self, message: str, *, pointer: str | None = None, line: int | None = None) -> None:
        """Record an item that was not converted."""
        self.problems.append(
            Problem(severity="skipped", message=message, source=self.source, pointer=pointer, line=line)
        )

    @property
    def warnings(self) -> list[Problem]:
        """Problems of severity ``warning``."""
        return [p for p in self.problems if p.severity == "warning"]

    @property
    def skipped(self) -> list[Problem]:
        """Problems of severity ``skipped``."""
        return [p for p in self.problems if p.severity == "skipped"]


class ToolLoader(ABC):
    """Base class of every tool loader.

    Subclasses implement :meth:`load` (and may override :meth:`load_async` when their I/O is
    async). A loader may be *stateful* (keep a connection across :meth:`load` calls, as the MCP
    loader does) and may set :attr:`stale` when it learns that its source changed.

    Class attributes:
        path_keys: config keys holding file paths, resolved against the config file's directory.
    """

    path_keys: ClassVar[tuple[str, ...]] = ()
    plugin_name: ClassVar[str] = ""

    def __init__(self, *, namespace: str | None = None) -> None:
        self.namespace = namespace
        self.report = LoadReport(source=self.describe())
        self.stale = False

    def describe(self) -> str:
        """A short human description of the source (used in messages)."""
        return type(self).__name__

    @abstractmethod
    def load(self) -> list[Tool]:
        """Read the source and return its tools.

        Raises:
            fms_dgt.errors.LoadError: the source cannot be read or holds invalid definitions.
        """

    async def load_async(self) -> list[Tool]:
        """Async form of :meth:`load`; by default runs :meth:`load` in a worker thread."""
        return await asyncio.to_thread(self.load)

    def bind_registry(self, registry: ToolRegistry) -> None:  # noqa: B027 - optional hook
        """Called once by the registry that owns this loader (after it is built).

        A loader that learns of changes by itself (MCP ``list_changed``) may keep the registry to
        refresh it; most loaders ignore it.
        """

    def close(self) -> None:  # noqa: B027 - optional hook, most loaders hold nothing
        """Release connections or files held between loads."""

    def _new_report(self) -> LoadReport:
        self.report = LoadReport(source=self.describe())
        return self.report
