from __future__ import annotations

import random

from fms_dgt.databuilders.tool_calling.findings import named_record, result_clause, success
from fms_dgt.databuilders.tool_calling.wording import ACTION, GET, Purpose


def _said(purpose: Purpose, value: object, seeds: int = 20) -> set[str]:
    return {success(purpose, value, random.Random(seed)) for seed in range(seeds)}


ADD_PET = Purpose(verb="add", obj="a pet", core="a pet", kind=ACTION)
GET_TICKET = Purpose(verb="get", obj="the ticket", core="the ticket", kind=GET)


def test_a_record_with_a_name_is_said_by_its_name_first() -> None:
    # "I've added a pet; the name is Daisy, the tag is personal and the ID is pet-33737" read
    # like a form; a person names the thing and adds what else came back.
    said = _said(ADD_PET, {"id": "pet-33737", "name": "Daisy", "tag": "personal"})
    assert said <= {
        "I've added a pet: Daisy (ID pet-33737, tag personal).",
        "I've added a pet: Daisy, with ID pet-33737 and tag personal.",
    }, said
    ticket = {"id": 77469, "title": "Launch rehearsal", "status": "active", "priority": 3, "owner": "ana"}
    for sentence in _said(GET_TICKET, ticket):
        assert sentence.startswith("I looked up the ticket: Launch rehearsal"), sentence
        assert "the title is" not in sentence and "more detail" not in sentence, sentence
        assert "status active" in sentence and "owner" not in sentence, (
            sentence
        )  # three facts, its status first


def test_an_answer_tells_what_a_person_asked_before_the_machines_fields() -> None:
    # PeerTube: "the video: ID 62862, short UUID 8u69z9VVGAMClgJhwQJUfG and uuid 095e9ad8-..."; Airflow:
    # a DAG's details ended "... and 32 more details"
    video = {"video": {"id": 62862, "shortUUID": "8u69z9VVGAMClgJhwQJUfG", "uuid": "095e9ad8-d64c"}}
    for sentence in _said(Purpose(verb="create", obj="a live", core="a live", kind=ACTION), video):
        assert "ID 62862" in sentence and "UUID" not in sentence and "uuid" not in sentence, sentence
    dag = {
        "dag_id": "dag-1",
        "file_token": "fdb8",
        "fileloc": "/opt/x.py",
        "is_paused": False,
        "owners": ["ana"],
    }
    dag |= {"description": "Nightly export.", "max_active_runs": 3}
    for sentence in _said(Purpose(verb="get", obj="the DAG", core="the DAG", kind=GET), dag):
        assert "Nightly export" in sentence and "file token" not in sentence and "more detail" not in sentence
    # a page of a listing is said against its total, not beside it
    page = {"dags": [{"dag_id": f"dag-{i}"} for i in range(100)], "total_entries": 2526}
    for sentence in _said(Purpose(verb="list", obj="DAGs", core="DAGs", kind=GET), page):
        assert "2,526 dags in all, and the first 100 are dag-0" in sentence, sentence


def test_a_record_without_a_name_or_other_facts_keeps_its_fields() -> None:
    assert named_record({"latitude": 1.5, "longitude": 2.5}, random.Random(1)) is None
    assert named_record({"name": "Daisy"}, random.Random(1)) is None  # nothing else to say
    assert named_record({"city": "Oslo", "celsius": 4}, random.Random(1)) is None  # a place is no name
    assert named_record({"name": "", "tag": "x"}, random.Random(1)) is None
    sparse = {"name": "Rex", "note": "", "tag": None, "age": 3}
    assert named_record(sparse, random.Random(1)) == ("Rex", ["age 3"])


def test_an_action_that_only_says_it_went_well_says_what_was_done() -> None:
    for value in ({"status": "success"}, {"success": True}, {"status": "updated", "message": "OK"}):
        assert _said(ADD_PET, value) == {"I've added a pet."}, value
    assert any("failed" in s for s in _said(ADD_PET, {"status": "failed"}))  # not a success: said


def test_an_answer_never_reads_out_a_secret() -> None:
    # When2Call's income_statement echoed the call's apikey: "the apikey is 82f2817d...".
    value = {"apikey": "82f2817d8392ef7db3850cedc01df41f", "income_statement": "94000", "token": "t0k"}
    for sentence in _said(GET_TICKET, value) | _said(ADD_PET, value):
        assert "82f2817d" not in sentence and "t0k" not in sentence, sentence
        assert "94000" in sentence, sentence
    items = [{"access_token": "abc123", "user": "ann"}]
    assert "abc123" not in result_clause(items, "users", random.Random(1))
    nested = {"auth": {"token": "t0k3n", "scheme": "bearer"}, "tokens": ["tk-1"], "passwords": "pw-9"}
    for seed in range(10):
        said = result_clause(nested, "x", random.Random(seed))
        assert "t0k3n" not in said and "tk-1" not in said and "pw-9" not in said, said
        assert "bearer" in said, said


def test_a_weather_reading_is_said_as_a_person_says_it() -> None:
    # "Today's forecast: city Mexico City, it's 19.3 °C and conditions showers."
    forecast = {"celsius": 19.3, "city": "Mexico City", "conditions": "showers"}
    said = result_clause(forecast, "x", random.Random(1), heat=" °C")
    assert said == "it's 19.3 °C with showers in Mexico City", said  # a sky said as a noun: "with"
    current = {"condition": "clouds", "temperature": 74.7, "wind_speed": 33.2, "humidity": 80}
    said = result_clause(current, "x", random.Random(1), heat=" °F")
    assert said == "it's 74.7 °F with clouds and wind at 33.2 mph, humidity 80", said
    assert "with clouds" not in result_clause(current, "x", random.Random(1))  # no unit asked: fields
    partly = {"celsius": 9.1, "condition": "partly cloudy"}
    assert result_clause(partly, "x", random.Random(1), heat=" °C") == "it's 9.1 °C and partly cloudy"


def test_a_listed_item_wrapped_in_one_key_is_named_by_what_it_wraps() -> None:
    # SureVoIP's announcements: {"list": [{"announcement": {"filename": ...}}]} said "3 items".
    listed = {
        "list": [{"announcement": {"filename": "recording_68.wav"}}, {"announcement": {"filename": "b.wav"}}]
    }
    assert result_clause(listed, "files", random.Random(1)) == "there are 2 items: recording_68.wav and b.wav"
    deep: dict[str, object] = {"x": 1}
    for _ in range(5000):  # a hostile result nested past any stack
        deep = {"w": deep}
    assert result_clause([deep], "items", random.Random(1))


def test_a_listed_item_without_a_name_is_named_by_its_own_id_before_a_date() -> None:
    # Airflow's tasks were "2 tasks: Nov 11, 2026 at 14:30 UTC (depends on past yes, mapped yes)".
    tasks = {
        "tasks": [
            {"end_date": "2026-11-11T14:30:00Z", "depends_on_past": True, "task_id": "extract_orders"},
            {"end_date": "2026-11-12T14:30:00Z", "depends_on_past": False, "task_id": "load_orders"},
        ]
    }
    assert (
        result_clause(tasks, "tasks", random.Random(1)) == "there are 2 tasks: extract_orders and load_orders"
    )
    # another entity's id is no name: a run is said by its date first
    runs = [{"end_date": "2026-11-11T14:30:00Z", "dag_id": "etl"}]
    assert not result_clause(runs, "runs", random.Random(1)).startswith("1 run: etl")


def test_a_nested_record_is_said_by_its_name_or_after_a_colon() -> None:
    # NESTFUL's SEC answer read "the company is name Benitez-Long, CIK 0001161539 and ticker META",
    # PeerTube's video token "the files are expires July 22, 2026 at 15:15 UTC".
    company = {"company": {"cik": "0001161539", "name": "Benitez-Long", "ticker": "META"}}
    assert result_clause(company, "filings", random.Random(1)) == (
        "the company is Benitez-Long (CIK 0001161539, ticker META)"
    )
    token = {"files": {"expires": "2026-07-22T15:15:00Z", "token": "12b98186409f5a1d533544f2aa54b8c1"}}
    said = result_clause(token, "tokens", random.Random(1))
    assert said.startswith("the files: expires ") and "12b98186" not in said, said


def test_the_dates_of_one_record_are_written_alike() -> None:
    # Airflow's DAG run read "the data interval end is 12 Sep 2026 at 18:00 UTC, the data interval
    # start is 12 September 2026 at 15:00 UTC".
    run = {"data_interval_end": "2026-09-12T18:00:00Z", "data_interval_start": "2026-09-12T15:00:00Z"}
    for seed in range(12):
        said = result_clause(run, "runs", random.Random(seed))
        end, start = said.split(" at 18:00")[0], said.split(" at 15:00")[0]
        assert end.rsplit("end ", 1)[-1].replace("is ", "") == start.rsplit("start ", 1)[-1].replace(
            "is ", ""
        ), said


def test_a_name_is_looked_for_in_a_few_records_of_a_huge_result() -> None:
    from fms_dgt.databuilders.tool_calling.findings import name_of

    pets = [{"id": f"pet-{i}", "name": f"Pet {i}"} for i in range(100_000)]
    assert name_of("pet-3", "pet", [pets]) == "Pet 3"
    assert name_of("pet-99999", "pet", [pets]) is None  # past what is read: said by its id instead
    assert (
        name_of("pet-3", "pet", [{"owner": {"owner_id": "pet-3", "name": "Ann"}}]) is None
    )  # not its own id


def test_a_name_is_read_only_for_a_distinctive_id_and_said_safely() -> None:
    from fms_dgt.databuilders.tool_calling.findings import name_of

    pet = {"id": 10, "name": "Rex", "category": {"id": 1, "name": "Dogs"}}
    assert name_of(1, "pet", [pet]) is None  # a category's id 1 names no pet: not "I've removed Dogs."
    hostile = {"id": "pet-1", "name": "Rex\u202e{json}" + "a" * 500}
    said = name_of("pet-1", "pet", [hostile])
    assert said is not None and "\u202e" not in said and len(said) <= 81


def test_a_yes_or_no_reads_as_what_the_thing_is() -> None:
    # PeerTube: "the permanent live is yes", "with blacklisted no"
    rng = random.Random(1)
    assert "it is not blacklisted" in result_clause({"blacklisted": False, "name": "A"}, "x", rng)
    assert "it is live" in result_clause({"isLive": True, "name": "A"}, "x", rng)
    said = result_clause({"permanentLive": True, "name": "A"}, "x", rng)
    assert "permanent live: yes" in said and "is yes" not in said


def test_a_named_records_facts_lose_their_full_stops() -> None:
    # PeerTube: "Weekend recipes (description Our favourite tutorials., ID 97537, ...)"
    from fms_dgt.databuilders.tool_calling.findings import named_record

    named = named_record(
        {"displayName": "Weekend recipes", "description": "Our favourite tutorials.", "id": 97537},
        random.Random(1),
    )
    assert named is not None and all(not fact.endswith(".") for fact in named[1]), named
