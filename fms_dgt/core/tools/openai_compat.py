"""What every use of an OpenAI-compatible HTTP API shares.

The ``lm`` engine, the generation job's LLM text writer, the ``openai`` embeddings encoder and the
``output_parameters`` LLM strategy all call an OpenAI-compatible endpoint. They share how the HTTP
client is imported, how the API key is read (from an environment variable, sent as a bearer
token, never logged), how a one-off JSON request is posted and how a chat answer is read; each
classifies failures its own way.

The API key is registered with :mod:`fms_dgt.secrets` as soon as it is read, so it is hidden in
every error, result and log record (a gateway may echo the key it received); a key holding a
control character (read from a file with its trailing newline) is refused, naming the variable.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Mapping
from typing import Any

from fms_dgt.errors import ConfigError, DGTError
from fms_dgt.secrets import install_log_filter, redact, register_secret

__all__ = [
    "LM_PROVIDERS",
    "auth_headers",
    "chat_content",
    "http_client",
    "http_module",
    "lm_settings",
    "post_json",
]


def http_module() -> Any:
    """The HTTP client module: ``httpx2`` (installed with ``mcp``), else ``httpx``.

    Raises:
        DGTError: neither is installed.
    """
    for name in ("httpx2", "httpx"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise DGTError(
        "missing HTTP client: neither httpx2 nor httpx is installed. Install httpx (pip install httpx)."
    )


def auth_headers(api_key_env: str | None) -> dict[str, str]:
    """A bearer ``Authorization`` header from the variable ``api_key_env``, or none when unset.

    The key is registered as a secret.

    Raises:
        ConfigError: the key holds a control character (the variable is named, the key is not).
    """
    key = os.environ.get(api_key_env) if api_key_env else None
    if not key:
        return {}
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in key):
        raise ConfigError(
            f"invalid API key in environment variable {api_key_env}: it holds a control character "
            "(a trailing newline from a file?). Strip it where the variable is set"
        )
    register_secret(key)
    install_log_filter()
    return {"Authorization": f"Bearer {key}"}


def http_client(api_key_env: str | None, timeout: float) -> Any:
    """A pooled client that sends the API key with every request."""
    return http_module().Client(headers=auth_headers(api_key_env), timeout=timeout)


def post_json(
    url: str,
    payload: Mapping[str, Any],
    *,
    api_key_env: str | None,
    timeout: float,
    error: type[DGTError] = DGTError,
    max_bytes: int | None = None,
) -> Any:
    """POST JSON to an OpenAI-compatible endpoint and return the decoded answer.

    The request goes through a :class:`~fms_dgt.core.tools.transport.Sender`: redirects only
    within the URL's origin, the answer capped at ``max_bytes`` (10 MB by default, counted
    decompressed) and parsed within the parse limits.

    Raises:
        error: the request failed, the status was not 2xx, or the body is not usable JSON (the
            message is redacted, then cut).
    """
    from fms_dgt.core.tools.transport import DEFAULT_MAX_RESPONSE_BYTES, Sender, decode_json, origin_base

    sender = Sender(timeout=timeout, headers=auth_headers(api_key_env))
    try:
        reply = sender.send(
            "POST",
            url,
            origin_base(url),
            headers={"Content-Type": "application/json"},
            body={"content": json.dumps(dict(payload)).encode()},
            max_bytes=max_bytes or DEFAULT_MAX_RESPONSE_BYTES,
        )
        if reply.status >= 400:
            raise ValueError(f"HTTP {reply.status} {reply.reason}: {redact(reply.text)}")
        return decode_json(reply.content, f"the answer of {redact(url)}")
    except (DGTError, ValueError) as exc:
        raise error(
            f"request failed to {redact(url)}: {redact(str(exc))[:500]}. Check base_url, the model "
            "name and the API key variable."
        ) from None
    finally:
        sender.close()


def chat_content(answer: Any) -> str:
    """The text of the first choice of a ``/chat/completions`` answer.

    Raises:
        ValueError: the answer has no ``choices[0].message.content``.
    """
    try:
        return str(answer["choices"][0]["message"]["content"])
    except (KeyError, IndexError, TypeError) as exc:
        raise ValueError("the answer has no choices[0].message.content") from exc


#: Provider types of an ``lm_config`` block -> the OpenAI-compatible root they serve by default.
LM_PROVIDERS: dict[str, str | None] = {
    "ollama": "http://localhost:11434/v1",
    "openai": "https://api.openai.com/v1",
    "vllm": None,
    "vllm-remote": None,
    "openai-compatible": None,
}
_LM_RENAMES = (
    ("temperature", "temperature"),
    ("max_new_tokens", "max_tokens"),
    ("api_key_env", "api_key_env"),
)
_LM_KEYS = ("type", "model_id_or_path", "model", "base_url", "temperature", "max_new_tokens", "api_key_env")


def lm_settings(lm_config: Any) -> dict[str, Any]:
    """Settings of an OpenAI-compatible client from an ``lm_config`` block (the seed's shape).

    ``{type: ollama, model_id_or_path: granite3.3:8b, temperature: 0, max_new_tokens: 512}``
    becomes ``{base_url: http://localhost:11434/v1, model: granite3.3:8b, temperature: 0,
    max_tokens: 512}``. ``base_url`` overrides the provider's default root; providers without
    one (``vllm``, ``openai-compatible``) need it.

    Raises:
        ConfigError: the block is not a mapping, names an unknown provider or key, or lacks the
            model or a base URL.
    """
    from fms_dgt.errors import ConfigError

    if not isinstance(lm_config, Mapping):
        raise ConfigError("invalid lm_config: expected a mapping like {type: ollama, model_id_or_path: ...}")
    unknown = [k for k in lm_config if k not in _LM_KEYS]
    if unknown:
        accepted = ", ".join(_LM_KEYS)
        raise ConfigError(f"unknown key {unknown[0]!r} in lm_config: accepted keys are {accepted}")
    kind = lm_config.get("type")
    if kind not in LM_PROVIDERS:
        raise ConfigError(
            f"unknown lm_config type {kind!r}: fms_dgt speaks the OpenAI-compatible API, served by "
            f"{', '.join(LM_PROVIDERS)}. Use one of them, with base_url for a self-hosted server"
        )
    base_url = lm_config.get("base_url") or LM_PROVIDERS[kind]
    model = lm_config.get("model_id_or_path") or lm_config.get("model")
    if not base_url or not model:
        raise ConfigError(f"incomplete lm_config of type {kind!r}: it needs model_id_or_path and base_url")
    settings: dict[str, Any] = {"base_url": base_url, "model": model}
    for source, target in _LM_RENAMES:
        if lm_config.get(source) is not None:
            settings[target] = lm_config[source]
    return settings
