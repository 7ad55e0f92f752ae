"""What every use of an OpenAI-compatible HTTP API shares.

The ``lm`` engine, the generation job's LLM text writer, the ``openai`` embeddings encoder and the
``output_parameters`` LLM strategy all call an OpenAI-compatible endpoint. They share how the HTTP
client is imported, how the API key is read (from an environment variable, sent as a bearer
token, never logged), how a one-off JSON request is posted and how a chat answer is read; each
classifies failures its own way.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from typing import Any

from fms_dgt.errors import DGTError

__all__ = ["auth_headers", "chat_content", "http_client", "http_module", "post_json"]


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
    """A bearer ``Authorization`` header from the variable ``api_key_env``, or none when unset."""
    key = os.environ.get(api_key_env) if api_key_env else None
    return {"Authorization": f"Bearer {key}"} if key else {}


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
) -> Any:
    """POST JSON to an OpenAI-compatible endpoint and return the decoded answer.

    Raises:
        error: the request failed, the status was not 2xx, or the body is not JSON.
    """
    httpx = http_module()
    try:
        response = httpx.post(url, json=dict(payload), headers=auth_headers(api_key_env), timeout=timeout)
        response.raise_for_status()
        return response.json()
    except (httpx.HTTPError, ValueError) as exc:
        raise error(
            f"request failed to {url}: {exc}. Check base_url, the model name and the API key variable."
        ) from exc


def chat_content(answer: Any) -> str:
    """The text of the first choice of a ``/chat/completions`` answer.

    Raises:
        ValueError: the answer has no ``choices[0].message.content``.
    """
    try:
        return str(answer["choices"][0]["message"]["content"])
    except (KeyError, IndexError, TypeError) as exc:
        raise ValueError("the answer has no choices[0].message.content") from exc
