"""Names written as one run of lower-case letters, read as their words: ``listid`` is "list id",
``pagesize`` "page size", ``airportiatacode`` "airport IATA code".

Specs and catalogues often run a parameter's words together (When2Call's ``listid`` and
``startfrom``, PeerTube's ``previewfile``, SEC's ``filingorder``), and a request that says "with
listid the-78926 and a pagesize of 5" is no sentence a person writes. :func:`segmented` splits such
a word into the fewest words of :data:`PARTS`, the words API names are made of; a word it cannot
cover whole, or one that is a word of its own (``keyword``, ``username``), stays as it is. The
list is closed on purpose: with a general dictionary, ``together`` would read "to get her".
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["PARTS", "segmented"]

#: Words API names are made of (the parts a run-together name is split into).
PARTS = frozenset(
    {
        "id", "ids", "uid", "uuid", "key", "code", "type", "name", "names", "title", "label", "tag", "tags",
        "list", "lists", "item", "items", "page", "pages", "size", "count", "num", "number", "total", "limit",
        "offset", "start", "end", "from", "to", "by", "at", "in", "out", "of", "on", "for", "per", "max",
        "min", "output", "input", "length", "width", "height", "weight",
        "first", "last", "next", "prev", "sort", "order", "filter", "query", "search", "match", "index",
        "file", "files", "path", "url", "uri", "link", "image", "photo", "video", "audio", "thumbnail",
        "preview", "avatar", "banner", "icon", "logo", "media", "embed", "safe", "token", "cursor", "format",
        "date", "time", "day", "days", "week", "month", "year", "hour", "minute", "zone", "period", "range",
        "user", "account", "profile", "owner", "author", "member", "group", "team", "channel", "playlist",
        "product", "price", "amount", "currency", "unit", "units", "value", "rate", "level", "mode", "status",
        "state", "city", "country", "region", "zip", "postal", "address", "location", "lat", "lng", "lon",
        "airport", "iata", "icao", "flight", "hotel", "room", "trip", "route", "station", "stop", "line",
        "stock", "symbol", "ticker", "market", "filing", "report", "stats", "score", "rank", "rating",
        "review", "comment", "message", "text", "content", "body", "description", "summary", "note",
        "email", "phone", "lang", "language", "locale", "genre", "category", "categories",
        "event", "events", "game", "player", "season", "league", "round", "race",
        "include", "exclude", "show", "hide", "only", "all", "new", "old", "is", "has", "get", "set",
        "current", "default", "custom", "public", "private", "active", "enabled", "visible", "raw",
        "data", "info", "detail", "details", "result", "results", "option", "options", "config",
        "source", "target", "origin", "destination", "departure", "arrival", "return", "check",
        "sub", "parent", "child", "children", "adult", "adults", "guest", "guests", "seat", "seats",
    }
)  # fmt: skip
#: Words of their own that hold other words (a keyword is no "key word", a username no "user
#: name" a person writes), left whole.
_WHOLE = frozenset(
    {
        "keyword", "keywords", "username", "password", "timestamp", "timezone", "hashtag", "hashtags",
        "playlist", "playlists", "database", "webhook", "webhooks", "checkout", "download", "downloads",
        "upload", "uploads", "workflow", "website", "weekday", "weekend", "birthday", "headline",
        "online", "offline", "inbox", "outbox", "nickname", "lifetime", "filename", "filetype",
        "pathname", "hostname", "homepage", "datetime", "outcome", "income", "endpoint",
        "startup", "someone", "without", "within", "into", "onto", "checkin", "setup", "dataset",
        "datasets", "metadata", "lookup", "markup", "signup", "login", "logout",
    }
)  # fmt: skip
#: Words of one or two letters a name may hold as a part of its own (no "s" or "e" alone).
_SHORT = frozenset({"id", "to", "by", "at", "in", "of", "on", "is"})
#: The most words one name is split into.
_MOST = 4


@lru_cache(maxsize=8192)
def segmented(word: str) -> tuple[str, ...]:
    """``word`` as the fewest words of :data:`PARTS` it is made of, or ``(word,)`` when it is one
    word, a word of its own, not lower case, or cannot be covered whole."""
    if len(word) < 5 or not word.isalpha() or not word.islower() or word in PARTS or word in _WHOLE:
        return (word,)
    best: list[tuple[str, ...] | None] = [None] * (len(word) + 1)
    best[0] = ()
    for end in range(2, len(word) + 1):
        for begin in range(max(0, end - 14), end - 1):
            before, part = best[begin], word[begin:end]
            if before is None or part not in PARTS or (len(part) < 3 and part not in _SHORT):
                continue
            found = (*before, part)
            if len(found) <= _MOST and (best[end] is None or len(found) < len(best[end] or ())):
                best[end] = found
    whole = best[len(word)]
    return whole if whole and len(whole) > 1 else (word,)
