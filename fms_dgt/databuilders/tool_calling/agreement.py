"""Simulated results that agree with what the record already said about the same entity.

A mock result is synthesised from the call alone: after ``add_pet(name="Luna")`` gave
``{"id": "pet-45868", "name": "Luna"}``, a later ``get_pet(id="pet-45868")`` echoes the id but
makes up the rest (``"name": "Milo"``). A reader sees one pet with two names. :func:`agree` takes
such a result and, for every object in it whose id an earlier result of the record named, copies
the earlier object's values for the fields both have (same name, same JSON type). Only simulated
results are changed (a real server's answer is what it is), and only when the agreed value still
validates against the tool's output schema.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["AGREEING", "agree"]

#: The mock sources (``metadata["mock"]``) whose values were made up, so may be brought to agree.
AGREEING = frozenset({"example", "synthesised", "shaped"})

# ``id``, ``pet_id``, ``petId``, ``order-id``: the fields that name an entity.
_ID = re.compile(r"^(?:id|Id|ID)$|[_\-.](?:id|Id|ID)$|(?<=[a-z0-9])(?:Id|ID)$")
_NOT_ALNUM = re.compile(r"[^a-z0-9]")


def agree(value: Any, earlier: Iterable[Any], arguments: Mapping[str, Any]) -> tuple[Any, list[str]]:
    """``value`` with each object that names an earlier object's id taking that object's fields.

    A field named like one of the call's ``arguments`` keeps its value: the call set it (an
    update's new start time is not the old one).

    Returns:
        The agreed value (``value`` itself when nothing changed) and the paths of the fields
        that changed (JSON pointers).
    """
    known: dict[Any, Mapping[str, Any]] = {}
    for result in earlier:
        for item in _objects(result):
            for ident in _ids(item):
                known.setdefault(ident, item)
    if not known:
        return value, []
    changed: list[str] = []
    given = frozenset(_plain(k) for k in arguments)
    return _agreed(value, _Scope(known, given, changed), ""), changed


class _Scope:
    """What one :func:`agree` walk knows: earlier objects by id, the call's own fields, changes."""

    __slots__ = ("changed", "given", "known")

    def __init__(
        self, known: Mapping[Any, Mapping[str, Any]], given: frozenset[str], changed: list[str]
    ) -> None:
        self.known, self.given, self.changed = known, given, changed


def _agreed(value: Any, scope: _Scope, path: str) -> Any:
    if isinstance(value, list):
        return [_agreed(v, scope, f"{path}/{i}") for i, v in enumerate(value)]
    if not isinstance(value, Mapping):
        return value
    out = {k: _agreed(v, scope, f"{path}/{k}") for k, v in value.items()}
    source = next((scope.known[i] for i in _ids(value) if i in scope.known), None)
    if source is None:
        return out
    for key, mine in value.items():
        theirs = source.get(key)
        if key not in source or _ID.search(key) or _plain(key) in scope.given:
            continue
        if _same_kind(mine, theirs) and mine != theirs:
            out[key] = theirs
            scope.changed.append(f"{path}/{_escaped(key)}")
    return out


def _escaped(key: str) -> str:
    """``key`` as one JSON-pointer token."""
    return key.replace("~", "~0").replace("/", "~1")


def _plain(name: str) -> str:
    return _NOT_ALNUM.sub("", name.lower())


def _objects(value: Any) -> Iterable[Mapping[str, Any]]:
    """Every object inside ``value``, outermost first."""
    if isinstance(value, Mapping):
        yield value
        for item in value.values():
            yield from _objects(item)
    elif isinstance(value, list):
        for item in value:
            yield from _objects(item)


def _ids(item: Mapping[str, Any]) -> list[Any]:
    """The values of an object's id fields distinctive enough to name one entity.

    A short number (``1``, ``42``) names a different thing in every API; a string of four
    characters or more, or a number from 1,000, does not.
    """
    found = []
    for key, value in item.items():
        if not isinstance(key, str) or not _ID.search(key) or isinstance(value, bool):
            continue
        if (isinstance(value, str) and len(value) >= 4) or (isinstance(value, int) and abs(value) >= 1000):
            found.append(value)
    return found


def _same_kind(mine: Any, theirs: Any) -> bool:
    """Both plain values of one JSON type (a number for a number, never a list for a string)."""
    if isinstance(mine, bool) or isinstance(theirs, bool):
        return isinstance(mine, bool) and isinstance(theirs, bool)
    if isinstance(mine, (int, float)) and isinstance(theirs, (int, float)):
        return True
    return isinstance(mine, str) and isinstance(theirs, str)
