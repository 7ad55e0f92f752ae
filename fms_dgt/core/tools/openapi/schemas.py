"""OpenAPI Schema Objects as self-contained Draft 2020-12 JSON Schema.

Each referenced schema (a :class:`~.documents.Target`) is translated **once** per direction
(``request`` or ``response``) into a *definition*; tools then share those definitions:

* a reference to a definition that reaches no reference cycle and whose fully expanded size is at
  most ``inline_limit`` schema nodes is replaced by the definition itself (copied in place);
* any other reference becomes ``{"$ref": "#/$defs/<name>"}`` and the tool's schema carries that
  definition (and everything it needs) under ``$defs``, so recursion stays finite.

Inlined definitions are shared objects between the tools of one load: treat tool schemas as
read-only (``Tool.to_dict`` returns deep copies).

OpenAPI keywords that are not JSON Schema are handled on purpose: ``nullable: true`` adds ``null``
(to ``type``, to ``enum``, or as an ``anyOf`` branch), Swagger ``type: file`` becomes
``{"type": "string", "format": "binary"}``, ``example`` becomes ``examples``, boolean
``exclusiveMinimum``/``exclusiveMaximum`` become numeric bounds, a ``discriminator`` becomes a
``const`` on the tag property of each referenced branch (then is dropped), and ``xml``,
``externalDocs``, ``x-`` extensions and the identifier keywords (``$id``, ``$schema``,
``$anchor``, ``$dynamicAnchor``, ``$dynamicRef``, ``$vocabulary``) are dropped. ``readOnly``
properties are dropped from requests and ``writeOnly`` ones from responses.
Every other keyword goes through :func:`fms_dgt.core.tools.schema.normalise_schema`, so the
result passes ``check_schema``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from fms_dgt.core.tools.openapi.documents import (
    CircularRefError,
    DocumentStore,
    RefError,
    Target,
    unescape_pointer,
)
from fms_dgt.core.tools.schema import (
    ANNOTATION_KEYS,
    SCHEMA_KEYWORDS,
    SCHEMA_LIST_KEYWORDS,
    SCHEMA_MAP_KEYWORDS,
    normalise_schema,
)
from fms_dgt.core.tools.schema.choices import free_text

__all__ = ["REQUEST", "RESPONSE", "SchemaCompiler"]

REQUEST = "request"
RESPONSE = "response"

_MARK = "\x00"
_INF = float("inf")
# Identifier keywords are dropped too: once schemas from many places are combined into one tool
# schema, an "$id" would change the base URI that the "#/$defs/..." references resolve against.
_DROPPED = frozenset(
    {
        "discriminator",
        "xml",
        "externalDocs",
        "$id",
        "$schema",
        "$vocabulary",
        "$anchor",
        "$dynamicAnchor",
        "$dynamicRef",
    }
)
# The JSON Schema keyword families; Swagger 2.0 / draft-04 documents also use additionalItems.
_ONE_SCHEMA = SCHEMA_KEYWORDS | {"additionalItems"}
_SCHEMA_MAPS = SCHEMA_MAP_KEYWORDS
_SCHEMA_LISTS = SCHEMA_LIST_KEYWORDS
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(slots=True)
class _Def:
    """One referenced schema, translated for one direction."""

    name: str
    node: Any
    uri: str
    body: Any = None
    deps: set[tuple[Target, str]] = field(default_factory=set)
    nodes: int = 0
    titled: Any = None
    notes: list[str] = field(default_factory=list)
    error: RefError | None = None
    final: Any = None
    final_refs: frozenset[str] | None = None


@dataclass(slots=True)
class _Ctx:
    """State of one translation: base document, direction, and what it referenced."""

    uri: str
    mode: str
    deps: set[tuple[Target, str]] = field(default_factory=set)
    nodes: int = 0
    titled: Any = None


@dataclass(slots=True)
class Compiled:
    """A translated schema fragment and the names of the definitions it needs."""

    schema: Any
    notes: list[str]


class SchemaCompiler:
    """Translates OpenAPI schemas and keeps the shared definitions of one load.

    Args:
        store: the spec's documents.
        inline_limit: largest expanded size (schema nodes) of a referenced schema that is copied in
            place; ``0`` keeps every reference under ``$defs``.
    """

    def __init__(self, store: DocumentStore, *, inline_limit: int = 64) -> None:
        self.store = store
        self.inline_limit = inline_limit
        self._defs: dict[tuple[Target, str], _Def] = {}
        self._names: dict[Target, str] = {}
        self._taken: set[str] = set()
        self._by_name: dict[str, Target] = {}
        self._pending: list[tuple[Target, str]] = []
        self._sizes: dict[tuple[Target, str], float] = {}
        self._closures: dict[tuple[frozenset[str], str], frozenset[str]] = {}

    # ------------------------------------------------------------------ public

    def compile(self, node: Any, uri: str, mode: str, pointer: str) -> Compiled:
        """Translate one schema fragment (read in document ``uri``) to final JSON Schema.

        Raises:
            RefError: a reference it needs cannot be resolved or translated.
        """
        ctx = _Ctx(uri, mode)
        raw = self.translate(node, ctx)
        self._flush()
        schema, notes = normalise_schema(raw, pointer)
        return Compiled(self._materialise(schema, mode), notes)

    def expand(self, node: Any, uri: str, mode: str, pointer: str) -> Compiled:
        """Like :meth:`compile`, but a top-level ``$ref`` is always replaced by its target.

        Used for request bodies, whose top-level properties become arguments.
        """
        ctx = _Ctx(uri, mode)
        raw = self.translate(node, ctx)
        self._flush()
        schema, notes = normalise_schema(raw, pointer)
        key = self._marker_key(schema, mode)
        if key is not None and len(schema) == 1:
            self._check(key)
            body = self._defs[key].body
            return Compiled(self._materialise(body, mode), [*notes, *self._defs[key].notes])
        return Compiled(self._materialise(schema, mode), notes)

    def attach_defs(self, schema: dict[str, Any], mode: str) -> dict[str, Any]:
        """``schema`` with a ``$defs`` holding every definition it (transitively) references."""
        names = self._closure(_collect_refs(schema), mode)
        if not names:
            return schema
        defs = {name: self._final((self._by_name[name], mode)) for name in sorted(names)}
        return {**schema, "$defs": defs}

    def def_notes(self, schema: dict[str, Any], mode: str) -> list[str]:
        """Normalisation notes of the definitions a finished schema carries."""
        notes: list[str] = []
        for name in schema.get("$defs", {}):
            notes.extend(self._defs[(self._by_name[name], mode)].notes)
        return notes

    # ------------------------------------------------------------------ translation

    def translate(self, node: Any, ctx: _Ctx) -> Any:
        """OpenAPI-specific translation of one schema node; references become markers."""
        if not isinstance(node, dict):
            return node
        ctx.nodes += 1
        ref = node.get("$ref")
        if isinstance(ref, str):
            out = self._object({k: v for k, v in node.items() if k != "$ref"}, ctx)
            out["$ref"] = _MARK + self._reference(ref, ctx)
            return out
        return self._object(node, ctx)

    def _object(self, node: dict[str, Any], ctx: _Ctx) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key.startswith("x-") or key in _DROPPED or key == "nullable":
                continue
            if key in _ONE_SCHEMA:
                out[key] = self.translate(value, ctx)
            elif key in _SCHEMA_MAPS and isinstance(value, dict):
                out[key] = {k: self.translate(v, ctx) for k, v in value.items()}
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                out[key] = [self.translate(v, ctx) for v in value]
            elif key == "example":
                out.setdefault("examples", [value])
            elif key == "type" and value == "file":
                out["type"] = "string"
                out.setdefault("format", "binary")
            else:
                out[key] = value
        if isinstance(node.get("discriminator"), dict):
            self._tag_branches(node, out, ctx)
        if node.get("nullable") is True:
            out = _nullable(out)
        self._drop_hidden(out, ctx)
        return out

    def _tag_branches(self, node: dict[str, Any], out: dict[str, Any], ctx: _Ctx) -> None:
        """Say in JSON Schema what a ``discriminator`` says in OpenAPI: which branch of a ``oneOf``
        or ``anyOf`` an object takes is named by one of its properties. Each branch that is a
        reference gets that property's value as a ``const`` (an ``enum`` when several map to it):
        the values of ``mapping`` pointing at it, else the referenced component's name (Airflow's
        schedule interval is a ``CronExpression`` when its ``__type`` says so). A branch whose
        property already lists its values keeps those (a ``kind`` of ``[circle]`` is not made
        ``Circle``, which no value could satisfy). Generated objects then carry the name of the
        branch they follow, and a reply naming another fails validation."""
        found = node["discriminator"]
        prop = found.get("propertyName")
        if not isinstance(prop, str) or not prop:
            return
        mapping = found.get("mapping") if isinstance(found.get("mapping"), dict) else {}
        # The values by the reference each names, in one pass (a spec may map thousands).
        pairs: dict[str, list[str]] = {}
        for value, to in mapping.items():
            if isinstance(to, str):
                ref = to if "#" in to or "/" in to else f"#/components/schemas/{to}"
                pairs.setdefault(ref, []).append(str(value))
        for key in ("oneOf", "anyOf"):
            raw, done = node.get(key), out.get(key)
            if isinstance(raw, list) and isinstance(done, list) and len(raw) == len(done):
                tagged = zip(raw, done, strict=True)
                out[key] = [self._tagged(branch, schema, prop, pairs, ctx) for branch, schema in tagged]

    def _tagged(self, branch: Any, schema: Any, prop: str, pairs: dict[str, list[str]], ctx: _Ctx) -> Any:
        ref = branch.get("$ref") if isinstance(branch, dict) else None
        if not isinstance(ref, str):
            return schema  # an inline branch has no name to take
        try:
            target, node = self.store.resolve(ref, ctx.uri)
        except RefError:
            return schema  # reported where the branch itself is translated
        values = list(pairs.get(ref, ()))
        if not values and _component_name(target):
            values = [_component_name(target)]
        props = node.get("properties") if isinstance(node, dict) else None
        own = props.get(prop) if isinstance(props, dict) else None
        if isinstance(own, dict) and ("enum" in own or "const" in own):
            listed = own["enum"] if isinstance(own.get("enum"), list) else [own.get("const")]
            values = [v for v in values if v in listed]
        elif not free_text(own):
            # a tag property reached through a $ref or an allOf parent, or typed as a number, may
            # allow no such name: the branch is left as the spec wrote it (tagging it made
            # petType: {$ref: PetType} with [cat, dog] a const "Cat" no value could satisfy)
            return schema
        if not values:
            return schema
        tag = {"const": values[0]} if len(values) == 1 else {"enum": values}
        return {"allOf": [schema, {"properties": {prop: tag}}]}

    def _drop_hidden(self, out: dict[str, Any], ctx: _Ctx) -> None:
        """Drop the properties a request must not send (``readOnly``: an id or a timestamp the
        server sets) or a response never holds (``writeOnly``: a password), and their ``required``
        entries: a tool's inputs are what a call may send, and a model that learned to send a
        DAG's ``next_dagrun`` or ``fileloc`` learned a request the API ignores or refuses."""
        props = out.get("properties")
        if not isinstance(props, dict):
            return
        hidden = "readOnly" if ctx.mode == REQUEST else "writeOnly"
        dropped = {n for n, p in props.items() if self._flag(p, hidden, ctx)}
        if not dropped:
            return
        out["properties"] = {n: p for n, p in props.items() if n not in dropped}
        required = out.get("required")
        if isinstance(required, list):
            out["required"] = [n for n in required if n not in dropped]

    def _flag(self, prop: Any, flag: str, ctx: _Ctx) -> bool:
        if not isinstance(prop, dict):
            return False
        if prop.get(flag) is True:
            return True
        ref = prop.get("$ref")
        if isinstance(ref, str) and ref.startswith(_MARK):
            target = self._by_name[ref[1:]]
            node = self._defs[(target, ctx.mode)].node
            return isinstance(node, dict) and node.get(flag) is True
        return False

    def _reference(self, ref: str, ctx: _Ctx) -> str:
        try:
            target, node = self.store.resolve(ref, ctx.uri)
        except CircularRefError as exc:
            # A reference that only points back at itself constrains nothing: any value.
            target, node = exc.target, {"$comment": f"circular $ref with no schema: {exc.reason}"}
        key = (target, ctx.mode)
        if key not in self._defs:
            self._defs[key] = _Def(self._name(target), node, target.uri)
            self._pending.append(key)
        ctx.deps.add(key)
        return self._defs[key].name

    def _name(self, target: Target) -> str:
        name = self._names.get(target)
        if name is not None:
            return name
        tail = target.pointer.rsplit("/", 1)[-1] if target.pointer else PurePosixPath(target.uri).stem
        base = _NAME_CHARS.sub("_", tail.replace("~1", "_").replace("~0", "_")) or "schema"
        name, n = base, 1
        while name in self._taken:
            n += 1
            name = f"{base}_{n}"
        self._taken.add(name)
        self._names[target] = name
        self._by_name[name] = target
        return name

    def _flush(self) -> None:
        # Definitions are translated from a work list, not recursively, so deep reference chains
        # cannot exhaust the Python stack.
        while self._pending:
            key = self._pending.pop()
            entry = self._defs[key]
            ctx = _Ctx(entry.uri, key[1])
            try:
                raw = self.translate(entry.node, ctx)
                entry.body, entry.notes = normalise_schema(raw, f"#/$defs/{entry.name}")
            except RefError as exc:
                entry.error = exc
                continue
            except RecursionError:
                entry.error = RefError("the schema is nested too deeply to convert")
                continue
            entry.deps, entry.nodes = ctx.deps, ctx.nodes

    # ------------------------------------------------------------------ materialisation

    def _check(self, key: tuple[Target, str]) -> None:
        error = self._defs[key].error
        if error is not None:
            raise RefError(f"schema {key[0].ref} cannot be used: {error.reason}")

    def _marker_key(self, schema: Any, mode: str) -> tuple[Target, str] | None:
        if isinstance(schema, dict):
            ref = schema.get("$ref")
            if isinstance(ref, str) and ref.startswith(_MARK):
                return self._by_name[ref[1:]], mode
        return None

    def _materialise(self, node: Any, mode: str) -> Any:
        if not isinstance(node, dict):
            return node
        key = self._marker_key(node, mode)
        if key is not None:
            return self._replace(node, key, mode)
        out: dict[str, Any] = {}
        for k, v in node.items():
            if k in _ONE_SCHEMA:
                out[k] = self._materialise(v, mode)
            elif k in _SCHEMA_MAPS and isinstance(v, dict):
                out[k] = {n: self._materialise(s, mode) for n, s in v.items()}
            elif k in _SCHEMA_LISTS and isinstance(v, list):
                out[k] = [self._materialise(s, mode) for s in v]
            else:
                out[k] = v
        return out

    def _replace(self, node: dict[str, Any], key: tuple[Target, str], mode: str) -> Any:
        self._check(key)
        siblings = {k: self._materialise(v, mode) for k, v in node.items() if k != "$ref"}
        name = self._defs[key].name
        if self._size(key) > self.inline_limit:
            return {"$ref": f"#/$defs/{name}", **siblings}
        target = self._titled(key) if key[1] == RESPONSE else self._final(key)
        if not siblings:
            return target
        if isinstance(target, dict) and set(siblings) <= ANNOTATION_KEYS:
            return {**target, **siblings}
        return {"allOf": [target], **siblings}

    def _final(self, key: tuple[Target, str]) -> Any:
        entry = self._defs[key]
        if entry.final is None:
            self._check(key)
            entry.final = self._materialise(entry.body, key[1]) if entry.deps else entry.body
        return entry.final

    def _titled(self, key: tuple[Target, str]) -> Any:
        """:meth:`_final`, with the component's name as ``title`` when it has none (made once per
        definition, like the final body it copies).

        Inlining drops the ``$ref``, and with it the only word that says what a nested object is
        (``mainDirector`` is a ``StaffHeader``, ``publishers[]`` are ``CompanyBase``): what reads a
        result (the dataflow enrichment's entities) finds it in the title, as it would in a
        ``$ref`` kept under ``$defs``. Only named components (``#/components/schemas/X``,
        ``#/definitions/X``) give one; an object already titled keeps its own.
        """
        entry = self._defs[key]
        if entry.titled is None:
            final = self._final(key)
            title = _component_name(key[0])
            named = isinstance(final, dict) and "title" not in final and title
            entry.titled = {**final, "title": title} if named else final
        return entry.titled

    def _closure(self, names: set[str], mode: str) -> frozenset[str]:
        # Many tools reference the same definitions (every Stripe response reaches the same
        # error and object schemas), and a definition's references never change once translated.
        key = (frozenset(names), mode)
        found = self._closures.get(key)
        if found is None:
            found = self._closures[key] = frozenset(self._walk_closure(names, mode))
        return found

    def _walk_closure(self, names: set[str], mode: str) -> set[str]:
        seen: set[str] = set()
        todo = list(names)
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo.extend(self._refs_of((self._by_name[name], mode)))
        return seen

    def _refs_of(self, key: tuple[Target, str]) -> frozenset[str]:
        entry = self._defs[key]
        if entry.final_refs is None:
            entry.final_refs = frozenset(_collect_refs(self._final(key)))
        return entry.final_refs

    def _size(self, root: tuple[Target, str]) -> float:
        """Expanded size of a definition; infinite when it reaches a reference cycle."""
        if root in self._sizes:
            return self._sizes[root]
        path: list[tuple[tuple[Target, str], Iterator[tuple[Target, str]]]] = [
            (root, iter(self._defs[root].deps))
        ]
        on_path = {root}
        cyclic: set[tuple[Target, str]] = set()
        while path:
            key, deps = path[-1]
            dep = next(deps, None)
            if dep is None:
                path.pop()
                on_path.discard(key)
                self._sizes[key] = self._total(key, cyclic)
            elif dep in on_path:
                cyclic.add(key)
            elif dep not in self._sizes:
                on_path.add(dep)
                path.append((dep, iter(self._defs[dep].deps)))
        return self._sizes[root]

    def _total(self, key: tuple[Target, str], cyclic: set[tuple[Target, str]]) -> float:
        if key in cyclic:
            return _INF
        entry = self._defs[key]
        return entry.nodes + sum(self._sizes[d] for d in entry.deps)


def _component_name(target: Target) -> str:
    """The name of a schema component (``#/components/schemas/X``, ``#/definitions/X``), else ``""``."""
    parts = target.pointer.split("/")
    named = len(parts) >= 2 and (parts[-2] == "definitions" or parts[-3:-1] == ["components", "schemas"])
    return unescape_pointer(parts[-1]) if named else ""


def _nullable(out: dict[str, Any]) -> dict[str, Any]:
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = [kind, "null"] if kind != "null" else kind
    elif isinstance(kind, list):
        out["type"] = kind if "null" in kind else [*kind, "null"]
    elif "$ref" in out or any(k in out for k in _SCHEMA_LISTS):
        return {"anyOf": [out, {"type": "null"}]}
    if isinstance(out.get("enum"), list) and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    return out


def _collect_refs(node: Any) -> set[str]:
    """Names of ``#/$defs/...`` references anywhere in a finished schema."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if not isinstance(item, dict):
            continue
        ref = item.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            found.add(ref[8:])
        for key, value in item.items():
            if key in _ONE_SCHEMA:
                stack.append(value)
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                stack.extend(value)
            elif key in _SCHEMA_MAPS and isinstance(value, dict):
                stack.extend(value.values())
    return found
