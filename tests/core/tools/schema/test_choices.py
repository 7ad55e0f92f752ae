"""The values a parameter's description lists (BFCL's [Enum], 'Can be x or y', glossed values)."""

from __future__ import annotations

import random

import pytest

from fms_dgt.core.tools.fakes import fake
from fms_dgt.core.tools.schema.choices import (
    MAX_DESCRIBED,
    described_choices,
    described_default,
    described_values,
)
from fms_dgt.core.tools.synth import synthesise

LISTED = [
    ('The mode of the headlights. [Enum]: ["on", "off", "auto"]', ("on", "off", "auto")),
    ("Level of detail for stock information. Can be 'summary' or 'detailed'.", ("summary", "detailed")),
    ("The system of units to be used, 'metric' or 'imperial'. Default is 'metric'.", ("metric", "imperial")),
    ("The temperature unit ('Celsius' or 'Fahrenheit').", ("Celsius", "Fahrenheit")),
    ("Sort order: `asc` or `desc`", ("asc", "desc")),
    (
        "'Forgot Password' for first call, after get the verification code, call again with "
        "'Verification Code' to change the password.",
        ("Forgot Password", "Verification Code"),
    ),
    (
        "The type of vehicle. 'gas' refers to a gasoline vehicle, 'diesel' refers to a diesel one.",
        ("gas", "diesel"),
    ),
    (
        "Only return cards that have the given status. One of `active`, `inactive`, or `canceled`.",
        ("active", "inactive", "canceled"),
    ),
    ("success or failed", ("success", "failed")),  # API-Bank's statuses: the whole description
    ("pending, paid, or refunded.", ("pending", "paid", "refunded")),
    ("The type of this resource: `webhooks`", ("webhooks",)),  # JSON:API's one type (Up Banking)
    ("Transaction type (deposit or withdrawal).", ("deposit", "withdrawal")),  # glaive: in an aside
    (
        "The surface type for the statistics. Available options are 'clay', 'grass', 'hard', or 'all'.",
        ("clay", "grass", "hard", "all"),
    ),
]

OPEN = [
    "Format of movies - could be 'IMAX', '2D', '3D', '4DX' etc. Default is 'all'",
    "The unit to convert from. Supports 'teaspoon', 'tablespoon', 'cup', etc.",
    "The chord progression in Roman numerals. Eg: ['I', 'V', 'vi', 'IV'].",
    "List of traits to be retrieved, default is ['strengths', 'weaknesses'].",
    "Valid values include: 'spades', 'clubs', 'hearts', 'diamonds'",
    "The name of the 'user' in the 'database'",
    "One of `name` or `selector` must be set.",
    "The ID of the payment. Present if the order status is `paid`, `fulfilled`, or `refunded`.",
    "Only required if the 'payment_schedule' parameter is 'interval' or 'combined'.",
    "Each key must consist of alphanumeric characters, '-', '_' or '.'.",
    "Has the value `true` if the object exists in live mode or the value `false` in test mode.",
    "A city name such as 'Paris' or 'Rome'.",
    "The status of the order or pending",  # bare words that are a sentence, not a list
    "Success or failure",
    "The type of this resource, such as `webhooks`",
    "The type of this resource is `webhooks` unless it is a tag.",
    "The size (small or large, e.g. medium)",
    "",
]


@pytest.mark.parametrize(("description", "values"), LISTED)
def test_a_closed_list_in_a_description_is_read(description: str, values: tuple[str, ...]) -> None:
    assert described_values(description) == values


@pytest.mark.parametrize("description", OPEN)
def test_an_open_list_or_quoted_names_are_no_values(description: str) -> None:
    assert described_values(description) is None


def test_only_a_string_without_its_own_enum_takes_them() -> None:
    text = "Can be 'a' or 'b'."
    assert described_choices({"type": "string", "description": text}) == ("a", "b")
    assert described_choices({"description": text}) == ("a", "b")
    assert described_choices({"type": "string", "enum": ["c"], "description": text}) is None
    assert described_choices({"type": "integer", "description": text}) is None
    # A list's items read the list's description when they have none (BFCL's lockDoors).
    doors = {"type": "array", "items": {"type": "string"}, "description": 'Doors. [Enum]: ["driver", "rear"]'}
    assert described_choices(doors) == ("driver", "rear")
    assert (
        described_choices({"type": "array", "items": {"type": "string", "enum": ["x"]}, "description": text})
        is None
    )


def test_a_list_too_long_or_broken_is_no_list() -> None:
    many = ", ".join(f"'v{i}'" for i in range(MAX_DESCRIBED + 1))
    assert described_values(f"One of {many} or 'last'.") is None
    assert described_values("[Enum]: [1, 2]") is None  # not strings
    assert described_values('[Enum]: ["a", ') is None
    assert described_values("x" * 5000 + " Can be 'a' or 'b'.") is None
    assert described_values("a" * 1990 + " or b") is None  # a 1,990-letter word is no value


def test_synthesised_values_are_among_the_listed_ones() -> None:
    schema = {
        "type": "object",
        "properties": {
            "mode": {"type": "string", "description": 'The mode. [Enum]: ["engage", "release"]'},
            "doors": {
                "type": "array",
                "items": {"type": "string"},
                "description": 'Doors. [Enum]: ["driver", "rear"]',
            },
            "note": {"type": "string", "description": "Any note."},
        },
        "required": ["mode", "doors", "note"],
    }
    rng = random.Random(4)
    for _ in range(30):
        value = synthesise(schema, rng)
        assert value["mode"] in ("engage", "release")
        assert value["doors"] and set(value["doors"]) <= {"driver", "rear"}
    for _ in range(30):  # and with the realistic values' hooks (a status, a unit)
        made = fake(
            {"type": "string", "description": "The unit. Can be 'celsius' or 'fahrenheit'."}, rng, name="unit"
        )
        assert made in ("celsius", "fahrenheit")


@pytest.mark.parametrize(
    ("description", "stated"),
    [
        ("The starting index for paging through the results. Defaults to `0`.", (0,)),
        ("The filter to apply to the results. Default is 'statuscode:200'.", ("statuscode:200",)),
        ("Time offset in seconds from UTC. Default is 28800 (UTC+8).", (28800,)),
        ("Whether to adjust the final value for inflation. Defaults to True.", (True,)),
        ("The desired confidence level. Default is 0.95.", (0.95,)),
        ("The unit system (default: metric)", ("metric",)),
        ("If not specified, the average mileage is used. Default is None.", None),
        ("By default all fields are returned.", None),
        ("The user's default settings", None),  # an adjective, no value
        ("version, default is 1.2.3.", None),
        ("", None),
    ],
)
def test_a_stated_default_is_read(description: str, stated: tuple[object] | None) -> None:
    assert described_default(description) == stated


def test_a_parameter_without_a_type_takes_the_type_and_value_its_default_says() -> None:
    # When2Call's tools carry no schema types: "startfrom" was "river-12", "filter" "alpha-9".
    index = {"description": "The starting index for paging through the results. Defaults to `0`."}
    found = {"description": "The filter to apply to the results. Default is 'statuscode:200'."}
    for seed in range(10):
        value = synthesise(
            {
                "type": "object",
                "properties": {"startfrom": index, "filter": found},
                "required": ["startfrom", "filter"],
            },
            random.Random(seed),
        )
        assert type(value["startfrom"]) is int, value
        assert value["filter"] == "statuscode:200", value
