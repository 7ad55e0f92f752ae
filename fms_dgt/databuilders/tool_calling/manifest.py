"""The run manifest: what made the records in an output folder, so a resume never mixes two runs.

``manifest.json`` is written when a run starts on an empty folder. It holds:

* ``config_hash``: a hash of the config as loaded (environment variables expanded), without the keys
  that do not change a record (``generation.count``: a resume may ask for more records;
  ``generation.output_dir``: the folder may have moved; ``run:``: concurrency and executor);
* ``seed``, ``format``, ``strict``, ``template_family``, ``layout``: the run's settings after
  command-line overrides;
* ``versions``: the versions of fms_dgt and Python that wrote the records;
* ``sources``: per namespace, the number of tools and a fingerprint of their schemas (for the
  dataset card and for reading later; sources may change during a run, so they are not compared).

``--resume`` with a different config hash, seed, format, strict mode, template family, layout or
fms_dgt version is an error that lists every difference.
"""

from __future__ import annotations

import hashlib
import json
import platform
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from fms_dgt import __version__

if TYPE_CHECKING:
    from fms_dgt.config import Config
    from fms_dgt.core.tools.registry import ToolRegistry
    from fms_dgt.databuilders.tool_calling.config import GenerationConfig

__all__ = ["COMPARED", "MANIFEST", "build_manifest", "config_hash", "differences"]

MANIFEST = "manifest.json"
#: The manifest entries a resume must match.
COMPARED = ("config_hash", "seed", "format", "strict", "template_family", "layout", "fms_dgt")
_IGNORED = ("count", "output_dir")


def config_hash(config: Config) -> str:
    """A hash of the config's content, without ``generation.count``, ``generation.output_dir`` and
    the ``run:`` block (concurrency and executor change how records are built, not which)."""
    data = {k: v for k, v in config.data.items() if k != "run"}  # how records are built, not which
    generation = data.get("generation")
    if isinstance(generation, Mapping):
        data["generation"] = {k: v for k, v in generation.items() if k not in _IGNORED}
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def build_manifest(config: Config, settings: GenerationConfig, registry: ToolRegistry) -> dict[str, Any]:
    """The manifest of a run of ``config`` with ``settings`` over ``registry``'s tools."""
    return {
        "config_hash": config_hash(config),
        "config": config.label,
        "seed": settings.seed,
        "format": settings.format,
        "strict": settings.strict,
        "template_family": settings.template_family,
        "layout": settings.layout,
        "versions": {"fms_dgt": __version__, "python": platform.python_version()},
        "sources": _sources(registry),
    }


def _sources(registry: ToolRegistry) -> list[dict[str, Any]]:
    by_namespace: dict[str, list[str]] = {}
    for tool in registry.tools():
        by_namespace.setdefault(tool.namespace, []).append(f"{tool.qualified_name}#{tool.fingerprint}")
    return [
        {
            "namespace": namespace,
            "tools": len(keys),
            "fingerprint": hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()[:16],
        }
        for namespace, keys in sorted(by_namespace.items())
    ]


def _compared(manifest: Mapping[str, Any]) -> dict[str, Any]:
    versions = manifest.get("versions") if isinstance(manifest.get("versions"), Mapping) else {}
    return {
        "config_hash": manifest.get("config_hash"),
        "seed": manifest.get("seed"),
        "format": manifest.get("format"),
        "strict": manifest.get("strict"),
        "template_family": manifest.get("template_family"),
        "layout": manifest.get("layout", "plain"),
        "fms_dgt": versions.get("fms_dgt") if versions else None,
    }


def differences(before: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """What differs between the folder's manifest and this run's, one line per entry."""
    old, new = _compared(before), _compared(now)
    lines = []
    for key in COMPARED:
        if old[key] != new[key]:
            what = "the config's content" if key == "config_hash" else key
            lines.append(f"{what}: {old[key]!r} in the folder, {new[key]!r} now")
    return lines
