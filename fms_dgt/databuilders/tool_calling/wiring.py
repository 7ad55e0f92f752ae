"""Which earlier result may become which argument: the rules a wire must pass.

The dataflow graph scores how well an output fits an input by names, types and entities; a
record's calls take a value along an edge only when the two stand for one kind of thing
(:func:`apart` says when they do not): never an appointment id into a date, a status into a
password, a yes or no at all, a count of followers as a page size, or another API's own ids,
prices, statuses and tokens (:func:`same_api`; a place, a date, a person, a link, a ticker or a
currency means the same everywhere). The rules read the two tools alone, so the planner drops
the edges no call would use before a record is made (see ``planner._without_copies``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from fms_dgt.core.tools.artifacts import leaf_name, split_path
from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.enrichments._dataflow_entities import api_name, api_prefix
from fms_dgt.core.tools.enrichments._dataflow_words import singular
from fms_dgt.core.tools.fakes import SORT_WORDS, Kind, classify, json_type, tokens, types_of
from fms_dgt.databuilders.tool_calling.wording import humanize, plain_name

__all__ = ["READS", "apart", "classify_at", "first_word", "property_of", "same_api", "schema_at", "worded"]


def property_of(parameters: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """The schema of property ``name`` of an object schema, ``{}`` when it has none."""
    props = parameters.get("properties")
    schema = props.get(name) if isinstance(props, Mapping) else None
    return schema if isinstance(schema, Mapping) else {}


def schema_at(schema: Mapping[str, Any], path: str) -> tuple[Mapping[str, Any], str]:
    """The schema of the value at an output path (``news[].webUrl``), through ``$ref``s to the
    schema's ``$defs`` and the branches of ``allOf``/``anyOf``/``oneOf``, and the name of the
    property holding it (``news``; ``""`` at the top); ``{}`` when the schema does not say."""
    try:
        steps = split_path(path)
    except ValueError:
        return {}, ""
    if len(steps) > _DEEPEST:
        return {}, ""  # deeper than any output the dataflow names
    defs = schema.get("$defs")
    node: Any = schema
    parent = last = ""
    for step in steps:
        node = _resolved(node, defs)
        if isinstance(step, int):
            node = node.get("items") if isinstance(node, Mapping) else None
        else:
            parent, last = last, step
            node = _property(node, step, defs)
        if not isinstance(node, Mapping):
            return {}, parent
    return _resolved(node, defs), parent


_DEEPEST = 24


def _resolved(node: Any, defs: Any) -> Any:
    for _ in range(8):  # a chain of references, followed a few steps (a cycle is no schema)
        ref = node.get("$ref") if isinstance(node, Mapping) else None
        if not (isinstance(ref, str) and ref.startswith("#/$defs/") and isinstance(defs, Mapping)):
            return node
        node = defs.get(ref[8:])
    return {}


def _property(node: Any, name: str, defs: Any) -> Any:
    """Property ``name`` of ``node`` or of a branch of its ``allOf``/``anyOf``/``oneOf``, read
    breadth first, each schema once and at most :data:`_MOST_NODES` of them (a ``$def`` whose
    branches all refer back to it would otherwise be read 3 ** depth times)."""
    queue: list[Any] = [node]
    seen: set[int] = set()
    for current in queue:
        if len(seen) >= _MOST_NODES:
            break
        if not isinstance(current, Mapping) or id(current) in seen:
            continue
        seen.add(id(current))
        props = current.get("properties")
        if isinstance(props, Mapping) and name in props:
            return props[name]
        for key in ("allOf", "anyOf", "oneOf"):
            branches = current.get(key)
            queue.extend(_resolved(b, defs) for b in (branches if isinstance(branches, list) else ())[:64])
    return None


_MOST_NODES = 256


def classify_at(tool: Tool, name: str, schema: Mapping[str, Any], parent: str = "") -> Kind | None:
    """What parameter ``name`` of ``tool`` (schema ``schema``, inside ``parent``) stands for."""
    return classify(
        name,
        str(schema.get("description") or ""),
        parent=parent,
        topic=tool.name,
        fmt=str(schema.get("format") or ""),
        kind=json_type(schema),
    )


#: First words of a tool that reads (what a status may filter; what the planner's copies read).
READS = frozenset(
    {"get", "list", "search", "find", "filter", "query", "fetch", "show", "count", "check", "view"}
    | {"retrieve", "lookup", "read"}
)
#: Families of values said in words: a number a tool computed is none of them.
_WORDED = frozenset({"text", "person", "place", "company", "web", "file"})
_NUMBERED = frozenset({"latitude", "longitude", "postcode", "calling_code"})


def _numeric(schema: Any) -> bool:
    return bool({"number", "integer"} & (types_of(schema) or frozenset()))


def worded(kind: Kind | None, schema: Any) -> bool:
    """Whether an argument of ``kind`` (schema ``schema``) is said in words, so that no number
    is one: a name, a place, a link or a file; not a latitude, nor anything typed as a number."""
    if kind is None or kind.family not in _WORDED or kind.field in _NUMBERED:
        return False
    return not _numeric(schema)


#: Families of values that never stand for one another (see :meth:`EntityContext.apart`).
_STRONG = frozenset({"id", "person", "date", "place", "money", "misc"})
#: Kinds that take no other kind's value at all: a moment, a card's number or code.
_EXCLUSIVE = frozenset({"date", "account"})
#: Fields any of which may carry another kind's value (a session id as a token, a word as a code).
_LOOSE = frozenset({"token", "code", "word"})
_HANDLES = frozenset({"email", "username"})
#: Fields whose values are codes of a closed list: they take only their own kind.
_CODED = frozenset({"currency", "country_code", "language_code", "airport", "timezone"})
#: Output names that say only that they are a result (the whole result is ``""``).
_UNNAMED = frozenset({"", "result", "results", "answer", "value", "output", "out", "res", "ret", "response"})
_WORD = re.compile(r"[a-z]{3,}")
#: Tools whose dates are to come, and lookups of what was recorded on a date (which has to be past).
_FORECASTS = re.compile(r"forecast|predict|upcoming|future", re.I)
_RECORDED = re.compile(r"stock|share price|quote|histor|exchange rate|statement|balance|closing price", re.I)


def first_word(name: str) -> str:
    """The first word of a tool's name after any dotted prefix (``shop.list_orders`` ->
    "list"; ``""`` for a name of no words, such as ``_``)."""
    words = tokens(name.rsplit(".", 1)[-1])
    return words[0] if words else ""


def same_api(one: Tool, other: Tool) -> bool:
    """Whether two tools belong to one API: one namespace, and, in a catalogue whose tools are
    named ``<API>_<operation>`` (NESTFUL's ``Tripadvisor_Search_Hotels``, ``SEC_Filings``), one
    such API name. Tools named for their operation alone (``lockDoors``, ``get_weather``) are of
    their namespace's API; beside a tool named for its API, a tool is of that API only when its
    name starts with it (NESTFUL's ``RedditTopPostsBySubreddit`` is no ``Alpha_Vantage`` tool:
    a Reddit post's domain is no currency to convert)."""
    if one.namespace != other.namespace:
        return False
    first, second = api_name(one.name), api_name(other.name)
    if first and second:
        return first == second
    if first or second:
        return api_prefix(other.name if first else one.name) == (first or second)
    return True


#: Sundries that are one API's own business: its statuses, tokens, codes, sorts and units.
_OWN = frozenset(
    {
        "status", "token", "password", "sort", "version", "order_type", "flag", "code", "word",
        "direction", "unit", "badge", "social", "web", "scene", "cik",
    }
)  # fmt: skip
#: Per family of another API's value, the fields it may carry into this one, or ``None`` for
#: any field of the family: where something is, who, links, stock symbols, products and
#: currencies mean one thing everywhere; an API's ids, prices, counts and statuses are its own.
_TRAVELLING: dict[str, frozenset[str] | None] = {
    "place": None,
    "web": None,
    "person": None,
    "item": frozenset({"ticker", "product"}),
    "money": frozenset({"currency"}),
    "text": frozenset({"title", "message"}),
    "company": frozenset({"name"}),
}


def _travels(made: Kind | None, wanted: Kind | None, leaf: str) -> bool:
    """Whether a value of kind ``made`` (output ``leaf``) from one API may be argument of kind
    ``wanted`` of another: both known and the same thing (a city as a city or location, a
    ticker as a ticker, a title searched for), never an API's own ids, prices, counts or
    sundries (a door's status, a continuation token), a moment past as one to schedule, nor a
    bare ``name`` as a person (an Airflow link's name is no bank customer)."""
    if made is None or wanted is None:
        return False
    # a text's subject (title:video) says what to draw, not whether it travels: a title is a title
    made, wanted = (k._replace(field=k.base) if k.family == "text" else k for k in (made, wanted))
    if made.family == "text" and wanted.family == "text" and wanted.field == "query":
        return made.field == "title"  # a title searched for, not a message
    if made.family != wanted.family:
        return False
    if made.family == "date":
        return not (made.field == "past" and wanted.field in ("start", "end"))
    if made.family == "misc":
        return made.field == wanted.field and made.field not in _OWN
    if made.family == "person" and plain_name(leaf) == "name":
        return False
    if made.family not in _TRAVELLING:
        return False
    fields = _TRAVELLING[made.family]
    return fields is None or (made.field == wanted.field and made.field in fields)


#: Words of an output's name that say its values are people.
_SOMEONE = frozenset(
    {"user", "author", "member", "owner", "person", "people", "customer", "contact", "follower"}
    | {"friend", "player", "artist", "doctor", "patient", "employee", "attendee", "participant"}
)


def _words_of(name: str) -> set[str]:
    """The words of a name, each made singular (``appointments`` -> ``appointment``)."""
    return {singular(w) for w in humanize(name).lower().split()}


def _sort_of(name: str) -> bool:
    """Whether a name says the sort of a thing (``accountType``, ``file_format``)."""
    words = humanize(leaf_name(name)).lower().split()
    return bool(words) and words[-1] in SORT_WORDS


@functools.lru_cache(maxsize=65536)
def apart(source: Tool, output: str, target: Tool, name: str) -> bool:
    """Whether output ``output`` (a path) of ``source`` stands for another kind of thing than
    argument ``name`` of ``target`` (an appointment id for a doctor, a date for an amount):
    such a value is never wired, whatever the dataflow graph scored. It reads the two tools alone,
    so a planner can tell before a record is made which edges its calls will never use; the
    answer is remembered (the planner asks it of every draw's edges, the executor again)."""
    leaf = leaf_name(output)
    found, parent = schema_at(source.output_parameters, output)
    made = classify_at(source, leaf, found, parent) if leaf else None
    wanted = _kind_of(target, name)
    if _sort_of(output) != _sort_of(name):
        return True  # the sort of a thing is no name of one (a bank account's type 'Credit')
    if _numeric(found) and worded(wanted, property_of(target.parameters, name)):
        return True  # a quotient is no division's name (When2Call's divide fed district details)
    if wanted is not None and wanted.family == "number" and worded(made, found):
        return True  # nor is a words' value a number: a price alert's message was a paper weight
    if (
        made is not None
        and made.family == "date"
        and _FORECASTS.search(source.name)
        and _RECORDED.search(f"{target.name} {target.description}")
    ):
        return True  # a forecast's day is to come: no stock price was quoted on it (the demo's QueryStock)
    if made is not None and made.field in ("status", "run_state"):
        # How a call went is no name of anything (a funded account's 'cancelled' as a museum),
        # and filters a listing at most: a cancelled order's status is no social media post.
        said = {"status", "state"} & set(humanize(name).lower().split())
        if not said or first_word(target.name) not in READS:
            return True
    if wanted is not None and plain_name(leaf) in _UNNAMED:
        return not _says(source, wanted, name)
    if wanted == ("number", "count", "") and plain_name(leaf) != plain_name(name):
        return True  # how many to list is the user's choice: a video's followers are no page size
    if made is None and wanted is not None and wanted.family in _STRONG:
        # a thing nothing says is someone is no one's name unless the names share a word (a
        # user list's item is a user; API-Bank's appointments are no doctor); nor is it a
        # place, a moment, an amount or a word of the vocabulary (glaive's user list went into
        # a recipe search's ingredients)
        # (a sort word is no shared word: a transaction's type is no order's type)
        shared = _words_of(leaf) & (_words_of(name) | (_SOMEONE if wanted.family == "person" else set()))
        if not shared - SORT_WORDS:
            return True  # (and sharing a word, it still answers to the rules below: another API's?)
    if not same_api(source, target) and plain_name(leaf) not in _UNNAMED:
        # Another API's value means the same here only when it is a portable thing (a city, a
        # date, a person, a stock symbol...): a car's door status is no video's upload, nor
        # a bank account's type a trade's order type.
        return not _travels(made, wanted, leaf)
    if made is None or wanted is None:
        return False
    if made.family == wanted.family:
        # (Another API's past moment never gets here: :func:`_travels` refused it.) Two of the
        # vocabulary's sundries are one thing only under one field: a music
        # player's status is no new account's password.
        if made.field != wanted.field and {made.field, wanted.field} & _CODED:
            return True  # a currency's name (Euro) is no currency code, nor a price one
        return (
            made.family == "misc" and made.field != wanted.field and not {made.field, wanted.field} & _LOOSE
        )
    if {made.field, wanted.field} & _LOOSE:  # but a file's place is no token (Airflow's fileloc)
        return "file" in (made.family, wanted.family)
    if {made.field, wanted.field} & _CODED:  # a restaurant's open status category is no currency
        return True
    if {made.family, wanted.family} & _EXCLUSIVE:  # a product is no date, a dial code no CVV
        return True
    if not {made.family, wanted.family} <= _STRONG:
        return False
    # A user's email or username may be the id an API takes for them.
    return not ({made.family, wanted.family} == {"id", "person"} and {made.field, wanted.field} & _HANDLES)


def _says(source: Tool, wanted: Kind, name: str) -> bool:
    """Whether a result ``source`` names only as a result (``answer``, ``result``, the whole
    result) may be argument ``name`` of kind ``wanted``: a count, an amount or text may be
    any result; another kind only the result of a tool whose words or inputs name it (a
    temperature converter's result is a temperature; an arithmetic answer is no longitude,
    a quotient no one's weight)."""
    if wanted.family in ("text", "money") or wanted.field == "count":
        return True
    words = set(_WORD.findall(f"{humanize(source.name)} {source.description}".lower()))
    if words & set(_WORD.findall(f"{humanize(wanted.field)} {humanize(name)}".lower())):
        return True
    inputs = (source.parameters.get("properties") or {}).keys()
    return any(_kind_of(source, str(p)) == wanted for p in inputs)


def _kind_of(tool: Tool, name: str) -> Kind | None:
    return classify_at(tool, name, property_of(tool.parameters, name))
