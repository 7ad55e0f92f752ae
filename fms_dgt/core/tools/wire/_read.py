"""Helpers of the readers that take a record of a wire format apart again (see ``WireFormat.read``).

A reader walks a record written by its format's writer and gives back provider-named tools and
:class:`~fms_dgt.core.tools.wire.base.Message` turns with qualified names. Results often carry only
their call's id, so :class:`Calls` remembers the calls already read; consecutive results become one
``tool`` turn, as the canonical record holds them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from fms_dgt.core.tools.data_objects import ToolCall, ToolResult
from fms_dgt.core.tools.wire.base import Message, WireTool, read_result
from fms_dgt.core.tools.wire.names import NameCodec
from fms_dgt.errors import WireError

__all__ = ["Calls", "field", "items", "loads", "mapping", "wire_tool"]


def field(node: Mapping[str, Any], key: str, where: str, kind: type | tuple[type, ...] = object) -> Any:
    """``node[key]``, checked to be of ``kind``.

    Raises:
        WireError: missing or of another type (says where).
    """
    if not isinstance(node, Mapping) or key not in node:
        raise WireError(f"malformed record at {where}: no {key!r}. The record is not of the format named.")
    value = node[key]
    if kind is not object and not isinstance(value, kind):
        raise WireError(
            f"malformed record at {_at(where, key)}: expected {_kind_name(kind)}, got "
            f"{type(value).__name__}. The record is not of the format named."
        )
    return value


def _at(where: str, key: str) -> str:
    return key if where == "record" else f"{where}.{key}"


def _kind_name(kind: type | tuple[type, ...]) -> str:
    return " or ".join(k.__name__ for k in kind) if isinstance(kind, tuple) else kind.__name__


def items(node: Mapping[str, Any], key: str, where: str) -> list[Any]:
    """``node[key]`` as a list of mappings."""
    value: list[Any] = field(node, key, where, list)
    for i, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise WireError(f"malformed record at {_at(where, key)}[{i}]: expected an object.")
    return value


def mapping(value: Any, where: str) -> dict[str, Any]:
    """``value`` checked to be a JSON object."""
    if not isinstance(value, dict):
        raise WireError(f"malformed record at {where}: expected an object, got {type(value).__name__}.")
    return value


def loads(text: Any, where: str) -> Any:
    """JSON text decoded, or an error saying where it is not JSON."""
    if not isinstance(text, str):
        raise WireError(f"malformed record at {where}: expected JSON text, got {type(text).__name__}.")
    try:
        return json.loads(text)
    except ValueError as exc:
        raise WireError(f"malformed record at {where}: not JSON ({exc}).") from None


def wire_tool(name: Any, description: Any, parameters: Any, where: str) -> WireTool:
    """A :class:`WireTool` from a record's fields, type-checked."""
    if not isinstance(name, str) or not isinstance(description, str):
        raise WireError(f"malformed tool at {where}: name and description must be strings.")
    return WireTool(name=name, description=description, parameters=mapping(parameters, f"{where}.parameters"))


class Calls:
    """The calls read so far (id -> qualified name) and the turns being built."""

    def __init__(self, codec: NameCodec) -> None:
        self.codec = codec
        self.names: dict[str | None, str] = {}
        self.turns: list[Message] = []
        self.order: list[str] = []

    def call(self, name: str, arguments: Any, call_id: str | None, where: str) -> ToolCall:
        """A call read from the record (provider ``name`` decoded), remembered by id."""
        qualified = self.codec.decode(name)
        call = ToolCall(qualified, mapping(arguments, f"{where}.arguments"), call_id)
        self.names[call_id] = qualified
        self.order.append(qualified)
        return call

    def name_of(self, call_id: str | None, name: str | None, where: str) -> str:
        """The qualified name of a result: its own provider name, else its call's."""
        if name is not None:
            return self.codec.decode(name)
        if call_id in self.names:
            return self.names[call_id]
        raise WireError(f"malformed record at {where}: result {call_id!r} answers no call of the record.")

    def result(self, value: Any, call_id: str | None, name: str | None, where: str) -> ToolResult:
        """A result read from the record, added to the current ``tool`` turn."""
        result = read_result(value, call_id, self.name_of(call_id, name, where))
        self.add_result(result)
        return result

    def add_result(self, result: ToolResult) -> None:
        """Append to the ``tool`` turn in progress (a new one after any other turn)."""
        if not self.turns or self.turns[-1].role != "tool":
            self.turns.append(Message("tool"))
        self.turns[-1].results.append(result)

    def add(self, message: Message) -> None:
        """Append a turn that is not a result."""
        self.turns.append(message)
