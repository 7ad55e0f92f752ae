"""Closed sets of values, for the ``dataflow`` enrichment: an output that can only be one of some
values feeds an input that can only be one of others only when the two sets share a value.

A temperature converter's ``unit`` (``celsius`` or ``fahrenheit``) and a weather tool's ``units``
(``metric`` or ``imperial``) read alike and have one type, but no value of the first is a valid
value of the second: a chain wired through them cannot pass anything, and a record sampled as such a
chain calls two tools one after the other with nothing flowing between them. Such pairs score 0.

A parameter's set is its ``enum`` (or ``const``), or its items' for a list, when every value is a
scalar; an open parameter (no set, or one of more than :data:`MAX_CHOICES` values) fits any. The
set travels in the parameter's role string (:func:`with_choices`, after a separator that
:func:`~._dataflow_entities.parse_role` ignores), so parameters that differ only in their set
have different signatures, and the memo stores it with the roles.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from fms_dgt.core.tools.enrichments._dataflow_entities import CHOICES

__all__ = ["MAX_CHOICES", "ChoiceTable", "closed_values", "with_choices"]

IntArray = npt.NDArray[np.int64]

#: The largest set read; a parameter with more values (country codes, currencies) counts as open.
MAX_CHOICES = 256

_SCALARS = (str, int, float, bool, type(None))


def closed_values(schema: Any) -> list[Any] | None:
    """The values a parameter may take when its schema lists them (``enum``, ``const``, or its
    items' for a list), else ``None``."""
    if not isinstance(schema, Mapping):
        return None
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
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


class ChoiceTable:
    """The value sets of a pool's roles, and which pairs of them share no value.

    Attributes:
        ids: per role id, the id of its set (-1 for an open parameter).
    """

    def __init__(self, role_names: Sequence[str]) -> None:
        sets: dict[frozenset[str], int] = {}
        ids = np.full(max(len(role_names), 1), -1, dtype=np.int64)
        for number, text in enumerate(role_names):
            _, mark, listed = text.partition(CHOICES)
            if mark:
                ids[number] = sets.setdefault(frozenset(listed.split(",")), len(sets))
        self.ids = ids
        self._sets = list(sets)
        self._apart: dict[int, bool] = {}

    def fits(self, out_set: IntArray, in_set: IntArray) -> npt.NDArray[np.bool_]:
        """Whether each output set (paired with an input set, both ids) shares a value with it;
        an open end (-1) fits anything."""
        fits = np.ones(np.broadcast(out_set, in_set).shape, dtype=bool)
        both = (out_set >= 0) & (in_set >= 0)
        if not both.any():
            return fits
        count = len(self._sets)
        codes = np.broadcast_to(out_set, both.shape)[both] * count + np.broadcast_to(in_set, both.shape)[both]
        unique, inverse = np.unique(codes, return_inverse=True)
        apart = np.array([self._disjoint(int(code), count) for code in unique.tolist()], dtype=bool)
        fits[both] = ~apart[inverse.reshape(-1)]
        return fits

    def _disjoint(self, code: int, count: int) -> bool:
        found = self._apart.get(code)
        if found is None:
            out_set, in_set = divmod(code, count)
            found = self._apart[code] = self._sets[out_set].isdisjoint(self._sets[in_set])
        return found
