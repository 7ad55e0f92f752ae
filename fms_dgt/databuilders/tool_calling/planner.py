"""Planning one record: its scenario, its tools, the tools offered beside them, and its kind.

Everything here is drawn from the record's own random source (seeded from the run seed and the
record index), in a fixed order, so a record is the same in every process and after a resume.

* **Scenario and sample**: a scenario is chosen by weight and its sampler draws the tools.
* **Kind**: with probability ``no_call_rate`` the record calls nothing: ``irrelevant`` (the user
  asks for what a tool that is *not* offered would do) or ``missing_value`` (the request leaves
  out a value a tool requires; the assistant asks for it). Otherwise it calls the sampled tools.
* **Distractors**: ``distractors`` more tools are offered beside the called ones, hard negatives
  first (the nearest tools by the ``neighbors`` artifact when it exists, else tools of the same
  namespace), never a tool that could serve the request equally (an overload of a called tool, or
  a tool of the same name in another namespace); the offered list is shuffled.
* **Steps**: a tool is called after every sampled tool that feeds it along a dataflow edge; tools
  that do not depend on each other are called together in one assistant turn.
"""

from __future__ import annotations

import contextlib
import fnmatch
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fms_dgt.core.tools.artifacts import Edge, ToolNeighbors
from fms_dgt.core.tools.data_objects import Tool, distinct_tools
from fms_dgt.core.tools.fakes import tokens
from fms_dgt.databuilders.tool_calling.plan import CALLS, RecordPlan
from fms_dgt.databuilders.tool_calling.wiring import READS, apart, first_word
from fms_dgt.errors import RejectedRecord

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry
    from fms_dgt.core.tools.samplers.base import ToolSample, ToolSampler
    from fms_dgt.databuilders.tool_calling.config import GenerationConfig

__all__ = ["Feed", "PlannedRecord", "Planner", "feeds_of", "is_copy", "levels"]

#: ``(source position, output path, input name)``: one argument of a sampled tool fed by another.
Feed = tuple[int, str, str]


@dataclass(slots=True, kw_only=True)
class PlannedRecord:
    """A plan and what produced it (the sample's edges feed the executor's wiring).

    Attributes:
        plan: the record's plan (no calls made yet: ``steps`` holds empty lists).
        sample: the sampled tools and their edges.
        levels: sample positions grouped into steps.
        feeds: per sample position, the edges that feed its arguments.
        sampler: the scenario's sampler name.
    """

    plan: RecordPlan
    sample: ToolSample
    levels: list[list[int]]
    feeds: dict[int, list[Feed]]
    sampler: str


class Planner:
    """Plans records for one registry generation (build a new one after a refresh).

    Args:
        settings: the run's ``generation:`` settings.
        registry: the registry (its snapshot is read once here).
        samplers: one sampler per scenario, in the order of ``settings.scenarios``.
        blocked: globs of tools no policy lets the job call (never offered).
    """

    def __init__(
        self,
        settings: GenerationConfig,
        registry: ToolRegistry,
        samplers: Sequence[ToolSampler],
        blocked: Sequence[str] = (),
    ) -> None:
        self.settings = settings
        self.source = samplers  # the job's list, to tell when it was replaced
        self.samplers = list(samplers)
        self.blocked = tuple(blocked)
        self.pool = [t for t in registry.tools() if not self._blocked(t)]
        self.by_namespace: dict[str, list[Tool]] = {}
        for tool in self.pool:
            self.by_namespace.setdefault(tool.namespace, []).append(tool)
        artifact = registry.artifacts.get("neighbors")
        self.neighbors = artifact if isinstance(artifact, ToolNeighbors) else None

    def _blocked(self, tool: Tool) -> bool:
        return any(fnmatch.fnmatchcase(tool.qualified_name, g) for g in self.blocked)

    def plan(self, index: int, rng: random.Random) -> PlannedRecord:
        """The plan of record ``index``, drawn from ``rng`` (seeded from the run seed and index)."""
        scenarios = self.settings.scenarios
        position = _weighted(rng, [s.weight for s in scenarios])
        scenario = scenarios[position]
        sample, copied = self._sample(self.samplers[position], index)
        kind = self._kind(sample, rng)
        if copied and kind == CALLS:  # a no-call record wires nothing: the copy cannot reach it
            raise RejectedRecord(
                f"record {index}: each of {_REDRAWS + 1} draws of its sampler joined its tools only by "
                "copying a label of an item read into a new item (an event's title into a new event's); "
                "such a tool has no other edge in the dataflow graph",
                reason="copy",
            )
        plan = RecordPlan(index=index, scenario=scenario.name, kind=kind)
        if kind == "irrelevant":
            plan.topic = sample.tools[0]
            plan.offered = self._unrelated(sample.tools[0], rng)
            return PlannedRecord(plan=plan, sample=sample, levels=[], feeds={}, sampler=scenario.sampler)
        called = distinct_tools(sample.tools)
        plan.offered = self._offer(called, rng)
        if kind == "missing_value":
            plan.missing = _missing(called, rng)
            return PlannedRecord(plan=plan, sample=sample, levels=[], feeds={}, sampler=scenario.sampler)
        feeds = feeds_of(sample)
        steps = levels(len(sample.tools), feeds, sample.tools)
        plan.steps = [[] for _ in steps]
        return PlannedRecord(plan=plan, sample=sample, levels=steps, feeds=feeds, sampler=scenario.sampler)

    def _sample(self, sampler: ToolSampler, index: int) -> tuple[ToolSample, bool]:
        """The record's tool sample without edges that copy an item into a new one (see
        :func:`is_copy`) or that no call would take a value along (another API's status for
        this one's upload: :func:`~fms_dgt.databuilders.tool_calling.wiring.apart`). A sample
        whose tools only such edges joined, or that holds one operation under two names (see
        :func:`_twins`), is drawn again, a few times at most, each from its own seed, so the run
        stays reproducible; when no draw will do, the first draw without copies is taken with
        the edges its calls use (they share the values they can, or none; twins may stay).

        Returns:
            The sample, and whether every draw joined its tools by a copy alone (a tool whose
            only edges copy, drawn each time): the first draw is then returned whole, for a
            no-call record; a record that calls its tools is rejected (see :meth:`plan`).
        """
        first = sampler.sample(seed=f"{self.settings.seed}:{index}")
        draws = [first]
        for attempt in range(_REDRAWS + 1):  # first a draw whose every pair of tools a value joins
            if attempt:
                draws.append(sampler.sample(seed=f"{self.settings.seed}:{index}:{attempt}"))
            usable = _without_copies(draws[-1], unused=True)
            if usable is not None and not _twins(usable.tools):
                return usable, False
        sample = _without_copies(first)
        for attempt in range(1, _REDRAWS + 1):
            if sample is not None:
                return _used(sample), False  # its calls share what values they can, or none
            sample = _without_copies(draws[attempt])
        return (first, True) if sample is None else (_used(sample), False)

    # ------------------------------------------------------------------ kind

    def _kind(self, sample: ToolSample, rng: random.Random) -> str:
        roll, pick = rng.random(), rng.random()
        if roll >= self.settings.no_call_rate:
            return CALLS
        can_miss = any(_required(t) for t in sample.tools)
        can_refuse = len(self.pool) > len(sample.tools)
        if can_miss and (pick < 0.5 or not can_refuse):
            return "missing_value"
        return "irrelevant" if can_refuse else CALLS

    # ------------------------------------------------------------------ offered tools

    def _offer(self, called: Sequence[Tool], rng: random.Random) -> list[Tool]:
        offered = list(called) + self._distractors(called, self.settings.distractors, rng)
        rng.shuffle(offered)
        return offered

    def _distractors(self, called: Sequence[Tool], count: int, rng: random.Random) -> list[Tool]:
        if count <= 0:
            return []
        taken = {t.qualified_name for t in called}
        names = {t.name for t in called}
        chosen: list[Tool] = []

        def take(candidates: Sequence[Tool]) -> None:
            for tool in candidates:
                if len(chosen) >= count:
                    return
                if tool.qualified_name not in taken and tool.name not in names:
                    taken.add(tool.qualified_name)
                    chosen.append(tool)

        take(self._hard_negatives(called, rng))
        if len(chosen) < count:
            take(self._random_tools(count * 4, rng))
        return chosen

    def _hard_negatives(self, called: Sequence[Tool], rng: random.Random) -> list[Tool]:
        """Tools most like the called ones: neighbours when known, else their namespaces' tools."""
        if self.neighbors is not None:
            near: list[Tool] = []
            for tool in called:
                try:
                    near.extend(n for n, _ in self.neighbors.neighbors(tool))
                except KeyError:  # a tool added since the artifact was built
                    continue
            return [t for t in near if not self._blocked(t)]
        same: list[Tool] = []
        for namespace in dict.fromkeys(t.namespace for t in called):
            group = self.by_namespace.get(namespace, [])
            same.extend(rng.sample(group, min(len(group), 12)))
        return same

    def _random_tools(self, count: int, rng: random.Random) -> list[Tool]:
        if not self.pool:
            return []
        return [self.pool[int(rng.random() * len(self.pool))] for _ in range(count)]

    def _unrelated(self, topic: Tool, rng: random.Random) -> list[Tool]:
        """Tools that cannot serve a request about ``topic``: other names, other namespaces first."""
        count = max(1, self.settings.distractors)
        near = {topic.qualified_name}
        if self.neighbors is not None:
            with contextlib.suppress(KeyError):  # a tool added since the artifact was built
                near.update(t.qualified_name for t, _ in self.neighbors.neighbors(topic))
        others = [t for t in self._random_tools(count * 8, rng) if t.namespace != topic.namespace]
        candidates = others + self._random_tools(count * 8, rng)
        chosen: list[Tool] = []
        for tool in candidates:
            if len(chosen) == count:
                break
            if tool.qualified_name not in near and tool.name != topic.name:
                near.add(tool.qualified_name)
                chosen.append(tool)
        return chosen


# --------------------------------------------------------------------------- copies

#: Samples drawn again at most, while each copies an item into a new one (then the record is
#: rejected: with a third of a pool's chain sources copying, 1 record in 20,000 or so).
_REDRAWS = 8
_CREATES = frozenset({"create", "add", "post", "new", "insert", "register", "make"})
_LABELS = frozenset({"name", "title", "tag", "label", "subject", "tags", "labels"})


def is_copy(edge: Edge) -> bool:
    """An edge that hands a label of an item read (a pet's name, an event's title) to the
    creation of another item of the same API: a new pet named like the one just looked up. The
    dataflow graph rightly holds it (the values fit), but no one asks for that."""
    if edge.source.namespace != edge.target.namespace:
        return False
    source, target = first_word(edge.source.name), first_word(edge.target.name)
    label = edge.input.rsplit(".", 1)[-1].replace("[]", "").lower()
    return source in READS and target in _CREATES and label in _LABELS


def _without_copies(sample: ToolSample, *, unused: bool = False) -> ToolSample | None:
    """``sample`` without its copying edges, and with ``unused`` without the edges no call will
    take a value along either (another API's door status for a video upload: see
    :func:`~fms_dgt.databuilders.tool_calling.wiring.apart`); None when a pair of its tools had
    no other edge."""
    kept = _keeping(sample, lambda e: not is_copy(e) and not (unused and _unused(e)))
    joined = {(id(e.source), id(e.target)) for e in kept.edges}
    if any((id(e.source), id(e.target)) not in joined for e in sample.edges):
        return None
    return kept


def _used(sample: ToolSample) -> ToolSample:
    """``sample`` without the edges no call takes a value along (its tools may then be unjoined:
    they are asked for side by side, not one after the other)."""
    return _keeping(sample, lambda e: not _unused(e))


def _unused(edge: Edge) -> bool:
    return apart(edge.source, edge.output, edge.target, edge.input)


def _keeping(sample: ToolSample, keep: Callable[[Edge], bool]) -> ToolSample:
    """``sample`` with only the edges ``keep`` keeps (itself when it keeps them all)."""
    kept = [e for e in sample.edges if keep(e)]
    return sample if len(kept) == len(sample.edges) else type(sample)(sample.tools, kept, sample.seed)


# --------------------------------------------------------------------------- topology


def _twins(tools: Sequence[Tool]) -> bool:
    """Whether two tools are one operation named twice (NESTFUL's Tripadvisor_Search_Restaurants
    and TripadvisorSearchRestaurants): a person asks for a search once ("search restaurants for
    location loca-91808. Can you also search for restaurants for location loca-91808?")."""
    names = ["".join(tokens(t.name)) for t in tools]
    return len(set(names)) < len(names)


def feeds_of(sample: ToolSample) -> dict[int, list[Feed]]:
    """Target position -> ``(source position, output, input)`` along the sample's edges, forward only."""
    position = {id(t): i for i, t in enumerate(sample.tools)}
    feeds: dict[int, list[Feed]] = {}
    for edge in sample.edges:
        source, target = _positions(sample, edge, position)
        if source is not None and target is not None and source < target:
            feeds.setdefault(target, []).append((source, edge.output, edge.input))
    return feeds


def _positions(sample: ToolSample, edge: Edge, position: Mapping[int, int]) -> tuple[int | None, int | None]:
    source, target = position.get(id(edge.source)), position.get(id(edge.target))
    if source is None or target is None:
        return _position_by_name(sample, edge.source), _position_by_name(sample, edge.target)
    return source, target


def _position_by_name(sample: ToolSample, tool: Tool) -> int | None:
    for i, candidate in enumerate(sample.tools):
        if candidate.qualified_name == tool.qualified_name and candidate.fingerprint == tool.fingerprint:
            return i
    return None


def levels(count: int, feeds: Mapping[int, Sequence[Feed]], tools: Sequence[Tool] = ()) -> list[list[int]]:
    """Positions grouped so that every tool comes after the tools feeding it, and a call that ends
    what another call of its step also takes comes after that call (with ``tools``: a listing's
    first pet is not deleted while its photo uploads, nor looked up once deleted)."""
    sources = [{s for s, _, _ in feeds.get(p, [])} for p in range(count)]
    after = [set(found) for found in sources]
    ends = [len(tools) == count and _ends(tools[p]) for p in range(count)]
    for p in (p for p in range(count) if ends[p]):
        later = _fed_by(p, sources)  # what takes the ending call's output cannot come before it
        after[p] |= {q for q in range(count) if not ends[q] and sources[p] & sources[q] and q not in later}
    level = [0] * count
    for _ in range(count):  # the added order may point forward: settle in a few passes
        settled = True
        for position in range(count):
            new = max((level[s] + 1 for s in after[position]), default=0)
            settled, level[position] = settled and new == level[position], new
        if settled:
            break
    groups: dict[int, list[int]] = {}
    for position in range(count):
        groups.setdefault(level[position], []).append(position)
    return [groups[k] for k in sorted(groups)]


def _fed_by(position: int, sources: Sequence[set[int]]) -> set[int]:
    """The positions fed, directly or through others, by ``position``."""
    found: set[int] = set()
    frontier = {position}
    while frontier:
        frontier = {q for q, fed in enumerate(sources) if fed & frontier and q not in found}
        found |= frontier
    return found


#: First words of tools that end the thing they act on.
_ENDING = frozenset({"delete", "remove", "cancel", "destroy", "revoke", "unsubscribe", "purge", "erase"})


def _ends(tool: Tool) -> bool:
    words = tokens(tool.name.rsplit(".", 1)[-1])
    return bool(words) and words[0] in _ENDING


def _weighted(rng: random.Random, weights: Sequence[float]) -> int:
    roll = rng.random() * sum(weights)
    for index, weight in enumerate(weights):
        roll -= weight
        if roll < 0:
            return index
    return len(weights) - 1


def _required(tool: Tool) -> list[str]:
    required = tool.parameters.get("required") or []
    props: Mapping[str, Any] = tool.parameters.get("properties") or {}
    return [r for r in required if isinstance(r, str) and r in props]


def _missing(called: Sequence[Tool], rng: random.Random) -> tuple[Tool, str] | None:
    for tool in called:
        names = _required(tool)
        if names:
            return tool, names[int(rng.random() * len(names))]
    return None
