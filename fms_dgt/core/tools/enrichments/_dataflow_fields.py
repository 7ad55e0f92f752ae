"""The parameters the ``dataflow`` enrichment wires: a tool's inputs and its (nested) outputs.

Inputs are the properties of ``parameters``. Outputs are the properties of ``output_parameters``
and, to a bounded depth, what is nested in them, each named by its path in the result (see
:func:`~fms_dgt.core.tools.artifacts.read_path`): ``location.name`` (a property of an object),
``airports[]`` (the items of an array of scalars), ``author[].id`` (a property of the items of an
array of objects), ``[].id`` (the same for a result that is an array). A result that is not an
object with properties is also the output ``""`` (the whole result).

Local ``$ref`` (``#/$defs/...``, ``#/definitions/...``) and ``allOf`` are followed, and a
nullable object (``anyOf: [object, null]``) is read as the object.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fms_dgt.core.tools.artifacts import WHOLE_RESULT, item_path, join_path
from fms_dgt.core.tools.data_objects import Tool

__all__ = [
    "MAX_DEPTH",
    "MAX_NESTED",
    "Field",
    "find_field",
    "input_fields",
    "input_schema",
    "output_fields",
    "response_variants",
    "union_names",
]

#: Levels below the top-level output properties that are read (``a.b.c.d`` is level 3).
MAX_DEPTH = 3
#: Nested outputs kept per tool (shallower first), so a huge result schema stays bounded.
MAX_NESTED = 48
_MAX_REFS = 8
_SCALARS = ("string", "integer", "number", "boolean", "null")
#: Most object names a union is read for (the entities' cap, :data:`._dataflow_entities.MAX_VARIANTS`).
MAX_VARIANT_NAMES = 32
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")


@dataclass(frozen=True, slots=True, kw_only=True)
class Field:
    """One parameter of a tool.

    Attributes:
        name: the input's name, or the output's path.
        leaf: the name it has where it sits (``name`` for ``location.name``, ``airports`` for
            ``airports[]``; the tool's name for the whole result).
        schema: its schema (references followed).
        holders: names of the properties it sits in, outermost first.
        places: where it sits, outermost first: for each object holding it, the property's name
            and then the object's ``title`` or ``$ref`` name, when it has them (``("author",
            "Person")`` for ``author[].id`` when the items are a ``Person``; the whole result's
            title comes first). Its entity is read from the last one that names something.
    """

    name: str
    leaf: str
    schema: Mapping[str, Any]
    holders: tuple[str, ...] = ()
    places: tuple[str, ...] = field(default=())

    def titles(self) -> list[str]:
        """The schema names among :attr:`places` (what is left once the holders are taken out)."""
        titles = list(self.places)
        for holder in self.holders:
            if holder in titles:
                titles.remove(holder)
        return titles


def input_fields(tool: Tool) -> list[Field]:
    """The top-level properties of the tool's ``parameters``."""
    props = tool.parameters.get("properties")
    if not isinstance(props, dict):
        return []
    return [
        Field(name=str(n), leaf=str(n), schema=s if isinstance(s, dict) else {}) for n, s in props.items()
    ]


def input_schema(tool: Tool, name: str) -> Mapping[str, Any]:
    """The schema of ``tool``'s input ``name`` with its local references, ``allOf`` and a
    nullable wrapper followed (:func:`input_fields` keeps them as written), ``{}`` when unknown."""
    props = tool.parameters.get("properties")
    schema = props.get(name) if isinstance(props, Mapping) else None
    return _resolve(schema, _definitions(tool.parameters))[0] if isinstance(schema, Mapping) else {}


def output_fields(tool: Tool) -> list[Field]:
    """The outputs of a tool: top-level properties, then nested ones (breadth first, bounded)."""
    root = tool.output_parameters
    if not root:
        return []
    defs = _definitions(root)
    schema, title = _resolve(root, defs)
    if not schema or _outcome_only(tool, schema):
        return []
    walk = _Walk(defs)
    if _properties(schema):
        walk.children("", schema, (), _named((), title), 0)
    else:
        walk.fields.append(Field(name=WHOLE_RESULT, leaf=tool.name, schema=schema))
        walk.expand(Field(name=WHOLE_RESULT, leaf=tool.name, schema=schema), title, 0)
    return walk.run()


#: Names of a result's fields that only say how the call went.
_OUTCOME = frozenset({"status", "success", "ok", "message", "msg", "error", "errors", "detail", "details"})
#: First words of a tool's name that make it an action (what it answers is how the action went).
_ACTIONS = frozenset(
    [
        "add",
        "create",
        "delete",
        "remove",
        "update",
        "modify",
        "cancel",
        "set",
        "send",
        "record",
        "register",
        "book",
        "post",
        "put",
        "patch",
        "upload",
        "reset",
        "change",
        "edit",
        "save",
        "store",
        "submit",
        "insert",
        "forgot",
    ]
)


def _outcome_only(tool: Tool, schema: Mapping[str, Any]) -> bool:
    """Whether a tool is an action whose result only says how it went (API-Bank's ``DeleteAlarm``
    answering ``{"status": "success"}``): that status is no value to pass on ("take the status
    and send an email"). A lookup's status is its answer (a ticket's, a member's travel status),
    so a REST operation counts as an action unless it is a GET, another tool when its name
    starts with an action's verb."""
    props = _properties(schema)
    if not props or any(str(n).lower().replace("_", "") not in _OUTCOME for n in props):
        return False
    route = tool.metadata.get("route")
    method = route.get("method") if isinstance(route, Mapping) else None
    if isinstance(method, str):
        return method.upper() != "GET"
    words = _WORD.findall(tool.name)
    return bool(words) and words[0].lower() in _ACTIONS


def response_variants(tool: Tool) -> list[str]:
    """The schema names of the objects a tool's result may be, when it is a union of two or more
    (Stripe's ``payment_source``: an account, a bank account, a card or a source), else ``[]``."""
    root = tool.output_parameters
    return union_names(root, _definitions(root)) if root else []


def union_names(schema: Any, defs: Mapping[str, Any], depth: int = 0) -> list[str]:
    """The distinct names (``$ref`` target or ``title``) of a union's object branches, nested
    unions flattened (three levels at most); ``[]`` when ``schema`` is no union of two objects or
    more, or of more than :data:`MAX_VARIANT_NAMES` (a union of everything names nothing)."""
    names: list[str] = []
    if not _union_names(schema, defs, depth, names, set()):
        return []
    names = [n for n in names if not any(_extends(n, m) for m in names)]
    return names if len(names) > 1 else []


def _union_names(schema: Any, defs: Mapping[str, Any], depth: int, names: list[str], seen: set[str]) -> bool:
    """Add the names of ``schema``'s branches to ``names`` (each once); False once there are too
    many. A ``$ref`` already read is not read again (a union that includes itself)."""
    for branch in _branches(schema, defs):
        ref = branch.get("$ref")
        if isinstance(ref, str):
            if ref in seen:
                continue
            seen.add(ref)
        if depth < 3 and _branches(branch, defs):
            if not _union_names(branch, defs, depth + 1, names, seen):
                return False
            continue
        _, name = _resolve(branch, defs)
        if name and name not in names:
            names.append(name)
        if len(names) > MAX_VARIANT_NAMES:
            return False
    return True


def _branches(schema: Any, defs: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The object branches of a union of two or more (``[]`` when ``schema`` is none)."""
    resolved, _ = _resolve(schema, defs)
    branches = resolved.get("anyOf") or resolved.get("oneOf")
    if not isinstance(branches, list) or len(branches) < 2:
        return []
    return [b for b in branches if isinstance(b, dict) and b.get("type") not in _SCALARS]


def _extends(name: str, other: str) -> bool:
    """Whether schema ``name`` is ``other`` with more words (``UserWithStats`` and ``User``: a user
    with more fields, not another object)."""
    mine = [w.lower() for w in _WORD.findall(name)]
    theirs = [w.lower() for w in _WORD.findall(other)]
    return 0 < len(theirs) < len(mine) and mine[: len(theirs)] == theirs


def find_field(tool: Tool, name: str, *, output: bool) -> Field | None:
    """The input (``output=False``) or output named ``name`` of ``tool``, or None."""
    for found in output_fields(tool) if output else input_fields(tool):
        if found.name == name:
            return found
    return None


class _Walk:
    """A breadth-first walk of a result schema that collects :class:`Field` objects."""

    def __init__(self, defs: Mapping[str, Any]) -> None:
        self.defs = defs
        self.fields: list[Field] = []
        # Each field with its own title (or ``$ref`` name), for what is inside it, and its depth.
        self.queue: deque[tuple[Field, str, int]] = deque()
        self.nested = 0

    def run(self) -> list[Field]:
        while self.queue:
            found, title, depth = self.queue.popleft()
            if depth > 0:
                if self.nested >= MAX_NESTED:
                    break
                self.nested += 1
            self.fields.append(found)
            if depth < MAX_DEPTH:
                self.expand(found, title, depth)
        return self.fields

    def expand(self, found: Field, title: str, depth: int) -> None:
        """Queue what is inside ``found`` (titled ``title``): its properties, or its array items.

        The properties of an object (or of an array's items) sit in it, so its name and title are
        among their places; an item of an array of scalars is the array's own kind of value
        (``keys[]`` is a key), so its holders are the array's. An array without an ``items``
        schema has items of any type; an item without a description takes the array's.
        """
        path, schema = found.name, found.schema
        holders = (*found.holders, found.leaf) if path else found.holders
        places = _named((*found.places, found.leaf) if path else found.places, title)
        if _properties(schema):
            self.children(path, schema, holders, places, depth + 1)
            return
        items = schema.get("items")
        if not isinstance(items, dict):
            if schema.get("type") != "array":
                return
            items = {}  # a list of unknown items (``"type": "list"``): one item is still a value
        resolved, inner = _resolve(items, self.defs)
        if "description" not in resolved and schema.get("description"):
            # An item says what its list says ("List of post IDs."), unless it says more itself.
            resolved = {**resolved, "description": schema["description"]}
        if _properties(resolved):
            self.children(item_path(path), resolved, holders, _named(places, inner), depth + 1)
            return
        item = Field(
            name=item_path(path),
            leaf=found.leaf,
            schema=resolved,
            holders=found.holders,
            places=_named(_named(found.places, title), inner),
        )
        self.queue.append((item, "", depth + 1))

    def children(
        self,
        path: str,
        schema: Mapping[str, Any],
        holders: tuple[str, ...],
        places: tuple[str, ...],
        depth: int,
    ) -> None:
        """Queue each property of the object ``schema`` (at ``path``), which sits in ``places``.

        An object or array property keeps its own title or ``$ref`` name for what is inside it;
        a scalar's title is only a label of itself.
        """
        for name, sub in _properties(schema).items():
            resolved, title = _resolve(sub, self.defs)
            holder = bool(_properties(resolved) or isinstance(resolved.get("items"), dict))
            leaf = str(name)
            path_of = join_path(path, leaf)
            child = Field(name=path_of, leaf=leaf, schema=resolved, holders=holders, places=places)
            self.queue.append((child, title if holder else "", depth))


def _named(places: tuple[str, ...], name: str) -> tuple[str, ...]:
    """``places`` and ``name`` after them, when there is a name."""
    return (*places, name) if name else places


def _definitions(root: Mapping[str, Any]) -> Mapping[str, Any]:
    defs: dict[str, Any] = {}
    for key in ("definitions", "$defs"):
        found = root.get(key)
        if isinstance(found, dict):
            defs.update(found)
    return defs


def _resolve(schema: Any, defs: Mapping[str, Any], depth: int = 0) -> tuple[Mapping[str, Any], str]:
    """``schema`` with local references, ``allOf`` and a nullable wrapper followed; and its name.

    The name is the last ``$ref`` target's name, else the schema's ``title`` ("" when none).
    ``depth`` counts the wrappers followed so far: a schema that wraps itself (``A: anyOf: [$ref
    A, null]``) resolves to nothing after :data:`_MAX_REFS` of them instead of recursing on.
    """
    name = ""
    if depth > _MAX_REFS:
        return {}, name
    for _ in range(_MAX_REFS):
        if not isinstance(schema, dict):
            return {}, name
        ref = schema.get("$ref")
        if not isinstance(ref, str):
            break
        target = ref.rsplit("/", 1)[-1]
        if not ref.startswith(("#/$defs/", "#/definitions/")) or target not in defs:
            return {}, name
        schema, name = defs[target], target
    if not isinstance(schema, dict):
        return {}, name
    schema = _merged(schema, defs, depth)
    return schema, name or str(schema.get("title", ""))


def _merged(schema: Mapping[str, Any], defs: Mapping[str, Any], depth: int = 0) -> Mapping[str, Any]:
    """``allOf`` branches merged into one object; ``anyOf``/``oneOf`` of one object and null unwrapped."""
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            real = [b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")]
            if len(real) == 1 and len(branches) == 2:
                inner, _ = _resolve(real[0], defs, depth + 1)
                if inner:
                    return {**inner, **{k: v for k, v in schema.items() if k not in (key, "type")}}
    branches = schema.get("allOf")
    if not isinstance(branches, list) or not branches:
        return schema
    props: dict[str, Any] = {}
    merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
    for branch in branches:
        inner, _ = _resolve(branch, defs, depth + 1)
        props.update(inner.get("properties", {}) if isinstance(inner.get("properties"), dict) else {})
        merged.setdefault("type", inner.get("type"))
    if props:
        own = merged.get("properties")  # a malformed (non-object) one is dropped
        merged["properties"] = {**props, **(own if isinstance(own, dict) else {})}
        merged["type"] = "object"
    return {k: v for k, v in merged.items() if v is not None}


def _properties(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The properties of an object schema (after :func:`_resolve` merged them), or ``{}``."""
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    return props if isinstance(props, dict) and props else {}
