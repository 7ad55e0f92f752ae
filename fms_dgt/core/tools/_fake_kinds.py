"""What a value is about, from its property name, description, format and surroundings.

:func:`classify` turns ``("check_out", "Check-out date", ...)`` into ``Kind("date", "end")`` and
``("recipient_email", ...)`` into ``Kind("person", "email", "other")``: a *family* (person, place,
date, id, money...), a *field* within it and a *role* that tells apart two entities of one family
in the same record (the user and the recipient, the origin and the destination). Results are
cached: the same names recur across every call of a run.
"""

from __future__ import annotations

import functools
import re
from datetime import datetime
from typing import Any

from fms_dgt.core.tools import _fake_data as data
from fms_dgt.core.tools._fake_heads import (
    CIPHERS,
    ENVELOPES,
    HANDLE,
    MOMENT_HEADS,
    PATH_WORDS,
    PICTURED,
    RATES,
    TALLIES,
    WORKFLOW,
)
from fms_dgt.core.tools._fake_names import (
    AS_TEXT as _AS_TEXT,
)
from fms_dgt.core.tools._fake_names import (
    DESCRIPTION_HINTS as _DESCRIPTION_HINTS,
)
from fms_dgt.core.tools._fake_names import (
    DESTINATION as _DESTINATION,
)
from fms_dgt.core.tools._fake_names import (
    END as _END,
)
from fms_dgt.core.tools._fake_names import (
    ENTITY_HEADS as _ENTITY_HEADS,
)
from fms_dgt.core.tools._fake_names import (
    EPOCH as _EPOCH,
)
from fms_dgt.core.tools._fake_names import (
    EXACT as _EXACT,
)
from fms_dgt.core.tools._fake_names import (
    FORMAT_FAMILIES as _FORMAT_FAMILIES,
)
from fms_dgt.core.tools._fake_names import (
    FORMATS as _FORMATS,
)
from fms_dgt.core.tools._fake_names import (
    ID_IN_DESCRIPTION as _ID_IN_DESCRIPTION,
)
from fms_dgt.core.tools._fake_names import (
    MONEY_HEADS as _MONEY_HEADS,
)
from fms_dgt.core.tools._fake_names import (
    NAME_HINTS as _NAME_HINTS,
)
from fms_dgt.core.tools._fake_names import (
    OTHER_PEOPLE as _OTHER_PEOPLE,
)
from fms_dgt.core.tools._fake_names import (
    OTHER_PERSON as _OTHER_PERSON,
)
from fms_dgt.core.tools._fake_names import (
    PEOPLE as _PEOPLE,
)
from fms_dgt.core.tools._fake_names import (
    PERSON_WORDS as _PERSON_WORDS,
)
from fms_dgt.core.tools._fake_names import (
    PICKS as _PICKS,
)
from fms_dgt.core.tools._fake_names import (
    PLACE_ROLES as _PLACE_ROLES,
)
from fms_dgt.core.tools._fake_names import (
    REMEMBERED,
    SORT_WORDS,
    Kind,
    remembers,
    tokens,
)
from fms_dgt.core.tools._fake_names import (
    ROLE_WORDS as _ROLE_WORDS,
)
from fms_dgt.core.tools._fake_names import (
    SOCIAL as _SOCIAL,
)
from fms_dgt.core.tools._fake_names import (
    SOCIAL_USERS as _SOCIAL_USERS,
)
from fms_dgt.core.tools._fake_names import (
    START as _START,
)
from fms_dgt.core.tools._fake_names import (
    TEXT_ONLY as _TEXT_ONLY,
)
from fms_dgt.core.tools._fake_names import (
    TRAVEL as _TRAVEL,
)
from fms_dgt.core.tools._fake_names import (
    VENUES as _VENUES,
)
from fms_dgt.core.tools._fake_names import (
    VERBS as _VERBS,
)
from fms_dgt.core.tools._fake_names import (
    WEAK as _WEAK,
)
from fms_dgt.core.tools._fake_names import (
    WORK_TITLES as _WORK_TITLES,
)
from fms_dgt.core.tools._fake_names import k as _k
from fms_dgt.core.tools._fake_sorts import ORDINALS, counted, sort_of
from fms_dgt.core.tools._fake_texts import SUBJECT_FIELDS, refine
from fms_dgt.core.tools.enrichments._dataflow_words import singular

__all__ = [
    "REMEMBERED",
    "SORT_WORDS",
    "Kind",
    "canonical",
    "classify",
    "place_named",
    "remembers",
    "tokens",
    "topic_noun",
]


@functools.lru_cache(maxsize=16384)
def classify(
    name: str, description: str = "", parent: str = "", topic: str = "", fmt: str = "", kind: str = ""
) -> Kind | None:
    """What the value of property ``name`` stands for, or None when nothing says.

    Args:
        name: the property name.
        description: its description.
        parent: the enclosing property's name (``address`` for ``address.city``).
        topic: the tool's name (``get_order`` makes a bare ``id`` an order id).
        fmt: the schema's ``format``.
        kind: the schema's JSON type (``integer`` makes ``day`` a day of the month).

    A text's field carries what it is about when its words say (``title:video``, see
    :mod:`~fms_dgt.core.tools._fake_texts`).
    """
    found = _classify(name, description, parent, topic, fmt, kind)
    if found is not None and found.family == "text" and found.field in SUBJECT_FIELDS:
        return refine(found, name, description, parent, topic)
    return found


def _classify(name: str, description: str, parent: str, topic: str, fmt: str, kind: str) -> Kind | None:
    words = tokens(name)
    words = words[1:] if words[:1] == ("is",) and words[1:] in (("id",), ("from",), ("to",)) else words
    if len(words) > 2 and words[-1] == "of" and words[-2] in ("one", "all", "any"):
        words = words[:-2]  # PeerTube's tagsAllOf, categoryOneOf: the filter's values are tags
    if fmt in ("seconds", "duration") and kind in ("integer", "number"):
        return _k("number", "seconds")  # PeerTube's startTimestamp: seconds into a video, no moment
    if kind == "string" and len(words) > 1 and words[0] in _FLAG_STARTS:
        return _k("misc", "flag")  # has_parking, is_have_odds written as text: "true" or "false"
    found = _by_name(words, parent, topic, description, kind)
    if found is None and words and (one := singular(words[-1])) != words[-1]:
        # intermediaryCities are cities, symptoms (a text listing them) symptoms
        found = _by_name((*words[:-1], one), parent, topic, description, kind)
    joined = "".join(words)
    if found is None and joined not in _SORTS and (not words or joined in _WEAK or kind in ("string", "")):
        # a weak name, or a text nothing above knows (``src``: "The text to translate"); not a
        # sort of thing ("The type of location (e.g., city, region)" is no place)
        found = _by_description(description.lower(), words)
    if found is None and parent.lower().strip("_") in ("links", "link"):
        found = _k("web", "url")  # JSON:API and HAL links: self, related, next
    if (
        found is None
        and kind in ("number", "")
        and (
            words[-1:] in (("probability",), ("prob",))
            or (joined in ("p", "prob") and "probabilit" in description.lower())
        )
    ):
        found = _k("number", "probability")  # a binomial trial's p was 2.87
    if found == ("number", "priority", "") and kind == "string":
        found = _k("misc", "priority_level")  # "high", not "4"
    if (
        found is not None
        and found.field == "resolution"
        and _SCREENS.search(f"{parent} {' '.join(tokens(topic))} {description}")
    ):
        found = _k("misc", "video_resolution")  # a video file's 1080p is no ticket's resolution
    if found is None or found == ("money", "price", ""):  # Goodreads' totalEditions: a count
        found = (
            counted(words, description, kind, topic)
            or found
            or sort_of(words, parent, topic, description, kind)
        )
    if found is None and joined == "exponent":
        found = _k("number", "exponent")  # 87.05 to the power 26.16 has 51 digits
    if found is None and joined == "base" and re.search(r"log", topic, re.I):
        found = _k("number", "log_base")  # a logarithm to base 2 or 10, not to base 85.85
    if fmt in _FORMATS and (found is None or not _fits_format(found, fmt)):
        found = _FORMATS[fmt]._replace(role=found.role if found else "")
        if found.family == "date":
            found = found._replace(field=_date_field(words))
    if (
        found is not None
        and found.family == "date"
        and found.field == "start"
        and _NOW.search(f"{name} {topic}")
    ):
        found = Kind("date", "now", found.role)  # GetToday's date, current_time: the record's today
    if kind == "boolean":
        return None  # a flag is no person, place or date, whatever its name says of one
    numeric = kind in ("integer", "number") and found is not None and found.family in _TEXT_ONLY
    # A number named like a moment is a duration or a count (``time`` in physics) unless it says
    # it is a timestamp; a number named like a text is not that text.
    if numeric and (found is None or found.family != "date" or not set(words) & _EPOCH):
        return None
    if found is not None and found.field == "timezone" and kind in ("integer", "number"):
        return _k("number", "utc_offset")  # a time zone given as a number is hours from UTC, not 16.18
    if found == ("file", "path", "") and PICTURED.search(f"{name} {parent}"):
        return _k("file", "image_path")  # a channel's banner is an image, not meeting_notes_27.txt
    if found is not None and found.family == "web" and re.search(r"rtmps?", name, re.I):
        return _k("web", "rtmp_url")  # a live stream's ingest, not a blog article
    if found == ("file", "document", "") and _IMAGES.search(topic):
        # The file of uploadPhoto is a photo (no receipt's scan), of uploadImage any image.
        return Kind("file", "photo" if _PHOTOS.search(topic) else "image")
    if found == ("file", "document", "") and _SOUNDS.search(f"{topic} {parent}"):
        return Kind("file", "audio")  # a voice service's announcements are recordings
    return found


_IMAGES = re.compile(r"photo|image|picture|avatar|screenshot", re.I)
_PHOTOS = re.compile(r"photo|picture|avatar|selfie|portrait", re.I)

#: Names of what tells the present moment (``GetToday``, ``current_date``, ``now``).
_NOW = re.compile(r"today|current(?:_?(?:date|time|datetime|day))|\bnow\b|(?<=[a-z])Now\b", re.I)
_HINT_PATTERNS = tuple((re.compile(rf"\b{re.escape(hint)}"), kind) for hint, kind in _NAME_HINTS)
#: What a description says a name names ("The name of the scene").
_NAMED_THING = re.compile(r"\bname of (?:the |a |an |this |that |your |its )?([a-z]+)")
#: Names of the sort of a thing: their descriptions name the thing sorted, not what they are.
_SORTS = SORT_WORDS | {"category", "class"}
_SOUNDS = re.compile(r"audio|sound|recording|voicemail|announcement|podcast|ringtone", re.I)
_WEATHER = re.compile(r"weather|forecast|climate|meteo", re.I)
_WEATHER_WORDS = frozenset({"condition", "conditions", "weather", "sky", "outlook", "weathercondition"})
_FILES = re.compile(
    r"\b(?:upload\w*|file\w*|photo\w*|image\w*|picture|attachment\w*|document\w*|video\w*)\b", re.I
)
_SIZE_WORDS = frozenset({"size", "filesize", "bytes", "sizebytes", "sizeinbytes", "contentlength"})
_CRON = re.compile(r"cron|schedul", re.I)
_SCREENS = re.compile(r"\b(?:video|image|photo|picture|screen|stream|live|camera|display|file)s?\b", re.I)
_PIPELINES = re.compile(r"\bdags?\b|workflow|pipeline")
_WORKFLOW_FIELDS = {
    "queue": "task_queue",
    "pool": "task_pool",
    "operator": "task_operator",
    "executor": "executor",
    "executorclass": "executor",
    "jobtype": "job_type",
    "defaultview": "dag_view",
    "state": "run_state",
    "classpath": "trigger_class",
    "classname": "task_operator",  # a task's class_ref: its operator's class
    "kwargs": "json_settings",
    "templatefields": "template_field",
    "templatefield": "template_field",
    "dagidpattern": "dag_pattern",
    "executorconfig": "json_settings",
}


def _by_name(words: tuple[str, ...], parent: str, topic: str, description: str, kind: str) -> Kind | None:
    joined = "".join(words)
    if joined in ("name", "title") and parent:
        return _name_of(tokens(parent), topic, description)
    if joined in _AS_TEXT and kind not in ("integer", "number"):
        return _AS_TEXT[joined]
    if joined in ("high", "low", "hi", "lo", "max", "min") and re.search(
        r"weather|forecast|temp", f"{parent} {topic} {description}".lower()
    ):
        return _k("number", "temperature")
    context = f"{parent} {' '.join(tokens(topic))} {description}".lower()
    if joined in _WEATHER_WORDS and kind not in ("integer", "number") and _WEATHER.search(context):
        return _k("misc", "weather")  # the sky's condition, not an item's or a patient's
    if joined in _SIZE_WORDS and kind in ("integer", "number") and _FILES.search(context):
        return _k("number", "bytes")  # the size of an uploaded photo is bytes, not a count
    if joined == "caption" and _IMAGES.search(context):
        return _k("text", "caption")
    if joined == "platform" and _SOCIAL.search(f"{description} {' '.join(tokens(topic))}".lower()):
        return _k("misc", "social")
    if joined in ("value", "expression") and kind != "integer" and _CRON.search(f"{parent} {description}"):
        return _k("misc", "cron")  # Airflow's schedule_interval: {"__type": "CronExpression", "value": ...}
    if joined in ("description", "docmd") and kind in ("string", "") and _PIPELINES.search(context):
        return _k("text", "description:workflow")  # an Airflow DAG is no "stainless steel bottle"
    if joined == "fileloc" and kind in ("string", "") and WORKFLOW.search(context):
        return _k("file", "dag_file")  # where a DAG's file is, not a user's invoice
    if joined in _WORKFLOW_FIELDS and kind in ("string", "") and WORKFLOW.search(context):
        return _k("misc", _WORKFLOW_FIELDS[joined])  # a task's queue and pool, a DAG's operator
    if joined in _PLACE_ROLES and _TRAVEL.search(f"{description} {' '.join(tokens(topic))}".lower()):
        return Kind("place", "city", _role(words, "place"))
    if joined in _OTHER_PEOPLE or (joined.endswith("s") and joined[:-1] in _OTHER_PEOPLE):
        return Kind("person", "full_name", "other")
    if joined in _PEOPLE:
        return _person_by_description(description.lower(), words)
    if joined in _EXACT:
        found = _EXACT[joined]
        return found._replace(role=_role(words, found.family))
    role_free = tuple(w for w in words if w not in _ROLE_WORDS and w not in _START and w not in _END)
    core = role_free or words
    exact = _EXACT.get("".join(core))
    if exact is not None:
        return _with_role(exact, words)
    return _by_head(core, words, parent, topic, description, kind)


def _person_by_description(description: str, words: tuple[str, ...]) -> Kind | None:
    role = _role(words, "person")
    if re.search(r"\be-?mail", description):
        return Kind("person", "email", role)
    if re.search(r"\bphone|\bnumber\b", description):
        return Kind("person", "phone", role)
    if "username" in description or "handle" in description:
        return Kind("person", "username", role)
    if set(words) & {"to", "from"}:
        return None  # `from`/`to` alone may be anything: the description decides
    return Kind("person", "full_name", role)


def _with_role(found: Kind, words: tuple[str, ...]) -> Kind:
    if found.family == "date" and found.field in ("start", "past"):
        return found._replace(field=_date_field(words))
    return found._replace(role=_role(words, found.family))


def _by_head(
    core: tuple[str, ...], words: tuple[str, ...], parent: str, topic: str, description: str, kind: str
) -> Kind | None:
    if not core:  # a name of no words ("1", "_"): nothing to read
        return None
    head, modifier = core[-1], core[:-1]
    if head in MOMENT_HEADS and (modifier or head != "day"):
        return Kind("date", _date_field(words))
    if head in _ENTITY_HEADS and modifier:
        return _entity_id(modifier, words)
    if head in ("id", "ids", "uuid") and not modifier:
        return Kind("id", _entity_of(parent, topic, description))
    if head == "name":  # a display name is the name (of a playlist, a title; of a user, theirs)
        shown = tuple(w for w in modifier if w != "display")
        found = _name_of(shown or tokens(parent), topic, description, words)
        if modifier[-1:] == ("file",) and (found is None or found.family != "file"):
            return _k("file", "document")  # SEC's HtmlFileName: a file, not a title
        if found is not None and found.field == "username" and shown != modifier:
            return found._replace(field="full_name")  # an account's display name is no handle
        if found == ("money", "currency", ""):  # Alpha Vantage's To_Currency Name was "NZD"
            return Kind("money", "currency_name", _role(words, "money"))
        return found
    if head == "title" and modifier and modifier[-1] in _WORK_TITLES:
        return _k("text", "work")
    if (
        head in ("list", "array", "collection", "str", "string") or head.removesuffix("s") in _PICKS
    ) and modifier:
        listed = _by_name(modifier, parent, topic, description, kind)
        if listed is None and singular(modifier[-1]) in _SOCIAL_USERS | {"member", "participant", "attendee"}:
            return Kind("person", "username", "other")  # glaive's user_list gave river-946
        return listed
    one = singular(head)
    if kind in ("string", "") and (
        one in _VENUES or one == "cinema" or (one == "lot" and "parking" in modifier)
    ):
        return Kind("item", f"venue:{'parking lot' if one == 'lot' else one}")  # a museum was signal-683
    if head == "algorithm" and CIPHERS.search(f"{topic} {description}"):
        return _k("misc", "cipher")  # encrypt_message's algorithm was signal-419
    if head == "rate" and kind in ("integer", "number") and modifier and set(modifier) <= RATES:
        return _k("number", "rate")  # a tax rate of 357.74 was read as a price
    counted = head if head not in ("count", "number", "total") or not modifier else modifier[-1]
    if (counted in TALLIES or (counted != head and f"{counted}s" in TALLIES)) and kind in (
        "integer",
        "number",
    ):
        return _k("number", "tally")  # COVID's totalDeaths were 17.79 (a price), a video's likes 42.5
    if head in _MONEY_HEADS or (modifier and modifier[-1] in _MONEY_HEADS):
        return Kind("money", "price")
    if head in ("email", "phone", "city", "country", "address", "url", "currency") and modifier:
        found = _EXACT.get(head)
        return found._replace(role=_role(words, found.family)) if found else None
    if head in ("count", "number", "limit", "size") or core[0] in ("num", "number", "max", "min", "total"):
        return _k("number", "count")
    if head in _OTHER_PEOPLE and kind == "string":  # new_appointment_doctor: a doctor's name
        return Kind("person", "full_name", "other")
    if head.removesuffix("s") in _SOCIAL_USERS and modifier and kind in ("string", ""):
        return Kind("person", "username", "other")  # tagged_users, top_likers: their handles
    if head.removesuffix("s") in _WORK_TITLES and modifier:  # watched_movies: titles of films
        return _k("text", "work")
    found = _EXACT.get(head) or _EXACT.get(head.removesuffix("s"))
    if found is not None and found.family in ("text", "item", "file", "misc", "web") and modifier:
        return found  # translated_text, meeting_topic, filtered_stocks (tickers), bio_links (URLs)
    return None


def _date_field(words: tuple[str, ...]) -> str:
    present = set(words)
    if present & {"birth", "birthday", "dob", "born"}:
        return "birth"
    if present & {"created", "updated", "modified", "last", "published", "posted", "occurred", "happened"}:
        return "now" if present & _END else "past"  # events after a past day, before today
    if present & {"gte", "gt"}:  # Airflow's start_date_gte and start_date_lte: a window's ends
        return "start"
    if present & _END:
        return "end"
    return "start"


def _entity_id(modifier: tuple[str, ...], words: tuple[str, ...]) -> Kind:
    joined = "".join(modifier)
    if modifier[-1] in ORDINALS and words[-1] in ("number", "num", "no"):
        return _k("number", ORDINALS[modifier[-1]])  # a task's try_number was 15529, no id
    if modifier[-1] in ("phone", "mobile", "telephone") or (joined == "contact" and words[-1] != "id"):
        return Kind("person", "phone", _role(words, "person"))  # contact_phone_number was phon-29160
    if joined in ("card", "creditcard", "bank", "routing", "iban"):
        return Kind("account", "card" if "card" in joined else "number")
    if joined in ("zip", "postal", "post", "pin") and not (
        joined == "post" and words[-1] in ("id", "ids", "uuid")
    ):
        return _k("place", "postcode")  # a post code; a post's id is a social post's (API-Bank's post_ids)
    if joined in ("country", "currency", "language", "airport", "color", "colour", "lang"):
        return _EXACT[joined + "code"] if joined + "code" in _EXACT else _EXACT[joined]
    if joined == "flight":
        return _k("item", "flight")
    if joined in ("stock", "ticker", "symbol", "share"):
        return _k("item", "ticker")
    if joined in ("promo", "discount", "coupon", "voucher", "verification", "otp", "auth", "confirmation"):
        return Kind("misc", "code")
    if joined in ("user", "customer", "member", "client"):
        return Kind("id", "user", _role(words, "person"))
    # The far end of something is another one (destinationSkyId is not originSkyId's airport).
    far = "destination" if set(words) & _DESTINATION else ""
    return Kind("id", singular(modifier[-1]), _role(words, "person") or far)


#: First words of a yes-or-no.
_FLAG_STARTS = frozenset({"is", "has", "have", "do", "does", "can", "should", "enable", "allow"})
#: Words before "id" in a description that name no entity ("object id for the video": a video's).
_NO_ENTITY = frozenset(
    {"the", "unique", "an", "a", "its", "this", "object", "internal", "numeric", "database"}
)


def _entity_of(parent: str, topic: str, description: str) -> str:
    if parent and parent.lower() not in ENVELOPES:  # Up's data.id is a webhook's, not a "data-6094"
        return singular(tokens(parent)[-1]) if tokens(parent) else "item"
    match = _ID_IN_DESCRIPTION.search(description.lower())
    if match:
        word = next(g for g in match.groups() if g)
        if word not in _NO_ENTITY:
            return singular(word)
    if parent:
        # An envelope holds what the path ends with: /transactions/{id}/relationships/tags holds
        # tags (they were the transaction's own id), /webhooks/{id}/logs logs.
        return topic_noun(topic) or "item"
    nouns = _nouns(topic)
    return singular(nouns[0]) if nouns else "item"


def _nouns(topic: str) -> list[str]:
    return [w for w in tokens(topic) if w not in _VERBS and not w.isdigit() and len(w) > 1]  # not v1's v


@functools.lru_cache(maxsize=4096)
def topic_noun(topic: str) -> str:
    """What a tool named like a path returns, in the singular: ``getCategories`` a category,
    ``post_transactions_by_transactionId_relationships_tags`` a tag; "" when its name has no noun."""
    nouns = _nouns(topic)
    ends = [w for w in nouns if w not in PATH_WORDS]
    return singular(ends[-1] if ends else nouns[0]) if nouns else ""


def _name_of(
    modifier: tuple[str, ...], topic: str, description: str, words: tuple[str, ...] = ()
) -> Kind | None:
    joined = "".join(modifier)
    # PeerTube's channel name: "immutable name of the user, used to find or mention"
    if HANDLE.search(description):
        return Kind("person", "username", _role(words or modifier, "person"))
    if modifier and modifier[-1] in _WORK_TITLES | {"music"}:
        return _k("text", "work")
    if modifier and modifier[-1] in _VENUES:
        return Kind("item", f"venue:{modifier[-1]}")
    if joined in ("account", "actor", "profile"):  # PeerTube's account.name: a handle, no account number
        return Kind("person", "username", _role(words or modifier, "person"))
    if joined in _EXACT and _EXACT[joined].family != "number":
        found = _EXACT[joined]
        return found._replace(field="full_name") if found.family == "person" else found
    ones = {singular(w) for w in modifier}
    if ones & _OTHER_PEOPLE:
        return Kind("person", "full_name", "other")
    if ones & _PERSON_WORDS:
        return Kind("person", "full_name", _role(words or modifier, "person"))
    text = f"{joined} {description.lower()} {' '.join(tokens(topic))}"
    for hint, kind in _HINT_PATTERNS:
        if hint.search(text):  # at a word's start: no file in "profile", no pet in "competition"
            return kind
    named = _NAMED_THING.search(description.lower())
    if named is not None and singular(named.group(1)) not in _PERSON_WORDS | _OTHER_PEOPLE:
        return _k("text", "title")  # API-Bank's DeleteScene: "The name of the scene" is no person's
    if set(text.split()) & _PERSON_WORDS or not modifier:
        return Kind("person", "full_name", _role(words, "person"))
    return Kind("text", "title")


def _by_description(description: str, words: tuple[str, ...]) -> Kind | None:
    if not description:
        return None
    for pattern, kind in _DESCRIPTION_HINTS:
        if pattern.search(description):
            return _with_role(kind, words)
    match = _ID_IN_DESCRIPTION.search(description)
    if match:
        return Kind("id", singular(next(g for g in match.groups() if g)))
    return None


def _role(words: tuple[str, ...], family: str) -> str:
    present = set(words)
    if family == "person" and present & _OTHER_PERSON:
        return "other"
    if family == "place" and present & _DESTINATION:
        return "destination"
    if family == "money" and present & {"to", "target", "quote"}:
        return "target"
    return ""


def _fits_format(kind: Kind, fmt: str) -> bool:
    allowed = _FORMAT_FAMILIES[fmt]
    return kind.family in allowed or f"{kind.family}.{kind.field}" in allowed


# ---------------------------------------------------------------- comparing observed values


def place_named(text: Any) -> data.Place | None:
    """The place a city, country, code or airport names (``"Lisbon, PT"`` -> Lisbon), if known."""
    return data.PLACE_INDEX.get(str(text).split(",")[0].strip().lower())


def canonical(kind: Kind, value: Any) -> tuple[str, str]:
    """``(style, form)`` under which two values of ``kind`` are the same entity when equal.

    The style keeps apart renderings that are not comparable (a date and a time of day).
    """
    text = str(value).strip()
    if kind.family == "id":
        digits = re.sub(r"\D", "", text).lstrip("0")
        return "id", digits or text.lower()
    if kind.family == "date":
        return _canonical_moment(value, text)
    if kind.family == "money" and kind.field == "amount":
        try:
            return "amount", f"{float(text):.2f}"
        except ValueError:
            return "amount", text
    if kind.family == "person" and kind.field == "phone":
        return "phone", re.sub(r"\D", "", text)[-9:]
    if kind.family == "place" and kind.field in ("city", "location"):
        place = place_named(text)
        return "city", place.city.lower() if place else text.lower()
    if kind.family == "place" and kind.field in ("country", "country_code"):
        place = place_named(text)
        return "country", place.code if place else text.lower()
    return "text", text.lower()


def _canonical_moment(value: Any, text: str) -> tuple[str, str]:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return "epoch", str(int(value))
    if re.fullmatch(r"\d{1,2}:\d{2}(:\d{2})?Z?", text):
        return "time", text[:5]
    moment = _parse_moment(text)
    if moment is None:
        return "text", text.lower()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return "date", moment.date().isoformat()
    return "datetime", moment.isoformat(timespec="minutes")


def _parse_moment(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "").replace(" ", "T")[:19])
    except ValueError:
        return None
