"""The :class:`ToolSampler` contract, the :class:`ToolSample` result and :func:`get_tool_sampler`.

A sampler picks the tools of one scenario. Every sampler:

* is built with ``get_tool_sampler(name, registry=..., **config)`` (the keys of its YAML entry) and
  checks at construction that the artifacts it reads exist, naming the enrichment to add;
* returns from ``sample(k)`` **exactly** ``k`` tools in a meaningful order, with the dataflow edges
  between them, or raises :class:`~fms_dgt.errors.SamplingError` carrying the partial sample;
* is **deterministic**: a sampler seed plus a call seed fix the result in any process, whatever
  ``PYTHONHASHSEED`` (seeds go through SHA-256, never ``hash()``; no global random state);
* is **thread-safe**: everything derived from the registry is built in ``__init__``; ``sample()``
  only reads it and uses a private ``random.Random`` per call.

Without a call seed, calls are numbered by an atomic counter, so a serial sequence of calls is
reproducible too; pass ``seed=`` to make each call independent of order (e.g. across threads).
"""

from __future__ import annotations

import fnmatch
import hashlib
import itertools
import random
import threading
import weakref
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, overload

from fms_dgt.core.tools.artifacts import DataflowGraph, Edge
from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.errors import ConfigError, SamplingError
from fms_dgt.plugins import get_tool_sampler_class

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = [
    "GraphToolSampler",
    "Seed",
    "ToolSample",
    "ToolSampler",
    "below",
    "derive_seed",
    "get_tool_sampler",
]

Seed = int | str

_MASK = (1 << 64) - 1


def _seed_int(seed: Seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, str)):
        raise SamplingError(f"invalid seed {seed!r}: use an integer or a string.")
    if isinstance(seed, int):
        return seed & _MASK
    return int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "little")


def below(rng: random.Random, n: int) -> int:
    """A random integer in ``range(n)``: ``int(random() * n)``, several times cheaper than ``randrange``.

    The bias is below ``n / 2**53``, far under anything a sample size could show.
    """
    return int(rng.random() * n)


def derive_seed(sampler_seed: Seed, call_seed: Seed) -> int:
    """A 64-bit seed from a sampler seed and a call seed (splitmix64 mixing; stable everywhere)."""
    x = (_seed_int(sampler_seed) * 0x9E3779B97F4A7C15 + _seed_int(call_seed) + 0x632BE59BD9B4E019) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


class ToolSample(Sequence[Tool]):
    """The tools of one scenario, in order, and the dataflow edges between them.

    It is a sequence of :class:`Tool`; ``edges`` says which output of which tool feeds which input
    of which other tool, so a generator can wire arguments.

    Attributes:
        tools: the sampled tools, in the sampler's order (chain: call order; fan_out: seed first;
            fan_in: sink last; dag: a topological order).
        edges: dataflow edges among the sampled tools (empty for samplers that use none).
        seed: the seed that reproduces this sample with the same sampler.
    """

    __slots__ = ("edges", "seed", "tools")

    def __init__(self, tools: Sequence[Tool], edges: Sequence[Edge] = (), seed: int = 0) -> None:
        self.tools = tuple(tools)
        self.edges = tuple(edges)
        self.seed = seed

    @overload
    def __getitem__(self, index: int) -> Tool: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Tool, ...]: ...
    def __getitem__(self, index: int | slice) -> Tool | tuple[Tool, ...]:
        return self.tools[index]

    def __len__(self) -> int:
        return len(self.tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self.tools)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolSample):
            return NotImplemented
        return self.tools == other.tools and self.edges == other.edges

    def __hash__(self) -> int:
        return hash((self.tools, self.edges))

    def __repr__(self) -> str:
        names = ", ".join(t.qualified_name for t in self.tools)
        return f"ToolSample([{names}], {len(self.edges)} edges)"

    @property
    def names(self) -> list[str]:
        """Qualified names of the tools, in order."""
        return [t.qualified_name for t in self.tools]


class ToolSampler(ABC):
    """Base class of samplers.

    Args:
        registry: the registry to sample from (its artifacts are read once, here).
        k: default number of tools per sample.
        seed: the sampler's seed (an integer or a string).
        exclude: qualified names or globs (``bank::delete_*``) never sampled; the generation job
            adds every blocklist of its policies, so a sample never holds a tool it may not call.

    Class attributes:
        required_artifacts: artifact keys that must be in ``registry.artifacts``; each is written
            by the enrichment of the same name.
        overridable: keys that ``sample(**overrides)`` accepts besides ``k`` and ``seed``.
    """

    required_artifacts: ClassVar[tuple[str, ...]] = ()
    overridable: ClassVar[tuple[str, ...]] = ()
    plugin_name: ClassVar[str] = ""
    #: Config keys accepted besides the constructor's (see :meth:`prepare_config`).
    extra_config_keys: ClassVar[tuple[str, ...]] = ("namespace",)

    @classmethod
    def prepare_config(cls, settings: Mapping[str, Any]) -> dict[str, Any]:
        """Constructor arguments from a YAML entry; ``namespace: x`` (the seed's spelling) is
        ``namespaces: [x]``.

        Raises:
            ConfigError: both spellings are given.
        """
        out = dict(settings)
        if "namespace" in out:
            if "namespaces" in out:
                raise ConfigError("conflicting keys: give namespace or namespaces, not both")
            one = out.pop("namespace")
            out["namespaces"] = [one] if isinstance(one, str) else one
        return out

    def __init__(
        self, registry: ToolRegistry, *, k: int = 3, seed: Seed = 0, exclude: Sequence[str] = ()
    ) -> None:
        self.registry = registry.snapshot()
        self.k = self._check_k(k)
        self.seed = seed
        _seed_int(seed)
        self.exclude = _check_exclude(exclude, self.name)
        self._calls = itertools.count()
        self._check_artifacts()

    def excluded(self, tool: Tool) -> bool:
        """True when ``tool``'s qualified name matches one of the ``exclude`` globs."""
        return bool(self.exclude) and any(fnmatch.fnmatchcase(tool.qualified_name, g) for g in self.exclude)

    @property
    def name(self) -> str:
        """The registered name, or the class name."""
        return self.plugin_name or type(self).__name__

    def _check_artifacts(self) -> None:
        artifacts = self.registry.artifacts
        for key in self.required_artifacts:
            if key not in artifacts:
                raise SamplingError(
                    f"missing artifact {key!r} for sampler {self.name!r}: the registry was built "
                    f"without it. Add the '{key}' enrichment (tools.enrichments: [{{type: {key}}}])."
                )

    def _check_k(self, k: Any) -> int:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise SamplingError(f"invalid k {k!r} for sampler {self.name!r}: use a positive integer.")
        return k

    def sample(self, k: int | None = None, *, seed: Seed | None = None, **overrides: Any) -> ToolSample:
        """Exactly ``k`` tools (the sampler's default when None).

        Args:
            k: number of tools.
            seed: call seed; the same sampler seed and call seed give the same sample anywhere.
            **overrides: per-call values of the keys in :attr:`overridable`.

        Raises:
            SamplingError: exactly ``k`` tools cannot be found (``error.tools`` holds the best
                partial sample), or an override is unknown.
        """
        count = self.k if k is None else self._check_k(k)
        unknown = [key for key in overrides if key not in self.overridable]
        if unknown:
            allowed = ", ".join(("k", "seed", *self.overridable))
            raise SamplingError(
                f"unknown option {unknown[0]!r} for sampler {self.name!r}: allowed are {allowed}."
            )
        call_seed = next(self._calls) if seed is None else seed
        mixed = derive_seed(self.seed, call_seed)
        return self._draw(count, random.Random(mixed), mixed, overrides)

    @abstractmethod
    def _draw(self, k: int, rng: random.Random, seed: int, overrides: Mapping[str, Any]) -> ToolSample:
        """Draw one sample of exactly ``k`` tools using only ``rng`` for randomness."""

    def _fail(self, k: int, partial: Sequence[Tool], why: str, fix: str) -> SamplingError:
        return SamplingError(
            f"cannot sample {k} tools with {self.name!r}: {why}. {fix}", requested=k, tools=partial
        )


def get_tool_sampler(name: str, *, registry: ToolRegistry, **config: Any) -> ToolSampler:
    """Build the sampler registered under ``name`` with the keys of its YAML entry.

    Raises:
        UnknownPluginError: no sampler has that name.
        SamplingError: a key is not accepted by the sampler, or a required artifact is missing.
    """
    from fms_dgt.plugins import TOOL_SAMPLERS

    get_tool_sampler_class(name)  # an unknown name raises UnknownPluginError, as it always has
    try:
        return TOOL_SAMPLERS.create(name, config, yaml_path=f"sampler {name}", registry=registry)
    except ConfigError as exc:
        raise SamplingError(exc.reason) from exc


class GraphToolSampler(ToolSampler):
    """Base of the samplers that walk the ``dataflow`` graph.

    Built once in ``__init__``: per node, its distinct successor and predecessor nodes (best edge
    first, one overload per qualified name, never the node's own name) and the edges of every
    connected pair.

    Args:
        registry: registry with a ``dataflow`` artifact.
        k: default number of tools per sample.
        seed: the sampler's seed.
        namespaces: only sample tools of these namespaces (all when None).
        max_attempts: fresh starting points tried before giving up.
        exclude: qualified names or globs never sampled (nor walked through).
        min_score: only walk edges scoring at least this much (0 to 1; 0 keeps every edge).
    """

    required_artifacts = ("dataflow",)

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        k: int = 3,
        seed: Seed = 0,
        namespaces: Sequence[str] | None = None,
        max_attempts: int = 64,
        exclude: Sequence[str] = (),
        min_score: float = 0.0,
    ) -> None:
        super().__init__(registry, k=k, seed=seed, exclude=exclude)
        self.min_score = _check_min_score(min_score, self.name)
        graph = self.registry.artifacts["dataflow"]
        if not isinstance(graph, DataflowGraph):
            raise SamplingError(
                f"invalid artifact 'dataflow' for sampler {self.name!r}: got {type(graph).__name__}, "
                "not a DataflowGraph. Use the built-in dataflow enrichment."
            )
        self.graph = graph
        self.max_attempts = max(1, int(max_attempts))
        self.tools = graph.tools
        shared = _adjacency(graph, namespaces, self.name, self.exclude, self.min_score)
        self.qid, self.succ, self.pred = shared.qid, shared.succ, shared.pred
        self.pair_edges, self.nodes = shared.pair_edges, shared.nodes
        self._prepare()

    def _prepare(self) -> None:
        """Derive sampler-specific indexes once the graph's are built (subclasses override)."""

    def _edges(self, pairs: Sequence[tuple[int, int]]) -> list[Edge]:
        found: list[Edge] = []
        for pair in pairs:
            found.extend(self.pair_edges.get(pair, ()))
        return found

    def _result(self, nodes: Sequence[int], pairs: Sequence[tuple[int, int]], seed: int) -> ToolSample:
        return ToolSample([self.tools[n] for n in nodes], self._edges(pairs), seed)


@dataclass(frozen=True, slots=True)
class _Adjacency:
    """Read-only structures derived from one graph and namespace filter (shared by samplers)."""

    qid: tuple[int, ...]
    succ: tuple[tuple[int, ...], ...]
    pred: tuple[tuple[int, ...], ...]
    pair_edges: dict[tuple[int, int], tuple[Edge, ...]]
    nodes: tuple[int, ...]


_SHARED: weakref.WeakKeyDictionary[Any, dict[Any, _Adjacency]] = weakref.WeakKeyDictionary()
_SHARED_LOCK = threading.Lock()


def _adjacency(
    graph: Any,
    namespaces: Sequence[str] | None,
    sampler: str,
    exclude: tuple[str, ...] = (),
    min_score: float = 0.0,
) -> _Adjacency:
    """The adjacency of ``graph`` under a namespace and exclude filter, built once per graph and filter.

    Several samplers of one run (one per scenario) read the same graph; they share these
    read-only structures instead of each building their own (or even their filter).
    """
    wanted = {namespaces} if isinstance(namespaces, str) else set(namespaces or ())
    key = (None if namespaces is None else tuple(sorted(wanted)), tuple(sorted(set(exclude))), min_score)
    with _SHARED_LOCK:
        per_graph = _SHARED.setdefault(graph, {})
        found = per_graph.get(key)
        if found is None:
            allowed = _allowed(graph.tools, namespaces, sampler, exclude)
            found = per_graph[key] = _build_adjacency(graph, allowed, min_score)
    return found


def _build_adjacency(graph: Any, allowed: Sequence[bool], min_score: float = 0.0) -> _Adjacency:
    qids: dict[str, int] = {}
    qid = tuple(qids.setdefault(t.qualified_name, len(qids)) for t in graph.tools)
    count = len(graph.tools)
    return _Adjacency(
        qid=qid,
        succ=tuple(_distinct(graph.successors(n, min_score), n, allowed, qid) for n in range(count)),
        pred=tuple(_distinct(graph.predecessors(n, min_score), n, allowed, qid) for n in range(count)),
        pair_edges=_pair_edges(graph, allowed, min_score),
        nodes=tuple(n for n in range(count) if allowed[n]),
    )


def _distinct(
    nodes: Sequence[int], node: int, allowed: Sequence[bool], qid: Sequence[int]
) -> tuple[int, ...]:
    """Allowed ``nodes`` with one per qualified name, never ``node``'s own name (order kept)."""
    if not allowed[node]:
        return ()
    seen = {qid[node]}
    kept = []
    for other in nodes:
        if allowed[other] and qid[other] not in seen:
            seen.add(qid[other])
            kept.append(other)
    return tuple(kept)


def _allowed(
    tools: Sequence[Tool], namespaces: Sequence[str] | None, sampler: str, exclude: Sequence[str] = ()
) -> list[bool]:
    """Per tool: in the wanted namespaces and not excluded."""
    allowed = _in_namespaces(tools, namespaces, sampler)
    if exclude:
        patterns = tuple(exclude)
        for position, tool in enumerate(tools):
            if allowed[position] and any(fnmatch.fnmatchcase(tool.qualified_name, g) for g in patterns):
                allowed[position] = False
    return allowed


def _check_exclude(exclude: Any, sampler: str) -> tuple[str, ...]:
    if isinstance(exclude, str):
        exclude = [exclude]
    if not isinstance(exclude, Sequence) or not all(isinstance(g, str) and g for g in exclude):
        raise SamplingError(
            f"invalid exclude {exclude!r} for sampler {sampler!r}: use a list of qualified names or "
            "globs such as 'bank::delete_*'."
        )
    return tuple(dict.fromkeys(exclude))


def _in_namespaces(tools: Sequence[Tool], namespaces: Sequence[str] | None, sampler: str) -> list[bool]:
    if namespaces is None:
        return [True] * len(tools)
    if isinstance(namespaces, str):
        namespaces = [namespaces]
    known = {t.namespace for t in tools}
    unknown = [n for n in namespaces if n not in known]
    if unknown:
        raise SamplingError(
            f"unknown namespace {unknown[0]!r} for sampler {sampler!r}: the registry has "
            f"{', '.join(sorted(known)) or 'no namespaces'}. Fix the namespaces key."
        )
    wanted = set(namespaces)
    return [t.namespace in wanted for t in tools]


def _pair_edges(
    graph: Any, allowed: Sequence[bool], min_score: float = 0.0
) -> dict[tuple[int, int], tuple[Edge, ...]]:
    pairs: dict[tuple[int, int], list[Edge]] = {}
    src, dst, score = graph.src.tolist(), graph.dst.tolist(), graph.score.tolist()
    for edge_id, (a, b) in enumerate(zip(src, dst, strict=True)):
        if allowed[a] and allowed[b] and score[edge_id] >= min_score:
            pairs.setdefault((a, b), []).append(graph.edge(edge_id))
    return {pair: tuple(edges) for pair, edges in pairs.items()}


def _check_min_score(value: Any, sampler: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise SamplingError(f"invalid min_score {value!r} for sampler {sampler!r}: use a number in [0, 1].")
    return float(value)
