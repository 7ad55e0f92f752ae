"""The extension point of wire formats: a provider-neutral :class:`Message` and :class:`WireFormat`.

A wire format is one class in one module of this package, registered with
:func:`~fms_dgt.plugins.register_wire_format` (third-party packages use the entry-point group
``fms_dgt.wire_formats``). It says how one tool is written for the provider, how a list of tools is
wrapped, and how a conversation of :class:`Message` turns is laid out. Everything else (names,
strict schemas, bindings, the CLI's choices, the generation job) goes through the registry, so a
new format touches one new file.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.wire.names import NameCodec
from fms_dgt.errors import WireError

__all__ = ["ROLES", "Message", "WireFormat", "call_id", "get_wire_format", "result_text", "split_system"]

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


class WireFormat(ABC):
    """One provider's layout of tools and conversations.

    Subclasses implement :meth:`tool` and :meth:`messages`; :meth:`tools` wraps the list when the
    provider wants an envelope, and :meth:`renamed` gives a projected tool another provider name.
    """

    plugin_name: ClassVar[str] = ""

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


def result_text(result: ToolResult) -> str:
    """A result as the text providers put in a tool message (JSON unless it is a string)."""
    if result.error is not None:
        return json.dumps({"error": result.error}, ensure_ascii=False)
    value = result.result
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def call_id(call: ToolCall, index: int) -> str:
    """The call's id, or a positional one."""
    return call.call_id or f"call_{index}"


def arguments_text(call: ToolCall) -> str:
    """A call's arguments as the JSON string OpenAI's layouts carry."""
    return json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)


def split_system(messages: Sequence[Message]) -> tuple[str, list[Message]]:
    """System text (joined) and the other turns, for layouts that carry the system prompt apart."""
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    return system, [m for m in messages if m.role != "system"]
