"""JSON encoders built once, giving the exact text of ``json.dumps`` with fixed options.

``json.dumps(value, ...)`` with any option builds a new encoder (and its C encoder) on every call;
an export encodes every argument, result and record of a run, so the encoders here are built once.
Each gives the text ``json.dumps(value, ensure_ascii=False, ...)`` gives, for JSON data (no cycles:
the circular-reference check is what they leave out). They are made in
:mod:`fms_dgt.core.tools._json`, which the engines and wire formats use too.
"""

from __future__ import annotations

from fms_dgt.core.tools._json import COMPACT, COMPACT_SORTED, PLAIN, SORTED, encoder

__all__ = ["COMPACT", "COMPACT_SORTED", "PLAIN", "SORTED", "encoder"]
