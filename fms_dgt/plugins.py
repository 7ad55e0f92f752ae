"""One plug-in registry class for every plug-in kind, plus entry-point discovery.

Built-in plug-ins are named in a table of modules and imported on first use, so ``import fms_dgt``
imports neither ``mcp`` nor the OpenAPI libraries. Third-party packages add plug-ins through entry
points in the groups ``fms_dgt.tool_loaders``, ``fms_dgt.tool_enrichments``, ``fms_dgt.tool_samplers``
and ``fms_dgt.tool_engines``; each entry point names a class, and the distribution that provided it is
remembered (:meth:`PluginRegistry.origin`).

Example::

    from fms_dgt.plugins import register_tool_loader
    from fms_dgt.core.tools.loaders.base import ToolLoader

    @register_tool_loader("my_source")
    class MySourceLoader(ToolLoader):
        ...
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
import importlib.util
import threading
from collections.abc import Callable, Iterable
from importlib import metadata as importlib_metadata
from typing import Any, Generic, TypeVar

from fms_dgt.errors import PluginRegistrationError, UnknownPluginError

__all__ = [
    "TOOL_ENGINES",
    "TOOL_ENRICHMENTS",
    "TOOL_LOADERS",
    "TOOL_SAMPLERS",
    "PluginRegistry",
    "get_tool_engine_class",
    "get_tool_enrichment_class",
    "get_tool_loader_class",
    "get_tool_sampler_class",
    "register_tool_engine",
    "register_tool_enrichment",
    "register_tool_loader",
    "register_tool_sampler",
]

T = TypeVar("T", bound=type)

EntryPointsFn = Callable[[str], Iterable[Any]]


def _module_exists(module: str) -> bool:
    # Built-ins are listed by module so they import lazily; a module that is not part of this
    # installation is simply not offered.
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _entry_points(group: str) -> Iterable[Any]:
    return importlib_metadata.entry_points(group=group)


class PluginRegistry(Generic[T]):
    """Name -> class table for one plug-in kind.

    Args:
        kind: human name used in messages (``tool loader``).
        group: entry-point group scanned for third-party plug-ins.
        base: ``"module:Class"`` that every plug-in must subclass, resolved lazily.
        builtins: name -> module that registers it when imported.
    """

    def __init__(self, kind: str, group: str, base: str, builtins: dict[str, str]):
        self.kind = kind
        self.group = group
        self._base_path = base
        self._builtins = {n: m for n, m in builtins.items() if _module_exists(m)}
        self._classes: dict[str, T] = {}
        self._origins: dict[str, str] = {}
        self._discovered = False
        self._lock = threading.RLock()
        #: Replaceable for tests (fake entry points without installing packages).
        self.entry_points: EntryPointsFn = _entry_points

    def base(self) -> type:
        """The class every plug-in of this kind must subclass."""
        module, _, attr = self._base_path.partition(":")
        return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]

    def register(self, name: str, *, origin: str = "fms_dgt") -> Callable[[T], T]:
        """Decorator that registers a class under ``name``."""

        def decorator(cls: T) -> T:
            self.add(name, cls, origin=origin)
            return cls

        return decorator

    def add(self, name: str, cls: T, *, origin: str = "fms_dgt") -> None:
        """Register ``cls`` under ``name``.

        Raises:
            PluginRegistrationError: the name is taken by another class, or ``cls`` is not a
                subclass of the kind's base class.
        """
        if not isinstance(name, str) or not name:
            raise PluginRegistrationError(f"invalid {self.kind} name {name!r}: use a non-empty string.")
        base = self.base()
        if not (isinstance(cls, type) and issubclass(cls, base)):
            raise PluginRegistrationError(
                f"cannot register {self.kind} {name!r}: {cls!r} is not a subclass of "
                f"{base.__module__}.{base.__qualname__}. Derive the plug-in from that class."
            )
        with self._lock:
            existing = self._classes.get(name)
            if existing is not None and existing is not cls:
                raise PluginRegistrationError(
                    f"duplicate {self.kind} {name!r}: already registered by "
                    f"{existing.__module__}.{existing.__qualname__} (from {self._origins[name]}). "
                    "Choose another name."
                )
            self._classes[name] = cls
            self._origins[name] = origin
        # Slotted or frozen classes keep their own attribute.
        with contextlib.suppress(AttributeError, TypeError):
            cls.plugin_name = name  # type: ignore[attr-defined]

    def remove(self, name: str) -> None:
        """Forget a registration (for tests)."""
        with self._lock:
            self._classes.pop(name, None)
            self._origins.pop(name, None)

    def get(self, name: str) -> T:
        """Return the class registered under ``name``.

        Raises:
            UnknownPluginError: nothing is registered under ``name``; the message lists the known
                names and a close match.
        """
        cls = self._classes.get(name)
        if cls is not None:
            return cls
        if name in self._builtins:
            importlib.import_module(self._builtins[name])
        else:
            self.discover()
        cls = self._classes.get(name)
        if cls is None:
            known = self.names()
            close = difflib.get_close_matches(name, known, n=1)
            raise UnknownPluginError(self.kind, name, known, close[0] if close else None)
        return cls

    def names(self) -> list[str]:
        """Every name that :meth:`get` accepts (built-ins, registered and discovered)."""
        self.discover()
        return sorted(set(self._classes) | set(self._builtins))

    def origin(self, name: str) -> str:
        """The distribution (or ``fms_dgt``) that provided a plug-in."""
        self.get(name)
        return self._origins[name]

    def discover(self, *, force: bool = False) -> None:
        """Load entry points of :attr:`group` once (again when ``force``)."""
        with self._lock:
            if self._discovered and not force:
                return
            self._discovered = True
            for entry in self.entry_points(self.group):
                self._load_entry_point(entry)

    def _load_entry_point(self, entry: Any) -> None:
        dist = getattr(entry, "dist", None)
        origin = getattr(dist, "name", None) or "unknown distribution"
        try:
            cls = entry.load()
        except Exception as exc:
            raise PluginRegistrationError(
                f"cannot load {self.kind} {entry.name!r} from entry point {entry.value!r} "
                f"(distribution {origin}): {exc}. Fix or uninstall that package."
            ) from exc
        if self._classes.get(entry.name) is not cls:
            self.add(entry.name, cls, origin=origin)


_LOADERS = "fms_dgt.core.tools.loaders"
_ENRICH = "fms_dgt.core.tools.enrichments"
_SAMPLERS = "fms_dgt.core.tools.samplers"
_ENGINES = "fms_dgt.core.tools.engines"

TOOL_LOADERS: PluginRegistry[type] = PluginRegistry(
    "tool loader",
    "fms_dgt.tool_loaders",
    f"{_LOADERS}.base:ToolLoader",
    {
        "file": f"{_LOADERS}.file",
        "inline": f"{_LOADERS}.inline",
        "mcp": f"{_LOADERS}.mcp",
        "rest": f"{_LOADERS}.rest",
        "function": f"{_ENGINES}.function",
    },
)
TOOL_ENRICHMENTS: PluginRegistry[type] = PluginRegistry(
    "tool enrichment",
    "fms_dgt.tool_enrichments",
    f"{_ENRICH}.base:ToolEnrichment",
    {name: f"{_ENRICH}.{name}" for name in ("embeddings", "dataflow", "neighbors", "output_parameters")},
)
TOOL_SAMPLERS: PluginRegistry[type] = PluginRegistry(
    "tool sampler",
    "fms_dgt.tool_samplers",
    f"{_SAMPLERS}.base:ToolSampler",
    {
        f"tc/{name}": f"{_SAMPLERS}.{name}"
        for name in ("random", "chain", "fan_out", "fan_in", "dag", "neighbor")
    },
)
TOOL_ENGINES: PluginRegistry[type] = PluginRegistry(
    "tool engine",
    "fms_dgt.tool_engines",
    f"{_ENGINES}.base:ToolEngine",
    {name: f"{_ENGINES}.{name}" for name in ("mock", "function", "mcp", "rest", "lm", "multi")},
)


def register_tool_loader(name: str) -> Callable[[T], T]:
    """Register a :class:`~fms_dgt.core.tools.loaders.base.ToolLoader` subclass."""
    return TOOL_LOADERS.register(name)  # type: ignore[return-value]


def register_tool_enrichment(name: str) -> Callable[[T], T]:
    """Register a :class:`~fms_dgt.core.tools.enrichments.base.ToolEnrichment` subclass."""
    return TOOL_ENRICHMENTS.register(name)  # type: ignore[return-value]


def register_tool_sampler(name: str) -> Callable[[T], T]:
    """Register a :class:`~fms_dgt.core.tools.samplers.base.ToolSampler` subclass."""
    return TOOL_SAMPLERS.register(name)  # type: ignore[return-value]


def register_tool_engine(name: str) -> Callable[[T], T]:
    """Register a :class:`~fms_dgt.core.tools.engines.base.ToolEngine` subclass."""
    return TOOL_ENGINES.register(name)  # type: ignore[return-value]


def get_tool_loader_class(name: str) -> type:
    """The loader class registered under ``name``."""
    return TOOL_LOADERS.get(name)


def get_tool_enrichment_class(name: str) -> type:
    """The enrichment class registered under ``name``."""
    return TOOL_ENRICHMENTS.get(name)


def get_tool_sampler_class(name: str) -> type:
    """The sampler class registered under ``name``."""
    return TOOL_SAMPLERS.get(name)


def get_tool_engine_class(name: str) -> type:
    """The engine class registered under ``name``."""
    return TOOL_ENGINES.get(name)
