"""Exact implementations of common pure tools, for the mock engine's results.

A tool whose result follows from its arguments alone (``add(47.22, 58.08)``, ``factorial(5)``,
``celsius_to_fahrenheit(20)``) should not get a random number back. :func:`implementation_for`
finds an implementation by the tool's name (``add``, ``add_numbers``, ``math.add``,
``calculate_sum``...) and :func:`compute` runs it when the arguments have the shape it needs (two
numbers to subtract, a number and two units it can convert exactly...). Anything it cannot
compute exactly is :data:`NOT_COMPUTED`, and the engine falls back to synthesis.

Add one with :func:`register_implementation`::

    @register_implementation("celsius_to_kelvin")
    def _kelvin(inputs: Inputs) -> float:
        return inputs.number(0) + 273.15
"""

from __future__ import annotations

import ast
import functools
import math
import operator
import statistics
from collections.abc import Callable, Mapping, Sequence
from datetime import date
from typing import Any

from fms_dgt.core.tools._fake_kinds import tokens

# More tools register in the same registry (sale prices, profits, growth, squares, random draws).
from fms_dgt.core.tools.engines import _everyday  # noqa: F401
from fms_dgt.core.tools.engines._implementing import (
    NOT_COMPUTED,
    REGISTRY,
    Implementation,
    Inputs,
    NotComputable,
    is_setting,
    register,
)

__all__ = [
    "NOT_COMPUTED",
    "Inputs",
    "NotComputable",
    "compute",
    "convert",
    "dimension",
    "implementation_for",
    "is_setting",
    "register_implementation",
]


# Words that may open or close a tool's name around the operation itself.
_NOISE = frozenset({"calculate", "compute", "get", "find", "math", "do", "perform", "of", "the", "two"})
_NOISE |= {
    "numbers",
    "number",
    "values",
    "value",
    "tool",
    "function",
    "calc",
    "calculator",
    "basic",
    "simple",
}


def register_implementation(*names: str) -> Callable[[Implementation], Implementation]:
    """Register an implementation under tool names (any case style: ``addNumbers``, ``add_numbers``)."""

    def add(implementation: Implementation) -> Implementation:
        register(*names)(implementation)
        implementation_for.cache_clear()  # a name looked up before may have one now
        return implementation

    return add


@functools.lru_cache(maxsize=4096)
def implementation_for(name: str) -> Implementation | None:
    """The implementation registered for a tool name (``math.add``, ``calculate_sum``...), if any."""
    words = [w for w in tokens(name.rsplit(".", 1)[-1]) if not w.isdigit()]
    for candidate in (words, [w for w in words if w not in _NOISE]):
        found = REGISTRY.get("".join(candidate))
        if found is not None:
            return found
    if "to" in words[1:-1]:  # BFCL's liter_to_gallon: one unit into another, if both are known
        source, target = words[words.index("to") - 1], words[words.index("to") + 1]
        try:
            convert(1.0, source, target)
        except NotComputable:
            return None
        return _fixed(source, target)
    return None


def compute(name: str, parameters: Mapping[str, Any], arguments: Mapping[str, Any]) -> Any:
    """The exact result of tool ``name`` for ``arguments``, or :data:`NOT_COMPUTED`."""
    implementation = implementation_for(name)
    if implementation is None:
        return NOT_COMPUTED
    try:
        result = _tidy(implementation(Inputs(parameters, arguments)))
    except (NotComputable, ArithmeticError, ValueError, TypeError, OverflowError):
        return NOT_COMPUTED  # (an infinite product, 1e308 * 10, is no result either)
    places = next(
        (v for n, v in arguments.items() if is_setting(n) and type(v) is int and 0 <= v <= 15), None
    )
    return round(result, places) if isinstance(result, float) and places is not None else result


def _tidy(value: Any) -> Any:
    """Floats without binary noise (``105.30000000000001`` -> ``105.3``); whole ones stay floats."""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise NotComputable("not a finite number")
        return float(f"{value:.12g}")
    return value


# ---------------------------------------------------------------- arithmetic


@register_implementation("add", "addition", "plus", "sum", "add_numbers", "sum_numbers", "sum_of")
def _add(inputs: Inputs) -> float:
    return math.fsum(inputs.numbers(at_least=1))


@register_implementation("subtract", "subtraction", "minus", "difference", "sub")
def _subtract(inputs: Inputs) -> float:
    return inputs.number(0, 2) - inputs.number(1, 2)


@register_implementation("multiply", "multiplication", "times", "product", "mul")
def _multiply(inputs: Inputs) -> float:
    return math.prod(inputs.numbers(at_least=1))


@register_implementation("divide", "division", "quotient", "div")
def _divide(inputs: Inputs) -> float:
    return inputs.number(0, 2) / inputs.number(1, 2)


@register_implementation("average", "mean", "avg", "arithmetic_mean")
def _mean(inputs: Inputs) -> float:
    return statistics.fmean(inputs.numbers())


@register_implementation("median")
def _median(inputs: Inputs) -> float:
    return float(statistics.median(inputs.numbers()))


@register_implementation("standard_deviation", "std_dev", "stdev", "std", "stddev")
def _deviation(inputs: Inputs) -> float:
    """The population standard deviation (numpy's default, and most tools' own code)."""
    return statistics.pstdev(inputs.numbers(at_least=1))


@register_implementation("variance")
def _variance(inputs: Inputs) -> float:
    return statistics.pvariance(inputs.numbers(at_least=1))


@register_implementation("modulo", "modulus", "mod", "remainder")
def _modulo(inputs: Inputs) -> float:
    divisor = inputs.number(1, 2)
    if divisor == 0:
        raise NotComputable("a remainder of division by zero")
    return math.fmod(inputs.number(0, 2), divisor)


@register_implementation("max", "maximum", "largest", "highest", "biggest")
def _max(inputs: Inputs) -> float:
    return max(inputs.numbers())


@register_implementation("min", "minimum", "smallest", "lowest")
def _min(inputs: Inputs) -> float:
    return min(inputs.numbers())


@register_implementation("power", "pow", "exponent", "exponentiation")
def _power(inputs: Inputs) -> float:
    base, exponent = inputs.number(0, 2), inputs.number(1, 2)
    if abs(exponent) > 64 or abs(base) > 1e6:
        raise NotComputable("too large to compute exactly")
    return float(base**exponent)


@register_implementation("round_number", "round_off", "round_to")
def _round(inputs: Inputs) -> float:
    places = next((inputs.arguments[n] for n in inputs.order if is_setting(n)), 0)
    if not isinstance(places, int) or isinstance(places, bool) or not 0 <= places <= 15:
        raise NotComputable("the decimal places are no whole number from 0 to 15")
    return round(inputs.number(0, 1), places)


@register_implementation("logarithm", "log_of", "natural_log")
def _logarithm(inputs: Inputs) -> float:
    value = inputs.measure("value", "number", "x", "num")
    base = inputs.measure("base") if any("base" in tokens(n) for n in inputs.order) else math.e
    return math.log(value, base)


@register_implementation("square_root", "sqrt", "squareroot")
def _sqrt(inputs: Inputs) -> float:
    return math.sqrt(inputs.number(0, 1))


@register_implementation("factorial")
def _factorial(inputs: Inputs) -> int:
    n = inputs.number(0, 1)
    if n != int(n) or not 0 <= n <= 25:
        raise NotComputable("factorial of a whole number up to 25 only")
    return math.factorial(int(n))


@register_implementation("hypot", "hypotenuse")
def _hypot(inputs: Inputs) -> float:
    return math.hypot(*inputs.numbers())


@register_implementation("gcd", "greatest_common_divisor", "hcf")
def _gcd(inputs: Inputs) -> int:
    return math.gcd(*_whole(inputs.numbers()))


@register_implementation("lcm", "least_common_multiple")
def _lcm(inputs: Inputs) -> int:
    return math.lcm(*_whole(inputs.numbers()))


@register_implementation("absolute_value", "abs")
def _abs(inputs: Inputs) -> float:
    return abs(inputs.number(0, 1))


@register_implementation("percentage", "percent", "calculate_percentage")
def _percentage(inputs: Inputs) -> float:
    part, whole = inputs.number(0, 2), inputs.number(1, 2)
    return part / whole * 100


@register_implementation("tip", "calculate_tip", "tip_amount", "vat", "calculate_vat", "sales_tax")
def _share(inputs: Inputs) -> float:
    """A tip or a tax on an amount at a percentage (a rate below 1 is a fraction): glaive's
    calculate_vat of 171 at 36.03% answered "orbit-878"."""
    amount = inputs.measure("bill", "amount", "total", "price", "subtotal", "cost")
    rate = inputs.fraction("percentage", "percent", "rate")
    if amount < 0:
        raise NotComputable("a negative amount")
    return round(amount * rate, 2)


@register_implementation(
    "mortgage_payment", "calculate_mortgage_payment", "loan_payment", "calculate_loan_payment",
    "monthly_payment", "calculate_monthly_payment", "calculate_monthly_mortgage_payment",
)  # fmt: skip
def _payment(inputs: Inputs) -> float:
    """The monthly payment of a loan repaid in equal parts (an annuity): glaive's mortgage of
    314,000 over 14 years at 16% was 37.51 a month. A rate below 1 is a fraction; a term is
    in years unless its name says months."""
    principal = inputs.measure("principal", "amount")
    monthly = inputs.fraction("interest", "rate") / 12
    term_name = next(
        (n for n in inputs.order if set(tokens(n)) & {"term", "years", "months", "duration"}), ""
    )
    if not term_name:
        raise NotComputable("no term")
    term = inputs.arguments[term_name]
    if not isinstance(term, int | float) or isinstance(term, bool):
        raise NotComputable("a term is a number")
    months = term if "months" in tokens(term_name) or "month" in tokens(term_name) else term * 12
    if months < 1 or principal <= 0:
        raise NotComputable("no month to pay, or nothing borrowed")
    return round(
        principal / months if not monthly else principal * monthly / (1 - (1 + monthly) ** -months), 2
    )


def _whole(numbers: Sequence[float]) -> list[int]:
    if not numbers or any(n != int(n) for n in numbers):
        raise NotComputable("whole numbers only")
    return [int(n) for n in numbers]


# ---------------------------------------------------------------- geometry and health


@register_implementation("triangle_area", "area_of_triangle", "area_triangle")
def _triangle(inputs: Inputs) -> float:
    return inputs.measure("base") * inputs.measure("height") / 2


@register_implementation("circle_area", "area_of_circle", "area_circle")
def _circle(inputs: Inputs) -> float:
    return math.pi * inputs.measure("radius") ** 2


@register_implementation("rectangle_area", "area_of_rectangle", "area_rectangle")
def _rectangle(inputs: Inputs) -> float:
    return inputs.measure("length") * inputs.measure("width")


@register_implementation("bmi", "body_mass_index")
def _bmi(inputs: Inputs) -> float:
    weight, height = inputs.measure("weight"), inputs.measure("height")
    metres = height / 100 if height > 3 else height  # centimetres given
    return round(weight / metres**2, 1)


# ---------------------------------------------------------------- units

_FACTORS: dict[str, tuple[str, float]] = {
    **dict.fromkeys(("m", "meter", "meters", "metre", "metres"), ("length", 1.0)),
    **dict.fromkeys(("km", "kilometer", "kilometers", "kilometre", "kilometres"), ("length", 1000.0)),
    **dict.fromkeys(("cm", "centimeter", "centimeters", "centimetre", "centimetres"), ("length", 0.01)),
    **dict.fromkeys(("mm", "millimeter", "millimeters", "millimetre", "millimetres"), ("length", 0.001)),
    **dict.fromkeys(("mi", "mile", "miles"), ("length", 1609.344)),
    **dict.fromkeys(("yd", "yard", "yards"), ("length", 0.9144)),
    **dict.fromkeys(("ft", "foot", "feet"), ("length", 0.3048)),
    **dict.fromkeys(("in", "inch", "inches"), ("length", 0.0254)),
    **dict.fromkeys(("kg", "kilogram", "kilograms"), ("mass", 1.0)),
    **dict.fromkeys(("g", "gram", "grams"), ("mass", 0.001)),
    **dict.fromkeys(("lb", "lbs", "pound", "pounds"), ("mass", 0.45359237)),
    **dict.fromkeys(("oz", "ounce", "ounces"), ("mass", 0.028349523125)),
    **dict.fromkeys(("l", "liter", "liters", "litre", "litres"), ("volume", 1.0)),
    **dict.fromkeys(("ml", "milliliter", "milliliters", "millilitre", "millilitres"), ("volume", 0.001)),
    # US liquid measures, by definition from the US gallon of 231 cubic inches
    **dict.fromkeys(("gal", "gallon", "gallons"), ("volume", 3.785411784)),
    **dict.fromkeys(("qt", "quart", "quarts"), ("volume", 0.946352946)),
    **dict.fromkeys(("pt", "pint", "pints"), ("volume", 0.473176473)),
    **dict.fromkeys(("cup", "cups"), ("volume", 0.2365882365)),
    **dict.fromkeys(("t", "tonne", "tonnes"), ("mass", 1000.0)),
    **dict.fromkeys(("st", "stone", "stones"), ("mass", 6.35029318)),
    **dict.fromkeys(("s", "sec", "second", "seconds"), ("time", 1.0)),
    **dict.fromkeys(("min", "minute", "minutes"), ("time", 60.0)),
    **dict.fromkeys(("h", "hr", "hour", "hours"), ("time", 3600.0)),
    **dict.fromkeys(("day", "days"), ("time", 86400.0)),
}
_TEMPERATURES = {"c": "c", "celsius": "c", "f": "f", "fahrenheit": "f", "k": "k", "kelvin": "k"}


def dimension(unit: str) -> str | None:
    """What ``unit`` measures (``length``, ``mass``, ``volume``, ``time``, ``temperature``), or None
    when it is no unit known here."""
    unit = unit.strip().lower()
    if unit in _TEMPERATURES:
        return "temperature"
    found = _FACTORS.get(unit)
    return found[0] if found else None


def convert(value: float, source: str, target: str) -> float:
    """``value`` in unit ``source`` expressed in ``target`` (exact factors only).

    Raises:
        NotComputable: a unit is unknown, or the two measure different things.
    """
    source, target = source.strip().lower(), target.strip().lower()
    if source in _TEMPERATURES and target in _TEMPERATURES:
        return _temperature(value, _TEMPERATURES[source], _TEMPERATURES[target])
    if source not in _FACTORS or target not in _FACTORS:
        raise NotComputable(f"unknown unit {source if source not in _FACTORS else target}")
    (kind_a, a), (kind_b, b) = _FACTORS[source], _FACTORS[target]
    if kind_a != kind_b:
        raise NotComputable(f"{source} and {target} measure different things")
    return value * a / b


def _temperature(value: float, source: str, target: str) -> float:
    celsius = {"c": value, "f": (value - 32) * 5 / 9, "k": value - 273.15}[source]
    return {"c": celsius, "f": celsius * 9 / 5 + 32, "k": celsius + 273.15}[target]


@register_implementation("convert_units", "unit_conversion", "convert_unit", "convert", "unit_converter")
@register_implementation(
    "si_unit_conversion", "imperial_si_conversion", "si_conversion", "convert_measurement"
)
@register_implementation("convert_length", "convert_weight", "convert_volume", "length_conversion")
def _convert(inputs: Inputs) -> float:
    """A value from one unit into another (When2Call's ``si_unit_conversion(value, unit_in,
    unit_out)`` answered 54.07 km as 30.86 ft)."""
    return convert(
        inputs.number(0, 1),
        str(inputs.named("from", "source", "in")),
        str(inputs.named("to", "target", "out")),
    )


@register_implementation("convert_temperature", "temperature_conversion", "temperature_converter")
def _convert_temperature(inputs: Inputs) -> float:
    value = inputs.number(0, 1)
    target = str(inputs.named("to", "target", "unit")).lower()
    try:
        source = str(inputs.named("from", "source"))
    except NotComputable:
        # Only the target is given: the value is in the other unit (Celsius <-> Fahrenheit).
        source = "fahrenheit" if _TEMPERATURES.get(target) == "c" else "celsius"
    return convert(value, source, target)


def _fixed(source: str, target: str) -> Implementation:
    return lambda inputs: convert(inputs.number(0, 1), source, target)


for _source, _target in (
    ("celsius", "fahrenheit"),
    ("fahrenheit", "celsius"),
    ("celsius", "kelvin"),
    ("kelvin", "celsius"),
    ("km", "miles"),
    ("miles", "km"),
    ("kg", "lbs"),
    ("lbs", "kg"),
    ("meters", "feet"),
    ("feet", "meters"),
    ("inches", "cm"),
    ("cm", "inches"),
):
    register_implementation(f"{_source}_to_{_target}", f"convert_{_source}_to_{_target}")(
        _fixed(_source, _target)
    )


# ---------------------------------------------------------------- formulas


@register_implementation(
    "calculator", "evaluate", "evaluate_expression", "calculate_expression", "evaluate_formula", "eval"
)
def _formula(inputs: Inputs) -> float:
    """An arithmetic formula given as text (API-Bank's Calculator: ``(8 + 6) * 4`` is 56): numbers,
    ``+ - * / // % **`` (also written ``^``, ``x`` and the multiplication and division signs) and
    parentheses, nothing else; at most 200 characters. Every number is read as a float, so no
    power runs long: one too large overflows, and is no result."""
    text = inputs.text().strip()
    if len(text) > 200:
        raise NotComputable("a formula longer than 200 characters")
    for written, meant in (("^", "**"), ("\u00d7", "*"), ("\u00f7", "/"), ("x", "*"), ("X", "*")):
        text = text.replace(written, meant)
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise NotComputable(f"not a formula: {exc}") from exc
    return float(_evaluate(tree.body, 0))


_OPERATORS: dict[type[ast.AST], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}  # fmt: skip


def _evaluate(node: ast.AST, depth: int) -> float:
    if depth > 50:
        raise NotComputable("a formula nested too deep")
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    ):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _evaluate(node.operand, depth + 1)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _evaluate(node.left, depth + 1), _evaluate(node.right, depth + 1)
        return float(_OPERATORS[type(node.op)](left, right))
    raise NotComputable(f"not arithmetic: {type(node).__name__}")


# ---------------------------------------------------------------- text and dates


@register_implementation("string_length", "length", "get_length", "count_characters", "strlen", "len")
def _length(inputs: Inputs) -> int:
    return len(inputs.text())


@register_implementation("uppercase", "to_uppercase", "to_upper", "upper", "convert_to_uppercase")
def _upper(inputs: Inputs) -> str:
    return inputs.text().upper()


@register_implementation("lowercase", "to_lowercase", "to_lower", "lower", "convert_to_lowercase")
def _lower(inputs: Inputs) -> str:
    return inputs.text().lower()


@register_implementation("reverse_string", "reverse", "reverse_text")
def _reverse(inputs: Inputs) -> str:
    return inputs.text()[::-1]


@register_implementation("count_words", "word_count", "words_count")
def _words(inputs: Inputs) -> int:
    return len(inputs.text().split())


@register_implementation(
    "days_between", "date_difference", "date_diff", "days_between_dates", "days_difference"
)
def _days_between(inputs: Inputs) -> int:
    dates = [v for v in (inputs.arguments[n] for n in inputs.order) if isinstance(v, str)]
    if len(dates) != 2:
        raise NotComputable("expected two dates")
    first, second = (date.fromisoformat(d[:10]) for d in dates)
    return abs((second - first).days)
