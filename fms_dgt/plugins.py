"""One plug-in registry class for every plug-in kind, entry-point discovery, and the one factory.

Built-in plug-ins are found by convention, without a table to keep: the plug-in named ``file`` of
the loaders lives in ``fms_dgt.core.tools.loaders.file`` (a sampler ``tc/chain`` in
``...samplers.chain``), and is imported the first time it is asked for, so ``import fms_dgt``
imports neither ``mcp`` nor the OpenAPI libraries. :meth:`PluginRegistry.names` imports every public
module of the kind's package once, so a plug-in whose module is named otherwise is still listed.
Third-party packages add plug-ins through entry points (groups ``fms_dgt.tool_loaders``,
``fms_dgt.tool_enrichments``, ``fms_dgt.tool_samplers``, ``fms_dgt.tool_engines``,
``fms_dgt.wire_formats``); the distribution that provided each is remembered
(:meth:`PluginRegistry.origin`).

:meth:`PluginRegistry.create` is the one way a YAML mapping becomes a plug-in: it checks every key
against the plug-in's constructor (an unknown key is a :class:`~fms_dgt.errors.ConfigError` naming
its YAML path and a close match), resolves the plug-in's path keys against the config's folder, and
lets the plug-in's base class adapt the mapping (engines split off their call policy).

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
import inspect
import pkgutil
import threading
from collections.abc import Callable, Iterable, Mapping
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from fms_dgt.errors import ConfigError, PluginRegistrationError, UnknownPluginError

if TYPE_CHECKING:
    from fms_dgt.core.tools.engines.base import ToolEngine
    from fms_dgt.core.tools.enrichments.base import ToolEnrichment
    from fms_dgt.core.tools.loaders.base import ToolLoader
    from fms_dgt.core.tools.samplers.base import ToolSampler
    from fms_dgt.core.tools.wire.base import WireFormat

__all__ = [
    "TOOL_ENGINES",
    "TOOL_ENRICHMENTS",
    "TOOL_LOADERS",
    "TOOL_SAMPLERS",
    "WIRE_FORMATS",
    "PluginRegistry",
    "get_tool_engine_class",
    "get_tool_enrichment_class",
    "get_tool_loader_class",
    "get_tool_sampler_class",
    "register_tool_engine",
    "register_tool_enrichment",
    "register_tool_loader",
    "register_tool_sampler",
    "register_wire_format",
]

P = TypeVar("P")
C = TypeVar("C", bound=type)

EntryPointsFn = Callable[[str], Iterable[Any]]


def _module_exists(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ModuleNotFoundError, ValueError):
        return False


def _entry_points(group: str) -> Iterable[Any]:
    return importlib_metadata.entry_points(group=group)


class PluginRegistry(Generic[P]):
    """Name -> class table for one plug-in kind.

    Args:
        kind: human name used in messages (``tool loader``).
        group: entry-point group scanned for third-party plug-ins.
        base: ``"module:Class"`` that every plug-in must subclass, resolved lazily.
        package: the package holding the built-ins (one module per plug-in, named after it).
        prefix: the part of a built-in's name that its module name leaves out (``tc/``).
    """

    def __init__(self, kind: str, group: str, base: str, package: str | None = None, *, prefix: str = ""):
        self.kind = kind
        self.group = group
        self._base_path = base
        self.package = package
        self.prefix = prefix
        self._classes: dict[str, type[P]] = {}
        self._origins: dict[str, str] = {}
        self._discovered = False
        self._imported_all = False
        self._lock = threading.RLock()
        #: Replaceable for tests (fake entry points without installing packages).
        self.entry_points: EntryPointsFn = _entry_points

    def base(self) -> type[P]:
        """The class every plug-in of this kind must subclass."""
        module, _, attr = self._base_path.partition(":")
        cls: type[P] = getattr(importlib.import_module(module), attr)
        return cls

    # ------------------------------------------------------------------ registration

    def register(self, name: str, *, origin: str = "fms_dgt") -> Callable[[C], C]:
        """Decorator that registers a class under ``name``."""

        def decorator(cls: C) -> C:
            self.add(name, cls, origin=origin)
            return cls

        return decorator

    def add(self, name: str, cls: type, *, origin: str = "fms_dgt") -> None:
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

    # ------------------------------------------------------------------ look-up

    def get(self, name: str) -> type[P]:
        """Return the class registered under ``name``.

        Looks in this order: what is registered, the built-in module named after ``name``, every
        built-in module, the entry points.

        Raises:
            UnknownPluginError: nothing is registered under ``name``; the message lists the known
                names and a close match.
        """
        for step in (self._import_conventional, self._import_all, self.discover):
            cls = self._classes.get(name)
            if cls is not None:
                return cls
            step(name)
        cls = self._classes.get(name)
        if cls is None:
            known = self.names()
            close = difflib.get_close_matches(name, known, n=1)
            raise UnknownPluginError(self.kind, name, known, close[0] if close else None)
        return cls

    def _import_conventional(self, name: str) -> None:
        if self.package is None or not isinstance(name, str) or not name.startswith(self.prefix):
            return
        stem = name[len(self.prefix) :].replace("-", "_")
        if not stem.isidentifier() or stem.startswith("_"):
            return
        module = f"{self.package}.{stem}"
        if _module_exists(module):
            importlib.import_module(module)

    def _import_all(self, _name: str = "") -> None:
        """Import every public module of the built-in package once (each registers its plug-ins)."""
        with self._lock:
            if self._imported_all or self.package is None:
                return
            self._imported_all = True
            package = importlib.import_module(self.package)
            for info in pkgutil.iter_modules(getattr(package, "__path__", [])):
                if not info.name.startswith("_"):
                    importlib.import_module(f"{self.package}.{info.name}")

    def names(self) -> list[str]:
        """Every name that :meth:`get` accepts (built-ins, registered and discovered)."""
        self._import_all()
        self.discover()
        return sorted(self._classes)

    def origin(self, name: str) -> str:
        """The distribution (or ``fms_dgt``) that provided a plug-in."""
        self.get(name)
        return self._origins[name]

    def discover(self, _name: str = "", *, force: bool = False) -> None:
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

    # ------------------------------------------------------------------ the factory

    def create(
        self,
        name: Any,
        mapping: Mapping[str, Any] | None = None,
        *,
        yaml_path: str | None = None,
        source: str | None = None,
        base_dir: str | Path | None = None,
        **fixed: Any,
    ) -> P:
        """Build the plug-in ``name`` from the keys of its YAML entry.

        Args:
            name: the plug-in's registered name (the entry's ``type:``).
            mapping: the entry's other keys, the plug-in's settings.
            yaml_path: where the entry sits in the config (``tools.registry[0]``), for errors.
            source: the config file, for errors.
            base_dir: folder that the plug-in's ``path_keys`` resolve against.
            **fixed: arguments given in code rather than YAML (``registry=...``).

        Raises:
            ConfigError: the name is unknown, a key is not accepted or missing, or the plug-in
                refused a value; the message names the YAML path, never the values.
        """
        where = yaml_path or self.kind
        if not isinstance(name, str) or not name:
            raise ConfigError(
                f"missing type of {self.kind} entry: give `type:` one of {', '.join(self.names())}",
                path=source,
                yaml_path=where,
            )
        try:
            cls = self.get(name)
        except UnknownPluginError as exc:
            raise ConfigError(str(exc), path=source, yaml_path=f"{where}.type") from exc
        kwargs = dict(mapping or {})
        who = f"{self.kind} {name!r}"
        _check_unknown(cls, kwargs, fixed, who, where, source)
        for key in getattr(cls, "path_keys", ()):
            if base_dir is not None and isinstance(kwargs.get(key), str):
                kwargs[key] = _resolve(kwargs[key], Path(base_dir))
        return self._construct(cls, kwargs, fixed, name, where, source)

    def _construct(
        self,
        cls: type[P],
        kwargs: dict[str, Any],
        fixed: dict[str, Any],
        name: str,
        where: str,
        source: str | None,
    ) -> P:
        try:
            prepare = getattr(cls, "prepare_config", None)
            if callable(prepare):
                kwargs = prepare(kwargs)
            _check_missing(cls, kwargs, fixed, f"{self.kind} {name!r}", where, source)
            return cls(**fixed, **kwargs)
        except ConfigError as exc:
            if exc.yaml_path is not None:
                raise
            raise ConfigError(_bare(exc), path=source, yaml_path=where) from exc
        except TypeError as exc:
            raise ConfigError(f"invalid {self.kind} {name!r}: {exc}", path=source, yaml_path=where) from exc


def _bare(exc: ConfigError) -> str:
    """The message of a ConfigError without the location suffix it may already carry."""
    return exc.reason


def _resolve(value: str, base_dir: Path) -> str:
    if "://" in value or Path(value).is_absolute():
        return value
    return str(base_dir / value)


def accepted_keys(cls: type, fixed: Iterable[str] = ()) -> tuple[list[str], bool]:
    """The YAML keys ``cls`` accepts, and whether it takes any key (``**kwargs``)."""
    params = inspect.signature(cls.__init__).parameters  # type: ignore[misc]
    open_ended = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    skip = {"self", *fixed}
    keys = [
        n
        for n, p in params.items()
        if n not in skip
        and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    ]
    extra = [k for k in getattr(cls, "extra_config_keys", ()) if k not in keys]
    return keys + extra, open_ended


def _check_unknown(
    cls: type,
    kwargs: Mapping[str, Any],
    fixed: Mapping[str, Any],
    who: str,
    where: str,
    source: str | None,
) -> None:
    accepted, open_ended = accepted_keys(cls, fixed)
    hidden = set(getattr(cls, "internal_config_keys", ()))
    listed = [k for k in accepted if k not in hidden]
    for key in kwargs:
        if not open_ended and key not in accepted:
            close = difflib.get_close_matches(str(key), listed, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ConfigError(
                f"unknown key {key!r} for {who}: accepted keys are {', '.join(listed)}.{hint}",
                path=source,
                yaml_path=f"{where}.{key}",
            )


def _check_missing(
    cls: type,
    kwargs: Mapping[str, Any],
    fixed: Mapping[str, Any],
    who: str,
    where: str,
    source: str | None,
) -> None:
    params = inspect.signature(cls.__init__).parameters  # type: ignore[misc]
    for key, param in params.items():
        if (
            key not in ("self", *fixed, *kwargs)
            and param.default is inspect.Parameter.empty
            and param.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        ):
            raise ConfigError(f"missing key {key!r} for {who}: it is required", path=source, yaml_path=where)


_TOOLS = "fms_dgt.core.tools"

TOOL_LOADERS: PluginRegistry[ToolLoader] = PluginRegistry(
    "tool loader", "fms_dgt.tool_loaders", f"{_TOOLS}.loaders.base:ToolLoader", f"{_TOOLS}.loaders"
)
TOOL_ENRICHMENTS: PluginRegistry[ToolEnrichment] = PluginRegistry(
    "tool enrichment",
    "fms_dgt.tool_enrichments",
    f"{_TOOLS}.enrichments.base:ToolEnrichment",
    f"{_TOOLS}.enrichments",
)
TOOL_SAMPLERS: PluginRegistry[ToolSampler] = PluginRegistry(
    "tool sampler",
    "fms_dgt.tool_samplers",
    f"{_TOOLS}.samplers.base:ToolSampler",
    f"{_TOOLS}.samplers",
    prefix="tc/",
)
TOOL_ENGINES: PluginRegistry[ToolEngine] = PluginRegistry(
    "tool engine", "fms_dgt.tool_engines", f"{_TOOLS}.engines.base:ToolEngine", f"{_TOOLS}.engines"
)
WIRE_FORMATS: PluginRegistry[WireFormat] = PluginRegistry(
    "wire format", "fms_dgt.wire_formats", f"{_TOOLS}.wire.base:WireFormat", f"{_TOOLS}.wire"
)


def register_tool_loader(name: str) -> Callable[[C], C]:
    """Register a :class:`~fms_dgt.core.tools.loaders.base.ToolLoader` subclass."""
    return TOOL_LOADERS.register(name)


def register_tool_enrichment(name: str) -> Callable[[C], C]:
    """Register a :class:`~fms_dgt.core.tools.enrichments.base.ToolEnrichment` subclass."""
    return TOOL_ENRICHMENTS.register(name)


def register_tool_sampler(name: str) -> Callable[[C], C]:
    """Register a :class:`~fms_dgt.core.tools.samplers.base.ToolSampler` subclass."""
    return TOOL_SAMPLERS.register(name)


def register_tool_engine(name: str) -> Callable[[C], C]:
    """Register a :class:`~fms_dgt.core.tools.engines.base.ToolEngine` subclass."""
    return TOOL_ENGINES.register(name)


def register_wire_format(name: str) -> Callable[[C], C]:
    """Register a :class:`~fms_dgt.core.tools.wire.base.WireFormat` subclass."""
    return WIRE_FORMATS.register(name)


def get_tool_loader_class(name: str) -> type[ToolLoader]:
    """The loader class registered under ``name``."""
    return TOOL_LOADERS.get(name)


def get_tool_enrichment_class(name: str) -> type[ToolEnrichment]:
    """The enrichment class registered under ``name``."""
    return TOOL_ENRICHMENTS.get(name)


def get_tool_sampler_class(name: str) -> type[ToolSampler]:
    """The sampler class registered under ``name``."""
    return TOOL_SAMPLERS.get(name)


def get_tool_engine_class(name: str) -> type[ToolEngine]:
    """The engine class registered under ``name``."""
    return TOOL_ENGINES.get(name)
