"""Tests of the exact implementations of pure tools (fms_dgt/core/tools/engines/implementations.py)."""

from __future__ import annotations

from typing import Any

import pytest

from fms_dgt.core.tools.engines.implementations import (
    NOT_COMPUTED,
    Inputs,
    compute,
    implementation_for,
    register_implementation,
)

TWO = {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("add", {"a": 47.22, "b": 58.08}, 105.3),
        # How to compute is no operand: the square root of 9 to a precision of 46 was 86.53.
        ("square_root", {"number": 9, "precision": 46}, 3.0),
        ("math.sqrt", {"num": 16, "accuracy": 5}, 4.0),
        ("round_number", {"number": 5.12345, "decimal_places": 2}, 5.12),
        ("logarithm", {"value": 8, "base": 2, "precision": 10}, 3.0),
        ("math.add", {"b": 2, "a": 1}, 3),
        ("calculate_sum", {"numbers": [1, 2, 3.5]}, 6.5),
        ("subtract", {"a": 10, "b": 4}, 6),
        ("multiply", {"a": 0.1, "b": 3}, 0.3),
        ("divide", {"a": 1, "b": 8}, 0.125),
        ("calculate_average", {"numbers": [1, 2, 3, 4]}, 2.5),
        ("math.factorial", {"number": 5}, 120),
        ("math.hypot", {"x": 3, "y": 4}, 5.0),
        ("gcd", {"a": 12, "b": 18}, 6),
        ("calculate_triangle_area", {"base": 10, "height": 5}, 25.0),
        ("celsius_to_fahrenheit", {"celsius": 100}, 212.0),
        ("convert_units", {"value": 5, "from_unit": "km", "to_unit": "miles"}, 3.10685596119),
        ("convert_temperature", {"value": 212, "to": "celsius"}, 100.0),
        ("string_length", {"text": "hello"}, 5),
        ("to_uppercase", {"text": "hi there"}, "HI THERE"),
        ("count_words", {"text": "one two  three"}, 3),
        ("days_between", {"start_date": "2026-01-01", "end_date": "2026-03-01"}, 59),
        # ToolMind's standard_deviation of [4, 7] answered 48.5.
        ("standard_deviation", {"numbers": [4, 7]}, 1.5),
        ("calculate_variance", {"numbers": [1, 2, 3, 4]}, 1.25),
        ("modulo", {"a": 10, "b": 3}, 1.0),
        # API-Bank's Calculator answered (8 + 6) * 4 with 64.39.
        ("Calculator", {"formula": "(8 + 6) * 4"}, 56.0),
        ("calculate_vat", {"amount": 171, "vat_rate": 36.03}, 61.61),  # glaive's: was "orbit-878"
        ("min_value", {"numbers": [2, 1, 3]}, 1),  # When2Call's: was 44.49
        ("get_max_value", {"numbers": [2, 1, 3]}, 3),
        ("vehicle.liter_to_gallon", {"liter": 13.55}, 3.57953130945),  # BFCL's: was 90.17
        ("convert_gallons_to_liters", {"gallons": 2}, 7.570823568),
        ("calculate_tip", {"bill_amount": 80, "tip_percentage": 15}, 12.0),
        ("calculate_tip", {"bill_total": 80, "tip_rate": 0.2}, 16.0),
        # glaive's mortgage of 314,000 over 14 years at 16% was 37.51 a month
        (
            "calculate_mortgage_payment",
            {"loan_amount": 314000, "interest_rate": 16.0, "loan_term": 14},
            4693.81,
        ),
        ("calculate_loan_payment", {"principal": 12000, "interest_rate": 0, "term_months": 24}, 500.0),
        ("evaluate_expression", {"expression": "2^10 - 3 x 4"}, 1012.0),
        ("calculator", {"formula": "-(2 + 3) % 4 + 7 // 2 / 2"}, 4.5),
        ("calculator", {"formula": "2 ** 100"}, 1.26765060023e30),  # refused by a needless guard
        ("calculate_tip", {"bill_amount": 80, "tip_percentage": 1}, 0.8),  # 1% is no 100%
        ("sum", {"digits": [1, 2, 3]}, 6.0),  # a list named like a setting is operands
    ],
)
def test_common_pure_tools_are_computed_exactly(name: str, arguments: dict[str, Any], expected: Any) -> None:
    assert compute(name, TWO, arguments) == expected


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("subtract", {"a": 1, "b": 2, "c": 3}),  # three numbers: which two?
        ("divide", {"a": 1, "b": 0}),
        ("modulo", {"a": 1, "b": 0}),
        ("standard_deviation", {"numbers": []}),
        ("math.factorial", {"number": 2.5}),
        ("power", {"base": 14.3, "exponent": 84.9}),
        ("convert_units", {"value": 2, "from_unit": "cups", "to_unit": "grams"}),
        ("convert_units", {"value": 2, "from_unit": "km", "to_unit": "kg"}),
        ("string_length", {"a": "x", "b": "y"}),
        ("get_weather", {"city": "Oslo"}),
        ("liter_to_kilogram", {"liter": 2}),  # a volume is no mass
        ("path_to_file", {"path": "x"}),
        # a formula is arithmetic and nothing else, and none runs long or overflows
        ("Calculator", {"formula": '__import__("os").system("id")'}),
        ("Calculator", {"formula": "9 ** 9 ** 9"}),
        ("Calculator", {"formula": "(" * 5000 + "1" + ")" * 5000}),
        ("Calculator", {"formula": "-" * 190 + "1"}),
        ("Calculator", {"formula": "1e308 * 10"}),
        ("Calculator", {"formula": "True + 1"}),
        ("Calculator", {"formula": "1 / 0"}),
        ("multiply", {"a": 1e308, "b": 10}),  # an infinite product was a NotComputable raised
        ("calculate_tip", {"bill_amount": 10000, "tip_percentage": -50}),  # no negative tip
        ("calculate_loan_payment", {"principal": 314000, "interest_rate": -1200, "term_months": 12}),
        ("calculate_loan_payment", {"principal": 314000, "interest_rate": 5, "loan_term": 1e-300}),
    ],
)
def test_what_cannot_be_computed_exactly_is_not(name: str, arguments: dict[str, Any]) -> None:
    assert compute(name, TWO, arguments) is NOT_COMPUTED


def test_numbers_follow_the_schema_order_not_the_call_order() -> None:
    assert compute("subtract", TWO, {"b": 4, "a": 10}) == 6


def test_a_registered_implementation_is_found_by_name_in_any_style() -> None:
    @register_implementation("celsius_to_rankine")
    def _rankine(inputs: Inputs) -> float:
        return (inputs.number(0, 1) + 273.15) * 9 / 5

    assert implementation_for("CelsiusToRankine") is _rankine
    assert implementation_for("calculate_celsius_to_rankine") is _rankine
    assert compute("celsius_to_rankine", {}, {"c": 0}) == 491.67


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        # glaive's sale price of 429.93 at 6.14% off was 217.61; a profit of selling at 142.70
        # what cost 353.77 was 75.82; a CAGR from 99.23 to 78.38 was +47.37
        ("calculate_sale_price", {"original_price": 429.93, "discount_percentage": 6.14}, 403.53),
        ("calculate_profit", {"cost_price": 353.77, "selling_price": 142.7}, -211.07),
        ("calculate_cagr", {"start_value": 99.23, "end_value": 78.38, "years": 3}, -7.56),
        ("calculate_squared", {"number": 12.5}, 156.25),  # answered "orbit-919"
        ("find_highest_number", {"numbers": [3, 9, 4]}, 9),  # answered ["high-92180"]
        # a precision asked for is kept (a logarithm "to 1 place" was 2.25108045973)
        ("logarithm", {"value": 9.5, "base": 2.7, "precision": 1}, 2.3),
    ],
)
def test_everyday_tools_are_computed(name: str, arguments: dict[str, Any], expected: Any) -> None:
    assert compute(name, {"type": "object", "properties": {}}, arguments) == expected


def test_a_shuffled_list_holds_the_same_items_in_another_order_every_time_the_same() -> None:
    given = {"list": ["a", "b", "c", "d"]}
    once = compute("randomize_list", {}, given)
    assert sorted(once) == given["list"] and once != given["list"]
    assert compute("randomize_list", {}, given) == once
    assert compute("calculate_cagr", {}, {"start_value": 0, "end_value": 5, "years": 2}) is NOT_COMPUTED
    # a list wired from a hostile reply of a million items is not turned to text and shuffled
    assert compute("randomize_list", {}, {"list": list(range(1_000_000))}) is NOT_COMPUTED


def test_a_random_draw_lies_within_what_was_asked_and_repeats_for_the_same_arguments() -> None:
    # get_random_number answered "rand-31450", random_normalvariate "harbor-470"
    drawn = compute("get_random_number", {}, {"min": 5, "max": 9})
    assert isinstance(drawn, int) and 5 <= drawn <= 9
    assert compute("get_random_number", {}, {"min": 5, "max": 9}) == drawn
    normal = compute("random_normalvariate", {}, {"mu": 10.0, "sigma": 2.0})
    assert isinstance(normal, float) and 0 < normal < 20


def test_an_amount_is_converted_at_the_fixed_rates_and_an_unknown_currency_is_not() -> None:
    # glaive's convertCurrency(453.81, EUR, USD) answered 453.81 euros back
    from fms_dgt.core.tools.engines._everyday import exchange_rate

    euros = compute("convertCurrency", {}, {"amount": 453.81, "from_currency": "EUR", "to_currency": "USD"})
    assert euros == round(453.81 / 0.92, 2)
    there = compute("convert_currency", {}, {"amount": 100, "from_currency": "GBP", "to_currency": "JPY"})
    back = compute("convert_currency", {}, {"amount": there, "from_currency": "JPY", "to_currency": "GBP"})
    assert back == pytest.approx(100, abs=0.01)
    assert compute("get_conversion_rate", {}, {"from_currency": "zar", "to_currency": "CAD"}) == round(
        exchange_rate("ZAR", "CAD"), 4
    )
    assert (
        compute("convert_currency", {}, {"amount": 5, "from_currency": "XXX", "to_currency": "CAD"})
        is NOT_COMPUTED
    )
