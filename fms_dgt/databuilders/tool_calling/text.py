"""The user turn and the final assistant turn of a record.

Offline (``type: template``) both come from templates filled with the tools' descriptions, the
arguments the user must supply, and the results. With ``type: llm`` an OpenAI-compatible chat
endpoint writes them (the request it answers is shown the planned calls, so the user turn asks for
exactly what the calls do).
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult, split_qualified_name
from fms_dgt.core.tools.openai_compat import chat_content, http_client
from fms_dgt.errors import TextError

__all__ = ["LLMText", "TemplateText", "TextWriter", "make_text_writer"]

_OPENERS = (
    "Could you help me with this?",
    "I need a hand.",
    "Please do the following for me.",
    "Quick task:",
)
_THENS = ("Then", "After that,", "Next,", "Using that,")


class TextWriter(Protocol):
    """Writes the natural-language turns of a record."""

    def user_turn(
        self,
        tools: Sequence[Tool],
        calls: Sequence[ToolCall],
        given: Sequence[Mapping[str, Any]],
        rng: random.Random,
    ) -> str:
        """The request that leads to ``calls``; ``given[i]`` are the arguments the user states."""
        ...

    def final_turn(self, calls: Sequence[ToolCall], results: Sequence[ToolResult], rng: random.Random) -> str:
        """The assistant's answer after the results."""
        ...


def _phrase(tool: Tool) -> str:
    text = tool.description.strip().split("\n")[0].rstrip(".") or tool.name.replace("_", " ")
    return text[0].lower() + text[1:] if text[:1].isupper() and not text[1:2].isupper() else text


def _arguments(given: Mapping[str, Any]) -> str:
    if not given:
        return ""
    parts = [
        f"{k} {json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v}" for k, v in given.items()
    ]
    return " (" + ", ".join(parts) + ")"


def _short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class TemplateText:
    """Template-based turns (offline, deterministic)."""

    def user_turn(
        self,
        tools: Sequence[Tool],
        calls: Sequence[ToolCall],
        given: Sequence[Mapping[str, Any]],
        rng: random.Random,
    ) -> str:
        """One sentence per call, in order, naming the user's own arguments."""
        sentences = []
        for index, (tool, args) in enumerate(zip(tools, given, strict=True)):
            text = f"{_phrase(tool)}{_arguments(args)}."
            sentences.append(f"{rng.choice(_THENS)} {text}" if index else text[:1].upper() + text[1:])
        return f"{rng.choice(_OPENERS)} " + " ".join(sentences)

    def final_turn(self, calls: Sequence[ToolCall], results: Sequence[ToolResult], rng: random.Random) -> str:
        """A summary of each result (or failure)."""
        lines = []
        for result in results:
            name = split_qualified_name(result.name)[1]
            if result.error is not None:
                lines.append(f"- {name} failed: {_short(result.error)}")
            else:
                lines.append(f"- {name}: {_short(result.result)}")
        return "Here is what I found:\n" + "\n".join(lines)


class LLMText:
    """Turns written by an OpenAI-compatible chat model.

    Args:
        base_url: API root; ``/chat/completions`` is appended.
        model: model name.
        api_key_env: environment variable with the key (optional for local servers).
        temperature: sampling temperature.
        request_timeout: seconds per request.
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key_env: str = "OPENAI_API_KEY",
        temperature: float = 0.7,
        request_timeout: float = 60.0,
    ) -> None:
        self._client = http_client(api_key_env, request_timeout)
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.temperature = temperature

    def _ask(self, instruction: str, payload: Any, rng: random.Random) -> str:
        body = {
            "model": self.model,
            "temperature": self.temperature,
            "seed": rng.randrange(2**31),
            "messages": [
                {"role": "system", "content": instruction},
                {"role": "user", "content": json.dumps(payload, ensure_ascii=False, sort_keys=True)},
            ],
        }
        try:
            response = self._client.post(self.url, json=body)
            response.raise_for_status()
            return chat_content(response.json()).strip()
        except Exception as exc:
            raise TextError(f"text model at {self.url} failed: {type(exc).__name__}: {exc}") from exc

    def user_turn(
        self,
        tools: Sequence[Tool],
        calls: Sequence[ToolCall],
        given: Sequence[Mapping[str, Any]],
        rng: random.Random,
    ) -> str:
        """A natural request that needs exactly the planned calls."""
        plan = [
            {"tool": t.name, "description": t.description, "user_supplies": g}
            for t, g in zip(tools, given, strict=True)
        ]
        return self._ask(
            "Write the message a user would send to an assistant so that it must make these tool "
            "calls, stating every value in user_supplies. Reply with the message only.",
            plan,
            rng,
        )

    def final_turn(self, calls: Sequence[ToolCall], results: Sequence[ToolResult], rng: random.Random) -> str:
        """The assistant's answer given the results."""
        payload = [{"tool": r.name, "result": r.result, "error": r.error} for r in results]
        return self._ask(
            "Write the assistant's final answer to the user given these tool results. "
            "Mention failures honestly. Reply with the answer only.",
            payload,
            rng,
        )

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()


def make_text_writer(config: Mapping[str, Any]) -> TextWriter:
    """The writer a ``generation.text`` block asks for."""
    if config.get("type") == "llm":
        options = {k: v for k, v in config.items() if k != "type"}
        return LLMText(**options)
    return TemplateText()
