"""Texts drawn for what they are about (``_fake_texts``): the subject read from a property's name,
the object holding it, its description and the tool's name."""

from __future__ import annotations

import random
import re

import pytest

from fms_dgt.core.tools import _fake_data as data
from fms_dgt.core.tools._fake_texts import _SLOTS, _TEXTS, drawn, texts_of
from fms_dgt.core.tools.fakes import Kind, classify, fake


@pytest.mark.parametrize(
    ("name", "description", "parent", "topic", "expected"),
    [
        # the property's own words: a video blacklisted, an Airflow timetable
        ("blacklistedReason", "", "data", "getVideos", Kind("text", "reason:moderation")),
        (
            "timetable_description",
            "Timetable/Schedule Interval description.",
            "",
            "get_dag",
            Kind("text", "description:schedule"),
        ),
        # the object holding it; an envelope says nothing, so the tool's last noun decides
        ("description", "", "channel", "getVideo", Kind("text", "description:channel")),
        ("description", "", "data", "getVideoChannels", Kind("text", "description:channel")),
        ("displayName", "", "data", "getPlaylists", Kind("text", "title:playlist")),
        ("description", "", "sla_miss", "get_task_instances", Kind("text", "description:sla")),
        # the description's first sentence, its last subject word first
        ("displayName", "Video playlist display name", "", "addPlaylist", Kind("text", "title:playlist")),
        (
            "text",
            "Text of the comment",
            "",
            "post_api_v1_videos_by_id_comment_threads",
            Kind("text", "message:comment"),
        ),
        ("title", "Title of the news article.", "news", "GetNews", Kind("text", "title:news")),
        ("title", "Title of the book.", "", "Goodreads_Get_Authors_Books", Kind("text", "title:book")),
        # a word naming one kind of thing beats one that could name many (a DAG run's note)
        (
            "note",
            "Contains manually entered notes by the user about the DagRun.",
            "dag_runs",
            "get_dag_runs",
            Kind("text", "message:workflow"),
        ),
        (
            "note",
            "The custom note to set for this Task Instance.",
            "",
            "set_mapped_task_instance_note",
            Kind("text", "message:workflow"),
        ),
        ("content", "The content of the note", "", "add_note", Kind("text", "message:note")),
        ("content", "The content of the agenda.", "", "AddAgenda", Kind("text", "message:reminder")),
        # a subject with no texts of that field keeps the field's own (a webhook's request body)
        (
            "body",
            "The payload that was sent in the request body.",
            "request",
            "get_webhooks_by_webhookId_logs",
            Kind("text", "message"),
        ),
        ("message", "The content of the message", "", "send_message", Kind("text", "message")),
        # an account's name in a bank's app; a social network's page
        (
            "displayName",
            "The name associated with the account in the Up application.",
            "attributes",
            "get_accounts_by_id",
            Kind("text", "title:account"),
        ),
        (
            "page_name",
            "Page name associated with the account.",
            "",
            "Instagram_Info",
            Kind("text", "title:page"),
        ),
        ("genre", "The genre of the book", "", "search_for_books", Kind("text", "genre:book")),
        ("genre", "The genre of the movie", "", "search_for_movies", Kind("text", "genre:film")),
        # a thing's tags are of that thing (petstore's pets were tagged "finance" and "follow-up")
        ("tag", "", "", "createPet", Kind("text", "tag:pet")),
        ("name", "", "tags", "get_dag", Kind("text", "tag:workflow")),
        ("label", "", "privacy", "getVideo", Kind("text", "tag")),
        # a transaction's description is its merchant
        (
            "description",
            "A short description for this transaction. Usually the merchant name for purchases.",
            "attributes",
            "get_transactions",
            Kind("company", "name"),
        ),
    ],
)
def test_a_text_is_drawn_for_what_it_is_about(
    name: str, description: str, parent: str, topic: str, expected: Kind
) -> None:
    assert classify(name, description, parent, topic, "", "string") == expected


def _pattern(text: str) -> str:
    """A text of the tables as a pattern: its slots match any of their fillings."""
    parts = re.split(r"\{(\w+)\}", text)
    return "".join(
        re.escape(p) if i % 2 == 0 else "(?:" + "|".join(map(re.escape, _SLOTS[p])) + ")"
        for i, p in enumerate(parts)
    )


def test_every_subject_text_is_drawn_from_its_own_list() -> None:
    # PeerTube's blacklisted videos said "item arrived damaged"; Airflow's DAG runs "Happy birthday!"
    cases = [
        ("blacklistedReason", "", "getVideos", "reason:moderation"),
        (
            "note",
            "Contains manually entered notes by the user about the DagRun.",
            "get_dag_runs",
            "message:workflow",
        ),
        ("timetable_description", "", "get_dag", "description:schedule"),
    ]
    for name, description, topic, field in cases:
        own = texts_of(Kind("text", field))
        assert own
        for seed in range(20):
            value = fake(
                {"type": "string", "description": description}, random.Random(seed), name=name, topic=topic
            )
            assert any(re.fullmatch(_pattern(t), value) for t in own), (name, value)
            assert value not in data.REASONS + data.MESSAGES + data.DESCRIPTIONS


@pytest.mark.parametrize(
    ("name", "description", "parent", "topic"),
    [
        ("name", "immutable name of the user, used to find or mention its actor", "channel", "getVideo"),
        ("name", "The username or handle of the account", "", "getAccountVideos"),
        ("name", "username of the channel to create", "", "addVideoChannel"),
    ],
)
def test_a_name_said_to_be_a_handle_is_a_username(
    name: str, description: str, parent: str, topic: str
) -> None:
    # PeerTube's channel handles were "Team lunch" and account handles "The Glass Orchard"
    assert classify(name, description, parent, topic, "", "string") == Kind("person", "username")


def test_a_string_typed_moment_and_an_operators_class_read_as_what_they_are() -> None:
    found = classify(
        "current_time_str", "Current time in HH:MM AM/PM format.", "", "update_market_status", "", "string"
    )
    assert found is not None and found.family == "date"  # was a message ("Happy birthday!")
    assert classify("class_name", "", "class_ref", "get_tasks", "", "string") == Kind("misc", "task_operator")
    # a task instance's unixname (the user it ran as) was "Alan Turing"
    assert classify("unixname", "", "task_instances", "get_task_instances", "", "string") == Kind(
        "person", "username"
    )


def test_an_airflow_dags_source_and_file_are_code_and_a_dag_file() -> None:
    # get_dag_source's content was "Cleared after the credentials were rotated.", a DAG's fileloc
    # "/home/stephanie_mejia/documents/invoice_2026_11.txt"
    assert classify("content", "", "", "get_dag_source", "", "string") == Kind("text", "message:code")
    source = fake({"type": "string"}, random.Random(3), name="content", topic="get_dag_source")
    assert "from airflow" in source
    assert classify("fileloc", "", "", "get_dag", "", "string") == Kind("file", "dag_file")
    assert fake({"type": "string"}, random.Random(3), name="fileloc", topic="get_dag").endswith(".py")


def test_an_id_in_an_envelope_is_the_id_of_what_the_tool_is_about() -> None:
    # Up's webhooks were listed as data-10374 and deleted "for ID data-10374"
    assert classify("id", "", "data", "get_webhooks", "", "string") == Kind("id", "webhook")
    assert classify("id", "", "", "delete_webhooks_by_id", "", "string") == Kind("id", "webhook")
    assert classify("id", "", "owner", "get_webhooks", "", "string") == Kind("id", "owner")
    # what the path ends with: a transaction's tags are tags, a webhook's logs logs
    tags = classify("id", "", "data", "post_transactions_by_transactionId_relationships_tags", "", "string")
    assert tags == Kind("id", "tag")
    assert classify("id", "", "data", "get_webhooks_by_webhookId_logs", "", "string") == Kind("id", "log")


def test_things_counted_by_the_many_are_whole_numbers() -> None:
    # NESTFUL's COVID statistics: "total deaths 17.79" (read as a price) and "new deaths 97.51"
    for name in ("totalDeaths", "newDeaths", "newlyConfirmedCases", "likes", "followersCount"):
        assert classify(name, "", "stats", "GetStats", "", "number") == Kind("number", "tally"), name
    made = fake({"type": "number"}, random.Random(2), name="totalDeaths", topic="GetStats")
    assert isinstance(made, int) and made >= 3
    assert classify("comments", "", "", "getVideo", "", "array") != Kind("number", "tally")
    assert classify("total_price", "", "", "get_order", "", "number") == Kind("money", "price")


def test_a_bare_lists_items_are_what_the_tool_returns() -> None:
    # PeerTube's getCategories answered ["river-887"], getLicences a placeholder too
    strings = {"type": "array", "items": {"type": "string"}, "minItems": 2}
    categories = fake(strings, random.Random(3), topic="getCategories")
    assert set(categories) <= set(data.CATEGORIES), categories
    licences = fake(strings, random.Random(3), topic="getLicences")
    assert all("Attribution" in x or "Domain" in x for x in licences), licences
    wrapped = {"type": "object", "properties": {"data": strings}, "required": ["data"]}
    assert set(fake(wrapped, random.Random(4), topic="get_tags")["data"]) <= set(data.TAGS)


def test_a_currencys_name_is_the_name_of_the_records_currency_of_that_side() -> None:
    # Alpha Vantage's exchange rate from NZD to CHF gave "To_Currency Name": "NZD"
    names = ("From_Currency Code", "From_Currency Name", "To_Currency Code", "To_Currency Name")
    rate = {"type": "object", "properties": {n: {"type": "string"} for n in names}, "required": list(names)}
    for seed in range(6):
        made = fake(rate, random.Random(seed), topic="Alpha_Vantage_CURRENCY_EXCHANGE_RATE")
        assert made["From_Currency Code"] != made["To_Currency Code"]
        for side in ("From", "To"):
            name, code = made[f"{side}_Currency Name"], made[f"{side}_Currency Code"]
            assert name == data.faker_tables().currencies[code], made


def test_a_few_templates_make_many_texts_and_every_slot_is_filled() -> None:
    # 60 DAG run notes of one run said five sentences; templates with slots say many more
    notes = texts_of(Kind("text", "message:workflow"))
    assert notes is not None
    rng = random.Random(7)
    made = {drawn(notes, rng) for _ in range(300)}
    assert len(made) > 30
    assert not any("{" in m or "}" in m for m in made)
    for texts in _TEXTS.values():  # every slot a table names is one there is
        assert {slot for t in texts for slot in re.findall(r"\{(\w+)\}", t)} <= set(_SLOTS)


def test_a_rate_of_a_known_thing_is_a_percentage_and_a_numeric_time_zone_an_offset() -> None:
    # calculateTax's tax_rate was 357.74 (read as a price); MediaWatch's timezone 16.18
    assert classify("tax_rate", "", "", "calculateTax", "", "number") == Kind("number", "rate")
    assert classify("heart_rate", "", "", "log_workout", "", "integer") != Kind("number", "rate")
    rate = fake({"type": "number"}, random.Random(1), name="interest_rate", topic="loan")
    assert 1 <= rate <= 25
    assert classify("timezone", "", "", "MediaWatch", "", "number") == Kind("number", "utc_offset")
    offset = fake({"type": "integer"}, random.Random(1), name="timezone", topic="MediaWatch")
    assert -12 <= offset <= 14


def test_a_streams_key_its_ingest_and_a_banners_path_are_what_they_are() -> None:
    # PeerTube: streamKey "stre-35430", rtmpUrl a blog article, a banner's path meeting_notes_27.txt
    assert classify("streamKey", "", "", "getLiveId", "", "string") == Kind("misc", "token")
    assert classify("secretKey", "", "attributes", "get_webhooks", "", "string") == Kind("misc", "token")
    assert fake({"type": "string"}, random.Random(1), name="rtmpUrl", topic="getLiveId").startswith("rtmp://")
    banner = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    made = fake(
        {"type": "object", "properties": {"banners": banner}, "required": ["banners"]}, random.Random(1)
    )
    assert made["banners"]["path"].endswith((".jpg", ".png", ".jpeg", ".gif", ".webp")), made


def test_a_place_to_go_and_a_cipher_are_named_as_such() -> None:
    # glaive's search_museums took museum "signal-683", encrypt_message's algorithm "signal-419"
    assert classify("museum", "", "", "search_museums", "", "string") == Kind("item", "venue:museum")
    lot = classify("nearest_parking_lot", "", "", "find_parking", "", "string")
    assert lot == Kind("item", "venue:parking lot")
    assert fake({"type": "string"}, random.Random(2), name="nearest_parking_lot").endswith("Parking Lot")
    assert classify("algorithm", "", "", "encrypt_message", "", "string") == Kind("misc", "cipher")
    assert classify("algorithm", "", "", "sort_list", "", "string") is None


def test_a_list_of_users_lists_usernames() -> None:
    # glaive's list_users answered {"user_list": ["river-946"]}
    assert classify("user_list", "", "", "list_users", "", "array") == Kind("person", "username", "other")
    found = classify("member_list", "", "", "list_members", "", "array")  # members were people already
    assert found is not None and found.family == "person"
