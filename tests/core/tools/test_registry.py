from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from fms_dgt.core.tools.data_objects import Tool, ToolCall
from fms_dgt.core.tools.enrichments.base import ToolEnrichment
from fms_dgt.core.tools.loaders.base import ToolLoader
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.errors import (
    AmbiguousToolError,
    DuplicateToolError,
    EnrichmentError,
    LoadError,
    NoMatchingOverloadError,
    RefreshError,
    ToolError,
    ToolNotFoundError,
)


def _tool(name: str, ns: str = "ns", **props: str) -> Tool:
    properties = {k: {"type": v} for k, v in props.items()}
    return Tool(
        name,
        ns,
        parameters={"type": "object", "properties": properties, "required": list(properties)},
        metadata={"source": f"test:{name}"},
    )


class ListLoader(ToolLoader):
    """A loader over an in-memory list that tests swap between generations."""

    def __init__(self, tools: list[Tool], *, namespace: str | None = None) -> None:
        super().__init__(namespace=namespace)
        self.current = tools
        self.calls = 0

    def load(self) -> list[Tool]:
        self.calls += 1
        if isinstance(self.current, Exception):
            raise self.current
        return list(self.current)


def test_construction_and_lookups() -> None:
    registry = ToolRegistry([_tool("a", x="string"), _tool("b", "other")])
    assert len(registry) == 2
    assert registry.namespaces() == ["ns", "other"]
    assert "ns::a" in registry and "ns::zzz" not in registry
    assert registry.get("other::b").name == "b"
    assert [t.name for t in registry.tools("ns")] == ["a"]
    assert [t.qualified_name for t in registry] == ["ns::a", "other::b"]


def test_unknown_name_suggests_close_match() -> None:
    registry = ToolRegistry([_tool("get_weather")])
    with pytest.raises(ToolNotFoundError, match="Did you mean 'ns::get_weather'"):
        registry.get("ns::get_wether")


def test_identical_fingerprint_is_a_duplicate_naming_both_sources() -> None:
    first = _tool("a", x="string")
    second = Tool(
        "a",
        "ns",
        description="other words",
        parameters={
            "required": ["x"],
            "properties": {"x": {"type": "string", "description": "d"}},
            "type": "object",
        },
        metadata={"source": "other.yaml#/3"},
    )
    with pytest.raises(DuplicateToolError) as info:
        ToolRegistry([first, second])
    message = str(info.value)
    assert "duplicate tool: ns::a with identical input schema registered twice" in message
    assert "test:a" in message and "other.yaml#/3" in message


def test_overloads_get_and_match() -> None:
    by_city = _tool("weather", city="string")
    by_coords = _tool("weather", lat="number", lon="number")
    registry = ToolRegistry([by_city, by_coords])
    assert registry.overloads("ns::weather") == [by_city, by_coords]
    with pytest.raises(AmbiguousToolError, match="2 overloads"):
        registry.get("ns::weather")
    assert registry.match(ToolCall("ns::weather", {"city": "Rome"})) is by_city
    assert registry.match(ToolCall("ns::weather", {"lat": 1.0, "lon": 2})) is by_coords
    with pytest.raises(NoMatchingOverloadError) as info:
        registry.match(ToolCall("ns::weather", {"lat": "north"}))
    assert len(info.value.reasons) == 2
    assert "'city' is a required property" in str(info.value)


def test_match_prefers_the_overload_declaring_more_arguments() -> None:
    loose = Tool("t", "ns", parameters={"type": "object", "properties": {"a": {}}})
    precise = Tool("t", "ns", parameters={"type": "object", "properties": {"a": {}, "b": {}}})
    registry = ToolRegistry([loose, precise])
    assert registry.match(ToolCall("ns::t", {"a": 1, "b": 2})) is precise
    assert registry.match(ToolCall("ns::t", {"a": 1})) is loose


def test_refresh_reports_changes_with_fingerprints() -> None:
    loader = ListLoader([_tool("keep"), _tool("drop"), _tool("edit", x="string")])
    registry = ToolRegistry.from_loaders([loader])
    edited = _tool("edit", x="integer")
    loader.current = [_tool("keep"), edited, _tool("new")]
    pinned = registry.snapshot()
    report = registry.refresh()
    assert (pinned.generation, registry.generation) == (0, 1)
    assert set(report.added) == {"ns::new"} and set(report.removed) == {"ns::drop"}
    assert report.changed["ns::edit"][1] == (edited.fingerprint,)
    assert report.unchanged == 1 and bool(report)
    assert report.summary() == "1 added, 1 removed, 1 changed, 1 unchanged"
    assert not registry.refresh()


def test_failed_refresh_keeps_previous_state() -> None:
    loader = ListLoader([_tool("a")])
    registry = ToolRegistry.from_loaders([loader])
    registry.artifacts["marker"] = 1
    loader.current = [_tool("a"), _tool("a")]
    with pytest.raises(RefreshError, match="keeps its previous 1 tools"):
        registry.refresh()
    loader.current = LoadError("server gone", source="srv")  # type: ignore[assignment]
    with pytest.raises(RefreshError, match="server gone"):
        registry.refresh()
    assert [t.name for t in registry] == ["a"] and registry.artifacts == {"marker": 1}


class Counter(ToolEnrichment):
    artifact_key = "count"

    def __init__(self) -> None:
        self.runs = 0

    def enrich(self, registry: ToolRegistry) -> Any:
        self.runs += 1
        return len(registry)


class Doubler(ToolEnrichment):
    artifact_key = "double"
    depends_on = ("count",)

    def enrich(self, registry: ToolRegistry) -> Any:
        return registry.artifacts["count"] * 2


class Describer(ToolEnrichment):
    artifact_key = "described"

    def enrich(self, registry: ToolRegistry) -> Any:
        import dataclasses

        registry.update_tools(dataclasses.replace(t, description="filled") for t in registry)
        return True


def test_enrichments_run_in_dependency_order_on_build_and_refresh() -> None:
    loader = ListLoader([_tool("a")])
    counter = Counter()
    registry = ToolRegistry.from_loaders([loader], enrichments=[Doubler(), counter, Describer()])
    assert registry.artifacts == {"count": 1, "double": 2, "described": True}
    assert registry.get("ns::a").description == "filled"
    loader.current = [_tool("a"), _tool("b")]
    registry.refresh()
    assert registry.artifacts["double"] == 4 and counter.runs == 2


def test_enrichment_graph_errors_name_the_enrichments() -> None:
    with pytest.raises(EnrichmentError, match=r"Doubler.*count"):
        ToolRegistry([], enrichments=[Doubler()])

    class Loop(ToolEnrichment):
        artifact_key = "count"
        depends_on = ("double",)

        def enrich(self, registry: ToolRegistry) -> Any:
            return 0

    with pytest.raises(EnrichmentError, match="cyclic"):
        ToolRegistry([], enrichments=[Loop(), Doubler()])


def test_published_registry_cannot_be_updated() -> None:
    registry = ToolRegistry([_tool("a")])
    with pytest.raises(ToolError, match="published registry"):
        registry.update_tools([])


def test_loaders_run_concurrently_and_routes_follow_loaded_namespaces() -> None:
    barrier = threading.Barrier(2, timeout=5)

    class Waiting(ListLoader):
        def load(self) -> list[Tool]:
            barrier.wait()  # both loaders must be inside load() at once
            return super().load()

    first = Waiting([_tool("a", "alpha"), _tool("b", "beta")], namespace="nominal")
    second = Waiting([_tool("c", "gamma")])
    registry = ToolRegistry.from_loaders([first, second], engines=["sim", None])
    assert registry.engine_routes == {"alpha": "sim", "beta": "sim"}


def test_readers_never_see_a_half_built_registry_during_refresh() -> None:
    generations = [[_tool(f"g{g}_{i}", f"ns{i % 3}") for i in range(300)] for g in range(2)]
    loader = ListLoader(generations[0])
    registry = ToolRegistry.from_loaders([loader])
    errors: list[str] = []
    stop = threading.Event()

    def reader(seed: int) -> None:
        import random

        rng = random.Random(seed)
        while not stop.is_set():
            snap = registry.snapshot()
            names = [t.name for t in snap]
            prefixes = {n.split("_")[0] for n in names}
            if len(names) != 300 or len(prefixes) != 1:
                errors.append(f"mixed view: {len(names)} tools, {prefixes}")
            picked = rng.sample(snap.tools(), 4)
            for tool in picked:
                if snap.get(tool.qualified_name) is not tool:
                    errors.append(f"lookup mismatch for {tool.qualified_name}")
            whole = registry.tools()
            if len({t.name.split("_")[0] for t in whole}) != 1:
                errors.append("tools() mixed generations")

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for round_ in range(40):
        loader.current = generations[(round_ + 1) % 2]
        registry.refresh()
    stop.set()
    for thread in threads:
        thread.join()
    assert not errors, errors[:3]
    assert loader.calls == 41


def test_from_file_and_context_manager(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("ns:\n  - name: a\n    parameters: {type: object, properties: {}}\n")
    closed = []

    class Closing(ListLoader):
        def close(self) -> None:
            closed.append(True)

    with ToolRegistry.from_file(path) as registry:
        assert registry.get("ns::a").metadata["source"].endswith("t.yaml#/ns/0")
    with ToolRegistry.from_loaders([Closing([])]):
        pass
    assert closed == [True]


def test_a_change_announced_during_refresh_stays_flagged() -> None:
    class Announcing(ListLoader):
        announce = False

        def load(self) -> list[Tool]:
            if self.announce:
                self.stale = True  # e.g. an MCP list_changed notification arriving mid-load
            return super().load()

    loader = Announcing([_tool("a")])
    registry = ToolRegistry.from_loaders([loader])
    loader.stale = True
    assert registry.stale
    registry.refresh()
    assert not registry.stale
    loader.announce = True
    registry.refresh()
    assert registry.stale


def test_failed_refresh_keeps_the_stale_flags() -> None:
    loader = ListLoader([_tool("a")])
    registry = ToolRegistry.from_loaders([loader])
    loader.stale = True
    loader.current = LoadError("gone")  # type: ignore[assignment]
    with pytest.raises(RefreshError):
        registry.refresh()
    assert registry.stale


def test_loaders_are_bound_to_their_registry() -> None:
    bound: list[ToolRegistry] = []

    class Binding(ListLoader):
        def bind_registry(self, registry: ToolRegistry) -> None:
            bound.append(registry)

    registry = ToolRegistry.from_loaders([Binding([_tool("a")])])
    assert bound == [registry]
