"""The extension point of wire formats: a provider-neutral :class:`Message` and :class:`WireFormat`.

A wire format is one class in one module of this package, registered with
:func:`~fms_dgt.plugins.register_wire_format` (third-party packages use the entry-point group
``fms_dgt.wire_formats``). It says how one tool is written for the provider, how a list of tools is
wrapped, how a conversation of :class:`Message` turns is laid out and how a whole record is put
together; a format that loses nothing also reads its records back (:meth:`WireFormat.read`).
Everything else (names, strict schemas, bindings, the CLI's choices, the generation job) goes
through the registry, so a new format touches one new file.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from fms_dgt.core.tools._json import SORTED
from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.wire.names import NameCodec, codec_of
from fms_dgt.errors import WireError

__all__ = [
    "ROLES",
    "Message",
    "WireFormat",
    "WireTool",
    "call_id",
    "get_wire_format",
    "read_result",
    "result_text",
    "result_value",
    "split_system",
]

ROLES = ("system", "user", "assistant", "tool")


@dataclass(slots=True)
class Message:
    """A provider-neutral conversation turn.

    Attributes:
        role: ``system``, ``user``, ``assistant`` or ``tool``.
        content: text (may be empty for an assistant turn that only calls tools).
        tool_calls: the assistant's calls in this turn (parallel calls stay in one message).
        results: for ``tool`` turns, the results of the preceding calls.
    """

    role: str
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)


@dataclass(slots=True, kw_only=True)
class WireTool:
    """A tool as a record carries it: its provider name, description and input schema."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=dict)


class WireFormat(ABC):
    """One provider's layout of tools and conversations.

    Subclasses implement :meth:`tool` and :meth:`messages`; :meth:`tools` wraps the list when the
    provider wants an envelope, :meth:`renamed` gives a projected tool another provider name,
    :meth:`codec` chooses the provider names of a record's tools, :meth:`assemble` puts a record
    together and :meth:`read` takes one apart again.

    Attributes:
        lossy: why records of this format cannot be read back exactly (empty when they can).
    """

    plugin_name: ClassVar[str] = ""
    lossy: ClassVar[str] = ""

    @abstractmethod
    def tool(self, tool: Tool, name: str, schema: dict[str, Any], *, strict: bool) -> dict[str, Any]:
        """One tool definition, with its provider ``name`` and its input ``schema`` (already shaped)."""

    def tools(self, projected: list[dict[str, Any]]) -> Any:
        """The ``tools`` value of a request holding these projected tools."""
        return projected

    def renamed(self, projected: dict[str, Any], name: str) -> dict[str, Any]:
        """A projected tool under another provider name (the same schema, shared, not copied)."""
        return {**projected, "name": name}

    @abstractmethod
    def messages(self, messages: Sequence[Message], codec: NameCodec) -> dict[str, Any]:
        """A conversation in the provider's request layout (the keys beside ``tools``)."""

    def codec(self, qualified_names: Iterable[str]) -> NameCodec:
        """The name codec of a record offering these tools (shared by records offering the same)."""
        return codec_of(frozenset(qualified_names))

    def assemble(self, tools: Any, body: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any]:
        """One record: the projected ``tools``, the conversation ``body`` and the ``metadata``."""
        return {"tools": tools, **body, "metadata": metadata}

    def read(self, record: Mapping[str, Any], codec: NameCodec) -> tuple[list[WireTool], list[Message]]:
        """The tools and conversation of a record of this format (names decoded with ``codec``).

        Raises:
            WireError: the format loses information (see :attr:`lossy`), or the record is malformed.
        """
        raise WireError(
            f"cannot read records of format {self.plugin_name!r} back: {self.lossy or 'it has no reader'}. "
            "Export from the run's own records (or run again in a lossless format such as openai or hf)."
        )


def get_wire_format(name: str) -> WireFormat:
    """The registered wire format ``name``.

    Raises:
        WireError: no format has that name (the message lists them).
    """
    from fms_dgt.errors import UnknownPluginError
    from fms_dgt.plugins import WIRE_FORMATS

    try:
        kind = WIRE_FORMATS.get(name)
    except UnknownPluginError as exc:
        raise WireError(f"unknown wire format {name!r}: use one of {', '.join(exc.known)}.") from None
    instance = _INSTANCES.get(kind)
    if instance is None:  # formats hold no state: one instance per class serves every caller
        instance = _INSTANCES[kind] = kind()
    return instance


_INSTANCES: dict[type[WireFormat], WireFormat] = {}


def result_value(result: ToolResult) -> Any:
    """A result as one JSON value: the result itself, or ``{"error": message}`` for a failed call."""
    return {"error": result.error} if result.error is not None else result.result


def result_text(result: ToolResult) -> str:
    """A result as the text providers put in a tool message (JSON unless it is a string)."""
    value = result_value(result)
    return value if isinstance(value, str) else SORTED(value)


def read_result(value: Any, call_id: str | None, name: str, *, text: bool = True) -> ToolResult:
    """Inverse of :func:`result_text` (``text``) or :func:`result_value` for a result read back.

    A text that parses as JSON gives that value (so a string result that is itself JSON text comes
    back decoded: its text, and so every layout written from it, is the same); ``{"error": text}``
    alone is a failed call.
    """
    if text and isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return ToolResult(call_id, name, value)
    if isinstance(value, dict) and len(value) == 1 and isinstance(value.get("error"), str):
        return ToolResult(call_id, name, error=value["error"])
    return ToolResult(call_id, name, value)


def call_id(call: ToolCall, index: int) -> str:
    """The call's id, or a positional one."""
    return call.call_id or f"call_{index}"


def arguments_text(call: ToolCall) -> str:
    """A call's arguments as the JSON string OpenAI's layouts carry."""
    return SORTED(call.arguments)


def split_system(messages: Sequence[Message]) -> tuple[str, list[Message]]:
    """System text (joined) and the other turns, for layouts that carry the system prompt apart."""
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    return system, [m for m in messages if m.role != "system"]
