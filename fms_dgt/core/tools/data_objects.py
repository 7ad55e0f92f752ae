"""The tool data model: :class:`Tool`, :class:`ToolCall`, :class:`ToolResult`.

All three are slotted dataclasses with a lossless ``to_dict`` / ``from_dict`` (a JSON round trip gives
an equal object). Names are checked on construction: a tool's ``name`` and ``namespace`` may not
contain ``::`` and a call's or result's ``name`` must be qualified (``namespace::name``).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from fms_dgt.core.tools.constants import TOOL_NAMESPACE_SEP
from fms_dgt.errors import ToolDefinitionError
from fms_dgt.io import surrogate_problem

__all__ = ["Tool", "ToolCall", "ToolResult", "distinct_tools", "qualify", "split_qualified_name"]


def _empty_object_schema() -> dict[str, Any]:
    return {"type": "object", "properties": {}}


def qualify(namespace: str, name: str) -> str:
    """Return the qualified name ``namespace::name``."""
    return f"{namespace}{TOOL_NAMESPACE_SEP}{name}"


def split_qualified_name(qualified_name: str) -> tuple[str, str]:
    """Split ``namespace::name`` on the first ``::``.

    Raises:
        ToolDefinitionError: the name is not qualified.
    """
    namespace, sep, name = qualified_name.partition(TOOL_NAMESPACE_SEP)
    if not sep or not namespace or not name:
        raise ToolDefinitionError(
            f"unqualified tool name {qualified_name!r}: calls and results name tools as "
            f"'namespace{TOOL_NAMESPACE_SEP}name'. Prefix the tool's namespace."
        )
    return namespace, name


#: C0 and C1 control characters: a name holding one could rewrite a terminal (escape sequences).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
#: Those, and lone surrogates (no character: nothing can print or write them).
_UNWRITABLE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def _check_part(value: object, what: str) -> None:
    if type(value) is str and value and TOOL_NAMESPACE_SEP not in value and not _UNWRITABLE.search(value):
        return
    if not isinstance(value, str) or not value:
        raise ToolDefinitionError(
            f"invalid tool {what} {value!r}: it must be a non-empty string. Give the tool a {what}."
        )
    if _CONTROL.search(value):
        raise ToolDefinitionError(
            f"invalid tool {what} {value.encode('unicode_escape').decode()!r}: it contains a control "
            "character (a terminal escape sequence, a newline). Use printable characters."
        )
    if problem := surrogate_problem(value):
        shown = value.encode("unicode_escape").decode()
        raise ToolDefinitionError(f"invalid tool {what} {shown!r}: {problem}.")
    if TOOL_NAMESPACE_SEP in value:
        raise ToolDefinitionError(
            f"invalid tool {what} {value!r}: it contains the namespace separator "
            f"{TOOL_NAMESPACE_SEP!r}. Rename it; namespaces are set separately."
        )


def _check_parameters(parameters: object, qualified_name: Callable[[], str], what: str) -> None:
    if type(parameters) is not dict and not isinstance(parameters, Mapping):
        raise ToolDefinitionError(
            f"invalid {what} of tool {qualified_name()}: expected a JSON Schema object, got "
            f"{type(parameters).__name__}. Write it as {{'type': 'object', 'properties': {{...}}}}."
        )
    kind = parameters.get("type", "object")
    if what == "parameters" and kind != "object":
        raise ToolDefinitionError(
            f"invalid parameters of tool {qualified_name()}: the schema's type is {kind!r}, not "
            "'object'. Tool arguments are a JSON object; wrap the value in a property."
        )


@dataclass(slots=True, frozen=True, eq=True)
class Tool:
    """One callable tool.

    Tools are immutable: enrichments that add information build a new tool with
    :func:`dataclasses.replace`. The semantic fingerprint of ``parameters`` is computed once and
    memoised (see :func:`fms_dgt.core.tools.schema.fingerprint`).

    Attributes:
        name: the tool's name within its namespace (no ``::``).
        namespace: the namespace (no ``::``).
        description: free text for the model.
        parameters: JSON Schema (Draft 2020-12) of the arguments object.
        output_parameters: JSON Schema of the result, ``{}`` when unknown.
        metadata: everything else a loader knows: origin, kind, normalisation notes, engine hints.
    """

    name: str
    namespace: str
    _: KW_ONLY
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=_empty_object_schema)
    output_parameters: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    _fingerprint: str | None = field(default=None, init=False, repr=False, compare=False)
    _output_validator: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_part(self.name, "name")
        _check_part(self.namespace, "namespace")
        _check_parameters(self.parameters, lambda: self.qualified_name, "parameters")
        _check_parameters(self.output_parameters, lambda: self.qualified_name, "output_parameters")
        if not isinstance(self.description, str):
            raise ToolDefinitionError(
                f"invalid description of tool {self.qualified_name}: expected a string, got "
                f"{type(self.description).__name__}."
            )
        if problem := surrogate_problem(self.description):
            raise ToolDefinitionError(f"invalid description of tool {self.qualified_name}: {problem}.")

    def __hash__(self) -> int:
        return hash((self.namespace, self.name, self.fingerprint))

    @property
    def qualified_name(self) -> str:
        """``namespace::name``."""
        return qualify(self.namespace, self.name)

    @property
    def fingerprint(self) -> str:
        """Semantic fingerprint of ``parameters`` (memoised)."""
        value = self._fingerprint
        if value is None:
            from fms_dgt.core.tools.schema import fingerprint

            value = fingerprint(self.parameters)
            object.__setattr__(self, "_fingerprint", value)
        return value

    @property
    def output_validator(self) -> Any:
        """The compiled validator of ``output_parameters`` (built once per tool).

        Kept on the tool rather than in the fingerprint-keyed cache: output schemas of real APIs
        can be hundreds of kilobytes, and fingerprinting them would cost more than validating.
        """
        value = self._output_validator
        if value is None:
            from fms_dgt.core.tools.schema import CompiledValidator

            value = CompiledValidator(self.output_parameters)
            object.__setattr__(self, "_output_validator", value)
        return value

    @property
    def kind(self) -> str:
        """The source kind (``file``, ``mcp``, ``rest``, ``function``...), from metadata."""
        return str(self.metadata.get("kind", "file"))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready deep copy of every field."""
        return {
            "name": self.name,
            "namespace": self.namespace,
            "description": self.description,
            "parameters": copy.deepcopy(self.parameters),
            "output_parameters": copy.deepcopy(self.output_parameters),
            "metadata": copy.deepcopy(self.metadata),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Tool:
        """Inverse of :meth:`to_dict`.

        Raises:
            ToolDefinitionError: a required field is missing or a field is invalid.
        """
        _require(data, ("name", "namespace"), "Tool")
        return cls(
            data["name"],
            data["namespace"],
            description=data.get("description", ""),
            parameters=copy.deepcopy(data.get("parameters", _empty_object_schema())),
            output_parameters=copy.deepcopy(data.get("output_parameters", {})),
            metadata=copy.deepcopy(data.get("metadata", {})),
        )


def _require(data: Mapping[str, Any], keys: tuple[str, ...], what: str) -> None:
    if not isinstance(data, Mapping):
        raise ToolDefinitionError(f"invalid {what} data: expected a mapping, got {data!r}.")
    missing = [k for k in keys if k not in data]
    if missing:
        raise ToolDefinitionError(
            f"invalid {what} data: missing {', '.join(missing)} in {sorted(data)}. "
            f"Every {what} needs {', '.join(keys)}."
        )


@dataclass(slots=True)
class ToolCall:
    """A request to call a tool.

    Attributes:
        name: qualified tool name (``namespace::name``).
        arguments: the arguments object.
        call_id: identifier echoed by the matching :class:`ToolResult`.
    """

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    call_id: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise ToolDefinitionError(f"invalid tool call name {self.name!r}: expected a string.")
        split_qualified_name(self.name)
        if not isinstance(self.arguments, Mapping):
            raise ToolDefinitionError(
                f"invalid arguments of call to {self.name}: expected an object, got "
                f"{type(self.arguments).__name__}."
            )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready deep copy."""
        return {
            "name": self.name,
            "arguments": copy.deepcopy(self.arguments),
            "call_id": self.call_id,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolCall:
        """Inverse of :meth:`to_dict`."""
        _require(data, ("name",), "ToolCall")
        return cls(data["name"], copy.deepcopy(data.get("arguments", {})), data.get("call_id"))


@dataclass(slots=True)
class ToolResult:
    """The outcome of one tool call: a ``result`` or an ``error`` (a failed call is data).

    Attributes:
        call_id: the call's identifier.
        name: qualified tool name.
        result: the decoded result value.
        error: a message when the call failed.
        metadata: engine details (status, timing, validation notes, content blocks).
    """

    call_id: str | None
    name: str
    result: Any = None
    error: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise ToolDefinitionError(f"invalid tool result name {self.name!r}: expected a string.")
        split_qualified_name(self.name)

    @property
    def ok(self) -> bool:
        """True when the call ran and did not fail (a call waiting for approval is not ok yet)."""
        return self.error is None and not self.pending

    @property
    def pending(self) -> bool:
        """True when the call waits for approval (``engine.approve`` / ``engine.deny``)."""
        return self.metadata.get("status") == "pending_approval"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready deep copy."""
        return {
            "call_id": self.call_id,
            "name": self.name,
            "result": copy.deepcopy(self.result),
            "error": self.error,
            "metadata": copy.deepcopy(self.metadata),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolResult:
        """Inverse of :meth:`to_dict`."""
        _require(data, ("name",), "ToolResult")
        return cls(
            data.get("call_id"),
            data["name"],
            copy.deepcopy(data.get("result")),
            data.get("error"),
            copy.deepcopy(data.get("metadata", {})),
        )


def distinct_tools(tools: Iterable[Tool]) -> list[Tool]:
    """``tools`` without repeats of a qualified name, the first of each kept, in order."""
    seen: set[str] = set()
    out = []
    for tool in tools:
        if tool.qualified_name not in seen:
            seen.add(tool.qualified_name)
            out.append(tool)
    return out
