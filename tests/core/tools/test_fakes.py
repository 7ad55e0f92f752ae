"""Tests of realistic, schema-valid values (fms_dgt/core/tools/fakes.py and its private tables)."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from fms_dgt.core.tools._fake_data import CITIES, PLACE_INDEX
from fms_dgt.core.tools.fakes import Kind, Scope, classify, fake, fit
from fms_dgt.core.tools.synth import MAX_STRING, SynthesisError, synthesise

REPO = Path(__file__).resolve().parents[3]
SEEDS = range(40)


def _valid(schema: dict[str, Any], value: Any) -> bool:
    return bool(Draft202012Validator(schema).is_valid(value))


def _object(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(props)}


@pytest.mark.parametrize(
    ("name", "options", "expected"),
    [
        ("first_name", {}, Kind("person", "first_name")),
        ("lastName", {}, Kind("person", "last_name")),
        ("email", {}, Kind("person", "email")),
        ("recipient_email", {}, Kind("person", "email", "other")),
        ("userId", {}, Kind("id", "user")),
        ("order_id", {}, Kind("id", "order")),
        ("id", {"topic": "get_order"}, Kind("id", "order")),
        ("city", {}, Kind("place", "city")),
        ("destination", {}, Kind("place", "city", "destination")),
        ("country_code", {}, Kind("place", "country_code")),
        ("check_in", {}, Kind("date", "start")),
        ("checkOutDate", {}, Kind("date", "end")),
        ("return_date", {}, Kind("date", "end")),
        ("created_at", {}, Kind("date", "past")),
        ("to_currency", {}, Kind("money", "currency", "target")),
        ("phone_number", {}, Kind("person", "phone")),
        ("file", {"fmt": "binary"}, Kind("file", "document")),
        ("contact", {"fmt": "email"}, Kind("person", "email")),
        ("name", {"description": "The name of the city."}, Kind("place", "city")),
        ("name", {"parent": "passengers"}, Kind("person", "full_name")),
        ("to", {"description": "Recipient email address"}, Kind("person", "email", "other")),
        ("from", {"description": "Source currency code"}, Kind("money", "currency")),
        ("day", {"kind": "integer"}, Kind("number", "day")),
        ("days", {}, Kind("number", "days")),
        ("time", {"kind": "number"}, None),
        ("q", {}, Kind("text", "query")),
        ("zork", {}, None),
        # A weather tool's condition is the sky's; an item's is new or used, a patient's unknown.
        ("condition", {"topic": "get_product"}, Kind("misc", "sort:condition:item")),
        ("condition", {"topic": "get_weather"}, Kind("misc", "weather")),
        ("conditions", {"description": "Current weather at the place"}, Kind("misc", "weather")),
        ("condition", {"topic": "get_patient"}, None),
        # An uploaded file's size is bytes; a page's size is a count.
        ("size", {"topic": "uploadPhoto", "kind": "integer"}, Kind("number", "bytes")),
        ("size", {"topic": "list_shirts", "kind": "integer"}, Kind("number", "count")),
        # A photo's caption is a caption, not a product description.
        ("caption", {"topic": "uploadPhoto"}, Kind("text", "caption")),
        ("caption", {"topic": "create_post"}, Kind("text", "description")),
        # A plural names what each of its items is (BFCL's intermediaryCities were "river-946").
        ("intermediaryCities", {}, Kind("place", "city")),
        ("symptoms", {"kind": "string"}, Kind("misc", "symptom")),
        ("status", {}, Kind("misc", "status")),
        # An address's lines: the street, then a flat or suite (not the whole address again).
        ("address1", {}, Kind("place", "street")),
        ("address2", {}, Kind("place", "unit")),
        ("Last Refreshed", {}, Kind("date", "past")),
        ("start_date_gte", {}, Kind("date", "start")),
        ("start_date_lte", {}, Kind("date", "end")),
        ("occurred_after", {}, Kind("date", "past")),  # When2Call's events: was "ember-684"
        ("occurred_before", {}, Kind("date", "now")),  # (both bounds were one day)
        (
            "p",
            {"description": "The probability of success in each trial.", "kind": "number"},
            Kind("number", "probability"),
        ),
        ("exponent", {"kind": "number"}, Kind("number", "exponent")),
        ("precision", {"kind": "integer"}, Kind("number", "places")),  # a square root to 46 places
        ("base", {"topic": "logarithm", "kind": "number"}, Kind("number", "log_base")),  # was 85.85
        ("places", {"kind": "string"}, Kind("place", "location")),  # places are no decimal places
        # a ticket's priority 1-5 (was 13) or "high"; its resolution a note; a video's 1080p
        ("priority", {"kind": "integer"}, Kind("number", "priority")),
        ("priority", {"kind": "string"}, Kind("misc", "priority_level")),
        ("resolution", {"topic": "resolve_ticket", "kind": "string"}, Kind("text", "resolution")),
        ("resolution", {"topic": "getVideo", "kind": "string"}, Kind("misc", "video_resolution")),
        # whole words only: a delivery is no live stream, a job application's state no DAG run's
        ("resolution", {"topic": "track_delivery_ticket", "kind": "string"}, Kind("text", "resolution")),
        (
            "state",
            {"parent": "address", "topic": "create_job_application", "kind": "string"},
            Kind("place", "region"),
        ),
        ("queue", {"topic": "print_job", "kind": "string"}, None),  # a printer's queue is no task's
        # a display name is the name: PeerTube made a playlist displayed as "Carl Ali"
        ("displayName", {"topic": "addPlaylist", "kind": "string"}, Kind("text", "title:playlist")),
        ("displayName", {"parent": "account", "kind": "string"}, Kind("person", "full_name")),
        ("display_name", {"topic": "createUser"}, Kind("person", "full_name")),
        # SEC's HtmlFileName was a title, searched for as a business review's query
        ("HtmlFileName", {"kind": "string"}, Kind("file", "document")),
        ("user_agent", {"kind": "string"}, Kind("misc", "user_agent")),  # was "atlas-640"
        ("post_id", {"kind": "string"}, Kind("id", "post")),  # API-Bank's post ids were postcodes
        ("post_code", {"kind": "string"}, Kind("place", "postcode")),
        ("Exchange Rate", {"kind": "string"}, Kind("number", "exchange_rate")),  # Alpha Vantage's
        ("rate", {"kind": "number"}, None),  # a rate alone may be any rate
        ("tagsAllOf", {}, classify("tags")),  # PeerTube's filters: tagsAllOf were fillers
        ("favicon", {}, Kind("web", "image_url")),
        ("biography", {}, Kind("text", "description:profile")),
        ("name", {"topic": "LocalBusinessData"}, Kind("company", "name")),  # was a person's name
        # PeerTube's startTimestamp (format seconds) is seconds into a video, not 1794736800
        ("startTimestamp", {"fmt": "seconds", "kind": "integer"}, Kind("number", "seconds")),
        ("licences", {}, Kind("misc", "licence")),  # PeerTube's video licences were fillers
        # An Airflow DAG's description was "Stainless steel bottle that keeps drinks cold"; a
        # job's description stays a description
        ("description", {"topic": "get_dag", "kind": "string"}, Kind("text", "description:workflow")),
        ("doc_md", {"topic": "get_dag_details", "kind": "string"}, Kind("text", "description:workflow")),
        ("description", {"topic": "search_job", "kind": "string"}, Kind("text", "description")),
        ("template_field", {"topic": "get_tasks", "kind": "string"}, Kind("misc", "template_field")),
        ("dag_id_pattern", {"topic": "get_dags", "kind": "string"}, Kind("misc", "dag_pattern")),
        # Up's money value read as its currency code ("value JPY"): the description says an amount
        (
            "value",
            {"description": "The amount of money, formatted in the relevant currency."},
            Kind("money", "amount"),
        ),
        # Airflow's schedule interval: {"__type": "CronExpression", "value": "0 6 * * *"}.
        ("value", {"parent": "schedule_interval"}, Kind("misc", "cron")),
        ("value", {"parent": "balance"}, None),
    ],
)
def test_what_a_name_stands_for(name: str, options: dict[str, str], expected: Kind | None) -> None:
    assert classify(name, **options) == expected


def test_a_weather_condition_a_file_size_and_a_caption_read_as_what_they_are() -> None:
    from fms_dgt.core.tools._fake_data import CAPTIONS, WEATHER_CONDITIONS

    schema = _object(condition={"type": "string"}, size={"type": "integer"}, caption={"type": "string"})
    for seed in SEEDS:
        weather = fake(schema, random.Random(seed), topic="get_current_weather")
        assert weather["condition"] in WEATHER_CONDITIONS
        upload = fake(schema, random.Random(seed), topic="upload_photo")
        assert 20_000 <= upload["size"] <= 4_000_000
        assert upload["caption"] in CAPTIONS


def test_a_persons_email_and_username_come_from_their_name() -> None:
    schema = _object(first_name={"type": "string"}, last_name={"type": "string"}, email={"type": "string"})
    for seed in SEEDS:
        value = fake(schema, random.Random(seed))
        first, last = (re.sub(r"[^a-z]", "", value[k].lower()) for k in ("first_name", "last_name"))
        assert value["email"].startswith(f"{first}.{last}@"), value
        assert value["email"].split("@")[1].endswith(("example.com", "example.org", "example.net"))


def test_a_city_comes_with_its_own_country_code_and_coordinates() -> None:
    schema = _object(
        city={"type": "string"},
        country={"type": "string"},
        country_code={"type": "string", "pattern": "^[A-Z]{2}$"},
        latitude={"type": "number", "minimum": -90, "maximum": 90},
        timezone={"type": "string"},
    )
    cities = set()
    for seed in SEEDS:
        value = fake(schema, random.Random(seed))
        place = PLACE_INDEX[value["city"].lower()]
        assert (value["country"], value["country_code"]) == (place.country, place.code)
        assert (value["latitude"], value["timezone"]) == (place.latitude, place.timezone)
        cities.add(value["city"])
    assert len(cities) > 10, "cities vary with the seed"


def test_an_end_comes_after_its_start_in_iso_formats() -> None:
    schema = _object(
        check_in={"type": "string", "format": "date"},
        check_out={"type": "string", "format": "date"},
        start_time={"type": "string", "format": "date-time"},
        end_time={"type": "string", "format": "date-time"},
    )
    for seed in SEEDS:
        value = fake(schema, random.Random(seed))
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", value["check_in"])
        assert value["check_in"] < value["check_out"]
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", value["start_time"])
        assert value["start_time"] < value["end_time"]
        assert value["check_in"].startswith(("2026", "2027")), "dates are drawn around a fixed anchor"


def test_a_date_format_in_the_description_is_followed() -> None:
    for description, shape in (
        ("The start time. Format: %Y-%m-%d %H:%M:%S", r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}"),
        ("The date in yyyy-mm-dd format.", r"\d{4}-\d{2}-\d{2}"),
        ("Departure date as MM/DD/YYYY", r"\d{2}/\d{2}/\d{4}"),
    ):
        value = fake({"type": "string", "description": description}, random.Random(1), name="date")
        assert re.fullmatch(shape, value), (description, value)
        if "%m" in description or "mm" in description:
            assert 1 <= int(value[5:7]) <= 12, "MM before the hours is the month"


def test_file_names_look_like_file_names_and_ids_like_their_entity() -> None:
    schema = _object(
        file={"type": "string", "format": "binary"},
        filename={"type": "string"},
        user_id={"type": "string"},
        order_id={"type": "integer"},
        photo={"type": "string"},
    )
    for seed in SEEDS:
        value = fake(schema, random.Random(seed))
        assert re.fullmatch(r"[a-z_]+_\d{2,4}(_\d{2})?\.[a-z0-9]+", value["filename"]), value
        assert value["file"] == value["filename"], "one file per scope"
        assert value["photo"].endswith((".jpg", ".png"))
        assert re.fullmatch(r"usr-\d{5}", value["user_id"])
        assert isinstance(value["order_id"], int)


def test_the_file_of_a_photo_upload_is_a_photo() -> None:
    # uploadPhoto's binary ``file`` of a pet was drawn among every image, receipts and scans too
    # ("upload a photo for pet 1 with file receipt_13.png"); a picture of something is a photo.
    upload = _object(file={"type": "string", "format": "binary"}, caption={"type": "string"})
    photo = re.compile(r"(photo|IMG|snapshot|portrait|picture)_[\d_]+\.(jpg|png)")
    stems = set()
    for seed in SEEDS:
        for topic in ("uploadPhoto", "set_profile_picture"):
            value = fake(upload, random.Random(seed), topic=topic)["file"]
            assert photo.fullmatch(value), (topic, value)
            stems.add(value.split("_")[0])
        named = fake(_object(photo={"type": "string"}), random.Random(seed))["photo"]
        assert named.endswith((".jpg", ".png"))
    assert len(stems) >= 3
    # An image that is not said to be a photo may still be any image.
    drawn = {fake(upload, random.Random(s), topic="upload_image")["file"].split("_")[0] for s in range(60)}
    assert drawn & {"screenshot", "scan", "diagram", "receipt"}


def test_description_examples_shape_ids_and_give_values() -> None:
    schema = _object(
        order_id={"type": "string", "description": "The order id, such as '#W0000000'."},
        category={"type": "string", "description": "The field, such as 'Physics' or 'Chemistry'."},
    )
    seen = set()
    for seed in SEEDS:
        value = fake(schema, random.Random(seed))
        assert re.fullmatch(r"#W\d{7}", value["order_id"]) and value["order_id"] != "#W0000000"
        seen.add(value["category"])
    assert seen == {"Physics", "Chemistry"}


def test_every_value_still_satisfies_its_schema() -> None:
    schema = _object(
        city={"type": "string", "maxLength": 4},
        country_code={"type": "string", "pattern": "^[a-z]{3}$"},
        email={"type": "string", "pattern": "^[0-9]+$"},
        amount={"type": "number", "minimum": 1000, "maximum": 1001, "multipleOf": 0.5},
        limit={"type": "integer", "exclusiveMinimum": 50, "maximum": 52},
        currency={"enum": ["XAU", "XAG"]},
        status={"const": "archived"},
        title={"type": "string", "minLength": 80},
        tags={"type": "array", "items": {"enum": ["a", "b", "c"]}, "minItems": 2},
    )
    for seed in SEEDS:
        value = fake(schema, random.Random(seed))
        assert _valid(schema, value), value
        assert len(set(value["tags"])) == len(value["tags"]), "no repeats when the schema allows"


def test_values_are_seeded_and_independent_of_other_random_sources() -> None:
    import faker

    schema = _object(name={"type": "string"}, message={"type": "string"}, password={"type": "string"})
    first = [fake(schema, random.Random(seed)) for seed in SEEDS]
    random.seed(99)
    faker.Faker.seed(12345)
    assert [fake(schema, random.Random(seed)) for seed in SEEDS] == first
    assert len({v["name"] for v in first}) > 20


def test_the_synthesis_bounds_still_apply() -> None:
    with pytest.raises(SynthesisError, match="at least"):
        fake({"type": "string", "minLength": MAX_STRING + 1}, random.Random(1), name="title")


def test_what_the_vocabulary_does_not_know_is_plain_synthesis() -> None:
    schema = _object(zork={"type": "string", "pattern": "^Z[0-9]{3}$"}, flag={"type": "boolean"})
    value = fake(schema, random.Random(3))
    assert re.fullmatch(r"Z\d{3}", value["zork"]) and isinstance(value["flag"], bool)


def test_a_list_given_makes_its_first_item_the_entity() -> None:
    # When2Call's filter_stocks_by_price was given ["TSLA", "AAPL"]: the record's ticker is TSLA,
    # not the list (whose every rendering failed the result's string items, leaving fillers).
    scope = Scope(random.Random(3))
    scope.adopt(Kind("item", "ticker"), ["TSLA", "AAPL"])
    assert fake({"type": "string"}, random.Random(4), name="stock", scope=scope) == "TSLA"
    nested = Scope(random.Random(3))
    nested.adopt(Kind("item", "ticker"), [["TSLA"]])
    assert "item.ticker@" not in nested.snapshot()


def test_one_scope_keeps_its_entities_across_values() -> None:
    scope = Scope(random.Random(5))
    first = fake(_object(user_id={"type": "string"}, city={"type": "string"}), random.Random(1), scope=scope)
    second = fake(
        _object(customer_id={"type": "integer"}, country_code={"type": "string"}),
        random.Random(2),
        scope=scope,
    )
    assert first["user_id"] == f"usr-{second['customer_id']}"
    assert PLACE_INDEX[first["city"].lower()].code == second["country_code"]


def test_fit_checks_the_scalar_keywords() -> None:
    assert fit("ab", {"type": "string", "maxLength": 2, "pattern": "^a"})
    assert not fit("abc", {"type": "string", "maxLength": 2})
    assert not fit(1, {"type": "boolean"}) and not fit(True, {"enum": [1]})
    assert not fit(3, {"type": "integer", "multipleOf": 2}) and fit(4.0, {"type": "integer"})
    assert not fit("2026-01-01", {"type": "string", "format": "date-time"})


def test_the_city_table_is_consistent() -> None:
    assert len(CITIES) >= 50
    for place in CITIES:
        assert re.fullmatch(r"[A-Z]{2}", place.code) and re.fullmatch(r"[A-Z]{3}", place.code3)
        assert -90 <= place.latitude <= 90 and -180 <= place.longitude <= 180
        assert re.fullmatch(r"[A-Z]{3}", place.currency) and place.timezone.count("/") >= 1


def test_the_same_values_in_another_process_and_hash_seed() -> None:
    code = (
        "import random, json;"
        "from fms_dgt.core.tools.fakes import fake;"
        "s = {'type': 'object', 'properties': {k: {'type': 'string'} for k in "
        "('name', 'email', 'city', 'country_code', 'check_in', 'message', 'password', 'user_id', 'word')}};"
        "print(json.dumps([fake(s, random.Random(i), optional_probability=1) for i in range(20)]))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            cwd=REPO,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "987")
    }
    assert len(outputs) == 1 and "@" in outputs.pop()


def test_a_scopes_faker_draws_do_not_depend_on_other_scopes_of_the_thread() -> None:
    def words(interleave: bool) -> list[str]:
        mine, other = Scope(random.Random(1)), Scope(random.Random(2))
        out = []
        for _ in range(5):
            out.append(mine.faker.word())
            if interleave:
                other.faker.sentence()
        return out

    assert words(False) == words(True)


@pytest.mark.parametrize(
    ("name", "description", "parent", "family", "field"),
    [
        ("src", "The text to be translated.", "", "text", "message"),  # by its description
        ("transcript", "", "", "text", "message"),
        ("translated_text", "", "", "text", "message"),  # by its head word
        ("meeting_topic", "", "", "text", "keyword"),
        ("watched_movies", "", "", "text", "work"),
        ("queued_when", "", "", "date", "start"),
        ("self", "", "links", "web", "url"),  # JSON:API and HAL links
        ("order_by", "", "", "misc", "sort"),
        ("sort_order", "", "", "misc", "direction"),
        ("new_appointment_doctor", "", "", "person", "full_name"),
        ("unit_in", "", "", "misc", "unit"),  # When2Call's si_unit_conversion had unit_in 'river-4'
        ("litecoin_block_hash", "", "", "misc", "token"),
        ("game", "", "", "text", "work:game"),
        ("actors_images", "", "", "file", "image"),
        ("owner_response_timestamp", "", "", "date", "start"),
        ("provinceOrState", "", "", "place", "region"),
        ("excerpt", "", "", "text", "message"),
        ("members", "", "", "person", "full_name"),
        ("question", "", "", "text", "query"),
        ("cik", "", "", "misc", "cik"),
        ("has_parking", "", "", "misc", "flag"),  # a yes-or-no written as text
        ("minpopulation", "", "", "number", "population"),
        ("max_cursor", "", "", "misc", "token"),
        ("version", "", "", "misc", "version"),
        # Items of lists with no item schema, by the list's name made singular (NESTFUL's Instagram).
        ("tagged_user", "", "", "person", "username"),
        ("top_liker", "", "", "person", "username"),
        ("bio_link", "", "", "web", "url"),
        ("account_badge", "", "", "misc", "badge"),
        ("upcoming_event", "", "", "text", "title"),
        ("movie_recommendation", "", "", "text", "work"),  # a pick is what it picks
        ("product_suggestion", "", "", "item", "product"),
        ("hiking_trail", "", "", "misc", "trail"),
        ("cars", "", "", "misc", "car"),
        ("owners", "", "", "person", "username"),  # Airflow's DAG owners
        ("dial_code", "", "", "place", "calling_code"),
        ("previewfile", "", "", "file", "image"),  # PeerTube's upload: a preview is a picture
        ("name", "The name of the scene.", "", "misc", "scene"),  # API-Bank: no "Marissa Jones"
        ("name", "The name of the smart device.", "", "misc", "device"),
        ("name", "The name of the playing field.", "", "text", "title"),  # a thing, not a person
        ("name", "The name of the patient.", "", "person", "full_name"),
        ("name", "The name of the video.", "", "text", "work:video"),  # PeerTube: no "Dentist appointment"
        ("name", "The name of the profile.", "", "text", "title"),  # no file in "profile"
        ("name", "", "account", "person", "username"),  # PeerTube's account.name: no account number
        ("name", "The name of the competition.", "", "text", "title"),  # no pet in "competition"
        ("order_type", "", "", "misc", "order_type"),
        # ToolMind and NESTFUL lists that were fillers ("river-12"): what a recipe, a symptom
        # search, a hotel, a playlist, Reddit and the SEC take.
        ("book_recommendation", "", "", "text", "work"),
        ("ingredient", "", "", "misc", "ingredient"),
        ("symptom", "", "", "misc", "symptom"),
        ("mood", "", "", "misc", "mood"),
        ("room_type", "The type of room preferred.", "", "misc", "room_type"),
        ("nationality", "", "", "misc", "nationality"),
        ("subreddit", "", "", "misc", "subreddit"),
        ("formType", "", "", "misc", "form_type"),
        ("fileloc", "The absolute path to the file.", "", "file", "path"),
    ],
)
def test_names_read_by_description_head_word_or_parent(
    name: str, description: str, parent: str, family: str, field: str
) -> None:
    found = classify(name, description, parent=parent, kind="string")
    assert found is not None and (found.family, found.field) == (family, field), found


def test_a_workflow_schedulers_words_are_its_own() -> None:
    # Airflow's task instances said "queue signal-5, pool river-7, operator maple-3" (2,094
    # fillers in 60 records); a calculator's operator and a chat's queue stay unknown.
    assert classify("queue", parent="task_instances", topic="get_task_instances", kind="string") == (
        "misc",
        "task_queue",
        "",
    )
    assert classify("operator", topic="get_task_instance", kind="string") == ("misc", "task_operator", "")
    assert classify("kwargs", parent="trigger", kind="string") == ("misc", "json_settings", "")
    assert classify("operator", topic="calculate", kind="string") is None
    # a DAG run's state is no Indian city ("show DAG runs with state Delhi")
    assert classify("state", topic="get_dag_runs", kind="string") == ("misc", "run_state", "")
    assert classify("state", topic="get_address", kind="string") != ("misc", "run_state", "")
    assert classify("queue", topic="list_messages", kind="string") is None
    rng = random.Random(2)
    operators = {fake({"type": "string"}, rng, name="operator", topic="get_task_instance") for _ in range(20)}
    assert operators and all(o.endswith("Operator") for o in operators), operators
    settings = fake({"type": "string"}, rng, name="kwargs", topic="get_triggers")
    assert isinstance(json.loads(settings), dict), settings


def test_a_list_without_an_item_schema_takes_items_its_name_says() -> None:
    rng = random.Random(3)
    users = fake({"type": "array", "minItems": 2}, rng, name="tagged_users")
    badges = fake({"type": "array", "minItems": 2}, rng, name="account_badges")
    assert all(isinstance(u, str) and u and " " not in u for u in users), users  # handles
    assert set(badges) <= {"Verified", "Top Contributor", "Early Adopter", "Rising Star", "Community Helper"}
    assert classify("list", kind="string") is None and classify("recommendations", kind="string") is None


def test_a_name_its_pattern_keeps_to_lower_case_is_a_handle() -> None:
    # PeerTube's actor name: "immutable name of the user", ^[a-z0-9._]+$, example "chocobozzz".
    schema = {
        "type": "string",
        "pattern": "^[a-z0-9._]+$",
        "description": "immutable name of the user, used to find or mention its actor",
    }
    names = {fake(schema, random.Random(seed), name="name") for seed in range(5)}
    assert len(names) == 5 and all(re.fullmatch(r"[a-z0-9._]+", n) for n in names), names


def test_descriptions_of_a_location_and_of_its_sort() -> None:
    # NESTFUL's TripadvisorSearchLocation: its name was "Rebecca Rogers", its type "Hanoi", and
    # Goodreads' likes "s the quote has received" (the "like" in "likes" read as "for example").
    assert classify("name", "The name of the location", kind="string") == ("place", "city", "")
    sort = {"type": "string", "description": "The type of location (e.g., city, region, country)"}
    assert {fake(sort, random.Random(seed), name="type") for seed in range(6)} <= {
        "city",
        "region",
        "country",
    }
    likes = {"type": "string", "description": "Number of likes the quote has received."}
    assert "quote" not in fake(likes, random.Random(1), name="likes")


def test_a_voice_services_announcement_file_is_a_recording() -> None:
    found = classify("filename", parent="announcement", topic="get_customers_by_account_announcements")
    assert found == ("file", "audio", ""), found
    assert classify("filename", topic="list_documents") == ("file", "document", "")


def test_a_datetime_format_spelled_without_its_hyphen_is_a_moment() -> None:
    # Airflow writes format: datetime (the standard's date-time) for a job's latest_heartbeat.
    made = fake({"type": "string", "format": "datetime"}, random.Random(1), name="latest_heartbeat")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", made), made


def test_an_end_written_as_a_date_is_days_after_its_start() -> None:
    # API-Bank's BookHotel: "Format: %Y-%m-%d" for both; a stay is no same-day check-out. With a
    # time of day in the pattern the end is later the same day (a meeting).
    def dates(pattern: str) -> tuple[str, str]:
        described = {"type": "string", "description": f"The time. Format: {pattern}"}
        schema = {
            "type": "object",
            "properties": {"check_in_time": described, "check_out_time": described},
            "required": ["check_in_time", "check_out_time"],
        }
        made = fake(schema, random.Random(4))
        return made["check_in_time"], made["check_out_time"]

    start, end = dates("%Y-%m-%d")
    assert len(start) == 10 and end > start, (start, end)
    start, end = dates("%Y-%m-%d %H:%M:%S")
    assert end[:10] == start[:10] and end > start, (start, end)


def test_a_sort_field_and_direction_are_drawn_from_their_lists() -> None:
    rng = random.Random(2)
    assert fake({"type": "string"}, rng, name="sort_order") in ("asc", "desc")
    assert fake({"type": "string"}, rng, name="order_by").lstrip("-") in (
        "name",
        "created_at",
        "updated_at",
        "start_date",
    )


def test_names_of_no_words_and_flags_have_no_kind() -> None:
    # A property named "1" (a map keyed by numbers) crashed PeerTube's licences with IndexError.
    for name in ("", "1", "_", "__"):
        assert classify(name, "", kind="string") is None
    # preventEmailDelivery is a flag, not the user's email; "object id" names no entity.
    assert classify("preventEmailDelivery", "Do not send an email", kind="boolean") is None
    found = classify("id", "The object id, uuid or short uuid", topic="post_api_v1_videos_by_id_comments")
    assert found is not None and found.field == "video"


def test_a_one_of_takes_the_form_a_call_gave() -> None:
    # PeerTube's video id is an integer, a UUID or a short UUID: once a call used 42, the next
    # takes 42 again (35 of 40 pairs of calls disagreed on the video before).
    schema = {
        "type": "object",
        "properties": {
            "id": {
                "description": "The video id, uuid or short uuid",
                "oneOf": [
                    {"type": "integer", "minimum": 1},
                    {"type": "string", "format": "uuid"},
                    {"type": "string", "pattern": "^[a-zA-Z0-9]{22}$"},
                ],
            }
        },
        "required": ["id"],
    }
    for seed in range(10):
        scope = Scope(random.Random(seed))
        first = fake(schema, random.Random(seed), scope=scope, topic="get_video")["id"]
        again = fake(schema, random.Random(seed + 100), scope=scope, topic="get_video")["id"]
        assert again == first


def test_overlapping_one_of_branches_still_give_a_value() -> None:
    # Vonage's SMS answer is one of two objects neither of which requires a property: every
    # value is valid under both, so strictly under neither; a value valid under one is taken.
    schema = {
        "oneOf": [
            {"type": "object", "properties": {"error-text": {"type": "string"}}},
            {"type": "object", "properties": {"message-id": {"type": "string"}}},
        ]
    }
    value = synthesise(schema, random.Random(1))
    assert isinstance(value, dict) and set(value) <= {"error-text", "message-id"}
    with pytest.raises(SynthesisError):
        synthesise({"type": "string", "pattern": "^a$", "minLength": 2}, random.Random(1))


def test_an_example_listing_alternatives_gives_one_of_them() -> None:
    # PeerTube's handles: "my_username | my_username@example.com" is either form, not one name.
    schema = {"type": "string", "examples": ["my_username | my_username@example.com"]}
    drawn = {fake(schema, random.Random(seed), name="subscriptionHandle") for seed in range(20)}
    assert drawn == {"my_username"}  # the first, so that every call of a record takes the same
    assert classify("isoCode", "", parent="countries", kind="string") == Kind("place", "country_code", "")


def test_the_far_end_of_something_is_another_one() -> None:
    # SkyScrapper's flight search went from sky-90162 to sky-90162: one airport id for both ends.
    origin = classify("originSkyId", "", kind="string")
    destination = classify("destinationSkyId", "", kind="string")
    assert origin is not None and destination is not None
    assert origin.field == destination.field == "sky" and origin.key != destination.key
    assert re.fullmatch(r"\d{10}", fake({"type": "string"}, random.Random(1), name="cik"))


def test_a_property_two_parts_of_an_all_of_define_satisfies_both() -> None:
    # PeerTube's VideoDetails: the summary's channel name is any string, the full channel's a
    # handle (^[a-z0-9._]+$); one in six getVideo results failed to synthesise.
    summary = {
        "type": "object",
        "properties": {"channel": {"type": "object", "properties": {"name": {"type": "string"}}}},
    }
    handle = {"type": "string", "pattern": "^[a-z0-9._]+$"}
    full = {"type": "object", "properties": {"channel": {"$ref": "#/$defs/Channel"}}}
    schema = {
        "$defs": {
            "Summary": summary,
            "Full": full,
            "Channel": {"type": "object", "properties": {"name": handle}},
        },
        "allOf": [{"$ref": "#/$defs/Summary"}, {"$ref": "#/$defs/Full"}],
    }
    validator = Draft202012Validator(schema)
    for seed in range(30):
        value = synthesise(schema, random.Random(seed), optional_probability=1.0)
        assert validator.is_valid(value), value
        assert re.fullmatch("[a-z0-9._]+", value["channel"]["name"])


def test_a_string_with_a_pattern_and_a_format_follows_the_pattern() -> None:
    magnet = {"type": "string", "format": "uri", "pattern": "(?i)magnet:\\?xt=urn:[a-z0-9]+:[a-z0-9]{32}"}
    for seed in range(10):
        assert synthesise(magnet, random.Random(seed)).lower().startswith("magnet:?xt=urn:")


def test_a_uuid_id_is_the_records_own_and_one_example_names_one_entity() -> None:
    # Codat gives companyId and accountId the one example 8a210b68-...; every record had that
    # company, and it was its account too.
    example = "8a210b68-6988-11ed-a1eb-0242ac120002"
    uuid_id = {"type": "string", "format": "uuid", "example": example}
    schema = {
        "type": "object",
        "properties": {"companyId": uuid_id, "accountId": uuid_id},
        "required": ["companyId", "accountId"],
    }
    made = [fake(schema, random.Random(seed)) for seed in range(5)]
    assert all(m["companyId"] != m["accountId"] for m in made), made
    assert len({m["companyId"] for m in made}) == 5
    plain = {
        "type": "object",
        "properties": {
            "userId": {"type": "string", "example": "u-1"},
            "orderId": {"type": "string", "example": "u-1"},
        },
        "required": ["userId", "orderId"],
    }
    made_plain = fake(plain, random.Random(1))
    assert made_plain["userId"] != made_plain["orderId"], made_plain


def test_sums_of_money_have_their_natural_range() -> None:
    # API-Bank's GetOccupationSalary answered a salary of 447.81.
    def drawn(name: str) -> list[float]:
        return [fake({"type": "number"}, random.Random(seed), name=name) for seed in range(20)]

    assert all(28_000 <= v <= 160_000 for v in drawn("salary"))
    assert all(600 <= v <= 3_500 for v in drawn("monthly_rent"))
    assert all(5 <= v <= 500 for v in drawn("price"))


def test_a_tool_telling_the_date_tells_the_records_today() -> None:
    # API-Bank's GetToday answered a day weeks after the record's other dates began.
    assert classify("date", topic="GetToday", kind="string") == ("date", "now", "")
    assert classify("current_time", kind="string") == ("date", "now", "")
    assert classify("date", topic="book_flight", kind="string") == ("date", "start", "")
    scope = Scope(random.Random(1))
    assert scope.moment("now").date() == scope.today.date() < scope.moment("start").date()


def test_an_example_written_as_an_assignment_gives_its_value() -> None:
    # WeatherAPI's q: "city name e.g.: q=Paris" asked for the weather of "q=Paris".
    from fms_dgt.core.tools._fake_values import examples_in

    assert examples_in("Query parameter, e.g.: q=Paris, US zip e.g: q=10001") == ("Paris",)
    # NESTFUL's Alpha Vantage: "The function of your choice. (In this case CURRENCY_EXCHANGE_RATE)"
    # was asked for "function maple-474"
    # Tripadvisor's "Search query for location (e.g., city name)" was asked for "city name"
    assert examples_in("Search query for location (e.g., city name)") == ()
    assert examples_in("The unit, e.g. cups") == ("cups",)
    said = "The function of your choice. (In this case CURRENCY_EXCHANGE_RATE)"
    assert examples_in(said) == ("CURRENCY_EXCHANGE_RATE",)
    assert (
        fake({"type": "string", "description": said}, random.Random(1), name="function")
        == "CURRENCY_EXCHANGE_RATE"
    )


def test_the_two_ends_of_a_distance_are_two_places() -> None:
    # BFCL's estimate_distance(cityA, cityB) measured Zurich to Zurich.
    assert classify("cityB", kind="string") == ("place", "city", "destination")
    two = {"type": "object", "properties": {"cityA": {"type": "string"}, "cityB": {"type": "string"}}}
    for seed in range(10):
        made = fake({**two, "required": ["cityA", "cityB"]}, random.Random(seed))
        assert made["cityA"] != made["cityB"], made


def test_an_object_is_named_by_its_class_where_a_property_holds_its_class_name() -> None:
    # Airflow's task retry_delay (a TimeDelta, no discriminator) carried "__type": "orbit-832".
    delta = {
        "title": "TimeDelta",
        "type": "object",
        "properties": {"__type": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["__type", "days"],
    }
    assert {synthesise(delta, random.Random(s))["__type"] for s in SEEDS} == {"TimeDelta"}
    listed = {**delta, "properties": {**delta["properties"], "__type": {"enum": ["delta"]}}}
    assert {synthesise(listed, random.Random(s))["__type"] for s in SEEDS} == {"delta"}  # the schema's own
    untitled = {k: v for k, v in delta.items() if k != "title"}
    assert len({synthesise(untitled, random.Random(s))["__type"] for s in SEEDS}) > 1


def test_a_class_name_goes_only_into_a_free_text_property() -> None:
    # A titled object's __type typed as a number, or with a pattern, took the title and no value fitted.
    for own in ({"type": "integer"}, {"type": "string", "pattern": "^[a-z]+$"}):
        schema = {
            "title": "TimeDelta",
            "type": "object",
            "properties": {"__type": own},
            "required": ["__type"],
        }
        assert _valid(schema, synthesise(schema, random.Random(1)))
    from fms_dgt.core.tools.synth import is_filler

    nested: Any = "river-1"
    for _ in range(5000):  # a reply's list nested past any stack
        nested = [nested]
    assert not is_filler(nested)
