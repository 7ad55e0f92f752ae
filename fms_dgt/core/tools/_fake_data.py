"""The vocabulary behind :mod:`fms_dgt.core.tools.fakes`: real places and Faker's locale data.

Two kinds of tables:

* our own, small and curated: real cities with their real country, codes, coordinates, time zone,
  airport, calling code, currency and postcode shape (Faker's own cities are invented, and its
  coordinates table names places such as a Madrid in Colombia), plus short lists of search queries,
  messages, titles, products and the like that read as a person would write them;
* Faker's default-locale (``en_US``) data: first and last names with their frequencies, street
  suffixes, company suffixes, job titles, colour names, currency names. They are read once, on first
  use, from Faker's provider classes, so ``import fms_dgt`` does not import Faker.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import random
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["CITIES", "Place", "Weighted", "faker_tables", "private_faker"]


@dataclass(slots=True, frozen=True, kw_only=True)
class Place:
    """A real city and what goes with it."""

    city: str
    region: str
    country: str
    code: str  # ISO 3166-1 alpha-2
    code3: str  # ISO 3166-1 alpha-3
    latitude: float
    longitude: float
    timezone: str
    airport: str  # IATA code of its main airport
    calling: str  # international calling code, without "+"
    currency: str  # ISO 4217
    postcode: str  # shape: '#' a digit, '?' an upper-case letter


def _places(rows: str) -> tuple[Place, ...]:
    out = []
    for line in rows.strip().splitlines():
        city, region, country, code, code3, lat, lon, tz, airport, calling, currency, postcode = (
            part.strip() for part in line.split("|")
        )
        out.append(
            Place(
                city=city,
                region=region,
                country=country,
                code=code,
                code3=code3,
                latitude=float(lat),
                longitude=float(lon),
                timezone=tz,
                airport=airport,
                calling=calling,
                currency=currency,
                postcode=postcode,
            )
        )
    return tuple(out)


CITIES = _places(
    """
London|England|United Kingdom|GB|GBR|51.5074|-0.1278|Europe/London|LHR|44|GBP|SW# #??
Manchester|England|United Kingdom|GB|GBR|53.4808|-2.2426|Europe/London|MAN|44|GBP|M# #??
Paris|Ile-de-France|France|FR|FRA|48.8566|2.3522|Europe/Paris|CDG|33|EUR|750##
Lyon|Auvergne-Rhone-Alpes|France|FR|FRA|45.764|4.8357|Europe/Paris|LYS|33|EUR|6900#
Berlin|Berlin|Germany|DE|DEU|52.52|13.405|Europe/Berlin|BER|49|EUR|10###
Munich|Bavaria|Germany|DE|DEU|48.1351|11.582|Europe/Berlin|MUC|49|EUR|80###
Madrid|Community of Madrid|Spain|ES|ESP|40.4168|-3.7038|Europe/Madrid|MAD|34|EUR|280##
Barcelona|Catalonia|Spain|ES|ESP|41.3874|2.1686|Europe/Madrid|BCN|34|EUR|080##
Lisbon|Lisbon|Portugal|PT|PRT|38.7223|-9.1393|Europe/Lisbon|LIS|351|EUR|1###-###
Porto|Porto|Portugal|PT|PRT|41.1579|-8.6291|Europe/Lisbon|OPO|351|EUR|4###-###
Rome|Lazio|Italy|IT|ITA|41.9028|12.4964|Europe/Rome|FCO|39|EUR|001##
Milan|Lombardy|Italy|IT|ITA|45.4642|9.19|Europe/Rome|MXP|39|EUR|201##
Amsterdam|North Holland|Netherlands|NL|NLD|52.3676|4.9041|Europe/Amsterdam|AMS|31|EUR|10## ??
Dublin|Leinster|Ireland|IE|IRL|53.3498|-6.2603|Europe/Dublin|DUB|353|EUR|D0# ?###
Vienna|Vienna|Austria|AT|AUT|48.2082|16.3738|Europe/Vienna|VIE|43|EUR|1###
Stockholm|Stockholm County|Sweden|SE|SWE|59.3293|18.0686|Europe/Stockholm|ARN|46|SEK|1## ##
Oslo|Oslo|Norway|NO|NOR|59.9139|10.7522|Europe/Oslo|OSL|47|NOK|0###
Copenhagen|Capital Region|Denmark|DK|DNK|55.6761|12.5683|Europe/Copenhagen|CPH|45|DKK|1###
Helsinki|Uusimaa|Finland|FI|FIN|60.1699|24.9384|Europe/Helsinki|HEL|358|EUR|00###
Warsaw|Masovia|Poland|PL|POL|52.2297|21.0122|Europe/Warsaw|WAW|48|PLN|00-###
Prague|Prague|Czech Republic|CZ|CZE|50.0755|14.4378|Europe/Prague|PRG|420|CZK|1## 00
Zurich|Zurich|Switzerland|CH|CHE|47.3769|8.5417|Europe/Zurich|ZRH|41|CHF|80##
Athens|Attica|Greece|GR|GRC|37.9838|23.7275|Europe/Athens|ATH|30|EUR|10# ##
Istanbul|Istanbul|Turkey|TR|TUR|41.0082|28.9784|Europe/Istanbul|IST|90|TRY|34###
Reykjavik|Capital Region|Iceland|IS|ISL|64.1466|-21.9426|Atlantic/Reykjavik|KEF|354|ISK|1##
New York|New York|United States|US|USA|40.7128|-74.006|America/New_York|JFK|1|USD|100##
Los Angeles|California|United States|US|USA|34.0522|-118.2437|America/Los_Angeles|LAX|1|USD|900##
Chicago|Illinois|United States|US|USA|41.8781|-87.6298|America/Chicago|ORD|1|USD|606##
San Francisco|California|United States|US|USA|37.7749|-122.4194|America/Los_Angeles|SFO|1|USD|941##
Seattle|Washington|United States|US|USA|47.6062|-122.3321|America/Los_Angeles|SEA|1|USD|981##
Boston|Massachusetts|United States|US|USA|42.3601|-71.0589|America/New_York|BOS|1|USD|021##
Austin|Texas|United States|US|USA|30.2672|-97.7431|America/Chicago|AUS|1|USD|787##
Miami|Florida|United States|US|USA|25.7617|-80.1918|America/New_York|MIA|1|USD|331##
Denver|Colorado|United States|US|USA|39.7392|-104.9903|America/Denver|DEN|1|USD|802##
Toronto|Ontario|Canada|CA|CAN|43.6532|-79.3832|America/Toronto|YYZ|1|CAD|M#? #?#
Vancouver|British Columbia|Canada|CA|CAN|49.2827|-123.1207|America/Vancouver|YVR|1|CAD|V#? #?#
Montreal|Quebec|Canada|CA|CAN|45.5019|-73.5674|America/Toronto|YUL|1|CAD|H#? #?#
Mexico City|Mexico City|Mexico|MX|MEX|19.4326|-99.1332|America/Mexico_City|MEX|52|MXN|06###
Sao Paulo|Sao Paulo|Brazil|BR|BRA|-23.5505|-46.6333|America/Sao_Paulo|GRU|55|BRL|01###-###
Rio de Janeiro|Rio de Janeiro|Brazil|BR|BRA|-22.9068|-43.1729|America/Sao_Paulo|GIG|55|BRL|20###-###
Buenos Aires|Buenos Aires|Argentina|AR|ARG|-34.6037|-58.3816|America/Buenos_Aires|EZE|54|ARS|C1###???
Santiago|Santiago Metropolitan|Chile|CL|CHL|-33.4489|-70.6693|America/Santiago|SCL|56|CLP|83#####
Lima|Lima|Peru|PE|PER|-12.0464|-77.0428|America/Lima|LIM|51|PEN|150##
Bogota|Bogota|Colombia|CO|COL|4.711|-74.0721|America/Bogota|BOG|57|COP|110###
Tokyo|Tokyo|Japan|JP|JPN|35.6762|139.6503|Asia/Tokyo|HND|81|JPY|1##-####
Osaka|Osaka|Japan|JP|JPN|34.6937|135.5023|Asia/Tokyo|KIX|81|JPY|5##-####
Seoul|Seoul|South Korea|KR|KOR|37.5665|126.978|Asia/Seoul|ICN|82|KRW|0####
Beijing|Beijing|China|CN|CHN|39.9042|116.4074|Asia/Shanghai|PEK|86|CNY|100###
Shanghai|Shanghai|China|CN|CHN|31.2304|121.4737|Asia/Shanghai|PVG|86|CNY|200###
Singapore|Singapore|Singapore|SG|SGP|1.3521|103.8198|Asia/Singapore|SIN|65|SGD|######
Bangkok|Bangkok|Thailand|TH|THA|13.7563|100.5018|Asia/Bangkok|BKK|66|THB|10###
Mumbai|Maharashtra|India|IN|IND|19.076|72.8777|Asia/Kolkata|BOM|91|INR|400###
Delhi|Delhi|India|IN|IND|28.7041|77.1025|Asia/Kolkata|DEL|91|INR|110###
Bengaluru|Karnataka|India|IN|IND|12.9716|77.5946|Asia/Kolkata|BLR|91|INR|560###
Dubai|Dubai|United Arab Emirates|AE|ARE|25.2048|55.2708|Asia/Dubai|DXB|971|AED|#####
Tel Aviv|Tel Aviv District|Israel|IL|ISR|32.0853|34.7818|Asia/Jerusalem|TLV|972|ILS|6######
Cairo|Cairo|Egypt|EG|EGY|30.0444|31.2357|Africa/Cairo|CAI|20|EGP|11###
Nairobi|Nairobi County|Kenya|KE|KEN|-1.2921|36.8219|Africa/Nairobi|NBO|254|KES|00###
Lagos|Lagos|Nigeria|NG|NGA|6.5244|3.3792|Africa/Lagos|LOS|234|NGN|1#####
Cape Town|Western Cape|South Africa|ZA|ZAF|-33.9249|18.4241|Africa/Johannesburg|CPT|27|ZAR|8###
Johannesburg|Gauteng|South Africa|ZA|ZAF|-26.2041|28.0473|Africa/Johannesburg|JNB|27|ZAR|2###
Casablanca|Casablanca-Settat|Morocco|MA|MAR|33.5731|-7.5898|Africa/Casablanca|CMN|212|MAD|20###
Sydney|New South Wales|Australia|AU|AUS|-33.8688|151.2093|Australia/Sydney|SYD|61|AUD|2###
Melbourne|Victoria|Australia|AU|AUS|-37.8136|144.9631|Australia/Melbourne|MEL|61|AUD|3###
Auckland|Auckland|New Zealand|NZ|NZL|-36.8485|174.7633|Pacific/Auckland|AKL|64|NZD|1###
Jakarta|Jakarta|Indonesia|ID|IDN|-6.2088|106.8456|Asia/Jakarta|CGK|62|IDR|10###
Manila|Metro Manila|Philippines|PH|PHL|14.5995|120.9842|Asia/Manila|MNL|63|PHP|1###
Hanoi|Hanoi|Vietnam|VN|VNM|21.0278|105.8342|Asia/Ho_Chi_Minh|HAN|84|VND|100###
"""
)

#: Lower-case city, country, alpha-2 and alpha-3 -> the first place that has it.
PLACE_INDEX: dict[str, Place] = {}
for _place in CITIES:
    for _key in (_place.city, _place.country, _place.code, _place.code3, _place.airport):
        PLACE_INDEX.setdefault(_key.lower(), _place)
#: The cities by their latitude to 2 decimals (a geocoded latitude passed to another call).
PLACE_AT_LATITUDE: dict[float, Place] = {}
for _place in CITIES:
    PLACE_AT_LATITUDE.setdefault(round(_place.latitude, 2), _place)
for _alias, _name in (("nyc", "new york"), ("usa", "new york"), ("uk", "london"), ("sf", "san francisco")):
    PLACE_INDEX[_alias] = PLACE_INDEX[_name]


AIRLINES = ("TP", "BA", "AF", "LH", "UA", "DL", "AA", "KL", "EK", "NH", "QF", "IB", "LX", "AC")
EMAIL_DOMAINS = ("example.com", "example.org", "example.net", "mail.example.com")
TICKERS = ("AAPL", "MSFT", "GOOGL", "AMZN", "NVDA", "META", "TSLA", "IBM", "ORCL", "INTC", "KO", "JPM")
LANGUAGES = (
    ("en", "English"),
    ("es", "Spanish"),
    ("fr", "French"),
    ("de", "German"),
    ("pt", "Portuguese"),
    ("it", "Italian"),
    ("ja", "Japanese"),
    ("zh", "Chinese"),
    ("ko", "Korean"),
    ("ar", "Arabic"),
    ("hi", "Hindi"),
    ("nl", "Dutch"),
    ("sv", "Swedish"),
    ("pl", "Polish"),
    ("tr", "Turkish"),
)
QUERIES = (
    "vegetarian lasagna recipe",
    "best hiking trails near me",
    "how to renew a passport",
    "cheap flights to Tokyo in May",
    "python list comprehension examples",
    "noise cancelling headphones under 200",
    "symptoms of vitamin D deficiency",
    "electric cars with the longest range",
    "museums open on Monday",
    "how to make cold brew coffee",
    "latest news on renewable energy",
    "beginner guitar chords",
    "italian restaurants open late",
    "how to write a cover letter",
    "weather this weekend",
    "machine learning courses for beginners",
    "kid friendly activities this weekend",
    "how to fix a leaking tap",
)
KEYWORDS = (
    "solar panels",
    "remote work",
    "marathon training",
    "climate change",
    "budget travel",
    "home office",
    "jazz",
    "startup funding",
    "meal prep",
    "photography",
)
MESSAGES = (
    "Running about ten minutes late, see you at the entrance.",
    "The quarterly report is ready for your review.",
    "Can we move our call to Thursday afternoon?",
    "Thanks for your help yesterday, it made a real difference.",
    "Please find the signed contract attached.",
    "Reminder: the team lunch is at 12:30 tomorrow.",
    "I just landed and will head to the hotel now.",
    "Could you send me the slides from this morning?",
    "Happy birthday! Hope you have a wonderful day.",
    "The package arrived today, everything looks good.",
    "Let me know if the new schedule works for you.",
    "I have pushed the fixes, the build is green again.",
)
REVIEWS = (
    "Great value for money and fast delivery.",
    "The room was clean and the staff were very friendly.",
    "Good quality, but the sizing runs a little small.",
    "Excellent food, we will definitely come back.",
    "Works as described; setup took five minutes.",
    "Battery life is shorter than advertised.",
)
REASONS = (
    "change of plans",
    "found a better price elsewhere",
    "ordered the wrong size",
    "schedule conflict",
    "no longer needed",
    "item arrived damaged",
)
DESCRIPTIONS = (
    "A lightweight, water-resistant jacket for everyday use.",
    "Weekly sync to review progress and plan the next sprint.",
    "Cozy two-bedroom apartment close to the city centre.",
    "Hands-on workshop covering the basics of data visualisation.",
    "Stainless steel bottle that keeps drinks cold for 24 hours.",
    "Follow-up appointment to review test results.",
    "Guided tour of the old town and its historic landmarks.",
)
#: What a photo's caption says (no product, event or person it could contradict).
CAPTIONS = (
    "Morning walk in the park",
    "Asleep on the sofa after dinner",
    "First day at the beach",
    "Playing in the garden",
    "Waiting by the door",
    "Snow day in the backyard",
    "Sunset from the balcony",
)
#: The sky, as a forecast says it.
WEATHER_CONDITIONS = (
    "sunny",
    "clear",
    "partly cloudy",
    "cloudy",
    "overcast",
    "light rain",
    "showers",
    "thunderstorms",
    "snow",
    "fog",
    "windy",
)
TITLES = (
    "Quarterly planning review",
    "Team lunch",
    "Design sync",
    "Project kickoff",
    "Dentist appointment",
    "Weekly one-on-one",
    "Product launch rehearsal",
    "Budget review",
    "Flight to the conference",
    "Book club meeting",
    "Customer onboarding call",
    "Year-end retrospective",
)
PRODUCTS = (
    "Wireless noise-cancelling headphones",
    "Stainless steel water bottle",
    "Running shoes",
    "Mechanical keyboard",
    "4K monitor",
    "Espresso machine",
    "Yoga mat",
    "Backpack",
    "Smart watch",
    "Bluetooth speaker",
    "Desk lamp",
    "Cast iron skillet",
)
WORK_TITLES = (
    "The Silent Harbor",
    "Midnight in Lisbon",
    "Echoes of the Valley",
    "A Long Way North",
    "The Glass Orchard",
    "Paper Satellites",
    "Winter Light",
    "The Last Cartographer",
)
CATEGORIES = ("electronics", "books", "home", "sports", "travel", "food", "health", "fashion", "music")
GENRES = ("jazz", "rock", "classical", "hip hop", "electronic", "pop", "folk", "blues")
TAGS = ("urgent", "work", "personal", "finance", "travel", "family", "ideas", "follow-up")
STATUSES = ("active", "pending", "completed", "cancelled")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
#: File stems by the kind of file they suit, with the extensions that go with them.
FILES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "document": (
        ("report", "invoice", "contract", "meeting_notes", "resume", "proposal", "budget"),
        ("pdf", "docx", "txt"),
    ),
    "image": (("photo", "screenshot", "profile_picture", "scan", "diagram", "receipt"), ("jpg", "png")),
    "photo": (("photo", "IMG", "snapshot", "portrait", "picture"), ("jpg", "png")),
    "data": (
        ("sales", "export", "inventory", "results", "measurements", "contacts"),
        ("csv", "json", "xlsx"),
    ),
    "audio": (("recording", "voice_memo", "podcast_episode"), ("mp3", "wav")),
    "video": (("presentation", "clip", "tutorial"), ("mp4", "mov")),
    "code": (("main", "utils", "config", "setup"), ("py", "js", "yaml")),
}
FOLDERS = ("documents", "projects", "reports", "photos", "downloads", "archive", "shared")
MIME = {
    "pdf": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "txt": "text/plain",
    "jpg": "image/jpeg",
    "png": "image/png",
    "csv": "text/csv",
    "json": "application/json",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "mp3": "audio/mpeg",
    "wav": "audio/wav",
    "mp4": "video/mp4",
    "mov": "video/quicktime",
    "py": "text/x-python",
    "js": "text/javascript",
    "yaml": "application/yaml",
}
#: Short id prefixes by entity; other entities take their first letters.
ID_PREFIXES = {
    "user": "usr",
    "customer": "cus",
    "order": "ord",
    "account": "acc",
    "product": "prod",
    "invoice": "inv",
    "transaction": "txn",
    "payment": "pay",
    "booking": "bkg",
    "reservation": "res",
    "ticket": "tkt",
    "event": "evt",
    "appointment": "apt",
    "message": "msg",
    "session": "sess",
    "employee": "emp",
    "patient": "pat",
    "project": "prj",
    "document": "doc",
    "tracking": "trk",
    "shipment": "shp",
    "subscription": "sub",
    "playlist": "pl",
    "confirmation": "cnf",
}
HOTEL_WORDS = (("Grand", "Royal", "Park", "Harbor", "Central", "Garden"), ("Hotel", "Inn", "Suites"))
RESTAURANT_WORDS = ("Bistro", "Kitchen", "Grill", "Trattoria", "Cafe", "Brasserie")


class Weighted:
    """Choices with weights, drawn with one random number and a binary search."""

    __slots__ = ("items", "totals")

    def __init__(self, pairs: Sequence[tuple[str, float]]):
        self.items = tuple(p[0] for p in pairs)
        self.totals = tuple(itertools.accumulate(p[1] for p in pairs))

    def draw(self, rng: random.Random) -> str:
        """One item, as likely as its weight."""
        index = bisect.bisect(self.totals, rng.random() * self.totals[-1])
        return self.items[min(index, len(self.items) - 1)]


@dataclass(slots=True, frozen=True)
class FakerTables:
    """Faker's en_US data, flattened for fast draws."""

    female: Weighted
    male: Weighted
    last: Weighted
    street_suffixes: tuple[str, ...]
    company_suffixes: tuple[str, ...]
    jobs: tuple[str, ...]
    colours: tuple[tuple[str, str], ...]  # (name, #RRGGBB)
    currencies: dict[str, str]


@functools.cache
def faker_tables() -> FakerTables:
    """Faker's default-locale tables (imported on first use)."""
    from faker.providers.address.en_US import Provider as Address
    from faker.providers.color import Provider as Colour
    from faker.providers.company.en_US import Provider as Company
    from faker.providers.currency import Provider as Currency
    from faker.providers.job.en_US import Provider as Job
    from faker.providers.person.en_US import Provider as Person

    return FakerTables(
        female=Weighted(list(_pairs(Person.first_names_female))),
        male=Weighted(list(_pairs(Person.first_names_male))),
        last=Weighted(list(_pairs(Person.last_names))),
        street_suffixes=tuple(s for s in Address.street_suffixes if s in _COMMON_STREETS) or ("Street",),
        company_suffixes=tuple(Company.company_suffixes),
        jobs=tuple(Job.jobs),
        colours=tuple((_spaced(str(k)), str(v)) for k, v in Colour.all_colors.items()),
        currencies={str(code): str(name) for code, name in Currency.currencies},
    )


_COMMON_STREETS = frozenset(
    {"Street", "Avenue", "Road", "Lane", "Drive", "Boulevard", "Way", "Court", "Place", "Square", "Terrace"}
)


def _spaced(camel: str) -> str:
    """``SlateGray`` -> ``slate gray``."""
    return "".join(f" {c.lower()}" if c.isupper() and i else c.lower() for i, c in enumerate(camel))


def _pairs(table: Any) -> list[tuple[str, float]]:
    if isinstance(table, dict):
        return [(str(k), float(v)) for k, v in table.items()]
    return [(str(k), 1.0) for k in table]


_local = threading.local()


def private_faker() -> Any:
    """This thread's own Faker instance (default locale), made on first use.

    Callers seed it (``seed_instance``) before every draw; ``Scope.faker`` does so from the scope's
    random source, so draws depend neither on other threads nor on other scopes.
    """
    faker = getattr(_local, "faker", None)
    if faker is None:
        from faker import Faker

        faker = _local.faker = Faker()
    return faker
