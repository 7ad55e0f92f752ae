"""JSON encoders built once, giving the exact text of ``json.dumps`` with fixed options.

``json.dumps(value, ...)`` with any option builds a new encoder (and its C encoder) on every call;
a run encodes every argument, result, seed and record, so the encoders here are built once. Each
gives the text ``json.dumps(value, ensure_ascii=False, ...)`` gives, for JSON data (no cycles: the
circular-reference check is what they leave out). The engines, wire formats, output folder and
exporters all take them from here.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["COMPACT", "COMPACT_SORTED", "PLAIN", "SORTED", "STABLE", "encoder", "scalars"]


def encoder(
    *,
    separators: tuple[str, str] = (", ", ": "),
    sort_keys: bool = False,
    default: Callable[[Any], Any] | None = None,
) -> Callable[[Any], str]:
    """``json.dumps(value, ensure_ascii=False, separators=separators, sort_keys=sort_keys,
    default=default)`` as a function."""
    reference = json.JSONEncoder(
        ensure_ascii=False, separators=separators, sort_keys=sort_keys, default=default
    )
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # an interpreter without the C accelerator
        return reference.encode
    # The arguments JSONEncoder.iterencode gives it, without the markers of the circular check.
    fast = make(
        None,
        reference.default,
        json.encoder.encode_basestring,
        None,
        separators[1],
        separators[0],
        sort_keys,
        False,
        True,
    )

    def encode(value: Any) -> str:
        return "".join(fast(value, 0))

    return encode


#: ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``: a line of an export.
COMPACT = encoder(separators=(",", ":"))
#: ``json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)``: a run's lines.
COMPACT_SORTED = encoder(separators=(",", ":"), sort_keys=True)
#: ``json.dumps(value, ensure_ascii=False, sort_keys=True)``: arguments and results as OpenAI text.
SORTED = encoder(sort_keys=True)
#: ``json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)``: the stable text of any
#: value (seeds, digests).
STABLE = encoder(sort_keys=True, default=str)
#: ``json.dumps(value, ensure_ascii=False)``: the JSON text xLAM and ShareGPT keep in a column.
PLAIN = encoder()


def scalars(value: Any, most: int) -> Iterator[Any]:
    """The values inside ``value`` that are no object or list, depth first (the last member of an
    object or list first), ``None`` among them; at most ``most`` values and containers are
    visited in all, so a hostile reply of millions of values is read to a bound, and nesting of
    any depth costs no recursion."""
    stack, seen = [value], 0
    while stack and seen < most:
        item, seen = stack.pop(), seen + 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        else:
            yield item
