"""Candidate values of the kinds that are not people, places, dates, ids or money.

Companies, files, web addresses, texts (titles, queries, messages...), items (products, hotels,
flights...), numbers with a natural range (counts, ratings, ages...) and the rest. Each renderer
yields candidates best first, like those of :mod:`~fms_dgt.core.tools._fake_values`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from fms_dgt.core.tools import _fake_data as data
from fms_dgt.core.tools._fake_kinds import Kind, tokens
from fms_dgt.core.tools._fake_sorts import SORTS
from fms_dgt.core.tools._fake_texts import drawn, texts_of

if TYPE_CHECKING:
    from fms_dgt.core.tools._fake_values import Scope

__all__ = ["THINGS", "file_name", "money_range", "number_in"]

_SLUG = re.compile(r"[^a-z0-9]+")
_IMAGE_WORDS = re.compile(r"image|photo|picture|avatar|screenshot|scan|jpe?g|png", re.I)


def _company(scope: Scope, kind: Kind, schema: Mapping[str, Any], name: str) -> Iterator[Any]:
    yield scope.remembered(kind, lambda: _company_name(scope))


def _company_name(scope: Scope) -> str:
    rng, tables = scope.rng, data.faker_tables()
    first, second = tables.last.draw(rng), tables.last.draw(rng)
    return str(
        rng.choice(
            (
                f"{first} {rng.choice(tables.company_suffixes)}",
                f"{first}-{second}",
                f"{first} & {second}",
            )
        )
    )


def file_name(scope: Scope, category: str) -> str:
    """A file name of ``category`` (``document``, ``image``, ``data``...): ``report_2026.pdf``."""
    rng = scope.rng
    stems, extensions = data.FILES.get(category, data.FILES["document"])
    suffix = rng.choice((str(scope.today.year), f"{rng.randint(1, 99):02d}", scope.today.strftime("%Y_%m")))
    return f"{rng.choice(stems)}_{suffix}.{rng.choice(extensions)}"


def _file(scope: Scope, kind: Kind, schema: Mapping[str, Any], name: str) -> Iterator[Any]:
    field = kind.field
    if field in data.FILES:
        described = field != "photo" and _IMAGE_WORDS.search(str(schema.get("description") or ""))
        category = "image" if described else field
        yield scope.remembered(kind, lambda: file_name(scope, category))
    elif field == "path":
        document = scope.remembered(Kind("file", "document", kind.role), lambda: file_name(scope, "document"))
        folder = scope.remembered(Kind("file", "folder"), lambda: scope.rng.choice(data.FOLDERS))
        user = scope.person("").username
        yield f"/home/{user}/{folder}/{document}"
        yield f"{folder}/{document}"
    elif field == "image_path":
        yield f"/static/images/{file_name(scope, 'image')}"
    elif field == "dag_file":
        yield scope.rng.choice(("/opt/airflow/dags/orders_etl.py", "/opt/airflow/dags/sales_report.py"))
    elif field == "folder":
        yield scope.remembered(kind, lambda: scope.rng.choice(data.FOLDERS))
    elif field == "extension":
        yield scope.rng.choice(("pdf", "csv", "png", "docx", "txt"))
    elif field == "mime":
        yield scope.rng.choice(sorted(data.MIME.values()))


def _web(scope: Scope, kind: Kind, schema: Mapping[str, Any], name: str) -> Iterator[Any]:
    rng = scope.rng
    if kind.field == "ip":
        yield f"{rng.choice(('192.0.2', '198.51.100', '203.0.113'))}.{rng.randint(1, 254)}"
        return
    domain = f"{rng.choice(('www', 'shop', 'blog', 'docs', 'api'))}.example.com"
    if kind.field == "rtmp_url":
        yield f"{'rtmps' if 'rtmps' in name.lower() else 'rtmp'}://live.example.com/live"
        return
    if kind.field == "domain":
        yield domain
        yield "example.com"
    elif kind.field == "image_url":
        yield f"https://{domain}/images/{file_name(scope, 'image')}"
    else:
        word = rng.choice(("products", "articles", "events", "profiles", "docs", "listings"))
        yield f"https://{domain}/{word}/{rng.randint(100, 99_999)}"
        yield f"https://{domain}/"


_TEXTS: dict[str, tuple[str, ...]] = {
    "title": data.TITLES,
    "query": data.QUERIES,
    "keyword": data.KEYWORDS,
    "message": data.MESSAGES,
    "review": data.REVIEWS,
    "reason": data.REASONS,
    "description": data.DESCRIPTIONS,
    "tag": data.TAGS,
    "category": data.CATEGORIES,
    "genre": data.GENRES,
    "work": data.WORK_TITLES,
    "caption": data.CAPTIONS,
    "resolution": (
        "Reset the user's password and confirmed they can sign in.",
        "Replaced the faulty charger; the device charges again.",
        "Refunded the duplicate charge to the original card.",
        "Cleared the cache and the page loads again.",
    ),
}


def _text(scope: Scope, kind: Kind, schema: Mapping[str, Any], name: str) -> Iterator[Any]:
    field = kind.base  # title of title:video, a video's title
    choices = texts_of(kind) or _TEXTS.get(field, data.TITLES)
    yield drawn(choices, scope.rng)
    if field in ("message", "description", "review"):
        yield scope.faker.sentence()
    yield scope.rng.choice(data.KEYWORDS)


def _item(scope: Scope, kind: Kind, schema: Mapping[str, Any], name: str) -> Iterator[Any]:
    field = kind.field
    if kind.base == "venue":
        yield scope.remembered(kind, lambda: _venue(scope, kind.subject))
    else:
        yield scope.remembered(kind, lambda: _ITEMS[field](scope))


def _venue(scope: Scope, what: str) -> str:
    """``Lisbon Museum``, ``Harris Park``: a venue named after the record's city or a family name."""
    rng = scope.rng
    owner = scope.site("").place.city if rng.random() < 0.5 else data.faker_tables().last.draw(rng)
    return f"{owner} {what.title()}"


_ITEMS: dict[str, Callable[[Scope], Any]] = {
    "hotel": lambda s: (
        f"{s.rng.choice(data.HOTEL_WORDS[0])} {s.rng.choice(data.HOTEL_WORDS[1])} {s.site('').place.city}"
    ),
    "restaurant": lambda s: f"{data.faker_tables().last.draw(s.rng)}'s {s.rng.choice(data.RESTAURANT_WORDS)}",
    "product": lambda s: s.rng.choice(data.PRODUCTS),
    "flight": lambda s: f"{s.rng.choice(data.AIRLINES)}{s.rng.randint(100, 2999)}",
    "ticker": lambda s: s.rng.choice(data.TICKERS),
}


def _misc(scope: Scope, kind: Kind, schema: Mapping[str, Any], name: str) -> Iterator[Any]:
    rng, field = scope.rng, kind.field
    if field in ("colour", "colour_hex"):
        colour, hex_code = rng.choice(data.faker_tables().colours)
        yield hex_code if field == "colour_hex" else colour
        yield colour.lower()
    elif field in ("language", "language_code"):
        code, language = rng.choice(data.LANGUAGES)
        yield code if field == "language_code" else language
        yield f"{code}-{scope.site('').place.code}"
        yield code
    elif field == "word":
        yield scope.faker.word()
    elif field == "password":
        yield scope.faker.password(length=14)
    elif field == "token":
        yield f"{rng.getrandbits(128):032x}"
    elif field == "cik":  # the SEC's Central Index Key: ten digits, zero-padded
        yield f"{rng.randint(320_000, 1_999_999):010d}"
    elif field in _MISC_CHOICES:
        yield rng.choice(_MISC_CHOICES[field])
    elif field.startswith("sort:") and field[5:] in SORTS:
        yield rng.choice(SORTS[field[5:]])
    elif field.startswith("sort="):  # a thing naming its own type: an artist's is "artist"
        yield field[5:]
    elif field == "code":
        yield rng.choice(("SAVE", "WELCOME", "SPRING", "VIP")) + str(rng.choice((10, 15, 20, 25)))
        yield f"{rng.randint(0, 999_999):06d}"


_MISC_CHOICES: dict[str, tuple[str, ...]] = {
    "weekday": data.WEEKDAYS,
    # What a listing is sorted by: a field most listings have, "-" first for descending.
    "sort": ("name", "created_at", "-created_at", "updated_at", "-updated_at", "start_date", "-start_date"),
    "direction": ("asc", "desc"),
    "flag": ("true", "false"),  # a yes-or-no written as text (has_parking: "true")
    "version": ("1.0.0", "1.2.0", "2.0.1", "2.3.4", "3.1.0"),
    # A unit to convert from or to (a description listing its units is read before this).
    "unit": ("meter", "kilometer", "foot", "mile", "kilogram", "pound", "liter", "gallon", "inch"),
    "status": data.STATUSES,
    "airline": data.AIRLINES,
    "platform": ("iOS", "Android", "Windows", "macOS", "Linux", "PlayStation 5", "Nintendo Switch"),
    "social": ("Twitter", "Facebook", "Instagram", "LinkedIn", "Mastodon"),
    "cuisine": ("Italian", "Japanese", "Mexican", "Indian", "Thai", "French", "Greek", "Lebanese"),
    "activity": ("running", "cycling", "swimming", "yoga", "hiking", "rowing", "tennis"),
    "order_type": ("market", "limit", "stop", "stop_limit"),
    "device": ("Living room lamp", "Kitchen speaker", "Bedroom thermostat", "Hallway light", "Office fan"),
    "scene": ("Movie night", "Good morning", "Away mode", "Dinner time", "Bedtime"),
    "badge": ("Verified", "Top Contributor", "Early Adopter", "Rising Star", "Community Helper"),
    "trail": ("Eagle Peak Trail", "Riverside Loop", "Cedar Ridge Path", "Lakeshore Trail", "Summit Way"),
    "car": ("Toyota Corolla", "Honda Civic", "Ford Focus", "Tesla Model 3", "Volkswagen Golf", "Kia Niro"),
    "diet": ("vegetarian", "vegan", "gluten-free", "keto", "pescatarian", "dairy-free"),
    "task_queue": ("default", "high_priority", "etl", "reports", "notifications"),
    "task_pool": ("default_pool", "etl_pool", "reporting_pool", "ml_training"),
    "task_operator": ("PythonOperator", "BashOperator", "EmptyOperator", "EmailOperator", "HttpOperator"),
    "executor": ("LocalExecutor", "CeleryExecutor", "KubernetesExecutor", "SequentialExecutor"),
    "job_type": ("SchedulerJob", "LocalTaskJob", "TriggererJob", "BackfillJob"),
    "dag_view": ("grid", "graph", "duration", "gantt", "calendar"),
    "run_state": ("queued", "running", "success", "failed"),
    "licence": (
        "Attribution",
        "Attribution - Share Alike",
        "Attribution - No Derivatives",
        "Public Domain Dedication",
    ),
    "user_agent": (
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/126.0 Safari/537.36",
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) "
        "Version/17.5 Safari/605.1.15",
        "curl/8.7.1",
    ),
    "dag_pattern": ("etl", "daily", "report", "sync"),  # Airflow matches a part of the DAG's id
    "priority_level": ("low", "medium", "high", "urgent"),
    "video_resolution": ("480p", "720p", "1080p", "1440p", "2160p"),
    "template_field": ("bash_command", "env", "sql", "params", "op_kwargs", "templates_dict"),
    "cipher": ("AES-256-GCM", "ChaCha20-Poly1305", "RSA-OAEP", "SHA-256"),
    "cron": ("0 6 * * *", "*/15 * * * *", "0 0 * * 1", "30 2 * * *", "0 9 * * 1-5", "0 0 1 * *"),
    "ingredient": ("tomatoes", "garlic", "basil", "chicken breast", "rice", "spinach", "lemon", "onion"),
    "symptom": ("fever", "cough", "headache", "sore throat", "fatigue", "nausea", "dizziness"),
    "mood": ("happy", "relaxed", "energetic", "calm", "melancholy", "focused"),
    "room_type": ("single", "double", "twin", "suite", "deluxe"),
    "nationality": ("American", "British", "French", "Japanese", "Brazilian", "Nigerian", "Indian"),
    "subreddit": ("technology", "science", "worldnews", "programming", "AskHistorians", "cooking"),
    "form_type": ("10-K", "10-Q", "8-K"),  # the SEC's annual, quarterly and current reports
    "trigger_class": (
        "airflow.triggers.temporal.DateTimeTrigger",
        "airflow.triggers.temporal.TimeDeltaTrigger",
        "airflow.triggers.file.FileTrigger",
    ),
    # Settings written as a JSON string (a trigger's kwargs, a task's executor_config).
    "json_settings": ("{}", '{"retries": 2}', '{"timeout": 300}', '{"poke_interval": 60}'),
    "pet": tuple(
        [
            "Max",
            "Bella",
            "Luna",
            "Charlie",
            "Milo",
            "Daisy",
            "Rocky",
            "Coco",
            "Buddy",
            "Nala",
            "Oscar",
            "Lola",
            "Teddy",
            "Ruby",
            "Simba",
            "Pepper",
            "Ziggy",
            "Willow",
            "Biscuit",
            "Juniper",
            "Hazel",
            "Ollie",
            "Maple",
            "Pixel",
            "Scout",
            "Mochi",
            "Ginger",
            "Bruno",
            "Olive",
            "Toby",
        ]
    ),
    "weather": data.WEATHER_CONDITIONS,
}

#: Natural ranges of numbers: (lowest, highest, step).
_RANGES: dict[str, tuple[float, float, float]] = {
    "count": (1, 10, 1),
    "tally": (3, 5000, 1),
    "rate": (1, 25, 0.25),
    "utc_offset": (-10, 12, 1),
    "quantity": (1, 5, 1),
    "party": (1, 4, 1),
    "children": (0, 3, 1),
    "days": (1, 7, 1),
    "page": (1, 5, 1),
    "offset": (0, 50, 10),
    "age": (18, 80, 1),
    "rooms": (1, 5, 1),
    "years": (1, 30, 1),
    "rating": (1, 5, 0.5),
    "percent": (5, 50, 5),
    "temperature": (-5, 35, 0.1),
    "wind": (0, 40, 0.1),
    "humidity": (10, 100, 1),
    "minutes": (15, 120, 15),
    "seconds": (5, 600, 5),
    "probability": (0.05, 0.95, 0.05),
    "exponent": (2, 6, 1),
    "places": (1, 6, 1),
    "priority": (1, 5, 1),
    "exchange_rate": (0.5, 1.6, 0.0001),
    "log_base": (2, 10, 1),  # an offset into a recording: PeerTube's startTimestamp (format seconds)
    "hours": (1, 8, 1),
    "distance": (1, 50, 0.5),
    "year": (2020, 2030, 1),
    "year_past": (1960, 2025, 1),
    "rank": (1, 100, 1),
    "binary": (0, 1, 1),
    "height": (150, 195, 1),
    "weight": (50, 100, 0.1),
    "population": (10_000, 5_000_000, 1_000),
    "month": (1, 12, 1),
    "day": (1, 28, 1),
    "hour": (0, 23, 1),
    "minute": (0, 55, 5),
    "bytes": (20_000, 4_000_000, 1),
}


#: Natural ranges of sums of money by a word of their name (lowest, highest, step); others 5-500.
_MONEY_RANGES: dict[str, tuple[float, float, float]] = {
    **dict.fromkeys(("salary", "income", "wage", "wages", "earnings", "payroll"), (28_000, 160_000, 500)),
    **dict.fromkeys(("rent", "mortgage"), (600, 3_500, 10)),
    **dict.fromkeys(("loan", "principal", "debt", "investment"), (5_000, 400_000, 500)),
    **dict.fromkeys(("revenue", "sales", "turnover"), (50_000, 5_000_000, 1_000)),
    **dict.fromkeys(("budget", "savings", "deposit"), (200, 20_000, 50)),
    **dict.fromkeys(("fee", "tip", "shipping", "toll"), (1, 40, 0.5)),
}


def money_range(name: str) -> tuple[float, float, float]:
    """The natural range of a sum of money named ``name`` (a salary is no 447.81)."""
    return next((_MONEY_RANGES[w] for w in reversed(tokens(name)) if w in _MONEY_RANGES), (5, 500, 0.01))


def _number(scope: Scope, kind: Kind, schema: Mapping[str, Any], name: str) -> Iterator[Any]:
    low, high, step = _RANGES.get(kind.field, (1, 10, 1))
    if kind.field == "temperature":
        low, high = _climate(scope, name) or (low, high)
    integer = schema.get("type") == "integer" or step >= 1
    value = number_in(scope, schema, low, high, step if not integer else max(1, step), integer)
    if value is not None:
        yield value
    if kind.field == "month":
        yield scope.rng.choice(data.MONTHS)


_LOW_WORDS = frozenset({"low", "lo", "min", "minimum", "mintemp", "tempmin", "night"})
_HIGH_WORDS = frozenset({"high", "hi", "max", "maximum", "maxtemp", "tempmax", "day"})


def _climate(scope: Scope, name: str) -> tuple[float, float] | None:
    """The range of a temperature (Celsius) where the scope's place is, in the month of its date.

    A rough climate, from latitude alone: warm near the equator, colder and more seasonal towards
    the poles, with the seasons reversed south of the equator (Osaka in February is near 9 °C,
    Madrid in July near 23 °C, Santiago in March near 20 °C). A day's high sits above its mean
    and a low below. None while the scope has no place yet (any temperature is then plausible).
    """
    site = scope.entities.get("place@") or next(
        (v for k, v in scope.entities.items() if k.startswith("place@")), None
    )
    if site is None:
        return None
    latitude = site.place.latitude
    when = scope.entities.get("date.start") or scope.today  # a forecast's days, or now
    season = math.cos(2 * math.pi * (when.month - 7) / 12) * (1 if latitude >= 0 else -1)
    mean = 27 - 0.33 * abs(latitude) + 0.22 * abs(latitude) * season
    words = set(_SLUG.split(name.lower())) | {name.lower().replace("_", "")}
    shift = -4.0 if words & _LOW_WORDS else 4.0 if words & _HIGH_WORDS else 0.0
    return round(mean + shift - 4, 1), round(mean + shift + 4, 1)


def number_in(
    scope: Scope, schema: Mapping[str, Any], low: float, high: float, step: float, integer: bool
) -> int | float | None:
    """A number in ``[low, high]`` on ``step`` that also meets the schema's bounds, or None."""
    low, high = _bounded(schema, low, high, integer)
    multiple = schema.get("multipleOf")
    if isinstance(multiple, (int, float)) and not isinstance(multiple, bool) and multiple > 0:
        step = multiple
    first, last = math.ceil(low / step - 1e-9), math.floor(high / step + 1e-9)
    if first > last:
        return None
    value: float = scope.rng.randint(first, last) * step
    if integer or isinstance(step, int):
        return round(value)
    return round(value, 6)


def _bounded(schema: Mapping[str, Any], low: float, high: float, integer: bool) -> tuple[float, float]:
    if _BOUNDS.isdisjoint(schema):
        return low, high
    nudge = 1 if integer else 1e-6
    for key, better in (("minimum", max), ("exclusiveMinimum", max)):
        bound = schema.get(key)
        if isinstance(bound, (int, float)) and not isinstance(bound, bool):
            low = better(low, bound + (nudge if key.startswith("exclusive") else 0))
    for key, better in (("maximum", min), ("exclusiveMaximum", min)):
        bound = schema.get(key)
        if isinstance(bound, (int, float)) and not isinstance(bound, bool):
            high = better(high, bound - (nudge if key.startswith("exclusive") else 0))
    return low, high


_BOUNDS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})

THINGS: dict[str, Callable[[Scope, Kind, Mapping[str, Any], str], Iterator[Any]]] = {
    "company": _company,
    "file": _file,
    "web": _web,
    "text": _text,
    "item": _item,
    "misc": _misc,
    "number": _number,
}
