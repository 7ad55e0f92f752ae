"""The ``embeddings`` enrichment: one L2-normalised vector per tool, in ``artifacts["embeddings"]``.

A tool's text is its name, description, parameter names and descriptions, and output parameter
names and descriptions (:func:`tool_text`). Three encoders (in :mod:`._vectors`):

* ``hashed`` (default): signed feature hashing of words (camelCase and snake_case split) and
  character n-grams, computed with vectorised numpy integer arithmetic. No download, no GPU, the
  same vectors on every machine.
* ``sentence-transformers``: any model of that library (``pip install 'fms_dgt[embeddings]'``).
* ``openai``: an OpenAI-compatible ``POST {base_url}/embeddings`` endpoint.

Vectors are cached by the hash of exactly the text the encoder sees plus the encoder's settings, so
a restart or a second task reuses them and adding tools encodes only the new ones. The artifact
type, :class:`~fms_dgt.core.tools.artifacts.ToolEmbeddings`, is in :mod:`fms_dgt.core.tools.artifacts`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from os import PathLike
from typing import TYPE_CHECKING, Any

import numpy as np

from fms_dgt.core.tools.artifacts import ToolEmbeddings, row_index
from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.enrichments._cache import (
    MemoStore,
    VectorStore,
    group_slice,
    memo_index,
    per_tool_shard,
    pool_groups,
)
from fms_dgt.core.tools.enrichments._vectors import (
    HashedEncoder,
    OpenAIEncoder,
    SentenceTransformerEncoder,
    TextEncoder,
    l2_normalise,
    make_encoder,
    quantise,
)
from fms_dgt.core.tools.enrichments.base import ToolEnrichment, resolve_cache_dir, stable_hash
from fms_dgt.errors import EnrichmentError
from fms_dgt.plugins import register_tool_enrichment

if TYPE_CHECKING:
    from fms_dgt.core.tools.enrichments._vectors import FloatMatrix
    from fms_dgt.core.tools.registry import ToolRegistry

# The encoders, ToolEmbeddings and the vector helpers moved out of this module; they are still
# exported here so code written against the earlier layout keeps working.
__all__ = [
    "EmbeddingsEnrichment",
    "HashedEncoder",
    "OpenAIEncoder",
    "SentenceTransformerEncoder",
    "TextEncoder",
    "ToolEmbeddings",
    "l2_normalise",
    "make_encoder",
    "quantise",
    "row_index",
    "tool_text",
]


def _describe_props(schema: Mapping[str, Any]) -> str:
    props = schema.get("properties")
    if not isinstance(props, dict):
        return str(schema.get("description", "")) if schema else ""
    parts = []
    for name, sub in props.items():
        desc = sub.get("description", "") if isinstance(sub, dict) else ""
        parts.append(f"{name} {desc}".strip())
    return "; ".join(parts)


def tool_text(tool: Tool) -> str:
    """The text embedded for a tool: name, description, parameters and outputs."""
    return "\n".join(
        (
            tool.name,
            tool.description,
            _describe_props(tool.parameters),
            _describe_props(tool.output_parameters),
        )
    )


def _text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@register_tool_enrichment("embeddings")
class EmbeddingsEnrichment(ToolEnrichment):
    """Compute a vector per tool.

    Args:
        encoder: ``hashed`` (default), ``sentence-transformers``, ``openai``, or a
            :class:`TextEncoder` instance (in code).
        dim: vector size of the hashed encoder.
        model: model name for ``sentence-transformers`` / ``openai``.
        base_url: API root for ``openai``.
        api_key_env: environment variable with the API key for ``openai``.
        batch_size: texts per request / forward pass.
        cache_dir: cache directory (the config passes ``tools.cache_dir``); None disables caching
            unless ``$DGT_CACHE_DIR`` is set.
        force: recompute every vector and overwrite the cache.
    """

    artifact_key = "embeddings"
    runs_after = ("output_parameters",)

    def __init__(
        self,
        *,
        encoder: str | TextEncoder | None = None,
        dim: int = 256,
        model: str | None = None,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        batch_size: int = 64,
        cache_dir: str | PathLike[str] | None = None,
        force: bool = False,
    ) -> None:
        if isinstance(encoder, TextEncoder):
            self.encoder = encoder
        else:
            self.encoder = make_encoder(
                encoder,
                dim=dim,
                model=model,
                base_url=base_url,
                api_key_env=api_key_env,
                batch_size=batch_size,
            )
        root = resolve_cache_dir(cache_dir)
        settings = stable_hash(self.encoder.identity(), size=16)
        base = root / "embeddings" / settings if root else None
        self.store = VectorStore(base / "vectors") if base else None
        self.memo = MemoStore(base / "memo", ("ptr", "vectors")) if base else None
        self.force = force

    def enrich(self, registry: ToolRegistry) -> ToolEmbeddings:
        """Vectors for every tool of ``registry`` (cached ones are read, not recomputed).

        With a cache, namespaces whose content key is in the memo take their rows from it without
        building any text; the others go through the text-keyed vector cache and the encoder.
        """
        tools = registry.tools()
        if self.memo is None or not tools:
            return ToolEmbeddings(tools, self.vectors([tool_text(t) for t in tools]), self.encoder.identity())
        groups = pool_groups(registry, tools)
        shards = [] if self.force else self.memo.read()
        found = memo_index(shards)
        hits = [(rows, found[key]) for key, rows in groups if key is not None and key in found]
        todo = [(key, rows) for key, rows in groups if key is None or key not in found]
        missing = np.concatenate([rows for _, rows in todo]) if todo else np.zeros(0, dtype=np.int64)
        fresh = self.vectors([tool_text(tools[i]) for i in missing.tolist()]) if len(missing) else None
        width = fresh.shape[1] if fresh is not None else shards[hits[0][1][0]]["vectors"].shape[1]
        if any(shards[n]["vectors"].shape[1] != width for _, (n, _) in hits):
            # A shard written by an encoder of another width (a changed model behind the same
            # settings): recompute everything rather than mix.
            hits, todo = [], list(groups)
            missing = np.arange(len(tools), dtype=np.int64)
            fresh = self.vectors([tool_text(t) for t in tools])
            width = fresh.shape[1]
        matrix = np.empty((len(tools), width), dtype=np.float32)
        for rows, (number, position) in hits:
            matrix[rows] = shards[number]["vectors"][group_slice(shards[number], position)]
        if fresh is not None:
            matrix[missing] = fresh
        self.memo.remember(
            [(k, r) for k, r in groups if k is not None],
            [(k, r) for k, r in todo if k is not None],
            lambda chosen: per_tool_shard(chosen, {"vectors": matrix}),
            rewrite=self.force or not shards,
        )
        return ToolEmbeddings(tools, matrix, self.encoder.identity())

    def vectors(self, texts: Sequence[str]) -> FloatMatrix:
        """Normalised vectors of ``texts``, through the cache; only unseen texts are encoded."""
        keys = [_text_key(t) for t in texts]
        first = dict(zip(keys, texts, strict=True))
        order = list(first)
        rows, missing = (None, list(range(len(order))))
        if self.store is not None and not self.force:
            rows, missing = self.store.load(order)
        fresh = self._encode([first[order[i]] for i in missing]) if missing else None
        matrix = self._merge(rows, missing, fresh, len(order))
        if fresh is not None and self.store is not None:
            self.store.store([order[i] for i in missing], fresh)
        position = {k: i for i, k in enumerate(order)}
        return matrix[[position[k] for k in keys]] if len(order) != len(keys) else matrix

    def _encode(self, texts: Sequence[str]) -> FloatMatrix:
        vectors = l2_normalise(self.encoder.encode(texts))
        if vectors.shape[0] != len(texts):
            raise EnrichmentError(
                f"encoder {self.encoder.identity()} returned {vectors.shape[0]} vectors for "
                f"{len(texts)} texts. Fix the encoder to return one row per text."
            )
        return vectors

    def _merge(
        self, rows: FloatMatrix | None, missing: list[int], fresh: FloatMatrix | None, count: int
    ) -> FloatMatrix:
        if fresh is None:
            if rows is None:
                return np.zeros((count, 0), dtype=np.float32)
            return rows
        if rows is None or rows.shape[1] != fresh.shape[1]:
            rows = np.zeros((count, fresh.shape[1]), dtype=np.float32)
        rows[missing] = fresh
        return rows
