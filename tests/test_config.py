from __future__ import annotations

from pathlib import Path

import pytest

from fms_dgt.config import interpolate, load_config
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]

TOOLS = "ns:\n  - name: a\n    parameters: {type: object, properties: {}}\n"


def _config(tmp_path: Path, text: str) -> Path:
    (tmp_path / "tools").mkdir(exist_ok=True)
    (tmp_path / "tools" / "t.yaml").write_text(TOOLS)
    path = tmp_path / "run.yaml"
    path.write_text(text)
    return path


def test_relative_paths_resolve_against_the_config_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _config(tmp_path, "tools:\n  registry:\n    - type: file\n      path: tools/t.yaml\n")
    monkeypatch.chdir("/")
    assert [t.qualified_name for t in ToolRegistry.from_config(path)] == ["ns::a"]


def test_interpolation_with_defaults_and_missing_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DGT_TEST_DIR", str(tmp_path / "tools"))
    monkeypatch.delenv("DGT_UNSET", raising=False)
    assert interpolate({"a": ["${DGT_TEST_DIR}/x", "${DGT_UNSET:-fallback}"]}) == {
        "a": [f"{tmp_path}/tools/x", "fallback"]
    }
    path = _config(tmp_path, "tools:\n  registry:\n    - type: file\n      path: ${DGT_UNSET}/t.yaml\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert "DGT_UNSET" in str(info.value) and "tools.registry[0].path" in str(info.value)
    assert str(path) in str(info.value)


def test_unknown_plugin_key_names_its_yaml_path(tmp_path: Path) -> None:
    path = _config(
        tmp_path, "tools:\n  registry:\n    - type: file\n      path: tools/t.yaml\n      namepsace: x\n"
    )
    with pytest.raises(ConfigError, match=r"unknown key 'namepsace'.*tools.registry\[0\].namepsace"):
        ToolRegistry.from_config(path)


def test_unknown_loader_type_and_bad_blocks(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"Did you mean 'file'.*tools.registry\[0\].type"):
        ToolRegistry.from_config({"tools": {"registry": [{"type": "fille", "path": "x"}]}})
    with pytest.raises(ConfigError, match=r"unknown top-level key 'toolz'.*Did you mean 'tools'.*at toolz"):
        ToolRegistry.from_config({"toolz": {"registry": []}})
    with pytest.raises(ConfigError, match="missing tools block"):
        ToolRegistry.from_config({"generation": {}})
    with pytest.raises(ConfigError, match="unknown key 'registy'"):
        ToolRegistry.from_config({"tools": {"registy": []}})
    with pytest.raises(ConfigError, match="missing key 'path'"):
        ToolRegistry.from_config({"tools": {"registry": [{"type": "file"}]}})


def test_inline_tools_and_engine_routes() -> None:
    registry = ToolRegistry.from_config(
        {
            "tools": {
                "registry": [
                    {
                        "type": "inline",
                        "namespace": "calc",
                        "engine": "sim",
                        "tools": [
                            {
                                "name": "add",
                                "parameters": {"type": "dict", "properties": {"a": {"type": "float"}}},
                            },
                            {"name": "neg", "namespace": "other"},
                        ],
                    }
                ]
            }
        }
    )
    assert registry.engine_routes == {"calc": "sim", "other": "sim"}
    assert registry.get("calc::add").parameters["properties"]["a"] == {"type": "number"}
    assert registry.get("calc::add").metadata["source"].startswith("config:tools.registry[0]#")


def test_duplicate_keys_in_config_are_errors(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("tools:\n  registry: []\n  registry: []\n")
    with pytest.raises(ConfigError, match="duplicate key 'registry'"):
        load_config(path)


def test_the_bundled_demo_config_loads() -> None:
    # Closed after: the registry holds the demo's MCP connection, named for the process.
    with ToolRegistry.from_config(REPO / "configs" / "demo.yaml") as registry:
        assert len(registry) > 0
        assert {"weather_api", "calc"} <= set(registry.namespaces())


def test_an_empty_inline_source_is_an_error() -> None:
    from fms_dgt.errors import LoadError

    with pytest.raises(LoadError, match=r"no tools in inline source.*tools.registry\[0\]"):
        ToolRegistry.from_config({"tools": {"registry": [{"type": "inline", "tools": []}]}})


def test_a_top_level_mcp_servers_block_adds_each_servers_tools(tmp_path: Path) -> None:
    from support.mcp_harness import http_server, stdio_kwargs

    stdio = stdio_kwargs()
    with http_server("streamable_http") as url:
        config = {
            "mcp_servers": {
                "local": {"command": stdio["command"], "args": stdio["args"]},
                "remote": {"url": url},
            }
        }
        with ToolRegistry.from_config(config) as registry:
            assert registry.namespaces() == ["local", "remote"]
            assert "local::add" in registry and "remote::add" in registry
            assert registry.get("remote::add").metadata["server"] == "remote"
    with pytest.raises(ConfigError, match=r"invalid MCP server entry.*at mcp_servers.bad"):
        ToolRegistry.from_config({"mcp_servers": {"bad": ["python"]}})
    with pytest.raises(
        ConfigError, match=r"unknown key 'comand'.*Did you mean 'command'.*mcp_servers.x.comand"
    ):
        ToolRegistry.from_config({"mcp_servers": {"x": {"comand": "python"}}})


def test_package_errors_are_also_the_builtin_a_caller_would_catch(tmp_path: Path) -> None:
    from fms_dgt.core.tools.loaders.file import FileToolLoader

    with pytest.raises(FileNotFoundError):
        load_config(tmp_path / "missing.yaml")
    with pytest.raises(FileNotFoundError):
        FileToolLoader(tmp_path / "missing.yaml").load()
    with pytest.raises(ValueError, match="unknown top-level key"):
        ToolRegistry.from_config({"tool": {}})
