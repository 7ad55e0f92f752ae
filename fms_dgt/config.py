"""YAML configuration: loading, ``${VAR}`` interpolation, and the ``tools:`` block as objects.

A config file looks like::

    tools:
      registry:
        - type: file
          path: ${DGT_DATA_DIR:-data}/weather_tools.yaml
          namespace: weather_api
          engine: sim              # optional: routes this source's namespaces to a named engine
      enrichments: []             # [{type: embeddings, ...}, ...]
      engines: {}                 # name -> engine config (used by the generation job)
      cache_dir: .cache           # optional; DGT_CACHE_DIR overrides the default

Strings may use ``${VAR}`` and ``${VAR:-default}``; a missing variable without a default is an error
naming it and its place. Each ``registry`` entry's keys, other than ``type`` and ``engine``, are
keyword arguments of the loader class registered under ``type``; an unknown key is an error with
its YAML path. Relative paths in a loader's path keys resolve against the config file's directory.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from fms_dgt.errors import ConfigError, ConfigNotFoundError, LoadError
from fms_dgt.io import parse_yaml_text
from fms_dgt.plugins import TOOL_ENRICHMENTS, TOOL_LOADERS, PluginRegistry, accepted_keys

if TYPE_CHECKING:
    from fms_dgt.core.tools.enrichments.base import ToolEnrichment
    from fms_dgt.core.tools.loaders.base import ToolLoader

__all__ = ["Config", "build_enrichments", "build_loaders", "config_from_data", "interpolate", "load_config"]

P = TypeVar("P")

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_TOOLS_KEYS = ("registry", "enrichments", "engines", "cache_dir")
#: Top-level keys of a config: the tools, MCP servers declared on their own, the generation job,
#: and how the job runs (concurrency, executor).
TOP_LEVEL_KEYS = ("tools", "mcp_servers", "generation", "run")


class Config:
    """A parsed, interpolated config and where it came from.

    Attributes:
        data: the whole mapping.
        path: the file, or None for a mapping given in code.
        base_dir: directory that relative paths resolve against.
    """

    def __init__(self, data: Mapping[str, Any], path: Path | None):
        self.data = data
        self.path = path
        self.base_dir = path.parent if path is not None else Path.cwd()
        self._check_top_level()

    def _check_top_level(self) -> None:
        for key in self.data:
            if key not in TOP_LEVEL_KEYS:
                close = difflib.get_close_matches(str(key), TOP_LEVEL_KEYS, n=1)
                hint = f" Did you mean {close[0]!r}?" if close else ""
                raise ConfigError(
                    f"unknown top-level key {key!r}: a config holds {', '.join(TOP_LEVEL_KEYS)}.{hint}",
                    path=self.label,
                    yaml_path=str(key),
                )

    @property
    def label(self) -> str | None:
        """The file name for messages."""
        return str(self.path) if self.path else None

    def tools_block(self) -> Mapping[str, Any]:
        """The validated ``tools:`` mapping (empty when only ``mcp_servers:`` declares tools)."""
        tools = self.data.get("tools")
        if tools is None and "mcp_servers" in self.data:
            return {}
        if not isinstance(tools, Mapping):
            raise ConfigError(
                "missing tools block: the config needs a 'tools:' mapping with a 'registry:' list of sources",
                path=self.label,
                yaml_path="tools",
            )
        unknown = [k for k in tools if k not in _TOOLS_KEYS]
        if unknown:
            raise ConfigError(
                f"unknown key {unknown[0]!r} in the tools block: allowed keys are {', '.join(_TOOLS_KEYS)}",
                path=self.label,
                yaml_path=f"tools.{unknown[0]}",
            )
        return tools

    def cache_dir(self) -> str:
        """``tools.cache_dir``, else ``$DGT_CACHE_DIR``, else ``.cache`` beside the config."""
        value = self.tools_block().get("cache_dir") or os.environ.get("DGT_CACHE_DIR") or ".cache"
        return self.resolve_path(str(value))

    def create(
        self,
        plugins: PluginRegistry[P],
        entry: Any,
        yaml_path: str,
        *,
        reserved: tuple[str, ...] = ("type",),
        **fixed: Any,
    ) -> P:
        """The plug-in an entry names with ``type:``, built from the entry's other keys.

        Raises:
            ConfigError: the entry is not a mapping, names an unknown plug-in, or has a key the
                plug-in does not accept (with its YAML path; values are never printed).
        """
        if not isinstance(entry, Mapping):
            raise ConfigError(
                f"invalid {plugins.kind} entry: expected a mapping with a 'type:' key, got a "
                f"{type(entry).__name__}",
                path=self.label,
                yaml_path=yaml_path,
            )
        settings = {k: v for k, v in entry.items() if k not in reserved}
        return plugins.create(
            entry.get("type"),
            settings,
            yaml_path=yaml_path,
            source=self.label,
            base_dir=self.base_dir,
            **fixed,
        )

    def resolve_path(self, value: str) -> str:
        """``value`` resolved against :attr:`base_dir` unless absolute or a URL."""
        if "://" in value or Path(value).is_absolute():
            return value
        return str(self.base_dir / value)


def interpolate(value: Any, *, path: str | None = None, yaml_path: str = "") -> Any:
    """Replace ``${VAR}`` / ``${VAR:-default}`` in every string of ``value`` (recursively).

    Raises:
        ConfigError: a variable is unset and has no default (names it and its place).
    """
    if isinstance(value, str):
        return _interpolate_string(value, path, yaml_path)
    if isinstance(value, Mapping):
        return {k: interpolate(v, path=path, yaml_path=_join(yaml_path, k)) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, path=path, yaml_path=f"{yaml_path}[{i}]") for i, v in enumerate(value)]
    return value


def _join(base: str, key: Any) -> str:
    return f"{base}.{key}" if base else str(key)


def _interpolate_string(text: str, path: str | None, yaml_path: str) -> str:
    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = os.environ.get(name)
        if value is not None and (value or default is None):
            return value
        if default is not None:
            return default
        raise ConfigError(
            f"missing environment variable {name}: it is used in the config and has no default. "
            f"Set {name}, or write ${{{name}:-default}}",
            path=path,
            yaml_path=yaml_path or None,
        )

    return _VAR.sub(replace, text) if "${" in text else text


def load_config(source: str | PathLike[str] | Mapping[str, Any] | Config) -> Config:
    """Read (if a path) and interpolate a config (a :class:`Config` is already both).

    Raises:
        ConfigError: the file is missing, not YAML, not a mapping, or uses an unset variable.
    """
    if isinstance(source, Config):
        return source
    if isinstance(source, Mapping):
        return Config(interpolate(source), None)
    path = Path(source)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigNotFoundError("config not found: check the path", path=str(path)) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"cannot read config: {getattr(exc, 'strerror', None) or exc}", path=str(path)
        ) from exc
    try:
        docs = parse_yaml_text(text, str(path))
    except LoadError as exc:
        raise ConfigError(str(exc), path=None) from exc
    if len(docs) != 1 or not isinstance(docs[0], Mapping):
        raise ConfigError("invalid config: expected one YAML mapping at the top", path=str(path))
    return config_from_data(docs[0], path)


def config_from_data(data: Mapping[str, Any], path: Path) -> Config:
    """A :class:`Config` from a mapping already parsed out of ``path`` (interpolated here)."""
    return Config(interpolate(data, path=str(path)), path.resolve())


def build_loaders(config: Config) -> tuple[list[ToolLoader], list[str | None]]:
    """The loaders of ``tools.registry`` and, for each, its ``engine:`` name (or None)."""
    entries = config.tools_block().get("registry", [])
    if not isinstance(entries, list):
        raise ConfigError(
            "invalid tools.registry: expected a list of sources",
            path=config.label,
            yaml_path="tools.registry",
        )
    loaders: list[ToolLoader] = []
    engines: list[str | None] = []
    for index, entry in enumerate(entries):
        yaml_path = f"tools.registry[{index}]"
        loader = config.create(TOOL_LOADERS, entry, yaml_path, reserved=("type", "engine"))
        if getattr(loader, "source", None) == "inline":
            # Inline tools are named after their place in the config, not the word "inline".
            loader.source = f"{config.label or 'config'}:{yaml_path}"  # type: ignore[attr-defined]
        loaders.append(loader)
        engine = entry.get("engine")
        if engine is not None and not isinstance(engine, str):
            raise ConfigError(
                "invalid engine: expected an engine name",
                path=config.label,
                yaml_path=f"{yaml_path}.engine",
            )
        engines.append(engine)
    for name, entry in _mcp_servers(config):
        yaml_path = f"mcp_servers.{name}"
        loaders.append(config.create(TOOL_LOADERS, {"type": "mcp", "server": name, **entry}, yaml_path))
        engines.append(None)
    return loaders, engines


def _mcp_servers(config: Config) -> list[tuple[str, Mapping[str, Any]]]:
    """The top-level ``mcp_servers:`` block: server name -> ``command``/``args``/``env`` or ``url``."""
    block = config.data.get("mcp_servers")
    if block is None:
        return []
    if not isinstance(block, Mapping):
        raise ConfigError(
            "invalid mcp_servers: expected a mapping of server name -> {command, args, env} or {url}",
            path=config.label,
            yaml_path="mcp_servers",
        )
    servers = []
    for name, entry in block.items():
        if not isinstance(entry, Mapping) or "type" in entry or "server" in entry:
            raise ConfigError(
                "invalid MCP server entry: expected {command, args, env} or {url, headers}; the key "
                "names the server",
                path=config.label,
                yaml_path=f"mcp_servers.{name}",
            )
        servers.append((str(name), entry))
    return servers


def build_enrichments(config: Config) -> list[ToolEnrichment]:
    """The enrichments of ``tools.enrichments`` (``cache_dir`` is passed to those that take it)."""
    entries = config.tools_block().get("enrichments", []) or []
    if not isinstance(entries, list):
        raise ConfigError(
            "invalid tools.enrichments: expected a list",
            path=config.label,
            yaml_path="tools.enrichments",
        )
    cache_dir = config.cache_dir()
    enrichments = []
    for index, entry in enumerate(entries):
        if (
            isinstance(entry, Mapping)
            and "cache_dir" not in entry
            and _accepts(TOOL_ENRICHMENTS, entry.get("type"), "cache_dir")
        ):
            entry = {**entry, "cache_dir": cache_dir}
        yaml_path = f"tools.enrichments[{index}]"
        enrichments.append(config.create(TOOL_ENRICHMENTS, entry, yaml_path))
    return enrichments


def _accepts(registry: PluginRegistry[Any], name: Any, key: str) -> bool:
    try:
        cls = registry.get(name)
    except Exception:
        return False  # create() reports the unknown name with its YAML path
    return key in accepted_keys(cls)[0]
