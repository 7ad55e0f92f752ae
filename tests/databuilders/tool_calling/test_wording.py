"""Tool purposes as a person's words: the verb and object of a description, without its notes."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from databuilders.tool_calling.plans import TOOLSETS, corpus_tools

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.databuilders.tool_calling._notes import _NOTE_PATTERNS
from fms_dgt.databuilders.tool_calling.wording import (
    ACTION,
    ASK,
    GET,
    article,
    humanize,
    implementation_notes,
    join_facts,
    join_words,
    label,
    past,
    purpose_of,
    singular,
)

REPO = Path(__file__).resolve().parents[3]


def _tool(description: str, name: str = "tool", **properties: dict[str, str]) -> Tool:
    schema = {"type": "object", "properties": properties or {"q": {"type": "string"}}}
    return Tool(name, "ns", description=description, parameters=schema)


PURPOSES = [
    ("Current weather at a coordinate.", "get", "the current weather", GET),
    ("Look up the coordinates of a city by name.", "look up", "the coordinates", GET),
    (
        "Retrieves current weather information based on the provided coordinates.",
        "retrieve",
        "current weather information",
        GET,
    ),
    ("The API for adding a reminder item includes content and time.", "add", "a reminder item", ACTION),
    ("This API allows users to modify a reservation for a meeting", "modify", "a reservation", ACTION),
    (
        "API for retrieving and updating user account information.",
        "retrieve and update",
        "user account information",
        ACTION,
    ),
    ("Store a note; returns how many notes there are.", "store", "a note", ACTION),
    (
        "Calculates the binomial probability given the number of trials.",
        "calculate",
        "the binomial probability",
        ASK,
    ),
    ("Return some items of a delivered order.", "return", "some items", ACTION),
    ("List of city for iso state and postcode.", "get", "the list of city for iso state and postcode", GET),
    ("Fetches the trending challenges from the TikTok API.", "fetch", "the trending challenges", GET),
    ("Reorder a playlist", "reorder", "a playlist", ACTION),  # a verb the lexicon lacks, before "a"
    ("Categorize transaction", "categorize", "the transaction", ACTION),  # Up: not "fetch the categorize ..."
    ("Represents an announcement audio file", "get", "an announcement audio file", GET),  # "I've represented"
    (
        "Ping webhook",
        "ping",
        "the webhook",
        ASK,
    ),  # Up: "I pinged webhook" read badly; a bare noun gets its article
    ("Create webhook", "create", "a webhook", ACTION),
    ("List webhooks", "list", "webhooks", ASK),
    ("Send money", "send", "money", ACTION),
    # A second verb agrees with the first: "performed a full grid search and retrieves" read badly.
    (
        "Performs a full grid search and retrieves the ranking of a place.",
        "perform",
        "a full grid search and retrieve the ranking",
        ACTION,
    ),
    ("Searches books and posts by title.", "search", "books and posts", ASK),  # "posts" is no verb here
    # API-Bank's QueryAlarm: what the purpose helps a user do is no part of it.
    (
        "The API for querying alarm clock, help user to check the alarm clock they have set.",
        "query",
        "the alarm clock",
        ASK,
    ),
    # Up Banking's ping: a wrapped line is one sentence, a remark on it ("This is useful") no purpose.
    (
        "Make a basic ping request to the API. This is useful to verify that\nauthentication is "
        "functioning correctly. On authentication success an\nHTTP `200` status is returned.",
        "make",
        "a basic ping request",
        ACTION,
    ),
]


@pytest.mark.parametrize(("description", "verb", "core", "kind"), PURPOSES)
def test_purposes_are_a_verb_and_its_object(description: str, verb: str, core: str, kind: str) -> None:
    purpose = purpose_of(_tool(description))
    assert (purpose.verb, purpose.core, purpose.kind) == (verb, core, kind)


@pytest.mark.parametrize(
    "description",
    [
        "Today's forecast for a city (Lisbon, Oslo or Nairobi; other cities get a mild default).",
        "Note: this endpoint is deprecated. Get the forecast for a city.",
        "This tool belongs to the Math API, which provides mathematical operations. Tool description: "
        "Get the forecast for a city.",
        "Get the forecast for a city using the Toolbench RapidAPI service, e.g. Lisbon.",
        "Get the forecast for a city. If the city is not found, the function will return an error message.",
        "Get the forecast for a city. Forecasts are kept since the server started.",
    ],
)
def test_implementation_notes_never_reach_the_purpose(description: str) -> None:
    assert implementation_notes(description), "the raw description carries a note: the test can fail"
    purpose = purpose_of(_tool(description))
    assert "forecast" in purpose.obj and not implementation_notes(purpose.phrase())


_PLAIN_NOTES = re.compile("|".join(f"(?:{p})" for p in _NOTE_PATTERNS), re.IGNORECASE)


def _plain_notes(text: str) -> list[str]:
    """The notes the plain alternation of the patterns finds (tried in turn at every character)."""
    return [m.group(0).strip() for m in _PLAIN_NOTES.finditer(text)]


def test_the_notes_found_are_those_of_the_patterns_in_turn() -> None:
    """The word boundary the patterns share changes nothing (the corpus test checks more texts)."""
    texts = [
        "Note that by default it falls back to the API: e.g. Lisbon, i.e. mocked data. See "
        "https://x.io or /v1/pets/{id} in %Y-%m format; this tool returns an error if the city is "
        "not found. Defaults to 3. Be careful: it can only be called once.",
        "I'd like the forecast for Miami, then the weather. Thanks!",
        "other cities get a mild default. internal implementation, simulated, deprecated",
    ]
    for text in texts:
        assert implementation_notes(text) == _plain_notes(text)
    assert len(implementation_notes(texts[0])) >= 12 and not implementation_notes(texts[1])


# One text per pattern that it matches (in another case, or with other spacing, where it allows).
_NOTE_EXAMPLES = [
    "Uses Celsius BY DEFAULT.",
    "The unit defaults to metric.",
    "Pick a default.",
    "It FALLS BACK to Lisbon.",
    "The key belongs to the owner.",
    "Calls the APIs of X.",
    "Other CITIES get a mild value.",
    "Note : read this.",
    "Done.  note that it rains.",
    "IMPORTANT: be brief.",
    "a city, e. G. Lisbon",
    "the place, I.e. Porto",
    "For Instance Lisbon.",
    "EXAMPLES: Lisbon",
    "It is used INTERNALLY.",
    "The Implementation varies.",
    "Deprecated since 2020.",
    "Hosted on Rapid API.",
    "From ToolBench data.",
    "The Endpoint answers.",
    "Pass an API key.",
    "Mind the rate-limit and the rate limits.",
    "This Method adds.",
    "The Tool adds.",
    "It raises an Exception then returns error.",
    "The agent MUST ask.",
    "Explicit user confirmation needed.",
    "Only be called once.",
    "It can only be called twice.",
    "Be Careful here.",
    "When the City is not Found, nothing.",
    "See HTTPS://x.io.",
    "Path /v1/pets/{id} here.",
    "Dates as %y.",
    "Answers in .csv format today.",
    "Ready after approximately 5 s.",
    "Waits for approx 3 s.",
    "The Output will be a list.",
    "Gives MOCK results and mocked ones.",
    "All Simulated.",
    "Every note stored Since The Server started.",
]


def test_every_note_pattern_finds_the_same_notes_with_its_words_first() -> None:
    """The words beside each pattern are in every text it matches: a text without them is not scanned."""
    for pattern in _NOTE_PATTERNS:
        matched = [t for t in _NOTE_EXAMPLES if re.search(pattern, t, re.IGNORECASE)]
        assert matched, f"no example for {pattern}: the test could not fail for it"
        for text in matched:
            assert implementation_notes(text) == _plain_notes(text) != [], text


def test_notes_are_the_patterns_notes_in_random_texts() -> None:
    """Texts made of note fragments, plain words and letters that fold case unlike ASCII."""
    pieces = [
        *(w for t in _NOTE_EXAMPLES for w in t.split()),
        *["note", ":", ".", "!", "?", ",", "e.", "g.", "i.", "e.", "/", "%", "-", "the", "a", "is", "are"],
        *["not", "found", "given", "by", "for", "of", "to", "in", "json", "API", "Api", "rate", "limit"],
        *["other", "get", "NOTE", "dEfAuLt", "café", "Lisbon", "10:30", "2024-05-01"],
        # A dotless i, a dotted capital I and a long s fold to ASCII letters without case.
        *["\u0131nternal", "\u0130mportant", "\u017fimulated"],
        *["\n", "\t", "", "  "],
    ]
    rng = random.Random(5)
    found = 0
    for _ in range(4000):
        text = " ".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        expected = _plain_notes(text)
        assert implementation_notes(text) == expected, text
        found += bool(expected)
    assert 500 < found < 3500, "the texts hold notes and texts without any"


def test_a_description_without_a_purpose_falls_back_to_the_name() -> None:
    assert purpose_of(_tool("", name="QueryStock")).phrase() == "query the stock"
    assert purpose_of(_tool("", name="sculptor_info.get")).phrase() == "get sculptor information"
    assert purpose_of(_tool("Note: internal use only.", name="get_weather_api")).phrase() == "get the weather"


def test_argument_tails_give_way_to_the_values() -> None:
    tool = _tool("Add a reminder with content and time.", content={"type": "string"}, time={"type": "string"})
    assert purpose_of(tool).core == "a reminder"
    other = _tool("Add a reminder with content and time.", title={"type": "string"})
    assert purpose_of(other).core == "a reminder with content and time", "only argument names give way"


def test_the_demo_tools_read_as_requests() -> None:
    registry = ToolRegistry.from_file(REPO / "data" / "weather_tools.yaml")
    said = {t.name: purpose_of(t).phrase() for t in registry.tools()}
    assert said["geocode_city"] == "look up the coordinates of a city by name"
    assert said["list_events"] == "list events of a day"
    assert said["create_event"] == "create a calendar event"


@pytest.mark.corpus
@pytest.mark.parametrize("relative", TOOLSETS)
def test_no_corpus_purpose_carries_notes_or_is_empty(corpus: Path, relative: str) -> None:
    tools = corpus_tools(corpus, relative)
    noted = [t.description for t in tools if implementation_notes(t.description)]
    assert all(implementation_notes(t.description) == _plain_notes(t.description) for t in tools)
    for tool in tools:
        purpose = purpose_of(tool)
        assert purpose.verb and purpose.obj.strip(), tool.name
        assert not implementation_notes(purpose.phrase()), (tool.name, purpose.phrase())
    if relative.startswith(("toolmind/When2Call", "toolmind/APIGen")):
        assert noted, "these sets carry notes in their descriptions: the detector finds them"


def test_words_for_identifiers() -> None:
    assert humanize("city_name") == "city name"
    assert humanize("petId") == "pet ID"
    assert humanize("is_id") == "ID"
    # JSON:API query names (Up Banking's): the request said "with filter[status] SETTLED", a
    # bracket the offline check takes for a JSON dump.
    assert humanize("filter[status]") == "status" and humanize("filter[ownershipType]") == "ownership type"
    assert humanize("page[size]") == "page size" and humanize("filter") == "filter"
    assert humanize("filter[]") == "filter" and humanize("[]") == ""
    assert label("X-Api-Key") == "key"
    assert join_words(["a", "b", "c"]) == "a, b and c"
    assert [past(v) for v in ("book", "send", "create", "cancel", "stop", "transfer", "query")] == [
        "booked",
        "sent",
        "created",
        "canceled",
        "stopped",
        "transferred",
        "queried",
    ]


def test_articles_and_filter_labels() -> None:
    assert article("hour") == "an hour" and article("house") == "a house"
    assert [article(w) for w in ("upload", "user", "unit", "URL", "update", "apple")] == [
        "an upload",
        "a user",
        "a unit",
        "a URL",
        "an update",
        "an apple",
    ]
    # PeerTube's privacyOneOf: "with privacy 2", not "with a privacy one of of 2".
    assert (label("privacyOneOf"), label("tagsAllOf"), label("one_of")) == ("privacy", "tags", "one of")


@pytest.mark.parametrize(
    ("several", "one"),
    [
        ("pets", "pet"),
        ("categories", "category"),
        ("url status", "url status"),  # was "URL statu": "there is 1 URL statu"
        ("bus", "bus"),
        ("analysis", "analysis"),
        ("addresses", "address"),
        ("young children", "young child"),
        ("skus", "sku"),
        ("post IDs", "post ID"),  # "there is 1 post IDs"
        ("URLs", "URL"),
    ],
)
def test_a_noun_of_several_things_is_said_of_one(several: str, one: str) -> None:
    assert singular(several) == one


def test_a_name_that_changes_a_thing_otherwise_than_its_description_says_wins() -> None:
    # API-Bank's ModifyReminder is described "The API for deleting a reminder item" (a copy of
    # DeleteReminder's): records asked to "remove a reminder item" and answered "I've deleted".
    copied = "The API for deleting a reminder item includes content and time."
    assert purpose_of(Tool("ModifyReminder", "b", description=copied)).verb == "modify"
    assert purpose_of(Tool("DeleteReminder", "b", description=copied)).verb == "delete"
    # verbs of one kind keep the description's word, and a lookup is no change
    assert purpose_of(Tool("cancel_order", "b", description="Delete an order.")).verb == "delete"
    assert (
        purpose_of(Tool("get_user", "b", description="Updates the cache and returns a user.")).verb
        == "update"
    )


def test_a_sentence_said_as_one_of_several_values_loses_its_full_stop() -> None:
    # Airflow's DAG: "the description is Weekly export of invoices to the finance bucket., the
    # fileloc is ..."; a request keeps its values whole (they are what its calls use)
    facts = ["the description is Weekly export of invoices.", "the owner is airflow"]
    assert join_facts(facts) == "the description is Weekly export of invoices and the owner is airflow"
    assert join_facts(["a sentence."]) == "a sentence"
    assert join_facts(["wait...", "Apple Inc.", "b"]) == "wait..., Apple Inc and b"
    assert join_facts(["v2.", "x"]) == "v2 and x"
    assert join_words(["Details to follow.", "x"]) == "Details to follow. and x"
