"""The words :mod:`~fms_dgt.core.tools._fake_kinds` reads names by: whole names, roles, heads.

Tables only (and :class:`Kind`, what they map to); the reading itself is in ``_fake_kinds``.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

__all__ = ["EXACT", "REMEMBERED", "Kind", "k", "remembers", "tokens"]


class Kind(NamedTuple):
    """What a value stands for."""

    family: str
    field: str
    role: str = ""

    @property
    def key(self) -> str:
        """``family.field@role``: one entity value of a record."""
        return _key(self)

    @property
    def base(self) -> str:
        """The field without what it is about: ``title`` of ``title:video``, ``venue`` of
        ``venue:museum``."""
        return self.field.partition(":")[0]

    @property
    def subject(self) -> str:
        """What the field is about: ``video`` of ``title:video``; ``""`` when it does not say."""
        return self.field.partition(":")[2]


@functools.lru_cache(maxsize=8192)
def _key(kind: Kind) -> str:
    return f"{kind.family}.{kind.field}@{kind.role}"


#: Families whose values are entities of the record: the same value recurs wherever it is asked
#: for (other families, such as a message or a count, are drawn afresh each time).
REMEMBERED = frozenset({"person", "place", "date", "id", "account", "company", "file", "money", "item"})
# Fields of those families that are drawn afresh all the same: a price is not an amount paid.
FRESH = frozenset({"money.price", "file.extension", "file.mime", "person.job"})


@functools.lru_cache(maxsize=8192)
def remembers(kind: Kind) -> bool:
    """Whether values of ``kind`` are entities of the record (the same value wherever asked)."""
    return kind.family in REMEMBERED and f"{kind.family}.{kind.field}" not in FRESH


WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


@functools.lru_cache(maxsize=4096)
def tokens(name: str) -> tuple[str, ...]:
    """Lower-case words of a name in any case style: ``checkInDate`` -> ``(check, in, date)``."""
    return tuple(w.lower() for w in WORDS.findall(name))


def k(family: str, field: str) -> Kind:
    """``Kind(family, field)`` with no role."""
    return Kind(family, field)


#: Names (words joined) of an argument that says how exactly to compute: how many places.
SETTINGS = ("precision", "accuracy", "decimals", "decimalplaces", "ndigits", "roundto")

# Whole names (words joined) that say everything at once.
EXACT: dict[str, Kind] = {
    **dict.fromkeys(("firstname", "fname", "givenname", "forename"), k("person", "first_name")),
    **dict.fromkeys(("lastname", "lname", "surname", "familyname"), k("person", "last_name")),
    **dict.fromkeys(("fullname", "personname", "contactname", "customername"), k("person", "full_name")),
    **dict.fromkeys(
        ("username", "login", "handle", "screenname", "nickname", "userhandle", "unixname"),
        k("person", "username"),
    ),
    **dict.fromkeys(("email", "emailaddress", "mail", "emailid", "useremail"), k("person", "email")),
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
        k("person", "phone"),
    ),
    **dict.fromkeys(("gender", "sex"), k("person", "gender")),
    **dict.fromkeys(("jobtitle", "occupation", "profession", "position"), k("person", "job")),
    **dict.fromkeys(
        ("city", "town", "cityname", "municipality", "destination", "origin"), k("place", "city")
    ),
    **dict.fromkeys(("country", "countryname", "nation"), k("place", "country")),
    **dict.fromkeys(("countrycode", "countryiso", "iso"), k("place", "country_code")),
    **dict.fromkeys(
        (
            "state",
            "province",
            "region",
            "county",
            "statename",
            "provinceorstate",
            "stateorprovince",
            "district",
        ),
        k("place", "region"),
    ),
    **dict.fromkeys(
        ("zip", "zipcode", "postalcode", "postcode", "postal", "pincode"), k("place", "postcode")
    ),
    **dict.fromkeys(
        ("street", "streetaddress", "addressline", "addressline1", "line1", "address1", "street1"),
        k("place", "street"),
    ),
    # The second line of an address: a flat or suite, not the whole address again.
    **dict.fromkeys(("address2", "addressline2", "line2", "street2", "apartment", "apt"), k("place", "unit")),
    **dict.fromkeys(("address", "fulladdress", "homeaddress", "mailingaddress"), k("place", "address")),
    **dict.fromkeys(("lat", "latitude"), k("place", "latitude")),
    **dict.fromkeys(("lon", "lng", "long", "longitude"), k("place", "longitude")),
    **dict.fromkeys(("timezone", "tz", "tzname", "tzid", "timezoneid"), k("place", "timezone")),
    **dict.fromkeys(("location", "place", "locationname", "where", "near", "loc"), k("place", "location")),
    **dict.fromkeys(("airport", "airportcode", "iata", "iatacode"), k("place", "airport")),
    **dict.fromkeys(
        ("dialcode", "callingcode", "phonecode", "countrycallingcode", "diallingcode", "phoneprefix"),
        k("place", "calling_code"),
    ),
    **dict.fromkeys(("checkin", "checkindate", "arrivaldate"), k("date", "start")),
    **dict.fromkeys(("checkout", "checkoutdate"), k("date", "end")),
    **dict.fromkeys(("birthday", "birthdate", "dob", "dateofbirth"), k("date", "birth")),
    **dict.fromkeys(
        ("createdat", "updatedat", "timestamp", "created", "modified", "lastrefreshed", "refreshedat"),
        k("date", "past"),
    ),
    **dict.fromkeys(("cron", "cronexpression", "crontab", "cronschedule"), k("misc", "cron")),
    **dict.fromkeys(("useragent", "ua", "browseruseragent"), k("misc", "user_agent")),
    **dict.fromkeys(("exchangerate", "conversionrate", "fxrate"), k("number", "exchange_rate")),
    **dict.fromkeys(("licence", "license", "licences", "licenses", "licencelabel"), k("misc", "licence")),
    **dict.fromkeys(("currency", "currencycode", "ccy", "basecurrency"), k("money", "currency")),
    **dict.fromkeys(("amount", "payment", "paymentamount", "transferamount"), k("money", "amount")),
    **dict.fromkeys(
        ("cardnumber", "creditcard", "creditcardnumber", "ccnumber", "card"), k("account", "card")
    ),
    **dict.fromkeys(("cvv", "cvc", "securitycode"), k("account", "cvv")),
    **dict.fromkeys(("expiry", "expirydate", "expirationdate", "expiration"), k("account", "expiry")),
    **dict.fromkeys(("iban", "accountnumber", "account", "bankaccount"), k("account", "number")),
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
            "publisher",
        ),
        k("company", "name"),
    ),
    **dict.fromkeys(
        ("url", "link", "website", "homepage", "uri", "href", "webhook", "callbackurl"), k("web", "url")
    ),
    **dict.fromkeys(
        ("imageurl", "photourl", "avatar", "avatarurl", "thumbnail", "logo", "favicon", "icon"),
        k("web", "image_url"),
    ),
    **dict.fromkeys(("domain", "hostname", "host", "domainname"), k("web", "domain")),
    **dict.fromkeys(("ip", "ipaddress", "ipv4"), k("web", "ip")),
    **dict.fromkeys(("file", "filename", "attachment", "document", "doc"), k("file", "document")),
    **dict.fromkeys(
        (
            "image",
            "img",
            "imagefile",
            "thumbnailfile",
            "previewfile",
            "coverfile",
            "posterfile",
            "bannerfile",
        ),
        k("file", "image"),
    ),
    **dict.fromkeys(("photo", "picture", "photograph", "selfie"), k("file", "photo")),
    **dict.fromkeys(("audio", "audiofile", "recording"), k("file", "audio")),
    **dict.fromkeys(("video", "videofile"), k("file", "video")),
    **dict.fromkeys(("path", "filepath", "fullpath"), k("file", "path")),
    **dict.fromkeys(
        ("directory", "dir", "folder", "foldername", "directoryname", "dirname"), k("file", "folder")
    ),
    **dict.fromkeys(("extension", "fileextension", "ext"), k("file", "extension")),
    **dict.fromkeys(("mimetype", "contenttype", "mediatype", "mime"), k("file", "mime")),
    **dict.fromkeys(
        ("title", "subject", "headline", "heading", "eventname", "eventtitle"), k("text", "title")
    ),
    **dict.fromkeys(
        ("query", "q", "search", "searchterm", "searchquery", "searchtext", "prompt"), k("text", "query")
    ),
    **dict.fromkeys(("keyword", "keywords", "terms", "topic", "phrase"), k("text", "keyword")),
    **dict.fromkeys(
        ("message", "msg", "text", "body", "content", "comment", "note", "notes", "reply", "post", "tweet"),
        k("text", "message"),
    ),
    **dict.fromkeys(("review", "feedback", "testimonial"), k("text", "review")),
    **dict.fromkeys(("reason", "cause", "purpose"), k("text", "reason")),
    **dict.fromkeys(("resolution", "resolutionnote", "resolutionnotes", "solution"), k("text", "resolution")),
    **dict.fromkeys(
        ("description", "desc", "summary", "details", "bio", "biography", "about", "overview", "caption"),
        k("text", "description"),
    ),
    **dict.fromkeys(("tag", "tags", "label", "labels", "hashtag"), k("text", "tag")),
    **dict.fromkeys(("category", "categories"), k("text", "category")),
    **dict.fromkeys(("genre", "genres"), k("text", "genre")),
    **dict.fromkeys(("hotel", "hotelname"), k("item", "hotel")),
    **dict.fromkeys(("restaurant", "restaurantname"), k("item", "restaurant")),
    **dict.fromkeys(("product", "productname", "item", "itemname"), k("item", "product")),
    **dict.fromkeys(("flight", "flightnumber", "flightno"), k("item", "flight")),
    **dict.fromkeys(
        ("ticker", "symbol", "stock", "stocksymbol", "tickersymbol", "watchlist"), k("item", "ticker")
    ),
    **dict.fromkeys(("airline", "carrier"), k("misc", "airline")),
    **dict.fromkeys(("color", "colour", "colorname"), k("misc", "colour")),
    **dict.fromkeys(("hex", "hexcolor", "colorcode", "colourcode", "hexcode"), k("misc", "colour_hex")),
    **dict.fromkeys(("language", "lang", "languagename"), k("misc", "language")),
    **dict.fromkeys(("languagecode", "langcode", "locale"), k("misc", "language_code")),
    **dict.fromkeys(("password", "passcode", "passphrase"), k("misc", "password")),
    **dict.fromkeys(
        (
            *("token", "apikey", "accesstoken", "secret", "apitoken", "authtoken", "streamkey", "secretkey"),
            *("accesskey", "privatekey", "signingkey", "webhooksecret"),
        ),
        k("misc", "token"),
    ),
    **dict.fromkeys(("weekday", "dayofweek", "dayname"), k("misc", "weekday")),
    **dict.fromkeys(("orderby", "sortby", "sort", "sortfield", "sortkey", "ordering"), k("misc", "sort")),
    **dict.fromkeys(("isocode", "isocountrycode", "countryisocode"), k("place", "country_code")),
    **dict.fromkeys(
        ("game", "movie", "film", "song", "album", "novel", "gametitle", "book", "booktitle", "bookname"),
        k("text", "work"),
    ),
    **dict.fromkeys(("ingredient", "ingredients"), k("misc", "ingredient")),
    **dict.fromkeys(("symptom",), k("misc", "symptom")),
    **dict.fromkeys(("mood",), k("misc", "mood")),
    **dict.fromkeys(("roomtype",), k("misc", "room_type")),
    **dict.fromkeys(("nationality",), k("misc", "nationality")),
    **dict.fromkeys(("subreddit",), k("misc", "subreddit")),
    **dict.fromkeys(("formtype",), k("misc", "form_type")),
    **dict.fromkeys(("news", "headlines"), k("text", "title")),
    **dict.fromkeys(("excerpt", "highlight", "snippet", "answer", "quote"), k("text", "message")),
    **dict.fromkeys(("event", "events", "upcomingevent"), k("text", "title")),
    **dict.fromkeys(("badge", "badges"), k("misc", "badge")),
    **dict.fromkeys(("ordertype",), k("misc", "order_type")),
    **dict.fromkeys(("owner", "owners", "ownername"), k("person", "username")),
    **dict.fromkeys(("trail", "trails", "hikingtrail"), k("misc", "trail")),
    **dict.fromkeys(("car", "cars", "vehicle", "carmodel", "vehiclemodel"), k("misc", "car")),
    **dict.fromkeys(("question", "questiontext"), k("text", "query")),
    **dict.fromkeys(("cik", "cikcode", "ciknumber"), k("misc", "cik")),
    **dict.fromkeys(("height",), k("number", "height")),
    **dict.fromkeys(("weight",), k("number", "weight")),
    **dict.fromkeys(("population", "minpopulation", "maxpopulation"), k("number", "population")),
    **dict.fromkeys(("version", "apiversion", "appversion"), k("misc", "version")),
    **dict.fromkeys(("cursor", "maxcursor", "nextcursor", "pagetoken", "nextpagetoken"), k("misc", "token")),
    **dict.fromkeys(("localtime", "localdatetime"), k("date", "start")),
    **dict.fromkeys(("hash", "blockhash", "txhash", "transactionhash", "checksum"), k("misc", "token")),
    **dict.fromkeys(
        ("unit", "unitin", "unitout", "fromunit", "tounit", "sourceunit", "targetunit"),
        k("misc", "unit"),
    ),
    **dict.fromkeys(("sortorder", "sortdirection", "sortdir", "orderdirection"), k("misc", "direction")),
    **dict.fromkeys(("transcript", "transcription", "translation", "translatedtext"), k("text", "message")),
    **dict.fromkeys(("status",), k("misc", "status")),
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
        k("number", "count"),
    ),
    **dict.fromkeys(("quantity", "qty"), k("number", "quantity")),
    **dict.fromkeys(("word", "term", "vocabulary"), k("misc", "word")),
    **dict.fromkeys(("string", "sentence", "inputstring", "inputtext", "str"), k("text", "message")),
    **dict.fromkeys(("cuisine", "cuisinetype", "foodtype"), k("misc", "cuisine")),
    **dict.fromkeys(("activity", "exercise", "sport", "workout"), k("misc", "activity")),
    **dict.fromkeys(("diet", "dietary", "dietaryrestriction", "dietaryrestrictions"), k("misc", "diet")),
    **dict.fromkeys(
        ("guests", "adults", "people", "persons", "passengers", "travelers", "travellers", "seats", "rooms"),
        k("number", "party"),
    ),
    **dict.fromkeys(("children", "kids", "infants"), k("number", "children")),
    **dict.fromkeys(("nights", "days", "numdays", "numberofdays", "numnights"), k("number", "days")),
    **dict.fromkeys(("page", "pagenumber", "pageno"), k("number", "page")),
    **dict.fromkeys(("offset", "skip"), k("number", "offset")),
    **dict.fromkeys(("pet", "petname", "dog", "cat"), k("misc", "pet")),
    **dict.fromkeys(("age",), k("number", "age")),
    **dict.fromkeys(("bedrooms", "bathrooms", "floors", "beds"), k("number", "rooms")),
    **dict.fromkeys(("years", "periodinyears", "termyears", "loanterm", "term"), k("number", "years")),
    **dict.fromkeys(("platform", "os", "device"), k("misc", "platform")),
    **dict.fromkeys(("rating", "stars", "score", "minrating"), k("number", "rating")),
    **dict.fromkeys(("priority", "prioritylevel", "severity", "urgency"), k("number", "priority")),
    # How exactly to compute: a square root "with a precision of 46" was no request a person makes.
    **dict.fromkeys(SETTINGS, k("number", "places")),
    **dict.fromkeys(("percent", "percentage", "discount"), k("number", "percent")),
    **dict.fromkeys(
        ("temperature", "temp", "feelslike", "tempmin", "tempmax", "mintemp", "maxtemp", "celsius"),
        k("number", "temperature"),
    ),
    **dict.fromkeys(("windspeed", "wind", "windgust", "gust"), k("number", "wind")),
    **dict.fromkeys(("humidity", "cloudcover", "precipitationprobability"), k("number", "humidity")),
    **dict.fromkeys(("minutes", "durationminutes", "durationmins"), k("number", "minutes")),
    **dict.fromkeys(("hours", "durationhours"), k("number", "hours")),
    **dict.fromkeys(("distance", "radius", "km", "miles"), k("number", "distance")),
    **dict.fromkeys(("year",), k("number", "year")),
    **dict.fromkeys(("month",), k("number", "month")),
    **dict.fromkeys(("day",), k("number", "day")),
    **dict.fromkeys(("hour",), k("number", "hour")),
    **dict.fromkeys(("minute",), k("number", "minute")),
}

#: Role words: which of two entities of one family a name means.
OTHER_PERSON = frozenset(
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
DESTINATION = frozenset(
    {"to", "destination", "dest", "arrival", "dropoff", "target", "arrive", "b", "second"}
)
ROLE_WORDS = frozenset(
    {
        *OTHER_PERSON,
        *DESTINATION,
        "a",  # cityA and cityB: the first and the second of two
        "first",
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
START = frozenset(
    {"start", "from", "begin", "since", "after", "earliest", "departure", "depart", "min", "in", "gte", "gt"}
)
END = frozenset(
    {
        "end",
        "to",
        "until",
        "before",
        "latest",
        "return",
        "due",
        "out",
        "max",
        "finish",
        "deadline",
        "lte",
        "lt",
    }
)
ENTITY_HEADS = frozenset(
    {"id", "ids", "uuid", "guid", "number", "no", "num", "ref", "reference", "key", "code"}
)
NAME_HINTS: tuple[tuple[str, Kind], ...] = (
    ("file", k("file", "document")),
    ("city", k("place", "city")),
    ("country", k("place", "country")),
    ("location", k("place", "city")),
    ("compan", k("company", "name")),
    ("organi", k("company", "name")),
    ("business", k("company", "name")),  # NESTFUL's LocalBusinessData found a business "Team lunch"
    ("hotel", k("item", "hotel")),
    ("restaurant", k("item", "restaurant")),
    ("product", k("item", "product")),
    ("event", k("text", "title")),
    ("meeting", k("text", "title")),
    ("playlist", k("text", "title")),
    ("channel", k("text", "title")),  # before "video": a video channel is no film
    ("video", k("text", "work")),
    ("project", k("text", "title")),
    ("team", k("text", "title")),
    ("pet", k("misc", "pet")),
    ("device", k("misc", "device")),
    ("scene", k("misc", "scene")),
)
PERSON_WORDS = frozenset(
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
FORMATS = {
    "email": k("person", "email"),
    "idn-email": k("person", "email"),
    "date": k("date", "start"),
    "date-time": k("date", "start"),
    "datetime": k("date", "start"),  # Airflow's spelling
    "time": k("date", "start"),
    "uri": k("web", "url"),
    "url": k("web", "url"),
    "iri": k("web", "url"),
    "uuid": k("id", "item"),
    "ipv4": k("web", "ip"),
    "hostname": k("web", "domain"),
    "binary": k("file", "document"),
}
FORMAT_FAMILIES = {
    "email": {"person.email"},
    "idn-email": {"person.email"},
    "date": {"date"},
    "date-time": {"date"},
    "datetime": {"date"},
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
DESCRIPTION_HINTS: tuple[tuple[re.Pattern[str], Kind], ...] = tuple(
    (re.compile(pattern), kind)
    for pattern, kind in (
        (r"\be-?mail\b", k("person", "email")),
        (r"\b(phone|telephone|mobile number)\b", k("person", "phone")),
        (r"\bcountry code\b|\biso 3166", k("place", "country_code")),
        (r"\b(zip|postal) code\b", k("place", "postcode")),
        (r"\bairport\b|\biata\b", k("place", "airport")),
        (
            r"\bamount of money\b",
            k("money", "amount"),
        ),  # Up's value: "The amount of money ... in the currency"
        (r"\bcurrency\b", k("money", "currency")),
        (r"\b(stock|ticker) symbol\b|\bticker\b", k("item", "ticker")),
        (r"\b(url|link|website)\b", k("web", "url")),
        (r"\b(?:absolute|relative|full|file) path\b|\bpath (?:to|of) the file\b", k("file", "path")),
        (r"\bfile ?name\b|\bname of the file\b", k("file", "document")),
        (r"\b(start|departure|check-in|begin)\w* date\b", k("date", "start")),
        (r"\b(end|return|check-out)\w* date\b", k("date", "end")),
        (r"\bdate\b", k("date", "start")),
        (r"\bcity\b", k("place", "city")),
        (r"\bcountry\b", k("place", "country")),
        (r"\baddress\b", k("place", "address")),
        (r"\blocation\b", k("place", "location")),
        (r"\btime ?zone\b", k("place", "timezone")),
        (r"\blanguage\b", k("misc", "language")),
        (r"\b(company|organi[sz]ation)\b", k("company", "name")),
        (r"\busername\b", k("person", "username")),
        (
            r"\b(full name|name of the (user|person|customer|employee|patient|contact))\b",
            k("person", "full_name"),
        ),
        (r"\bpassword\b", k("misc", "password")),
        (r"\bsearch\b|\bquery\b", k("text", "query")),
        (r"\bkeyword", k("text", "keyword")),
        (r"\btitle\b", k("text", "title")),
        (r"\bmessage\b", k("text", "message")),
        (r"\b(amount|price|cost)\b", k("money", "price")),
        (r"\btext\b|\btranscri", k("text", "message")),
    )
)
ID_IN_DESCRIPTION = re.compile(r"\b([a-z]+)[ _-]?id\b|\bid of the ([a-z]+)\b|\b([a-z]+) identifier\b")
MONEY_HEADS = frozenset(
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
VERBS = frozenset(
    {"get", "fetch", "list", "create", "update", "delete", "find", "search", "add", "remove", "set", "check"}
    | {"book", "cancel", "send", "retrieve", "lookup", "look", "show", "view", "make", "post", "put", "patch"}
    | {"calculate", "compute", "by", "for", "new", "all", "details", "info", "api", "v1", "v2"}
)


# Families whose values are text: a number with such a name is something else.
TEXT_ONLY = frozenset({"date", "text", "web", "file", "company"})
EPOCH = frozenset({"timestamp", "epoch", "unix", "at"})
SOCIAL = re.compile(r"social|post|tweet|share|media|follower")
TRAVEL = re.compile(r"\b(flight|fly|trip|travel|train|bus|route|direction|journey|ride|drive|ship|cab|taxi)")
OTHER_PEOPLE = frozenset(
    {"author", "artist", "actor", "actress", "scientist", "player", "composer", "director", "singer"}
    | {"painter", "inventor", "writer", "athlete", "musician", "president", "doctor", "celebrity"}
    | {"member", "teammate", "colleague", "friend"}
)
VENUES = frozenset(
    {"museum", "park", "gallery", "library", "school", "university", "hospital", "stadium", "theater"}
    | {"theatre", "zoo", "station", "mall", "gym", "clinic", "church", "venue", "store", "shop", "cafe"}
)
WORK_TITLES = frozenset(
    {"game", "book", "movie", "film", "song", "album", "show", "series", "novel", "track"}
)
#: People a social network lists by their handles (tagged_users, top_likers, tweet_retweeters).
SOCIAL_USERS = frozenset(
    {"user", "follower", "following", "liker", "retweeter", "subscriber", "fan", "viewer", "mention"}
)
#: Last words of names that say the sort of a thing, not the thing (``accountType``, ``file_format``).
SORT_WORDS = frozenset({"type", "kind", "mode", "variant", "format"})
#: Heads that say a list picks things, not what they are (movie_recommendations: movies).
PICKS = frozenset({"recommendation", "suggestion", "pick", "favorite", "favourite", "highlight"})


WEAK = frozenset(
    {"name", "id", "value", "input", "data", "code", "key", "type", "from", "to", "source", "target"}
)


# Names that mean a moment unless the schema asks for a number (``day: integer``, ``start: 0``).
AS_TEXT = {"day": k("date", "start"), "start": k("date", "start"), "end": k("date", "end")}
PEOPLE = frozenset(
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
PLACE_ROLES = frozenset(
    {"source", "origin", "from", "to", "destination", "departure", "arrival", "start", "end"}
)
