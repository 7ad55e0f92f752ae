"""The ``lm`` engine: tool results simulated by a language model.

Calls an OpenAI-compatible ``/chat/completions`` endpoint. The prompt describes the tool (name,
description, input and output schemas), the call's arguments and the session's earlier calls and
results, so simulated results stay consistent within a session. When the tool has
``output_parameters`` the request asks for ``response_format: json_schema`` with that schema, named
after the tool and in strict mode where the schema allows it (:func:`response_format`), and the reply
is validated against it (a violation is a failed call). An answer that is not JSON at all is kept
as text, with a note in ``metadata["note"]``.

``errors`` injects failures on purpose, drawn from the run's seed (so the same run injects the same
failures): ``network_error`` (the call fails as if the service were unreachable),
``unparseable_result`` (the result is cut-off text) and ``schema_violation`` (a required field of
the result is removed). Injected failures are marked in ``metadata["injected"]``.

The API key is read from the environment variable named by ``api_key_env`` when the engine is
configured (a key holding a control character is refused, naming the variable) and registered
with :mod:`fms_dgt.secrets`: it never appears in results, errors or logs, even when the endpoint
echoes it in an error body (bodies are redacted, then cut). Requests go through a
:class:`~fms_dgt.core.tools.transport.Sender`: redirects only within ``base_url``, answers capped
at ``max_response_bytes`` (counted decompressed) and parsed within the parse limits.

The seed project's config shape is accepted as well: ``lm_config: {type: ollama, model_id_or_path:
..., temperature: ..., max_new_tokens: ...}`` in place of ``base_url``/``model`` (any provider that
serves the OpenAI-compatible API), and ``error_categories: [{type, probability, message}]`` in place
of ``errors``. One difference: categories are drawn as one roll over their summed probabilities (at
most one failure per call), not independently.
"""

from __future__ import annotations

import json
import random
import re
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.engines.base import (
    ENGINE_KEYS,
    POLICY_KEYS,
    CallPolicy,
    RetryableError,
    ToolEngine,
)
from fms_dgt.core.tools.engines.mock import call_seed
from fms_dgt.core.tools.openai_compat import auth_headers, chat_content, lm_settings
from fms_dgt.core.tools.schema import get_validator
from fms_dgt.core.tools.transport import (
    DEFAULT_MAX_RESPONSE_BYTES,
    Base,
    Reply,
    Sender,
    byte_cap,
    decode_json,
    parse_base,
)
from fms_dgt.core.tools.wire.schemas import strict_schema
from fms_dgt.errors import ConfigError, HTTPTransportError, RESTCallError
from fms_dgt.plugins import register_tool_engine
from fms_dgt.secrets import redact

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = ["LMToolEngine"]

_ERROR_KINDS = ("network_error", "unparseable_result", "schema_violation")
_SYSTEM = (
    "You simulate the backend of a software tool. Reply with the tool's result only, as JSON, "
    "consistent with the tool's description, its output schema, the arguments and the earlier "
    "results of this session. Never explain."
)


@register_tool_engine("lm")
class LMToolEngine(ToolEngine):
    """Results from an OpenAI-compatible chat model.

    Args:
        registry: the tools.
        base_url: the API root (``http://127.0.0.1:8000/v1``); ``/chat/completions`` is appended.
        model: the model name.
        api_key_env: environment variable holding the API key (optional for local servers).
        temperature: sampling temperature.
        seed: seed of error injection (and sent to the endpoint).
        errors: probability per injected failure kind (``network_error``, ``unparseable_result``,
            ``schema_violation``).
        error_messages: the error text of an injected failure kind (``network_error``).
        max_tokens: longest answer the model may give (sent as ``max_tokens``).
        history: how many earlier calls of the session go into the prompt.
        request_timeout: seconds per HTTP request.
        max_response_bytes: largest answer read, counted decompressed (default 10 MB).
        max_workers: batch parallelism.
        policy: call policy.

    Raises:
        ConfigError: an invalid ``base_url``, error rates, or an API key with a control character.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        base_url: str,
        model: str,
        api_key_env: str = "OPENAI_API_KEY",
        temperature: float = 0.0,
        seed: int = 0,
        errors: Mapping[str, float] | None = None,
        error_messages: Mapping[str, str] | None = None,
        max_tokens: int | None = None,
        history: int = 8,
        request_timeout: float = 60.0,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        max_workers: int = 4,
        policy: CallPolicy | None = None,
    ) -> None:
        super().__init__(registry, max_workers=max_workers, policy=policy)
        self.base_url = base_url.rstrip("/")
        self._base = _endpoint_base(self.base_url)
        auth_headers(api_key_env)  # refuse a bad key now, and register it as a secret
        self.model = model
        self.api_key_env = api_key_env
        self.temperature = temperature
        self.seed = seed
        self.errors = _check_rates(errors or {})
        self.error_messages = dict(error_messages or {})
        self.max_tokens = max_tokens
        self.history = history
        self.request_timeout = request_timeout
        self.max_response_bytes = byte_cap(max_response_bytes, "lm")
        self._sender: Sender | None = None
        self._sender_lock = threading.Lock()

    extra_config_keys = (*POLICY_KEYS, *ENGINE_KEYS, "lm_config", "error_categories")

    @classmethod
    def prepare_config(cls, settings: Mapping[str, Any]) -> dict[str, Any]:
        """Also accept the seed's ``lm_config`` and ``error_categories`` blocks."""
        out = dict(settings)
        if "lm_config" in out:
            translated = lm_settings(out.pop("lm_config"))
            clash = sorted(k for k in translated if k in out)
            if clash:
                raise ConfigError(
                    f"conflicting keys for the lm engine: lm_config and {clash[0]!r} both set it"
                )
            out.update(translated)
        if "error_categories" in out:
            if "errors" in out:
                raise ConfigError("conflicting keys for the lm engine: give errors or error_categories")
            out["errors"], out["error_messages"] = _categories(out.pop("error_categories"))
        return super().prepare_config(out)

    def cache_material(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> dict[str, Any]:
        """The model, its sampling settings, the prompt and the failure drawn for injection: a
        recorded answer is replayed only for the same question to the same model."""
        return {
            "model": self.model,
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            "system": _SYSTEM,
            "prompt": self._prompt(tool, call, state),
            "response_format": response_format(tool) if tool.output_parameters else None,
            "injected": self._injected(tool, call, state),
        }

    def call(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> ToolResult:
        """Ask the model for the result (or inject a failure)."""
        injected = self._injected(tool, call, state)
        if injected == "network_error":
            return ToolResult(
                call.call_id,
                call.name,
                error=self.error_messages.get(
                    "network_error", "network error: the service did not answer (injected)"
                ),
                metadata={"injected": injected},
            )
        value, note = self._ask(tool, call, state)
        if injected == "unparseable_result":
            text = json.dumps(value, ensure_ascii=False)
            return ToolResult(
                call.call_id,
                call.name,
                result=text[: max(1, len(text) // 2)],
                metadata={"injected": injected},
            )
        if injected == "schema_violation":
            return ToolResult(
                call.call_id, call.name, result=_violate(value, tool), metadata={"injected": injected}
            )
        metadata: dict[str, Any] = {"model": self.model}
        if note:
            metadata["note"] = note
        return ToolResult(call.call_id, call.name, result=value, metadata=metadata)

    def _injected(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> str | None:
        """The failure injected into this call, if any (drawn from the seed and the call)."""
        rng = random.Random(call_seed(self.seed, state.get("session_id"), call.call_id, tool.qualified_name))
        roll = rng.random()
        for kind in _ERROR_KINDS:
            roll -= self.errors.get(kind, 0.0)
            if roll < 0:
                return kind
        return None

    def _ask(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> tuple[Any, str | None]:
        """The model's result for one call, and a note when its answer was not JSON."""
        body: dict[str, Any] = {
            "model": self.model,
            "temperature": self.temperature,
            "seed": self.seed,
            "messages": [
                {"role": "system", "content": _SYSTEM},
                {"role": "user", "content": self._prompt(tool, call, state)},
            ],
        }
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if tool.output_parameters:
            body["response_format"] = response_format(tool)
        content = self._post(body)
        try:
            value = decode_json(content, f"the answer of model {self.model}")
        except json.JSONDecodeError:
            # A model that ignores the requested format still said something: keep it as text
            # (the policy's result validation judges it) rather than failing the call.
            return content, "the model's answer is not JSON: kept as text"
        if tool.output_parameters:
            reason = get_validator(tool.output_parameters).explain(value)
            if reason is not None:
                raise ValueError(f"the model's result violates the output schema: {reason}")
        return value, None

    def _prompt(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> str:
        earlier = state.get("calls", [])[-self.history :] if self.history else []
        lines = [
            f"Tool: {tool.qualified_name}",
            f"Description: {tool.description}",
            f"Input schema: {json.dumps(tool.parameters, sort_keys=True)}",
        ]
        if tool.output_parameters:
            lines.append(f"Output schema: {json.dumps(tool.output_parameters, sort_keys=True)}")
        for item in earlier:
            lines.append(
                f"Earlier call: {json.dumps(item['call'], sort_keys=True)} -> "
                f"{json.dumps(item['result'].get('result'), sort_keys=True)}"
            )
        lines.append(f"Arguments: {json.dumps(call.arguments, sort_keys=True)}")
        return "\n".join(lines)

    def _post(self, body: dict[str, Any]) -> str:
        try:
            reply = self._http().send(
                "POST",
                f"{self.base_url}/chat/completions",
                self._base,
                headers={"Content-Type": "application/json"},
                body={"content": json.dumps(body).encode()},
                max_bytes=self.max_response_bytes,
            )
        except HTTPTransportError as exc:
            raise RetryableError(f"cannot reach the model endpoint: {exc}") from None
        if reply.status == 429 or reply.status >= 500:
            raise RetryableError(f"model endpoint {self.base_url} answered {reply.status}")
        if reply.status >= 400:
            # Gateways echo the key they received: redact the body before cutting it.
            raise ValueError(f"model endpoint {self.base_url} answered {reply.status}: {_excerpt(reply)}")
        try:
            return chat_content(decode_json(reply.content, f"the answer of {self.base_url}"))
        except ValueError:
            raise ValueError(f"unexpected reply from {self.base_url}: {_excerpt(reply)!r}") from None

    def _http(self) -> Sender:
        with self._sender_lock:
            if self._sender is None:
                headers = auth_headers(self.api_key_env)
                self._sender = Sender(
                    timeout=self.request_timeout,
                    headers=headers,
                    max_retry_after=self.policy.max_retry_after,
                    backoff=self.policy.backoff,
                )
            return self._sender

    def close(self) -> None:
        """Close the HTTP client and every session."""
        super().close()
        with self._sender_lock:
            sender, self._sender = self._sender, None
        if sender is not None:
            sender.close()


def _endpoint_base(base_url: str) -> Base:
    try:
        return parse_base(base_url)
    except RESTCallError as exc:
        raise ConfigError(f"{exc} (the lm engine's base_url)") from None


def _excerpt(reply: Reply) -> str:
    return redact(reply.text)[:200]


def _check_rates(errors: Mapping[str, float]) -> dict[str, float]:
    unknown = [k for k in errors if k not in _ERROR_KINDS]
    if unknown:
        raise ConfigError(
            f"unknown error kind {unknown[0]!r} for the lm engine: use {', '.join(_ERROR_KINDS)}"
        )
    rates = {k: float(v) for k, v in errors.items()}
    if any(r < 0 for r in rates.values()) or sum(rates.values()) > 1:
        raise ConfigError(
            "invalid error rates for the lm engine: each must be >= 0 and they must sum to <= 1"
        )
    return rates


def response_format(tool: Tool) -> dict[str, Any]:
    """The ``json_schema`` response format for a tool's result, named after the tool.

    OpenAI's strict mode (``strict: true``: every object closed with ``additionalProperties:
    false``, every property required, optional ones nullable) is asked for where the schema can be
    written that way; a schema with free-form objects or keywords strict mode lacks is sent as it
    is, with ``strict: false``.
    """
    schema = tool.output_parameters
    strict = _strictable(schema)
    return {
        "type": "json_schema",
        "json_schema": {
            "name": _NAME.sub("_", tool.name)[:64] or "tool_result",
            "schema": strict_schema(schema) if strict else schema,
            "strict": strict,
        },
    }


_NAME = re.compile(r"[^A-Za-z0-9_-]")
_NOT_STRICT = frozenset(
    {"patternProperties", "dependentSchemas", "if", "then", "else", "not", "propertyNames"}
)


def _strictable(schema: Any) -> bool:
    """True when every object of ``schema`` lists its properties and admits no others."""
    if isinstance(schema, list):
        return all(_strictable(s) for s in schema)
    if not isinstance(schema, dict):
        return True
    if _NOT_STRICT.intersection(schema):
        return False
    is_object = schema.get("type") == "object" or "properties" in schema
    if is_object and (
        not schema.get("properties") or schema.get("additionalProperties") not in (None, False)
    ):
        return False
    children = [
        *(schema.get("properties") or {}).values(),
        *(schema.get("$defs") or {}).values(),
        *[schema[k] for k in ("items", "anyOf", "allOf", "oneOf", "prefixItems") if k in schema],
    ]
    return all(_strictable(c) for c in children)


def _categories(categories: Any) -> tuple[dict[str, float], dict[str, str]]:
    """``errors`` and ``error_messages`` from a list of ``{type, probability, message}``."""
    if not isinstance(categories, list):
        raise ConfigError("invalid error_categories: expected a list of {type, probability, message}")
    rates: dict[str, float] = {}
    messages: dict[str, str] = {}
    for index, item in enumerate(categories):
        if not isinstance(item, Mapping) or "type" not in item or "probability" not in item:
            raise ConfigError(f"invalid error_categories[{index}]: expected {{type, probability, message}}")
        rates[str(item["type"])] = float(item["probability"])
        if item.get("message"):
            messages[str(item["type"])] = str(item["message"])
    return rates, messages


def _violate(value: Any, tool: Tool) -> Any:
    required = tool.output_parameters.get("required", [])
    if isinstance(value, dict) and required:
        return {k: v for k, v in value.items() if k != required[0]}
    return {"unexpected": value}
