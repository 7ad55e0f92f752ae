"""The :class:`ToolEnrichment` contract and dependency ordering.

An enrichment computes something from the registry's tools (embeddings, a dataflow graph...) and
the registry stores the result under ``registry.artifacts[artifact_key]``. Enrichments declare the
artifact keys they read in ``depends_on``; :func:`order_enrichments` sorts them topologically and
rejects cycles and missing dependencies before anything runs.
"""

from __future__ import annotations

import graphlib
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from fms_dgt.errors import EnrichmentError

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = ["ToolEnrichment", "order_enrichments"]


class ToolEnrichment(ABC):
    """Base class of enrichments.

    Class attributes:
        artifact_key: where the result is stored in ``registry.artifacts``.
        depends_on: artifact keys that must be computed first.
    """

    artifact_key: ClassVar[str] = ""
    depends_on: ClassVar[tuple[str, ...]] = ()
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
        graph[enrichment.artifact_key] = set(enrichment.depends_on)
    try:
        order = list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as exc:
        cycle = " -> ".join(producers[k].name for k in exc.args[1])
        raise EnrichmentError(f"cyclic enrichments: {cycle}. Remove one of the dependencies.") from exc
    return [producers[key] for key in order]
