"""Edges a spec declares: OpenAPI response links, and inputs whose description links to the
operation their values come from, for the ``dataflow`` enrichment.

The REST loader keeps each operation's response links in ``metadata["links"]``
(:mod:`fms_dgt.core.tools.openapi.links`): a target operation and, per target parameter, the JSON
pointer of the response value it takes (``"username": "/owner/username"``). That is the wiring
the spec's author drew, so :func:`declared_pairs` turns each into an edge between parameter
instances, ranked with the exact matches (:mod:`._dataflow_exact`).

The target is an operation of the same spec file in the same namespace (by ``operationId``, or by
the operation's JSON pointer for an ``operationRef``), so a link never wires tools of another
source. A pointer is read against the tool's outputs (``/user/id`` is ``user.id``; a number is a
property of that name, else an array item: ``/items/0/id`` is ``items[].id``); a pointer into the
items of an array result written without the item step (``/owner/username`` of a list of
repositories, as the OpenAPI link example does) reads as the items'. A link whose target,
parameter or value is not among the pool's parameters gives no edge.

An input's description may name the operation that lists its values with a Redoc anchor
(PeerTube's ``category``: "category id of the video (see [/videos/categories](#operation/getCategories))"):
:func:`described_pairs` wires that operation's outputs named as the input ends (``token`` into a
``videoFileToken``), else its scalar result or list items, into the input, when their type fits it.
An anchor is read as written and percent-decoded (``#operation/get%20Video``), without the
punctuation that ends a sentence after it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import numpy as np
import numpy.typing as npt

from fms_dgt.core.tools.artifacts import split_path
from fms_dgt.core.tools.enrichments._dataflow_entities import words
from fms_dgt.core.tools.enrichments._dataflow_exact import EXACT_FIT
from fms_dgt.core.tools.enrichments._dataflow_fields import Field, input_schema, output_fields
from fms_dgt.core.tools.enrichments._dataflow_params import type_compatibility, type_key
from fms_dgt.core.tools.openapi.documents import unescape_pointer

if TYPE_CHECKING:
    from fms_dgt.core.tools.data_objects import Tool
    from fms_dgt.core.tools.enrichments._dataflow_params import Side

__all__ = ["declared_pairs", "declaring_link", "described_pairs", "describing_link", "pointer_steps"]

IntArray = npt.NDArray[np.int64]
_LOCATIONS = ("path", "query", "header", "cookie", "body")
#: A Redoc anchor to an operation in a description (``#operation/getCategories``): what follows
#: up to a space, a bracket, a quote or a bar (an operationId may hold any other character).
_ANCHOR = re.compile("#operation/([^\\s()\\[\\]<>{}\"'`|\u201c\u201d\u2018\u2019\u00ab\u00bb\u2026]+)")
#: How much of a description is searched for anchors (a hostile one may be megabytes), and the
#: most operations it may link to: one that links more lists documentation, not its source.
_READ, _MOST_LINKED = 4000, 4
#: The longest operationId an anchor is read as (its percent-encoding may be three times longer),
#: and the punctuation that ends a sentence after an anchor rather than belonging to it.
_LONGEST_ID, _SENTENCE_END = 200, ".,;:!?"
_PREFIX = len("#operation/")
#: The JSON types a scalar output or input is of.
_SCALARS = frozenset({"string", "integer", "number"})


def pointer_steps(pointer: str) -> list[tuple[str | int, ...]]:
    """The output paths a JSON pointer may read, as
    :func:`~fms_dgt.core.tools.artifacts.split_path` gives their steps, most literal first: a
    number is a property of that name, else an array item (``0``: a path's ``[]`` names every
    item); and a pointer into a list result written without the item step reads the items'."""
    if not pointer:
        return [()]
    tokens: tuple[str | int, ...] = tuple(unescape_pointer(t) for t in pointer.split("/")[1:])
    items: tuple[str | int, ...] = tuple(
        0 if isinstance(t, str) and t.isascii() and t.isdigit() else t for t in tokens
    )
    readings: list[tuple[str | int, ...]] = [tokens, items, (0, *tokens), (0, *items)]
    return list(dict.fromkeys(readings))


def declared_pairs(
    tools: Sequence[Tool],
    sides: tuple[Side, Side],
    names: Sequence[str],
    places: tuple[IntArray, IntArray],
) -> tuple[IntArray, IntArray]:
    """``(output instances, input instances)`` of the edges the tools' response links and their
    inputs' descriptions (:func:`described_pairs`) declare, between two different tools (a link
    back into its own operation is no hand-off).

    Args:
        tools: the pool, in registry order.
        sides: the output and input sides.
        names: parameter names (paths for outputs) by name id.
        places: per tool, its namespace id and its qualified-name id (overloads share one).
    """
    spaces, qid = places
    linked = [row for row, tool in enumerate(tools) if tool.metadata.get("links")]
    outs, ins = sides
    targets = _targets(tools, spaces)
    inputs: dict[int, dict[str, int]] = {}
    found: dict[tuple[int, int], None] = {}
    for row in linked:
        tool = tools[row]
        home = (int(spaces[row]), _document(tool))
        paths = _output_paths(outs, row, names)
        read: set[tuple[str, str, str]] = set()
        for link in _links(tool):
            for target in targets.get((*home, *_aim(link)), []):
                if target not in inputs:
                    inputs[target] = _input_names(ins, target, names)
                arguments = _arguments(tools[target])
                for parameter, pointer in link["parameters"].items():
                    if (str(target), str(parameter), pointer) in read:  # a shared component's links
                        continue
                    read.add((str(target), str(parameter), pointer))
                    output = next((paths[p] for p in pointer_steps(pointer) if p in paths), None)
                    name = _argument(arguments, str(parameter))
                    inp = inputs[target].get(name) if name is not None else None
                    if output is not None and inp is not None and qid[row] != qid[target]:
                        found[(output, inp)] = None
    described = described_pairs(tools, sides, names, places)
    found.update(dict.fromkeys(zip(described[0].tolist(), described[1].tolist(), strict=True)))
    pairs = np.asarray(list(found), dtype=np.int64).reshape(-1, 2)
    return pairs[:, 0].copy(), pairs[:, 1].copy()


def described_pairs(
    tools: Sequence[Tool],
    sides: tuple[Side, Side],
    names: Sequence[str],
    places: tuple[IntArray, IntArray],
) -> tuple[IntArray, IntArray]:
    """``(output instances, input instances)`` of the edges the inputs' descriptions declare by
    linking to an operation of their spec file and namespace (see the module docstring).

    Args: as :func:`declared_pairs`.
    """
    spaces, qid = places
    outs, ins = sides
    anchored = [(row, _anchors(tool)) for row, tool in enumerate(tools) if _document(tool)]
    anchored = [(row, found) for row, found in anchored if found]
    if not anchored:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    targets = _targets(tools, spaces)
    pairs: dict[tuple[int, int], None] = {}
    produced: dict[int, _Produced] = {}
    for row, found in anchored:
        inputs = _input_names(ins, row, names)
        home = (int(spaces[row]), _document(tools[row]))
        for name, operations in found.items():
            inp = inputs.get(name)
            if inp is None:
                continue
            sources = {s: None for op in operations for s in targets.get((*home, "id", op), [])}
            schema = input_schema(tools[row], name)
            for source in (s for s in sources if qid[s] != qid[row]):
                if source not in produced:
                    paths = _output_paths(outs, source, names)
                    produced[source] = _Produced(output_fields(tools[source]), paths)
                for output in produced[source].fed(name, schema):
                    pairs[(output, inp)] = None
    both = np.asarray(list(pairs), dtype=np.int64).reshape(-1, 2)
    return both[:, 0].copy(), both[:, 1].copy()


def describing_link(source: Tool, target: Tool, output: str, input_name: str) -> str | None:
    """The operationId ``target``'s description of ``input_name`` links to when that is
    ``source``'s operation and ``output`` one it takes from it, or None (for ``fms-dgt graph``'s why)."""
    op_id = _op_id(source.metadata.get("operation_id"))
    if not _one_document(source, target) or not op_id or op_id not in _anchors(target).get(input_name, ()):
        return None
    fields = output_fields(source)
    paths: dict[tuple[str | int, ...], int] = {}
    for number, found in enumerate(fields):
        try:
            paths.setdefault(split_path(found.name), number)
        except ValueError:
            continue
    taken = set(_Produced(fields, paths).fed(input_name, input_schema(target, input_name)))
    try:
        return op_id if paths.get(split_path(output), -1) in taken else None
    except ValueError:
        return None


def _anchors(tool: Tool) -> dict[str, set[str]]:
    """Per input of a REST tool, the operationIds its description links to (each anchor in each
    of its :func:`_readings`); none for an input linking more than :data:`_MOST_LINKED` operations."""
    props = tool.parameters.get("properties") if tool.metadata.get("kind") == "rest" else None
    found: dict[str, set[str]] = {}
    for name, schema in props.items() if isinstance(props, Mapping) else ():
        text = schema.get("description") if isinstance(schema, Mapping) else None
        if not isinstance(text, str) or "#operation/" not in text:
            continue
        window = text[: _READ + _PREFIX + 3 * _LONGEST_ID + 1]
        anchors: dict[str, list[str]] = {}
        for match in _ANCHOR.finditer(window):
            if match.start() >= _READ or (match.end() == len(window) < len(text)):
                continue  # beyond the part read, or cut by it
            if readings := _readings(match.group(1)):
                anchors.setdefault(readings[-1], readings)
        if 0 < len(anchors) <= _MOST_LINKED:
            found[str(name)] = {reading for readings in anchors.values() for reading in readings}
    return found


def _readings(written: str) -> list[str]:
    """The operationIds an anchor may name: as written and percent-decoded, each with and without
    the punctuation ending a sentence after it, at most :data:`_LONGEST_ID` characters long; the
    decoded one without that punctuation last (the anchor's identity)."""
    decoded = unquote(written)
    found = [written, written.rstrip(_SENTENCE_END), decoded, decoded.rstrip(_SENTENCE_END)]
    return [text for text in dict.fromkeys(reversed(found)) if 0 < len(text) <= _LONGEST_ID][::-1]


Paths = Mapping[tuple[str | int, ...], int]


class _Produced:
    """What an operation an input links to outputs: its outputs (``paths``: their numbers by their
    steps; ``fields``: its :func:`~._dataflow_fields.output_fields`) by the words of their last
    property's name, each one's type, and its result."""

    def __init__(self, fields: Sequence[Field], paths: Paths) -> None:
        self.steps = {number: steps for steps, number in paths.items()}
        self.by_leaf: dict[tuple[str, ...], list[int]] = {}
        for steps, number in paths.items():
            if steps and isinstance(steps[-1], str) and (leaf := tuple(words(steps[-1]))):
                self.by_leaf.setdefault(leaf, []).append(number)
        self.kinds: dict[int, str] = {}
        for found in fields:
            try:
                at = paths.get(split_path(found.name))
            except ValueError:
                continue
            if at is not None:
                self.kinds.setdefault(at, type_key(found.schema))
        self.result = [paths[s] for s in ((), (0,)) if s in paths and _scalar(self.kinds.get(paths[s], ""))]

    def fed(self, input_name: str, schema: Mapping[str, Any]) -> list[int]:
        """The outputs an input named ``input_name`` of type ``schema`` takes: those whose name is
        the longest ending of the input's (``token`` for ``videoFileToken``) among those whose type
        fits it, the least nested of them, none when more than :data:`_MOST_LINKED`; else the
        scalar result, or the scalar items of a list result, when they fit."""
        into = type_key(schema)
        wanted = tuple(words(input_name))
        for k in range(len(wanted), 0, -1):
            named = [n for n in self.by_leaf.get(wanted[-k:], ()) if _fits(self.kinds.get(n, "any"), into)]
            if named:  # the shallowest (a video's ``id``, not its channel's); more than a few say nothing
                depth = min(len(self.steps[n]) for n in named)
                named = [n for n in named if len(self.steps[n]) == depth]
                return named if len(named) <= _MOST_LINKED else []
        return [n for n in self.result if _fits(self.kinds[n], into)][:1]


def _members(kind: str) -> list[str]:
    """The types of a :func:`~._dataflow_params.type_key` (``integer|string?``: integer, string)."""
    body = kind.removesuffix("?")
    return [body] if body.startswith("array<") else body.split("|")


def _scalar(kind: str) -> bool:
    return bool(kind) and all(member in _SCALARS for member in _members(kind))


def _fits(kind: str, into: str) -> bool:
    """Whether an output of type ``kind`` may feed an input of type ``into`` that declares it: an
    untyped one fits anything; a scalar fits an input taking a scalar or a list of them (passed as
    a list of one); anything else fits as exact matches do."""
    if "any" in (kind, into):
        return True
    if _scalar(kind):
        for member in _members(into):
            inner = member[len("array<") : -1] if member.startswith("array<") else member
            if member == "array" or any(m in _SCALARS or m == "any" for m in _members(inner)):
                return True
        return False
    return type_compatibility(kind, into) >= EXACT_FIT


def declaring_link(source: Tool, target: Tool, output: str, input_name: str) -> str | None:
    """The name of ``source``'s response link that wires its ``output`` into ``target``'s
    ``input_name``, or None (for ``fms-dgt graph``'s why)."""
    if not _one_document(source, target):
        return None
    try:
        steps = split_path(output)
    except ValueError:
        return None
    aim = _operation(target)
    arguments = _arguments(target)
    for link in _links(source):
        if aim is None or _aim(link) not in aim:
            continue
        for parameter, pointer in link["parameters"].items():
            if steps in pointer_steps(pointer) and _argument(arguments, str(parameter)) == input_name:
                return str(link.get("name", ""))
    return None


def _one_document(source: Tool, target: Tool) -> bool:
    """Whether two REST tools come from one spec file, in one namespace."""
    document = _document(source)
    return source.namespace == target.namespace and bool(document) and document == _document(target)


def _links(tool: Tool) -> list[Mapping[str, Any]]:
    """The tool's well-formed links (a target and a map of parameters to JSON pointers)."""
    links = tool.metadata.get("links")
    if not isinstance(links, list) or tool.metadata.get("kind") != "rest":
        return []
    return [
        link
        for link in links
        if isinstance(link, Mapping)
        and _aim(link)[1]
        and isinstance(link.get("parameters"), Mapping)
        and all(isinstance(p, str) for p in link["parameters"].values())
    ]


def _aim(link: Mapping[str, Any]) -> tuple[str, str]:
    """What a link targets: ``("id", operationId)`` or ``("ref", pointer)`` (``("", "")`` if neither)."""
    op_id = _op_id(link.get("operation_id"))
    if op_id is not None:
        return "id", op_id
    ref = link.get("operation_ref")
    return ("ref", ref) if isinstance(ref, str) else ("", "")


def _document(tool: Tool) -> str:
    """The spec file a REST tool was read from (its ``source`` before the operation's pointer)."""
    source = tool.metadata.get("source")
    if tool.metadata.get("kind") != "rest" or not isinstance(source, str) or "#" not in source:
        return ""
    return source.rsplit("#", 1)[0]


def _operation(tool: Tool) -> set[tuple[str, str]] | None:
    """The ways a link can name a REST tool's operation (by operationId, by pointer), or None."""
    if not _document(tool):
        return None
    names = {("ref", str(tool.metadata["source"]).rsplit("#", 1)[1])}
    op_id = _op_id(tool.metadata.get("operation_id"))
    if op_id:
        names.add(("id", op_id))
    return names


def _op_id(value: Any) -> str | None:
    """An operationId as links and anchors name it: stripped, and a number's digits (a YAML
    ``operationId: 1234`` is read as a number)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value.strip() if isinstance(value, str) else None


def _targets(tools: Sequence[Tool], spaces: IntArray) -> dict[tuple[int, str, str, str], list[int]]:
    """REST tools by (namespace id, document, ``id`` or ``ref``, operationId or pointer)."""
    found: dict[tuple[int, str, str, str], list[int]] = {}
    for row, tool in enumerate(tools):
        for aim in _operation(tool) or ():
            found.setdefault((int(spaces[row]), _document(tool), *aim), []).append(row)
    return found


def _range(side: Side, row: int) -> range:
    """The instances of tool ``row`` (a side's instances are in tool order)."""
    lo = int(np.searchsorted(side.tool, row, side="left"))
    return range(lo, int(np.searchsorted(side.tool, row, side="right")))


def _output_paths(outs: Side, row: int, names: Sequence[str]) -> dict[tuple[str | int, ...], int]:
    """The output instances of tool ``row`` by the steps of their paths."""
    paths: dict[tuple[str | int, ...], int] = {}
    for instance in _range(outs, row):
        try:
            paths.setdefault(split_path(names[int(outs.name[instance])]), instance)
        except ValueError:
            continue
    return paths


def _input_names(ins: Side, row: int, names: Sequence[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for instance in _range(ins, row):
        found.setdefault(names[int(ins.name[instance])], instance)
    return found


def _arguments(tool: Tool) -> Mapping[str, Any]:
    route = tool.metadata.get("route")
    arguments = route.get("arguments") if isinstance(route, Mapping) else None
    return arguments if isinstance(arguments, Mapping) else {}


def _argument(arguments: Mapping[str, Any], parameter: str) -> str | None:
    """The tool's argument a link's parameter names: the one parameter of that name in the
    request (``id``), or of that name and location (``path.id``); None when none or several."""
    location, _, bare = parameter.partition(".")
    if not bare or location not in _LOCATIONS:
        location, bare = "", parameter
    matches = [
        key
        for key, spec in arguments.items()
        if isinstance(spec, Mapping)
        and spec.get("name") == bare
        and (not location or spec.get("in") == location)
    ]
    return matches[0] if len(matches) == 1 else None
