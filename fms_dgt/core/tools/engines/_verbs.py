"""What a mock result says of a call, by the call's words, and the results of tools without an
output schema.

A call that did something (``add``, ``cancel``...) reports it done (:data:`PAST`, :data:`SUCCESS`);
a lookup (:data:`QUERIES`) may find anything. A tool without an output schema is read to have one
from its name and arguments (:func:`guessed_schema`). Split from :mod:`results` to keep it short.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.enrichments._dataflow_words import singular
from fms_dgt.core.tools.fakes import tokens

__all__ = [
    "LOGGED",
    "PAST",
    "QUANTITIES",
    "QUERIES",
    "QUERY_FILLER",
    "SUCCESS",
    "SUCCESS_FLAGS",
    "guessed_schema",
    "plain",
]


PAST = {
    "create": "created",
    "add": "added",
    "book": "booked",
    "reserve": "reserved",
    "schedule": "scheduled",
    "register": "registered",
    "send": "sent",
    "post": "posted",
    "submit": "submitted",
    "update": "updated",
    "set": "set",
    "delete": "deleted",
    "remove": "removed",
    "cancel": "cancelled",
    "upload": "uploaded",
    "buy": "purchased",
    "purchase": "purchased",
    "order": "placed",
    "pay": "paid",
    "transfer": "completed",
    "share": "shared",
    "save": "saved",
    "subscribe": "subscribed",
    "invite": "invited",
    "assign": "assigned",
    "enable": "enabled",
    "disable": "disabled",
    "start": "started",
    "stop": "stopped",
    "play": "playing",
    "open": "opened",
    "close": "closed",
    "edit": "updated",
    "modify": "updated",
    "adjust": "adjusted",
    "change": "changed",
    "move": "moved",
    "copy": "copied",
    "rename": "renamed",
    "turn": "done",
    "lock": "locked",
    "unlock": "unlocked",
    "fund": "completed",
    "deposit": "completed",
    "withdraw": "completed",
    "place": "placed",
    "make": "completed",
    "resolve": "resolved",
    "complete": "completed",
    "confirm": "confirmed",
    "approve": "approved",
    "activate": "active",
    "install": "installed",
    "publish": "published",
    "archive": "archived",
    "restore": "restored",
}
#: Names of a listed result that holds what the call gave it (a log of the messages displayed).
LOGGED = frozenset({"log", "logs", "logged", "displayed", "line", "lines"})
#: Statuses that say a call succeeded.
#: Yes-or-no names that say a call worked.
SUCCESS_FLAGS = frozenset({"success", "successful", "succeeded", "ok", "issuccess", "issuccessful", "done"})
SUCCESS = frozenset(
    {"success", "succeeded", "successful", "ok", "done", "completed", "complete", "confirmed"}
    | {"active", "created", "accepted", "scheduled", "booked", "sent", "saved", "approved", "paid"}
)
QUERIES = frozenset(
    {"get", "fetch", "find", "search", "calculate", "compute", "list", "check", "convert", "estimate"}
    | {"predict", "lookup", "look", "retrieve", "query", "count", "recommend", "suggest", "analyze"}
    | {"analyse", "show", "view", "read", "translate", "generate", "identify", "detect", "validate"}
)
_LISTING = frozenset({"list", "search", "find", "recommend", "suggest"})
_SMALL_WORDS = frozenset({"by", "for", "of", "the", "a", "an", "and", "to", "from", "in", "on", "with"})
#: Words a tool's name holds that name no result ("get_weather_info" -> weather).
_FILLER = _SMALL_WORDS | {"up", "info", "information", "details", "data", "api", "v1", "v2", "all"}
_FILLER |= {"new", "my"}
#: Words a found file's name leaves out ("flight to the conference" -> flight_conference).
QUERY_FILLER = _SMALL_WORDS | {"at"}
#: Nouns whose value is a number (``calculate_area`` -> ``area``).
QUANTITIES = frozenset(
    {"area", "sum", "total", "price", "cost", "distance", "volume", "probability", "rate", "score", "count"}
    | {"bmi", "average", "mean", "speed", "temperature", "population", "duration", "percentage", "value"}
    | {"amount", "balance", "length", "product", "difference", "quotient", "factorial", "result", "tax"}
    | {"interest", "payment", "perimeter", "circumference", "density", "force", "energy", "power", "mass"}
    | {"weight", "height", "velocity", "acceleration", "displacement", "revenue", "profit", "salary", "fee"}
    | {"calories", "emi", "roi", "cagr", "median", "variance", "deviation", "ratio", "time", "age"}
    | {"percentile", "discount", "tip", "gpa", "grade", "frequency", "pressure", "return", "yield", "number"}
)
_WEATHER = {
    "type": "object",
    "properties": {
        "temperature": {"type": "number", "minimum": -30, "maximum": 45},
        "condition": {"enum": ["clear", "partly cloudy", "cloudy", "rain", "snow", "fog", "windy"]},
        "humidity": {"type": "integer", "minimum": 5, "maximum": 100},
    },
    "required": ["temperature", "condition", "humidity"],
}


def guessed_schema(tool: Tool, arguments: Mapping[str, Any]) -> dict[str, Any] | None:
    """The output schema a tool without one is read to have, from its name and arguments
    (``create_event`` -> a status and an event id; ``calculate_area`` -> a number); None for a
    tool whose name and arguments say nothing (its result is ``{"status": "ok"}``)."""
    words = [w for w in tokens(tool.name.rsplit(".", 1)[-1]) if not w.isdigit()]
    verb = words[0] if words and (words[0] in PAST or words[0] in QUERIES) else ""
    nouns = [w for w in words[1 if verb else 0 :] if w not in _FILLER and w not in QUERIES]
    if not verb and not arguments:
        return None
    return _guessed_schema(verb, nouns, arguments, tool)


def _guessed_schema(verb: str, nouns: list[str], arguments: Mapping[str, Any], tool: Tool) -> dict[str, Any]:
    props: dict[str, Any] = {}
    main = _main_argument(tool, arguments)
    if main is not None:
        props[main] = {}
    if verb in PAST:
        noun = singular(nouns[-1]) if nouns else "request"
        props["status"] = {"const": PAST[verb]}
        if not any(plain(str(a)) == f"{noun}id" for a in arguments):
            props[f"{noun}_id"] = {"type": "string"}
    else:
        key = "_".join(nouns) or "result"
        props[key] = _value_schema(verb, nouns)
    return {"type": "object", "properties": props, "required": list(props)}


def _main_argument(tool: Tool, arguments: Mapping[str, Any]) -> str | None:
    required = tool.parameters.get("required")
    for name in [*(required if isinstance(required, list) else []), *arguments]:
        if name in arguments and not isinstance(arguments[name], (dict, list)):
            return str(name)
    return None


def _value_schema(verb: str, nouns: list[str]) -> dict[str, Any]:
    last = nouns[-1] if nouns else ""
    if last in ("weather", "forecast"):
        return _WEATHER
    if last in QUANTITIES or (not nouns and verb in ("calculate", "compute", "count", "estimate")):
        return {"type": "number", "minimum": 0}
    if verb in _LISTING or (last.endswith("s") and not last.endswith("ss") and len(last) > 3):
        return {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 10}
    return {"type": "string"}


@functools.lru_cache(maxsize=4096)
def plain(name: str) -> str:
    """A name without case or separators: ``pet_id``, ``petId`` and ``PetID`` are ``petid``."""
    return _NOT_ALNUM.sub("", str(name).lower())


_NOT_ALNUM = re.compile(r"[^a-z0-9]")
