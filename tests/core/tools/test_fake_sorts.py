"""Names the vocabulary knew nothing of (``_fake_sorts``): a number written as text, a year, a
rank, and one value of a sort of thing (a codec, a contact method, a news item's type), in place of
the synthesiser's ``river-191`` filler."""

from __future__ import annotations

import random
import re

import pytest

from fms_dgt.core.tools._fake_sorts import SORTS
from fms_dgt.core.tools.fakes import Kind, classify, fake

_FILLER = re.compile(r"^(?:alpha|river|orbit|maple|signal|harbor|ember|quartz|meadow|atlas)-\d+$")


@pytest.mark.parametrize(
    ("name", "description", "parent", "topic", "typed", "expected"),
    [
        # Goodreads: a count by its description, even when "total" reads like a price
        (
            "totalEditions",
            "Total number of editions available.",
            "",
            "GetAuthorsBooks",
            "string",
            ("number", "tally"),
        ),
        (
            "totalEditions",
            "Total number of editions available.",
            "",
            "GetAuthorsBooks",
            "integer",
            ("number", "tally"),
        ),
        (
            "reorderLength",
            "Number of elements to reorder",
            "",
            "reorderVideoPlaylist",
            "integer",
            ("number", "count"),
        ),
        ("likes", "", "", "Goodreads_Search_Quotes", "string", ("number", "tally")),
        ("follower_count", "", "", "Instagram_Info", "integer", ("number", "tally")),
        (
            "X-Upload-Content-Length",
            "Number of bytes that will be uploaded",
            "",
            "upload",
            "integer",
            ("number", "bytes"),
        ),
        (
            "publishedYear",
            "Year the book was published.",
            "",
            "Goodreads_Get_Authors_Books",
            "string",
            ("number", "year_past"),
        ),
        ("expiry_year", "", "", "add_card", "integer", ("number", "year")),
        ("rank", "Ranking of the book.", "", "Goodreads_Get_Authors_Books", "string", ("number", "rank")),
        ("has_shared_to_fb", "", "", "Instagram_Posts_Reels", "number", ("number", "binary")),
        ("product_rating", "", "", "Product_Search", "number", ("number", "rating")),
        # sorts by the last word, chosen by the modifier or by the object and tool around it
        ("video_codec", "", "", "Instagram_Posts_Reels", "string", ("misc", "sort:codec")),
        ("business_contact_method", "", "", "Instagram_Info", "string", ("misc", "sort:method")),
        (
            "climateMode",
            "The current climate mode set.",
            "",
            "adjustClimateControl",
            "string",
            ("misc", "sort:mode:climate"),
        ),
        ("mode", "", "", "maps.route_times", "string", ("misc", "sort:mode:travel")),
        ("product_condition", "", "", "Product_Search", "string", ("misc", "sort:condition:item")),
        (
            "period",
            "Reporting period",
            "filing",
            "SEC_Balance_Sheet",
            "string",
            ("misc", "sort:period:filing"),
        ),
        ("period", "", "", "balance_sheet", "string", ("misc", "sort:period:finance")),
        ("orientation", "", "", "get_dag_details", "string", ("misc", "sort:orientation:workflow")),
        ("activity_level", "", "", "calculate_fitness_goal", "string", ("misc", "sort:level")),
        ("type", "", "news", "Coronavirus_Smartable_GetNews", "string", ("misc", "sort:type:news")),
        (
            "type",
            "Type/category of the business.",
            "",
            "LocalBusinessData",
            "string",
            ("misc", "sort:type:business"),
        ),
        ("type", "", "", "Spotify_Scraper_Get_Artist_Overview", "string", ("misc", "sort=artist")),
        ("data_type", "", "", "push", "string", ("misc", "sort:type:data")),
        ("X-Upload-Content-Type", "", "", "uploadResumableInit", "string", ("misc", "sort:type:mime")),
        ("provider", "", "offers", "TripadvisorSearchHotels", "string", ("company", "name")),
        ("contact_phone_number", "", "", "Instagram_Info", "string", ("person", "phone")),
        # a number that counts or orders is no entity's id (an Airflow task's try_number was 15529)
        ("try_number", "", "task_instances", "get_task_instances", "integer", ("number", "count")),
        ("page_num", "", "", "search", "integer", ("number", "page")),
        ("adults_number", "", "", "search_hotel", "integer", ("number", "party")),
        # When2Call's is_id (an id renamed off a keyword) is the tool's thing's id, no "is-34770"
        ("is_id", "", "", "get_a_conversation_turn", "integer", ("id", "conversation")),
    ],
)
def test_a_name_nothing_else_knew_reads_as_what_it_says(
    name: str, description: str, parent: str, topic: str, typed: str, expected: tuple[str, str]
) -> None:
    assert classify(name, description, parent, topic, "", typed) == Kind(*expected)


@pytest.mark.parametrize(
    ("name", "description", "topic", "typed"),
    [
        ("accountType", "The type of bank account e.g. Credit", "create-bank-feed", "string"),  # its example
        ("significance_level", "", "chi_square_independence_test", "string"),  # 0.05, no "high"
        ("method", "", "calculate_area_under_curve", "string"),  # trapezoid? not an email
        ("mode", "", "domain_reputation", "string"),
        ("period", "", "stock_time_series", "string"),  # 1D, 5D, 1M: not annual
        ("state", "", "find_hotels", "string"),  # a bare state is a region, read elsewhere
        ("contact_id", "", "create_contact", "string"),  # an id, not a phone number
    ],
)
def test_a_sort_is_not_guessed_where_the_name_may_mean_another(
    name: str, description: str, topic: str, typed: str
) -> None:
    found = classify(name, description, "", topic, "", typed)
    assert found is None or (not found.field.startswith("sort") and found.field != "phone"), found


@pytest.mark.parametrize(
    ("name", "description", "topic", "schema", "allowed"),
    [
        ("video_codec", "", "Instagram_Posts_Reels", {"type": "string"}, set(SORTS["codec"])),
        ("type", "", "Spotify_Scraper_Get_Artist_Overview", {"type": "string"}, {"artist"}),
        ("period", "Reporting period", "SEC_Balance_Sheet", {"type": "string"}, set(SORTS["period:filing"])),
    ],
)
def test_a_sort_is_drawn_from_its_own_values(
    name: str, description: str, topic: str, schema: dict[str, str], allowed: set[str]
) -> None:
    drawn = {
        fake(schema, random.Random(seed), name=name, description=description, topic=topic)
        for seed in range(30)
    }
    assert drawn <= allowed and drawn, drawn


@pytest.mark.parametrize(
    ("name", "description", "low", "high"),
    [
        ("publishedYear", "Year the book was published.", 1960, 2025),
        ("rank", "Ranking of the book.", 1, 100),
        ("totalRatings", "Total number of ratings the book has received.", 3, 5000),
    ],
)
def test_a_number_a_string_schema_holds_is_written_as_its_digits(
    name: str, description: str, low: int, high: int
) -> None:
    for seed in range(20):
        value = fake({"type": "string"}, random.Random(seed), name=name, description=description)
        assert isinstance(value, str) and not _FILLER.match(value), value
        assert value.isdigit() and low <= int(value) <= high, value
