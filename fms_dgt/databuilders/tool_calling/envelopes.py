"""Results said without their envelope: a JSON:API document's resources, a listing's items.

A result often wraps what it says: JSON:API puts a webhook in ``{"data": {"type", "id",
"attributes": {...}, "links"}, "links": ...}``, PeerTube a page of videos in ``{"total": 120,
"data": [...]}``. An answer says the webhook's attributes and the videos, never "the data is ..."
or "the links are next ...".
"""

from __future__ import annotations

from typing import Any

__all__ = ["unwrapped"]

#: Top-level members of a JSON:API document besides its ``data``: paging links, counts, versions.
_DOCUMENT_KEYS = frozenset({"data", "links", "meta", "included", "jsonapi"})
#: Counts beside a listing's ``data`` (PeerTube's ``{"total": 120, "data": [...]}``): its items say it.
_TOTAL_KEYS = frozenset({"total", "count", "totalCount", "total_count", "totalItems", "totalResults"})


def unwrapped(value: Any) -> Any:
    """What a result says, without the envelope a JSON:API document puts it in: its ``data``,
    each resource as its ``id`` and ``attributes`` (``{"data": {"id": "w-1", "type": "webhooks",
    "attributes": {"url": ...}, "links": ...}, "links": ...}`` says ``{"url": ..., "id": "w-1"}``).
    Any other value is returned as it is."""
    if not isinstance(value, dict) or "data" not in value:
        return value
    data = value["data"]
    listing = isinstance(data, list) and set(value) <= _DOCUMENT_KEYS | _TOTAL_KEYS
    if not listing and not set(value) <= _DOCUMENT_KEYS:
        return value
    return [_resource(item) for item in data] if isinstance(data, list) else _resource(data)


def _resource(item: Any) -> Any:
    attributes = item.get("attributes") if isinstance(item, dict) else None
    if not isinstance(attributes, dict) or not ({"id", "type"} & set(item)):
        return item
    return {**attributes, "id": item["id"]} if "id" in item else dict(attributes)
