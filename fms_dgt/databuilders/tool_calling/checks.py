"""Whether a record's words say what its plan does.

Two kinds of check return a :class:`Verdict` (the job writes a failed one to ``rejects.jsonl`` with
its reason):

* :func:`offline_check`: structural and instant. The request carries no implementation notes
  (:func:`implementation_notes`), links calls ("then use that ...") only when a value flows between
  them (:func:`linking_phrases`), states every value the user gives; no turn holds a JSON dump
  (:func:`json_dump`).
* :class:`ModelCheck`: semantic verification by a chat model, as the third stage of APIGen: does the
  request call for exactly these calls with these values; for a no-call record, does no offered tool
  serve it, or is the missing value really missing. The model's answer is untrusted: bounded,
  cleaned, and a missing or garbled verdict is a rejection that says so.

:class:`ChatModel` is the one client of the text model (the writer and the check share it): it
loads the prompts in ``prompts/``, bounds and cleans every answer, and turns transport failures
into :class:`~fms_dgt.errors.TextError`.
"""

from __future__ import annotations

import json
import random
import re
import time
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.openai_compat import auth_headers, chat_content
from fms_dgt.databuilders.tool_calling.phrases import VALUE_LIMIT, plain
from fms_dgt.databuilders.tool_calling.plan import CALLS, PlannedCall, RecordPlan
from fms_dgt.databuilders.tool_calling.wording import described, implementation_notes
from fms_dgt.errors import DGTError, HTTPTransportError, TextError
from fms_dgt.secrets import redact

if TYPE_CHECKING:
    from fms_dgt.databuilders.tool_calling.text import RecordText

__all__ = [
    "PROMPT_STAGES",
    "ChatModel",
    "ModelCheck",
    "Verdict",
    "answer_payload",
    "call_payload",
    "check_payload",
    "implementation_notes",
    "json_dump",
    "linking_phrases",
    "offline_check",
    "prompt",
    "request_payload",
    "tool_payload",
]


@dataclass(slots=True, frozen=True, kw_only=True)
class Verdict:
    """Whether a record's words fit its plan.

    Attributes:
        ok: the record may be written.
        reason: why not (empty when ``ok``).
        check: which check decided (``"offline"`` or ``"model"``).
    """

    ok: bool
    reason: str = ""
    check: str = "offline"


PASS = Verdict(ok=True)

# ---------------------------------------------------------------------------------------- detectors

_JSON_DUMP = re.compile(r"[{\[]")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
# Words that tie a call to an earlier one's result: at the start of a sentence or clause, or "use
# that/it/the result" anywhere.
_LINKS = re.compile(
    r"(?:^|[.!?;,]\s+|\band\s+)(?:then|after that|once you have|once that's done|when that's done)\b"
    r"|(?:^|[.!?]\s+)(?:use|take) (?:that|it|the|what you find)\b"
    r"|\buse (?:that|it|those|them|the result|what you find)\b",
    re.IGNORECASE,
)


def json_dump(text: str) -> bool:
    """Whether ``text`` holds a JSON object or array (any brace or square bracket)."""
    return _JSON_DUMP.search(text) is not None


def linking_phrases(text: str) -> list[str]:
    """The phrases of ``text`` that present a call as using an earlier call's result."""
    return [m.group(0).strip(" .,;!?") for m in _LINKS.finditer(text)]


def offline_check(plan: RecordPlan, text: RecordText, *, strict: bool = True) -> Verdict:
    """The structural checks of a record's words.

    Args:
        plan: the record's plan.
        text: its words.
        strict: also check the request's phrasing (notes, links, every given value stated): what
            the template writer guarantees; a model's wording is judged by :class:`ModelCheck`.
    """
    turns = [text.user, text.final, *(t for c in text.confirmations.values() for t in (c.question, c.reply))]
    if not all(t.strip() for t in turns):
        return Verdict(ok=False, reason="a turn of the record is empty")
    if any(json_dump(t) for t in turns):
        return Verdict(ok=False, reason="a turn holds a JSON dump: " + plain(_dumped(turns), 120))
    if not strict:
        return PASS
    return _phrasing(plan, text.user)


def _dumped(turns: list[str]) -> str:
    return next(t for t in turns if json_dump(t))


def _phrasing(plan: RecordPlan, user: str) -> Verdict:
    # The values the user gives are theirs, not notes: a webhook's https:// address, an "api" in it.
    stated = [v for c in plan.calls for v in _stated_values(c.given) if len(v) >= 3]
    notes = implementation_notes(_without(user, stated))
    if notes:
        return Verdict(ok=False, reason=f"the request carries implementation notes: {', '.join(notes)}")
    links = linking_phrases(user)
    if links and not any(c.wired for c in plan.calls):
        return Verdict(ok=False, reason=f"the request links calls no value flows between: {links[0]!r}")
    missing = [v for c in plan.calls if plan.kind == CALLS for v in _stated_values(c.given) if v not in user]
    if missing:
        return Verdict(ok=False, reason=f"the request does not state the value {missing[0]!r}")
    return PASS


def _without(text: str, values: list[str]) -> str:
    """``text`` with each of ``values`` left out (longest first, so no value cuts a longer one)."""
    for value in sorted(set(values), key=len, reverse=True):
        text = text.replace(value, " ")
    return text


def _stated_values(given: Any) -> list[str]:
    """The given values a request must say verbatim (numbers and plain text; dates and booleans are
    said in words)."""
    if isinstance(given, dict):
        if set(given) == {"id", "type"}:  # a JSON:API identifier: its type is its id's noun, unsaid
            return _stated_values(given["id"])
        return [v for item in given.values() for v in _stated_values(item)]
    if isinstance(given, list):
        return [v for item in given for v in _stated_values(item)]
    if isinstance(given, bool) or given is None:
        return []
    if isinstance(given, (int, float)):
        return [str(given)]
    text = plain(str(given), VALUE_LIMIT)
    return [] if _ISO_DATE.match(text) else [text.rstrip("…")]


# ------------------------------------------------------------------------------------------ prompts

#: The stages of the model writer and check, one prompt file each in ``prompts/``.
PROMPT_STAGES = ("user_turn", "final_turn", "no_call", "approval", "check")


@cache
def prompt(stage: str) -> str:
    """The system prompt of ``stage`` (``prompts/<stage>.md``, shipped with the package).

    Raises:
        TextError: no such stage.
    """
    if stage not in PROMPT_STAGES:
        raise TextError(f"unknown prompt stage {stage!r}: the stages are {', '.join(PROMPT_STAGES)}")
    folder = resources.files("fms_dgt.databuilders.tool_calling").joinpath("prompts")
    return folder.joinpath(f"{stage}.md").read_text(encoding="utf-8").strip()


# ------------------------------------------------------------------------------------- chat model

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
_MAX_BODY = 1_000_000


class ChatModel:
    """An OpenAI-compatible chat endpoint answering one prompt at a time, within bounds.

    Args:
        base_url: API root; ``/chat/completions`` is appended.
        model: model name.
        api_key_env: environment variable holding the key (optional for local servers).
        temperature: sampling temperature.
        request_timeout: seconds per request.
        max_chars: longest answer accepted; a longer one is an error (not cut: a cut turn misleads).
        max_tokens: sent as ``max_tokens`` when set.
        retries: further attempts after a dropped connection, a timeout, a 429 or a 5xx (with a
            growing pause; a host's ``Retry-After`` is honoured by every request to it).

    Requests go through :class:`~fms_dgt.core.tools.transport.Sender`: the answer is capped
    (decompressed) before it is read, redirects stay on the endpoint's origin, and secrets are
    redacted from errors.
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key_env: str = "OPENAI_API_KEY",
        temperature: float = 0.7,
        request_timeout: float = 60.0,
        max_chars: int = 4000,
        max_tokens: int | None = None,
        retries: int = 2,
    ) -> None:
        from fms_dgt.core.tools.transport import Sender, origin_base

        self.url = base_url.rstrip("/") + "/chat/completions"
        self._sender = Sender(timeout=request_timeout, headers=auth_headers(api_key_env))
        self._base = origin_base(self.url)
        self.model = model
        self.temperature = temperature
        self.max_chars = max_chars
        self.max_tokens = max_tokens
        self.retries = retries

    def ask(self, stage: str, payload: Any, rng: random.Random, *, json_answer: bool = False) -> str:
        """The model's answer to ``stage``'s prompt over ``payload``, cleaned of control characters.

        Raises:
            TextError: the request failed, the answer is missing, empty or longer than ``max_chars``.
        """
        body = self._body(stage, payload, rng, json_answer)
        answer = self._post(stage, body)
        text = _CONTROL.sub("", answer).strip()
        if not text:
            raise TextError(
                f"empty answer from the text model at {self.url} ({stage}): retry or check the model"
            )
        if len(text) > self.max_chars:
            raise TextError(
                f"answer too long from the text model at {self.url} ({stage}): {len(text)} characters, "
                f"more than max_chars={self.max_chars}. Raise max_chars or tighten the prompt"
            )
        return text

    def ask_json(self, stage: str, payload: Any, rng: random.Random) -> dict[str, Any] | None:
        """The JSON object the model answers ``stage`` with, or None when it answered none."""
        return _json_object(self.ask(stage, payload, rng, json_answer=True))

    def _body(self, stage: str, payload: Any, rng: random.Random, json_answer: bool) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "temperature": self.temperature,
            "seed": rng.randrange(2**31),
            "messages": [
                {"role": "system", "content": prompt(stage)},
                {"role": "user", "content": json.dumps(payload, ensure_ascii=False, sort_keys=True)},
            ],
        }
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if json_answer:
            body["response_format"] = {"type": "json_object"}
        return body

    def _post(self, stage: str, body: dict[str, Any]) -> str:
        content = json.dumps(body).encode()
        for attempt in range(self.retries + 1):
            try:
                return self._attempt(content)
            except _Transient as exc:
                if attempt == self.retries:
                    raise self._error(stage, exc) from None
                time.sleep(min(8.0, 0.25 * 2**attempt))
            except (DGTError, ValueError) as exc:
                raise self._error(stage, exc) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _attempt(self, content: bytes) -> str:
        from fms_dgt.core.tools.transport import decode_json

        try:
            reply = self._sender.send(
                "POST",
                self.url,
                self._base,
                headers={"Content-Type": "application/json"},
                body={"content": content},
                max_bytes=_MAX_BODY,
            )
        except HTTPTransportError as exc:
            raise _Transient(str(exc)) from None
        if reply.status == 429 or reply.status >= 500:
            raise _Transient(f"HTTP {reply.status} {reply.reason}")
        if reply.status >= 400:
            raise ValueError(f"HTTP {reply.status} {reply.reason}: {reply.text[:300]}")
        return chat_content(decode_json(reply.content, "the model's answer"))

    def _error(self, stage: str, exc: Exception) -> TextError:
        return TextError(
            redact(f"text model request failed at {self.url} ({stage}): {type(exc).__name__}: {exc}")[:800]
            + ". Check base_url, the model name and the API key variable"
        )

    def close(self) -> None:
        """Close the HTTP client."""
        self._sender.close()


class _Transient(Exception):
    """A failure worth another attempt (a dropped connection, a timeout, 429, 5xx)."""


def _json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (a model may wrap it in prose or a code fence)."""
    start, end = text.find("{"), text.rfind("}")
    if not 0 <= start < end:
        return None
    try:
        value = json.loads(text[start : end + 1])
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


# -------------------------------------------------------------------------------- what models see


def tool_payload(tool: Tool) -> dict[str, Any]:
    """A tool as a writing model sees it: its name and its description without implementation notes."""
    return {"tool": tool.name, "purpose": described(tool)}


def _wires(call: PlannedCall) -> dict[str, str]:
    """Wired arguments as a model reads them: ``"<tool>.<output path>"``, and which of the earlier
    call's arguments the value repeats (the user said it already: "that city", not "the city from
    that")."""
    said = {name: f"{w.source}.{w.output or '(result)'}" for name, w in call.wired.items()}
    for name, wire in call.wired.items():
        if wire.echoes:
            said[name] += f" (repeats its argument {wire.echoes})"
    return said


def call_payload(call: PlannedCall) -> dict[str, Any]:
    """A planned call as a writing model sees it (its tool; the stage adds values or results)."""
    return tool_payload(call.tool)


def request_payload(plan: RecordPlan) -> dict[str, Any]:
    calls = [
        {**call_payload(c), "step": index, "stated_by_user": c.given, "from_earlier_results": _wires(c)}
        for index, step in enumerate(plan.steps)
        for c in step
    ]
    return {"calls": calls}


def answer_payload(plan: RecordPlan, request: str | None) -> dict[str, Any]:
    calls = []
    for call in plan.calls:
        entry = {**call_payload(call), "arguments": call.call.arguments}
        if call.approval == "declined":
            entry["declined"] = True
        elif call.result is not None and call.result.error is not None:
            entry["error"] = call.result.error
        elif call.result is not None:
            entry["result"] = call.result.result
        calls.append(entry)
    return {"request": request, "calls": calls}


# ------------------------------------------------------------------------------------- model check

_MAX_REASON = 300


class ModelCheck:
    """Semantic verification of a record's request by a chat model (the ``check`` prompt).

    Args:
        model: the chat client (usually the writer's).
    """

    def __init__(self, model: ChatModel) -> None:
        self.model = model

    def judge(self, plan: RecordPlan, text: RecordText, rng: random.Random) -> Verdict:
        """The model's verdict on ``text`` for ``plan``.

        Raises:
            TextError: the model could not be asked (the record is rejected by the job).
        """
        answer = self.model.ask_json("check", check_payload(plan, text), rng)
        if answer is None:
            return Verdict(
                ok=False, reason="check model gave no verdict: its answer holds no JSON object", check="model"
            )
        verdict = str(answer.get("verdict", "")).strip().lower()
        reason = plain(str(answer.get("reason") or ""), _MAX_REASON) or "no reason given"
        if verdict == "pass":
            return Verdict(ok=True, check="model")
        if verdict == "fail":
            return Verdict(ok=False, reason=f"check model: {reason}", check="model")
        return Verdict(
            ok=False, reason=f"check model gave no verdict (verdict={verdict[:40]!r})", check="model"
        )


def check_payload(plan: RecordPlan, text: RecordText) -> dict[str, Any]:
    """What the check model sees: the kind, the offered tools, the calls (or what is missing or out of
    scope) and the request."""
    payload: dict[str, Any] = {
        "kind": plan.kind,
        "offered_tools": [{"name": t.qualified_name, "description": t.description} for t in plan.offered],
        "user_request": text.user,
    }
    if plan.kind == CALLS:
        payload["calls"] = [
            {
                "tool": c.tool.qualified_name,
                "arguments": c.call.arguments,
                "stated_by_user": c.given,
                "from_earlier_results": _wires(c),
            }
            for c in plan.calls
        ]
    elif plan.missing is not None:
        payload["missing"] = {"tool": plan.missing[0].qualified_name, "argument": plan.missing[1]}
    elif plan.topic is not None:
        payload["topic_tool"] = {"name": plan.topic.qualified_name, "description": plan.topic.description}
    payload["assistant_reply"] = text.final if plan.kind != CALLS else None
    return payload
