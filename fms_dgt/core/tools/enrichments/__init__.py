"""Enrichments: compute artifacts from the registry's tools, for samplers to read.

The public names of the sub-modules are exported here and loaded on first use, so importing
:mod:`fms_dgt.core.tools.enrichments.base` (as the registry and third-party enrichments do) does
not import numpy or the built-in enrichments. The artifacts they produce are in
:mod:`fms_dgt.core.tools.artifacts`.

Modules: ``base`` (the contract and ordering), ``embeddings``, ``neighbors``, ``dataflow``,
``output_parameters`` (the plug-ins), and private helpers shared by the plug-ins: ``_vectors``
(text encoders, normalising, rounding), ``_cache`` (on-disk caches and memos), ``_ordering``
(sorting of scored pairs) and ``_dataflow_*`` (the parts of the dataflow enrichment).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fms_dgt.core.tools.enrichments._vectors import (
        CombinedEncoder,
        HashedEncoder,
        OpenAIEncoder,
        SentenceTransformerEncoder,
        TextEncoder,
        WordLlamaEncoder,
        l2_normalise,
        make_encoder,
        quantise,
    )
    from fms_dgt.core.tools.enrichments.base import (
        ToolEnrichment,
        order_enrichments,
        resolve_cache_dir,
        stable_hash,
    )
    from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment, type_compatibility, type_key
    from fms_dgt.core.tools.enrichments.embeddings import EmbeddingsEnrichment, tool_text
    from fms_dgt.core.tools.enrichments.neighbors import NeighborsEnrichment
    from fms_dgt.core.tools.enrichments.output_parameters import (
        OutputParametersEnrichment,
        OutputParametersReport,
        infer_schema,
        synthesise_arguments,
    )

_MODULES = {
    "base": ("ToolEnrichment", "order_enrichments", "resolve_cache_dir", "stable_hash"),
    "_vectors": (
        "CombinedEncoder",
        "HashedEncoder",
        "OpenAIEncoder",
        "SentenceTransformerEncoder",
        "TextEncoder",
        "WordLlamaEncoder",
        "l2_normalise",
        "make_encoder",
        "quantise",
    ),
    "embeddings": ("EmbeddingsEnrichment", "tool_text"),
    "neighbors": ("NeighborsEnrichment",),
    "dataflow": ("DataflowEnrichment", "type_compatibility", "type_key"),
    "output_parameters": (
        "OutputParametersEnrichment",
        "OutputParametersReport",
        "infer_schema",
        "synthesise_arguments",
    ),
}
_HOME = {name: module for module, names in _MODULES.items() for name in names}

__all__ = [
    "CombinedEncoder",
    "DataflowEnrichment",
    "EmbeddingsEnrichment",
    "HashedEncoder",
    "NeighborsEnrichment",
    "OpenAIEncoder",
    "OutputParametersEnrichment",
    "OutputParametersReport",
    "SentenceTransformerEncoder",
    "TextEncoder",
    "ToolEnrichment",
    "WordLlamaEncoder",
    "infer_schema",
    "l2_normalise",
    "make_encoder",
    "order_enrichments",
    "quantise",
    "resolve_cache_dir",
    "stable_hash",
    "synthesise_arguments",
    "tool_text",
    "type_compatibility",
    "type_key",
]


def __getattr__(name: str) -> Any:
    """Load a public name from its module on first use (PEP 562)."""
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
