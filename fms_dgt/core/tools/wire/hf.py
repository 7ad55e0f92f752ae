"""Hugging Face chat templates and TRL (``hf``): the layout ``apply_chat_template`` takes.

``tools`` is the list ``apply_chat_template(messages, tools=...)`` takes (``{"type": "function",
"function": {name, description, parameters}}``); assistant calls carry ``arguments`` as JSON
objects (templates ``tojson`` them; a string would be encoded twice); call turns have ``content:
""``; tool messages carry ``tool_call_id``, ``name`` and the result as text; a turn without calls
has no ``tool_calls`` key (templates test for the key). Family-specific adaptations (one call per
turn, calls written into ``content``, results as values) are made by
:mod:`fms_dgt.core.tools.wire.families`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fms_dgt.core.tools.data_objects import ToolCall
from fms_dgt.core.tools.wire.base import Message, WireTool
from fms_dgt.core.tools.wire.names import NameCodec
from fms_dgt.core.tools.wire.openai import OpenAIChat, read_chat_messages, read_chat_tools
from fms_dgt.plugins import register_wire_format

__all__ = ["HFChat"]


@register_wire_format("hf")
class HFChat(OpenAIChat):
    """The chat layout of Hugging Face chat templates and TRL's ``SFTTrainer``."""

    def arguments(self, call: ToolCall) -> Any:
        """The arguments object itself (templates encode it once with ``tojson``)."""
        return call.arguments

    def read(self, record: Mapping[str, Any], codec: NameCodec) -> tuple[list[WireTool], list[Message]]:
        return read_chat_tools(record), read_chat_messages(record, codec, arguments_as_text=False)
