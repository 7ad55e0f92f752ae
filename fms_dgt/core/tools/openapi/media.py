"""Media types: which of an operation's media types is used, and how each kind is recognised.

Shared by the loader (choosing a body's and a response's media type) and the request builder
(encoding a body), so both sides agree on what counts as JSON or as a form.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["FORM_URLENCODED", "MULTIPART", "concrete", "is_json", "is_structured", "pick_media_type"]

FORM_URLENCODED = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"


def is_json(media_type: str) -> bool:
    """True for ``application/json``, ``*+json`` and the ``*/*`` wildcard (sent as JSON)."""
    base = media_type.split(";", 1)[0].strip().lower()
    return base in ("application/json", "*/*") or base.endswith("+json")


def is_structured(media_type: str) -> bool:
    """True for media types whose body has fields: JSON and the two form encodings."""
    return is_json(media_type) or media_type.lower().startswith((FORM_URLENCODED, MULTIPART))


def pick_media_type(content: Mapping[Any, Any]) -> str:
    """The media type to use from a ``content`` map: JSON, then urlencoded form, then multipart,
    else the first one listed."""
    types = [str(t) for t in content]
    for test in (
        is_json,
        lambda t: t.lower().startswith(FORM_URLENCODED),
        lambda t: t.lower().startswith(MULTIPART),
    ):
        for media_type in types:
            if test(media_type):
                return media_type
    return types[0]


def concrete(media_type: str) -> str:
    """The media type to send: a wildcard (``*/*``, ``application/*``) is sent as JSON."""
    return "application/json" if media_type.split(";", 1)[0].strip().endswith("/*") else media_type
