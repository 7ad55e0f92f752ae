"""A spec's one example as a mould: the record's own id or moment in the example's shape.

A schema's ``example`` is the most faithful value there is of a field, and the vocabulary takes it
where it knows nothing better. An identifier or a moment is different: one example taken as is
gives every record the same one (every PeerTube playlist was ``2y84q2MQUMWPbiEcxNXMgC``, every
video published at ``2025-10-15T13:51:39Z``, in every record). Here the example lends its shape
and the record its value:

* an id keeps the example's fixed parts (``ORD-``, ``#W``) and takes the entity's own digits;
  a part that looks random (mixed letters and digits, mixed case, a hex run) is redrawn character
  by character in the same classes, from the entity itself, so one entity keeps one id;
* a moment is the scope's own moment of that field, written in the example's shape;
* a path or address keeps its words and draws its random-looking parts again (every PeerTube
  video's embed, preview and thumbnail were one ``/videos/embed/a65bc12f-...``).
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Iterable

__all__ = ["fill_digits", "moment_like", "redrawn", "reshaped"]

_SEGMENT = re.compile(r"[A-Za-z0-9]+")
#: The longest example drawn again, character by character.
_LONGEST = 256
_HEX = re.compile(r"[0-9a-f]+")
_DIGIT = re.compile(r"\d")
_FRACTION = re.compile(r"(?<=:\d\d)\.\d+")
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LOWER = "abcdefghijklmnopqrstuvwxyz"


def reshaped(example: str, number: int, seed: str) -> str:
    """``example`` with the entity's ``number`` in its digits and its random-looking parts drawn
    again from ``seed`` (the entity's own, so the same entity gets the same id)."""
    return redrawn(example, seed) or fill_digits(example, str(number))


def redrawn(example: str, seed: str) -> str | None:
    """``example`` with its random-looking parts drawn again from ``seed`` (a path's
    ``/videos/embed/a65bc12f-...``), or None when it has none (a path a person wrote)."""
    if len(example) > _LONGEST or not any(_random_looking(s) for s in _SEGMENT.findall(example)):
        return None  # (a spec's megabyte of an example is no id: it stays as the spec gave it)
    rng = random.Random(seed)
    return _SEGMENT.sub(
        lambda m: _redrawn(m.group(0), rng) if _random_looking(m.group(0)) else m.group(0), example
    )


def moment_like(example: str, candidates: Iterable[object]) -> str | None:
    """The first candidate written in the digits-and-separators shape of ``example`` (a fraction
    of a second aside: PeerTube's ``13:51:39.993Z``), or None."""
    shape = _shape(example)
    return next((c for c in candidates if isinstance(c, str) and _shape(c) == shape), None)


def _shape(moment: str) -> str:
    return _DIGIT.sub("#", _FRACTION.sub("", moment))


def _random_looking(segment: str) -> bool:
    """A part no person chose: ``2y84q2MQUMWPbiEcxNXMgC``, ``a65bc12f``; not ``ORD``, ``2024`` or
    ``OpenAPITools`` (letters and digits mixed, or a case that changes every few letters)."""
    if len(segment) < 6:
        return False
    if any(c.isdigit() for c in segment) and any(c.isalpha() for c in segment):
        return True
    switches = sum(a.isupper() != b.isupper() for a, b in itertools.pairwise(segment))
    return switches * 3 >= len(segment)


def _redrawn(segment: str, rng: random.Random) -> str:
    hexadecimal = _HEX.fullmatch(segment) is not None
    out = []
    for c in segment:
        if c.isdigit():
            out.append(str(rng.randint(0, 9)))
        elif c.isupper():
            out.append(rng.choice(_UPPER))
        else:
            out.append(rng.choice("abcdef" if hexadecimal else _LOWER))
    return "".join(out)


def fill_digits(example: str, digits: str) -> str:
    """``#W0000000`` filled with ``48213`` -> ``#W0048213`` (the example's shape, our number)."""
    slots = sum(c.isdigit() for c in example)
    digits = digits[-slots:].rjust(slots, "0") if slots else ""
    out, used = [], 0
    for c in example:
        if c.isdigit():
            out.append(digits[used])
            used += 1
        else:
            out.append(c)
    return "".join(out)
