"""Values in sentences: requests say values as a person would, answers report results without JSON."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from fms_dgt.databuilders.tool_calling.checks import json_dump
from fms_dgt.databuilders.tool_calling.envelopes import unwrapped
from fms_dgt.databuilders.tool_calling.findings import byte_words, result_clause
from fms_dgt.databuilders.tool_calling.phrases import (
    date_words,
    error_words,
    plain,
    scalar_words,
    value_phrases,
)

STRING = {"type": "string"}


def _said(values: dict[str, Any], properties: dict[str, Any] | None = None, seed: int = 0) -> str:
    return " | ".join(value_phrases(properties or {}, values, random.Random(seed)))


def test_dates_read_as_dates() -> None:
    assert date_words("2025-03-12") == "12 March 2025"
    assert date_words("2025-03-12", 1) == "March 12, 2025"
    assert date_words("2026-09-12T11:15:00Z") == "12 September 2026 at 11:15 UTC"
    assert date_words("2025-13-01") is None and date_words("Lisbon") is None
    said = [_said({"date": "2025-03-12"}, seed=s) for s in range(8)]
    assert all("2025" in s and "2025-03-12" not in s for s in said)
    assert all(s.startswith("on ") for s in said)
    assert _said({"check_in_date": "2025-03-12"}).startswith(("from ", "starting "))
    assert _said({"end_date": "2025-03-12"}).startswith(("until ", "up to "))


def test_coordinates_read_as_one_place() -> None:
    assert _said({"latitude": 38.72, "longitude": -9.14}) == "at 38.72, -9.14"
    assert _said({"lat": 1.5, "lng": 2}) == "at 1.5, 2"


def test_lists_are_joined_and_records_are_pairs() -> None:
    assert _said({"tags": ["red", "blue", "green"]}) == "tagged red, blue and green"
    assert "1, 2 and 3" in _said({"numbers": [1, 2, 3]})
    passengers = {"passengers": [{"first_name": "Ada", "dob": "1990-01-02"}, {"first_name": "Alan"}]}
    said = _said(passengers)
    assert said.startswith("with 2 passengers: first name Ada, date of birth ")
    assert "first name Alan" in said and not json_dump(said)


def test_json_api_wrappers_and_identifiers_read_as_what_they_hold() -> None:
    # Up's requests said "3 data: ID tag-1, type tags; ..." and "the data attributes description ..."
    tags = {
        "data": [{"id": "tag-1", "type": "tags"}, {"id": "tag-2", "type": "tags"}],
        "transactionId": "txn-4",
    }
    said = _said(tags)
    assert "the tags tag-1 and tag-2" in said and "data" not in said and "type" not in said, said
    assert _said({"data": {"id": "cate-6", "type": "categories"}}) == "with the category cate-6"
    hook = {"data": {"attributes": {"description": "Sends transactions on.", "url": "https://x.example/h"}}}
    said = _said(hook)
    assert '"Sends transactions on."' in said and "https://x.example/h" in said, said
    assert "data" not in said and "attributes" not in said, said
    # a record that is no identifier keeps its pairs
    assert _said({"owner": {"id": "usr-1", "name": "Ada"}}) == "with the owner ID usr-1, name Ada"


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"city": "Lisbon"}, ("in Lisbon", "for Lisbon")),
        ({"origin": "Lisbon"}, ("from Lisbon",)),
        ({"destination": "Oslo"}, ("to Oslo",)),
        ({"message": "late"}, ('saying "late"', 'with the message "late"', 'that reads "late"')),
        ({"query": "python"}, ('for "python"', "about python", 'matching "python"')),
        ({"units": "metric"}, ("in metric units",)),
        ({"include_player_stats": True}, ("with player stats",)),
        ({"include_player_stats": False}, ("without player stats",)),
        ({"num_tickets": 2}, ("for 2 tickets",)),
        ({"year": 2020}, ("in 2020", "for 2020")),
        ({"a": 1, "b": 2}, ("1 and 2",)),
        ({"id": 42}, ("with ID 42", "for ID 42")),  # a number that names: never "the ID at 42"
        ({"map_index": 89}, ("with map index 89", "for map index 89")),
        ({"adult_count": 9}, ("for 9 adults",)),  # how many to book, not a bound on results
        ({"child_count": 2}, ("for 2 children",)),
        ({"room_count": 1}, ("for 1 room",)),
        ({"on": False}, ("switched off",)),  # API-Bank's TimedSwitch, never "without on"
        ({"enabled": True}, ("enabled",)),
        ({"q": "Paris"}, ('for "Paris"', "about Paris", 'matching "Paris"')),  # a query, not a bare value
        ({"have": "EUR"}, ("from EUR",)),  # API Ninjas' currency converter: have and want
        ({"want": "USD"}, ("to USD",)),
        ({"duration_lte": 39.03}, ("with a duration of at most 39.03",)),  # Airflow's range filters
        ({"duration_gte": 5}, ("with a duration of at least 5",)),
        # How a listing is sorted, as asked (with the value the API takes: a request states every
        # value): Airflow's tasks were listed "for order by -created_at".
        ({"order_by": "-created_at"}, ("sorted by -created_at, newest first",)),
        ({"sort": "start_date"}, ("sorted by start_date, earliest first",)),
        ({"sortBy": "relevance"}, ("sorted by relevance",)),
        ({"sort": "-usd_price"}, ("sorted by -usd_price",)),
        ({"order": "desc"}, ("sorted desc",)),
        ({"order": "ORD-1234"}, ("for order ORD-1234", "with order ORD-1234", "with the order ORD-1234")),
    ],
)  # fmt: skip
def test_values_are_said_with_their_preposition(values: dict[str, Any], expected: tuple[str, ...]) -> None:
    assert _said(values) in expected


def test_argument_names_never_appear_as_identifiers() -> None:
    values = {"city_name": "Lisbon", "petId": "p-1", "max_results": 5, "X-Api-Key": "k"}
    said = " ".join(_said(values, seed=s) for s in range(10))
    assert not any(name in said for name in ("city_name", "petId", "max_results", "X-Api-Key", "="))
    assert "Lisbon" in said and "p-1" in said and "5" in said


def test_numbers_in_requests_are_exact() -> None:
    assert scalar_words(123456.789, exact=True) == "123456.789"
    assert scalar_words(123456.789) == "123,456.79"
    assert scalar_words(True) == "yes"


def test_results_are_sentences_without_json() -> None:
    rng = random.Random(1)
    record = {"temperature": 21.5, "condition": "sunny", "wind_speed": 3.2}
    said = {result_clause(record, "results", random.Random(seed)) for seed in range(20)}
    assert said == {
        "the temperature is 21.5, the condition is sunny and the wind speed is 3.2",
        "temperature 21.5, condition sunny and wind speed 3.2",
    }
    assert result_clause({"celsius": 21.5}, "results", rng) == "it's 21.5 °C"
    events = [{"event_id": f"e{i}", "title": f"Meeting {i}"} for i in range(5)]
    listed = result_clause(events, "events", rng)
    assert listed == "5 events: Meeting 0, Meeting 1 and Meeting 2, plus 2 more"
    nested = result_clause(
        {"days": [{"date": "2026-01-24", "high": 57.6}], "meta": {"a": {"b": 1}}}, "x", rng
    )
    assert not json_dump(nested) and nested.startswith("there is 1 day")
    long = result_clause({"summary": "word " * 100}, "x", rng)
    assert len(long) < 120 and long.endswith("…")


def test_a_list_of_dated_items_reads_as_dates_written_one_way() -> None:
    days = [{"date": f"2026-03-0{d}", "high": 20.0 + d, "low": 10.5 + d} for d in range(1, 5)]
    for seed in range(20):
        said = result_clause({"days": days}, "x", random.Random(seed), heat=" °C")
        assert "high 21 °C, low 11.5 °C" in said, said
        months = {word for word in ("March", "Mar ") if word in said}
        assert len(months) == 1, said  # not "March 1, 2026" next to "2 Mar 2026"
        assert said.endswith("plus 1 more"), said
    assert "°" not in result_clause({"days": days}, "x", random.Random(1))  # no unit given


def test_a_limit_is_said_last_and_a_tag_as_a_tag() -> None:
    properties = {"limit": {"type": "integer"}, "tags": {"type": "array"}, "tag": {"type": "string"}}
    for seed in range(30):
        said = value_phrases(properties, {"limit": 1, "tags": ["work", "travel"]}, random.Random(seed))
        assert said[0] == "tagged work and travel", said  # "list pets tagged ... (at most 1)"
        assert said[1] in ("limited to 1 result", "with a limit of 1", "(at most 1)"), said
        [tag] = value_phrases(properties, {"tag": "personal"}, random.Random(seed))
        assert tag in ("tagged personal", "with the tag personal"), tag


def test_a_bound_of_a_value_is_no_limit_of_results() -> None:
    # BFCL's filter_stocks_by_price was asked for "limited to 189.23 results" for max_price.
    properties = {"max_price": {"type": "number"}, "max_results": {"type": "integer"}}
    for seed in range(20):
        price, count = value_phrases(properties, {"max_price": 189.23, "max_results": 5}, random.Random(seed))
        assert "result" not in price and "189.23" in price, price
        assert "5 results" in count or count in ("with a max results of 5", "(at most 5)"), count


def test_one_of_a_counted_thing_is_singular() -> None:
    said = {k: _said({k: 1}) for k in ("days", "people", "children", "nights")}
    assert said == {
        "days": "for 1 day",
        "people": "for 1 person",
        "children": "for 1 child",
        "nights": "for 1 night",
    }
    assert _said({"days": 3}) == "for 3 days"


def test_a_file_size_is_said_in_bytes_units() -> None:
    assert [byte_words(n) for n in (512, 84_500, 1_834_209, 25_000_000, 3_200_000_000)] == [
        "512 bytes",
        "85 kB",
        "1.8 MB",
        "25 MB",
        "3.2 GB",
    ]
    said = {result_clause({"filename": "a.png", "size": 1_834_209}, "x", random.Random(s)) for s in range(20)}
    assert all("1.8 MB" in s and "1834209" not in s.replace(",", "") for s in said)
    # A server's absurd size is said without a float overflow (a record, not a crash).
    assert byte_words(10**400).endswith(" GB")
    assert "GB" in result_clause({"size": 10**400}, "x", random.Random(0))
    # A size that is no byte count (a float, a small number) is said as it is.
    assert "the size is 8" in {result_clause({"size": 8}, "x", random.Random(s)) for s in range(20)}


def test_errors_are_said_briefly() -> None:
    assert error_words('HTTP 404: {"error": {"message": "flight not found"}}') == "flight not found"
    assert error_words("ValueError: seat class must be economy.") == "seat class must be economy"
    assert error_words("network error: the service did not answer (injected)") == (
        "network error: the service did not answer"
    )
    assert not json_dump(error_words("bad [1, 2] {x}"))


def test_plain_text_is_safe_in_a_sentence() -> None:
    assert plain("a\x00b\u2028c {d} [e]") == "a b c (d) (e)"
    assert plain("one two three four", 10) == "one two…"


def test_a_number_is_said_with_the_unit_its_record_gives() -> None:
    # A converter's {"value": 14.34, "unit": "celsius"} read "the value is 14.34 and the unit is celsius".
    for seed in range(10):
        rng = random.Random(seed)
        converted = result_clause({"value": 14.34, "unit": "celsius"}, "results", rng)
        assert converted == "it's 14.34 °C", converted
        weighed = result_clause({"amount": 3, "unit": "kg", "item": "flour"}, "results", rng)
        assert "the amount is 3 kg" in weighed and "unit" not in weighed and "flour" in weighed, weighed
        system = result_clause({"value": 5, "units": "metric"}, "results", rng)
        assert "metric" in system  # a unit system is no unit of the number
        two = result_clause({"low": 1, "high": 9, "unit": "celsius"}, "results", rng)
        assert "celsius" in two  # two numbers: which one the unit is for is not said


def test_a_weather_results_wind_speed_has_the_units_of_the_call() -> None:
    weather = {"temperature": 3.5, "wind_speed": 12.4}
    for seed in range(10):
        assert "12.4 mph" in result_clause(weather, "results", random.Random(seed), heat=" °F")
        assert "12.4 km/h" in result_clause(weather, "results", random.Random(seed), heat=" °C")
        assert re.search(r"12\.4(?! ?(mph|km))", result_clause(weather, "results", random.Random(seed)))


def test_a_json_api_document_says_its_resources() -> None:
    # Up Banking's webhook was "the data is ID webh-1", and a listing "there is 1 data: data-1".
    one = {
        "data": {
            "type": "webhooks",
            "id": "webh-1",
            "attributes": {"url": "https://example.com/hook", "createdAt": "2026-03-20T06:00:00Z"},
            "links": {"self": "https://api.example.com/webhooks/webh-1"},
            "relationships": {"logs": {}},
        },
        "links": {"next": None},
    }
    assert unwrapped(one) == {
        "url": "https://example.com/hook",
        "createdAt": "2026-03-20T06:00:00Z",
        "id": "webh-1",
    }
    accounts = {
        "data": [{"type": "accounts", "id": "a-1", "attributes": {"displayName": "Spending"}}],
        "links": {},
    }
    assert unwrapped(accounts) == [{"displayName": "Spending", "id": "a-1"}]
    rng = random.Random(1)
    said = result_clause(unwrapped(one), "webhooks", rng)
    assert "data" not in said and "created on" in said and "created at" not in said
    assert "Spending" in result_clause(unwrapped(accounts), "accounts", rng)  # a camelCase name key
    assert unwrapped({"data": {"id": 1}}) == {"id": 1}  # a plain envelope says what it holds
    for other in ({"data": 1, "status": "ok"}, [1, 2], "text"):
        assert unwrapped(other) == other  # no envelope


def test_identifiers_are_written_as_they_are_and_a_listing_says_its_items() -> None:
    rng = random.Random(3)
    said = result_clause({"id": 11538, "followers_count": 12345, "playlistElementId": 92478}, "items", rng)
    assert "11538" in said and "92478" in said and "12,345" in said, said
    listing = unwrapped({"total": 120, "data": [{"id": 1, "name": "Intro"}, {"id": 2, "name": "Outro"}]})
    assert listing == [{"id": 1, "name": "Intro"}, {"id": 2, "name": "Outro"}]
    assert unwrapped({"total": 1, "data": {"id": 1}, "extra": 2}) == {
        "total": 1,
        "data": {"id": 1},
        "extra": 2,
    }


def test_listed_items_are_named_by_a_nested_name_before_their_id() -> None:
    # PeerTube's follows were "42, 63008 and 32071": their names are their follower's.
    follows = [{"id": 42, "follower": {"name": "chocobozzz"}}, {"id": 43, "follower": {"name": "framasoft"}}]
    assert result_clause(follows, "follows", random.Random(1)) == "2 follows: chocobozzz and framasoft"
    assert (
        result_clause([{"id": 7, "name": "Luna"}, {"id": 8}], "pets", random.Random(1))
        == "2 pets: Luna and 8"
    )


def test_a_states_listed_value_is_no_place() -> None:
    # Airflow's new_state is an enum: "with new state failed", never "in failed".
    state = {"new_state": {"type": "string", "enum": ["failed", "success"]}}
    assert {_said({"new_state": "failed"}, state, seed) for seed in range(5)} == {"with new state failed"}
    assert _said({"state": "Ohio"}) in ("in Ohio", "for Ohio")  # a state that is a place still is


def test_a_page_of_a_listing_says_its_items() -> None:
    # Codat's bank transactions: "page number 3, page size 100, total results 266, there are 100
    # results: account ID acc-90767 ... and 1 more detail".
    page = {
        "_links": {"self": {"href": "https://api.example.com/x"}},
        "pageNumber": 3,
        "pageSize": 100,
        "results": [{"id": "t-1", "amount": 12.5}, {"id": "t-2", "amount": 3.0}],
        "totalResults": 266,
    }
    assert unwrapped(page) == page["results"]
    mixed = {"results": [1, 2], "summary": "two"}  # something else besides the page: said as it is
    assert unwrapped(mixed) == mixed


def test_a_list_named_list_counts_items() -> None:
    # SureVoIP's announcements: "there are 2 list".
    assert result_clause({"list": [{"a": 1}, {"a": 2}]}, "files", random.Random(1)).startswith(
        "there are 2 items"
    )


def test_a_can_flag_reads_as_what_can_be_done() -> None:
    # BFCL's estimate_drive_feasibility_by_mileage: "the can drive is no".
    assert result_clause({"canDrive": False}, "results", random.Random(1)) == "it cannot drive"


def test_a_list_named_in_the_singular_counts_its_items() -> None:
    # BFCL's trading bot: "there are 3 watchlist: IBM, MSFT and JPM".
    said = result_clause({"watchlist": ["IBM", "MSFT", "JPM"]}, "results", random.Random(1))
    assert said == "there are 3 items in the watchlist: IBM, MSFT and JPM"
    assert (
        result_clause({"people": ["Ann", "Bo"]}, "results", random.Random(1))
        == "there are 2 people: Ann and Bo"
    )
    # a list named by its thing counts that thing: "there is 1 item in the place: Rome, Italy"
    assert (
        result_clause({"place": ["Rome, Italy"]}, "results", random.Random(1))
        == "there is 1 place: Rome, Italy"
    )
    assert result_clause({"region": ["England", "Kent"]}, "results", random.Random(1)) == (
        "there are 2 regions: England and Kent"
    )
    assert result_clause({"webpage_status": ["up", "down"]}, "results", random.Random(1)).startswith(
        "there are 2 webpage statuses"
    )
    assert result_clause({"news": ["A", "B", "C"]}, "results", random.Random(1)).startswith(
        "there are 3 news items"
    )
    assert result_clause({"asset": ["A", "B"]}, "results", random.Random(1)).startswith("there are 2 assets")
    assert result_clause({"order_history": ["A", "B"]}, "results", random.Random(1)).startswith(
        "there are 2 items in the order history"
    )


def test_a_sentence_is_quoted_whatever_it_is_called() -> None:
    # API-Bank's Translate: "translate text from Could you send me the slides from this morning?
    # in Japanese" (its `src` read as an origin).
    props = {"src": {"type": "string", "description": "The text to be translated"}, "tgt_lang": STRING}
    for seed in range(10):
        said = _said({"src": "Could you send me the slides?", "tgt_lang": "Japanese"}, props, seed)
        assert '"Could you send me the slides?"' in said, said
    assert _said({"from": "Paris"}, {"from": STRING}) == "from Paris"


def test_the_upper_bound_of_a_start_is_no_start() -> None:
    # Airflow's start_date_lte (task instances started by then) was asked "starting 29 Jan 2027".
    for seed in range(8):
        said = _said({"start_date_lte": "2027-01-29T19:30:00Z"}, seed=seed)
        assert said.startswith(("until ", "up to ")) and "2027" in said, said
        assert _said({"start_date_gte": "2027-01-29T19:30:00Z"}, seed=seed).startswith(("from ", "starting "))


def test_a_bound_of_another_moment_than_the_start_says_which() -> None:
    # Airflow: "list task instances from May 16 at 12:45 from May 16 at 12:45 up to May 16 at 13:45"
    # (end_date_gte, start_date_gte, start_date_lte)
    for seed in range(4):
        assert _said({"end_date_gte": "2026-05-16T12:45:00Z"}, seed=seed).startswith("with an end date from ")
        assert _said({"execution_date_lte": "2026-05-16T12:45:00Z"}, seed=seed).startswith(
            "with an execution date up to "
        )


def test_a_credential_is_the_users_own() -> None:
    # When2Call's income statement was asked "with apikey 82f2817d...": a person says it is theirs.
    secret = "82f2817d8392ef7db3850cedc01df41f"
    for seed in range(6):
        for name in ("apikey", "X-Api-Key", "token"):
            said = _said({name: secret}, seed=seed)
            assert said.startswith(("using my ", "with my ")) and secret in said and "API" not in said, said
        assert (
            "my" not in _said({"pagination_token": secret}, seed=seed).split()
        )  # a page's token is no one's


def test_a_huge_number_is_said_in_brief() -> None:
    # 87.05 to the power 26.16 was said with all of its 51 digits.
    assert scalar_words(5.55074358721e50) == "5.55e+50"
    assert scalar_words(10**20) == "1e+20"
    assert scalar_words(123456.789) == "123,456.79"
    assert scalar_words(5.55074358721e50, exact=True) == "5.55074358721e+50"  # a request states it whole
    assert scalar_words(10**400) == "a number of over 300 digits"  # past a float: was OverflowError


def test_plain_text_has_no_invisible_characters_that_reorder_it() -> None:
    # A reply's name "Rex\u202e(json)" read backwards from the override on; zero widths hide text.
    assert plain("Rex\u202e{json}\u200b\u2066x\ufeff") == "Rex (json) x"
