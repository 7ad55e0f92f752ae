"""Results said without their envelope: a JSON:API document's resources, a listing's items.

A result often wraps what it says: JSON:API puts a webhook in ``{"data": {"type", "id",
"attributes": {...}, "links"}, "links": ...}``, PeerTube a page of videos in ``{"total": 120,
"data": [...]}``, Codat a page of transactions in ``{"results": [...], "pageNumber": 3, ...}``. An
answer says the webhook's attributes, the videos and the transactions, never "the data is ..."
or "the page size is 100".
"""

from __future__ import annotations

from typing import Any

__all__ = ["unwrapped"]

#: Top-level members of a JSON:API document besides its ``data``: paging links, counts, versions.
_DOCUMENT_KEYS = frozenset({"data", "links", "meta", "included", "jsonapi"})
#: Counts beside a listing's ``data`` (PeerTube's ``{"total": 120, "data": [...]}``): its items say it.
_TOTAL_KEYS = frozenset({"total", "count", "totalCount", "total_count", "totalItems", "totalResults"})


#: Where a page of a listing keeps its items, and what else a page says of itself (Codat's
#: ``{"results": [...], "pageNumber": 3, "pageSize": 100, "totalResults": 266, "_links": ...}``).
_LIST_KEYS = ("data", "results", "items", "records", "entries")
_PAGE_KEYS = (
    _DOCUMENT_KEYS | _TOTAL_KEYS | {"_links", "pageNumber", "pageSize", "page", "per_page", "perPage"}
)
_PAGE_KEYS |= {"page_size", "next", "previous", "prev", "cursor", "nextCursor", "next_cursor", "offset"}
_PAGE_KEYS |= {
    "limit",
    "hasMore",
    "has_more",
    "nextPageToken",
    "next_page_token",
    "totalPages",
    "total_pages",
}


def unwrapped(value: Any) -> Any:
    """What a result says, without the envelope a JSON:API document puts it in: its ``data``,
    each resource as its ``id`` and ``attributes`` (``{"data": {"id": "w-1", "type": "webhooks",
    "attributes": {"url": ...}, "links": ...}, "links": ...}`` says ``{"url": ..., "id": "w-1"}``);
    a page of a listing says its items, not its page number, size and links. Any other value is
    returned as it is."""
    if not isinstance(value, dict):
        return value
    listed = [k for k in _LIST_KEYS if isinstance(value.get(k), list)]
    if len(listed) == 1 and set(value) - {listed[0]} <= _PAGE_KEYS:
        return [_resource(item) for item in value[listed[0]]]
    if not isinstance(value.get("data"), dict) or not set(value) <= _DOCUMENT_KEYS:
        return value
    return _resource(value["data"])


def _resource(item: Any) -> Any:
    attributes = item.get("attributes") if isinstance(item, dict) else None
    if not isinstance(attributes, dict) or not ({"id", "type"} & set(item)):
        return item
    return {**attributes, "id": item["id"]} if "id" in item else dict(attributes)
