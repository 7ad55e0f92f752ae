"""Exact results of everyday pure tools: a sale price, a profit, growth, a square, a list's
shuffle, a random draw (the same for the same arguments).

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
