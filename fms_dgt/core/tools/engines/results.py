"""Mock results that fit the call: what the mock engine returns when nothing is configured.

:func:`mock_result` tries, in order:

1. ``implementation``: an exact implementation of a pure tool
   (:mod:`~fms_dgt.core.tools.engines.implementations`): ``calc::add(47.22, 58.08)`` is ``105.3``;
2. ``example``: a result example the source carries and that validates against the output
   schema: ``metadata["result_examples"]`` (the OpenAPI response's ``example``/``examples``, kept
   by the rest loader), ``result_examples``/``output_examples``/``response_examples`` keys of a
   tool file (``metadata["extra"]``), the output schema's own ``examples`` or ``default``; output
   properties named like an argument take the argument's value;
3. ``synthesised``: a value synthesised from ``output_parameters`` that respects the call: an
   output property named like an argument echoes it (``petId``, ``city``); the call's entities
   carry over (``geocode_city(city="Oslo")`` gives Oslo's coordinates and time zone, a
   ``filename`` is the file uploaded); an array whose size an argument gives (``days``,
   ``limit``, ``count``, ``n``, ``top_k``...) has that many items within the schema's bounds;
   paired bounds are ordered (``low``/``high``, ``min``/``max``, ``start``/``end``,
   ``check_in``/``check_out``); dates in a list are sorted, and a list of dated items (a forecast)
   has consecutive dates; other leaves come from :mod:`fms_dgt.core.tools.fakes`;
4. ``empty``: ``None`` for a REST operation whose success response has no body (``204 No
   Content``, or a status with no content declared), as the ``rest`` engine returns for it;
5. ``shaped``: for a tool without an output schema (BFCL), a plausible object shaped by the tool's
   name: the main argument echoed and a result field (``get_stock_price`` -> ``stock_price``,
   ``book_flight`` -> ``status: booked`` and a ``flight_id``, ``find_restaurants`` -> a list of
   restaurants); a tool with neither a recognisable name nor arguments gets ``{"status": "ok"}``.

Every step is a pure function of the tool, the arguments and the random source, so a seeded
engine gives the same results in any process.
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Mapping
from typing import Any

from fms_dgt.core.tools._fake_heads import ENVELOPES
from fms_dgt.core.tools._fake_kinds import topic_noun
from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.engines._agreement import (
    asks_fahrenheit,
    counted_by_others,
    duration_spans,
    flags_hold_their_details,
    holds_named,
    order_dates,
    order_pairs,
    set_under,
    set_values,
    sky_fits_temperature,
    total_covers_items,
    within_bounds,
)
from fms_dgt.core.tools.engines._described import DISTINCT, described, found_by_query
from fms_dgt.core.tools.engines._verbs import (
    LOGGED,
    PAST,
    QUANTITIES,
    QUERIES,
    QUERY_FILLER,
    SUCCESS,
    SUCCESS_FLAGS,
    guessed_schema,
)
from fms_dgt.core.tools.engines._verbs import plain as _plain
from fms_dgt.core.tools.engines.implementations import NOT_COMPUTED, compute, implementation_for
from fms_dgt.core.tools.fakes import MISSING, FakeHooks, Kind, Scope, classify, first_fit, place_named, tokens
from fms_dgt.core.tools.schema import get_validator
from fms_dgt.core.tools.synth import Path, SynthesisError, synthesise
from fms_dgt.errors import InvalidSchemaError

__all__ = [
    "EXAMPLE_KEYS",
    "SIZE_ARGUMENTS",
    "SOURCES",
    "ResultHooks",
    "asks_fahrenheit",
    "examples_of",
    "mock_result",
]

#: ``metadata["mock"]`` of a result, by step.
SOURCES = ("implementation", "example", "synthesised", "empty", "shaped")
#: Keys of a tool file (kept in ``metadata["extra"]``) that hold result examples.
EXAMPLE_KEYS = ("result_examples", "output_examples", "response_examples", "example_response")
#: Arguments whose value is the size of the result's list.
SIZE_ARGUMENTS = frozenset(
    {"days", "limit", "count", "n", "k", "numresults", "topk", "maxresults", "size", "pagesize", "perpage"}
    | {"number", "num", "numitems", "results", "hours", "nights", "quantity"}
)
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
_WORDS = re.compile(r"[a-z0-9]+")
#: Plain names of the argument that holds what a search looks for.
_QUERY_NAMES = frozenset({"query", "q", "keyword", "keywords", "search", "searchterm", "term", "searchquery"})
#: Plain names of the fields that name a listed item; and the draws tried for one unlisted yet.
_NAMES = frozenset({"name", "title", "label", "displayname", "fullname", "username", "subject"})
#: What a call that made a thing did (a new thing has no replies or likes yet).
_MADE = frozenset({"created", "added", "posted", "sent", "uploaded", "submitted", "registered"})
_ERROR_NAMES = frozenset(
    {
        "error",
        "errormessage",
        "errormsg",
        "errortext",
        "errordetail",
        "errordetails",
        "failurereason",
        "errorid",
    }
)
_REDRAWS = 4
#: File kinds a search finds by their name.
_FOUND_FILES = frozenset({"document", "image", "photo", "data", "file", "audio", "video", "name"})
# A plain name (see plain) that names an identifier: id, petid, user_key, uuid, isbn...
_IDENTIFIER_NAME = re.compile(r"(?:id|ids|key|uuid|guid|isbn|sku|token)$")
# Plain names of categories: a call that asks for one lists only items of it.
_CATEGORIES = frozenset(
    {"tag", "status", "state", "category", "type", "kind", "genre", "language", "lang", "city"}
    | {"country", "countrycode", "region", "currency", "brand", "color", "colour", "size", "department"}
    | {"priority", "level", "format", "unit", "units", "platform", "cuisine", "gender", "role", "channel"}
    | {"stage"}
)
_OPTIONAL = 0.7
_BRACKETED = re.compile(r"(?:filter|filters|where)\[(\w+)\]")


def mock_result(tool: Tool, arguments: Mapping[str, Any], rng: random.Random) -> tuple[Any, str]:
    """A result for a call of ``tool`` with ``arguments``, and the step that gave it (:data:`SOURCES`).

    Raises:
        SynthesisError: the output schema admits no value the synthesiser can find.
    """
    plan = _plan(tool)
    computed = compute(tool.name, tool.parameters, arguments) if plan.implemented else NOT_COMPUTED
    if computed is not NOT_COMPUTED:
        placed = _place(tool, arguments, computed, rng)
        if placed is not MISSING:
            return placed, "implementation"
    examples = plan.examples
    if examples:
        chosen = _echoed(tool, rng.choice(examples), arguments)
        if not tool.output_parameters or holds_named(chosen, arguments):
            return chosen, "example"
        # the spec's one example is another thing than the call named (Province(provinceId="NB")
        # answered Manitoba): a result is made for this call instead
    if not tool.output_parameters:
        if _no_content(tool):  # PeerTube's DELETE of an abuse message: 204, no body
            return None, "empty"
        return _shaped(tool, arguments, rng), "shaped"
    return _synthesised(tool, plan.described, arguments, rng), "synthesised"


def _no_content(tool: Tool) -> bool:
    """Whether ``tool`` is a REST operation whose success response declares no body."""
    route = tool.metadata.get("route") if tool.metadata.get("kind") == "rest" else None
    response = route.get("response") if isinstance(route, Mapping) else None
    return isinstance(response, Mapping) and not response.get("content_type")


class _Plan:
    """What is known of a tool before any call: whether it has an implementation, its result
    examples, the output schema with the shapes its descriptions state (the schema itself when
    they state none), and what its arguments stand for (worked out once per tool)."""

    __slots__ = ("described", "examples", "found", "implemented", "kinds", "leaves", "tool")

    def __init__(self, tool: Tool) -> None:
        self.tool = tool
        self.implemented = implementation_for(tool.name) is not None
        self.examples = examples_of(tool)
        # API-Bank's Dictionary: results "like [{"partOfSpeech": ..., "definitions": [...]}]"
        self.described: Mapping[str, Any] = described(tool.output_parameters, tool.name, tool.parameters)
        described_any = self.described is not tool.output_parameters
        # QueryMeeting's "meeting info": the meeting asked about, which echoes the call
        self.found = found_by_query(tool.output_parameters, tool.name) if described_any else frozenset()
        self.kinds: dict[str, Kind | None] = {}
        self.leaves: dict[tuple[int, str], tuple[Mapping[str, Any], Kind | None]] = {}

    def kind(self, name: str) -> Kind | None:
        """What argument ``name`` stands for."""
        if name not in self.kinds:
            props = self.tool.parameters.get("properties")
            found = props.get(name) if isinstance(props, Mapping) else None
            schema: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
            self.kinds[name] = classify(
                name,
                str(schema.get("description") or ""),
                "",
                self.tool.name,
                str(schema.get("format") or ""),
                schema.get("type") if isinstance(schema.get("type"), str) else "",
            )
        return self.kinds[name]


_PLANS: dict[Tool, _Plan] = {}
_MAX_PLANS = 20_000


def _plan(tool: Tool) -> _Plan:
    plan = _PLANS.get(tool)
    if plan is None or plan.tool is not tool:
        if len(_PLANS) >= _MAX_PLANS:
            _PLANS.clear()  # a registry refreshed many times over: start afresh
        plan = _PLANS[tool] = _Plan(tool)
    return plan


# ---------------------------------------------------------------- examples


def examples_of(tool: Tool) -> list[Any]:
    """The result examples ``tool`` carries that validate against its output schema."""
    found: list[Any] = []
    meta = tool.metadata
    extra = meta.get("extra") if isinstance(meta.get("extra"), Mapping) else {}
    for holder, key in [(meta, "result_examples"), *((extra, k) for k in EXAMPLE_KEYS)]:
        value = holder.get(key) if isinstance(holder, Mapping) else None
        if value is not None:
            found.extend(value if isinstance(value, list) and key != "example_response" else [value])
    schema = tool.output_parameters
    if isinstance(schema.get("examples"), list):
        found.extend(schema["examples"])
    if "default" in schema:
        found.append(schema["default"])
    if not schema:
        return found
    validator = tool.output_validator
    return [e for e in found if validator.is_valid(e)]


def _echoed(tool: Tool, example: Any, arguments: Mapping[str, Any]) -> Any:
    """``example`` with each top-level property named like an argument set to its value."""
    if not isinstance(example, Mapping) or not arguments:
        return example
    given = {_plain(k): v for k, v in arguments.items()}
    echoed = {k: given.get(_plain(k), v) for k, v in example.items()}
    if echoed == example:
        return example
    if not tool.output_parameters or tool.output_validator.is_valid(echoed):
        return echoed
    return example


# ---------------------------------------------------------------- implementations


_RESULT_KEYS = ("result", "value", "answer", "output", "converted_value", "total")


def _place(tool: Tool, arguments: Mapping[str, Any], computed: Any, rng: random.Random) -> Any:
    """The computed value in the shape of the output schema, or :data:`MISSING`."""
    schema = tool.output_parameters
    if not schema:
        return {_result_key(tool): computed}
    direct = first_fit([computed], schema)
    if direct is not MISSING and schema.get("type") != "object":
        return direct
    props = schema.get("properties")
    key = _key_for(tool, props) if isinstance(props, Mapping) else None
    if key is None:
        return MISSING
    value = _synthesised(tool, schema, arguments, rng, pinned={key: computed}, fallback=False)
    if not isinstance(value, dict) or value.get(key) != computed or isinstance(value.get(key), bool):
        return MISSING  # the schema has no room for the exact value (an integer for 2.5)
    return value if tool.output_validator.is_valid(value) else MISSING


def _key_for(tool: Tool, props: Mapping[str, Any]) -> str | None:
    names = list(props)
    wanted = {*_RESULT_KEYS, *tokens(tool.name.rsplit(".", 1)[-1])}
    for name in names:
        if name.lower() in wanted or _plain(name) in wanted:
            return name
    return names[0] if len(names) == 1 else None


def _result_key(tool: Tool) -> str:
    words = tokens(tool.name.rsplit(".", 1)[-1])
    last = words[-1] if words else ""
    return last if last in QUANTITIES else "result"


# ---------------------------------------------------------------- synthesis


class ResultHooks(FakeHooks):
    """Synthesis hooks for a result: echoes, sizes, ordering, and the call's entities.

    Args:
        scope: entities, with the call's arguments adopted.
        tool: the tool called.
        arguments: the call's arguments.
        pinned: values for top-level properties decided beforehand (a computed result).
    """

    def __init__(
        self,
        scope: Scope,
        tool: Tool,
        arguments: Mapping[str, Any],
        pinned: Mapping[str, Any] | None = None,
    ) -> None:
        plan = _plan(tool)
        super().__init__(scope, topic=tool.name, defaults=True, kinds=plan.leaves)
        self.found = plan.found
        self.arguments = arguments
        self.given: dict[str, Any] = {_plain(k): v for k, v in arguments.items()}
        for key, value in arguments.items():  # JSON:API's filter[status] filters by status
            inner = _BRACKETED.fullmatch(str(key))
            if inner is not None:
                self.given.setdefault(_plain(inner[1]), value)
        props = tool.parameters.get("properties")
        # The inputs the call left out: what it did has none of them (an upload without a caption
        # is not answered with one).
        self.left_out = (
            {_plain(k) for k in props if _plain(k) not in self.given} if isinstance(props, dict) else set()
        )
        # Nested values the call set, by path and by path inside its body (``data.attributes.url``
        # of a JSON:API body is the created resource's ``data.attributes.url``).
        self.set_at = set_values(arguments)
        self.pinned = dict(pinned or {})
        sizes = [v for k, v in self.given.items() if k in SIZE_ARGUMENTS and _whole(v)]
        self.size: int | None = int(sizes[0]) if sizes else None
        words = tokens(tool.name.rsplit(".", 1)[-1])
        # What a call of a tool that acts (add_reminder, bookFlight) did, when it succeeded.
        self.done = PAST.get(words[0]) if words else None
        self.looks = not self.done and bool(words) and words[0] in QUERIES  # a lookup: any state
        asked = next((v for k, v in self.given.items() if k in _QUERY_NAMES and isinstance(v, str)), "")
        # The words a search looked for, as a file name's stem ("budget review" -> budget_review).
        self.query = "_".join([w for w in _WORDS.findall(asked.lower()) if w not in QUERY_FILLER][:3])
        # The names given so far to the items of each list (by field and path without indexes).
        self._listed: dict[tuple[str, tuple[Any, ...]], set[str]] = {}

    def leaf(self, schema: Mapping[str, Any], name: str, path: Path) -> Any:
        """A pinned value, an echoed argument, a value the call's filters allow, or a leaf from
        the vocabulary."""
        if len(path) == 1 and path[0] in self.pinned:
            return first_fit([self.pinned[str(path[0])]], schema)
        plain = _plain(name)
        if self.query and _in_array(path):
            found = self._found_file(schema, name, path)
            if found is not MISSING:
                return found
        if plain in _ERROR_NAMES:  # a result that succeeded carries no error message
            kinds = schema.get("type")
            if kinds == "null" or (isinstance(kinds, list) and "null" in kinds) or schema.get("nullable"):
                return None
            empty = first_fit([""], schema)
            if empty is not MISSING:
                return empty
        if len(path) == 1 and schema.get("type") == "boolean" and self._says_success(plain):
            return True  # add_contact's added_status was false, in a record that said it was added
        if len(path) == 1 and plain == "status" and not self.looks:  # ForgotPassword worked: not "failed"
            status = first_fit([s for s in _successes(self.done or "", schema) if s], schema)
            if status is not MISSING:
                return status
        at = tuple(str(p) for p in path)
        echoed = first_fit([self.set_at[at]], schema) if at in self.set_at else MISSING
        if echoed is MISSING and not _in_array(path) and plain in self.given and not _held_bare(plain, path):
            echoed = first_fit([self.given[plain]], schema)
        elif echoed is MISSING and _in_array(path):
            echoed = self._filtered(schema, plain)
        if echoed is MISSING and plain in _BARE_KEYS and not _in_array(path):
            # the object named by an argument is that one: Province(provinceId="NB") answered
            # for province "MB", getVideoPlaylist(playlistId=37996) with playlist 97537
            holder = str(path[-2]) if len(path) > 1 and str(path[-2]).lower() not in ENVELOPES else ""
            own = self.given.get(_plain(holder or topic_noun(self.topic)) + plain)
            echoed = first_fit([own], schema) if own is not None else MISSING
        if echoed is not MISSING:
            return echoed
        if (plain in _NAMES or schema.get(DISTINCT)) and _in_array(path):
            return self._unlisted(schema, name, path, plain)
        if self.done and len(path) <= 2 and not _in_array(path):
            own = set_under(self.arguments, name)  # what an action set, named longer (climateMode)
            kept = first_fit([own], schema) if own is not None else MISSING
            if kept is MISSING and self.done in _MADE and counted_by_others(name):
                kept = first_fit([0], schema)  # a comment thread just started has no replies
            if kept is not MISSING:
                return kept
        return super().leaf(schema, name, path)

    def _says_success(self, plain: str) -> bool:
        """Whether a yes-or-no named ``plain`` says the call worked: ``success``, ``ok``, a bare
        ``status``; for an action also any ``*status`` and what it did (``added``). A lookup's
        ``online_status`` or ``door_lock_status`` is a state found, either way."""
        if plain in SUCCESS_FLAGS or plain == "status":
            return True
        acted = bool(self.done) and not self.looks
        return acted and (plain.endswith("status") or plain in (self.done, f"is{self.done}"))

    def _unlisted(self, schema: Mapping[str, Any], name: str, path: Path, plain: str) -> Any:
        """A listed item's name or title (or a word a description's format called for: a part of
        speech) that no earlier item of the list has: three events are not "Project kickoff,
        Year-end retrospective and Year-end retrospective". A few draws, then whatever comes (a
        vocabulary may hold fewer names than the list needs)."""
        listed = self._listed.setdefault((plain, tuple(p for p in path if type(p) is not int)), set())
        value = super().leaf(schema, name, path)
        if value is MISSING and schema.get(DISTINCT):  # words a description's format called for
            words = [w for w in schema.get("enum") or () if w not in listed]
            value = self.scope.rng.choice(words) if words else MISSING
        for _ in range(_REDRAWS):
            if not isinstance(value, str) or value not in listed:
                break
            value = super().leaf(schema, name, path)
        if isinstance(value, str):
            listed.add(value)
        return value

    def _found_file(self, schema: Mapping[str, Any], name: str, path: Path) -> Any:
        """A file a search found, named after what it looked for: ``search_documents("budget
        review")`` finds ``budget_review_report_2026.pdf``, not an unrelated ``resume_76.txt``."""
        kind = self.kind_at(schema, name, path)
        if kind is None or kind.family != "file" or kind.field not in _FOUND_FILES:
            return MISSING
        made = super().leaf(schema, name, path)
        if not isinstance(made, str) or "." not in made or made.startswith(self.query):
            return made
        return first_fit([f"{self.query}_{made}"], schema)

    def _filtered(self, schema: Mapping[str, Any], plain: str) -> Any:
        """A listed item's value that the call's filters allow: ``listPets(tags=[a, b])`` lists
        pets tagged ``a`` or ``b``, ``list_orders(status="open")`` open orders.

        A single value is a filter only when it is a category (an enum, or a name such as
        ``status``, ``city``, ``genre``): ``get_followers(username=...)`` lists other users.
        An identifier the items have under its own name is what holds them (Airflow's
        ``get_task_instances(dag_id=...)`` listed task instances of other DAGs); a list of values
        asked for gives each item one of them (``state=["failed"]``). A number or moment asked
        for as a bound bounds the items (``duration_lte``, ``min_rating``, ``start_date_gte``)."""
        asked = self.given.get(plain)
        if _IDENTIFIER_NAME.search(plain):
            return first_fit([asked], schema) if isinstance(asked, str | int) and plain != "id" else MISSING
        bounded = within_bounds(self.given, plain, schema.get("type") == "integer", self.scope.rng)
        if bounded is not None:
            return first_fit([bounded], schema)
        if isinstance(asked, str | bool) and (
            "enum" in schema or plain in _CATEGORIES or type(asked) is bool
        ):
            return first_fit([asked], schema)  # isLive=false lists no live video
        if isinstance(asked, list) and asked and all(isinstance(v, str | int) for v in asked):
            return first_fit([self.scope.rng.choice(asked)], schema)
        allowed = self.given.get(plain + "s", self.given.get(plain + "es"))
        if plain in LOGGED:  # BFCL's display_log: the log holds the messages the call displayed
            texts = [v for v in self.given.values() if isinstance(v, list) and v and isinstance(v[0], str)]
            allowed = texts[0] if len(texts) == 1 else allowed
        if isinstance(allowed, list) and allowed and all(isinstance(v, str) for v in allowed):
            return first_fit([self.scope.rng.choice(allowed)], schema)
        return MISSING

    def count(self, schema: Mapping[str, Any], name: str, path: Path, low: int, high: int) -> int | None:
        """The size an argument gives to the result's main lists (``days`` -> 3 days)."""
        if len(path) > 1 or _in_array(path):
            return None
        own = self.given.get(_plain(name))
        return int(own) if isinstance(own, int) and _whole(own) else self.size

    def include(self, schema: Mapping[str, Any], name: str, path: Path) -> bool | None:
        """Every property near the top (a response lists its fields; items look alike), but an
        input an action was not given."""
        if len(path) == 1 and self.done and _plain(name) in self.left_out:
            return False
        return True if len(path) <= 3 else None

    def finish(self, schema: Mapping[str, Any], value: Any, name: str, path: Path) -> Any:
        """Paired bounds in order; dates sorted; dated items consecutive; what a query found is
        what it asked for."""
        value = super().finish(schema, value, name, path)
        if isinstance(value, dict):
            order_pairs(value)
            duration_spans(value, schema)
            flags_hold_their_details(value, schema)
            total_covers_items(value, schema)
            sky_fits_temperature(value, schema, self.given)
            if len(path) == 1 and path[0] in self.found:
                self._echo(schema, value)
        elif isinstance(value, list) and value:
            order_dates(value, name)
            items = schema.get("items")
            for item in value:  # the dates moved: each item's end again its start plus its duration
                if isinstance(item, dict):
                    duration_spans(item, items if isinstance(items, Mapping) else {})
        return value

    def _echo(self, schema: Mapping[str, Any], found: dict[str, Any]) -> None:
        """The call's arguments in what a query found, lists too (leaves already echo scalars):
        QueryMeeting(attendees=["Kelly Marsh", "Elizabeth Booth"]) found a meeting with those two,
        not with one of them alone."""
        props = schema.get("properties")
        if not isinstance(props, Mapping):
            return
        for key in found:
            own = props.get(key)
            given = self.given.get(_plain(key))
            if given is not None and isinstance(own, Mapping) and _fits(given, own):
                found[key] = copy.deepcopy(given)


def _successes(done: str, schema: Mapping[str, Any]) -> list[Any]:
    """The statuses a call that succeeded may report, best first: what it did (``added``), then
    the words of success a schema's enum (or its description: "success or failed") offers. A
    reminder just added is not ``cancelled``."""
    offered = [v for v in schema.get("enum") or () if isinstance(v, str)]
    if not offered:
        described = _WORDS.findall(str(schema.get("description") or "").lower())
        return [*[w for w in described if w == done or w in SUCCESS][:1], done]
    good = [v for v in offered if v.lower() == done] + [v for v in offered if v.lower() in SUCCESS]
    return good or [done]


def _synthesised(
    tool: Tool,
    schema: Mapping[str, Any],
    arguments: Mapping[str, Any],
    rng: random.Random,
    *,
    pinned: Mapping[str, Any] | None = None,
    fallback: bool = True,
) -> Any:
    # the described schema only fills in what the tool's own leaves open: its validator holds
    own = schema is tool.output_parameters or schema is _plan(tool).described
    validator = tool.output_validator if own else None
    hooks = ResultHooks(_scope(tool, arguments, rng), tool, arguments, pinned)
    try:
        return synthesise(schema, rng, optional_probability=_OPTIONAL, validator=validator, hooks=hooks)
    except SynthesisError:
        if not fallback:
            return MISSING
        # The steering met constraints it cannot see (across properties): plain synthesis.
        return synthesise(schema, rng, optional_probability=_OPTIONAL, validator=validator)


def _scope(tool: Tool, arguments: Mapping[str, Any], rng: random.Random) -> Scope:
    """A scope whose entities are the call's: the city asked about, the user, the dates."""
    scope = Scope(rng)
    plan = _plan(tool)
    for name, value in arguments.items():
        kind = plan.kind(name)
        if kind is not None:
            scope.adopt(kind, value)
    for value in arguments.values():  # a city searched for ({"q": "Paris"}) is the place answered for
        if isinstance(value, str) and len(value) < 80 and place_named(value) is not None:
            scope.adopt(Kind("place", "city"), value)
    return scope


def _shaped(tool: Tool, arguments: Mapping[str, Any], rng: random.Random) -> Any:
    schema = guessed_schema(tool, arguments)
    return {"status": "ok"} if schema is None else _synthesised(tool, schema, arguments, rng)


# ---------------------------------------------------------------- helpers


def _held_bare(plain: str, path: Path) -> bool:
    """Whether a bare ``id`` or ``name`` at ``path`` is another thing's, inside an object that is
    no envelope (getVideo(id=25084) gave its account, channel, category and licence that id)."""
    return plain in _BARE_KEYS and any(str(p).lower() not in ENVELOPES for p in path[:-1])


_BARE_KEYS = frozenset({"id", "uuid", "name", "label", "title", "key", "code", "type", "slug"})


def _fits(value: Any, schema: Mapping[str, Any]) -> bool:
    """Whether ``value`` validates against ``schema``, a part of a tool's schema (False when the
    part cannot be compiled alone: a ``$ref`` into the whole)."""
    try:
        return get_validator(schema).is_valid(value)
    except InvalidSchemaError:
        return False


def _in_array(path: Path) -> bool:
    return any(type(part) is int for part in path)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 1000
