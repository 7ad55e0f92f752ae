"""Realistic, seeded values by property name, description and format, still valid for the schema.

:func:`fake` is :func:`~fms_dgt.core.tools.synth.synthesise` with a vocabulary at the leaves: a
``first_name`` is a first name, an ``email`` is that person's address, a ``city`` is a real city and
``country_code`` its real code, a ``check_out`` comes after the ``check_in``, an ``order_id`` looks
like an order id and ``file`` like ``report_2026.pdf``. What it knows:

* people (names, email, username, phone, gender, job), companies;
* places (city, region, country, codes, street address, postcode, coordinates, time zone, airport),
  from a table of real cities so that every field agrees;
* dates, times and date-times in ISO formats (or the ``strftime``/``YYYY-MM-DD`` format a
  description gives), drawn around a fixed calendar anchor, never the clock;
* ids per entity (``user_id``, ``order_id``; the shape of an example in the description such as
  ``'#W0000000'`` is kept), money (amounts, currencies), cards and accounts;
* URLs, domains, IPs (documentation ranges), file names, paths, MIME types;
* texts (titles, search queries, keywords, messages, reviews, reasons, descriptions, tags), items
  (products, hotels, restaurants, flights, tickers), colours, languages, and numbers with a natural
  range (counts, ratings, ages, durations...).

What a value stands for comes from :func:`classify` (cached). Entities live in a :class:`Scope`:
values made in one scope agree (one person's name and email, one city's country). A value must
also satisfy its schema (``enum``, ``const``, ``format``, ``pattern``, bounds, lengths,
``multipleOf``): a candidate that does not is passed over, and what the vocabulary does not cover
falls back to :mod:`fms_dgt.core.tools.synth`, whose bounds (``MAX_STRING``...) still apply.

Faker's default locale (``en_US``) provides names, streets, companies, jobs and colours; a private
Faker instance per thread, seeded from the scope's :class:`random.Random` each time it is used,
provides sentences, words and passwords. Nothing reads the clock or the network, so the same seed
gives the same values in any process.
"""

from __future__ import annotations

import functools
import itertools
import random
import re
from collections.abc import Iterable, Mapping
from typing import Any

from fms_dgt.core.tools._fake_data import private_faker
from fms_dgt.core.tools._fake_heads import ENVELOPES
from fms_dgt.core.tools._fake_kinds import (
    REMEMBERED,
    SORT_WORDS,
    Kind,
    canonical,
    classify,
    place_named,
    remembers,
    tokens,
    topic_noun,
)
from fms_dgt.core.tools._fake_moulds import moment_like, redrawn, reshaped
from fms_dgt.core.tools._fake_values import Scope, examples_in
from fms_dgt.core.tools.synth import MISSING, Path, SynthesisError, SynthHooks, synthesise

__all__ = [
    "MISSING",
    "REMEMBERED",
    "SORT_WORDS",
    "FakeHooks",
    "Kind",
    "Scope",
    "canonical",
    "classify",
    "fake",
    "first_fit",
    "fit",
    "json_type",
    "place_named",
    "private_faker",
    "remembers",
    "tokens",
    "types_of",
]

#: Families whose values may come from the examples a description gives.
_HINTED = frozenset({"text", "misc", "item", "file", "web", "company", "number"})
#: Families whose members differ from one array item to the next (passengers, line items).
_PER_ITEM = frozenset({"person", "place", "id", "item", "file", "company"})


def fake(
    schema: Any,
    rng: random.Random,
    *,
    name: str = "",
    description: str = "",
    topic: str = "",
    scope: Scope | None = None,
    optional_probability: float = 0.5,
) -> Any:
    """A realistic value valid against ``schema``.

    Args:
        schema: a Draft 2020-12 schema.
        rng: the random source (seed it for reproducibility).
        name: the property name the value is for (``email``, ``check_in``...).
        description: what the value is, when the schema does not say.
        topic: the tool's name (``get_order`` makes a bare ``id`` an order id).
        scope: entities to agree with (a new one drawn from ``rng`` when None).
        optional_probability: chance that an optional object property is filled.

    Raises:
        SynthesisError: no valid value was found.
    """
    if description and isinstance(schema, dict) and "description" not in schema:
        schema = {**schema, "description": description}
    hooks = FakeHooks(scope or Scope(rng), topic=topic)
    try:
        return synthesise(schema, rng, name=name, optional_probability=optional_probability, hooks=hooks)
    except SynthesisError:
        # The vocabulary steered into a dead end (constraints across properties it cannot see):
        # plain synthesis still finds a valid value.
        return synthesise(schema, rng, name=name, optional_probability=optional_probability)


class FakeHooks(SynthHooks):
    """Synthesis hooks that draw leaves from the vocabulary, within one :class:`Scope`.

    Args:
        scope: the entities values agree with.
        topic: the tool's name, for names that need it (a bare ``id``).
        defaults: also take a schema's ``default`` as an example (results do; arguments do not,
            since a default is what the tool assumes when the argument is left out).
        kinds: a cache of leaf kinds to share between calls of one tool (it holds the schemas,
            so keep it no longer than the tool).
    """

    def __init__(
        self,
        scope: Scope,
        *,
        topic: str = "",
        defaults: bool = False,
        kinds: dict[tuple[int, str], tuple[Mapping[str, Any], Kind | None]] | None = None,
    ) -> None:
        self.scope = scope
        self.topic = topic
        self.defaults = defaults
        # The kinds of the leaves met so far, by schema object and name: array items repeat the
        # same schemas, and a caller may keep the cache for every call of one tool.
        self._kinds = kinds if kinds is not None else {}

    def kind_at(self, schema: Mapping[str, Any], name: str, path: Path) -> Kind | None:
        """What the value at ``path`` stands for (array items beyond the first are other entities)."""
        key = (id(schema), name)
        known = self._kinds.get(key)
        if known is not None and known[0] is schema:
            kind = known[1]
        else:
            kind = self._classify(schema, name, path)
            self._kinds[key] = (schema, kind)
        if kind is not None and kind.family in _PER_ITEM:
            index = _index(path)
            if index:
                return kind._replace(role=f"{kind.role}#{index}")
        return kind

    def _classify(self, schema: Mapping[str, Any], name: str, path: Path) -> Kind | None:
        description, fmt = schema.get("description"), schema.get("format")
        said = description if isinstance(description, str) else ""
        fmt, typed = fmt if isinstance(fmt, str) else "", json_type(schema)
        found = classify(name, said, _parent(path), self.topic, fmt, typed)
        if found is None and (not name or name.lower() in ENVELOPES) and typed in ("string", "integer"):
            # a bare list's items are what the tool returns: PeerTube's getCategories answered
            # ["river-887"], a placeholder for a category
            noun = topic_noun(self.topic)
            return classify(noun, said, "", self.topic, fmt, typed) if noun else None
        return found

    def leaf(self, schema: Mapping[str, Any], name: str, path: Path) -> Any:
        """A value for a scalar node (see :class:`~fms_dgt.core.tools.synth.SynthHooks`)."""
        kind = self.kind_at(schema, name, path)
        if isinstance(schema.get("enum"), list):
            return self.choose(kind, schema["enum"])
        if kind is None or kind.family != "id" or any(isinstance(step, int) for step in path):
            return self.value(kind, schema, name, fresh=_index(path) > 0)
        given = self.scope.given(kind)  # an id as a call gave it ("2y84q2MQ...", not "vide-2842")
        if given is not None and fit(given, schema):
            return given
        made = self.value(kind, schema, name)
        if given is None and made is not MISSING:
            self.scope.given_as(kind, made)  # the form later calls (and oneOf branches) keep
        return made

    def branch(self, schema: Mapping[str, Any], branches: list[Any], name: str, path: Path) -> int | None:
        """The first branch the scope's own value of this kind fits (PeerTube's video ``id`` is an
        integer, a UUID or a short UUID: once a call used 42, the next one takes the integer
        branch and 42 again); None when the scope has none yet."""
        kind = self.kind_at(schema, name, path)
        if kind is None or not remembers(kind) or not self.scope.known(kind):
            return None
        given = self.scope.given(kind)
        if given is not None:  # the form a call used (42), before its other renderings ("vide-42")
            fitting = (i for i, b in enumerate(branches) if isinstance(b, Mapping) and fit(given, b))
            found = next(fitting, None)
            if found is not None:
                return found
        before = set(self.scope.entities)
        try:
            for candidate in itertools.islice(self.scope.candidates(kind, {}, name), 6):
                for index, branch in enumerate(branches):
                    if isinstance(branch, Mapping) and fit(candidate, branch):
                        return index
        finally:
            for key in set(self.scope.entities) - before:  # made only to look: forgotten again
                del self.scope.entities[key]
        return None

    def value(self, kind: Kind | None, schema: Mapping[str, Any], name: str, fresh: bool = False) -> Any:
        """The scope's value of ``kind`` for ``schema``, a schema example, or :data:`MISSING`.

        ``fresh``: an item of a list after its first, whose kind the vocabulary knows, takes no
        schema example (PeerTube's examples gave every listed video id 42 and the title "What
        is PeerTube?").
        """
        scope = self.scope
        if kind is not None and remembers(kind) and scope.known(kind):
            found = first_fit(scope.candidates(kind, schema, name), schema)
            if found is not MISSING:
                return found
        if fresh and kind is not None:
            example = self.example(schema) if kind.family == "id" else MISSING
            if example is not MISSING:  # PeerTube's listed videos' shortUUIDs were shor-43928
                moulded = self._moulded(kind, example, schema, name)
                if moulded != example:
                    return moulded
            found = first_fit(scope.candidates(kind, schema, name), schema)
            if found is not MISSING:
                return found
        identifier = kind if kind is not None and kind.family == "id" else None
        if identifier is not None and schema.get("format") == "uuid":
            # A UUID's form is the format's, not the example's: each record names its own (every
            # Codat record had the spec's one company, and it was the account too).
            found = first_fit(scope.candidates(identifier, schema, name), schema)
            if found is not MISSING:
                return found
        example = self.example(schema)
        if (
            example is not MISSING
            and kind is not None
            and kind.family in _VARIED
            and scope.rng.random() < 0.75
        ):
            # a spec's one example is one value among many: every PeerTube video was "What is
            # PeerTube?" and every channel chocobozzz; the vocabulary's own, most of the time
            own = first_fit(scope.candidates(kind, schema, name), schema)
            example = own if own is not MISSING else example
        if identifier is not None and example is not MISSING and scope.names_another(identifier, example):
            example = MISSING  # the spec's one example for two entities: this one gets its own id
        if (
            example is not MISSING
            and kind is not None
            and kind.family in ("id", "date", "file", "web", "number")
        ):
            example = self._moulded(kind, example, schema, name)
        if example is MISSING and (kind is None or kind.family in _HINTED):
            example = self.hinted(schema)
        if example is not MISSING:
            if kind is not None:
                scope.adopt(kind, example)
            return example
        if kind is None:
            return MISSING
        return first_fit(scope.candidates(kind, schema, name), schema)

    def _moulded(self, kind: Kind, example: Any, schema: Mapping[str, Any], name: str) -> Any:
        """The record's own id, moment, number, path or address in the shape of the spec's one example
        (every PeerTube playlist was ``2y84q2MQUMWPbiEcxNXMgC`` and every video published at one
        second): an integer id is the entity's number; the example itself when nothing of its
        shape fits (see :mod:`~fms_dgt.core.tools._fake_moulds`)."""
        if isinstance(example, bool) or not isinstance(example, (str, int)):
            return example
        own: int | str | None = None
        if kind.family == "date":
            if isinstance(example, str):
                own = moment_like(example, self.scope.candidates(kind, schema, name))
        elif kind.family == "number":  # a count in its natural range (every video had 42 likes)
            if isinstance(example, (int, float)):
                own = next(iter(self.scope.candidates(kind, schema, name)), None)
        elif kind.family in ("file", "web"):
            if isinstance(example, str):
                own = redrawn(example, str(self.scope.rng.getrandbits(64)))
        else:
            ident = self.scope.ident(kind.field, kind.role)
            own = ident.number if isinstance(example, int) else reshaped(example, ident.number, ident.uuid)
        return own if own is not None and fit(own, schema) else example

    def hinted(self, schema: Mapping[str, Any]) -> Any:
        """One of the example values the description gives (``such as 'Physics'``) that fits."""
        description = schema.get("description")
        if not description or not isinstance(description, str):
            return MISSING
        examples = examples_in(description)
        if not examples:
            return MISSING
        start = self.scope.rng.randrange(len(examples))
        return first_fit(examples[start:] + examples[:start], schema)

    def finish(self, schema: Mapping[str, Any], value: Any, name: str, path: Path) -> Any:
        """Arrays of plain values without repeats (``["Drums", "Drums"]``) when the schema allows."""
        if not isinstance(value, list) or not value or isinstance(value[0], (dict, list)):
            return value
        keys = [_hashable(v) for v in value]
        if len(set(keys)) == len(keys):
            return value
        unique = [value[keys.index(k)] for k in dict.fromkeys(keys)]
        items = schema.get("items")
        options = items.get("enum") if isinstance(items, Mapping) else None
        if isinstance(options, list):
            # Repeats of an enum become the members not used yet, as far as there are any.
            used = set(keys)
            unused = [o for o in options if _hashable(o) not in used]
            self.scope.rng.shuffle(unused)
            unique += unused[: len(value) - len(unique)]
        # numbers may repeat rather than leave one: the standard deviation of [5, 5], not of [5]
        numeric = all(isinstance(v, int | float) for v in value)
        fewest = max(int(schema.get("minItems", 0) or 0), 2 if numeric else 0)
        return unique if len(unique) >= fewest else value

    def choose(self, kind: Kind | None, options: list[Any]) -> Any:
        """An ``enum`` member: the scope's own value when it is one, else a draw (remembered)."""
        if not options:
            return MISSING
        if kind is None or not remembers(kind):
            return MISSING
        scope = self.scope
        before = set(scope.entities)
        # The entity's own value when the enum has it (the record's currency among the allowed
        # ones); entities made only to find that out are forgotten again if it does not.
        for candidate in scope.candidates(kind, {}, ""):
            if candidate in options:
                return candidate
        for key in set(scope.entities) - before:
            del scope.entities[key]
        choice = scope.rng.choice(options)
        scope.adopt(kind, choice)
        return choice

    def example(self, schema: Mapping[str, Any]) -> Any:
        """One of the schema's own ``examples`` (or ``default``) that fits it, or :data:`MISSING`."""
        examples = schema.get("examples")
        each = (
            [[a for a in _alternatives(e) if fit(a, schema)] for e in examples]
            if isinstance(examples, list)
            else []
        )
        pool = [fitting[0] for fitting in each if fitting]
        if not pool and self.defaults and "default" in schema and fit(schema["default"], schema):
            pool = [schema["default"]]
        return self.scope.rng.choice(pool) if pool else MISSING


#: Kinds whose values the vocabulary varies in place of a schema's one example (names and texts).
_VARIED = frozenset({"text", "person", "company"})


def _alternatives(example: Any) -> list[Any]:
    """An example that lists alternatives (PeerTube's handle "my_username | my_username@example.com")
    as its first one (every call of a record takes the same), then the whole; any other example
    as itself."""
    if not isinstance(example, str) or " | " not in example:
        return [example]
    first = example.split(" | ", 1)[0].strip()
    return [first, example] if first else [example]


def first_fit(candidates: Iterable[Any], schema: Mapping[str, Any]) -> Any:
    """The first candidate that, shaped to the schema's type, fits it; else :data:`MISSING`."""
    for candidate in candidates:
        shaped = _shape(candidate, schema)
        if shaped is not MISSING and _fits_shaped(shaped, schema):
            return shaped
    return MISSING


def _hashable(value: Any) -> Any:
    # 1 and True are equal in Python but different JSON values.
    return (type(value).__name__, value) if isinstance(value, (bool, int, float, str)) else repr(value)


def _index(path: Path) -> int:
    """The index of the innermost array item on ``path`` (0 outside arrays)."""
    for part in reversed(path):
        if type(part) is int:
            return part
    return 0


def _parent(path: Path) -> str:
    """The name of the object or array that holds the value at ``path``; past an envelope, what
    holds it (JSON:API's ``relationships.account.data.id`` is an account's, not a transaction's)."""
    items = list(path)
    if items and isinstance(items[-1], int):
        items.pop()  # an array item: its name is the array's own
    if items:
        items.pop()
    names = [p for p in reversed(items) if isinstance(p, str)]
    if names and names[0].lower() in ENVELOPES:
        return next((n for n in names if n.lower() not in ENVELOPES and n != "relationships"), names[0])
    return names[0] if names else ""


def json_type(schema: Mapping[str, Any]) -> str:
    """The JSON type a schema names first, besides null (``""`` when it names none)."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "")
    return kind if isinstance(kind, str) else ""


def types_of(schema: Any) -> frozenset[str] | None:
    """The JSON types a schema names (its ``type``, a string or a list), None when it names none."""
    if not isinstance(schema, Mapping):
        return None
    kind = schema.get("type")
    if isinstance(kind, str):
        found = _TYPE_SETS.get(kind)
        if found is None:
            found = _TYPE_SETS[kind] = frozenset((kind,))
        return found
    if isinstance(kind, list):
        return frozenset(k for k in kind if isinstance(k, str))
    return None


_TYPE_SETS: dict[str, frozenset[str]] = {}


def _shape(value: Any, schema: Mapping[str, Any]) -> Any:
    """``value`` in a JSON type the schema allows (``48213`` -> ``"48213"``), or :data:`MISSING`."""
    allowed = types_of(schema)
    if allowed is None:
        return value
    if isinstance(value, bool):
        return value if "boolean" in allowed else MISSING
    if isinstance(value, int):
        if allowed & {"integer", "number"}:
            return value
        return str(value) if "string" in allowed else MISSING
    if isinstance(value, float):
        if "number" in allowed:
            return value
        if "integer" in allowed and value == int(value):
            return int(value)
        return str(value) if "string" in allowed else MISSING
    if isinstance(value, str):
        if "string" in allowed:
            return value
        if "integer" in allowed and value.isdigit() and len(value) < 16:
            return int(value)
    return MISSING


def fit(value: Any, schema: Mapping[str, Any]) -> bool:
    """Whether ``value`` meets the scalar keywords of ``schema`` (a quick, local check).

    Checked: ``const``, ``enum``, ``type``, string lengths, ``pattern``, ``format`` (loosely, as
    the fakes render it), numeric bounds and ``multipleOf``. Keywords across values (``not``,
    ``if``) are left to the validator the callers run on the whole value.
    """
    allowed = types_of(schema)
    if allowed is not None and not _of_type(value, allowed):
        return False
    return _fits_shaped(value, schema)


def _of_type(value: Any, allowed: frozenset[str]) -> bool:
    if isinstance(value, bool):
        return "boolean" in allowed
    if isinstance(value, int):
        return bool(allowed & {"integer", "number"})
    if isinstance(value, float):
        return "number" in allowed or ("integer" in allowed and value.is_integer())
    if isinstance(value, str):
        return "string" in allowed
    if value is None:
        return "null" in allowed
    return ("array" if isinstance(value, list) else "object" if isinstance(value, Mapping) else "") in allowed


def _fits_shaped(value: Any, schema: Mapping[str, Any]) -> bool:
    """:func:`fit` for a value already of a type the schema allows."""
    if _SCALAR_KEYS.isdisjoint(schema):
        return True
    if "const" in schema:
        return _same(value, schema["const"])
    enum = schema.get("enum")
    if isinstance(enum, list) and not any(_same(value, e) for e in enum):
        return False
    if isinstance(value, str):
        return _fits_string(value, schema)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _fits_number(value, schema)
    return True


#: The keywords :func:`fit` checks besides ``type`` (a schema with none of them takes any value).
_SCALAR_KEYS = frozenset(
    {"const", "enum", "minLength", "maxLength", "pattern", "format", "minimum", "maximum"}
    | {"exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
)


def _same(a: Any, b: Any) -> bool:
    return a == b and isinstance(a, bool) == isinstance(b, bool)


def _fits_string(value: str, schema: Mapping[str, Any]) -> bool:
    low, high = schema.get("minLength"), schema.get("maxLength")
    if isinstance(low, int) and len(value) < low:
        return False
    if isinstance(high, int) and len(value) > high:
        return False
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        compiled = _regex(pattern)
        if compiled is not None and compiled.search(value) is None:
            return False
    check = _FORMAT_CHECKS.get(str(schema.get("format")))
    return check is None or check.search(value) is not None


def _fits_number(value: float, schema: Mapping[str, Any]) -> bool:
    low, high = _bound(schema, "minimum"), _bound(schema, "maximum")
    if (low is not None and value < low) or (high is not None and value > high):
        return False
    low, high = _bound(schema, "exclusiveMinimum"), _bound(schema, "exclusiveMaximum")
    if (low is not None and value <= low) or (high is not None and value >= high):
        return False
    step = schema.get("multipleOf")
    if isinstance(step, (int, float)) and not isinstance(step, bool) and step > 0:
        ratio = value / step
        return abs(ratio - round(ratio)) < 1e-9
    if json_type(schema) == "integer":
        return value == int(value)
    return True


def _bound(schema: Mapping[str, Any], key: str) -> float | None:
    bound = schema.get(key)
    return bound if isinstance(bound, (int, float)) and not isinstance(bound, bool) else None


@functools.lru_cache(maxsize=2048)
def _regex(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return None  # not a Python regular expression: the validator decides


_FORMAT_CHECKS = {
    "date": re.compile(r"^\d{4}-\d{2}-\d{2}$"),
    "date-time": re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$"),
    "time": re.compile(r"^\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$"),
    "email": re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$"),
    "uri": re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:\S+$"),
    "url": re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:\S+$"),
    "uuid": re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I),
    "ipv4": re.compile(r"^\d{1,3}(\.\d{1,3}){3}$"),
    "hostname": re.compile(r"^[A-Za-z0-9.-]+$"),
}
