"""Synthesis of values that validate against a JSON Schema.

Used by the mock engine (results from ``output_parameters``) and by the generation job (arguments
from ``parameters``). Generation is deterministic for a given :class:`random.Random`; the caller
seeds it from stable inputs (run seed, session, call). Supported: ``type`` (and type lists),
``enum``/``const``, ``format`` (date, date-time, time, email, uri, uuid, ipv4, hostname),
numeric bounds and ``multipleOf``, string lengths and ``pattern`` (through a small regex sampler),
objects (required properties always, optional ones sometimes, ``additionalProperties``), arrays
(``items``, ``prefixItems``, length bounds, ``uniqueItems``), ``anyOf``/``oneOf``/``allOf`` and
local ``$ref``. Property names steer strings toward plausible values (``city`` -> a city name).

:class:`SynthHooks` lets a caller steer generation without re-implementing the schema walk: a
realistic value for a leaf (:mod:`fms_dgt.core.tools.fakes`), the size of an array, a last touch on
each object or array (ordering paired bounds, sorting dates). Whatever the hooks do, the value
returned still validates: a top-level value the validator refuses is generated again.
"""

from __future__ import annotations

import functools
import math
import random
import re
import string
import uuid
from collections.abc import Mapping
from typing import Any

from fms_dgt.core.tools.enrichments._dataflow_words import singular
from fms_dgt.core.tools.schema import CompiledValidator, get_validator
from fms_dgt.core.tools.schema.choices import described_choices, described_default, free_text
from fms_dgt.errors import SynthesisError
from fms_dgt.io import env_int

__all__ = [
    "MAX_ITEMS",
    "MAX_STRING",
    "MAX_VALUES",
    "MISSING",
    "Path",
    "SynthHooks",
    "SynthesisError",
    "is_filler",
    "synthesise",
]

_MAX_DEPTH = 6
#: Bounds on one synthesised value: schemas are untrusted, and ``minLength: 1000000000`` or
#: nested ``minItems`` would otherwise take the run's memory and time.
MAX_STRING = env_int("DGT_MAX_SYNTH_STRING", 10_000)
MAX_ITEMS = env_int("DGT_MAX_SYNTH_ITEMS", 1_000)
MAX_VALUES = env_int("DGT_MAX_SYNTH_VALUES", 100_000)

_WORDS = ["alpha", "river", "orbit", "maple", "signal", "harbor", "ember", "quartz", "meadow", "atlas"]
_FILLER = re.compile(rf"^(?:{'|'.join(_WORDS)})-\d{{1,3}}$")


def is_filler(value: Any) -> bool:
    """Whether ``value`` is the placeholder synthesis writes for a string nothing says the sense
    of (``river-410``), or a list of them: a value no call hands on to another."""
    if isinstance(value, list):  # a flat list: no nesting to recurse into
        return bool(value) and all(isinstance(v, str) and _FILLER.match(v) for v in value)
    return isinstance(value, str) and bool(_FILLER.match(value))


_HINTS: dict[str, list[str]] = {
    "city": ["Lisbon", "Nairobi", "Osaka", "Toronto", "Lyon", "Valparaiso"],
    "country": ["Portugal", "Kenya", "Japan", "Canada", "France", "Chile"],
    "name": ["Ada Lovelace", "Grace Hopper", "Alan Turing", "Katherine Johnson"],
    "title": ["Quarterly review", "Team lunch", "Design sync", "Release planning"],
    "query": ["weather tomorrow", "best pizza nearby", "python dataclasses", "train to Porto"],
    "keyword": ["solar", "budget", "marathon", "vaccines"],
    "currency": ["USD", "EUR", "JPY", "GBP"],
    "language": ["en", "fr", "pt", "ja"],
    "symbol": ["AAPL", "MSFT", "IBM", "NVDA"],
    "status": ["active", "pending", "closed"],
    "location": ["Lisbon, PT", "Nairobi, KE", "Osaka, JP"],
    "address": ["1 Main Street", "42 Rua Augusta", "7 Queen St"],
    "message": ["See you at noon.", "The report is ready.", "Running ten minutes late."],
    "description": ["A short description.", "Details to follow."],
}


#: Where a value sits in the synthesised document: property names, and item indexes in arrays.
Path = tuple[str | int, ...]


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


#: What a hook returns to let synthesis do its default.
MISSING: Any = _Missing()


class SynthHooks:
    """Callbacks that steer :func:`synthesise` (override the ones you need).

    ``path`` locates the value from the root (``("days", 2, "date")``); ``name`` is the property
    name the value is for (an array's items get the array's name made singular).
    """

    def leaf(self, schema: Mapping[str, Any], name: str, path: Path) -> Any:
        """A value for a scalar, enum or untyped node, or :data:`MISSING` for the default.

        The value should validate against ``schema``; one that makes the whole value invalid
        costs a retry.
        """
        return MISSING

    def branch(self, schema: Mapping[str, Any], branches: list[Any], name: str, path: Path) -> int | None:
        """Which of the (resolved) ``branches`` of ``schema``'s ``anyOf`` or ``oneOf`` to fill, or
        None for a random draw."""
        return None

    def count(self, schema: Mapping[str, Any], name: str, path: Path, low: int, high: int) -> int | None:
        """The number of items of an array (clamped to ``[low, high]``), or None for random.

        ``high`` is the schema's ``maxItems`` (at most :data:`MAX_ITEMS`).
        """
        return None

    def include(self, schema: Mapping[str, Any], name: str, path: Path) -> bool | None:
        """Whether to fill the optional property ``name`` at ``path``, or None for a random draw."""
        return None

    def finish(self, schema: Mapping[str, Any], value: Any, name: str, path: Path) -> Any:
        """The object or array just built, possibly adjusted (ordering, sorting)."""
        return value


def synthesise(
    schema: Any,
    rng: random.Random,
    *,
    name: str = "",
    optional_probability: float = 0.5,
    attempts: int = 5,
    fingerprint: str | None = None,
    validator: CompiledValidator | None = None,
    hooks: SynthHooks | None = None,
) -> Any:
    """A value valid against ``schema``.

    Args:
        schema: a Draft 2020-12 schema.
        rng: the random source (seed it for reproducibility).
        name: the property name the value is for (steers plausible strings).
        optional_probability: chance that an optional object property is filled.
        attempts: tries before giving up on schemas the generator does not fully understand.
        fingerprint: the schema's fingerprint when known (saves recomputing it for the cache).
        validator: the schema's compiled validator when the caller holds one.
        hooks: callbacks that steer leaves, array sizes and finished containers.

    Raises:
        SynthesisError: no valid value was found in ``attempts`` tries.
    """
    if validator is None and isinstance(schema, dict):
        validator = get_validator(schema, fingerprint)
    root = schema if isinstance(schema, dict) else {}
    generator = _Generator(rng, root, optional_probability, hooks or _NO_HOOKS)
    value: Any = None
    reason: str | None = None
    for _ in range(attempts):
        generator.made = 0
        try:
            value = generator.value(schema, name, 0, ())
        except _TooCostly as exc:
            raise SynthesisError(
                f"cannot synthesise a value for {name or 'the schema'}: {exc}. No tool call needs that; "
                "lower the schema's bounds"
            ) from None
        except (ValueError, TypeError, OverflowError, RecursionError) as exc:
            reason = f"contradictory or unsupported constraints ({exc})"
            continue
        if validator is None or validator.is_valid(value):
            return value
        reason = validator.explain(value) if validator is not None else None
    if reason is not None and _valid_but_for_one_of(schema, value):
        # Branches of a oneOf that overlap (Vonage's SMS answer: an error and a sent message, no
        # property required by either) reject every value; one valid under a branch is the answer.
        return value
    raise SynthesisError(
        f"cannot synthesise a value for {name or 'the schema'}: {reason}. Simplify or fix the "
        "schema's constraints."
    )


def _valid_but_for_one_of(schema: Any, value: Any) -> bool:
    """Whether ``value`` is valid when every ``oneOf`` of ``schema`` reads as an ``anyOf``."""
    found = False

    def relax(node: Any) -> Any:
        nonlocal found
        if isinstance(node, dict):
            out = {k: relax(v) for k, v in node.items() if k != "oneOf"}
            if "oneOf" in node:
                found = True
                out["allOf"] = [*out.get("allOf", []), {"anyOf": relax(node["oneOf"])}]
            return out
        return [relax(v) for v in node] if isinstance(node, list) else node

    relaxed = relax(schema)
    return found and isinstance(relaxed, dict) and get_validator(relaxed).is_valid(value)


#: Keywords :meth:`_Generator._value` looks at before the schema's type.
_COMBINED = frozenset({"$ref", "const", "enum", "anyOf", "oneOf", "allOf"})


class _TooCostly(Exception):
    """A schema asks for more than the synthesis bounds allow (not retried)."""


_NO_HOOKS = SynthHooks()


class _Generator:
    def __init__(
        self, rng: random.Random, root: Mapping[str, Any], optional_probability: float, hooks: SynthHooks
    ):
        self.rng = rng
        self.root = root
        self.optional_probability = optional_probability
        self.hooks = hooks
        self.steered = hooks is not _NO_HOOKS
        self.made = 0

    def value(self, schema: Any, name: str, depth: int, path: Path) -> Any:
        self.made += 1
        if self.made > MAX_VALUES:
            raise _TooCostly(f"it would take more than {MAX_VALUES:,} values")
        if depth > 64:
            raise _TooCostly("its references or nesting go more than 64 levels deep")
        return self._value(schema, name, depth, path)

    def _value(self, schema: Any, name: str, depth: int, path: Path) -> Any:
        # Schemas are plain dicts: the exact type check spares an ABC check per node (``True``, a
        # schema too, is no mapping).
        if (type(schema) is not dict and not isinstance(schema, Mapping)) or not schema:
            return self._leaf({}, name, path, lambda: self._scalar_for_name(name, {}))
        if _COMBINED.isdisjoint(schema):  # most nodes: a plain typed schema
            return self._typed(schema, self._pick_type(schema), name, depth, path)
        if "$ref" in schema:
            return self.value(self._resolve(schema), name, depth + 1, path)
        if "const" in schema:
            return schema["const"]
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return self._leaf(schema, name, path, lambda: self.rng.choice(schema["enum"]))
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list) and schema[key]:
                branch = schema[key][self._branch(schema, schema[key], name, path)]
                if isinstance(branch, Mapping) and "$ref" in branch:
                    branch = self._resolve(branch)
                rest = {k: v for k, v in schema.items() if k != key}
                merged = _merge(rest, branch)
                if "description" in rest:  # the parameter's own words name it, whichever form is drawn
                    merged["description"] = rest["description"]
                return self.value(merged, name, depth + 1, path)
        if isinstance(schema.get("allOf"), list):
            merged = dict(schema)
            for part in merged.pop("allOf"):
                if isinstance(part, Mapping) and "$ref" in part:
                    part = self._resolve(part)  # else a second $ref would replace the first
                merged = _merge(merged, part)
            return self.value(merged, name, depth + 1, path)
        return self._typed(schema, self._pick_type(schema), name, depth, path)

    def _branch(self, schema: Mapping[str, Any], branches: list[Any], name: str, path: Path) -> int:
        if self.steered:
            resolved = [self._resolve(b) if isinstance(b, Mapping) and "$ref" in b else b for b in branches]
            chosen = self.hooks.branch(schema, resolved, name, path)
            if chosen is not None and 0 <= chosen < len(branches):
                return chosen
        return self.rng.randrange(len(branches))  # draws as rng.choice did

    def _leaf(self, schema: Mapping[str, Any], name: str, path: Path, default: Any) -> Any:
        if self.steered:
            value = self.hooks.leaf(schema, name, path)
            if value is not MISSING:
                return value
        return default()

    def _resolve(self, schema: Mapping[str, Any]) -> Any:
        ref = str(schema["$ref"])
        node: Any = self.root
        if not ref.startswith("#"):
            return {}
        for part in ref.lstrip("#/").split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, Mapping) or part not in node:
                return {}
            node = node[part]
        return node

    def _pick_type(self, schema: Mapping[str, Any]) -> str:
        kind = schema.get("type")
        if isinstance(kind, list):
            non_null = [k for k in kind if k != "null"]
            return self.rng.choice(non_null) if non_null else "null"
        if isinstance(kind, str):
            return kind
        if "properties" in schema or "required" in schema:
            return "object"
        if "items" in schema or "prefixItems" in schema:
            return "array"
        stated = described_default(str(schema.get("description") or ""))
        if stated is not None:  # "Defaults to `0`": a number; "Defaults to True": a yes or no
            return _TYPE_OF.get(type(stated[0]), "string")
        return "string"

    def _typed(self, schema: Mapping[str, Any], kind: str, name: str, depth: int, path: Path) -> Any:
        if kind == "object":
            return self._finish(schema, self._object(schema, depth, path), name, path)
        if kind == "array":
            schema = _listed_items(schema)
            return self._finish(schema, self._array(schema, name, depth, path), name, path)
        if kind in ("integer", "number"):
            return self._leaf(schema, name, path, lambda: self._number(schema, kind == "integer"))
        if kind == "boolean":
            return self._leaf(schema, name, path, lambda: self.rng.random() < 0.5)
        if kind == "null":
            return None
        listed = described_choices(schema)
        if listed:
            # The values its description lists ('Can be "asc" or "desc"', BFCL's "[Enum]: [...]").
            return self._leaf({**schema, "enum": list(listed)}, name, path, lambda: self.rng.choice(listed))
        return self._leaf(schema, name, path, lambda: self._string(schema, name))

    def _finish(self, schema: Mapping[str, Any], value: Any, name: str, path: Path) -> Any:
        return self.hooks.finish(schema, value, name, path) if self.steered else value

    def _object(self, schema: Mapping[str, Any], depth: int, path: Path) -> dict[str, Any]:
        props: Mapping[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", ()))
        out: dict[str, Any] = {}
        title = schema.get("title")
        for key, sub in props.items():
            if key in _CLASS_NAMES and isinstance(title, str) and free_text(sub):
                sub = {**sub, "const": title}  # Airflow's TimeDelta is {"__type": "TimeDelta", ...}
            if key in required or self._include(sub, key, depth, (*path, key)):
                out[key] = self.value(sub, key, depth + 1, (*path, key))
        for key in required - set(out):
            extra = schema.get("additionalProperties", True)
            out[key] = self.value(extra if isinstance(extra, Mapping) else {}, key, depth + 1, (*path, key))
        return out

    def _include(self, schema: Any, name: str, depth: int, path: Path) -> bool:
        if depth >= _MAX_DEPTH:
            return False
        if self.steered:
            wanted = self.hooks.include(schema if isinstance(schema, Mapping) else {}, name, path)
            if wanted is not None:
                return wanted
        return self.rng.random() < self.optional_probability

    def _array(self, schema: Mapping[str, Any], name: str, depth: int, path: Path) -> list[Any]:
        prefix = list(schema.get("prefixItems", []))
        low = max(int(schema.get("minItems", 1 if depth < _MAX_DEPTH else 0)), len(prefix))
        if low > MAX_ITEMS:
            raise _TooCostly(f"it asks for at least {low:,} items (the bound is {MAX_ITEMS:,})")
        count = self._count(schema, name, path, low)
        items = schema.get("items", {})
        out = [
            self.value(prefix[i], name, depth + 1, (*path, i))
            if i < len(prefix)
            else self.value(items, singular(name), depth + 1, (*path, i))
            for i in range(count)
        ]
        if schema.get("uniqueItems"):
            out = _unique(out)
        return out

    def _count(self, schema: Mapping[str, Any], name: str, path: Path, low: int) -> int:
        if self.steered:
            cap = min(int(schema.get("maxItems", MAX_ITEMS)), MAX_ITEMS)
            wanted = self.hooks.count(schema, name, path, low, cap)
            if wanted is not None:
                return max(low, min(wanted, cap))
        high = int(schema.get("maxItems", max(low, 3)))
        return self.rng.randint(low, max(low, min(high, low + 2)))

    def _number(self, schema: Mapping[str, Any], integer: bool) -> int | float:
        low, high = _bounds(schema, integer)
        step = schema.get("multipleOf")
        if isinstance(step, (int, float)) and step > 0:
            first, last = math.ceil(low / step), math.floor(high / step)
            if first <= last:
                value = self.rng.randint(first, last) * step
                return int(value) if integer else value
        if integer:
            return self.rng.randint(math.ceil(low), math.floor(high))
        return round(self.rng.uniform(low, high), 2)

    def _string(self, schema: Mapping[str, Any], name: str) -> str:
        fmt = schema.get("format")
        if isinstance(schema.get("pattern"), str):  # the pattern is checked, a format seldom is
            sampled = sample_pattern(schema["pattern"], self.rng)
            if sampled is not None:
                return sampled
        if isinstance(fmt, str) and fmt in _FORMATS:
            return _FORMATS[fmt](self.rng)
        text = str(self._scalar_for_name(name, schema))
        low = int(schema.get("minLength", 0))
        if low > MAX_STRING:
            raise _TooCostly(
                f"it asks for a string of at least {low:,} characters (the bound is {MAX_STRING:,})"
            )
        high = int(schema.get("maxLength", max(low, len(text))))
        if len(text) < low:
            text += "".join(self.rng.choice(string.ascii_lowercase) for _ in range(low - len(text)))
        return text[:high]

    def _scalar_for_name(self, name: str, schema: Mapping[str, Any]) -> str:
        """A value a name hints at, else the default the description states, else a filler."""
        key = name.lower()
        for hint, values in _HINTS.items():
            if hint in key:
                return self.rng.choice(values)
        if key.endswith("id") or key.endswith("_ids"):
            return f"{key.rstrip('s').replace('_', '-') or 'id'}-{self.rng.randint(1000, 9999)}"
        stated = described_default(str(schema.get("description") or ""))  # read only when needed
        if stated is not None and isinstance(stated[0], str):
            return stated[0]
        return f"{self.rng.choice(_WORDS)}-{self.rng.randint(1, 999)}"


#: The schema type of a value a description states.
_TYPE_OF: dict[type, str] = {bool: "boolean", int: "integer", float: "number", str: "string"}


def _listed_items(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """``schema`` with an ``enum`` on its items when its description lists their values (BFCL:
    "The list of doors to lock or unlock. [Enum]: [...]")."""
    listed = described_choices(schema)
    return {**schema, "items": {**schema["items"], "enum": list(listed)}} if listed else schema


def _merge(base: Mapping[str, Any], extra: Any) -> dict[str, Any]:
    if not isinstance(extra, Mapping):
        return dict(base)
    merged = {**base, **extra}
    if "properties" in base and "properties" in extra:
        # A property both define must satisfy both (PeerTube's video channel: a summary's plain
        # name and the full channel's ^[a-z0-9._]+$ handle).
        ours, theirs = base["properties"], extra["properties"]
        merged["properties"] = {
            **ours,
            **{
                key: {"allOf": [ours[key], schema]} if key in ours and ours[key] != schema else schema
                for key, schema in theirs.items()
            },
        }
    if "required" in base and "required" in extra:
        merged["required"] = list(dict.fromkeys([*base["required"], *extra["required"]]))
    return merged


def _bounds(schema: Mapping[str, Any], integer: bool) -> tuple[float, float]:
    low = float(schema.get("minimum", -math.inf))
    high = float(schema.get("maximum", math.inf))
    if "exclusiveMinimum" in schema:
        low = max(low, float(schema["exclusiveMinimum"]) + (1 if integer else 1e-6))
    if "exclusiveMaximum" in schema:
        high = min(high, float(schema["exclusiveMaximum"]) - (1 if integer else 1e-6))
    if math.isinf(low) and math.isinf(high):
        low, high = (1, 100)
    elif math.isinf(low):
        low = high - 100
    elif math.isinf(high):
        high = low + 100
    return low, high


#: Properties that by convention hold the name of the class an object is (marshmallow's ``__type``,
#: JSON-LD's ``@type``): an object whose schema has a title is named by it.
_CLASS_NAMES = frozenset({"__type", "@type"})


def _unique(values: list[Any]) -> list[Any]:
    seen: list[Any] = []
    for value in values:
        if value not in seen:
            seen.append(value)
    return seen


_FORMATS = {
    "date": lambda r: f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}",
    "date-time": lambda r: (
        f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}T"
        f"{r.randint(0, 23):02d}:{r.choice((0, 15, 30, 45)):02d}:00Z"
    ),
    "time": lambda r: f"{r.randint(0, 23):02d}:{r.choice((0, 15, 30, 45)):02d}:00Z",
    "email": lambda r: f"{r.choice(('ada', 'grace', 'alan', 'kat'))}{r.randint(1, 99)}@example.com",
    "uri": lambda r: f"https://example.com/{r.choice(_WORDS)}/{r.randint(1, 999)}",
    "url": lambda r: f"https://example.com/{r.choice(_WORDS)}",
    "uuid": lambda r: str(uuid.UUID(int=r.getrandbits(128), version=4)),
    "ipv4": lambda r: f"192.0.2.{r.randint(1, 254)}",
    "hostname": lambda r: f"{r.choice(_WORDS)}.example.com",
}


# ---------------------------------------------------------------- a small regex sampler


def sample_pattern(pattern: str, rng: random.Random) -> str | None:
    """A string matching ``pattern`` (searched, as JSON Schema does), or None if unsupported."""
    parsed = _parse(pattern)
    if parsed is None:
        return None
    try:
        text = "".join(_emit(parsed, rng))
    except _Unsupported:
        return None
    return text if re.search(pattern, text) else None


class _Unsupported(Exception):
    pass


@functools.lru_cache(maxsize=1024)
def _parse(pattern: str) -> Any:
    try:
        from re import _parser as sre_parse  # type: ignore[attr-defined]

        return sre_parse.parse(pattern)
    except (ImportError, re.error, AttributeError):
        return None


def _emit(tokens: Any, rng: random.Random) -> list[str]:
    out: list[str] = []
    for op, arg in tokens:
        out.extend(_emit_one(str(op), arg, rng))
    return out


def _emit_one(op: str, arg: Any, rng: random.Random) -> list[str]:
    if op == "LITERAL":
        return [chr(arg)]
    if op == "ANY":
        return [rng.choice(string.ascii_letters)]
    if op == "IN":
        return [_from_class(arg, rng)]
    if op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        low, high, sub = arg
        count = rng.randint(low, min(high, low + 3)) if high != sre_maxrepeat() else rng.randint(low, low + 3)
        return [c for _ in range(count) for c in _emit(sub, rng)]
    if op == "SUBPATTERN":
        return _emit(arg[-1], rng)
    if op == "BRANCH":
        return _emit(rng.choice(arg[1]), rng)
    if op == "AT":
        return []
    raise _Unsupported(op)


def sre_maxrepeat() -> int:
    from re import _constants  # type: ignore[attr-defined]

    return int(_constants.MAXREPEAT)


_CATEGORIES = {
    "CATEGORY_DIGIT": string.digits,
    "CATEGORY_WORD": string.ascii_letters + string.digits + "_",
    "CATEGORY_SPACE": " ",
}


def _from_class(items: Any, rng: random.Random) -> str:
    choices: list[str] = []
    for op, arg in items:
        kind = str(op)
        if kind == "NEGATE":
            raise _Unsupported(kind)
        if kind == "LITERAL":
            choices.append(chr(arg))
        elif kind == "RANGE":
            choices.extend(chr(c) for c in range(arg[0], min(arg[1], arg[0] + 60) + 1))
        elif kind == "CATEGORY" and str(arg) in _CATEGORIES:
            choices.extend(_CATEGORIES[str(arg)])
        else:
            raise _Unsupported(kind)
    if not choices:
        raise _Unsupported("empty class")
    return rng.choice(choices)
