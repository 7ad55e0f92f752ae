"""Tests of output shapes read from descriptions (fms_dgt/core/tools/engines/_described.py) and of
the mock results synthesised from them (API-Bank's catalogue, from the corpus)."""

from __future__ import annotations

import copy
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from fms_dgt.core.tools.data_objects import Tool, ToolCall
from fms_dgt.core.tools.engines._described import MAX_KEYS, MAX_TEXT, described, shown
from fms_dgt.core.tools.engines.mock import MockToolEngine
from fms_dgt.core.tools.engines.policy import CallPolicy
from fms_dgt.core.tools.engines.results import mock_result
from fms_dgt.core.tools.loaders.file import FileToolLoader
from fms_dgt.core.tools.registry import ToolRegistry

# The descriptions as API-Bank's tool_catalog.json writes them.
DICTIONARY = (
    'The list of results. Format be like [{"partOfSpeech": "xxx", "definitions": [{"definition": "xxx", '
    '"example": "xxx", "synonyms": ["xxx", "xxx"]}, ...]'
)
SYMPTOMS = (
    'The list of results. Format be like [{"name":possible disease name, "description": disease details},...]'
)
EMERGENCY = (
    'The list of results. Format be like [{"name":possible disease name, "aid": first-aid method},...]'
)
APPOINTMENTS = (
    'The dict where from appointment_id to a list like ["patient_name":xxx, "date":xxx, "doctor_name":xxx]'
)
WIKI = 'The list of results. Format be like {"url": "xxx", "summary": "xxx", "content": "xxx"}'
FILLER = re.compile(r"^(alpha|river|orbit|maple|signal|harbor|ember|quartz|meadow|atlas)-\d+$")
STRING = {"type": "string"}


def _output(node: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"results": node}, "required": ["results"]}


def _inputs(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(props)}


# ---------------------------------------------------------------- reading the formats


def test_the_dictionary_format_reads_as_entries_with_definitions() -> None:
    schema = _output({"type": "array", "description": DICTIONARY})
    entry = described(schema)["properties"]["results"]["items"]
    assert entry["type"] == "object" and set(entry["properties"]) == {"partOfSpeech", "definitions"}
    definitions = entry["properties"]["definitions"]
    assert definitions["type"] == "array" and definitions["items"]["type"] == "object"
    assert set(definitions["items"]["properties"]) == {"definition", "example", "synonyms"}
    synonyms = definitions["items"]["properties"]["synonyms"]
    assert synonyms["type"] == "array" and synonyms["items"]["type"] == "string"


@pytest.mark.parametrize(("text", "second"), [(SYMPTOMS, "description"), (EMERGENCY, "aid")])
def test_a_prose_value_becomes_the_description_of_its_key(text: str, second: str) -> None:
    item = shown(text)["items"]  # type: ignore[index]
    assert list(item["properties"]) == ["name", second] and item["required"] == ["name", second]
    assert item["properties"]["name"]["description"] == "possible disease name"


def test_a_map_from_ids_to_records_is_a_list_of_records_holding_the_id() -> None:
    schema = _output({"type": "array", "description": APPOINTMENTS})
    item = described(schema)["properties"]["results"]["items"]
    assert list(item["properties"]) == ["appointment_id", "patient_name", "date", "doctor_name"]
    assert item["properties"]["appointment_id"] == STRING
    declared_dict = _output({"type": "object", "description": APPOINTMENTS})
    assert described(declared_dict) is declared_dict, "a list does not fit a declared object"


def test_an_object_with_no_properties_takes_the_keys_it_shows() -> None:
    schema = _output({"type": "object", "description": WIKI})
    found = described(schema)["properties"]["results"]
    assert found["type"] == "object" and set(found["properties"]) == {"url", "summary", "content"}


def test_a_query_info_object_is_what_the_call_asked_for() -> None:
    inputs = _inputs(
        token=STRING, meeting_topic=STRING, location=STRING, attendees={"type": "array", "items": STRING}
    )
    schema = {"type": "object", "properties": {"meeting_info": {"description": "meeting info"}}}
    info = described(schema, "QueryMeeting", inputs)["properties"]["meeting_info"]
    assert info["type"] == "object" and list(info["properties"]) == ["meeting_topic", "location", "attendees"]
    assert info["properties"]["attendees"] == inputs["properties"]["attendees"], "the input's own schema"
    assert described(schema, "AddMeeting", inputs) is schema, "adding a meeting finds nothing"
    weather = {"type": "object", "properties": {"meeting_info": {"description": "weather info"}}}
    assert described(weather, "QueryMeeting", inputs) is weather, "not the thing asked about"


def test_an_info_object_that_lists_its_fields_has_those() -> None:
    said = "alarm info including username, time, content and location"
    schema = {"type": "object", "properties": {"info": {"description": said}}}
    info = described(
        schema, "QueryAlarm", _inputs(token=STRING, time={"type": "string", "description": "when"})
    )
    props = info["properties"]["info"]["properties"]
    assert (
        list(props) == ["username", "time", "content", "location"] and props["time"]["description"] == "when"
    )


def test_the_tool_schema_is_not_modified_and_a_plain_one_is_returned_as_is() -> None:
    schema = _output({"type": "array", "description": DICTIONARY})
    before = copy.deepcopy(schema)
    enriched = described(schema)
    enriched["properties"]["results"]["items"]["properties"]["partOfSpeech"]["type"] = "integer"
    assert schema == before
    plain = _output({"type": "array", "items": STRING, "description": DICTIONARY})
    assert described(plain) is plain, "a node that states its shape keeps it"


@pytest.mark.parametrize(
    "text",
    [
        "The sort order. [Enum]: ['asc', 'desc']",  # a list of plain values states no shape
        'An example is {"USR001": ["Hello"], "USR002": ["World"]}.',  # keyed by data, not fields
        "The list of results.",
        "",
    ],
)
def test_descriptions_that_state_no_record_leave_the_node_alone(text: str) -> None:
    schema = _output({"type": "array", "description": text})
    assert described(schema) is schema


# ---------------------------------------------------------------- hostile descriptions


@pytest.mark.parametrize(
    "text",
    [
        'Format be like [{"name": "xxx"]}',  # a bracket closes a brace
        'Format be like [{"name": "xxx"}}',
        'Format be like [{"name: "xxx"}]',  # an unclosed key
        'Format be like [{name with spaces: "xxx"}]',
        'Format be like [{"a": xxx {"b": "c"}}]',
        'Format be like [{"a": 1}, "b": 2]',  # pairs and values mixed
        "Format be like [{{{{",
        "Format be like ]]]][[[{",
    ],
)
def test_malformed_formats_leave_the_schema_as_it_was(text: str) -> None:
    schema = _output({"type": "array", "description": text})
    assert described(schema) is schema


def test_a_format_beyond_the_characters_read_is_not_read() -> None:
    far = _output({"type": "array", "description": "x" * 100_000 + '[{"name": "xxx"}]'})
    assert described(far) is far
    cut = _output({"type": "array", "description": '[{"name": "xxx", "title": ' + "y" * 100_000})
    assert described(cut) is cut, "a format cut by the bound is not closed where reading stopped"
    whole = _output({"type": "array", "description": '[{"name": "xxx"}] ' + "y" * 100_000})
    assert set(described(whole)["properties"]["results"]["items"]["properties"]) == {"name"}


@pytest.mark.parametrize("opening", ["[", '[{"a": ', '{"a": [', '{"a": {"b": '])
def test_deep_nesting_is_refused_without_recursing(opening: str) -> None:
    schema = _output({"description": opening * 500 + "1" + "]}" * 500})
    assert described(schema) is schema


def test_too_many_keys_are_refused() -> None:
    def keys(n: int) -> str:
        return "[{" + ", ".join(f'"{_word(i)}": "xxx"' for i in range(n)) + "}]"

    assert len(keys(MAX_KEYS + 1)) < MAX_TEXT, "the key bound, not the length bound"
    within = _output({"type": "array", "description": keys(MAX_KEYS)})
    assert len(described(within)["properties"]["results"]["items"]["properties"]) == MAX_KEYS
    for n in (MAX_KEYS + 1, 5_000):
        schema = _output({"type": "array", "description": keys(n)})
        assert described(schema) is schema


def _word(i: int) -> str:
    """A key of letters only (keys with digits are data): 0 -> a, 27 -> bb."""
    return "k" + "".join(chr(97 + int(d)) for d in str(i))


def test_random_text_never_raises() -> None:
    rng = random.Random(5)
    pieces = [
        "[",
        "]",
        "{",
        "}",
        '"',
        "'",
        ":",
        ",",
        "...",
        "xxx",
        "name",
        " ",
        "\\",
        "from a_id to a list like ",
    ]
    for _ in range(2_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 40)))
        schema = _output({"description": text})
        found = described(schema, "QueryThing", _inputs(name=STRING))
        assert found is schema or isinstance(found, dict)


# ---------------------------------------------------------------- API-Bank, end to end

ARGUMENTS: dict[str, dict[str, Any]] = {
    "Dictionary": {"keyword": "serendipity"},
    "SymptomSearch": {"symptom": "sore throat"},
    "EmergencyKnowledge": {"symptom": "fatigue"},
    "QueryRegistration": {"patient_name": "James Wright", "date": "2026-04-24"},
    "QueryMeeting": {
        "token": "a1d46c8d19f4e72a7aca39d5d2878b04",
        "meeting_topic": "photography",
        "start_time": "2026-04-25 14:00:00",
        "end_time": "2026-04-25 17:00:00",
        "location": "Los Angeles, United States",
        "attendees": ["Kelly Marsh", "Elizabeth Booth"],
    },
    "QueryReminder": {
        "token": "28cc25452e5f8ccd5a8984da5df538b5",
        "content": "Buy a birthday card for Mum",
        "time": "2026-04-22 15:15:00",
    },
    "QueryAlarm": {"token": "c6f318760298e9975d87ae1324829a35", "time": "2026-10-24 09:30:00"},
    "Wiki": {"keyword": "Ada Lovelace"},
}
#: The keys each item (or object) of the result carries, by tool, at the path named.
KEYS = {
    "Dictionary": ("results", {"partOfSpeech", "definitions"}),
    "SymptomSearch": ("results", {"name", "description"}),
    "EmergencyKnowledge": ("results", {"name", "aid"}),
    "QueryRegistration": ("appointments", {"appointment_id", "patient_name", "date", "doctor_name"}),
    "QueryAlarm": ("info", {"username", "time", "content", "location"}),
    "Wiki": ("results", {"url", "summary", "content"}),
}
#: The tools whose results were placeholders before their descriptions were read.
PLACEHOLDERS_BEFORE = ["Dictionary", "EmergencyKnowledge", "QueryMeeting", "QueryRegistration"]
PLACEHOLDERS_BEFORE += ["QueryReminder", "SymptomSearch"]
SEEDS = range(25)


@pytest.fixture(scope="module")
def api_bank(corpus: Path) -> dict[str, Tool]:
    path = corpus / "toolsets" / "api-bank" / "tool_catalog.json"
    return {t.name: t for t in FileToolLoader(path, namespace="api_bank").load()}


def _fillers(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if FILLER.match(value) else []
    if isinstance(value, dict):
        return [f for v in value.values() for f in _fillers(v)]
    if isinstance(value, list):
        return [f for v in value for f in _fillers(v)]
    return []


@pytest.mark.corpus
@pytest.mark.parametrize("name", PLACEHOLDERS_BEFORE)
def test_described_results_hold_no_placeholder_and_validate(api_bank: dict[str, Tool], name: str) -> None:
    tool = api_bank[name]
    schema = json.dumps(tool.output_parameters, sort_keys=True)
    for seed in SEEDS:
        value, source = mock_result(tool, ARGUMENTS[name], random.Random(seed))
        assert source == "synthesised" and tool.output_validator.is_valid(value), value
        assert not _fillers(value), (name, value)
    assert json.dumps(tool.output_parameters, sort_keys=True) == schema, "the tool's schema is its own"


@pytest.mark.corpus
@pytest.mark.parametrize("name", sorted(KEYS))
def test_items_carry_the_described_keys(api_bank: dict[str, Tool], name: str) -> None:
    key, wanted = KEYS[name]
    for seed in SEEDS:
        value, _ = mock_result(api_bank[name], ARGUMENTS[name], random.Random(seed))
        held = value[key]
        for item in held if isinstance(held, list) else [held]:
            assert isinstance(item, dict) and set(item) == wanted, item
        assert api_bank[name].output_validator.is_valid(value) and not _fillers(value), value


@pytest.mark.corpus
def test_dictionary_definitions_carry_their_keys_and_entries_differ(api_bank: dict[str, Tool]) -> None:
    for seed in SEEDS:
        value, _ = mock_result(api_bank["Dictionary"], ARGUMENTS["Dictionary"], random.Random(seed))
        parts = [entry["partOfSpeech"] for entry in value["results"]]
        assert len(set(parts)) == len(parts), parts
        for entry in value["results"]:
            for definition in entry["definitions"]:
                assert set(definition) == {"definition", "example", "synonyms"}
                assert definition["synonyms"] and all(isinstance(s, str) for s in definition["synonyms"])


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("name", "key"), [("QueryMeeting", "meeting_info"), ("QueryReminder", "reminder_info")]
)
def test_the_info_a_query_found_echoes_its_arguments(api_bank: dict[str, Tool], name: str, key: str) -> None:
    asked = {k: v for k, v in ARGUMENTS[name].items() if k != "token"}
    for seed in SEEDS:
        value, _ = mock_result(api_bank[name], ARGUMENTS[name], random.Random(seed))
        assert value == {key: asked}


@pytest.mark.corpus
def test_the_engine_validates_described_results_against_the_tool_schema(api_bank: dict[str, Tool]) -> None:
    registry = ToolRegistry(list(api_bank.values()))
    engine = MockToolEngine(registry, seed=3, policy=CallPolicy(validate_results="error"))
    engine.setup("s")
    calls = [
        ToolCall(f"api_bank::{name}", arguments, str(i))
        for i, (name, arguments) in enumerate(ARGUMENTS.items())
    ]
    results = engine.execute("s", calls)
    assert [r.error for r in results] == [None] * len(calls)
    assert {r.metadata["output_validation"] for r in results} == {"ok"}
    assert not _fillers([r.result for r in results])
