"""Every config shape the seed project's design pages show loads as written.

The shapes below are those of the seed's pages on tools (index), registry and loaders, engines,
enrichments and samplers. Hosts that would need the internet are replaced by loopback servers
started here (an MCP server at a bare host:port, an HTTP server serving an OpenAPI spec by URL, an
OpenAI-compatible stand-in); nothing else in the entries is changed.
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.chat_server import serve as chat_serve
from support.mcp_harness import http_server

from fms_dgt.config import build_enrichments, config_from_data
from fms_dgt.core.tools.data_objects import ToolCall
from fms_dgt.core.tools.engines.lm import LMToolEngine
from fms_dgt.core.tools.engines.multi import MultiToolEngine
from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment
from fms_dgt.core.tools.enrichments.embeddings import EmbeddingsEnrichment
from fms_dgt.core.tools.enrichments.output_parameters import OutputParametersEnrichment
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.core.tools.samplers import get_tool_sampler
from fms_dgt.databuilders.tool_calling.config import build_engines
from fms_dgt.errors import EnrichmentError

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data"


@pytest.fixture
def spec_url() -> Iterator[str]:
    """An HTTP server publishing the bundled petstore spec where the seed fetches petstore3's."""
    root = DATA / "rest"
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/petstore.yaml"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


def _config(text: str, tmp_path: Path) -> Any:
    path = tmp_path / "seed.yaml"
    path.write_text(text, encoding="utf-8")
    return config_from_data(yaml.safe_load(text), path)


def test_the_registry_page_config(tmp_path: Path, spec_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DGT_DATA_DIR", str(DATA))
    with http_server("streamable_http", path="/") as mcp_url:
        text = f"""
tools:
  registry:
    - type: file
      path: ${{DGT_DATA_DIR}}/weather_tools.yaml
      namespace: weather_api
    - type: mcp
      url: {mcp_url}
      namespace: hr_api
    - type: rest
      spec: {spec_url}
      namespace: petstore
"""
        with ToolRegistry.from_config(_config(text, tmp_path)) as registry:
            assert registry.namespaces() == ["weather_api", "hr_api", "petstore"]
            assert "hr_api::add" in registry and "petstore::listPets" in registry
            assert registry.get("hr_api::add").metadata["server"] == "hr_api"


def test_the_engines_page_config_routes_calls(tmp_path: Path) -> None:
    with http_server("sse", path="/") as mcp_url, chat_serve(lambda body: {"temperature": 21.5}) as chat:
        text = f"""
tools:
  registry:
    - type: file
      path: {DATA}/weather_tools.yaml
      namespace: weather_api
      engine: lm_sim
    - type: mcp
      url: {mcp_url}
      namespace: hr_api
      engine: mcp_live
  engines:
    lm_sim:
      type: lm
      lm_config: {{type: ollama, model_id_or_path: "granite3.3:8b", base_url: {chat.url}}}
      error_categories:
        - type: network_error
          probability: 0.05
          message: "Connection timed out"
        - type: unparseable_result
          probability: 0.05
        - type: schema_violation
          probability: 0.05
    mcp_live:
      type: mcp
      url: {mcp_url}
"""
        config = _config(text, tmp_path)
        with ToolRegistry.from_config(config) as registry:
            engines = build_engines(config, registry)
            lm = engines["lm_sim"]
            assert isinstance(lm, LMToolEngine)
            assert (lm.model, lm.base_url) == ("granite3.3:8b", chat.url)
            assert lm.errors == {"network_error": 0.05, "unparseable_result": 0.05, "schema_violation": 0.05}
            assert lm.error_messages == {"network_error": "Connection timed out"}
            with MultiToolEngine(registry, engines=engines) as multi:
                multi.setup("s")
                added, weather = multi.execute(
                    "s",
                    [
                        ToolCall("hr_api::add", {"a": 2, "b": 3}),
                        ToolCall("weather_api::geocode_city", {"city": "Oslo"}),
                    ],
                )
        assert added.ok and added.metadata["engine"] == "mcp_live", added.error
        assert weather.metadata["engine"] == "lm_sim"
        assert chat.requests and chat.requests[0]["model"] == "granite3.3:8b"


def test_the_ollama_default_root_and_generation_settings(tmp_path: Path) -> None:
    text = f"""
tools:
  registry:
    - type: file
      path: {DATA}/weather_tools.yaml
      namespace: weather_api
  engines:
    lm_sim:
      type: lm
      lm_config:
        type: ollama
        model_id_or_path: granite3.3:8b
        temperature: 0.0
        max_new_tokens: 512
"""
    config = _config(text, tmp_path)
    with ToolRegistry.from_config(config) as registry:
        lm = build_engines(config, registry)["lm_sim"]
        assert isinstance(lm, LMToolEngine)
        assert (lm.base_url, lm.temperature, lm.max_tokens) == ("http://localhost:11434/v1", 0.0, 512)


def test_the_index_and_enrichments_page_entries(tmp_path: Path) -> None:
    text = f"""
tools:
  registry:
    - type: file
      path: {DATA}/weather_tools.yaml
      namespace: weather_api
  enrichments:
    - type: output_parameters
      lm_config:
        type: ollama
        model_id_or_path: granite3.3:8b
        temperature: 0.1
        max_new_tokens: 256
    - type: output_parameters
      force: true
      lm_config:
        type: ollama
        model_id_or_path: granite3.3:8b
    - type: dataflow
      model: sentence-transformers/all-mpnet-base-v2
    - type: embeddings
      model: sentence-transformers/all-mpnet-base-v2
"""
    first, forced, dataflow, embeddings = build_enrichments(_config(text, tmp_path))
    assert isinstance(first, OutputParametersEnrichment) and isinstance(forced, OutputParametersEnrichment)
    assert (first.strategies, first.model, first.base_url) == (
        ["llm"],
        "granite3.3:8b",
        "http://localhost:11434/v1",
    )
    assert forced.force
    assert isinstance(dataflow, DataflowEnrichment) and isinstance(embeddings, EmbeddingsEnrichment)
    for enrichment in (dataflow, embeddings):
        assert enrichment.encoder.identity() == {
            "encoder": "sentence-transformers",
            "model": "sentence-transformers/all-mpnet-base-v2",
        }


def test_a_model_that_cannot_load_here_says_how_to_get_it(tmp_path: Path) -> None:
    pytest.importorskip("numpy")
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("sentence-transformers is installed: the model would be fetched")
    text = f"""
tools:
  registry: [{{type: file, path: {DATA}/weather_tools.yaml}}]
  enrichments: [{{type: embeddings, model: sentence-transformers/all-mpnet-base-v2}}]
"""
    with pytest.raises(EnrichmentError, match=r"pip install 'fms_dgt\[embeddings\]'"):
        ToolRegistry.from_config(_config(text, tmp_path))


SAMPLERS = [
    {"type": "tc/random", "k": 8},
    {"type": "tc/random", "k": 3, "namespace": "weather_api"},
    {"type": "tc/random", "k": 8, "strategy": "proportional"},
    {"type": "tc/chain", "k": 2, "min_score": 0.7},
    {"type": "tc/fan_out", "k": 2},
]


@pytest.mark.parametrize("entry", SAMPLERS, ids=lambda e: "-".join(f"{k}={v}" for k, v in e.items()))
def test_the_samplers_page_entries(tmp_path: Path, entry: dict[str, Any]) -> None:
    text = f"""
tools:
  registry:
    - {{type: file, path: {DATA}/weather_tools.yaml}}
    - {{type: file, path: {DATA}/api_bank_sample.json, namespace: api_bank}}
  enrichments: [{{type: dataflow}}]
"""
    with ToolRegistry.from_config(_config(text, tmp_path)) as registry:
        settings = {k: v for k, v in entry.items() if k != "type"}
        sampler = get_tool_sampler(entry["type"], registry=registry, **settings)
        sample = sampler.sample(seed=1)
        assert len(sample) == entry["k"]
        if "namespace" in entry:
            assert {t.namespace for t in sample} == {"weather_api"}
        if "min_score" in entry:
            assert all(e.score >= 0.7 for e in sample.edges)
