"""The ``embeddings`` enrichment: one L2-normalised vector per tool, in ``artifacts["embeddings"]``.

A tool's text is its name, description, parameter names and descriptions, and output parameter
names and descriptions (:func:`tool_text`). Three encoders:

* ``hashed`` (default): signed feature hashing of words (camelCase and snake_case split) and
  character n-grams, computed with vectorised numpy integer arithmetic. No download, no GPU, the
  same vectors on every machine.
* ``sentence-transformers``: any model of that library (``pip install 'fms_dgt[embeddings]'``).
* ``openai``: an OpenAI-compatible ``POST {base_url}/embeddings`` endpoint.

Vectors are cached by the hash of exactly the text the encoder sees plus the encoder's settings, so
a restart or a second task reuses them and adding tools encodes only the new ones.
"""

from __future__ import annotations

import hashlib
import importlib
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from os import PathLike
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

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
from fms_dgt.core.tools.enrichments.base import ToolEnrichment, resolve_cache_dir, stable_hash
from fms_dgt.core.tools.openai_compat import post_json
from fms_dgt.errors import ConfigError, EnrichmentError
from fms_dgt.plugins import register_tool_enrichment

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

# ToolEmbeddings and row_index live in fms_dgt.core.tools.artifacts; they are still exported here
# for code that imported them from this module.
__all__ = [
    "EmbeddingsEnrichment",
    "HashedEncoder",
    "OpenAIEncoder",
    "SentenceTransformerEncoder",
    "TextEncoder",
    "ToolEmbeddings",
    "l2_normalise",
    "quantise",
    "row_index",
    "tool_text",
]

FloatMatrix = npt.NDArray[np.float32]
U64 = npt.NDArray[np.uint64]

_ENCODERS = ("hashed", "sentence-transformers", "openai")


def l2_normalise(matrix: npt.NDArray[np.floating[Any]]) -> FloatMatrix:
    """Rows scaled to unit length (zero rows stay zero), as float32."""
    out = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out


def quantise(vectors: FloatMatrix) -> tuple[FloatMatrix, FloatMatrix]:
    """Vectors rounded to integers in [-127, 127] (kept as float32) and their inverse norms.

    Dot products of such vectors are sums of at most 1024 x 127^2 < 2^24 integers, which float32
    represents exactly, so a score does not depend on how BLAS blocks the product: a chunk, an
    incremental update and a cold run give bit-identical scores.
    """
    peak = np.abs(vectors).max(axis=1, keepdims=True) if vectors.size else np.zeros((len(vectors), 1))
    scale = np.divide(127.0, peak, out=np.zeros_like(peak, dtype=np.float64), where=peak > 0)
    rounded = np.rint(vectors * scale).astype(np.float32)
    norms = np.sqrt((rounded.astype(np.float64) ** 2).sum(axis=1))
    inverse = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0).astype(np.float32)
    return rounded, inverse


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


class TextEncoder(ABC):
    """Turns texts into vectors. Subclass it to plug in another model."""

    @abstractmethod
    def identity(self) -> dict[str, Any]:
        """Every setting that changes the vectors (it keys the cache)."""

    @abstractmethod
    def encode(self, texts: Sequence[str]) -> FloatMatrix:
        """One row per text (need not be normalised; the enrichment normalises)."""


# --------------------------------------------------------------------------- hashed encoder

_PRIME = 0x100000001B3
_PRIME_INV = pow(_PRIME, -1, 2**64)
_SALT_WORD = 0x9E3779B97F4A7C15
_SALT_GRAM = 0xC2B2AE3D27D4EB4F
_BATCH_BYTES = 1 << 20


def _fmix(h: U64, salt: int) -> U64:
    """MurmurHash3's 64-bit finaliser, after mixing in a salt (wrapping uint64 arithmetic)."""
    h = h ^ np.uint64(salt)
    h = h ^ (h >> np.uint64(33))
    h = h * np.uint64(0xFF51AFD7ED558CCD)
    h = h ^ (h >> np.uint64(33))
    h = h * np.uint64(0xC4CEB9FE1A85EC53)
    return h ^ (h >> np.uint64(33))


class _Batch:
    """Byte-level view of a batch of texts with polynomial prefix hashes."""

    def __init__(self, texts: Sequence[str]) -> None:
        encoded = [t.replace("\0", " ").encode("utf-8") for t in texts]
        lengths = np.fromiter((len(b) + 1 for b in encoded), dtype=np.int64, count=len(encoded))
        raw = np.frombuffer(b"\0".join(encoded) + b"\0", dtype=np.uint8)
        self.doc = np.repeat(np.arange(len(encoded), dtype=np.int64), lengths)
        upper = (raw >= 65) & (raw <= 90)
        self.word = upper | ((raw >= 97) & (raw <= 122)) | ((raw >= 48) & (raw <= 57)) | (raw >= 128)
        self.upper = upper
        lowered = raw | (upper.astype(np.uint8) << np.uint8(5))
        self.norm = np.where(self.word, lowered, np.uint8(32)).astype(np.uint64) + np.uint64(1)
        self.sep = np.concatenate(([0], np.cumsum(raw == 0)))
        self.words = np.concatenate(([0], np.cumsum(self.word)))
        size = len(raw) + 1
        powers = np.full(size, _PRIME, dtype=np.uint64)
        powers[0] = 1
        self.powers = np.cumprod(powers, dtype=np.uint64)
        inverse = np.full(size, _PRIME_INV, dtype=np.uint64)
        inverse[0] = 1
        scaled = self.norm * np.cumprod(inverse, dtype=np.uint64)[:-1]
        self.prefix = np.concatenate((np.zeros(1, dtype=np.uint64), np.cumsum(scaled, dtype=np.uint64)))

    def span_hash(self, start: npt.NDArray[np.int64], end: npt.NDArray[np.int64]) -> U64:
        """Polynomial hash of ``norm[start:end]`` for every pair (vectorised)."""
        diff: U64 = self.prefix[end] - self.prefix[start]
        return diff * self.powers[end - 1]

    def tokens(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Start and end of every word; camelCase humps start new words."""
        word, upper = self.word, self.upper
        prev_word = np.concatenate(([False], word[:-1]))
        prev_lower = np.concatenate(([False], word[:-1] & ~upper[:-1]))
        start = word & (~prev_word | (upper & prev_lower))
        next_start = np.concatenate((start[1:], [False]))
        next_word = np.concatenate((word[1:], [False]))
        end = word & (~next_word | next_start)
        return np.flatnonzero(start), np.flatnonzero(end) + 1

    def grams(self, n: int) -> npt.NDArray[np.int64]:
        """Starts of the character n-grams inside one text that touch at least one word byte."""
        starts = np.arange(max(len(self.norm) - n + 1, 0), dtype=np.int64)
        ends = starts + n
        ok = (self.sep[ends] == self.sep[starts]) & (self.words[ends] > self.words[starts])
        chosen: npt.NDArray[np.int64] = starts[ok]
        return chosen


class HashedEncoder(TextEncoder):
    """Signed feature hashing of words and character n-grams; offline and deterministic.

    Args:
        dim: vector size.
        ngrams: character n-gram sizes.
        word_weight: weight of the word part against the character part (each normalised first).
    """

    def __init__(self, dim: int = 256, ngrams: Sequence[int] = (3, 4, 5), word_weight: float = 1.0) -> None:
        if dim < 8:
            raise ConfigError(f"invalid dim {dim} for the hashed encoder: use at least 8 (e.g. 256).")
        self.dim = int(dim)
        self.ngrams = tuple(int(n) for n in ngrams)
        self.word_weight = float(word_weight)

    def identity(self) -> dict[str, Any]:
        return {
            "encoder": "hashed/1",
            "dim": self.dim,
            "ngrams": self.ngrams,
            "word_weight": self.word_weight,
        }

    def encode(self, texts: Sequence[str]) -> FloatMatrix:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for lo, hi in _batches(texts, _BATCH_BYTES):
            out[lo:hi] = self._encode_batch(texts[lo:hi])
        return out

    def _encode_batch(self, texts: Sequence[str]) -> FloatMatrix:
        batch = _Batch(texts)
        start, end = batch.tokens()
        words = self._accumulate(len(texts), batch.doc[start], _fmix(batch.span_hash(start, end), _SALT_WORD))
        gram_docs, gram_hashes = [], []
        for n in self.ngrams:
            g = batch.grams(n)
            gram_docs.append(batch.doc[g])
            gram_hashes.append(_fmix(batch.span_hash(g, g + n), _SALT_GRAM + n))
        if not gram_docs:
            return l2_normalise(words)
        chars = self._accumulate(len(texts), np.concatenate(gram_docs), np.concatenate(gram_hashes))
        return l2_normalise(self.word_weight * l2_normalise(words) + l2_normalise(chars))

    def _accumulate(self, count: int, docs: npt.NDArray[np.int64], hashes: U64) -> FloatMatrix:
        buckets = (hashes % np.uint64(self.dim)).astype(np.int64)
        signs = np.where((hashes >> np.uint64(63)) == 1, -1.0, 1.0)
        flat = np.bincount(docs * self.dim + buckets, weights=signs, minlength=count * self.dim)
        return flat.reshape(count, self.dim).astype(np.float32)


def _batches(texts: Sequence[str], budget: int) -> list[tuple[int, int]]:
    spans, lo, size = [], 0, 0
    for i, text in enumerate(texts):
        size += len(text) + 1
        if size >= budget:
            spans.append((lo, i + 1))
            lo, size = i + 1, 0
    if lo < len(texts):
        spans.append((lo, len(texts)))
    return spans


# --------------------------------------------------------------------------- optional encoders


class SentenceTransformerEncoder(TextEncoder):
    """A ``sentence-transformers`` model (optional extra ``fms_dgt[embeddings]``).

    Args:
        model: model name or path (e.g. ``all-MiniLM-L6-v2``).
        batch_size: texts per forward pass.
        device: ``cpu``, ``cuda``... (the library's default when None).
    """

    def __init__(self, model: str = "all-MiniLM-L6-v2", batch_size: int = 64, device: str | None = None):
        self.model_name = model
        self.batch_size = batch_size
        self.device = device
        self._model: Any = None

    def identity(self) -> dict[str, Any]:
        return {"encoder": "sentence-transformers", "model": self.model_name}

    def _load(self) -> Any:
        if self._model is None:
            try:
                module = importlib.import_module("sentence_transformers")
            except ImportError as exc:
                raise EnrichmentError(
                    "missing optional dependency for encoder 'sentence-transformers': the "
                    "sentence_transformers package is not installed. Install it with "
                    "pip install 'fms_dgt[embeddings]', or use encoder: hashed."
                ) from exc
            self._model = module.SentenceTransformer(self.model_name, device=self.device)
        return self._model

    def encode(self, texts: Sequence[str]) -> FloatMatrix:
        vectors = self._load().encode(list(texts), batch_size=self.batch_size, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


class OpenAIEncoder(TextEncoder):
    """An OpenAI-compatible ``/embeddings`` endpoint.

    Args:
        model: the model name sent in each request.
        base_url: the API root (``https://api.openai.com/v1``, ``http://127.0.0.1:8000/v1``...).
        api_key_env: environment variable holding the key (none sent when unset).
        batch_size: texts per request.
        timeout: seconds per request.
    """

    def __init__(
        self,
        model: str,
        base_url: str,
        api_key_env: str = "OPENAI_API_KEY",
        batch_size: int = 128,
        timeout: float = 60.0,
    ) -> None:
        self.model = model
        self.url = base_url.rstrip("/") + "/embeddings"
        self.api_key_env = api_key_env
        self.batch_size = max(1, batch_size)
        self.timeout = timeout

    def identity(self) -> dict[str, Any]:
        return {"encoder": "openai", "model": self.model, "url": self.url}

    def encode(self, texts: Sequence[str]) -> FloatMatrix:
        rows: list[list[float]] = []
        for lo in range(0, len(texts), self.batch_size):
            rows.extend(self._request(texts[lo : lo + self.batch_size]))
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)

    def _request(self, texts: Sequence[str]) -> list[list[float]]:
        answer = post_json(
            self.url,
            {"model": self.model, "input": list(texts)},
            api_key_env=self.api_key_env,
            timeout=self.timeout,
            error=EnrichmentError,
        )
        try:
            data = sorted(answer["data"], key=lambda item: item["index"])
            rows = [list(item["embedding"]) for item in data]
        except (KeyError, TypeError) as exc:
            raise EnrichmentError(
                f"unexpected answer from {self.url}: no data[].embedding ({exc!r}). Point base_url "
                "at an OpenAI-compatible API."
            ) from exc
        if len(rows) != len(texts):
            raise EnrichmentError(
                f"unexpected answer from {self.url}: {len(rows)} embeddings for {len(texts)} inputs. "
                "Lower batch_size or check the server."
            )
        return rows


def make_encoder(
    encoder: str, *, dim: int, model: str | None, base_url: str | None, api_key_env: str, batch_size: int
) -> TextEncoder:
    """The encoder a config names."""
    if encoder == "hashed":
        return HashedEncoder(dim=dim)
    if encoder == "sentence-transformers":
        return SentenceTransformerEncoder(model or "all-MiniLM-L6-v2", batch_size=batch_size)
    if encoder == "openai":
        if not model or not base_url:
            raise ConfigError(
                "invalid embeddings settings: encoder 'openai' needs model and base_url. Add both keys."
            )
        return OpenAIEncoder(model, base_url, api_key_env=api_key_env, batch_size=batch_size)
    raise ConfigError(
        f"unknown encoder {encoder!r} for the embeddings enrichment: use one of {', '.join(_ENCODERS)}."
    )


# --------------------------------------------------------------------------- enrichment


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
        encoder: str | TextEncoder = "hashed",
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
