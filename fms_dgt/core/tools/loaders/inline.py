"""The ``inline`` loader: tools written directly in the YAML config.

Example::

    tools:
      registry:
        - type: inline
          namespace: calc
          tools:
            - name: add
              description: Add two numbers.
              parameters: {type: object, properties: {a: {type: number}, b: {type: number}}}

Every shape the ``file`` loader accepts for a document is accepted for ``tools``.
"""

from __future__ import annotations

from typing import Any

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.loaders.base import ToolLoader
from fms_dgt.core.tools.loaders.file import ToolConverter, iter_tool_entries
from fms_dgt.errors import LoadError
from fms_dgt.plugins import register_tool_loader

__all__ = ["InlineToolLoader"]


@register_tool_loader("inline")
class InlineToolLoader(ToolLoader):
    """Load tools given as Python/YAML data.

    Args:
        tools: a list of tool mappings (or any document shape the file loader accepts).
        namespace: namespace for tools that do not name their own.
        source: label used in messages and ``metadata["source"]`` (the config sets it to the
            entry's place in the YAML).
        on_conflict: as for the file loader.
    """

    def __init__(
        self,
        tools: Any,
        *,
        namespace: str | None = None,
        source: str = "inline",
        on_conflict: str = "first",
    ) -> None:
        self.tools_data = tools
        self.source = source
        self.on_conflict = on_conflict
        super().__init__(namespace=namespace)

    def describe(self) -> str:
        return self.source

    def load(self) -> list[Tool]:
        """Convert the inline definitions.

        Raises:
            LoadError: any definition is invalid (all listed).
        """
        report = self._new_report()
        converter = ToolConverter(self.source, self.namespace, "file", self.on_conflict, report)
        try:
            entries = list(iter_tool_entries(self.tools_data))
        except LoadError as exc:
            raise LoadError(exc.reason, source=self.source, pointer=exc.pointer) from exc
        for entry in entries:
            converter.add(entry)
        converter.raise_problems()
        if not converter.tools:
            raise LoadError(
                "no tools in inline source: 'tools' is empty. Add tools or remove the entry",
                source=self.source,
            )
        report.tools = len(converter.tools)
        return converter.tools
