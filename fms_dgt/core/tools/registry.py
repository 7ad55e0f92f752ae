"""The :class:`ToolRegistry`: every tool of a run under its qualified name.

The registry owns an immutable *index* (tools by qualified name and namespace, artifacts, engine
routes). Construction and :meth:`ToolRegistry.refresh` build a complete new index, run the
enrichments on it, and only then publish it with a single attribute assignment, so a reader on
another thread sees the old index or the new one, never a mix. Every public read takes the current
index once; :meth:`ToolRegistry.snapshot` pins one index for a sequence of reads.

This module imports no MCP, OpenAPI or HTTP library.
"""

from __future__ import annotations

import contextlib
import difflib
import gc
import hashlib
import io
import pickle
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from os import PathLike
from typing import TYPE_CHECKING, Any

from fms_dgt.core.tools.data_objects import Tool, ToolCall
from fms_dgt.core.tools.loaders.base import ToolLoader
from fms_dgt.core.tools.schema import get_validator
from fms_dgt.errors import (
    AmbiguousToolError,
    ConfigError,
    DGTError,
    DuplicateToolError,
    EnrichmentError,
    LoadError,
    NoMatchingOverloadError,
    RefreshError,
    ToolError,
    ToolNotFoundError,
)

if TYPE_CHECKING:
    from typing import Self

    from fms_dgt.config import Config
    from fms_dgt.core.tools.enrichments.base import ToolEnrichment

__all__ = ["RefreshReport", "ToolRegistry"]


@dataclass(frozen=True, slots=True)
class RefreshReport:
    """What a :meth:`ToolRegistry.refresh` changed.

    Attributes:
        added: qualified name -> fingerprints of names that are new.
        removed: qualified name -> fingerprints of names that are gone.
        changed: qualified name -> ``(before, after)`` fingerprints of names whose overloads,
            schemas, descriptions or metadata changed.
        unchanged: how many qualified names are identical before and after.
    """

    added: dict[str, tuple[str, ...]] = field(default_factory=dict)
    removed: dict[str, tuple[str, ...]] = field(default_factory=dict)
    changed: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)
    unchanged: int = 0

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def summary(self) -> str:
        """One line: counts of added, removed, changed and unchanged names."""
        return (
            f"{len(self.added)} added, {len(self.removed)} removed, {len(self.changed)} changed, "
            f"{self.unchanged} unchanged"
        )


class _Index:
    """One immutable generation of the registry's contents."""

    __slots__ = ("artifacts", "by_name", "by_namespace", "content_keys", "generation", "routes", "tools")

    def __init__(self, tools: Sequence[Tool], routes: Mapping[str, str]):
        by_name: dict[str, list[Tool]] = {}
        for tool in tools:
            qname = tool.qualified_name
            group = by_name.get(qname)
            if group is None:
                by_name[qname] = [tool]
            else:
                group.append(tool)
        # Fingerprints are only needed where a name repeats; elsewhere they stay lazy (memoised
        # on the tool when first asked for), which keeps loading large pools linear and cheap.
        for qname, group in by_name.items():
            if len(group) > 1:
                _check_overloads(qname, group)
        by_namespace: dict[str, list[Tool]] = {}
        for tool in tools:
            by_namespace.setdefault(tool.namespace, []).append(tool)
        self.tools: tuple[Tool, ...] = tuple(tools)
        self.by_name = {k: tuple(v) for k, v in by_name.items()}
        self.by_namespace = {k: tuple(v) for k, v in by_namespace.items()}
        self.routes = dict(routes)
        self.artifacts: dict[str, Any] = {}
        self.generation = 0
        self.content_keys: dict[str, str | None] | None = None


def _namespace_key(tools: Sequence[Tool]) -> str | None:
    """A digest of every tool's name, description and schemas, in order (None: not serialisable).

    The tools are pickled without the pickler's memo, so the bytes depend only on the content (not
    on which objects are shared or how many references they have): the same tools give the same
    key in every process, and any change gives another key.
    """
    rows = [(t.namespace, t.name, t.description, t.parameters, t.output_parameters) for t in tools]
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=5)
    pickler.fast = True  # no memo: content only (schemas are trees, never cyclic)
    try:
        pickler.dump(rows)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return None  # a schema holds a value that cannot be written (a custom object)
    digest = hashlib.sha256(_KEY_SALT)  # SHA-256 runs in hardware on current CPUs: 3x blake2b here
    digest.update(buffer.getbuffer())
    return digest.hexdigest()[:32]


_KEY_SALT = b"fms-dgt namespace key v1\n"


def _check_overloads(qname: str, group: Sequence[Tool]) -> None:
    seen: dict[str, Tool] = {}
    for tool in group:
        first = seen.setdefault(tool.fingerprint, tool)
        if first is not tool:
            raise DuplicateToolError(qname, _origin(first), _origin(tool))


def _origin(tool: Tool) -> str:
    return str(tool.metadata.get("source", "an unnamed source"))


class ToolRegistry:
    """All tools of a run, by qualified name (``namespace::name``).

    Args:
        tools: tools given directly (kept across refreshes).
        loaders: sources loaded now and again on every :meth:`refresh`.
        enrichments: run in dependency order after every load, before publishing.
        engines: per loader (same order as ``loaders``), the engine name its namespaces route to,
            or None.

    Raises:
        DuplicateToolError: two tools share namespace, name and input-schema fingerprint.
        LoadError: a loader failed.
        EnrichmentError: the enrichment graph is invalid or an enrichment failed.
    """

    def __init__(
        self,
        tools: Iterable[Tool] = (),
        *,
        loaders: Sequence[ToolLoader] = (),
        enrichments: Sequence[ToolEnrichment] = (),
        engines: Sequence[str | None] | None = None,
    ) -> None:
        self._static = tuple(tools)
        for tool in self._static:
            if not isinstance(tool, Tool):
                raise ToolError(f"invalid registry entry {tool!r}: expected a Tool instance.")
        self._loaders = list(loaders)
        self._loader_engines = list(engines) if engines is not None else [None] * len(loaders)
        self._enrichments = _ordered(enrichments)
        self._refresh_lock = threading.Lock()
        self._staged = False
        with _paused_gc():
            self._index = self._build(self._load_all())
        for loader in self._loaders:
            loader.bind_registry(self)

    # ------------------------------------------------------------------ construction paths

    @classmethod
    def from_file(cls, path: str | PathLike[str], namespace: str | None = None) -> ToolRegistry:
        """A registry of the tools in one file (see :class:`FileToolLoader` for the shapes)."""
        from fms_dgt.core.tools.loaders.file import FileToolLoader

        return cls(loaders=[FileToolLoader(path, namespace=namespace)])

    @classmethod
    def from_loaders(
        cls,
        loaders: Sequence[ToolLoader],
        enrichments: Sequence[ToolEnrichment] = (),
        engines: Sequence[str | None] | None = None,
    ) -> ToolRegistry:
        """A registry over several loaders, loaded concurrently."""
        return cls(loaders=loaders, enrichments=enrichments, engines=engines)

    @classmethod
    def from_config(cls, config: str | PathLike[str] | Mapping[str, Any] | Config) -> ToolRegistry:
        """A registry from a YAML config file (or a parsed mapping, or a :class:`Config`).

        The config's ``tools.registry`` entries become loaders (each routed to its ``engine:``),
        its ``tools.enrichments`` run in dependency order.
        """
        from fms_dgt.config import Config, build_enrichments, build_loaders, load_config

        parsed = config if isinstance(config, Config) else load_config(config)
        loaders, engines = build_loaders(parsed)
        return cls(loaders=loaders, enrichments=build_enrichments(parsed), engines=engines)

    @classmethod
    def _from_index(cls, index: _Index, *, staged: bool) -> ToolRegistry:
        registry = cls.__new__(cls)
        registry._static = ()
        registry._loaders = []
        registry._loader_engines = []
        registry._enrichments = []
        registry._refresh_lock = threading.Lock()
        registry._staged = staged
        registry._index = index
        return registry

    # ------------------------------------------------------------------ building

    def _load_all(self) -> list[list[Tool]]:
        """One batch of tools per loader, loaded concurrently when there are several."""
        if not self._loaders:
            return []
        if len(self._loaders) == 1:
            batches = [self._loaders[0].load()]
        else:
            with ThreadPoolExecutor(max_workers=min(16, len(self._loaders))) as pool:
                futures = [pool.submit(loader.load) for loader in self._loaders]
                batches = [_result(f, loader) for f, loader in zip(futures, self._loaders, strict=True)]
        return batches

    def _routes(self, batches: Sequence[Sequence[Tool]]) -> dict[str, str]:
        # Routes follow the namespaces a source actually produced, not its nominal namespace.
        routes: dict[str, str] = {}
        for batch, engine in zip(batches, self._loader_engines, strict=True):
            if engine is None:
                continue
            for namespace in dict.fromkeys(t.namespace for t in batch):
                previous = routes.setdefault(namespace, engine)
                if previous != engine:
                    raise ConfigError(
                        f"conflicting engines for namespace {namespace!r}: {previous!r} and "
                        f"{engine!r}. Give the sources different namespaces or the same engine."
                    )
        return routes

    def _build(self, batches: Sequence[Sequence[Tool]]) -> _Index:
        tools = list(self._static)
        for batch in batches:
            tools.extend(batch)
        index = _Index(tools, self._routes(batches))
        if self._enrichments:
            staged = ToolRegistry._from_index(index, staged=True)
            for enrichment in self._enrichments:
                index.artifacts[enrichment.artifact_key] = _run(enrichment, staged)
            index = staged._index
        return index

    # ------------------------------------------------------------------ refresh

    def refresh(self) -> RefreshReport:
        """Reload every source, re-run the enrichments, and swap the new contents in atomically.

        Returns:
            What changed, by qualified name.

        Raises:
            RefreshError: loading, validation or an enrichment failed; the registry keeps its
                previous tools and artifacts.
        """
        with self._refresh_lock:
            old = self._index
            # Clear the flags first: a change announced while this refresh loads stays flagged.
            stale = [loader.stale for loader in self._loaders]
            for loader in self._loaders:
                loader.stale = False
            try:
                with _paused_gc():
                    new = self._build(self._load_all())
            except Exception as exc:
                for loader, flag in zip(self._loaders, stale, strict=True):
                    loader.stale = loader.stale or flag
                raise RefreshError(
                    f"refresh failed: {exc}. The registry keeps its previous {len(old.tools)} "
                    "tools and artifacts; fix the source and call refresh() again."
                ) from exc
            new.generation = old.generation + 1
            self._index = new
        return _diff(old, new)

    async def refresh_async(self) -> RefreshReport:
        """Async form of :meth:`refresh` (runs it in a worker thread)."""
        import asyncio

        return await asyncio.to_thread(self.refresh)

    @property
    def stale(self) -> bool:
        """True when a source said its tools changed since the last load (e.g. MCP list_changed)."""
        return any(loader.stale for loader in self._loaders)

    # ------------------------------------------------------------------ look-ups

    def snapshot(self) -> ToolRegistry:
        """A read-only registry pinned to the current contents (unaffected by later refreshes)."""
        return ToolRegistry._from_index(self._index, staged=False)

    @property
    def generation(self) -> int:
        """How many refreshes produced the current contents (0 after construction).

        A snapshot keeps the generation it pinned, so comparing the two tells whether state
        derived from a snapshot (a sampler's indexes) is out of date.
        """
        return self._index.generation

    @property
    def artifacts(self) -> dict[str, Any]:
        """Side-channel results of enrichments, by artifact key."""
        return self._index.artifacts

    def distinct_names(self) -> int:
        """The number of distinct qualified names (less than ``len(self)`` when there are overloads)."""
        return len(self._index.by_name)

    def namespace_keys(self) -> dict[str, str | None]:
        """A content key per namespace, computed once per generation.

        Equal keys mean the namespace holds the same tools (names, descriptions, schemas) in the
        same order, so caches may reuse what they derived from it and skip its per-tool work. A
        key is None when a schema holds a value that cannot be serialised; nothing is reused then.
        """
        index = self._index
        keys = index.content_keys
        if keys is None:
            keys = {ns: _namespace_key(group) for ns, group in index.by_namespace.items()}
            index.content_keys = keys
        return keys

    @property
    def loaders(self) -> list[ToolLoader]:
        """The registry's loaders (their ``report`` says what each load skipped or folded)."""
        return list(self._loaders)

    @property
    def engine_routes(self) -> dict[str, str]:
        """Namespace -> engine name, from the ``engine:`` keys of the config's sources."""
        return dict(self._index.routes)

    def get(self, qualified_name: str) -> Tool:
        """The tool named ``qualified_name``.

        Raises:
            ToolNotFoundError: no such tool (with a close match when there is one).
            AmbiguousToolError: the name has several overloads.
        """
        candidates = self._candidates(self._index, qualified_name)
        if len(candidates) > 1:
            raise AmbiguousToolError(qualified_name, [t.fingerprint for t in candidates])
        return candidates[0]

    def overloads(self, qualified_name: str) -> list[Tool]:
        """Every tool under ``qualified_name`` (one unless overloaded), in load order."""
        return list(self._candidates(self._index, qualified_name))

    def match(self, tool_call: ToolCall) -> Tool:
        """The overload of ``tool_call.name`` whose input schema accepts the call's arguments.

        When several accept them, the one declaring the most of the given argument names wins,
        then the first loaded.

        Raises:
            ToolNotFoundError: no tool has that name.
            NoMatchingOverloadError: no overload validates; the error explains each rejection.
        """
        candidates = self._candidates(self._index, tool_call.name)
        arguments = tool_call.arguments
        valid = [t for t in candidates if get_validator(t.parameters, t.fingerprint).is_valid(arguments)]
        if len(valid) == 1:
            return valid[0]
        if valid:
            return max(valid, key=lambda t: _declared(t, arguments))
        reasons = {
            t.fingerprint: get_validator(t.parameters, t.fingerprint).explain(arguments) or "rejected"
            for t in candidates
        }
        raise NoMatchingOverloadError(tool_call.name, reasons)

    def _candidates(self, index: _Index, qualified_name: str) -> tuple[Tool, ...]:
        candidates = index.by_name.get(qualified_name)
        if candidates is None:
            close = difflib.get_close_matches(qualified_name, list(index.by_name), n=1)
            raise ToolNotFoundError(qualified_name, close[0] if close else None)
        return candidates

    def namespaces(self) -> list[str]:
        """Namespaces in load order."""
        return list(self._index.by_namespace)

    def tools(self, namespace: str | None = None) -> list[Tool]:
        """All tools, or those of one namespace, in load order."""
        index = self._index
        if namespace is None:
            return list(index.tools)
        return list(index.by_namespace.get(namespace, ()))

    def __len__(self) -> int:
        return len(self._index.tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._index.tools)

    def __contains__(self, item: object) -> bool:
        index = self._index
        if isinstance(item, Tool):
            return any(t == item for t in index.by_name.get(item.qualified_name, ()))
        return isinstance(item, str) and item in index.by_name

    def __repr__(self) -> str:
        index = self._index
        return f"ToolRegistry({len(index.tools)} tools in {len(index.by_namespace)} namespaces)"

    # ------------------------------------------------------------------ staging (enrichments)

    def update_tools(self, tools: Iterable[Tool]) -> None:
        """Replace tools by ``(qualified name, fingerprint)`` while enrichments run.

        Only allowed on the staged registry an enrichment receives (e.g. to fill
        ``output_parameters``); a published registry is immutable.
        """
        if not self._staged:
            raise ToolError(
                "cannot update tools of a published registry: tools change only through "
                "loaders and refresh(). Enrichments may call update_tools on the registry they get."
            )
        replacements = {(t.qualified_name, t.fingerprint): t for t in tools}
        old = self._index
        merged = [replacements.pop((t.qualified_name, t.fingerprint), t) for t in old.tools]
        if replacements:
            unknown = ", ".join(sorted(q for q, _ in replacements))
            raise ToolError(f"cannot update unknown tools {unknown}: update_tools only replaces.")
        index = _Index(merged, old.routes)
        index.artifacts = old.artifacts
        index.generation = old.generation
        self._index = index

    # ------------------------------------------------------------------ lifetime

    def close(self) -> None:
        """Close every loader (connections, sessions). Idempotent."""
        for loader in self._loaders:
            loader.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextlib.contextmanager
def _paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while a registry is built.

    Loading creates hundreds of thousands of small containers and no cycles; each automatic
    collection would rescan all of them, which made loading 100,000 tools about three times slower.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _result(future: Any, loader: ToolLoader) -> list[Tool]:
    try:
        return list(future.result())
    except DGTError:
        raise
    except Exception as exc:
        raise LoadError(f"loader {loader.describe()} failed: {exc}") from exc


def _ordered(enrichments: Sequence[ToolEnrichment]) -> list[ToolEnrichment]:
    """``enrichments`` in dependency order (``enrichments.base.order_enrichments``).

    The enrichments package is imported only when there are enrichments: importing the registry,
    which every sampler does through ``fms_dgt.core.tools``, then loads no enrichment module.
    """
    if not enrichments:
        return []
    from fms_dgt.core.tools.enrichments.base import order_enrichments

    return order_enrichments(enrichments)


def _run(enrichment: ToolEnrichment, staged: ToolRegistry) -> Any:
    try:
        return enrichment.enrich(staged)
    except DGTError:
        raise
    except Exception as exc:
        raise EnrichmentError(f"enrichment {enrichment.name!r} failed: {exc!r}") from exc


def _declared(tool: Tool, arguments: Mapping[str, Any]) -> int:
    props = tool.parameters.get("properties", {})
    return sum(1 for name in arguments if name in props)


def _diff(old: _Index, new: _Index) -> RefreshReport:
    added: dict[str, tuple[str, ...]] = {}
    changed: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    unchanged = 0
    for qname, tools in new.by_name.items():
        after = tuple(t.fingerprint for t in tools)
        before_tools = old.by_name.get(qname)
        if before_tools is None:
            added[qname] = after
        elif before_tools != tools:
            changed[qname] = (tuple(t.fingerprint for t in before_tools), after)
        else:
            unchanged += 1
    removed = {q: tuple(t.fingerprint for t in ts) for q, ts in old.by_name.items() if q not in new.by_name}
    return RefreshReport(added=added, removed=removed, changed=changed, unchanged=unchanged)
