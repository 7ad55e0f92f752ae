"""The words of a record: the user's request, confirmations before calls, the assistant's answer.

A :class:`TextWriter` reads a :class:`~fms_dgt.databuilders.tool_calling.plan.RecordPlan` (after its
calls ran) and writes a :class:`RecordText`; :meth:`TextWriter.check` says whether the words fit the
plan (a :class:`~fms_dgt.databuilders.tool_calling.checks.Verdict`; the job writes a failed one to
the rejects). Two writers:

* :class:`TemplateText` (``type: template``): offline, deterministic from the record's
  ``random.Random``, microseconds per turn. The request is said from each tool's purpose and the
  values the user knows; calls are linked ("then use that to ...") only where a value flows from
  one to the next; the answer states the results in words, failures and declined calls included.
* :class:`LLMText` (``type: llm``): an OpenAI-compatible chat model writes the turns back from the
  planned calls and results (prompts in ``prompts/``), and a check stage has the model judge whether
  the request calls for exactly those calls (:class:`~fms_dgt.databuilders.tool_calling.checks.ModelCheck`).

Order of a record's messages: user request; then for each step, for each call that waited for
approval, the assistant's question and the user's reply (``RecordText.confirmations[call_id]``),
then the step's calls and results; then the final answer. A no-call record is the request and the
answer alone.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from fms_dgt.core.tools.data_objects import Tool, ToolCall
from fms_dgt.core.tools.engines.results import asks_fahrenheit
from fms_dgt.databuilders.tool_calling import templates
from fms_dgt.databuilders.tool_calling.checks import (
    ChatModel,
    ModelCheck,
    Verdict,
    answer_payload,
    call_payload,
    offline_check,
    request_payload,
    tool_payload,
)
from fms_dgt.databuilders.tool_calling.findings import name_of, success
from fms_dgt.databuilders.tool_calling.phrases import (
    error_words,
    intended_values,
    scalar_words,
    value_phrases,
)
from fms_dgt.databuilders.tool_calling.plan import CALLS, PlannedCall, RecordPlan
from fms_dgt.databuilders.tool_calling.references import named_again, pointed, reference
from fms_dgt.databuilders.tool_calling.wording import (
    ACTION,
    GET,
    Purpose,
    join_words,
    label,
    past,
    purpose_of,
)
from fms_dgt.errors import DGTError, TextError

__all__ = [
    "ChatModel",
    "Confirmation",
    "LLMText",
    "ModelCheck",
    "RecordText",
    "TemplateText",
    "TextWriter",
    "Verdict",
    "make_text_writer",
]


@dataclass(slots=True, kw_only=True)
class Confirmation:
    """The exchange before a call that waits for approval.

    Attributes:
        question: the assistant says what it is about to do, with the values, and asks.
        reply: the user confirms or declines (as :attr:`PlannedCall.approval` says).
    """

    question: str
    reply: str


@dataclass(slots=True, kw_only=True)
class RecordText:
    """The natural-language turns of one record.

    Attributes:
        user: the user's request.
        final: the assistant's last turn: the answer from the results, or for a no-call record its
            reply without a call (no tool for that / which value is missing).
        confirmations: call id -> the exchange before that call, for calls with an approval.
    """

    user: str
    final: str
    confirmations: dict[str, Confirmation] = field(default_factory=dict)


@runtime_checkable
class TextWriter(Protocol):
    """Writes the turns of a record from its plan, and checks them."""

    def write(self, plan: RecordPlan, rng: random.Random) -> RecordText:
        """Every turn of ``plan`` (its calls already ran: results are filled)."""
        ...

    def check(self, plan: RecordPlan, text: RecordText, rng: random.Random) -> Verdict:
        """Whether ``text`` says what ``plan`` does; a failed verdict rejects the record."""
        ...

    def close(self) -> None:
        """Release what the writer holds (a model client)."""
        ...


class TemplateText:
    """Turns from phrasings over the tools' purposes (offline, deterministic, fast)."""

    def write(self, plan: RecordPlan, rng: random.Random) -> RecordText:
        """Every turn of ``plan``."""
        if plan.kind != CALLS:
            return self._no_call(plan, rng)
        user = _polite(self._request(plan, rng), rng)
        confirmations = {
            c.call.call_id or "": self._confirmation(c, rng) for c in plan.calls if c.approval is not None
        }
        return RecordText(user=user, final=self._answer(plan, rng), confirmations=confirmations)

    def check(self, plan: RecordPlan, text: RecordText, rng: random.Random) -> Verdict:
        """The offline checks (:func:`~fms_dgt.databuilders.tool_calling.checks.offline_check`)."""
        return offline_check(plan, text)

    # ------------------------------------------------------------------------------------ requests

    def _request(self, plan: RecordPlan, rng: random.Random) -> str:
        sentences = [self._first_step(plan.steps[0], rng)] if plan.steps else []
        for index in range(1, len(plan.steps)):
            sentences.append(self._later_step(plan, index, rng))
        return " ".join(sentences)

    def _first_step(self, step: Sequence[PlannedCall], rng: random.Random) -> str:
        if len(step) == 1 and purpose_of(step[0].tool).kind == GET and rng.random() < 0.5:
            prefix, end = rng.choice(templates.GET_FRAMES)
            return _sentence(f"{prefix} {_object(step[0], rng)}", end)
        prefix, end = rng.choice(templates.FRAMES)
        clauses = [_clause(c, rng) for c in step]
        return _sentence(f"{prefix} {_also(clauses, rng)}".strip(), end)

    def _later_step(self, plan: RecordPlan, index: int, rng: random.Random) -> str:
        step = plan.steps[index]
        clauses = [_clause(c, rng) for c in step]
        # The call taking a value only an earlier result holds leads, so the link is about it; a
        # call whose values the user said before (echoed by a result) follows on with "then".
        wired = next((c for c in step if pointed(c)), None)
        again = next((c for c in step if c.wired), None) if wired is None else None
        lead = wired or again
        if lead is not None:
            clauses.insert(0, clauses.pop(step.index(lead)))
        template = rng.choice(
            templates.WIRED if wired is not None else templates.ECHOED if again else templates.UNWIRED
        )
        ref = reference(plan, index, wired, rng) if wired is not None else ""
        # Every other call of the step that takes an earlier value says which, too: "also search
        # for documents using the name from that" (else its argument comes from nowhere).
        others = [c for c in step if c is not lead]
        for position, call in enumerate(others, 1):
            if pointed(call):
                clauses[position] += f" using {reference(plan, index, call, rng)}"
        sentence = template.format(ref=ref, clause=clauses[0])
        if len(clauses) > 1:  # the step's other calls join the same request, before its end mark
            sentence = sentence[:-1] + _also(["", *clauses[1:]], rng) + sentence[-1]
        return _sentence(sentence, "")

    # ------------------------------------------------------------------------------------- answers

    def _answer(self, plan: RecordPlan, rng: random.Random) -> str:
        parts = [rng.choice(templates.ANSWER_OPENERS)]
        if parts[0] == _FOUND and all(_settled(c.tool, c.call.arguments).kind == ACTION for c in plan.calls):
            parts[0] = "All done."  # nothing was looked up: "Here's what I found. I've added a pet."
        parts += [_outcome(call, rng, plan.calls[:i]) for i, call in enumerate(plan.calls)]
        parts.append(rng.choice(templates.ANSWER_CLOSERS))
        return _DOUBLE_STOP.sub(r"\1", " ".join(p for p in parts if p))

    def _confirmation(self, call: PlannedCall, rng: random.Random) -> Confirmation:
        task = _task(call, rng)
        question = rng.choice(templates.CONFIRM).format(task=task)
        reply = rng.choice(templates.DECLINE if call.approval == "declined" else templates.APPROVE)
        return Confirmation(question=_capital(question), reply=reply)

    # ------------------------------------------------------------------------------------- no call

    def _no_call(self, plan: RecordPlan, rng: random.Random) -> RecordText:
        if plan.kind == "missing_value" and plan.missing is not None:
            tool, name = plan.missing
            values = {k: v for k, v in intended_values(plan, tool, rng).items() if k != name}
            user = _polite(self._ask_for(tool, values, rng), rng)
            task = _settled(tool, values).phrase(core=True)
            final = _missing_question(tool, name, task, rng)
            return RecordText(user=user, final=_capital(final))
        if plan.topic is None:
            raise DGTError(
                f"no-call record {plan.index} of kind {plan.kind!r} has no topic or missing value: "
                "the plan says what the request is about. Set plan.topic or plan.missing"
            )
        user = _polite(self._ask_for(plan.topic, intended_values(plan, plan.topic, rng), rng), rng)
        return RecordText(user=user, final=_cannot(plan, plan.topic, rng))

    def _ask_for(self, tool: Tool, values: Mapping[str, Any], rng: random.Random) -> str:
        call = PlannedCall(tool=tool, call=ToolCall(tool.qualified_name, dict(values)), given=dict(values))
        return self._first_step([call], rng)

    def close(self) -> None:
        """Nothing to release."""


# ------------------------------------------------------------------------------- request helpers


#: Parameter names that only number an operand (``a``, ``x``, ``num1``): no name to ask for.
_OPERAND = re.compile(r"^(?:[a-z]|[a-z]?\d+|n\d*|x\d*|y\d*|num\d*|number \d+|arg\d*)$", re.I)
#: Labels asked for in other words.
_ASKED_AS = {
    "unit in": "unit to convert from",
    "unit out": "unit to convert to",
    "from unit": "unit to convert from",
    "to unit": "unit to convert to",
}
#: Parameter names that are not nouns: "What's the to?" is no question.
_NOT_NOUNS = frozenset({"to", "from", "in", "on", "at", "by", "for", "of", "with", "as", "into", "via"})


def _missing_question(tool: Tool, name: str, task: str, rng: random.Random) -> str:
    """The question for a value the request left out: its choices when it has a few ("Celsius
    or Fahrenheit?"), else the value by its name."""
    schema = (tool.parameters.get("properties") or {}).get(name)
    choices = schema.get("enum") if isinstance(schema, Mapping) else None
    value = label(name) or name
    value = _ASKED_AS.get(value.lower(), value)  # "the unit to convert from", not "the unit in"
    if isinstance(choices, list) and 2 <= len(choices) <= 5 and all(isinstance(c, str) for c in choices):
        said = join_words([scalar_words(c, exact=True) for c in choices], "or")
        asks = templates.ASK_CHOICE if value not in _NOT_NOUNS else templates.ASK_CHOICE_UNNAMED
        return rng.choice(asks).format(task=task, value=value, choices=said)
    if value in _NOT_NOUNS or _OPERAND.match(value):  # not "I'll need the a"
        return rng.choice(templates.ASK_DETAIL).format(task=task)
    return rng.choice(templates.ASK_MISSING).format(task=task, value=value)


def _object(call: PlannedCall, rng: random.Random, values: Mapping[str, Any] | None = None) -> str:
    """The purpose's object with the values said after it ("the current weather at 38.7, -9.1");
    values said or taken from an earlier result stand for its slot phrases ("at a coordinate").
    ``values`` defaults to what the user states."""
    purpose = purpose_of(call.tool)
    request = values is None
    values = dict(call.given if values is None else values)
    if not values and not call.wired:  # no slot phrase for a value nobody gives ("hotel availability")
        return purpose.core if call.tool.parameters.get("properties") else purpose.obj
    core = purpose.core
    named = next((k for k in values if _scalar(values[k]) and core.endswith(" " + label(k))), None)
    if named is not None:  # "search for the symptom" + symptom=fever -> "... the symptom fever"
        value = scalar_words(values.pop(named), exact=True)
        core += f' "{value}"' if len(value.split()) > 3 else f" {value}"  # a note's text is quoted
    core = _chosen(core, values)
    said = value_phrases(call.tool.parameters.get("properties") or {}, values, rng)
    if request:  # values the user said before, which an earlier result repeats: "that pet"
        core, again = named_again(core, call, rng)
        said = [*said[:1], *again, *said[1:]] if said and _bare(said[0]) else [*again, *said]
    if said and _bare(said[0]):
        core, said = _operands(core, said)
    return f"{core}{_joined(said)}"


def _operands(core: str, said: list[str]) -> tuple[str, list[str]]:
    """Bare values said where a person says them: "multiply 64 and 12" and "the logarithm of
    79", not "multiply two numbers: 64 and 12" and "the logarithm: 79"; else after a colon."""
    if core == "one number from another" and said[0].count(" and ") == 1:  # a - b: "b from a"
        first, second = said[0].split(" and ")
        return f"{second} from {first}", said[1:]
    numbers = _NUMBERS.search(core) or _A_VALUE.search(core)
    if numbers is not None:  # "convert 12 between imperial and SI units", "round 5.67"
        return f"{core[: numbers.start()]}{said[0]}{core[numbers.end() :]}", said[1:]
    if core.startswith("the ") and " and " not in said[0] and "," not in said[0]:
        return f"{core} of {said[0]}", said[1:]
    return core, said


_A_VALUE = re.compile(r"\b(?:a|the) (?:value|number)\b(?! of\b)")
_NUMBERS = re.compile(r"\b(?:(?:a|the) )?(?:(?:two|three|some|several|these|a list of|a set of) )?numbers\b")


def _settled(tool: Tool, values: Mapping[str, Any]) -> Purpose:
    """The tool's purpose with its alternatives settled by ``values`` (see :func:`_chosen`)."""
    purpose = purpose_of(tool)
    core = _chosen(purpose.core, dict(values))
    return replace(purpose, core=core) if core != purpose.core else purpose


_EITHER = re.compile(r"\b([A-Za-z][\w-]*) or ([A-Za-z][\w-]*)\b")


def _chosen(core: str, values: dict[str, Any]) -> str:
    """The purpose with its alternatives settled by a value that picks one, which is then not
    said again: "convert a temperature to Celsius or Fahrenheit" + ``to=fahrenheit`` -> "convert
    a temperature to fahrenheit" (not "... to Celsius or Fahrenheit to fahrenheit")."""
    for match in _EITHER.finditer(core):
        sides = {match.group(1).lower(), match.group(2).lower()}
        key = next((k for k, v in values.items() if isinstance(v, str) and v.lower() in sides), None)
        if key is not None:
            return f"{core[: match.start()]}{values.pop(key)}{core[match.end() :]}"
    return core


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def _clause(call: PlannedCall, rng: random.Random) -> str:
    purpose = purpose_of(call.tool)
    synonyms = (
        templates.GET_VERBS if purpose.kind == GET else templates.SYNONYMS.get(purpose.verb, (purpose.verb,))
    )
    verb = rng.choice(synonyms)
    return f"{verb} {_object(call, rng)}".strip()


def _joined(values: list[str]) -> str:
    """Value phrases after an object: a bare list after a colon, the others after a space."""
    if not values:
        return ""
    head, rest = (values[0], values[1:]) if _bare(values[0]) else ("", values)
    aside = [v for v in rest if v.startswith("(")]  # "(at most 2)" closes the list, unjoined
    rest = _withs([v for v in rest if not v.startswith("(")])
    said = f": {head}" if head else ""
    if rest:
        said += " " + (" ".join(rest) if len(rest) <= 3 else f"{', '.join(rest[:-1])} and {rest[-1]}")
    return said + "".join(f" {v}" for v in aside)


def _withs(phrases: list[str]) -> list[str]:
    """Phrases that open with "with" one after another, said as one: "with the min price at 53.88
    and the max price at 127.73", not "with the min price at 53.88 with the max price at ..."."""
    groups: list[list[str]] = []
    for phrase in phrases:
        if groups and phrase.startswith("with ") and groups[-1][0].startswith("with "):
            groups[-1].append(phrase[5:])
        else:
            groups.append([phrase])
    return [join_words(group) for group in groups]


def _bare(phrase: str) -> bool:
    return phrase[:1].isdigit() or phrase[:1] == "-"


def _also(clauses: list[str], rng: random.Random) -> str:
    text = clauses[0]
    for clause in clauses[1:]:
        text += rng.choice(templates.ALSO) + clause
    return text


def _sentence(text: str, end: str) -> str:
    return _capital(text.strip()) + end


# A sentence's full stop right after a value that already ended one ("... everyday use..");
# an ellipsis is left alone.
_DOUBLE_STOP = re.compile(r"(?<!\.)([.!?])\.(?!\.)(?=\s|$)")


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _polite(request: str, rng: random.Random) -> str:
    opener, closer = rng.choice(templates.OPENERS), rng.choice(templates.CLOSERS)
    if opener and request[:2] != "I " and request[:2] != "I'":
        request = request[:1].lower() + request[1:] if opener.endswith((",", ":")) else request
    return " ".join(p for p in (opener, request, closer) if p)


# -------------------------------------------------------------------------------- answer helpers


def _task(call: PlannedCall, rng: random.Random) -> str:
    """What a call does, with every argument it will use (a confirmation says them all)."""
    return f"{purpose_of(call.tool).verb} {_object(call, rng, call.call.arguments)}"


def _outcome(call: PlannedCall, rng: random.Random, earlier: Sequence[PlannedCall] = ()) -> str:
    """One call's part of the answer: its result in words, its failure, or that it was declined.
    An action with nothing to tell names what it acted on as the record's ``earlier`` results
    named it ("I've removed Daisy.", not "I've removed a pet with the pet ID pet-3.")."""
    purpose = _settled(call.tool, call.call.arguments)  # "converted a temperature to celsius"
    task = f"{purpose.verb} {purpose.core}"
    if call.approval == "declined":
        return rng.choice(templates.DECLINED).format(
            task=task, task_done=f"{past(purpose.verb)} {purpose.core}"
        )
    result = call.result
    if result is None:
        return ""
    if result.error is not None:
        return rng.choice(templates.FAILED).format(task=task, error=error_words(result.error))
    named = {k: v for k, v in call.call.arguments.items() if _IDENTIFYING.search(k) and _scalar(v)}
    if result.result is None and purpose.kind == ACTION and named:  # no body: say which one it did
        done = past(purpose.verb)
        name = _earlier_name(purpose, named, earlier)
        if name is not None:
            return rng.choice(
                (f"I've {done} {name}.", f"I've {done} {_THE.sub('the ', purpose.core)} {name}.")
            )
        return f"I've {done} {_object(call, rng, dict(list(named.items())[:2]))}."
    return _capital(success(purpose, result.result, rng, _heat(call), _computes(call.call.arguments)))


_THE = re.compile(r"^(?:a|an|the|one) ")
_FOUND = "Here's what I found."


def _earlier_name(purpose: Purpose, named: Mapping[str, Any], earlier: Sequence[PlannedCall]) -> str | None:
    """The name an earlier result of the record gave the one thing an action acted on."""
    noun = _THE.sub("", purpose.core)
    if " " in noun or not noun:
        return None  # "a member of the team": no one noun whose id is named
    results = [c.result.result for c in earlier if c.result is not None and c.result.error is None]
    found = (name_of(value, noun, results) for value in named.values())
    return next((name for name in found if name is not None), None)


#: Argument names that say which thing an action acted on (``petId``, ``playlist_name``; no key).
_IDENTIFYING = re.compile(r"^(?:id|name|uuid)$|[_-](?:id|name|uuid)$|[a-z](?:Id|ID|Name|Uuid|UUID)$")


def _computes(arguments: Mapping[str, Any]) -> bool:
    """Whether a call computes its result from numbers alone (``add(a, b)``): its bare number is
    the answer, not a count of what the action stored."""
    return bool(arguments) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in arguments.values()
    )


_WEATHER = re.compile(r"weather|forecast|climate|meteo", re.IGNORECASE)


def _heat(call: PlannedCall) -> str:
    """The unit of the temperatures in a call's result: Fahrenheit when the call asks for
    imperial units or Fahrenheit (the mock engine makes them so too), none when it asks for
    Kelvin ("standard"), else Celsius for a weather tool; none for other tools (a thermostat's
    number is said as it is)."""
    if asks_fahrenheit(call.call.arguments):
        return " °F"
    asked = {v.lower() for v in call.call.arguments.values() if isinstance(v, str)}
    if asked & {"standard", "kelvin"}:
        return ""
    tool = call.tool
    return " °C" if _WEATHER.search(f"{tool.name} {tool.description}") else ""


def _cannot(plan: RecordPlan, topic: Tool, rng: random.Random) -> str:
    task = _settled(topic, plan.stated or {}).phrase(core=True)  # what the request asked for
    reply = rng.choice(templates.NO_TOOL).format(task=task)
    offered = list(dict.fromkeys(purpose_of(t).phrase(core=True) for t in plan.offered))[:3]
    if offered:
        reply += " " + rng.choice(templates.INSTEAD).format(tools=join_words(offered, "or"))
    return reply


class LLMText:
    """Turns written by an OpenAI-compatible chat model, and checked by it.

    The request is written back from the planned calls (the model sees each call's purpose, the
    values the user states and the arguments taken from earlier results), the answer from the
    results; :meth:`check` runs :func:`~fms_dgt.databuilders.tool_calling.checks.offline_check`
    (no JSON dump, no empty turn) and then the model's semantic verification.

    Args:
        base_url: API root; ``/chat/completions`` is appended.
        model: model name.
        api_key_env: environment variable with the key (optional for local servers).
        temperature: sampling temperature of the writing stages (the check runs at 0).
        request_timeout: seconds per request.
        max_chars: longest turn accepted from the model.
        max_tokens: sent as ``max_tokens`` when set.
        check: run the model check in :meth:`check` (the offline checks always run).
        retries: further attempts of a request after a dropped connection, a timeout, 429 or 5xx.
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
        check: bool = True,
        retries: int = 2,
    ) -> None:
        options = {"base_url": base_url, "model": model, "api_key_env": api_key_env}
        bounds = {
            "request_timeout": request_timeout,
            "max_chars": max_chars,
            "max_tokens": max_tokens,
            "retries": retries,
        }
        self.model = ChatModel(**options, temperature=temperature, **bounds)  # type: ignore[arg-type]
        self.judge = ModelCheck(ChatModel(**options, temperature=0.0, **bounds)) if check else None  # type: ignore[arg-type]

    def write(self, plan: RecordPlan, rng: random.Random) -> RecordText:
        """Every turn of ``plan``, one model request per stage.

        Raises:
            TextError: a request failed or an answer was unusable (the record is rejected).
        """
        if plan.kind != CALLS:
            return self._no_call(plan, rng)
        user = self.model.ask("user_turn", request_payload(plan), rng)
        confirmations = {
            c.call.call_id or "": self._confirmation(c, rng) for c in plan.calls if c.approval is not None
        }
        final = self.model.ask("final_turn", answer_payload(plan, user), rng)
        return RecordText(user=user, final=final, confirmations=confirmations)

    def check(self, plan: RecordPlan, text: RecordText, rng: random.Random) -> Verdict:
        """The offline checks, then the model's verdict (a missing or garbled one fails)."""
        verdict = offline_check(plan, text, strict=False)
        if not verdict.ok or self.judge is None:
            return verdict
        return self.judge.judge(plan, text, rng)

    def _confirmation(self, call: PlannedCall, rng: random.Random) -> Confirmation:
        payload = {**call_payload(call), "arguments": call.call.arguments, "decision": call.approval}
        answer = self._object("approval", payload, ("question", "reply"), rng)
        return Confirmation(question=answer["question"], reply=answer["reply"])

    def _no_call(self, plan: RecordPlan, rng: random.Random) -> RecordText:
        payload: dict[str, Any] = {
            "kind": plan.kind,
            "offered_tools": [tool_payload(t) for t in plan.offered],
        }
        if plan.missing is not None:
            tool, name = plan.missing
            values = {k: v for k, v in intended_values(plan, tool, rng).items() if k != name}
            payload["missing"] = {**tool_payload(tool), "argument": name}
            payload["values"] = values
        elif plan.topic is not None:
            payload["topic_tool"] = tool_payload(plan.topic)
            payload["values"] = intended_values(plan, plan.topic, rng)
        answer = self._object("no_call", payload, ("user", "assistant"), rng)
        return RecordText(user=answer["user"], final=answer["assistant"])

    def _object(self, stage: str, payload: Any, keys: tuple[str, ...], rng: random.Random) -> dict[str, str]:
        answer = self.model.ask_json(stage, payload, rng)
        if answer is None or not all(isinstance(answer.get(k), str) and answer[k].strip() for k in keys):
            raise TextError(
                f"unusable answer from the text model at {self.model.url} ({stage}): expected a JSON "
                f"object with {', '.join(keys)}. Use a model that follows the {stage} prompt"
            )
        return {k: answer[k].strip()[: self.model.max_chars] for k in keys}

    def close(self) -> None:
        """Close the HTTP clients."""
        self.model.close()
        if self.judge is not None:
            self.judge.model.close()


def make_text_writer(config: Mapping[str, Any]) -> TextWriter:
    """The writer a ``generation.text`` block asks for (``type: template`` or ``type: llm``)."""
    if config.get("type") == "llm":
        options = {k: v for k, v in config.items() if k != "type"}
        return LLMText(**options)
    return TemplateText()
