"""Projection of tools, calls and results to provider wire formats.

Formats: OpenAI Chat Completions (``openai``), OpenAI Responses (``openai-responses``), Anthropic
Messages (``anthropic``) and Gemini function declarations (``gemini``).

**Names.** Providers restrict tool names (OpenAI and Anthropic: ``^[a-zA-Z0-9_-]{1,64}$``).
:class:`NameCodec` maps qualified names to provider names reversibly and without collisions:
``weather_api::get_weather`` becomes ``weather_api__get_weather``; characters outside the pattern
become ``_``; a name that would be too long, or that would collide with another tool's, is
shortened and given a stable hash suffix. The mapping depends only on the set of names (not their
order) and travels with every record (``name_map``), so a call read back from a model decodes to
exactly one registry tool.

**Schemas.** ``strict=True`` applies OpenAI's strict-mode shape (``additionalProperties: false``
on every object, every property required, optional ones made nullable). ``bindings`` remove
arguments injected at call time from the projected schema (:func:`apply_bindings` injects them).
Gemini receives a schema without ``$ref``/``$defs`` (references inlined, recursion cut at a depth
and marked) and without keywords its schema subset does not have.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.errors import DGTError

__all__ = [
    "FORMATS",
    "Message",
    "NameCodec",
    "WireError",
    "apply_bindings",
    "convert_messages",
    "project_tool",
    "project_tools",
]

FORMATS = ("openai", "openai-responses", "anthropic", "gemini")
_MAX_LEN = 64
_INVALID = re.compile(r"[^a-zA-Z0-9_-]")
_HASH_LEN = 8


class WireError(DGTError):
    """A name or message cannot be mapped to or from a provider format."""


def _sanitise(qualified_name: str) -> str:
    name = _INVALID.sub("_", qualified_name.replace("::", "__"))
    return name if name[:1].isalpha() or name[:1] == "_" else f"_{name}"


def _hashed(qualified_name: str, base: str, length: int) -> str:
    digest = hashlib.sha256(qualified_name.encode()).hexdigest()[:length]
    return f"{base[: _MAX_LEN - length - 1]}_{digest}"


class NameCodec:
    """A reversible, collision-free mapping between qualified names and provider names.

    Args:
        qualified_names: every name the codec must encode (duplicates are ignored).

    Raises:
        WireError: two names cannot be told apart even with long hashes (practically never).
    """

    def __init__(self, qualified_names: Iterable[str]):
        names = sorted(set(qualified_names))
        by_plain: dict[str, list[str]] = {}
        for name in names:
            by_plain.setdefault(_sanitise(name), []).append(name)
        encoded: dict[str, str] = {}
        for plain, group in by_plain.items():
            # Every member of a colliding group gets a hash, so one tool's provider name never
            # depends on which other tools happen to be loaded first.
            for name in group:
                too_long = len(plain) > _MAX_LEN
                encoded[name] = _hashed(name, plain, _HASH_LEN) if too_long or len(group) > 1 else plain
        self._encode = self._resolve_clashes(encoded)
        self._decode = {v: k for k, v in self._encode.items()}

    @staticmethod
    def _resolve_clashes(encoded: dict[str, str]) -> dict[str, str]:
        seen: dict[str, str] = {}
        for name in sorted(encoded):
            wire = encoded[name]
            length = _HASH_LEN
            while wire in seen:
                length += 4
                if length > 40:
                    raise WireError(f"cannot encode {name!r}: it collides with {seen[wire]!r}.")
                wire = _hashed(name, _sanitise(name), length)
            seen[wire] = name
            encoded[name] = wire
        return encoded

    def encode(self, qualified_name: str) -> str:
        """The provider name of a qualified name.

        Raises:
            WireError: the name was not given to the codec.
        """
        try:
            return self._encode[qualified_name]
        except KeyError:
            raise WireError(
                f"unknown tool {qualified_name!r} for this name codec: build the codec over every "
                "tool the record uses."
            ) from None

    def decode(self, provider_name: str) -> str:
        """The qualified name of a provider name.

        Raises:
            WireError: no tool has that provider name (e.g. the model invented one).
        """
        try:
            return self._decode[provider_name]
        except KeyError:
            raise WireError(
                f"unknown provider tool name {provider_name!r}: it maps to no tool of this record "
                "(the model may have invented it)."
            ) from None

    @property
    def name_map(self) -> dict[str, str]:
        """Provider name -> qualified name (what records carry)."""
        return dict(sorted(self._decode.items()))

    @classmethod
    def from_name_map(cls, name_map: Mapping[str, str]) -> NameCodec:
        """Rebuild a codec from a record's ``name_map``."""
        codec = cls.__new__(cls)
        codec._decode = dict(name_map)
        codec._encode = {v: k for k, v in name_map.items()}
        return codec


# ---------------------------------------------------------------- schemas


def _without_bound(schema: dict[str, Any], bound: Iterable[str]) -> dict[str, Any]:
    names = set(bound)
    if not names:
        return schema
    out = dict(schema)
    out["properties"] = {k: v for k, v in schema.get("properties", {}).items() if k not in names}
    if "required" in schema:
        out["required"] = [r for r in schema["required"] if r not in names]
    return out


def _nullable(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema
    kind = schema.get("type")
    if isinstance(kind, str):
        return {**schema, "type": [kind, "null"]} if kind != "null" else schema
    if isinstance(kind, list):
        return schema if "null" in kind else {**schema, "type": [*kind, "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def strict_schema(schema: Any) -> Any:
    """OpenAI strict-mode shape: closed objects, all properties required, optional ones nullable."""
    if isinstance(schema, list):
        return [strict_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {
        k: strict_schema(v) if k in ("items", "anyOf", "allOf", "oneOf", "prefixItems") else v
        for k, v in schema.items()
    }
    if "$defs" in schema:
        out["$defs"] = {k: strict_schema(v) for k, v in schema["$defs"].items()}
    if schema.get("type") == "object" or "properties" in schema:
        props = schema.get("properties", {})
        required = set(schema.get("required", ()))
        out["properties"] = {
            k: strict_schema(v) if k in required else _nullable(strict_schema(v)) for k, v in props.items()
        }
        out["required"] = list(props)
        out["additionalProperties"] = False
    return out


_GEMINI_KEYS = frozenset(
    {
        "type",
        "format",
        "description",
        "nullable",
        "enum",
        "properties",
        "required",
        "items",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "anyOf",
        "title",
        "default",
        "propertyOrdering",
        "minProperties",
        "maxProperties",
    }
)
_GEMINI_MAX_DEPTH = 8


def gemini_schema(schema: Any, defs: Mapping[str, Any] | None = None, depth: int = 0) -> Any:
    """A schema in Gemini's OpenAPI subset: ``$ref`` inlined (recursion cut and marked), single
    types with ``nullable``, ``const`` as ``enum``, unsupported keywords dropped."""
    if not isinstance(schema, dict):
        return {} if schema is True or schema is None else schema
    defs = {**(defs or {}), **schema.get("$defs", {}), **schema.get("definitions", {})}
    if "$ref" in schema:
        return _gemini_ref(schema, defs, depth)
    if depth > _GEMINI_MAX_DEPTH:
        return {"type": "object", "description": "(nested schema cut at depth limit)"}
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties":
            out[key] = {k: gemini_schema(v, defs, depth + 1) for k, v in value.items()}
        elif key == "items":
            out[key] = gemini_schema(value, defs, depth + 1)
        elif key in ("anyOf", "oneOf"):
            out["anyOf"] = [gemini_schema(v, defs, depth + 1) for v in value]
        elif key == "const":
            out["enum"] = [value]
        elif key in _GEMINI_KEYS:
            out[key] = value
    return _gemini_type(out)


def _gemini_ref(schema: dict[str, Any], defs: Mapping[str, Any], depth: int) -> Any:
    ref = str(schema["$ref"])
    target = defs.get(ref.rsplit("/", 1)[-1]) if ref.startswith("#/") else None
    if target is None or depth > _GEMINI_MAX_DEPTH:
        return {"type": "object", "description": f"(recursive reference {ref} cut)"}
    merged = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    return gemini_schema(merged, defs, depth + 1)


def _gemini_type(out: dict[str, Any]) -> dict[str, Any]:
    kind = out.get("type")
    if isinstance(kind, list):
        others = [k for k in kind if k != "null"]
        if "null" in kind:
            out["nullable"] = True
        if len(others) == 1:
            out["type"] = others[0]
        else:
            del out["type"]
            if others:
                out["anyOf"] = [{"type": k} for k in others]
    if out.get("enum") is not None and out.get("type") != "string":
        # Gemini accepts enums of strings only.
        out["enum"] = [str(v) for v in out["enum"]]
        out["type"] = "string"
    return out


# ---------------------------------------------------------------- tools


def _input_schema(tool: Tool, bindings: Mapping[str, Any] | None, strict: bool) -> dict[str, Any]:
    # A JSON round trip copies plain JSON data several times faster than copy.deepcopy.
    schema = _without_bound(json.loads(json.dumps(tool.parameters)), (bindings or {}).keys())
    return strict_schema(schema) if strict else schema


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
    name = codec.encode(tool.qualified_name)
    schema = _input_schema(tool, bindings, strict)
    if fmt == "openai":
        function: dict[str, Any] = {"name": name, "description": tool.description, "parameters": schema}
        if strict:
            function["strict"] = True
        return {"type": "function", "function": function}
    if fmt == "openai-responses":
        return {
            "type": "function",
            "name": name,
            "description": tool.description,
            "parameters": schema,
            "strict": strict,
        }
    if fmt == "anthropic":
        return {"name": name, "description": tool.description, "input_schema": schema}
    if fmt == "gemini":
        return {"name": name, "description": tool.description, "parameters": gemini_schema(schema)}
    raise WireError(f"unknown wire format {fmt!r}: use one of {', '.join(FORMATS)}.")


def project_tools(
    tools: Sequence[Tool],
    fmt: str,
    *,
    codec: NameCodec | None = None,
    strict: bool = False,
    bindings: Mapping[str, Mapping[str, Any]] | None = None,
) -> tuple[list[dict[str, Any]] | dict[str, Any], NameCodec]:
    """Project several tools; returns the provider payload and the codec used.

    Overloads share a qualified name; providers cannot tell them apart, so only distinct names
    are projected (the first overload of each). For Gemini the payload is one
    ``{"function_declarations": [...]}`` object.

    Args:
        bindings: qualified name -> arguments injected at call time (hidden from the model).
    """
    codec = codec or NameCodec(t.qualified_name for t in tools)
    seen: set[str] = set()
    out = []
    for tool in tools:
        if tool.qualified_name in seen:
            continue
        seen.add(tool.qualified_name)
        out.append(
            project_tool(
                tool, fmt, codec=codec, strict=strict, bindings=(bindings or {}).get(tool.qualified_name)
            )
        )
    if fmt == "gemini":
        return {"function_declarations": out}, codec
    return out, codec


def apply_bindings(call: ToolCall, bindings: Mapping[str, Mapping[str, Any]]) -> ToolCall:
    """The call with its tool's bound arguments injected (bound values win)."""
    bound = bindings.get(call.name)
    if not bound:
        return call
    return ToolCall(call.name, {**call.arguments, **bound}, call.call_id)


# ---------------------------------------------------------------- messages


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


def _result_text(result: ToolResult) -> str:
    if result.error is not None:
        return json.dumps({"error": result.error}, ensure_ascii=False)
    value = result.result
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _call_id(call: ToolCall, index: int) -> str:
    return call.call_id or f"call_{index}"


def convert_messages(messages: Sequence[Message], fmt: str, codec: NameCodec) -> dict[str, Any]:
    """A conversation in a provider's request layout.

    Returns:
        ``{"messages": [...]}`` (OpenAI chat, Anthropic, with ``system`` separate for Anthropic),
        ``{"input": [...]}`` (OpenAI Responses) or ``{"contents": [...]}`` (Gemini, with
        ``system_instruction``).

    Raises:
        WireError: unknown format or role.
    """
    converters = {
        "openai": _to_openai,
        "openai-responses": _to_responses,
        "anthropic": _to_anthropic,
        "gemini": _to_gemini,
    }
    if fmt not in converters:
        raise WireError(f"unknown wire format {fmt!r}: use one of {', '.join(FORMATS)}.")
    for message in messages:
        if message.role not in ("system", "user", "assistant", "tool"):
            raise WireError(f"unknown message role {message.role!r}: use system, user, assistant or tool.")
    return converters[fmt](messages, codec)


def _to_openai(messages: Sequence[Message], codec: NameCodec) -> dict[str, Any]:
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "tool":
            out.extend(
                {"role": "tool", "tool_call_id": r.call_id, "content": _result_text(r)} for r in m.results
            )
        elif m.tool_calls:
            out.append(
                {
                    "role": "assistant",
                    "content": m.content or None,
                    "tool_calls": [
                        {
                            "id": _call_id(c, i),
                            "type": "function",
                            "function": {
                                "name": codec.encode(c.name),
                                "arguments": json.dumps(c.arguments, ensure_ascii=False, sort_keys=True),
                            },
                        }
                        for i, c in enumerate(m.tool_calls)
                    ],
                }
            )
        else:
            out.append({"role": m.role, "content": m.content})
    return {"messages": out}


def _to_responses(messages: Sequence[Message], codec: NameCodec) -> dict[str, Any]:
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "tool":
            out.extend(
                {"type": "function_call_output", "call_id": r.call_id, "output": _result_text(r)}
                for r in m.results
            )
            continue
        if m.content or not m.tool_calls:
            out.append({"role": m.role, "content": m.content})
        out.extend(
            {
                "type": "function_call",
                "call_id": _call_id(c, i),
                "name": codec.encode(c.name),
                "arguments": json.dumps(c.arguments, ensure_ascii=False, sort_keys=True),
            }
            for i, c in enumerate(m.tool_calls)
        )
    return {"input": out}


def _split_system(messages: Sequence[Message]) -> tuple[str, list[Message]]:
    """System text (joined) and the other turns, for layouts that carry the system prompt apart."""
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    return system, [m for m in messages if m.role != "system"]


def _to_anthropic(messages: Sequence[Message], codec: NameCodec) -> dict[str, Any]:
    system, turns = _split_system(messages)
    out: list[dict[str, Any]] = []
    for m in turns:
        if m.role == "tool":
            out.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": r.call_id,
                            "content": _result_text(r),
                            **({"is_error": True} if r.error is not None else {}),
                        }
                        for r in m.results
                    ],
                }
            )
        elif m.tool_calls:
            blocks: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
            blocks.extend(
                {"type": "tool_use", "id": _call_id(c, i), "name": codec.encode(c.name), "input": c.arguments}
                for i, c in enumerate(m.tool_calls)
            )
            out.append({"role": "assistant", "content": blocks})
        else:
            out.append({"role": m.role, "content": m.content})
    return {"system": system, "messages": out} if system else {"messages": out}


def _to_gemini(messages: Sequence[Message], codec: NameCodec) -> dict[str, Any]:
    system, turns = _split_system(messages)
    out: list[dict[str, Any]] = []
    for m in turns:
        if m.role == "tool":
            out.append(
                {
                    "role": "user",
                    "parts": [
                        {
                            "functionResponse": {
                                "name": codec.encode(r.name),
                                "response": {"error": r.error}
                                if r.error is not None
                                else {"result": r.result},
                            }
                        }
                        for r in m.results
                    ],
                }
            )
        elif m.role == "assistant":
            parts: list[dict[str, Any]] = [{"text": m.content}] if m.content else []
            parts.extend(
                {"functionCall": {"name": codec.encode(c.name), "args": c.arguments}} for c in m.tool_calls
            )
            out.append({"role": "model", "parts": parts})
        else:
            out.append({"role": "user", "parts": [{"text": m.content}]})
    payload: dict[str, Any] = {"contents": out}
    if system:
        payload["system_instruction"] = {"parts": [{"text": system}]}
    return payload
