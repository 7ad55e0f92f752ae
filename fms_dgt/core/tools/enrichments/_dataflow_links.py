"""Edges a spec declares: OpenAPI response links, for the ``dataflow`` enrichment.

The REST loader keeps each operation's response links in ``metadata["links"]``
(:mod:`fms_dgt.core.tools.openapi.links`): a target operation and, per target parameter, the JSON
pointer of the response value it takes (``"username": "/owner/username"``). That is the wiring
the spec's author drew, so :func:`declared_pairs` turns each into an edge between parameter
instances, ranked with the exact matches (:mod:`._dataflow_exact`).

The target is an operation of the same spec file in the same namespace (by ``operationId``, or by
the operation's JSON pointer for an ``operationRef``), so a link never wires tools of another
source. A pointer is read against the tool's outputs (``/user/id`` is ``user.id``; a number is an
array item: ``/items/0/id`` is ``items[].id``); a pointer into the items of an array result
written without the item step (``/owner/username`` of a list of repositories, as the OpenAPI
link example does) reads as the items'. A link whose target, parameter or value is not among the
pool's parameters gives no edge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from fms_dgt.core.tools.artifacts import split_path

if TYPE_CHECKING:
    from fms_dgt.core.tools.data_objects import Tool
    from fms_dgt.core.tools.enrichments._dataflow_params import Side

__all__ = ["declared_pairs", "declaring_link", "pointer_steps"]

IntArray = npt.NDArray[np.int64]
_LOCATIONS = ("path", "query", "header", "cookie", "body")


def pointer_steps(pointer: str) -> tuple[str | int, ...]:
    """The steps of a JSON pointer as :func:`~fms_dgt.core.tools.artifacts.split_path` gives them
    (an array position is ``0``, whatever it is: a path's ``[]`` names every item)."""
    if not pointer:
        return ()
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]
    return tuple(0 if t.isdigit() else t for t in tokens)


def declared_pairs(
    tools: Sequence[Tool], sides: tuple[Side, Side], names: Sequence[str], spaces: IntArray
) -> tuple[IntArray, IntArray]:
    """``(output instances, input instances)`` of the edges the tools' response links declare.

    Args:
        tools: the pool, in registry order.
        sides: the output and input sides.
        names: parameter names (paths for outputs) by name id.
        spaces: per tool, its namespace id.
    """
    linked = [row for row, tool in enumerate(tools) if tool.metadata.get("links")]
    if not linked:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    outs, ins = sides
    targets = _targets(tools, spaces)
    found_out: list[int] = []
    found_in: list[int] = []
    for row in linked:
        tool = tools[row]
        home = (int(spaces[row]), _document(tool))
        out_range = _range(outs, row)
        for link in tool.metadata["links"]:
            if not isinstance(link, Mapping) or not isinstance(link.get("parameters"), Mapping):
                continue
            for target in _link_targets(targets, home, link):
                arguments = _arguments(tools[target])
                in_range = _range(ins, target)
                for parameter, pointer in link["parameters"].items():
                    if not isinstance(pointer, str):
                        continue
                    output = _output_instance(outs, out_range, names, pointer)
                    name = _argument(arguments, str(parameter))
                    inp = _input_instance(ins, in_range, names, name) if name else None
                    if output is not None and inp is not None:
                        found_out.append(output)
                        found_in.append(inp)
    return np.asarray(found_out, dtype=np.int64), np.asarray(found_in, dtype=np.int64)


def declaring_link(source: Tool, target: Tool, output: str, input_name: str) -> str | None:
    """The name of ``source``'s response link that wires its ``output`` into ``target``'s
    ``input_name``, or None (for ``fms-dgt graph``'s why)."""
    links = source.metadata.get("links")
    if not isinstance(links, list) or source.namespace != target.namespace:
        return None
    if _document(source) != _document(target) or not _document(target):
        return None
    pointer = target.metadata["source"].split("#", 1)[1]
    try:
        steps = split_path(output)
    except ValueError:
        return None
    arguments = _arguments(target)
    for link in links:
        if not isinstance(link, Mapping) or not isinstance(link.get("parameters"), Mapping):
            continue
        if (
            link.get("operation_id") != target.metadata.get("operation_id")
            and link.get("operation_ref") != pointer
        ):
            continue
        for parameter, value in link["parameters"].items():
            read = pointer_steps(value) if isinstance(value, str) else None
            if (
                read is not None
                and steps in (read, (0, *read))
                and _argument(arguments, str(parameter)) == input_name
            ):
                return str(link.get("name", ""))
    return None


def _document(tool: Tool) -> str:
    """The spec file a REST tool was read from (its ``source`` before the ``#``)."""
    source = tool.metadata.get("source")
    return source.split("#", 1)[0] if isinstance(source, str) else ""


def _targets(tools: Sequence[Tool], spaces: IntArray) -> dict[tuple[int, str, str, str], list[int]]:
    """REST tools by (namespace id, document, ``id`` or ``ref``, operationId or pointer)."""
    found: dict[tuple[int, str, str, str], list[int]] = {}
    for row, tool in enumerate(tools):
        source = tool.metadata.get("source")
        if tool.metadata.get("kind") != "rest" or not isinstance(source, str) or "#" not in source:
            continue
        document, pointer = source.split("#", 1)
        space = int(spaces[row])
        found.setdefault((space, document, "ref", pointer), []).append(row)
        op_id = tool.metadata.get("operation_id")
        if isinstance(op_id, str):
            found.setdefault((space, document, "id", op_id), []).append(row)
    return found


def _link_targets(
    targets: Mapping[tuple[int, str, str, str], list[int]], home: tuple[int, str], link: Mapping[str, Any]
) -> list[int]:
    if isinstance(link.get("operation_id"), str):
        return targets.get((*home, "id", link["operation_id"]), [])
    if isinstance(link.get("operation_ref"), str):
        return targets.get((*home, "ref", link["operation_ref"]), [])
    return []


def _range(side: Side, row: int) -> tuple[int, int]:
    """The instances of tool ``row`` (a side's instances are in tool order)."""
    lo = int(np.searchsorted(side.tool, row, side="left"))
    return lo, int(np.searchsorted(side.tool, row, side="right"))


def _output_instance(outs: Side, span: tuple[int, int], names: Sequence[str], pointer: str) -> int | None:
    """The output instance a pointer reads (the item's, for a list result's pointer without ``/0``)."""
    steps = pointer_steps(pointer)
    paths: dict[tuple[str | int, ...], int] = {}
    for instance in range(*span):
        try:
            paths.setdefault(split_path(names[int(outs.name[instance])]), instance)
        except ValueError:
            continue
    found = paths.get(steps)
    return found if found is not None else paths.get((0, *steps))


def _arguments(tool: Tool) -> Mapping[str, Any]:
    route = tool.metadata.get("route")
    arguments = route.get("arguments") if isinstance(route, Mapping) else None
    return arguments if isinstance(arguments, Mapping) else {}


def _argument(arguments: Mapping[str, Any], parameter: str) -> str | None:
    """The tool's argument a link's parameter names (``id``, or ``path.id`` with its location)."""
    location, _, bare = parameter.partition(".")
    if not bare or location not in _LOCATIONS:
        location, bare = "", parameter
    matches = [
        key
        for key, spec in arguments.items()
        if isinstance(spec, Mapping)
        and bare in (spec.get("name"), spec.get("renamed_from"))
        and (not location or spec.get("in") == location)
    ]
    if parameter in arguments and not location:
        return parameter
    return matches[0] if len(matches) == 1 else None


def _input_instance(ins: Side, span: tuple[int, int], names: Sequence[str], name: str) -> int | None:
    for instance in range(*span):
        if names[int(ins.name[instance])] == name:
            return instance
    return None
