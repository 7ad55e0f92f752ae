"""Parameters of the ``dataflow`` enrichment: JSON types, signatures and signature tables.

A *signature* is (name text, description, type key, role); parameters that share one are scored
once. The role says whether the parameter is an identifier and of which entity
(:mod:`._dataflow_entities`); the parameters themselves come from :mod:`._dataflow_fields`.
:func:`build_side` collects one side (inputs or outputs) of every tool, taking the rows of
namespaces the memo knows from the memo and doing per-tool work only for the others.
:func:`type_key` and :func:`type_compatibility` define the type part of an edge's score.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from fms_dgt.core.tools.artifacts import ITEM, WHOLE_RESULT, split_path
from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.enrichments._dataflow_choices import with_choices
from fms_dgt.core.tools.enrichments._dataflow_entities import (
    bare_label,
    compound_name,
    context_entity,
    in_space,
    name_entity,
    name_text,
    parse_role,
    path_entity,
    role,
    schema_entity,
    singular,
    with_variants,
    words,
)
from fms_dgt.core.tools.enrichments._dataflow_fields import (
    Field,
    input_fields,
    output_fields,
    response_variants,
)
from fms_dgt.core.tools.schema import json_type

if TYPE_CHECKING:
    from fms_dgt.core.tools.enrichments._dataflow_memo import Memo

__all__ = [
    "ONE_ITEM",
    "Names",
    "Side",
    "SignatureTable",
    "build_side",
    "input_fields",
    "output_fields",
    "route_path",
    "signature",
    "type_compatibility",
    "type_key",
]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float32]


# --------------------------------------------------------------------------- types


def _schema_types(schema: Any) -> set[str]:
    """The JSON types a schema admits (``any`` when unconstrained)."""
    if not isinstance(schema, dict):
        return {"any"}
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list) and kind:
        return {str(k) for k in kind}
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            return set().union(*(_schema_types(b) for b in branches))
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if isinstance(values, list) and values:
        return {json_type(v) for v in values}
    return {"any"}


def type_key(schema: Any) -> str:
    """A canonical string for the type of a parameter schema.

    Examples: ``string``, ``integer|string``, ``number?`` (nullable), ``array<string>``, ``any``.
    """
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, str) and kind != "array":
        return kind  # the common case, without building sets
    types = _schema_types(schema)
    if "any" in types:
        return "any"
    nullable = "null" in types and len(types) > 1
    types.discard("null")
    key = "|".join(sorted(types))
    if key == "array" and isinstance(schema, dict) and isinstance(schema.get("items"), dict):
        key = f"array<{type_key(schema['items'])}>"
    return key + ("?" if nullable else "")


def _parse_key(key: str) -> tuple[list[str], bool]:
    nullable = key.endswith("?")
    body = key[:-1] if nullable else key
    if body.startswith("array<"):
        return [body], nullable
    return body.split("|"), nullable


#: Type fit of a value into a list of its type (``dag_id`` -> ``dag_ids``: a list of one).
ONE_ITEM = 0.9


def _scalar_fit(out: str, into: str) -> float:
    if out == into:
        return 1.0
    if "any" in (out, into):
        return 0.6
    if out.startswith("array") and into.startswith("array"):
        inner_out = out[6:-1] if out.startswith("array<") else "any"
        inner_in = into[6:-1] if into.startswith("array<") else "any"
        return 0.2 + 0.8 * type_compatibility(inner_out, inner_in)
    if into.startswith("array<") and not out.startswith("array"):
        return ONE_ITEM * type_compatibility(out, into[6:-1])  # passed as a list of one
    if (out, into) == ("integer", "number"):
        return 0.9
    if (out, into) == ("number", "integer"):
        return 0.5
    if into == "string" and out in ("integer", "number", "boolean"):
        return 0.3
    return 0.0


def type_compatibility(out_key: str, in_key: str) -> float:
    """How well a value of type ``out_key`` fits an input of type ``in_key`` (both from :func:`type_key`)."""
    outs, out_null = _parse_key(out_key)
    ins, in_null = _parse_key(in_key)
    best = [max(_scalar_fit(o, i) for i in ins) for o in outs]
    score = sum(best) / len(best)
    return score * 0.9 if out_null and not in_null else score


# --------------------------------------------------------------------------- signatures


def signature(tool: Tool, found: Field, output: bool) -> tuple[str, str, str, str]:
    """The signature of a parameter: (name text, description, type key, role).

    The name text is the parameter's own name as words (the tool's name for a whole result); a
    bare identifier (``id`` of a pet) is prefixed with the entity it names (``pet id``), so it reads
    like the named identifiers it should match, and so is a bare label (``name`` of a location
    reads ``location name``; an input's ``name`` reads with its tool's entity).
    """
    kind = type_key(found.schema)
    reference = _reference(found.schema)
    if reference is not None:  # a string or the object it names: the string is the object's id
        kind, entities = reference
        entity = entities[0] if len(set(entities)) == 1 else ""  # several: any of them (variants)
        label = with_variants(f"id:{_leaf_entity(found.leaf)}|{entity}", entities)
    else:
        label = role(
            found.leaf,
            found.schema,
            kind,
            lambda: _context(tool, found, output),
            output,
            lambda: _role_of(found),
            lambda: compound_name(found.places) if output else "",
        )
    if not output and not label.startswith("id:") and kind in ("string", "integer"):
        label = _path_key(tool, found) or _result_role(tool, found.name) or label
    if not output and label.startswith("id:") and _last_path_parameter(tool, found):  # what the call acts on
        label = with_variants(label, [schema_entity(n) for n in response_variants(tool)])
    text = name_text(tool.name if output and found.name == WHOLE_RESULT else found.leaf)
    if output and found.name.endswith(ITEM):  # an item of "user_ids" is a "user id"
        head, _, last = text.rpartition(" ")
        text = f"{head} {singular(last)}".strip()
    if label.startswith("id:|") and parse_role(label).b:
        text = f"{parse_role(label).b} {text}"
    elif bare_label(found.leaf):  # a location's name reads "location name"
        text = f"{parse_role(label).place} {text}".strip()
    listed = with_choices(in_space(label, tool.namespace), found.schema)  # its values, when it lists them
    return text, str(found.schema.get("description", "")), kind, listed


def _context(tool: Tool, found: Field, output: bool) -> str:
    """The entity where a parameter sits; a REST path parameter's is the collection before it."""
    path = route_path(tool)
    if not output and path:
        argument = tool.metadata["route"].get("arguments", {}).get(found.name)
        if isinstance(argument, dict) and argument.get("in") == "path":
            entity = path_entity(path, str(argument.get("name", found.name)))
            if entity:
                return entity
    return context_entity(tool.name, found.places, path, found.titles())


def _role_of(found: Field) -> str:
    """The entity the property holding ``found`` names when the object it holds has a schema
    name of its own (``mainDirector`` holding a ``StaffHeader``: a director, and a staff
    member), else ``""``: a bare identifier there is both."""
    if not found.holders or not found.places or found.places[-1] == found.holders[-1]:
        return ""
    return name_entity(found.holders[-1])


_ID_SCALARS = ("string", "integer")


def _reference(schema: Any) -> tuple[str, list[str]] | None:
    """``(type, entities)`` of a reference field, else None (several entities when it may be
    any of several objects: a balance transaction's ``source``).

    A field that is either a string or an object (``anyOf: [string, $ref:
    payout]``: an expandable reference, as Stripe's ``original_payout``) holds the object's id
    unless expanded; the entity is the object's schema name (its ``$ref`` or ``title``). A string
    branch with an ``enum`` is no id (``anyOf: [address, enum: [""]]``: an address, or "" to clear it),
    nor is a number (``anyOf: [range_query_specs, integer]``: a time, or a range of times).
    """
    branches = schema.get("anyOf") or schema.get("oneOf") if isinstance(schema, dict) else None
    if not isinstance(branches, list) or len(branches) < 2:
        return None
    objects = [b for b in branches if isinstance(b, dict)]
    # ``{"type": "string", "enum": [""]}`` is Stripe's way to clear a value, not an id.
    scalars = [b["type"] for b in objects if b.get("type") == "string" and "enum" not in b]
    names = [_schema_name(b) for b in objects if b.get("type") not in _ID_SCALARS]
    if len(scalars) != 1 or not names or not names[0]:
        return None
    return str(scalars[0]), [n for n in names if n]


def _schema_name(branch: dict[str, Any]) -> str:
    """The entity an object branch names: its ``$ref``'s last step or its ``title`` (``""``)."""
    ref = branch.get("$ref")
    name = ref.rsplit("/", 1)[-1] if isinstance(ref, str) else branch.get("title")
    return schema_entity(name) if isinstance(name, str) else ""


def _leaf_entity(name: str) -> str:
    """The entity a reference field's own name gives (``original_payout`` -> payout; ``""`` for
    a name without a noun, as ``reversed_by``)."""
    found = [w for w in words(name) if len(w) > 2 and not w.endswith("ed") and w not in ("by", "for")]
    return singular(found[-1]) if found else ""


def _path_key(tool: Tool, found: Field) -> str:
    """The identifier role of a REST path parameter named for the collection before it
    (``/v1/refunds/{refund}``, ``/v1/tax_rates/{tax_rate}``, ``/v1/subscription_items/{item}``:
    an identifier of the path's entity), else ``""``."""
    path = route_path(tool)
    if not path:
        return ""
    argument = tool.metadata["route"].get("arguments", {}).get(found.name)
    if not isinstance(argument, dict) or argument.get("in") != "path":
        return ""
    param = str(argument.get("name", found.name))
    entity = path_entity(path, param)
    named = [singular(w) for w in words(found.leaf)]
    segments = [s for s in path.split("/") if s]
    where = segments.index(f"{{{param}}}") if f"{{{param}}}" in segments else 0
    collection = [singular(w) for w in words(segments[where - 1])] if where > 0 else []
    if named and named[-1] == "token":  # /shipping_rates/{shipping_rate_token}
        named = named[:-1]
    if not entity or named not in ([entity], collection, collection[-1:]):
        return ""
    return f"id:{entity}|{entity}"


#: Per thread, the last tool whose result roles were read, and those roles.
_RESULT_ROLES = threading.local()


def _result_role(tool: Tool, name: str) -> str:
    """The identifier role of the tool's result property ``name``, or of its listed items' (a
    list's ``customer`` filter takes what each charge's ``customer`` holds; a new card's
    ``replacement_for`` is what the created card's will be), else ``""``."""
    if getattr(_RESULT_ROLES, "tool", None) is not tool:  # a tool's inputs are read one after another
        roles: dict[str, str] = {}
        for field in output_fields(tool):
            steps = split_path(field.name)
            listed = 2 <= len(steps) <= 3 and steps[-2] == 0
            if (listed or len(steps) == 1) and isinstance(steps[-1], str):
                label = signature(tool, field, True)[3]
                if label.startswith("id:"):
                    roles.setdefault(steps[-1], label)
        _RESULT_ROLES.tool, _RESULT_ROLES.roles = tool, roles
    found: str = _RESULT_ROLES.roles.get(name, "")
    return found


def _last_path_parameter(tool: Tool, found: Field) -> bool:
    """Whether ``found`` is the parameter that ends the tool's REST path (``{id}`` of
    ``/v1/customers/{customer}/sources/{id}``: the object the call returns; not ``{customer}`` of
    ``/v1/customers/{customer}/sources``, whose result is a new source)."""
    route = tool.metadata.get("route")
    arguments = route.get("arguments") if isinstance(route, dict) else None
    argument = arguments.get(found.name) if isinstance(arguments, dict) else None
    if not isinstance(argument, dict) or argument.get("in") != "path":
        return False
    return route_path(tool).rstrip("/").endswith(f"/{{{argument.get('name', found.name)}}}")


def route_path(tool: Tool) -> str:
    """The REST path of a tool loaded from an OpenAPI spec (``""`` for other tools)."""
    route = tool.metadata.get("route")
    path = route.get("path") if isinstance(route, dict) else None
    return path if isinstance(path, str) else ""


Signature = tuple[str, str, str, str]


def _signature_key(signature: Signature) -> str:
    return hashlib.sha256("\x1f".join(signature).encode()).hexdigest()[:32]


class Names:
    """Strings by id (parameter names, type keys): the memo's first, new ones appended."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self._ids: dict[str, int] | None = None

    def id(self, name: str) -> int:
        ids = self._ids
        if ids is None:
            ids = self._ids = {n: i for i, n in enumerate(self.names)}
        found = ids.get(name)
        if found is None:
            found = ids[name] = len(self.names)
            self.names.append(name)
        return found


class Side:
    """The parameters of one side (inputs or outputs) of every tool, grouped into signatures.

    A signature is (name text, description, type key, role); parameters that share one are scored
    once. Signatures are numbered in order of first appearance in registry order.

    Attributes:
        tool, name, sig: per parameter instance, its tool (registry position), name id and
            signature id; instances are in registry order, fields in schema order.
        keys, types, roles: per signature, its content key (ASCII bytes), type key id and role
            id (into the pool's shared type and role tables).
        texts: per signature without a vector yet, its ``(name text, description)``.
        vectors, inverse: per signature, the quantised vector and its inverse norm (filled by
            the enrichment for signatures listed in ``texts``).
        members, ptr: instances grouped by signature (``members[ptr[s]:ptr[s + 1]]``).
        rank, chosen: signature table id -> signature id, and back.
        marks: per signature, a number drawn from its content key; ``spots``: per instance, one
            drawn from its tool's qualified name and parameters' fingerprint (overloads differ)
            and its own name (set by :func:`mark` when :func:`build_side` builds it). Equal
            scores are ordered by them, so the order among ties in one namespace does not move
            when tools are added elsewhere in the pool.
    """

    def __init__(
        self,
        tool: IntArray,
        name: IntArray,
        combined: IntArray,
        table: SignatureTable,
    ) -> None:
        if len(tool) and bool((np.diff(tool) < 0).any()):  # namespaces interleave in the registry
            order = np.argsort(tool, kind="stable")
            tool, name, combined = tool[order], name[order], combined[order]
        self.tool, self.name = tool, name
        combined = table.resolve(combined)
        # Number the signatures in order of first appearance (ids are dense: no sort of instances).
        first = np.full(table.size, len(combined), dtype=np.int64)
        np.minimum.at(first, combined, np.arange(len(combined), dtype=np.int64))
        used = np.flatnonzero(first < len(combined))
        chosen = used[np.argsort(first[used], kind="stable")]
        rank = np.zeros(table.size, dtype=np.int64)
        rank[chosen] = np.arange(len(chosen), dtype=np.int64)
        self.sig = rank[combined]
        self.combined, self.rank, self.chosen, self.table = combined, rank, chosen, table
        self.keys, self.types, self.roles, self.texts, self.vectors, self.inverse = table.select(chosen)
        self.members = np.argsort(self.sig, kind="stable")
        counts = np.bincount(self.sig, minlength=len(self.keys))
        self.ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        self.marks = _marks(self.keys)
        self.spots = np.zeros(len(self.sig), dtype=np.uint64)

    def __len__(self) -> int:
        return len(self.sig)


def _digest(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


_SPREAD = 0x9E3779B97F4A7C15


def signature_mark(signature: Signature) -> int:
    """The mark of a signature (see :class:`Side`)."""
    return int(_marks(np.array([_signature_key(signature).encode()], dtype="S32"))[0])


def _marks(keys: npt.NDArray[np.bytes_]) -> npt.NDArray[np.uint64]:
    """Per signature key (a digest: its 32 bytes are read as they are, as a memo's are not
    trusted), its mark."""
    words = np.ascontiguousarray(keys.astype("S32")).view("<u8").reshape(-1, 4)
    mixed: npt.NDArray[np.uint64] = (words[:, 0] ^ (words[:, 1] * np.uint64(_SPREAD))) ^ (
        words[:, 2] + words[:, 3]
    )
    return mixed


def spot(tool: Tool, name: str) -> int:
    """The spot of a parameter ``name`` of ``tool`` (see :class:`Side`)."""
    by_tool = np.array([_digest(_identity(tool))], dtype=np.uint64)
    return int(_spots(by_tool, np.array([_digest(name)], dtype=np.uint64))[0])


def _spots(by_tool: npt.NDArray[np.uint64], by_name: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """Spots from the digests of each instance's tool and name."""
    mixed: npt.NDArray[np.uint64] = by_tool ^ (by_name * np.uint64(_SPREAD))
    return mixed


def _identity(tool: Tool) -> str:
    """A tool's qualified name and its parameters' fingerprint: overloads differ."""
    return f"{tool.qualified_name}\x1f{tool.fingerprint}"


def mark(side: Side, tools: Sequence[Tool], names: Sequence[str]) -> Side:
    """``side`` with its ``spots`` set: per instance, a number from its tool (:func:`_identity`)
    and its name."""
    if not len(side):
        return side
    used_tools, tool_of = np.unique(side.tool, return_inverse=True)
    used_names, name_of = np.unique(side.name, return_inverse=True)
    by_tool = np.array([_digest(_identity(tools[t])) for t in used_tools.tolist()], dtype=np.uint64)
    by_name = np.array([_digest(names[n]) for n in used_names.tolist()], dtype=np.uint64)
    side.spots = _spots(by_tool[tool_of], by_name[name_of])
    return side


class SignatureTable:
    """The signatures a side can use: the memo's (ids ``0..M-1``) and new ones (ids ``M..``)."""

    def __init__(self, memo: Memo | None, side: str, dim: int, types: Names, roles: Names) -> None:
        self.type_table, self.role_table = types, roles
        if memo is None:
            self.keys = np.zeros(0, dtype="S32")
            self.order = np.zeros(0, dtype=np.int32)
            self.types = np.zeros(0, dtype=np.int64)
            self.roles = np.zeros(0, dtype=np.int64)
            self.vectors = np.zeros((0, dim), dtype=np.int8)
            self.inverse = np.zeros(0, dtype=np.float32)
        else:
            table = memo.tables[side]
            self.keys, self.order, self.types = table["keys"], table["order"], table["types"]
            self.roles = table["roles"]
            self.vectors, self.inverse = table["vectors"], table["inverse"]
        self.stored = len(self.keys)
        self.new: dict[Signature, int] = {}
        self.new_rows: list[tuple[Signature, str]] = []

    @property
    def size(self) -> int:
        """Number of ids in use (stored and new)."""
        return self.stored + len(self.new_rows)

    def id(self, signature: Signature) -> int:
        """A provisional id for a signature met in a namespace the memo does not hold."""
        found = self.new.get(signature)
        if found is None:
            found = self.new[signature] = self.stored + len(self.new_rows)
            self.new_rows.append((signature, _signature_key(signature)))
        return found

    def resolve(self, combined: IntArray) -> IntArray:
        """Map provisional ids of signatures the memo already holds (by key) to the memo's ids."""
        if not self.new_rows or not self.stored:
            return combined
        wanted = np.asarray([key for _, key in self.new_rows], dtype="S32")
        place = np.minimum(np.searchsorted(self.keys, wanted, sorter=self.order), self.stored - 1)
        match = self.order[place].astype(np.int64)
        known = self.keys[match] == wanted
        remap = np.where(known, match, -1)
        unknown = np.flatnonzero(~known)
        remap[unknown] = self.stored + np.arange(len(unknown))
        self.new_rows = [self.new_rows[i] for i in unknown.tolist()]
        return np.where(combined >= self.stored, remap[np.maximum(combined - self.stored, 0)], combined)

    def select(
        self, chosen: IntArray
    ) -> tuple[
        npt.NDArray[np.bytes_], IntArray, IntArray, dict[int, tuple[str, str]], FloatArray, FloatArray
    ]:
        """Keys (ASCII bytes), type keys, roles, texts (new signatures only), vectors and inverse norms."""
        stored = chosen < self.stored
        old = np.flatnonzero(stored)
        fresh = np.flatnonzero(~stored).tolist()
        keys = np.empty(len(chosen), dtype="S32")
        types = np.zeros(len(chosen), dtype=np.int64)
        roles = np.zeros(len(chosen), dtype=np.int64)
        vectors = np.zeros((len(chosen), self.vectors.shape[1]), dtype=np.float32)
        inverse = np.zeros(len(chosen), dtype=np.float32)
        if len(old):
            ids = chosen[old]
            keys[old] = self.keys[ids]
            types[old] = self.types[ids]
            roles[old] = self.roles[ids]
            vectors[old] = self.vectors[ids]
            inverse[old] = self.inverse[ids]
        texts: dict[int, tuple[str, str]] = {}
        for position in fresh:
            signature, key = self.new_rows[int(chosen[position]) - self.stored]
            keys[position] = key.encode()
            types[position] = self.type_table.id(signature[2])
            roles[position] = self.role_table.id(signature[3])
            texts[position] = (signature[0], signature[1])
        return keys, types, roles, texts, vectors, inverse


def build_side(
    tools: Sequence[Tool],
    groups: Sequence[tuple[str | None, IntArray]],
    memo: Memo | None,
    outputs: bool,
    names: Names,
    tables: tuple[Names, Names],
    dim: int,
) -> Side:
    """A side of the pool: memo rows for known namespaces, per-tool work for the others.

    ``tables`` are the pool's type-key and role tables (shared by both sides).
    """
    side = "out" if outputs else "in"
    table = SignatureTable(memo, side, dim, *tables)
    fields = output_fields if outputs else input_fields
    parts: list[tuple[IntArray, IntArray, IntArray]] = []
    for key, rows in groups:
        found = memo.positions.get(key) if memo is not None and key is not None else None
        if memo is not None and found is not None:
            arrays, position = memo.shards[found[0]], found[1]
            lo, hi = (int(v) for v in arrays[f"{side}_ptr"][position : position + 2])
            parts.append(
                (
                    rows[arrays[f"{side}_local"][lo:hi]],
                    arrays[f"{side}_name"][lo:hi].astype(np.int64),
                    arrays[f"{side}_sig"][lo:hi].astype(np.int64),
                )
            )
            continue
        tool_ids: list[int] = []
        name_ids: list[int] = []
        sig_ids: list[int] = []
        for t_id in rows.tolist():
            tool = tools[t_id]
            for param in fields(tool):
                sig_ids.append(table.id(signature(tool, param, outputs)))
                tool_ids.append(t_id)
                name_ids.append(names.id(param.name))
        parts.append(
            (np.asarray(tool_ids, np.int64), np.asarray(name_ids, np.int64), np.asarray(sig_ids, np.int64))
        )
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return Side(empty, empty, empty, table)
    instance_tool, instance_name, combined = (np.concatenate([p[i] for p in parts]) for i in range(3))
    return mark(Side(instance_tool, instance_name, combined, table), tools, names.names)
