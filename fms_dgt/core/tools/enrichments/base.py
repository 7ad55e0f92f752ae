"""The :class:`ToolEnrichment` contract and dependency ordering.

An enrichment computes something from the registry's tools (embeddings, a dataflow graph...) and
the registry stores the result under ``registry.artifacts[artifact_key]``. Enrichments declare the
artifact keys they read in ``depends_on``; :func:`order_enrichments` sorts them topologically and
rejects cycles and missing dependencies before anything runs. ``runs_after`` names artifact keys
that, *when configured*, must run first (``embeddings`` reads the output schemas that
``output_parameters`` fills, but works without it).

Enrichments that cache results use :func:`stable_hash` for keys (never ``hash()``, which changes with
``PYTHONHASHSEED``) and :func:`resolve_cache_dir` for the directory; the storage itself is in
:mod:`fms_dgt.core.tools.enrichments._cache`.
"""

from __future__ import annotations

import graphlib
import hashlib
import json
import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from fms_dgt.errors import EnrichmentError

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = ["ToolEnrichment", "order_enrichments", "resolve_cache_dir", "stable_hash"]


class ToolEnrichment(ABC):
    """Base class of enrichments.

    Class attributes:
        artifact_key: where the result is stored in ``registry.artifacts``.
        depends_on: artifact keys that must be computed first (an error when none produces them).
        runs_after: artifact keys that must be computed first when some enrichment produces them.
    """

    artifact_key: ClassVar[str] = ""
    depends_on: ClassVar[tuple[str, ...]] = ()
    runs_after: ClassVar[tuple[str, ...]] = ()
    plugin_name: ClassVar[str] = ""

    @property
    def name(self) -> str:
        """The registered name, or the class name."""
        return self.plugin_name or type(self).__name__

    @abstractmethod
    def enrich(self, registry: ToolRegistry) -> Any:
        """Compute the artifact from a registry that is not yet published.

        The registry passed in is the new index of a construction or ``refresh()``; earlier
        enrichments' artifacts are already in ``registry.artifacts``.
        """


def order_enrichments(enrichments: Sequence[ToolEnrichment]) -> list[ToolEnrichment]:
    """Return ``enrichments`` in dependency order.

    Raises:
        EnrichmentError: two enrichments write the same key, a dependency is produced by none of
            them, or the dependencies form a cycle.
    """
    producers: dict[str, ToolEnrichment] = {}
    for enrichment in enrichments:
        key = enrichment.artifact_key
        if key in producers:
            raise EnrichmentError(
                f"conflicting enrichments {producers[key].name!r} and {enrichment.name!r}: both "
                f"write artifact {key!r}. Keep one of them."
            )
        producers[key] = enrichment
    graph: dict[str, set[str]] = {}
    for enrichment in enrichments:
        missing = [d for d in enrichment.depends_on if d not in producers]
        if missing:
            raise EnrichmentError(
                f"missing dependency of enrichment {enrichment.name!r}: it needs artifact(s) "
                f"{', '.join(missing)} that no configured enrichment produces. Add the "
                "enrichment that writes them."
            )
        soft = {k for k in enrichment.runs_after if k in producers and k != enrichment.artifact_key}
        graph[enrichment.artifact_key] = set(enrichment.depends_on) | soft
    try:
        order = list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as exc:
        cycle = " -> ".join(producers[k].name for k in exc.args[1])
        raise EnrichmentError(f"cyclic enrichments: {cycle}. Remove one of the dependencies.") from exc
    return [producers[key] for key in order]


def stable_hash(value: Any, *, size: int = 32) -> str:
    """Hex digest of a JSON-serialisable value, the same in every process and on every machine.

    Args:
        value: anything ``json.dumps`` accepts (keys are sorted, so dict order does not matter).
        size: number of hex digits to keep (at most 64).
    """
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:size]


def resolve_cache_dir(cache_dir: str | PathLike[str] | None) -> Path | None:
    """The cache directory an enrichment should use: ``cache_dir``, else ``$DGT_CACHE_DIR``, else None.

    Configs always pass ``cache_dir`` (``tools.cache_dir``, ``$DGT_CACHE_DIR`` or ``.cache`` beside
    the config); enrichments built in code without one cache only when ``DGT_CACHE_DIR`` is set.
    """
    value = cache_dir if cache_dir is not None else os.environ.get("DGT_CACHE_DIR")
    return Path(value) if value else None
