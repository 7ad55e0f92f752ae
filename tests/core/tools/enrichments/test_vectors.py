"""Tests for fms_dgt/core/tools/enrichments/_vectors.py: the text encoders and vector helpers."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from fms_dgt.core.tools.enrichments._vectors import (
    CombinedEncoder,
    HashedEncoder,
    OpenAIEncoder,
    SentenceTransformerEncoder,
    WordLlamaEncoder,
    l2_normalise,
    make_encoder,
    quantise,
)
from fms_dgt.errors import ConfigError, EnrichmentError


def cos(a: Any, b: Any) -> float:
    return float(np.dot(a, b))


def test_hashed_vectors_are_normalised_and_similar_texts_are_closer() -> None:
    vectors = HashedEncoder().encode(
        ["getWeather: current weather in a city", "get_weather_forecast for a city", "send an email", ""]
    )
    assert np.allclose(np.linalg.norm(vectors[:3], axis=1), 1.0, atol=1e-5)
    assert not vectors[3].any()
    assert cos(vectors[0], vectors[1]) > cos(vectors[0], vectors[2]) + 0.2


def test_camel_case_and_snake_case_give_the_same_words() -> None:
    encoder = HashedEncoder(ngrams=())
    camel, snake = encoder.encode(["getUserId", "get user id"])
    assert cos(camel, snake) == pytest.approx(1.0, abs=1e-6)


def test_batches_do_not_change_vectors(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = [f"tool number {i} does thing {i * 7}" for i in range(300)]
    whole = HashedEncoder().encode(texts)
    monkeypatch.setattr("fms_dgt.core.tools.enrichments._vectors._BATCH_BYTES", 500)
    assert np.array_equal(HashedEncoder().encode(texts), whole)


def test_hashed_vectors_are_identical_in_other_processes() -> None:
    code = (
        "from fms_dgt.core.tools.enrichments._vectors import HashedEncoder;"
        "import sys; sys.stdout.buffer.write(HashedEncoder(dim=32).encode(['Ünïcode café', 'x_y']).tobytes())"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": s},
            capture_output=True,
            check=True,
        ).stdout
        for s in ("0", "123")
    }
    assert runs == {HashedEncoder(dim=32).encode(["Ünïcode café", "x_y"]).tobytes()}


def test_openai_encoder_talks_to_an_openai_compatible_server(stand_in: Any) -> None:
    encoder = OpenAIEncoder("embed-small", stand_in.url, batch_size=2)
    vectors = encoder.encode(["a", "bb", "ccc"])
    assert vectors.tolist() == [[1, 1, 1], [2, 1, 0], [3, 1, 0]]
    assert [body["input"] for body in stand_in.requests] == [["a", "bb"], ["ccc"]]
    assert stand_in.paths[0] == "/v1/embeddings"
    assert stand_in.requests[0]["model"] == "embed-small"


def test_openai_encoder_reports_http_errors(stand_in: Any) -> None:
    stand_in.status = [500]
    with pytest.raises(EnrichmentError, match=r"request failed to http://127.0.0.1.*/embeddings"):
        OpenAIEncoder("m", stand_in.url).encode(["x"])


def test_sentence_transformers_missing_gives_an_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(EnrichmentError, match=r"pip install 'fms_dgt\[embeddings\]'"):
        SentenceTransformerEncoder().encode(["x"])


def test_quantise_rounds_to_integers_and_keeps_zero_rows() -> None:
    rows = l2_normalise(np.array([[3.0, -4.0, 0.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]))
    rounded, inverse = quantise(rows)
    assert rounded.dtype == np.float32 and np.array_equal(rounded, np.rint(rounded))
    assert np.abs(rounded).max(axis=1).tolist() == [127.0, 0.0, 127.0]
    assert inverse[1] == 0 and not rounded[1].any()
    assert np.allclose((rounded * inverse[:, None])[[0, 2]], rows[[0, 2]], atol=1e-2)


def test_wordllama_missing_gives_an_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "wordllama" else real(name, *a)
    )
    with pytest.raises(EnrichmentError, match=r"pip install 'fms_dgt\[semantic\]'"):
        WordLlamaEncoder().encode(["x"])


def test_wordllama_reads_the_weights_shipped_in_its_wheel_offline() -> None:
    pytest.importorskip("wordllama")
    encoder = make_encoder("wordllama", dim=128, model=None, base_url=None, api_key_env="X", batch_size=8)
    assert isinstance(encoder, WordLlamaEncoder) and encoder.dim == 128
    vectors = l2_normalise(encoder.encode(["artist id", "artistId", "weather forecast", ""]))
    assert vectors.shape == (4, 128) and not vectors[3].any()
    assert cos(vectors[0], vectors[1]) > cos(vectors[0], vectors[2])
    assert encoder.identity()["encoder"] == "wordllama"
    # Reading the package's files must not import it: its import configures the root logger.
    code = (
        "import sys; from fms_dgt.core.tools.enrichments._vectors import WordLlamaEncoder;"
        "WordLlamaEncoder().encode(['a']); print('wordllama' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_wordllama_dims_are_the_shipped_prefixes() -> None:
    with pytest.raises(ConfigError, match="64, 128 or 256"):
        WordLlamaEncoder(dim=100)


def test_combined_encoder_concatenates_normalised_parts() -> None:
    encoder = make_encoder("hashed+hashed", dim=16, model=None, base_url=None, api_key_env="X", batch_size=8)
    assert isinstance(encoder, CombinedEncoder) and encoder.dim == 32
    vectors = encoder.encode(["user id", "customer"])
    assert np.allclose(np.linalg.norm(vectors, axis=1), np.sqrt(2))
    assert encoder.identity()["parts"] == [HashedEncoder(16).identity()] * 2
