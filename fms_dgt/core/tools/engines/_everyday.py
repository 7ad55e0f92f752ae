"""Exact results of everyday pure tools: a sale price, a profit, growth, a square, a list's
shuffle, a random draw (the same for the same arguments), an amount in another currency at fixed
rates.

They register in :mod:`_implementing`'s registry when :mod:`implementations` is imported (it
imports this module). Each was a random number
in records that stated its inputs: glaive's sale price of 429.93 at 6.14% off was 217.61, a profit
of selling at 142.70 what cost 353.77 was 75.82, ``calculate_squared`` answered ``orbit-919``.
"""

from __future__ import annotations

import random

from fms_dgt.core.tools.engines._implementing import Inputs, NotComputable, register

__all__: list[str] = []


@register(
    "sale_price", "calculate_sale_price", "discounted_price", "calculate_discounted_price", "discount_price",
    "apply_discount", "price_after_discount",
)  # fmt: skip
def _sale_price(inputs: Inputs) -> float:
    price = inputs.measure("price", "amount", "cost", "total")
    off = inputs.fraction("discount", "percentage", "percent", "off")
    if price < 0 or off > 1:
        raise NotComputable("a negative price or more than all of it off")
    return round(price * (1 - off), 2)


@register("profit", "calculate_profit", "net_profit")
def _profit(inputs: Inputs) -> float:
    sold = inputs.measure("selling", "sell", "sale", "revenue", "income")
    cost = inputs.measure("cost", "buying", "purchase", "expenses", "expense")
    return round(sold - cost, 2)


@register("cagr", "calculate_cagr", "compound_annual_growth_rate")
def _cagr(inputs: Inputs) -> float:
    """The compound annual growth rate in percent: from 99.23 to 78.38 in 3 years is -7.56%."""
    start = inputs.measure("start", "initial", "beginning", "begin", "present")
    end = inputs.measure("end", "final", "ending", "future")
    years = inputs.measure("years", "periods", "period", "time")
    if start <= 0 or end < 0 or years <= 0:
        raise NotComputable("growth needs a positive start and a positive number of years")
    return round((float((end / start) ** (1 / years)) - 1) * 100, 2)


@register("square", "squared", "square_number")
def _square(inputs: Inputs) -> float:
    return inputs.number(0, 1) ** 2


@register("cube", "cubed", "cube_number")
def _cube(inputs: Inputs) -> float:
    return inputs.number(0, 1) ** 3


#: The longest list shuffled (its whole text seeds the shuffle).
_LONGEST = 10_000


@register("randomize_list", "shuffle", "shuffle_list", "randomize", "randomise_list")
def _shuffled(inputs: Inputs) -> list[object]:
    """The list given, in another order: the same order for the same list (results are
    reproducible), never the list itself but for one item."""
    lists = [v for v in (inputs.arguments[n] for n in inputs.order) if isinstance(v, list)]
    if len(lists) != 1 or len(lists[0]) > _LONGEST:
        raise NotComputable("expected one list of at most 10,000 items")  # a wired reply may hold millions
    items = list(lists[0])
    rng = random.Random(repr(items))
    for _ in range(4):
        rng.shuffle(items)
        if items != lists[0] or len(items) < 2:
            break
    return items


@register(
    "random_number",
    "get_random_number",
    "generate_random_number",
    "random_integer",
    "random_int",
    "randint",
    "random",
)
def _random_number(inputs: Inputs) -> float:
    """A number between the two bounds given, the same one for the same bounds (results are
    reproducible): get_random_number answered ``rand-31450``."""
    low, high = sorted(inputs.numbers(at_least=2)[:2])
    rng = random.Random(repr((low, high)))
    if low == int(low) and high == int(high):
        return rng.randint(int(low), int(high))
    return round(rng.uniform(low, high), 2)


@register("normalvariate", "random_normalvariate", "gauss", "random_gauss", "normal_random")
def _normal(inputs: Inputs) -> float:
    """A draw from a normal distribution of the mean and deviation given (BFCL's
    random_normalvariate answered ``harbor-470``); the same for the same arguments."""
    mean = inputs.measure("mu", "mean", "average")
    deviation = inputs.measure("sigma", "std", "deviation", "stddev", "sd")
    if deviation < 0:
        raise NotComputable("a negative deviation")
    return round(random.Random(repr((mean, deviation))).gauss(mean, deviation), 4)


#: Units of each currency one US dollar bought on one fixed day (rounded): the rates a
#: conversion is computed at, so every record converts alike. Not live rates, and not meant to be.
_PER_DOLLAR = {
    "USD": 1.0, "EUR": 0.92, "GBP": 0.79, "JPY": 150.0, "CAD": 1.36, "AUD": 1.52, "NZD": 1.64,
    "CHF": 0.88, "CNY": 7.2, "HKD": 7.8, "SGD": 1.34, "INR": 83.0, "KRW": 1330.0, "IDR": 15700.0,
    "THB": 36.0, "PHP": 56.0, "MYR": 4.7, "VND": 24500.0, "MXN": 17.5, "BRL": 5.0, "ARS": 900.0,
    "CLP": 920.0, "COP": 3900.0, "ZAR": 18.5, "NGN": 1500.0, "KES": 130.0, "EGP": 48.0,
    "SEK": 10.5, "NOK": 10.6, "DKK": 6.9, "ISK": 138.0, "PLN": 4.0, "CZK": 23.0, "HUF": 360.0,
    "TRY": 32.0, "RUB": 90.0, "ILS": 3.7, "AED": 3.67, "SAR": 3.75,
}  # fmt: skip


def exchange_rate(source: str, target: str) -> float:
    """Units of ``target`` one unit of ``source`` buys at the fixed rates of :data:`_PER_DOLLAR`.

    Raises:
        NotComputable: a currency code it does not hold.
    """
    try:
        return _PER_DOLLAR[target.strip().upper()] / _PER_DOLLAR[source.strip().upper()]
    except KeyError as exc:
        raise NotComputable(f"no rate for {exc.args[0]}") from exc


@register(
    "convert_currency", "currency_conversion", "convert_currencies", "currency_converter",
    "exchange_currency", "get_currency_conversion", "convert_money", "currency_exchange",
)  # fmt: skip
def _converted(inputs: Inputs) -> float:
    """An amount in another currency (glaive's convertCurrency(453.81, EUR, USD) answered 453.81
    euros back): at the fixed rates of :func:`exchange_rate`."""
    amount = inputs.number(0, 1)
    source, target = inputs.named("from", "base", "source"), inputs.named("to", "target")
    return round(amount * exchange_rate(str(source), str(target)), 2)


@register("get_exchange_rate", "exchange_rate", "get_conversion_rate", "conversion_rate", "currency_rate")
def _rate(inputs: Inputs) -> float:
    return round(
        exchange_rate(str(inputs.named("from", "base", "source")), str(inputs.named("to", "target"))), 4
    )
