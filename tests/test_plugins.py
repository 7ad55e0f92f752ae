from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.loaders.base import ToolLoader
from fms_dgt.errors import PluginRegistrationError, UnknownPluginError
from fms_dgt.plugins import TOOL_LOADERS, PluginRegistry, get_tool_loader_class, register_tool_loader


class ThirdPartyLoader(ToolLoader):
    def load(self) -> list[Tool]:
        return [Tool("x", self.namespace or "tp")]


@dataclass
class FakeDist:
    name: str


@dataclass
class FakeEntryPoint:
    name: str
    value: str
    target: Any
    dist: FakeDist

    def load(self) -> Any:
        if isinstance(self.target, Exception):
            raise self.target
        return self.target


@pytest.fixture
def loaders() -> Iterator[PluginRegistry[ToolLoader]]:
    registry: PluginRegistry[ToolLoader] = PluginRegistry(
        "tool loader", "fms_dgt.tool_loaders", "fms_dgt.core.tools.loaders.base:ToolLoader"
    )
    yield registry


def test_builtin_is_imported_lazily_by_name() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from fms_dgt.plugins import TOOL_LOADERS as L;"
        "mod = 'fms_dgt.core.tools.loaders.file'; before = mod in sys.modules;"
        "cls = L.get('file'); print(before, mod in sys.modules, cls.__name__, L.origin('file'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "FileToolLoader", "fms_dgt"]
    from fms_dgt.core.tools.loaders.file import FileToolLoader

    assert get_tool_loader_class("file") is FileToolLoader


def test_unknown_name_lists_known_names_and_a_close_match() -> None:
    with pytest.raises(UnknownPluginError) as info:
        get_tool_loader_class("fiel")
    message = str(info.value)
    assert "unknown tool loader 'fiel'" in message
    assert all(name in message for name in ("file", "inline", "mcp", "rest"))
    assert "Did you mean 'file'?" in message


def test_registration_errors(loaders: PluginRegistry[ToolLoader]) -> None:
    loaders.add("tp", ThirdPartyLoader)
    loaders.add("tp", ThirdPartyLoader)  # re-registering the same class is harmless

    class Other(ThirdPartyLoader):
        pass

    with pytest.raises(PluginRegistrationError, match="duplicate tool loader 'tp'"):
        loaders.add("tp", Other)
    with pytest.raises(PluginRegistrationError, match=r"not a subclass of .*ToolLoader"):
        loaders.add("bad", dict)


def test_decorator_registers_into_the_global_registry() -> None:
    @register_tool_loader("test-decorated")
    class Decorated(ThirdPartyLoader):
        pass

    try:
        assert get_tool_loader_class("test-decorated") is Decorated
        assert Decorated.plugin_name == "test-decorated"
    finally:
        TOOL_LOADERS.remove("test-decorated")


def test_entry_points_are_discovered_with_their_distribution(loaders: PluginRegistry[ToolLoader]) -> None:
    seen_groups = []

    def fake(group: str) -> list[FakeEntryPoint]:
        seen_groups.append(group)
        return [
            FakeEntryPoint(
                "thirdparty", "pkg.mod:ThirdPartyLoader", ThirdPartyLoader, FakeDist("dgt-thirdparty")
            )
        ]

    loaders.entry_points = fake
    assert loaders.get("thirdparty") is ThirdPartyLoader
    assert loaders.origin("thirdparty") == "dgt-thirdparty"
    assert "thirdparty" in loaders.names()
    assert seen_groups == ["fms_dgt.tool_loaders"]  # discovered once, lazily


def test_broken_entry_point_names_its_distribution(loaders: PluginRegistry[ToolLoader]) -> None:
    loaders.entry_points = lambda group: [
        FakeEntryPoint("broken", "pkg:Broken", ImportError("no module pkg"), FakeDist("dgt-broken"))
    ]
    with pytest.raises(PluginRegistrationError, match=r"dgt-broken.*no module pkg"):
        loaders.get("broken")


def test_import_fms_dgt_stays_light() -> None:
    import subprocess
    import sys

    code = (
        "import sys, fms_dgt, fms_dgt.core.tools.registry, fms_dgt.config;"
        "heavy = [m for m in ('mcp', 'prance', 'openapi_core', 'httpx') if m in sys.modules];"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
