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
from typing import NamedTuple

__all__ = ["REMEMBERED", "Kind", "classify", "remembers", "tokens"]


class Kind(NamedTuple):
    """What a value stands for."""

    family: str
    field: str
    role: str = ""

    @property
    def key(self) -> str:
        """``family.field@role``: one entity value of a record."""
        return _key(self)


@functools.lru_cache(maxsize=8192)
def _key(kind: Kind) -> str:
    return f"{kind.family}.{kind.field}@{kind.role}"


#: Families whose values are entities of the record: the same value recurs wherever it is asked
#: for (other families, such as a message or a count, are drawn afresh each time).
REMEMBERED = frozenset({"person", "place", "date", "id", "account", "company", "file", "money", "item"})
# Fields of those families that are drawn afresh all the same: a price is not an amount paid.
_FRESH = frozenset({"money.price", "file.extension", "file.mime", "person.job"})


@functools.lru_cache(maxsize=8192)
def remembers(kind: Kind) -> bool:
    """Whether values of ``kind`` are entities of the record (the same value wherever asked)."""
    return kind.family in REMEMBERED and f"{kind.family}.{kind.field}" not in _FRESH


_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


@functools.lru_cache(maxsize=4096)
def tokens(name: str) -> tuple[str, ...]:
    """Lower-case words of a name in any case style: ``checkInDate`` -> ``(check, in, date)``."""
    return tuple(w.lower() for w in _WORDS.findall(name))


def _k(family: str, field: str) -> Kind:
    return Kind(family, field)


# Whole names (words joined) that say everything at once.
_EXACT: dict[str, Kind] = {
    **dict.fromkeys(("firstname", "fname", "givenname", "forename"), _k("person", "first_name")),
    **dict.fromkeys(("lastname", "lname", "surname", "familyname"), _k("person", "last_name")),
    **dict.fromkeys(
        ("fullname", "personname", "contactname", "displayname", "customername"), _k("person", "full_name")
    ),
    **dict.fromkeys(
        ("username", "login", "handle", "screenname", "nickname", "userhandle"), _k("person", "username")
    ),
    **dict.fromkeys(("email", "emailaddress", "mail", "emailid", "useremail"), _k("person", "email")),
    **dict.fromkeys(
        (
            "phone",
            "phonenumber",
            "mobile",
            "mobilenumber",
            "telephone",
            "tel",
            "cell",
            "fax",
            "contactnumber",
        ),
        _k("person", "phone"),
    ),
    **dict.fromkeys(("gender", "sex"), _k("person", "gender")),
    **dict.fromkeys(("jobtitle", "occupation", "profession", "position"), _k("person", "job")),
    **dict.fromkeys(
        ("city", "town", "cityname", "municipality", "destination", "origin"), _k("place", "city")
    ),
    **dict.fromkeys(("country", "countryname", "nation"), _k("place", "country")),
    **dict.fromkeys(("countrycode", "countryiso", "iso"), _k("place", "country_code")),
    **dict.fromkeys(("state", "province", "region", "county", "statename"), _k("place", "region")),
    **dict.fromkeys(
        ("zip", "zipcode", "postalcode", "postcode", "postal", "pincode"), _k("place", "postcode")
    ),
    **dict.fromkeys(
        ("street", "streetaddress", "addressline", "addressline1", "line1"), _k("place", "street")
    ),
    **dict.fromkeys(("address", "fulladdress", "homeaddress", "mailingaddress"), _k("place", "address")),
    **dict.fromkeys(("lat", "latitude"), _k("place", "latitude")),
    **dict.fromkeys(("lon", "lng", "long", "longitude"), _k("place", "longitude")),
    **dict.fromkeys(("timezone", "tz", "tzname"), _k("place", "timezone")),
    **dict.fromkeys(("location", "place", "locationname", "where", "near", "loc"), _k("place", "location")),
    **dict.fromkeys(("airport", "airportcode", "iata", "iatacode"), _k("place", "airport")),
    **dict.fromkeys(("checkin", "checkindate", "arrivaldate"), _k("date", "start")),
    **dict.fromkeys(("checkout", "checkoutdate"), _k("date", "end")),
    **dict.fromkeys(("birthday", "birthdate", "dob", "dateofbirth"), _k("date", "birth")),
    **dict.fromkeys(("createdat", "updatedat", "timestamp", "created", "modified"), _k("date", "past")),
    **dict.fromkeys(("currency", "currencycode", "ccy", "basecurrency"), _k("money", "currency")),
    **dict.fromkeys(("amount", "payment", "paymentamount", "transferamount"), _k("money", "amount")),
    **dict.fromkeys(
        ("cardnumber", "creditcard", "creditcardnumber", "ccnumber", "card"), _k("account", "card")
    ),
    **dict.fromkeys(("cvv", "cvc", "securitycode"), _k("account", "cvv")),
    **dict.fromkeys(("expiry", "expirydate", "expirationdate", "expiration"), _k("account", "expiry")),
    **dict.fromkeys(("iban", "accountnumber", "account", "bankaccount"), _k("account", "number")),
    **dict.fromkeys(
        (
            "company",
            "companyname",
            "organization",
            "organisation",
            "employer",
            "business",
            "vendor",
            "merchant",
        ),
        _k("company", "name"),
    ),
    **dict.fromkeys(
        ("url", "link", "website", "homepage", "uri", "href", "webhook", "callbackurl"), _k("web", "url")
    ),
    **dict.fromkeys(
        ("imageurl", "photourl", "avatar", "avatarurl", "thumbnail", "logo"), _k("web", "image_url")
    ),
    **dict.fromkeys(("domain", "hostname", "host", "domainname"), _k("web", "domain")),
    **dict.fromkeys(("ip", "ipaddress", "ipv4"), _k("web", "ip")),
    **dict.fromkeys(("file", "filename", "attachment", "document", "doc"), _k("file", "document")),
    **dict.fromkeys(("image", "photo", "picture", "img", "imagefile"), _k("file", "image")),
    **dict.fromkeys(("audio", "audiofile", "recording"), _k("file", "audio")),
    **dict.fromkeys(("video", "videofile"), _k("file", "video")),
    **dict.fromkeys(("path", "filepath", "fullpath"), _k("file", "path")),
    **dict.fromkeys(
        ("directory", "dir", "folder", "foldername", "directoryname", "dirname"), _k("file", "folder")
    ),
    **dict.fromkeys(("extension", "fileextension", "ext"), _k("file", "extension")),
    **dict.fromkeys(("mimetype", "contenttype", "mediatype", "mime"), _k("file", "mime")),
    **dict.fromkeys(
        ("title", "subject", "headline", "heading", "eventname", "eventtitle"), _k("text", "title")
    ),
    **dict.fromkeys(
        ("query", "q", "search", "searchterm", "searchquery", "searchtext", "prompt"), _k("text", "query")
    ),
    **dict.fromkeys(("keyword", "keywords", "terms", "topic", "phrase"), _k("text", "keyword")),
    **dict.fromkeys(
        ("message", "msg", "text", "body", "content", "comment", "note", "notes", "reply", "post", "tweet"),
        _k("text", "message"),
    ),
    **dict.fromkeys(("review", "feedback", "testimonial"), _k("text", "review")),
    **dict.fromkeys(("reason", "cause", "purpose"), _k("text", "reason")),
    **dict.fromkeys(
        ("description", "desc", "summary", "details", "bio", "about", "overview", "caption"),
        _k("text", "description"),
    ),
    **dict.fromkeys(("tag", "tags", "label", "labels", "hashtag"), _k("text", "tag")),
    **dict.fromkeys(("category", "categories"), _k("text", "category")),
    **dict.fromkeys(("genre", "genres"), _k("text", "genre")),
    **dict.fromkeys(("hotel", "hotelname"), _k("item", "hotel")),
    **dict.fromkeys(("restaurant", "restaurantname"), _k("item", "restaurant")),
    **dict.fromkeys(("product", "productname", "item", "itemname"), _k("item", "product")),
    **dict.fromkeys(("flight", "flightnumber", "flightno"), _k("item", "flight")),
    **dict.fromkeys(("ticker", "symbol", "stock", "stocksymbol", "tickersymbol"), _k("item", "ticker")),
    **dict.fromkeys(("airline", "carrier"), _k("misc", "airline")),
    **dict.fromkeys(("color", "colour", "colorname"), _k("misc", "colour")),
    **dict.fromkeys(("hex", "hexcolor", "colorcode", "colourcode", "hexcode"), _k("misc", "colour_hex")),
    **dict.fromkeys(("language", "lang", "languagename"), _k("misc", "language")),
    **dict.fromkeys(("languagecode", "langcode", "locale"), _k("misc", "language_code")),
    **dict.fromkeys(("password", "passcode", "passphrase"), _k("misc", "password")),
    **dict.fromkeys(
        ("token", "apikey", "accesstoken", "secret", "apitoken", "authtoken"), _k("misc", "token")
    ),
    **dict.fromkeys(("weekday", "dayofweek", "dayname"), _k("misc", "weekday")),
    **dict.fromkeys(("status",), _k("misc", "status")),
    **dict.fromkeys(
        (
            "limit",
            "count",
            "n",
            "k",
            "topk",
            "maxresults",
            "numresults",
            "pagesize",
            "perpage",
            "size",
            "top",
        ),
        _k("number", "count"),
    ),
    **dict.fromkeys(("quantity", "qty"), _k("number", "quantity")),
    **dict.fromkeys(("word", "term", "vocabulary"), _k("misc", "word")),
    **dict.fromkeys(("string", "sentence", "inputstring", "inputtext", "str"), _k("text", "message")),
    **dict.fromkeys(("cuisine", "cuisinetype", "foodtype"), _k("misc", "cuisine")),
    **dict.fromkeys(("activity", "exercise", "sport", "workout"), _k("misc", "activity")),
    **dict.fromkeys(("diet", "dietary", "dietaryrestriction", "dietaryrestrictions"), _k("misc", "diet")),
    **dict.fromkeys(
        ("guests", "adults", "people", "persons", "passengers", "travelers", "travellers", "seats", "rooms"),
        _k("number", "party"),
    ),
    **dict.fromkeys(("children", "kids", "infants"), _k("number", "children")),
    **dict.fromkeys(("nights", "days", "numdays", "numberofdays", "numnights"), _k("number", "days")),
    **dict.fromkeys(("page", "pagenumber", "pageno"), _k("number", "page")),
    **dict.fromkeys(("offset", "skip"), _k("number", "offset")),
    **dict.fromkeys(("pet", "petname", "dog", "cat"), _k("misc", "pet")),
    **dict.fromkeys(("age",), _k("number", "age")),
    **dict.fromkeys(("bedrooms", "bathrooms", "floors", "beds"), _k("number", "rooms")),
    **dict.fromkeys(("years", "periodinyears", "termyears", "loanterm", "term"), _k("number", "years")),
    **dict.fromkeys(("platform", "os", "device"), _k("misc", "platform")),
    **dict.fromkeys(("rating", "stars", "score", "minrating"), _k("number", "rating")),
    **dict.fromkeys(("percent", "percentage", "discount"), _k("number", "percent")),
    **dict.fromkeys(
        ("temperature", "temp", "feelslike", "tempmin", "tempmax", "mintemp", "maxtemp", "celsius"),
        _k("number", "temperature"),
    ),
    **dict.fromkeys(("windspeed", "wind", "windgust", "gust"), _k("number", "wind")),
    **dict.fromkeys(("humidity", "cloudcover", "precipitationprobability"), _k("number", "humidity")),
    **dict.fromkeys(("minutes", "durationminutes", "durationmins"), _k("number", "minutes")),
    **dict.fromkeys(("hours", "durationhours"), _k("number", "hours")),
    **dict.fromkeys(("distance", "radius", "km", "miles"), _k("number", "distance")),
    **dict.fromkeys(("year",), _k("number", "year")),
    **dict.fromkeys(("month",), _k("number", "month")),
    **dict.fromkeys(("day",), _k("number", "day")),
    **dict.fromkeys(("hour",), _k("number", "hour")),
    **dict.fromkeys(("minute",), _k("number", "minute")),
}

#: Role words: which of two entities of one family a name means.
_OTHER_PERSON = frozenset(
    {
        "to",
        "recipient",
        "receiver",
        "target",
        "friend",
        "assignee",
        "invitee",
        "payee",
        "beneficiary",
        "other",
        "attendee",
        "participant",
    }
)
_DESTINATION = frozenset({"to", "destination", "dest", "arrival", "dropoff", "target", "arrive"})
_ROLE_WORDS = frozenset(
    {
        *_OTHER_PERSON,
        *_DESTINATION,
        "from",
        "source",
        "src",
        "origin",
        "departure",
        "depart",
        "pickup",
        "sender",
        "owner",
        "my",
        "current",
        "home",
        "new",
    }
)
_START = frozenset(
    {"start", "from", "begin", "since", "after", "earliest", "departure", "depart", "min", "in"}
)
_END = frozenset(
    {"end", "to", "until", "before", "latest", "return", "due", "out", "max", "finish", "deadline"}
)
_ENTITY_HEADS = frozenset(
    {"id", "ids", "uuid", "guid", "number", "no", "num", "ref", "reference", "key", "code"}
)
_NAME_HINTS: tuple[tuple[str, Kind], ...] = (
    ("file", _k("file", "document")),
    ("city", _k("place", "city")),
    ("country", _k("place", "country")),
    ("compan", _k("company", "name")),
    ("organi", _k("company", "name")),
    ("hotel", _k("item", "hotel")),
    ("restaurant", _k("item", "restaurant")),
    ("product", _k("item", "product")),
    ("event", _k("text", "title")),
    ("meeting", _k("text", "title")),
    ("playlist", _k("text", "title")),
    ("project", _k("text", "title")),
    ("team", _k("text", "title")),
    ("pet", _k("misc", "pet")),
)
_PERSON_WORDS = frozenset(
    {
        "user",
        "person",
        "customer",
        "employee",
        "contact",
        "patient",
        "author",
        "guest",
        "passenger",
        "recipient",
        "member",
        "student",
        "friend",
        "player",
        "owner",
        "client",
        "traveler",
        "attendee",
        "driver",
        "artist",
        "actor",
        "doctor",
        "sender",
    }
)
_FORMATS = {
    "email": _k("person", "email"),
    "idn-email": _k("person", "email"),
    "date": _k("date", "start"),
    "date-time": _k("date", "start"),
    "time": _k("date", "start"),
    "uri": _k("web", "url"),
    "url": _k("web", "url"),
    "iri": _k("web", "url"),
    "uuid": _k("id", "item"),
    "ipv4": _k("web", "ip"),
    "hostname": _k("web", "domain"),
    "binary": _k("file", "document"),
}
_FORMAT_FAMILIES = {
    "email": {"person.email"},
    "idn-email": {"person.email"},
    "date": {"date"},
    "date-time": {"date"},
    "time": {"date"},
    "uri": {"web", "file"},
    "url": {"web", "file"},
    "iri": {"web", "file"},
    "uuid": {"id"},
    "ipv4": {"web.ip"},
    "hostname": {"web.domain"},
    "binary": {"file"},
}
# Descriptions, read when the name alone says too little: the first pattern found wins.
_DESCRIPTION_HINTS: tuple[tuple[re.Pattern[str], Kind], ...] = tuple(
    (re.compile(pattern), kind)
    for pattern, kind in (
        (r"\be-?mail\b", _k("person", "email")),
        (r"\b(phone|telephone|mobile number)\b", _k("person", "phone")),
        (r"\bcountry code\b|\biso 3166", _k("place", "country_code")),
        (r"\b(zip|postal) code\b", _k("place", "postcode")),
        (r"\bairport\b|\biata\b", _k("place", "airport")),
        (r"\bcurrency\b", _k("money", "currency")),
        (r"\b(stock|ticker) symbol\b|\bticker\b", _k("item", "ticker")),
        (r"\b(url|link|website)\b", _k("web", "url")),
        (r"\bfile ?name\b|\bname of the file\b", _k("file", "document")),
        (r"\b(start|departure|check-in|begin)\w* date\b", _k("date", "start")),
        (r"\b(end|return|check-out)\w* date\b", _k("date", "end")),
        (r"\bdate\b", _k("date", "start")),
        (r"\bcity\b", _k("place", "city")),
        (r"\bcountry\b", _k("place", "country")),
        (r"\baddress\b", _k("place", "address")),
        (r"\blocation\b", _k("place", "location")),
        (r"\btime ?zone\b", _k("place", "timezone")),
        (r"\blanguage\b", _k("misc", "language")),
        (r"\b(company|organi[sz]ation)\b", _k("company", "name")),
        (r"\busername\b", _k("person", "username")),
        (
            r"\b(full name|name of the (user|person|customer|employee|patient|contact))\b",
            _k("person", "full_name"),
        ),
        (r"\bpassword\b", _k("misc", "password")),
        (r"\bsearch\b|\bquery\b", _k("text", "query")),
        (r"\bkeyword", _k("text", "keyword")),
        (r"\btitle\b", _k("text", "title")),
        (r"\bmessage\b", _k("text", "message")),
        (r"\b(amount|price|cost)\b", _k("money", "price")),
    )
)
_ID_IN_DESCRIPTION = re.compile(r"\b([a-z]+)[ _-]?id\b|\bid of the ([a-z]+)\b|\b([a-z]+) identifier\b")
_MONEY_HEADS = frozenset(
    {
        "price",
        "cost",
        "total",
        "balance",
        "salary",
        "fee",
        "budget",
        "charge",
        "fare",
        "subtotal",
        "tax",
        "tip",
    }
    | {"income", "revenue", "deposit", "withdrawal", "loan", "principal", "rent", "bill", "spend", "refund"}
)
_VERBS = frozenset(
    {"get", "fetch", "list", "create", "update", "delete", "find", "search", "add", "remove", "set", "check"}
    | {"book", "cancel", "send", "retrieve", "lookup", "look", "show", "view", "make", "post", "put", "patch"}
    | {"calculate", "compute", "by", "for", "new", "all", "details", "info", "api", "v1", "v2"}
)


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
    """
    words = tokens(name)
    found = _by_name(words, parent, topic, description, kind)
    if found is None and (not words or "".join(words) in _WEAK):
        found = _by_description(description.lower(), words)
    if fmt in _FORMATS and (found is None or not _fits_format(found, fmt)):
        found = _FORMATS[fmt]._replace(role=found.role if found else "")
        if found.family == "date":
            found = found._replace(field=_date_field(words))
    numeric = kind in ("integer", "number") and found is not None and found.family in _TEXT_ONLY
    # A number named like a moment is a duration or a count (``time`` in physics) unless it says
    # it is a timestamp; a number named like a text is not that text.
    if numeric and (found is None or found.family != "date" or not set(words) & _EPOCH):
        return None
    return found


# Families whose values are text: a number with such a name is something else.
_TEXT_ONLY = frozenset({"date", "text", "web", "file", "company"})
_EPOCH = frozenset({"timestamp", "epoch", "unix", "at"})
_SOCIAL = re.compile(r"social|post|tweet|share|media|follower")
_TRAVEL = re.compile(r"\b(flight|fly|trip|travel|train|bus|route|direction|journey|ride|drive|ship|cab|taxi)")
_OTHER_PEOPLE = frozenset(
    {"author", "artist", "actor", "actress", "scientist", "player", "composer", "director", "singer"}
    | {"painter", "inventor", "writer", "athlete", "musician", "president", "doctor", "celebrity"}
)
_VENUES = frozenset(
    {"museum", "park", "gallery", "library", "school", "university", "hospital", "stadium", "theater"}
    | {"theatre", "zoo", "station", "mall", "gym", "clinic", "church", "venue", "store", "shop", "cafe"}
)
_WORK_TITLES = frozenset(
    {"game", "book", "movie", "film", "song", "album", "show", "series", "novel", "track"}
)


_WEAK = frozenset(
    {"name", "id", "value", "input", "data", "code", "key", "type", "from", "to", "source", "target"}
)


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
    if joined == "platform" and _SOCIAL.search(f"{description} {' '.join(tokens(topic))}".lower()):
        return _k("misc", "social")
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


# Names that mean a moment unless the schema asks for a number (``day: integer``, ``start: 0``).
_AS_TEXT = {"day": _k("date", "start"), "start": _k("date", "start"), "end": _k("date", "end")}
_PEOPLE = frozenset(
    {
        "recipient",
        "receiver",
        "sender",
        "assignee",
        "contact",
        "to",
        "from",
        "invitee",
        "attendee",
        "participant",
    }
)
_PLACE_ROLES = frozenset(
    {"source", "origin", "from", "to", "destination", "departure", "arrival", "start", "end"}
)


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
    head, modifier = core[-1], core[:-1]
    if head in ("date", "time", "datetime", "at", "on", "day") and (modifier or head != "day"):
        return Kind("date", _date_field(words))
    if head in _ENTITY_HEADS and modifier:
        return _entity_id(modifier, words)
    if head in ("id", "ids", "uuid") and not modifier:
        return Kind("id", _entity_of(parent, topic, description))
    if head == "name":
        return _name_of(modifier or tokens(parent), topic, description, words)
    if head == "title" and modifier and modifier[-1] in _WORK_TITLES:
        return _k("text", "work")
    if head in ("list", "array", "collection") and modifier:
        return _by_name(modifier, parent, topic, description, kind)
    if head in _MONEY_HEADS or (modifier and modifier[-1] in _MONEY_HEADS):
        return Kind("money", "price")
    if head in ("email", "phone", "city", "country", "address", "url", "currency") and modifier:
        found = _EXACT.get(head)
        return found._replace(role=_role(words, found.family)) if found else None
    if head in ("count", "number", "limit", "size") or core[0] in ("num", "number", "max", "min", "total"):
        return _k("number", "count")
    return None


def _date_field(words: tuple[str, ...]) -> str:
    present = set(words)
    if present & {"birth", "birthday", "dob", "born"}:
        return "birth"
    if present & {"created", "updated", "modified", "last", "published", "posted"}:
        return "past"
    if present & _END:
        return "end"
    return "start"


def _entity_id(modifier: tuple[str, ...], words: tuple[str, ...]) -> Kind:
    joined = "".join(modifier)
    if joined in ("phone", "mobile", "telephone", "contact"):
        return Kind("person", "phone", _role(words, "person"))
    if joined in ("card", "creditcard", "bank", "routing", "iban"):
        return Kind("account", "card" if "card" in joined else "number")
    if joined in ("zip", "postal", "post", "pin"):
        return _k("place", "postcode")
    if joined in ("country", "currency", "language", "airport", "color", "colour", "lang"):
        return _EXACT[joined + "code"] if joined + "code" in _EXACT else _EXACT[joined]
    if joined == "flight":
        return _k("item", "flight")
    if joined in ("promo", "discount", "coupon", "voucher", "verification", "otp", "auth", "confirmation"):
        return Kind("misc", "code")
    if joined in ("user", "customer", "member", "client"):
        return Kind("id", "user", _role(words, "person"))
    return Kind("id", _singular(modifier[-1]), _role(words, "person"))


def _entity_of(parent: str, topic: str, description: str) -> str:
    if parent:
        return _singular(tokens(parent)[-1]) if tokens(parent) else "item"
    match = _ID_IN_DESCRIPTION.search(description.lower())
    if match:
        word = next(g for g in match.groups() if g)
        if word not in ("the", "unique", "an", "a", "its", "this"):
            return _singular(word)
    nouns = [w for w in tokens(topic) if w not in _VERBS and not w.isdigit()]
    return _singular(nouns[0]) if nouns else "item"


def _name_of(
    modifier: tuple[str, ...], topic: str, description: str, words: tuple[str, ...] = ()
) -> Kind | None:
    joined = "".join(modifier)
    if modifier and modifier[-1] in _WORK_TITLES | {"music"}:
        return _k("text", "work")
    if modifier and modifier[-1] in _VENUES:
        return Kind("item", f"venue:{modifier[-1]}")
    if joined in _EXACT and _EXACT[joined].family != "number":
        found = _EXACT[joined]
        return found._replace(field="full_name") if found.family == "person" else found
    singular = {_singular(w) for w in modifier}
    if singular & _OTHER_PEOPLE:
        return Kind("person", "full_name", "other")
    if singular & _PERSON_WORDS:
        return Kind("person", "full_name", _role(words or modifier, "person"))
    text = f"{joined} {description.lower()} {' '.join(tokens(topic))}"
    for hint, kind in _NAME_HINTS:
        if hint in text:
            return kind
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
        return Kind("id", _singular(next(g for g in match.groups() if g)))
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


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("ses") or word.endswith("xes"):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word
