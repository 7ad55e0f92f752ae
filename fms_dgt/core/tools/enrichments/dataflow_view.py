"""Looking at a dataflow graph: a tool's best edges with why, and Graphviz for a namespace.

Used by ``fms-dgt graph``::

    fms-dgt graph CONFIG --tool weather_api::geocode_city
    fms-dgt graph CONFIG --dot graph.dot --namespace petstore

:func:`explain` says why an edge scored as it did: the type fit of its ends, how its names relate
(an exact match in one namespace, or the text similarity of names and descriptions) and, for
identifiers, the entity they share.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fms_dgt.core.tools.artifacts import DataflowGraph, Edge, split_path
from fms_dgt.core.tools.enrichments._dataflow_entities import entity_key, parse_role
from fms_dgt.core.tools.enrichments._dataflow_exact import list_name, placed_names, referred_name, same_name
from fms_dgt.core.tools.enrichments._dataflow_fields import find_field
from fms_dgt.core.tools.enrichments._dataflow_links import declaring_link, describing_link
from fms_dgt.core.tools.enrichments._dataflow_params import signature
from fms_dgt.core.tools.enrichments._dataflow_scoring import KIN_FLOOR, QUERY_FLOOR, role_compatibility

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = ["Why", "describe_tool", "explain", "graph_of", "to_dot"]


def graph_of(registry: ToolRegistry) -> DataflowGraph:
    """The registry's dataflow graph; built with the default settings when it has none."""
    graph = registry.artifacts.get("dataflow")
    if isinstance(graph, DataflowGraph):
        return graph
    from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment

    return DataflowEnrichment().enrich(registry)


@dataclass(frozen=True, slots=True, kw_only=True)
class Why:
    """The parts of an edge's score.

    Attributes:
        types: ``"string -> string"``.
        fit: the type fit (identifiers and labels included), in ``[0, 1]``.
        names: ``"declared by the spec's response link 'GetUser'"``, ``"declared by the
            input's description (a link to operation 'getCategories')"``, ``"exact name, same
            namespace"``, ``"label into a search input"`` or
            ``"text similarity 0.62"``.
        entity: the entity both identifiers name (``""`` when the edge is not between identifiers).
    """

    types: str
    fit: float
    names: str
    entity: str

    def __str__(self) -> str:
        parts = [f"type {self.types} {self.fit:.2f}", self.names]
        if self.entity:
            parts.append(f"entity {self.entity}")
        return "; ".join(parts)


def explain(edge: Edge) -> Why:
    """Why ``edge`` scored as it did (recomputed from its two tools)."""
    out_field = find_field(edge.source, edge.output, output=True)
    in_field = find_field(edge.target, edge.input, output=False)
    if out_field is None or in_field is None:
        return Why(types="?", fit=0.0, names="parameter not found", entity="")
    out_sig = signature(edge.source, out_field, True)
    in_sig = signature(edge.target, in_field, False)
    fit = role_compatibility(out_sig[2], _kind(out_sig[3]), in_sig[2], _kind(in_sig[3]))
    return Why(
        types=f"{out_sig[2]} -> {in_sig[2]}",
        fit=fit,
        names=_names(edge, (out_sig[3], in_sig[3]), fit),
        entity=_shared_entity(out_sig[3], in_sig[3]),
    )


def _kind(role: str) -> str:
    return parse_role(role).kind


def _names(edge: Edge, roles: tuple[str, str], fit: float) -> str:
    steps = [s for s in split_path(edge.output) if isinstance(s, str)]
    same_space = edge.source.namespace == edge.target.namespace
    # the last step, or the list whose items' id or name the output is (tax_rates[].id -> tax_rates)
    holder = list_name(edge.output)
    names = {same_name(s) for s in [*steps[-1:], *([holder] if holder else [])]}
    link = declaring_link(edge.source, edge.target, edge.output, edge.input) if edge.score == 1.0 else None
    if link is not None:
        return f"declared by the spec's response link {link!r}"
    operation = describing_link(edge.source, edge.target, edge.output, edge.input)
    if operation is not None and edge.score == 1.0:
        return f"declared by the input's description (a link to operation {operation!r})"
    if same_space and same_name(edge.input) in names and edge.score == 1.0:
        return "exact name, same namespace"
    named = _named_for(roles[0], steps[-1] if steps else "")
    if same_space and edge.score == 1.0 and same_name(edge.input) in named:
        return f"input named for the {named[same_name(edge.input)]}, same namespace"
    if same_space and edge.score == 1.0 and referred_name(edge.input) in named:
        return f"input named for a reference to the {named[referred_name(edge.input)]}, same namespace"
    similarity = edge.score / fit if fit > 0 else 0.0
    searched = tuple(_kind(r) for r in roles) == ("label", "query")
    if same_space and searched and edge.score <= QUERY_FLOOR * fit + 1e-6:  # other namespaces: texts
        return "label into a search input"
    if _shared_entity(*roles) not in ("", "unknown") and edge.score <= KIN_FLOOR * fit + 1e-6:
        return "identifiers of one entity"
    where = ", same namespace" if same_space else ""
    return f"text similarity {similarity:.2f}{where}"


def _named_for(out_role: str, last: str) -> dict[str, str]:
    """The names an input may have to take the output exactly, beyond its own (see
    :mod:`._dataflow_exact`), each with what it names: the entities of an identifier and the
    whole name of the object it sits in, and a bare label read with its entity."""
    role = parse_role(out_role)
    found = {same_name(e): e for e in (role.a, role.b, role.whole) if e}
    if role.place:
        found.update(dict.fromkeys(placed_names(role.place, last), f"{role.place} {last}"))
    return found


def _shared_entity(out_role: str, in_role: str) -> str:
    mine, theirs = parse_role(out_role), parse_role(in_role)
    if not (mine.identifier and theirs.identifier):
        return ""
    theirs_keys = {entity_key(e) for e in (theirs.a, theirs.b) if e}
    shared = [e for e in (mine.a, mine.b) if e and entity_key(e) in theirs_keys]
    if shared:
        return shared[0]
    # a polymorphic identifier: one side's entity among the other's variants, or both's
    mine_keys = {entity_key(e) for e in (mine.a, mine.b) if e}
    for one, other in (
        (mine_keys, theirs.variants),
        (theirs_keys, mine.variants),
        ({entity_key(v) for v in mine.variants}, theirs.variants),
    ):
        found = [v for v in other if entity_key(v) in one]
        if found:
            return f"{found[0]} (one of the objects it may be)"
    return "unknown"


def describe_tool(graph: DataflowGraph, qualified_name: str, top: int = 10) -> list[str]:
    """Lines showing each overload of ``qualified_name``: its best outgoing and incoming edges.

    Raises:
        KeyError: no tool of the graph has that name.
    """
    nodes = [n for n, t in enumerate(graph.tools) if t.qualified_name == qualified_name]
    if not nodes:
        raise KeyError(qualified_name)
    lines: list[str] = []
    for node in nodes:
        tool = graph.tools[node]
        lines.append(
            f"{tool.qualified_name}" + (f" (overload {tool.fingerprint[:12]})" if len(nodes) > 1 else "")
        )
        outgoing, incoming = graph.edges_from(node), graph.edges_to(node)
        lines.append(f"  outgoing ({len(outgoing)} edges, best {min(top, len(outgoing))}):")
        lines += [_edge_line(e, e.output, f"{e.target.qualified_name}.{e.input}") for e in outgoing[:top]]
        lines.append(f"  incoming ({len(incoming)} edges, best {min(top, len(incoming))}):")
        lines += [_edge_line(e, f"{e.source.qualified_name}.{e.output}", e.input) for e in incoming[:top]]
    return lines


def _edge_line(edge: Edge, left: str, right: str) -> str:
    return f"    {edge.score:.2f}  {left or '(result)'} -> {right}  [{explain(edge)}]"


def to_dot(graph: DataflowGraph, namespace: str | None = None, per_pair: int = 3) -> str:
    """Graphviz text of the tool-level graph (only ``namespace``'s tools when given).

    Each arrow joins two tools and is labelled with up to ``per_pair`` of its best parameter
    edges (``output -> input score``).
    """
    chosen = [n for n, t in enumerate(graph.tools) if namespace is None or t.namespace == namespace]
    keep = set(chosen)
    lines = ["digraph dataflow {", "  rankdir=LR;", '  node [shape=box, fontname="Helvetica"];']
    lines += [f"  n{n} [label={_quote(graph.tools[n].qualified_name)}];" for n in chosen]
    for (a, b), edges in _pairs(graph, chosen, keep).items():
        label = "\\n".join(
            _escape(f"{e.output or '(result)'} -> {e.input} {e.score:.2f}") for e in edges[:per_pair]
        )
        lines.append(f'  n{a} -> n{b} [label="{label}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def _pairs(graph: DataflowGraph, chosen: Iterable[int], keep: set[int]) -> dict[tuple[int, int], list[Edge]]:
    pairs: dict[tuple[int, int], list[Edge]] = {}
    for node in chosen:
        for number in range(int(graph.out_ptr[node]), int(graph.out_ptr[node + 1])):
            target = int(graph.dst[number])
            if target in keep:
                pairs.setdefault((node, target), []).append(graph.edge(number))
    return pairs


def _quote(text: str) -> str:
    return f'"{_escape(text)}"'


def _escape(text: str) -> str:
    """``text`` safe inside a DOT string: backslashes, quotes and control characters escaped."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in escaped)
