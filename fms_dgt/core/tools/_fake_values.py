"""The entities of :mod:`fms_dgt.core.tools.fakes` and the candidate values each kind renders to.

A :class:`Scope` holds the entities of one value, one call or one record (people, places, dates,
ids, files...), made on first use from its random source. For a :class:`~._fake_kinds.Kind` and a
schema, :meth:`Scope.candidates` yields the renderings of the entity in order of preference
(``+351 912 345 678``, then ``+351912345678``, then ``912345678`` for a phone); the caller keeps the
first one the schema accepts.
"""

from __future__ import annotations

import functools
import random
import re
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from fms_dgt.core.tools import _fake_data as data
from fms_dgt.core.tools._fake_kinds import Kind, remembers, tokens
from fms_dgt.core.tools._fake_moulds import fill_digits
from fms_dgt.core.tools._fake_things import THINGS, money_range, number_in

__all__ = ["ANCHOR", "Person", "Scope", "Site", "examples_in"]

#: The calendar's anchor: every date is drawn around it, never around the clock, so a record made
#: today and one made next year from the same seed are the same.
ANCHOR = datetime(2026, 1, 5, 9, 0)
_NOT_WORD = re.compile(r"[^a-z0-9]+")
_STRFTIME = re.compile(r"%[YmdHMSbBaAyjpIzf]")
_SHAPE = re.compile(r"(YYYY|yyyy|YY|yy|MM|DD|dd|HH|hh|mm|SS|ss)")
_SHAPE_CODES = {"YYYY": "%Y", "yyyy": "%Y", "YY": "%y", "yy": "%y", "DD": "%d", "dd": "%d", "HH": "%H"}
_SHAPE_CODES |= {"hh": "%H", "SS": "%S", "ss": "%S"}
_DATE_SHAPE = re.compile(
    r"(?:YYYY|yyyy|MM|DD|dd|HH|hh|mm|SS|ss)(?:[-/.: T]*(?:YYYY|yyyy|MM|DD|dd|HH|hh|mm|SS|ss))+"
)
_EXAMPLE_CUE = re.compile(
    r"\b(?:such as|e\.g\.|eg\.|for example|for instance|example:|examples:|like\b|i\.e\.|in this case)"
    r"[:,]?\s*",
    re.I,
)
_QUOTED = re.compile(r"['\"`]([^'\"`\n]{1,40})['\"`]")
_ASSIGNED = re.compile(r"^[A-Za-z_]\w{0,20}=(?=\S)")
_BARE = re.compile(r"([A-Za-z0-9#@$][^,.;:()\[\]'\"`\n]{0,30}?)(?=\s*(?:[,.;)\]]|\s(?:or|and)\s|$))")


@dataclass(slots=True, kw_only=True)
class Person:
    """A person: the names, and the handles made from them."""

    first: str
    last: str
    gender: str
    email: str
    username: str
    phone: str  # the national number, digits only


@dataclass(slots=True, kw_only=True)
class Site:
    """A real city with a street address in it (drawn on first use)."""

    place: data.Place
    rng: random.Random
    _street: tuple[int, str, str] | None = None

    @property
    def building(self) -> int:
        """The building number."""
        return self._address()[0]

    @property
    def street(self) -> str:
        """The street name."""
        return self._address()[1]

    @property
    def postcode(self) -> str:
        """The postcode, in the country's shape."""
        return self._address()[2]

    def _address(self) -> tuple[int, str, str]:
        if self._street is None:
            rng, tables = self.rng, data.faker_tables()
            name = tables.last.draw(rng) if rng.random() < 0.6 else tables.male.draw(rng)
            street = f"{name} {rng.choice(tables.street_suffixes)}"
            self._street = (rng.randint(1, 480), street, _fill_shape(rng, self.place.postcode))
        return self._street


@dataclass(slots=True, kw_only=True)
class _Ident:
    number: int
    uuid: str


class Scope:
    """The entities of one value, call or record, made on first use from ``rng``.

    Args:
        rng: the random source (seeded by the caller).
    """

    __slots__ = ("entities", "forms", "rng", "today")
    rng: random.Random
    today: datetime
    entities: dict[str, Any]
    forms: dict[str, Any]

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.today = ANCHOR + timedelta(days=rng.randrange(365))
        self.entities: dict[str, Any] = {}
        # Each adopted entity as it was given (42, not the id 42 renders as by default).
        self.forms: dict[str, Any] = {}

    # ------------------------------------------------------------------ entities

    def person(self, role: str) -> Person:
        """The person playing ``role`` (``""`` is the user)."""
        return self._entity(f"person@{role}", self._new_person)  # type: ignore[no-any-return]

    def site(self, role: str) -> Site:
        """The place playing ``role`` (``""`` is where the user is; ``destination``...)."""
        return self._entity(f"place@{role}", lambda: self._new_site(None))  # type: ignore[no-any-return]

    def known(self, kind: Kind) -> bool:
        """Whether the entity behind ``kind`` is already fixed."""
        return _entity_key(kind) in self.entities

    def _entity(self, key: str, make: Callable[[], Any]) -> Any:
        value = self.entities.get(key)
        if value is None:
            value = self.entities[key] = make()
        return value

    def _new_person(self) -> Person:
        rng, tables = self.rng, data.faker_tables()
        gender = rng.choice(("female", "male"))
        first = (tables.female if gender == "female" else tables.male).draw(rng)
        last = tables.last.draw(rng)
        plain_first, plain_last = _NOT_WORD.sub("", first.lower()), _NOT_WORD.sub("", last.lower())
        email = f"{plain_first}.{plain_last}@{rng.choice(data.EMAIL_DOMAINS)}"
        username = rng.choice(
            (f"{plain_first}{plain_last[:1]}{rng.randint(1, 99)}", f"{plain_first}_{plain_last}")
        )
        phone = f"{rng.randint(2, 9)}{rng.randint(10, 99)}{rng.randint(100, 999)}{rng.randint(1000, 9999)}"
        return Person(first=first, last=last, gender=gender, email=email, username=username, phone=phone)

    def _new_site(self, place: data.Place | None) -> Site:
        return Site(place=place or self.rng.choice(data.CITIES), rng=self.rng)

    def moment(self, field: str) -> datetime:
        """The record's ``start``, ``end``, ``birth``, ``past`` or ``now`` moment."""
        return self._entity(f"date.{field}", lambda: self._new_moment(field))  # type: ignore[no-any-return]

    def _new_moment(self, field: str) -> datetime:
        rng = self.rng
        if field == "end":
            return self.moment("start") + timedelta(days=rng.randint(1, 7), hours=rng.randint(1, 3))
        if field == "birth":
            return datetime(rng.randint(1955, 2003), rng.randint(1, 12), rng.randint(1, 28))
        if field == "past":
            return self.today - timedelta(days=rng.randint(1, 90), minutes=15 * rng.randint(0, 40))
        start = self.today + timedelta(days=0 if field == "now" else rng.randint(3, 45))
        return start.replace(hour=rng.randint(8, 17), minute=rng.choice((0, 15, 30, 45)))

    def ident(self, entity: str, role: str) -> _Ident:
        """The id of the record's ``entity`` (its ``user``, its ``order``) playing ``role``."""
        rng = self.rng
        return self._entity(  # type: ignore[no-any-return]
            f"id.{entity}@{role}",
            lambda: _Ident(
                number=rng.randint(10_000, 99_999), uuid=str(uuid.UUID(int=rng.getrandbits(128), version=4))
            ),
        )

    def remembered(self, kind: Kind, make: Callable[[], Any]) -> Any:
        """The value of a remembered kind, made once; other kinds are made each time."""
        return self._entity(kind.key, make) if remembers(kind) else make()

    @property
    def faker(self) -> Any:
        """This thread's private Faker instance, seeded from the scope's random source.

        Seeded on every use, so what it draws depends on this scope alone, whatever other scopes
        of the thread drew in between (the record's scope lives across calls).
        """
        faker = data.private_faker()
        faker.seed_instance(self.rng.getrandbits(64))
        return faker

    # ------------------------------------------------------------------ adopting given values

    def adopt(self, kind: Kind, value: Any) -> None:
        """Make ``value`` (given by a caller, not drawn) the entity of ``kind`` if none is fixed yet."""
        if isinstance(value, list):  # the tickers a call filters by: the first is the record's own
            value = value[0] if value and not isinstance(value[0], list | Mapping) else None
        key = _entity_key(kind)
        if key in self.entities or not remembers(kind) or value is None:
            return
        adopt = _ADOPT.get(kind.family)
        adopted = adopt(self, kind, value) if adopt is not None else value
        if adopted is not None:
            self.entities[key] = adopted
            self.forms[key] = value

    def given(self, kind: Kind) -> Any:
        """The value ``kind``'s entity was first given as (adopted, or an id as first drawn)."""
        return self.forms.get(_entity_key(kind))

    def names_another(self, kind: Kind, value: Any) -> bool:
        """Whether ``value`` is already the given form of another entity than ``kind``'s (Codat's
        spec gives one example UUID for a company and an account: one record's company is no
        account)."""
        key = _entity_key(kind)
        return any(held == value and other != key for other, held in self.forms.items())

    def given_as(self, kind: Kind, value: Any) -> None:
        """Remember ``value`` as the form of ``kind``'s entity, if none is remembered yet."""
        self.forms.setdefault(_entity_key(kind), value)

    def snapshot(self) -> dict[str, Any]:
        """The entities fixed so far, JSON-ready: ``{"person@": {...}, "place@": {...}, ...}``."""
        out: dict[str, Any] = {}
        for key, value in sorted(self.entities.items()):
            if isinstance(value, Person):
                value = {
                    "name": f"{value.first} {value.last}",
                    "email": value.email,
                    "username": value.username,
                }
            elif isinstance(value, Site):
                place = value.place
                value = {"city": place.city, "country": place.country, "country_code": place.code}
            elif isinstance(value, datetime):
                value = value.isoformat()
            elif isinstance(value, _Ident):
                value = value.number
            out[key] = value
        return out

    # ------------------------------------------------------------------ candidates

    def candidates(self, kind: Kind, schema: Mapping[str, Any], name: str) -> Iterator[Any]:
        """Renderings of the entity of ``kind`` for ``schema``, best first."""
        if kind.family not in _BUNDLED and remembers(kind):
            given = self.entities.get(kind.key)
            if given is not None:
                yield given
        if kind.family == "id":
            # An id shaped like the description's example ('#W0000000'), with our number.
            digits = str(self.ident(kind.field, kind.role).number)
            for example in examples_in(str(schema.get("description") or "")):
                if any(c.isdigit() for c in example):
                    yield fill_digits(example, digits)
        yield from _RENDER.get(kind.family, _nothing)(self, kind, schema, name)


@functools.lru_cache(maxsize=4096)
def examples_in(description: str) -> tuple[str, ...]:
    """Example values a description gives (``such as 'Physics' or 'Chemistry'``, ``e.g. cups``)."""
    cue = _EXAMPLE_CUE.search(description)
    if cue is None:
        return ()
    tail = description[cue.end() : cue.end() + 120]
    quoted = _QUOTED.findall(tail)
    if quoted:
        return tuple(q.strip() for q in quoted if q.strip())
    bare = _BARE.match(_ASSIGNED.sub("", tail))  # "e.g.: q=Paris" gives Paris
    if bare is None or bare.group(1).lower().split()[0] in _NOT_EXAMPLES:
        return ()
    said = bare.group(1).strip()
    if said.islower() and said.split()[-1] in _KIND_WORDS:
        return ()  # "(e.g., city name)" says what kind of value, not one: Tripadvisor's query
    return (said,)


#: Last words of an example that name a kind of value, not a value ("city name", "zip code").
_KIND_WORDS = frozenset(
    {"name", "names", "code", "codes", "id", "ids", "number", "address", "value", "string"}
)
_NOT_EXAMPLES = frozenset(
    {"the", "a", "an", "this", "that", "it", "if", "when", "in", "to", "of", "you", "we"}
)


# Families whose entities are bundles rendered field by field (not one remembered value).
_BUNDLED = frozenset({"person", "place", "date", "id"})


def _fill_shape(rng: random.Random, shape: str) -> str:
    """``SW# #??`` -> ``SW4 7KQ``: ``#`` a digit, ``?`` an upper-case letter."""
    return "".join(
        str(rng.randint(0, 9)) if c == "#" else chr(rng.randint(65, 90)) if c == "?" else c for c in shape
    )


def _entity_key(kind: Kind) -> str:
    if kind.family in ("person", "place"):
        return f"{kind.family}@{kind.role}"
    if kind.family == "date":
        return f"date.{kind.field}"
    if kind.family == "id":
        return f"id.{kind.field}@{kind.role}"
    return kind.key


def _nothing(scope: Scope, kind: Kind, schema: Mapping[str, Any], name: str) -> Iterator[Any]:
    return iter(())


# ---------------------------------------------------------------- people and places


def _person(scope: Scope, kind: Kind, schema: Mapping[str, Any], name: str) -> Iterator[Any]:
    person = scope.person(kind.role)
    field = kind.field
    if field == "first_name":
        yield person.first
    elif field == "last_name":
        yield person.last
    elif field == "full_name":
        yield f"{person.first} {person.last}"
        yield person.first
        yield person.username  # a name its pattern keeps to lower case is a handle (PeerTube's actors)
    elif field == "email":
        yield person.email
    elif field == "username":
        yield person.username
        yield _NOT_WORD.sub("", person.username)
    elif field == "phone":
        yield from _phone(person.phone, scope.site("").place.calling)
    elif field == "gender":
        yield person.gender
        yield person.gender[0].upper()
    elif field == "job":
        yield scope.rng.choice(data.faker_tables().jobs)


def _phone(national: str, calling: str) -> Iterator[Any]:
    yield f"+{calling} {national[:3]} {national[3:6]} {national[6:]}"
    yield f"+{calling}{national}"
    yield national
    yield f"{national[:3]}-{national[3:6]}-{national[6:]}"
    yield int(national)


def _place(scope: Scope, kind: Kind, schema: Mapping[str, Any], name: str) -> Iterator[Any]:
    site = scope.site(kind.role)
    place = site.place
    render = _PLACE_FIELDS.get(kind.field)
    if render is not None:
        yield from render(site)
    if kind.field == "country_code":
        yield place.code.lower()
        yield place.code3.lower()
    if kind.field in ("city", "location"):
        yield place.city


_PLACE_FIELDS: dict[str, Callable[[Site], tuple[Any, ...]]] = {
    "city": lambda s: (s.place.city,),
    "country": lambda s: (s.place.country, s.place.code),
    "country_code": lambda s: (s.place.code, s.place.code3),
    "region": lambda s: (s.place.region,),
    "street": lambda s: (f"{s.building} {s.street}",),
    "unit": lambda s: (f"Apt {s.building % 37 + 2}", f"Suite {s.building % 9 + 1}00"),
    "address": lambda s: (
        f"{s.building} {s.street}, {s.postcode} {s.place.city}, {s.place.country}",
        f"{s.building} {s.street}, {s.place.city}",
        f"{s.building} {s.street}",
    ),
    "postcode": lambda s: (s.postcode, s.postcode.replace(" ", "").replace("-", "")),
    "latitude": lambda s: (s.place.latitude,),
    "longitude": lambda s: (s.place.longitude,),
    "timezone": lambda s: (s.place.timezone,),
    "location": lambda s: (f"{s.place.city}, {s.place.country}", f"{s.place.city}, {s.place.code}"),
    "airport": lambda s: (s.place.airport,),
    "calling_code": lambda s: (f"+{s.place.calling}", s.place.calling),
}


# ---------------------------------------------------------------- dates


def _date(scope: Scope, kind: Kind, schema: Mapping[str, Any], name: str) -> Iterator[Any]:
    moment = scope.moment(kind.field)
    style = _date_style(schema, name)
    clock = style in ("time", "datetime", "rfc-datetime", "rfc-time") or (
        style == "strftime" and _CLOCK.search(str(schema.get("description") or "")) is not None
    )
    if kind.field == "end" and clock:
        # An end given with its time of day is later the same day (a meeting); an end given as a
        # date is days later (a stay). Either way it comes after the start.
        start = scope.moment("start")
        moment = start + timedelta(hours=(moment - start).seconds // 3600 or 1)
    yield from _render_moment(moment, style, schema)


#: How a date in each ``format`` is written (``datetime`` is Airflow's spelling of ``date-time``).
_FORMAT_STYLES = {"date": "date", "date-time": "rfc-datetime", "datetime": "rfc-datetime", "time": "rfc-time"}
#: A strftime pattern with a time of day (API-Bank's check-out "Format: %Y-%m-%d" has none).
_CLOCK = re.compile(r"%[HIMSpT]")


def _date_style(schema: Mapping[str, Any], name: str) -> str:
    if schema.get("type") in ("integer", "number"):
        return "epoch"
    styled = _FORMAT_STYLES.get(str(schema.get("format")))
    if styled is not None:
        return styled
    description = str(schema.get("description") or "")
    if _STRFTIME.search(description) or _DATE_SHAPE.search(description):
        return "strftime"
    words = set(tokens(name))
    if words & {"datetime", "timestamp", "at"} or {"date", "time"} <= words:
        return "datetime"
    return "time" if "time" in words else "date"


def _render_moment(moment: datetime, style: str, schema: Mapping[str, Any]) -> Iterator[Any]:
    if style == "epoch":
        yield int((moment - datetime(1970, 1, 1)).total_seconds())
        yield moment.year
        return
    if style == "strftime":
        yield moment.strftime(_strftime_of(str(schema.get("description") or "")))
    if style in ("datetime", "strftime"):
        yield moment.strftime("%Y-%m-%dT%H:%M:%S")
    if style == "rfc-datetime":
        yield moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    if style == "rfc-time":
        yield moment.strftime("%H:%M:%SZ")
    if style == "time":
        yield moment.strftime("%H:%M")
    yield moment.strftime("%Y-%m-%d")
    yield moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _strftime_of(description: str) -> str:
    """The date format a description gives: ``%Y-%m-%d %H:%M:%S`` or ``YYYY-MM-DD HH:mm``."""
    match = re.search(r"%[^\s,;)]*(?:\s%[^\s,;)]+)*", description)
    if match and _STRFTIME.search(match.group(0)):
        return match.group(0).rstrip(".")
    shape = _DATE_SHAPE.search(description)
    if shape is None:
        return "%Y-%m-%d"
    hours_seen = False

    def code(match: re.Match[str]) -> str:
        nonlocal hours_seen
        token = match.group(0)
        hours_seen = hours_seen or token in ("HH", "hh")
        # MM is the month in a date and the minutes after the hours.
        return _SHAPE_CODES.get(token) or ("%M" if hours_seen else "%m")

    return _SHAPE.sub(code, shape.group(0))


# ---------------------------------------------------------------- ids, money, accounts


def _id(scope: Scope, kind: Kind, schema: Mapping[str, Any], name: str) -> Iterator[Any]:
    ident = scope.ident(kind.field, kind.role)
    if schema.get("format") == "uuid":
        yield ident.uuid
    prefix = data.ID_PREFIXES.get(kind.field) or kind.field[:4]
    if schema.get("type") in ("integer", "number"):
        yield ident.number
    yield f"{prefix}-{ident.number}"
    yield ident.number
    yield ident.uuid


def _money(scope: Scope, kind: Kind, schema: Mapping[str, Any], name: str) -> Iterator[Any]:
    if kind.field in ("currency", "currency_name"):
        code = scope.site("").place.currency if kind.role == "" else _other_currency(scope)
        code = scope.remembered(kind._replace(field="currency"), lambda: code)
        if kind.field == "currency_name":  # the name of the record's currency of that role
            yield data.faker_tables().currencies.get(code, code)
            return
        yield code
        yield code.lower()
        return
    integer = schema.get("type") == "integer"
    value = scope.remembered(kind, lambda: number_in(scope, schema, *money_range(name), integer))
    if value is not None:
        yield value
        yield round(value)
        yield f"{value:.2f}"


def _other_currency(scope: Scope) -> str:
    home = scope.site("").place.currency
    others = [c for c in ("USD", "EUR", "GBP", "JPY", "CHF", "CAD") if c != home]
    return str(scope.rng.choice(others))


def _account(scope: Scope, kind: Kind, schema: Mapping[str, Any], name: str) -> Iterator[Any]:
    rng = scope.rng
    if kind.field == "card":
        number = scope.remembered(
            kind, lambda: _luhn("4" + "".join(str(rng.randint(0, 9)) for _ in range(14)))
        )
        yield number
        yield " ".join(number[i : i + 4] for i in range(0, 16, 4))
    elif kind.field == "cvv":
        yield f"{rng.randint(100, 999)}"
    elif kind.field == "expiry":
        when = scope.today + timedelta(days=rng.randint(200, 1500))
        yield when.strftime("%m/%y")
        yield when.strftime("%Y-%m")
    else:
        number = scope.remembered(kind, lambda: "".join(str(rng.randint(0, 9)) for _ in range(10)))
        yield number
        yield f"{scope.site('').place.code}{rng.randint(10, 99)}{number}"


def _luhn(body: str) -> str:
    """``body`` with the check digit that makes it pass the Luhn test (a test card number)."""
    total = 0
    for i, c in enumerate(reversed(body)):
        digit = int(c) * (2 if i % 2 == 0 else 1)
        total += digit - 9 if digit > 9 else digit
    return body + str((10 - total % 10) % 10)


# ---------------------------------------------------------------- given values


def _adopt_place(scope: Scope, kind: Kind, value: Any) -> Site | None:
    if kind.field == "latitude" and isinstance(value, int | float) and not isinstance(value, bool):
        # A latitude given back (from a geocoded city) names that city: its weather is its own.
        place = data.PLACE_AT_LATITUDE.get(round(float(value), 2))
        return scope._new_site(place) if place is not None else None
    text = str(value).split(",")[0].strip().lower()
    place = data.PLACE_INDEX.get(text)
    return scope._new_site(place) if place is not None else None


_EMAIL_NAME = re.compile(r"([a-z]{2,})[._]([a-z]{2,})@", re.IGNORECASE)


def _adopt_person(scope: Scope, kind: Kind, value: Any) -> Person | None:
    person = scope._new_person()
    text = str(value)
    if kind.field == "full_name" and " " in text.strip():
        person.first, _, person.last = text.strip().partition(" ")
    elif kind.field == "first_name":
        person.first = text
    elif kind.field == "last_name":
        person.last = text
    elif kind.field == "email" and "@" in text:
        person.email = text
        # "omar.booker@example.net" is Omar Booker's: the account found by it bears that name.
        named = _EMAIL_NAME.match(text)
        if named is not None:
            person.first, person.last = named.group(1).title(), named.group(2).title()
    elif kind.field == "username":
        person.username = text
    else:
        return None
    return person


def _adopt_date(scope: Scope, kind: Kind, value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "").replace(" ", "T")[:19])
    except ValueError:
        return None


def _adopt_id(scope: Scope, kind: Kind, value: Any) -> _Ident | None:
    digits = re.sub(r"\D", "", str(value))
    if not digits or len(digits) > 15:
        return None
    return _Ident(number=int(digits), uuid=str(uuid.UUID(int=scope.rng.getrandbits(128), version=4)))


_ADOPT: dict[str, Callable[[Scope, Kind, Any], Any]] = {
    "place": _adopt_place,
    "person": _adopt_person,
    "date": _adopt_date,
    "id": _adopt_id,
}


_RENDER: dict[str, Callable[[Scope, Kind, Mapping[str, Any], str], Iterator[Any]]] = {
    "person": _person,
    "place": _place,
    "date": _date,
    "id": _id,
    "money": _money,
    "account": _account,
    **THINGS,
}
