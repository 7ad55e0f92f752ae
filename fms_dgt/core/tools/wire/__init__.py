"""Projection of tools, calls and results to provider wire formats.

Formats are plug-ins (one module each, see :mod:`fms_dgt.core.tools.wire.base`): OpenAI Chat
Completions (``openai``), OpenAI Responses (``openai-responses``), Anthropic Messages
(``anthropic``) and Gemini (``gemini``). :func:`wire_formats` lists what is registered.

**Names.** :class:`NameCodec` maps qualified names to provider names reversibly and without
collisions (:mod:`fms_dgt.core.tools.wire.names`).

**Schemas.** ``strict=True`` applies OpenAI's strict-mode shape; ``bindings`` remove arguments
injected at call time from the projected schema (:func:`apply_bindings` injects them); Gemini gets
its schema subset (:mod:`fms_dgt.core.tools.wire.schemas`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fms_dgt.core.tools.data_objects import Tool, ToolCall
from fms_dgt.core.tools.wire.base import ROLES, Message, WireFormat, get_wire_format
from fms_dgt.core.tools.wire.names import NameCodec
from fms_dgt.core.tools.wire.schemas import gemini_schema, input_schema, strict_schema
from fms_dgt.errors import WireError

__all__ = [
    "FORMATS",
    "Message",
    "NameCodec",
    "WireError",
    "WireFormat",
    "apply_bindings",
    "convert_messages",
    "gemini_schema",
    "get_wire_format",
    "project_tool",
    "project_tools",
    "strict_schema",
    "wire_formats",
]


def wire_formats() -> tuple[str, ...]:
    """The names of every registered wire format (built-in and third-party)."""
    from fms_dgt.plugins import WIRE_FORMATS

    return tuple(WIRE_FORMATS.names())


def __getattr__(name: str) -> Any:
    # FORMATS is computed on first use: listing the formats imports their modules.
    if name == "FORMATS":
        return wire_formats()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def project_tool(
    tool: Tool,
    fmt: str,
    *,
    codec: NameCodec,
    strict: bool = False,
    bindings: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One tool in a provider's tool-definition format.

    Raises:
        WireError: unknown format.
    """
    schema = input_schema(tool, bindings, strict)
    return get_wire_format(fmt).tool(tool, codec.encode(tool.qualified_name), schema, strict=strict)


def project_tools(
    tools: Sequence[Tool],
    fmt: str,
    *,
    codec: NameCodec | None = None,
    strict: bool = False,
    bindings: Mapping[str, Mapping[str, Any]] | None = None,
) -> tuple[Any, NameCodec]:
    """Project several tools; returns the provider payload and the codec used.

    Overloads share a qualified name; providers cannot tell them apart, so only distinct names
    are projected (the first overload of each). The payload is what the format puts under
    ``tools`` (a list, or Gemini's wrapper), or None when there are no tools: a request then
    omits ``tools`` (providers refuse an empty list).

    Args:
        bindings: qualified name -> arguments injected at call time (hidden from the model).
    """
    wire = get_wire_format(fmt)
    codec = codec or NameCodec(t.qualified_name for t in tools)
    if not tools:
        return None, codec
    seen: set[str] = set()
    out = []
    for tool in tools:
        if tool.qualified_name in seen:
            continue
        seen.add(tool.qualified_name)
        bound = (bindings or {}).get(tool.qualified_name)
        schema = input_schema(tool, bound, strict)
        out.append(wire.tool(tool, codec.encode(tool.qualified_name), schema, strict=strict))
    return wire.tools(out), codec


def apply_bindings(call: ToolCall, bindings: Mapping[str, Mapping[str, Any]]) -> ToolCall:
    """The call with its tool's bound arguments injected (bound values win)."""
    bound = bindings.get(call.name)
    if not bound:
        return call
    return ToolCall(call.name, {**call.arguments, **bound}, call.call_id)


def convert_messages(messages: Sequence[Message], fmt: str, codec: NameCodec) -> dict[str, Any]:
    """A conversation in a provider's request layout.

    Returns:
        ``{"messages": [...]}`` (OpenAI chat, Anthropic, with ``system`` separate for Anthropic),
        ``{"input": [...]}`` (OpenAI Responses) or ``{"contents": [...]}`` (Gemini, with
        ``system_instruction``).

    Raises:
        WireError: unknown format or role.
    """
    wire = get_wire_format(fmt)
    for message in messages:
        if message.role not in ROLES:
            raise WireError(f"unknown message role {message.role!r}: use system, user, assistant or tool.")
    return wire.messages(messages, codec)
