"""Words of parameter names, for the ``dataflow`` enrichment: split, made singular, read."""

from __future__ import annotations

import re

__all__ = ["ABBREVIATIONS", "ENVELOPES", "WORD", "name_text", "singular", "words"]

#: A word of a name: snake_case, camelCase, acronyms and digits split apart.
#: Names of an object or list that only wraps others (JSON:API's ``data``): they say nothing of
#: what they hold.
ENVELOPES = frozenset({"data", "items", "results", "records", "entries", "payload", "body"})
WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
#: Plurals that are their own singular, and stems whose plural in "ies" drops the "s" only.
_SAME_PLURAL = frozenset({"series", "species"})
#: The plural of an acronym ending in u (``skus``, ``cpus``): no vowel before the "us", unlike
#: Latin singulars (``status``, ``campus``).
_ACRONYM_PLURAL = re.compile(r"[^aeiouy\W\d_]+us")
_IE_STEMS = ("mov", "cook", "zomb", "calor", "rook", "selfi", "smooth", "goal", "hipp", "pix")
#: Abbreviations in parameter names, read as the words they stand for (``lat`` and ``latitude``).
ABBREVIATIONS = {
    "lat": "latitude", "lng": "longitude", "lon": "longitude", "q": "query", "src": "source",
    "tgt": "target", "dest": "destination", "addr": "address", "desc": "description",
    "msg": "message", "num": "number", "qty": "quantity", "amt": "amount", "img": "image",
    "lang": "language", "org": "organization", "temp": "temperature", "pwd": "password",
    "info": "information", "dept": "department", "tz": "timezone", "loc": "location",
}  # fmt: skip


#: What texts read: abbreviations, and a handle as the name a person gives.
_READ_AS = {**ABBREVIATIONS, "handle": "name"}


def words(name: str) -> list[str]:
    """Lower-case words of a name: snake_case, camelCase, acronyms and digits split apart.

    ``words("originSkyId") == ["origin", "sky", "id"]``, ``words("authorID") == ["author", "id"]``.
    """
    return [w.lower() for w in WORD.findall(name)]


def singular(word: str) -> str:
    """A crude singular (``tickets`` -> ``ticket``, ``categories`` -> ``category``, ``movies`` ->
    ``movie``, ``skus`` -> ``sku``; ``series``, ``species`` and ``status`` stay)."""
    if word in _SAME_PLURAL:
        return word
    if len(word) > 4 and word.endswith("ies"):
        return word[:-1] if word[:-3].endswith(_IE_STEMS) else word[:-3] + "y"
    if len(word) > 5 and word.endswith("sses"):  # classes, addresses
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    if len(word) > 3 and _ACRONYM_PLURAL.fullmatch(word) and word != "plus":  # skus; not status
        return word[:-1]
    return word


def name_text(name: str, synonyms: bool = True) -> str:
    """A parameter name as spaced words (``artistId`` and ``artist_id`` both give ``artist id``),
    abbreviations spelled out (``lat`` reads ``latitude``) and, with ``synonyms``, a handle read
    as a name (PeerTube's ``channelHandle`` reads ``channel name``: texts alike, not one name)."""
    table = _READ_AS if synonyms else ABBREVIATIONS
    return " ".join(table.get(w, w) for w in words(name)) or name
