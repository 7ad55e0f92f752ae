"""The artifacts enrichments write and samplers read: the contract between the two sides.

An enrichment stores its result under ``registry.artifacts[<artifact_key>]``; a sampler reads it.
This module holds the result types and their read methods, and nothing that computes them:

* ``dataflow``: a :class:`DataflowGraph` of parameter-level :class:`Edge` objects, whose outputs
  are *paths* into a tool's result (``location.name``, ``author[].id``) read with :func:`read_path`;
* ``embeddings``: :class:`ToolEmbeddings`, one vector per tool;
* ``neighbors``: :class:`ToolNeighbors`, each tool's nearest tools.

Samplers import only this module, never an enrichment, so a sampler can be loaded (and a
third-party enrichment can produce these artifacts) without the built-in enrichments. The
artifacts hold numpy arrays, but this module calls no numpy function, so numpy appears only in
annotations: importing it (and so any sampler) does not import numpy.

Every artifact lists tools in registry order; overloads (same qualified name, different input
schema) are separate rows and nodes, found by ``(qualified_name, fingerprint)``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fms_dgt.core.tools.data_objects import Tool

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    IntArray = npt.NDArray[np.int64]
    FloatArray = npt.NDArray[np.float32]

__all__ = [
    "GRAPH_ARRAYS",
    "ITEM",
    "MISSING",
    "WHOLE_RESULT",
    "DataflowGraph",
    "Edge",
    "ToolEmbeddings",
    "ToolNeighbors",
    "item_path",
    "join_path",
    "leaf_name",
    "read_path",
    "row_index",
    "split_path",
]

#: The output path of an edge whose value is the whole result (a result that is not an object).
WHOLE_RESULT = ""

#: The marker of an array's items in a path (``author[].id``: the ``id`` of an item of ``author``).
ITEM = "[]"

#: The arrays a :class:`DataflowGraph` is built from (see its docstring for their layout).
GRAPH_ARRAYS = ("src", "dst", "output", "input", "score", "out_ptr", "in_order", "in_ptr")


def row_index(artifact: Any, tool: Tool) -> int:
    """Row of ``tool`` in an artifact with ``tools`` and a lazily built ``_rows`` map.

    The map is built on first use because it needs every tool's fingerprint, which registries
    compute only on demand; building it twice from two threads gives the same map.

    Raises:
        KeyError: the tool was not in the registry when the artifact was built.
    """
    rows = artifact._rows
    if rows is None:
        rows = {(t.qualified_name, t.fingerprint): i for i, t in enumerate(artifact.tools)}
        artifact._rows = rows
    return int(rows[(tool.qualified_name, tool.fingerprint)])


# --------------------------------------------------------------------------- output paths


class _Missing:
    """The type of :data:`MISSING` (one instance; false in a boolean context)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


#: What :func:`read_path` returns when a result has no value at the path.
MISSING: Any = _Missing()

_SPECIAL = ".[]\\"


def join_path(parent: str, name: str) -> str:
    """The path of property ``name`` under ``parent`` (``""`` is the result itself).

    Characters of the path syntax in ``name`` (``.``, ``[``, ``]``, ``\\``) are escaped with a
    backslash, so every property name has a path.
    """
    escaped = "".join("\\" + c if c in _SPECIAL else c for c in name)
    return f"{parent}.{escaped}" if parent else escaped


def item_path(parent: str) -> str:
    """The path of the items of the array at ``parent`` (read as its first item)."""
    return parent + ITEM


@functools.lru_cache(maxsize=4096)
def split_path(path: str) -> tuple[str | int, ...]:
    """The steps of a path: property names (str) and array positions (int; ``[]`` is ``0``).

    ``split_path("filings[].accessionNumber") == ("filings", 0, "accessionNumber")``; an explicit
    position (``author[1].id``) is read as written.

    Raises:
        ValueError: the path is malformed (an unclosed ``[``, a position that is not a number).
    """
    steps: list[str | int] = []
    name: list[str] = []
    pending = False  # a name has started (it may be empty: the property "")
    i = 0
    while i < len(path):
        char = path[i]
        if char == "\\" and i + 1 < len(path):
            name.append(path[i + 1])
            pending, i = True, i + 2
            continue
        if char == ".":
            steps.append("".join(name))
            name, pending, i = [], True, i + 1
            continue
        if char == "[":
            if name or pending:
                steps.append("".join(name))
            name, pending = [], False
            i = _position(path, i, steps)
            continue
        name.append(char)
        pending, i = True, i + 1
    if name or pending:
        steps.append("".join(name))
    return tuple(steps)


def leaf_name(path: str) -> str:
    """The last property name on an output path, as written (``data[].attributes.name`` ->
    ``name``, ``[].id`` -> ``id``, ``watchlist[]`` -> ``watchlist``, ``""`` -> ``""``); a
    malformed path gives its text after the last dot."""
    try:
        steps = split_path(path)
    except ValueError:
        return path.rsplit(".", 1)[-1].replace(ITEM, "")
    return next((step for step in reversed(steps) if isinstance(step, str)), "")


def _position(path: str, start: int, steps: list[str | int]) -> int:
    """Append the array position of the ``[...]`` at ``start``; return the index after it."""
    end = path.find("]", start)
    if end < 0:
        raise ValueError(f"malformed output path {path!r}: '[' at {start} is not closed")
    inside = path[start + 1 : end]
    if inside and not inside.isdigit():
        raise ValueError(f"malformed output path {path!r}: {inside!r} is not an array position")
    steps.append(int(inside) if inside else 0)
    if end + 1 < len(path) and path[end + 1] == ".":
        return end + 2
    return end + 1


def read_path(value: Any, path: str) -> Any:
    """The value at ``path`` in a tool's result, or :data:`MISSING` when there is none.

    ``path`` is an :attr:`Edge.output`: ``""`` is the whole result, ``a.b`` property ``b`` of
    property ``a``, ``a[]`` the first item of array ``a`` (``a[2]``, the third). A property that is
    absent, a value of the wrong kind (a list where an object is expected) or an empty array give
    :data:`MISSING`; so does a malformed path.

    >>> read_path({"author": [{"id": "a1"}, {"id": "a2"}]}, "author[].id")
    'a1'
    """
    try:
        steps = split_path(path)
    except ValueError:
        return MISSING
    for step in steps:
        if isinstance(step, int):
            if not isinstance(value, (list, tuple)) or step >= len(value):
                return MISSING
            value = value[step]
        elif isinstance(value, Mapping) and step in value:
            value = value[step]
        else:
            return MISSING
    return value


# --------------------------------------------------------------------------- dataflow


@dataclass(frozen=True, slots=True)
class Edge:
    """One dataflow edge: ``source``'s output ``output`` can feed ``target``'s input ``input``.

    Attributes:
        source: the producing tool.
        output: the path of its output in the result (``user_id``, ``location.name``,
            ``author[].id``; ``""``, :data:`WHOLE_RESULT`, for the whole result). Read the value
            from a result with :func:`read_path`.
        target: the consuming tool.
        input: its input parameter.
        score: type compatibility x name/description similarity, in ``(0, 1]``.
    """

    source: Tool
    output: str
    target: Tool
    input: str
    score: float


class DataflowGraph:
    """Parameter-level dataflow edges with forward (``out``) and reverse (``in``) indexes.

    Edge arrays are sorted by source node, best score first; :attr:`in_order` lists the same edges
    sorted by target node. Nodes are indexes into :attr:`tools` (registry order). Every array is
    read-only.

    Args:
        tools: the nodes.
        edges: the arrays named in :data:`GRAPH_ARRAYS`, in the layout of the attributes below
            (the ``dataflow`` enrichment builds them).
        names: the parameter names the ``output`` and ``input`` arrays index.
        settings: the settings of the enrichment that built the graph.

    Attributes:
        tools: the nodes.
        src, dst: source and target node of each edge.
        output, input: parameter names of each edge, as indexes into :attr:`names`.
        score: each edge's score.
        out_ptr: edges of node ``n`` are ``out_ptr[n]:out_ptr[n + 1]``.
        in_order, in_ptr: edge ids sorted by target and their per-node ranges.
    """

    __slots__ = (
        "__weakref__",
        "_rows",
        "dst",
        "in_order",
        "in_ptr",
        "input",
        "names",
        "out_ptr",
        "output",
        "score",
        "settings",
        "src",
        "tools",
    )

    def __init__(
        self,
        tools: Sequence[Tool],
        edges: Mapping[str, npt.NDArray[Any]],
        names: Sequence[str],
        settings: Mapping[str, Any],
    ) -> None:
        for array in (edges[name] for name in GRAPH_ARRAYS):
            array.setflags(write=False)
        self.tools = tuple(tools)
        self.src, self.dst = edges["src"], edges["dst"]
        self.output, self.input = edges["output"], edges["input"]
        self.score: FloatArray = edges["score"]
        self.out_ptr: IntArray = edges["out_ptr"]
        self.in_order: IntArray = edges["in_order"]
        self.in_ptr: IntArray = edges["in_ptr"]
        self.names = tuple(names)
        self.settings = dict(settings)
        self._rows: dict[tuple[str, str], int] | None = None

    def __len__(self) -> int:
        """The number of edges."""
        return len(self.src)

    def node(self, tool: Tool) -> int:
        """The node index of ``tool`` (overloads are different nodes).

        Raises:
            KeyError: the tool was not in the registry when the graph was built.
        """
        return row_index(self, tool)

    def edge(self, edge_id: int) -> Edge:
        """Edge ``edge_id`` as an :class:`Edge`."""
        return Edge(
            source=self.tools[int(self.src[edge_id])],
            output=self.names[int(self.output[edge_id])],
            target=self.tools[int(self.dst[edge_id])],
            input=self.names[int(self.input[edge_id])],
            score=float(self.score[edge_id]),
        )

    def edges_from(self, node: int) -> list[Edge]:
        """Outgoing edges of ``node``, best first."""
        return [self.edge(e) for e in range(int(self.out_ptr[node]), int(self.out_ptr[node + 1]))]

    def edges_to(self, node: int) -> list[Edge]:
        """Incoming edges of ``node``, best first."""
        lo, hi = int(self.in_ptr[node]), int(self.in_ptr[node + 1])
        return [self.edge(int(e)) for e in self.in_order[lo:hi]]

    def successors(self, node: int, min_score: float = 0.0) -> list[int]:
        """Distinct target nodes of ``node``'s edges scoring at least ``min_score``, best first."""
        lo, hi = int(self.out_ptr[node]), int(self.out_ptr[node + 1])
        ids = [e for e in range(lo, hi) if self.score[e] >= min_score] if min_score > 0 else range(lo, hi)
        return list(dict.fromkeys(self.dst[list(ids)].tolist()))

    def predecessors(self, node: int, min_score: float = 0.0) -> list[int]:
        """Distinct source nodes of edges into ``node`` scoring at least ``min_score``, best first."""
        ids = self.in_order[self.in_ptr[node] : self.in_ptr[node + 1]]
        if min_score > 0:
            ids = ids[self.score[ids] >= min_score]
        return list(dict.fromkeys(self.src[ids].tolist()))


# --------------------------------------------------------------------------- embeddings


class ToolEmbeddings:
    """The ``embeddings`` artifact: row ``i`` of :attr:`matrix` is the vector of ``tools[i]``.

    Attributes:
        tools: the registry's tools, in registry order (overloads are separate rows).
        matrix: ``(len(tools), dim)`` float32, L2-normalised, read-only.
        encoder: the encoder settings that produced the vectors.
    """

    __slots__ = ("_rows", "encoder", "matrix", "tools")

    def __init__(self, tools: Sequence[Tool], matrix: FloatArray, encoder: Mapping[str, Any]) -> None:
        self.tools = tuple(tools)
        self.matrix = matrix
        self.matrix.setflags(write=False)
        self.encoder = dict(encoder)
        self._rows: dict[tuple[str, str], int] | None = None

    def __len__(self) -> int:
        return len(self.tools)

    def row(self, tool: Tool) -> int:
        """The row of ``tool``.

        Raises:
            KeyError: the tool was not in the registry when the embeddings were computed.
        """
        return row_index(self, tool)

    def vector(self, tool: Tool) -> FloatArray:
        """The vector of ``tool`` (read-only view)."""
        row: FloatArray = self.matrix[self.row(tool)]
        return row


# --------------------------------------------------------------------------- neighbors


class ToolNeighbors:
    """The ``neighbors`` artifact.

    Attributes:
        tools: the registry's tools (row order of the arrays).
        indices: ``(len(tools), k)`` neighbour rows, best first, ``-1`` where a row has fewer.
        scores: the matching cosine similarities.
        k: neighbours per tool.
    """

    __slots__ = ("_rows", "indices", "k", "scores", "tools")

    def __init__(self, tools: Sequence[Tool], indices: IntArray, scores: FloatArray):
        self.tools = tuple(tools)
        self.indices = indices
        self.scores = scores
        self.indices.setflags(write=False)
        self.scores.setflags(write=False)
        self.k = int(indices.shape[1]) if indices.ndim == 2 else 0
        self._rows: dict[tuple[str, str], int] | None = None

    def row(self, tool: Tool) -> int:
        """The row of ``tool`` (KeyError when it was not in the registry)."""
        return row_index(self, tool)

    def neighbors(self, tool: Tool) -> list[tuple[Tool, float]]:
        """The nearest tools of ``tool`` with their similarity, best first."""
        row = self.row(tool)
        return [
            (self.tools[int(i)], float(s))
            for i, s in zip(self.indices[row], self.scores[row], strict=True)
            if i >= 0
        ]
