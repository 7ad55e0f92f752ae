"""What a name the rest of the vocabulary does not know still says: a number written as text, or
one value of a sort of thing.

Read by :func:`~fms_dgt.core.tools._fake_kinds.classify` after its own rules, so none of these
overrides what they found:

* :func:`counted`: a count by its description (Goodreads' ``totalEditions``, "Total number of
  editions available", was 297.57, read as a price from ``total``), a count written as text
  (``likes`` typed as a string was ``quartz-188``), a year (``publishedYear`` was
  ``harbor-586``) and a rank (``orbit-763``);
* :func:`sort_of`: a sort of thing by the last word of its name (a business's contact method, a
  video's codec, a filing's period, a news item's type), rendered from :data:`SORTS`. A value
  the name says nothing of stays the synthesiser's filler: guessing it would be worse.
"""

from __future__ import annotations

import re

from fms_dgt.core.tools._fake_heads import TALLIES, WORKFLOW
from fms_dgt.core.tools._fake_names import Kind, tokens
from fms_dgt.core.tools.enrichments._dataflow_words import singular

__all__ = ["ORDINALS", "SORTS", "counted", "sort_of"]

#: A description that says its value is a count ("Total number of ratings the book has received").
_COUNTED = re.compile(r"\b(?:number of|how many|count of)\b", re.I)
_CARDS = re.compile(r"card|deck|poker", re.I)
_BYTES = re.compile(r"\bbytes?\b", re.I)
#: A description of a number that is no count: a phone's, a card's, an order's number.
_NUMBERED = re.compile(r"\bnumber of (?:the|this|that|an?|your|his|her|their|its)\b", re.I)
#: Counts that are never texts, written as strings by some specs (Goodreads' quote ``likes``).
_PLAIN_TALLIES = frozenset(
    {"likes", "dislikes", "views", "followers", "subscribers", "downloads", "votes", "shares"}
    | {"retweets", "plays", "clicks", "impressions", "installs", "signups", "visits"}
)
#: What makes a year one still to come (others, a book's or a filing's, are past ones).
_COMING = frozenset({"expiry", "expiration", "target", "next", "due", "end", "graduation", "future"})

#: Words before ``number`` or ``no`` that make it a small count or an ordinal, not an entity's id
#: (an Airflow task's try_number was 15529), with the range it takes (see ``_fake_things``).
ORDINALS = {
    **dict.fromkeys(("try", "attempt", "retry", "chapter", "episode", "season", "round", "step"), "count"),
    **dict.fromkeys(("race", "juz", "verse", "top", "dice", "lap", "level", "stage"), "count"),
    **dict.fromkeys(("page", "pages"), "page"),
    **dict.fromkeys(("adults", "adult", "guests", "people", "persons"), "party"),
    **dict.fromkeys(("children", "kids", "child"), "children"),
}
#: Values of a sort of thing, by the last word of its name, or by ``word:modifier`` for the sorts
#: a modifier changes (a climate's mode, a payment's method). Lower case, as APIs send them.
SORTS: dict[str, tuple[str, ...]] = {
    "mode": ("auto", "manual", "standard", "eco"),
    "mode:climate": ("auto", "cool", "heat", "fan"),
    "mode:travel": ("driving", "walking", "transit", "bicycling"),
    "method": ("email", "phone", "message"),
    "method:payment": ("card", "bank_transfer", "paypal"),
    "method:http": ("GET", "POST", "PUT", "DELETE"),
    "style": ("standard", "classic", "modern", "compact"),
    "state": ("active", "pending", "approved", "closed"),
    "condition": ("always", "never", "default"),
    "condition:item": ("new", "used", "refurbished"),
    "decision": ("approved", "rejected", "pending_review"),
    "codec": ("h264", "hevc", "vp9", "av1"),
    "codec:audio": ("aac", "opus", "mp3"),
    "level": ("low", "medium", "high"),
    "period": ("annual", "quarterly"),
    "period:finance": ("annual", "quarterly"),
    "period:filing": ("FY2025", "Q1 2025", "Q2 2025", "Q3 2025"),
    "frequency": ("daily", "weekly", "monthly"),
    "frequency:finance": ("annual", "quarterly"),
    "orientation": ("landscape", "portrait"),
    "orientation:workflow": ("LR", "TB", "RL", "BT"),  # Airflow's graph orientation
    "visibility": ("public", "private", "unlisted"),
    "privacy": ("public", "private", "unlisted"),
    "availability": ("available", "unavailable", "limited"),
    "type": ("standard", "basic", "premium"),
    "type:data": ("string", "integer", "boolean", "date"),
    "type:product": ("feed", "clips", "carousel"),
    "type:highway": ("motorway", "primary", "secondary", "residential"),
    "type:account": ("personal", "business", "creator"),
    "type:news": ("article", "video", "opinion"),
    "type:business": ("Restaurant", "Cafe", "Bakery", "Pharmacy", "Bookstore", "Gym"),
    "type:event": ("conference", "meetup", "workshop", "webinar"),
    "type:album": ("album", "single", "compilation"),
    "type:file": ("document", "image", "spreadsheet"),
    "type:mime": ("application/pdf", "image/jpeg", "image/png", "text/csv"),
}
#: Words of a name, its object or its tool that choose a sort's entry (a route's mode).
_CONTEXTS = {
    **dict.fromkeys(("route", "routes", "traffic", "directions", "commute", "trip", "travel"), "travel"),
    **dict.fromkeys(("maps", "shortest", "navigation", "distance"), "travel"),
    **dict.fromkeys(("product", "item", "listing", "guitar", "car", "used", "price"), "item"),
    **dict.fromkeys(("filing", "filings", "sec", "reporting", "fiscal"), "filing"),
    "request": "http",
    **dict.fromkeys(("financial", "statement", "statements", "stmts", "dividend", "income"), "finance"),
    **dict.fromkeys(("balance", "cashflow", "earnings", "metrics"), "finance"),
}
#: Sorts whose modified names are only these (an activity level, not a significance level; a
#: reporting period, not an indicator's time_period).
_NARROW = {
    "level": frozenset({"activity", "fitness", "difficulty", "detail", "experience", "skill", "risk"})
    | frozenset({"noise", "stress", "access", "security", "alert", "severity", "urgency", "support"}),
    "period": frozenset({"reporting", "fiscal", "billing", "accounting"}),
    "state": frozenset({"submission", "review", "approval", "order", "account", "subscription"})
    | frozenset({"task", "job", "workflow", "payment", "carousel", "connection"}),
    "method": frozenset({"contact", "communication", "delivery", "notification", "shipping"}),
    "mode": frozenset({"display", "power", "drive", "driving", "energy", "dark", "night"}),
    "condition": frozenset({"display", "visibility", "trigger"}),
}
#: Things whose ``type`` is one of a sort above, by a word of the name, its object or its tool
#: (a news item's type, a local business's); the word's own entry else.
_TYPED = {
    "news": "news",
    "article": "news",
    "articles": "news",
    "business": "business",
    "restaurant": "business",
    "place": "business",
    "places": "business",
    "venue": "business",
    "event": "event",
    "events": "event",
    "album": "album",
    "albums": "album",
    "account": "account",
    "accounts": "account",
    "file": "file",
    "files": "file",
    "product": "product",
    "highway": "highway",
}
#: Modifiers of ``type`` that name no thing of their own but a sort (``data_type``, a MIME type).
_TYPE_MODIFIERS = {**_TYPED, "data": "data", "content": "mime", "mime": "mime", "media": "mime"}
#: Things that name their own sort: a Spotify artist overview's ``type`` is "artist".
_SELF_TYPED = frozenset({"artist", "track", "playlist", "show", "episode", "user", "channel"})
#: A description that gives its own examples or choices, which the synthesiser draws from.
_CUED = re.compile(
    r"\be\.\s?g\b|\bsuch as\b|\bfor (?:example|instance)\b|\bone of\b|\bpossible values\b|:\s*\[", re.I
)


def counted(words: tuple[str, ...], description: str, kind: str, topic: str = "") -> Kind | None:
    """A number that the name or description says, whatever the schema's type (a string gets
    it as text): a count, a past or coming year, a rank; None otherwise."""
    if kind not in ("string", "integer", "number", "") or not words:
        return None
    head, modifier = words[-1], words[:-1]
    if _COUNTED.search(description) and _BYTES.search(description):
        return Kind("number", "bytes")  # PeerTube's X-Upload-Content-Length: "Number of bytes..."
    if _COUNTED.search(description) and not _NUMBERED.search(description):
        # a total of ratings is in the thousands, a number of guests a few
        return Kind("number", "tally" if "total" in words or head in TALLIES else "count")
    if kind == "string" and head in _PLAIN_TALLIES:
        return Kind("number", "tally")
    if head == "year" and modifier:
        return Kind("number", "year" if set(modifier) & _COMING else "year_past")
    if kind in ("integer", "number") and words[0] in ("is", "has", "can", "should") and modifier:
        return Kind("number", "binary")  # Instagram's has_shared_to_fb typed a number was 14.57
    if head in ("rating", "stars") and modifier and kind in ("integer", "number"):
        return Kind("number", "rating")  # a product_rating of 17.03, out of 5
    if head in ("rank", "ranking") and not _CARDS.search(topic):
        return Kind("number", "rank")  # a card's rank is a King (left to its description)
    return None


def sort_of(words: tuple[str, ...], parent: str, topic: str, description: str, kind: str) -> Kind | None:
    """One value of the sort of thing the name's last word says (``misc`` kinds whose field is
    ``sort:<entry of SORTS>``, or ``sort=<value>`` for a thing naming its own type); None when the
    word names no sort, or when a bare ``state`` may be a region."""
    if kind not in ("string", "") or not words or _CUED.search(description):
        return None  # Codat's accountType, "The type of bank account e.g. Credit": its example
    head, modifier = words[-1], words[:-1]
    if head == "state" and not modifier:
        return None  # a country's state, read elsewhere
    if head == "provider":
        return Kind("company", "name")  # Tripadvisor's hotel offer provider was orbit-522
    if head == "permalink":
        return Kind("web", "url")
    if head not in SORTS:
        return None
    around = (*modifier, *tokens(parent), *tokens(topic))
    if head == "type":
        return _type_of(modifier, around)
    if head == "orientation" and WORKFLOW.search(f"{' '.join(around)} {description}".lower()):
        return Kind("misc", "sort:orientation:workflow")
    for word in around:  # the modifier first, then the object's and the tool's words
        key = f"{head}:{_CONTEXTS.get(word, word)}"
        if key in SORTS:
            return Kind("misc", f"sort:{key}")
    if head in _NARROW and not set(modifier) & _NARROW[head]:
        return None  # a bare method (an integral's? a route's?), a significance level: unknown
    return Kind("misc", f"sort:{head}")


def _type_of(modifier: tuple[str, ...], around: tuple[str, ...]) -> Kind:
    for word in modifier:  # data_type, product_type: the modifier's sort, if any
        if word in _TYPE_MODIFIERS:
            return Kind("misc", f"sort:type:{_TYPE_MODIFIERS[word]}")
    if modifier:
        return Kind("misc", "sort:type")
    for word in reversed(around):  # a bare type: its object's or tool's (the last noun first)
        if word in _TYPED:
            return Kind("misc", f"sort:type:{_TYPED[word]}")
        if singular(word) in _SELF_TYPED:
            return Kind("misc", f"sort={singular(word)}")
    return Kind("misc", "sort:type")
