"""Values that cannot pass, for the ``dataflow`` enrichment.

**Closed sets.** An output that can only be one of some values feeds an input that can only be
one of others only when the two sets share a value.

A temperature converter's ``unit`` (``celsius`` or ``fahrenheit``) and a weather tool's ``units``
(``metric`` or ``imperial``) read alike and have one type, but no value of the first is a valid
value of the second: a chain wired through them cannot pass anything, and a record sampled as such a
chain calls two tools one after the other with nothing flowing between them. Such pairs score 0.

A parameter's set is its ``enum`` (or ``const``), or its items' for a list, when every value is a
scalar, or else the values its description lists (:mod:`~fms_dgt.core.tools.schema.choices`:
API-Bank's ``ForgotPassword`` takes a ``status`` of ``'Forgot Password'`` or
``'Verification Code'``, which no other tool's ``status`` of ``success`` or ``failed`` can be);
an open parameter (no set, or one of more than :data:`MAX_CHOICES` values) fits any. The set
travels in the parameter's role string (:func:`with_choices`, after a separator that
:func:`~._dataflow_entities.parse_role` ignores), so parameters that differ only in their set
have different signatures, and the memo stores it with the roles.

**Qualified values.** Two values of one kind, each said to be of something, are of different
things when nothing qualifies both alike: a post's ``like_count`` is no hotel booking's
``child_count``, a user's ``first_name`` no ``last_name``, a country's ``dial_code`` no
``countryCode``, an account's ``displayName`` no ``hotel_name``. Hashed words made such pairs
alike by their kind alone ("count", "name", "code"). A value is *qualified* when its name ends in a
kind word (:data:`KINDS`) after other words; a pair scores 0 when both are qualified, their kinds
agree and their qualifiers share no word. A bare kind (``date``, ``name``) is any value of it.

**Kinds apart.** Values of kinds that never stand for one another score 0 whatever they are of:
an appointment's ``appointment_id`` is no ``new_appointment_date``, an account's ``displayName``
no ``status``, a ``like_count`` no ``price``. Kinds that may (a price and an amount, a date and a
time, a name and a title, an identifier and a code or a name) are grouped in :data:`_KIN`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from fms_dgt.core.tools.artifacts import split_path
from fms_dgt.core.tools.enrichments._dataflow_entities import CHOICES, name_text, singular
from fms_dgt.core.tools.schema.choices import described_choices

if TYPE_CHECKING:
    from fms_dgt.core.tools.enrichments._dataflow_params import Side

__all__ = [
    "IDENTIFIER",
    "KINDS",
    "KINDS_APART",
    "KIND_INDEX",
    "MAX_CHOICES",
    "ChoiceTable",
    "QualifierTable",
    "closed_values",
    "kind_of",
    "kinds_apart",
    "qualifier_table",
    "with_choices",
]

IntArray = npt.NDArray[np.int64]

#: The largest set read; a parameter with more values (country codes, currencies) counts as open.
MAX_CHOICES = 256

_SCALARS = (str, int, float, bool, type(None))


def closed_values(schema: Any) -> list[Any] | None:
    """The values a parameter may take when its schema lists them (``enum``, ``const``, or its
    items' for a list) or its description does, else ``None``."""
    if not isinstance(schema, Mapping):
        return None
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if values is None:
        listed = described_choices(schema)
        values = list(listed) if listed else None
    if values is None and schema.get("type") == "array":
        return closed_values(schema.get("items"))
    if not isinstance(values, list) or not values or len(values) > MAX_CHOICES:
        return None
    if not all(isinstance(v, _SCALARS) for v in values):
        return None
    return values


def _digest(value: Any) -> str:
    # JSON Schema compares numbers by value (1 and 1.0 are one value), booleans apart from them.
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = json.dumps(value, ensure_ascii=False)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()


def with_choices(role: str, schema: Any) -> str:
    """``role`` followed by the digests of the values ``schema`` allows, when it lists them."""
    values = closed_values(schema)
    if values is None:
        return role
    return f"{role}{CHOICES}{','.join(sorted({_digest(v) for v in values}))}"


class _Pairs:
    """Ids of things on each side of a pair, and which pairs of them cannot meet (cached)."""

    def __init__(self) -> None:
        self._apart: dict[int, bool] = {}

    def _count(self) -> int:
        raise NotImplementedError

    def _disjoint(self, out_id: int, in_id: int) -> bool:
        raise NotImplementedError

    def fits(self, out_ids: IntArray, in_ids: IntArray) -> npt.NDArray[np.bool_]:
        """Whether each output id (paired with an input id) can meet it; an unknown end (-1)
        meets anything."""
        fits = np.ones(np.broadcast(out_ids, in_ids).shape, dtype=bool)
        both = (out_ids >= 0) & (in_ids >= 0)
        if not both.any():
            return fits
        count = self._count()
        codes = np.broadcast_to(out_ids, both.shape)[both] * count + np.broadcast_to(in_ids, both.shape)[both]
        unique, inverse = np.unique(codes, return_inverse=True)
        apart = np.array([self._known(int(code), count) for code in unique.tolist()], dtype=bool)
        fits[both] = ~apart[inverse.reshape(-1)]
        return fits

    def _known(self, code: int, count: int) -> bool:
        found = self._apart.get(code)
        if found is None:
            found = self._apart[code] = self._disjoint(*divmod(code, count))
        return found


class ChoiceTable(_Pairs):
    """The value sets of a pool's roles, and which pairs of them share no value.

    Attributes:
        ids: per role id, the id of its set (-1 for an open parameter).
    """

    def __init__(self, role_names: Sequence[str]) -> None:
        super().__init__()
        sets: dict[frozenset[str], int] = {}
        ids = np.full(max(len(role_names), 1), -1, dtype=np.int64)
        for number, text in enumerate(role_names):
            _, mark, listed = text.partition(CHOICES)
            if mark:
                ids[number] = sets.setdefault(frozenset(listed.split(",")), len(sets))
        self.ids = ids
        self._sets = list(sets)

    def _count(self) -> int:
        return len(self._sets)

    def _disjoint(self, out_id: int, in_id: int) -> bool:
        return self._sets[out_id].isdisjoint(self._sets[in_id])


#: Last words of a name that only say what kind of value it is; the words before say of what.
KINDS = frozenset(
    {"count", "number", "total", "amount", "price", "value", "code", "date", "time", "timestamp"}
    | {"name", "title", "type", "kind", "category", "status", "state", "level", "rate", "size"}
    | {"url", "description", "text", "mode", "format"}
)
#: Words that say nothing of what a value is of: fillers, and modifiers of a state or a time (a
#: stock's ``new_price`` is a price of anything; ``amount_total`` is a total).
_FILLERS = frozenset({"of", "the", "a", "an", "by", "for", "is", "has", "in", "to", "on", "at"})
_MODIFIERS = frozenset(
    {"new", "old", "current", "previous", "original", "updated", "initial", "final", "latest"}
    | {"default", "selected", "primary", "max", "min", "maximum", "minimum", "average", "actual"}
)


def kind_of(name: str) -> tuple[str, frozenset[str]] | None:
    """A value's kind and the words that say of what, empty for a bare kind (``date`` -> date,
    {}); None when its name does not end in a kind word."""
    tokens = [singular(w) for w in name_text(name).split() if w not in _FILLERS]
    if not tokens or tokens[-1] not in KINDS:
        return None
    return tokens[-1], frozenset(t for t in tokens[:-1] if t not in KINDS and t not in _MODIFIERS)


#: What an identifier is, for :func:`kinds_apart` (identifiers are told apart by their entities).
IDENTIFIER = "id"
#: Kinds one value may be of and still fit an input of another: a price is an amount, a date a
#: time, a status a state, a name a title or a text; ``value`` is any. Kinds sharing no group (a
#: date and an id, a count and a price, a name and a status) are different things.
_KIN = (
    {"date", "time", "timestamp", "value"},
    {"amount", "price", "total", "value", "rate"},
    {"count", "number", "total", "size", "amount", "level", "value"},
    {"name", "title", "text", "description", "value"},
    {"type", "kind", "category", "mode", "format", "status", "state", "level", "value"},
    {"url", "value"},
    {IDENTIFIER, "code", "number", "name", "title", "type", "kind", "category", "value"},
)
_GROUPS = {k: frozenset(i for i, group in enumerate(_KIN) if k in group) for k in set().union(*_KIN)}


def kinds_apart(mine: tuple[str, frozenset[str]], theirs: tuple[str, frozenset[str]]) -> bool:
    """Whether two values (:func:`kind_of`, or :data:`IDENTIFIER` with no words) are of
    different things: of kinds that never stand for one another (an appointment's id and a
    new appointment date), or of one kind said to be of different things (``like_count`` and
    ``child_count``). Two identifiers are never apart here."""
    (kind, of), (other, their_of) = mine, theirs
    if kind == other:
        return kind != IDENTIFIER and bool(of) and bool(their_of) and of.isdisjoint(their_of)
    return _GROUPS.get(kind, frozenset()).isdisjoint(_GROUPS.get(other, frozenset()))


#: The kind words and :data:`IDENTIFIER`, by index, and which pairs of them are apart.
KIND_INDEX = {kind: number for number, kind in enumerate(sorted(KINDS | {IDENTIFIER}))}
KINDS_APART = np.array(
    [[kinds_apart((a, frozenset()), (b, frozenset())) for b in KIND_INDEX] for a in KIND_INDEX], dtype=bool
)


class QualifierTable(_Pairs):
    """The kinds of a pool's signatures' values, and which pairs are of different things.

    Attributes:
        out_kind, in_kind: per output and input signature, the index of its kind in
            :data:`KIND_INDEX` (-1 for none); :data:`KINDS_APART` says which kinds are apart.
        out, into: per signature, the id of its qualified value (a kind said to be of
            something; -1 for none); :meth:`fits` tells those of one kind apart by what they are of.
    """

    def __init__(self, out_names: Sequence[str | None], in_names: Sequence[str | None]) -> None:
        super().__init__()
        found: dict[tuple[str, frozenset[str]], int] = {}

        def ids(names: Sequence[str | None]) -> tuple[IntArray, IntArray]:
            read = [kind_of(n) if n else None for n in names]
            kinds = [-1 if q is None else KIND_INDEX[q[0]] for q in read]
            qualified = [-1 if q is None or not q[1] else found.setdefault(q, len(found)) for q in read]
            return np.array(kinds, np.int64), np.array(qualified, np.int64)

        (self.out_kind, self.out), (self.in_kind, self.into) = ids(out_names), ids(in_names)
        self._values = list(found)

    def _count(self) -> int:
        return len(self._values)

    def _disjoint(self, out_id: int, in_id: int) -> bool:
        return kinds_apart(self._values[out_id], self._values[in_id])


def qualifier_table(outs: Side, ins: Side, names: Sequence[str]) -> QualifierTable:
    """The :class:`QualifierTable` of two sides, read from each signature's first parameter's
    own name (the whole result has none)."""
    return QualifierTable(_leaves(outs, names), _leaves(ins, names))


def _leaves(side: Side, names: Sequence[str]) -> list[str | None]:
    first = side.members[side.ptr[:-1]] if len(side.members) else np.zeros(0, np.int64)
    return [_leaf(names[int(n)]) for n in side.name[first].tolist()]


def _leaf(path: str) -> str | None:
    try:
        steps = [s for s in split_path(path) if isinstance(s, str)] if path else []
    except ValueError:
        return None
    return steps[-1] if steps else None
