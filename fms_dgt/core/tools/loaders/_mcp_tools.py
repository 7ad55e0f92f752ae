"""The tools an MCP server lists, turned into :class:`Tool` objects one at a time (for the ``mcp`` loader).

The server is untrusted, so every listed tool is checked on its own and a bad one is skipped and
reported (:meth:`LoadReport.skip <fms_dgt.core.tools.loaders.base.LoadReport.skip>`, naming the
server, the tool's index and its name) while the others load:

* its name is a non-empty string with no control or format characters and no ``::``;
* its ``inputSchema`` is a JSON Schema object, and so is its ``outputSchema`` when it has one;
* neither is nested deeper than :data:`fms_dgt.io.DEFAULT_LIMITS` allows;
* both compile (:func:`~fms_dgt.core.tools.schema.get_validator`): a ``$ref`` resolves only
  inside the schema (``#/...``); a remote or file reference, or one that points nowhere, is
  refused and never fetched.

A tool listed twice folds into one when both listings are the same (counted in
``report.folded``); a repeat with another input schema is an overload, as everywhere in the
registry; a repeat whose input schema is the same but whose annotations (description, title,
annotations, output schema...) differ keeps the first and warns, or fails the load with
``on_conflict: error``.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Mapping
from typing import Any, Final

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.loaders.base import LoadReport
from fms_dgt.core.tools.schema import InvalidSchemaError, get_validator, normalise_parameters
from fms_dgt.errors import LoadError, ToolDefinitionError
from fms_dgt.io import DEFAULT_LIMITS, check_limits
from fms_dgt.secrets import redact, redact_value

__all__ = ["ON_CONFLICT", "MCPToolBuilder", "check_tool_name"]

log = logging.getLogger(__name__)

#: What a repeated tool whose annotations differ does: keep the first (and warn), or fail.
ON_CONFLICT: Final = ("first", "error")
#: Metadata keys copied from an MCP tool definition (wire name -> metadata key).
_KEPT_FIELDS: Final = {"title": "title", "annotations": "annotations", "icons": "icons", "_meta": "meta"}
_BAD_CATEGORIES: Final = ("Cc", "Cf", "Cs", "Zl", "Zp")
_NAME_CHARS: Final = 80  # of a hostile name, in a message


def check_tool_name(name: object) -> str:
    """``name`` when it can name a tool.

    Raises:
        ToolDefinitionError: it is not a string, is blank, or holds a control or format character
            (a newline, an escape, a right-to-left override...). ``::`` is refused by :class:`Tool`.
    """
    if not isinstance(name, str):
        raise ToolDefinitionError(f"the tool has no name (got {_shown(name)}). Give it a string `name`")
    if not name.strip():
        raise ToolDefinitionError("the tool's name is blank. Give it a name")
    bad = next((c for c in name if unicodedata.category(c) in _BAD_CATEGORIES), None)
    if bad is not None:
        raise ToolDefinitionError(
            f"the tool's name holds the control character U+{ord(bad):04X}: a name is printed in "
            "prompts and records. Rename the tool"
        )
    return name


class MCPToolBuilder:
    """Builds the tools of one listing, skipping, folding and reporting as the module says.

    Args:
        server: the server's name (``metadata["server"]``, messages).
        namespace: the tools' namespace.
        transport: ``metadata["transport"]``.
        on_conflict: ``first`` or ``error`` (see the module docstring).
        report: where skipped, folded and repeated tools are reported.
    """

    def __init__(self, server: str, namespace: str, transport: str, on_conflict: str, report: LoadReport):
        self.server = server
        self.namespace = namespace
        self.transport = transport
        self.on_conflict = on_conflict
        self.report = report
        self.tools: list[Tool] = []
        self._seen: dict[str, list[tuple[Tool, Mapping[str, Any], int]]] = {}

    def add(self, index: int, raw: Mapping[str, Any]) -> None:
        """Build the tool listed at ``index``; skip it (reported) when it is bad.

        Raises:
            LoadError: it repeats an earlier tool with other annotations and ``on_conflict`` is
                ``error``.
        """
        try:
            tool = self._build(raw, f"/tools/{index}")
        except (ToolDefinitionError, LoadError) as exc:
            self.skip(index, raw.get("name"), _reason(exc))
            return
        self._keep(tool, raw, index)

    def skip(self, index: int, name: object, reason: str) -> None:
        """Report the tool at ``index`` as skipped."""
        who = f"MCP tool {_shown(name)} (index {index}) of server {self.server!r}"
        message = redact(f"{who} skipped: {reason}")
        log.warning("%s", message)
        self.report.skip(message, pointer=f"/tools/{index}")

    # ------------------------------------------------------------------ building

    def _build(self, raw: Mapping[str, Any], pointer: str) -> Tool:
        name = check_tool_name(raw.get("name"))
        parameters, notes = _schema(raw.get("inputSchema"), "inputSchema", pointer)
        output: dict[str, Any] = {}
        if raw.get("outputSchema") is not None:
            output, out_notes = _schema(raw["outputSchema"], "outputSchema", pointer)
            notes = [*notes, *out_notes]
        description = raw.get("description")
        return Tool(
            name,
            self.namespace,
            description=description if isinstance(description, str) else "",
            parameters=parameters,
            output_parameters=output,
            metadata=self._metadata(raw, pointer, notes),
        )

    def _metadata(self, raw: Mapping[str, Any], pointer: str, notes: list[str]) -> dict[str, Any]:
        metadata: dict[str, Any] = {
            "kind": "mcp",
            "server": self.server,
            "transport": self.transport,
            "source": f"mcp:{self.server}#{pointer}",
        }
        for wire_key, key in _KEPT_FIELDS.items():
            if raw.get(wire_key) is not None:
                metadata[key] = raw[wire_key]
        if notes:
            metadata["normalised"] = notes
        return dict(redact_value(metadata))

    # ------------------------------------------------------------------ repeats

    def _keep(self, tool: Tool, raw: Mapping[str, Any], index: int) -> None:
        earlier = self._seen.setdefault(tool.name, [])
        for kept, kept_raw, kept_index in earlier:
            if kept.fingerprint != tool.fingerprint:
                continue  # another input schema: an overload
            if kept_raw == raw:
                self.report.folded += 1
                log.debug("MCP tool %r of server %r repeated at %d: folded", tool.name, self.server, index)
            else:
                self._conflict(tool.name, index, kept_index)
            return
        earlier.append((tool, raw, index))
        self.tools.append(tool)

    def _conflict(self, name: str, index: int, kept_index: int) -> None:
        message = (
            f"MCP tool {name!r} (index {index}) of server {self.server!r} repeats the input schema of "
            f"index {kept_index} with other annotations (description, title, annotations or output schema)"
        )
        if self.on_conflict == "error":
            raise LoadError(
                redact(f"{message}. Fix the server, or set `on_conflict: first` to keep the first"),
                source=self.server,
                pointer=f"/tools/{index}",
            )
        self.report.warn(redact(f"{message}; kept the first"), pointer=f"/tools/{index}")


def _schema(value: object, key: str, pointer: str) -> tuple[dict[str, Any], list[str]]:
    """A tool's input or output schema, normalised and known to compile.

    Raises:
        ToolDefinitionError: it is missing, not an object, or cannot be used.
        LoadError: it is nested too deeply.
    """
    if not isinstance(value, dict):
        got = "missing" if value is None else f"a {type(value).__name__}"
        raise ToolDefinitionError(f"its {key} is {got}, not a JSON Schema object. Fix the tool's {key}")
    check_limits(value, f"{key} at {pointer}", DEFAULT_LIMITS)
    try:  # normalising checks the schema's references, compiling the rest
        schema, notes = normalise_parameters(value, f"{pointer}/{key}")
        if schema.get("type") != "object" and key == "inputSchema":
            raise ToolDefinitionError(
                f"its inputSchema's type is {schema.get('type')!r}, not 'object': tool arguments are "
                "a JSON object. Fix the tool's inputSchema"
            )
        get_validator(schema)
    except InvalidSchemaError as exc:
        raise ToolDefinitionError(f"its {key} cannot be used: {exc}") from exc
    return schema, notes


def _reason(exc: Exception) -> str:
    if isinstance(exc, LoadError) and "nested too deeply" in str(exc):
        return f"its schema is nested more than {DEFAULT_LIMITS.max_depth} levels deep"
    return str(exc)


def _shown(name: object) -> str:
    text = repr(name)
    return text if len(text) <= _NAME_CHARS else text[: _NAME_CHARS - 3] + "..."
