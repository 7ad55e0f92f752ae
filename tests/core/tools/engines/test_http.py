"""Tests of the ``http`` engine (fms_dgt/core/tools/engines/http.py) against a real loopback server.

Manifest tools are loaded from YAML by the ``file`` loader, as users write them, and called through
the engine, through dispatch by kind, and through the built-in kind handler.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest
from support.rest_server import ServerState, serve

from fms_dgt.core.tools.data_objects import ToolCall, ToolResult
from fms_dgt.core.tools.engines.base import CallPolicy
from fms_dgt.core.tools.engines.handlers import BUILTIN_KIND_HANDLERS, get_tool_handler
from fms_dgt.core.tools.engines.http import HTTPToolEngine
from fms_dgt.core.tools.engines.multi import MultiToolEngine
from fms_dgt.core.tools.loaders.file import FileToolLoader
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.errors import ConfigError
from fms_dgt.plugins import get_tool_engine_class

ENV_KEY = "DGT_HTTP_TEST_KEY"
SECRET = "env-secret-5821"


def manifest(name: str, http: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "tools.fms-dgt/v1",
        "kind": "Tool",
        "metadata": {"name": name, "namespace": "live"},
        "spec": {
            "description": f"The {name} tool.",
            "input_schema": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "metric": {"type": "boolean"},
                },
            },
            "mode": "live",
            "http": http,
            **spec,
        },
    }


def registry_of(tmp_path: Path, *manifests: dict[str, Any]) -> ToolRegistry:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(list(manifests)))
    return ToolRegistry(loaders=[FileToolLoader(path)])


@pytest.fixture
def server() -> Iterator[ServerState]:
    with serve() as state:
        yield state


@pytest.fixture
def other() -> Iterator[ServerState]:
    """A second server: nothing may reach it."""
    with serve() as state:
        yield state


@pytest.fixture(autouse=True)
def env_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_KEY, SECRET)


def run(engine: HTTPToolEngine, name: str, /, **arguments: Any) -> ToolResult:
    engine.teardown("once")
    engine.setup("once")
    (result,) = engine.execute("once", [ToolCall(f"live::{name}", arguments)])
    return result


def test_registered_as_the_http_plugin_and_kind_handler() -> None:
    assert get_tool_engine_class("http") is HTTPToolEngine
    assert BUILTIN_KIND_HANDLERS["http"].engine == "http"
    assert get_tool_handler("http") is BUILTIN_KIND_HANDLERS["http"]


def test_a_get_sends_the_arguments_as_the_query_with_headers(tmp_path: Path, server: ServerState) -> None:
    http = {
        "url": f"{server.base_url}/echo/forecast?units=metric",
        "method": "get",
        "headers": {"X-Client": "fms-dgt"},
        "headers_from_env": {"X-Api-Key": ENV_KEY},
    }
    registry = registry_of(tmp_path, manifest("forecast", http))
    assert registry.get("live::forecast").metadata["kind"] == "http"
    with HTTPToolEngine(registry) as engine:
        result = run(engine, "forecast", city="São Paulo", days=3, tags=["a b", "c&d"], metric=True)
    assert result.ok, result.error
    seen = server.requests[-1]
    assert seen["method"] == "GET" and seen["path"] == "/v1/echo/forecast"
    assert parse_qs(seen["query"]) == {
        "units": ["metric"],
        "city": ["São Paulo"],
        "days": ["3"],
        "tags": ["a b", "c&d"],
        "metric": ["true"],
    }
    assert seen["headers"]["x-client"] == "fms-dgt" and seen["headers"]["x-api-key"] == SECRET
    assert result.result["headers"]["x-api-key"] == "***"  # the echo of the secret is hidden
    assert result.metadata["status"] == 200 and result.metadata["method"] == "GET"


def test_other_methods_send_a_json_body(tmp_path: Path, server: ServerState) -> None:
    registry = registry_of(tmp_path, manifest("book", {"url": f"{server.base_url}/echo-post"}))
    with HTTPToolEngine(registry) as engine:
        result = run(engine, "book", city="Oslo", days=2)
    assert result.ok, result.error
    seen = server.requests[-1]
    assert seen["method"] == "POST" and seen["query"] == ""
    assert seen["headers"]["content-type"] == "application/json"
    assert json.loads(seen["body"]) == {"city": "Oslo", "days": 2}


def test_dispatch_sends_the_http_kind_to_the_http_engine(tmp_path: Path, server: ServerState) -> None:
    registry = registry_of(tmp_path, manifest("book", {"url": f"{server.base_url}/echo-post"}))
    with MultiToolEngine(registry) as multi:
        multi.setup("s")
        (result,) = multi.execute("s", [ToolCall("live::book", {"city": "Rome"})])
    assert result.ok, result.error
    assert result.metadata["engine"] == "http"
    direct = BUILTIN_KIND_HANDLERS["http"](registry.get("live::book"), {"city": "Lima"})
    assert direct.ok and json.loads(server.requests[-1]["body"]) == {"city": "Lima"}


def test_timeout_ms_stops_the_request_itself(tmp_path: Path, server: ServerState) -> None:
    http = {"url": f"{server.base_url}/slow?seconds=3", "method": "GET"}
    registry = registry_of(tmp_path, manifest("slow", http, timeout_ms=400))
    with HTTPToolEngine(registry) as engine:
        tool = registry.get("live::slow")
        started = time.perf_counter()
        with pytest.raises(TimeoutError, match="ReadTimeout"):  # no policy runner around it
            engine.call(tool, ToolCall("live::slow", {}, "c1"), {})
        elapsed = time.perf_counter() - started
        through_policy = run(engine, "slow")
    assert elapsed < 1.5
    assert through_policy.error is not None and through_policy.metadata["error"]["type"] == "timeout"


def test_a_missing_environment_variable_is_named_and_nothing_is_sent(
    tmp_path: Path, server: ServerState, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_KEY)
    http = {"url": f"{server.base_url}/echo-post", "headers_from_env": {"X-Api-Key": ENV_KEY}}
    with HTTPToolEngine(registry_of(tmp_path, manifest("book", http))) as engine:
        result = run(engine, "book", city="Oslo")
    assert result.error is not None
    assert f"missing environment variable {ENV_KEY} for header 'X-Api-Key' of tool live::book" in result.error
    assert server.requests == []


def test_a_variable_with_a_control_character_is_refused_without_showing_it(
    tmp_path: Path, server: ServerState, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_KEY, "from-file-6610\n")
    http = {"url": f"{server.base_url}/echo-post", "headers_from_env": {"X-Api-Key": ENV_KEY}}
    with HTTPToolEngine(registry_of(tmp_path, manifest("book", http))) as engine:
        result = run(engine, "book")
    assert result.error is not None and "holds a control character" in result.error
    assert "from-file-6610" not in result.error and server.requests == []


def test_secrets_in_headers_never_reach_results_or_errors(
    tmp_path: Path, server: ServerState, caplog: pytest.LogCaptureFixture
) -> None:
    http = {
        "url": f"{server.base_url}/echo-back",
        "method": "GET",
        "headers": {"Authorization": "Bearer zqtok-7730"},
        "headers_from_env": {"X-Api-Key": ENV_KEY},
    }
    with HTTPToolEngine(registry_of(tmp_path, manifest("leaky", http))) as engine:
        result = run(engine, "leaky", city="Oslo")
    seen = server.requests[-1]
    assert seen["headers"]["authorization"] == "Bearer zqtok-7730" and seen["headers"]["x-api-key"] == SECRET
    assert result.error is not None and result.error.startswith("HTTP 400 Bad Request from GET")
    assert result.metadata["error"] == {"type": "execution", "phase": "execution", "code": 400}
    text = json.dumps(result.to_dict()) + caplog.text
    for secret in ("zqtok-7730", SECRET):
        for cut in range(4, len(secret) + 1):
            assert secret[:cut] not in text


def test_requests_and_redirects_stay_within_the_tool_url(
    tmp_path: Path, server: ServerState, other: ServerState
) -> None:
    away = f"{other.base_url}/echo/x"
    tools = [
        manifest("hop", {"url": f"{server.base_url}/redirect?to={away}", "method": "GET"}),
        manifest("creds", {"url": "http://me:pw-4417@127.0.0.1:9/x"}),
        manifest("bomb", {"url": f"{server.base_url}/gzip-bomb", "method": "GET"}),
    ]
    with HTTPToolEngine(registry_of(tmp_path, *tools), max_response_bytes=1_000_000) as engine:
        hop, creds, bomb = run(engine, "hop"), run(engine, "creds"), run(engine, "bomb")
    assert hop.error is not None and "redirect refused" in hop.error
    assert hop.metadata["error"]["type"] == "policy"
    assert creds.error is not None and "carries credentials" in creds.error and "pw-4417" not in creds.error
    assert bomb.error is not None and "more than 1,000,000 bytes" in bomb.error
    assert other.requests == []


@pytest.mark.parametrize(
    ("http", "message"),
    [
        (
            {"url": "http://127.0.0.1:9/x", "header": {"A": "b"}},
            "invalid http.header of tool live::bad: unknown key",
        ),
        ({"url": "http://127.0.0.1:9/x", "method": "GET /x"}, "invalid http.method"),
        ({"method": "GET"}, "invalid http.url of tool live::bad: missing"),
        ({"url": "/relative"}, "invalid http.url"),
        ({"url": "http://127.0.0.1:9/x", "headers": {"A": 1}}, "invalid http.headers"),
    ],
)
def test_a_malformed_http_block_is_a_clear_error(tmp_path: Path, http: dict[str, Any], message: str) -> None:
    with HTTPToolEngine(registry_of(tmp_path, manifest("bad", http))) as engine:
        result = run(engine, "bad")
    assert result.error is not None and message in result.error


def test_simulate_sends_only_safe_methods(tmp_path: Path, server: ServerState) -> None:
    tools = [
        manifest("look", {"url": f"{server.base_url}/echo/look", "method": "GET"}),
        manifest("book", {"url": f"{server.base_url}/echo-post"}),
    ]
    with HTTPToolEngine(registry_of(tmp_path, *tools)) as engine:
        engine.setup("s")
        look, book = engine.simulate("s", [ToolCall("live::look", {}), ToolCall("live::book", {})])
    assert look.ok and book.error is not None and "not sent by simulate()" in book.error
    assert [r["method"] for r in server.requests] == ["GET"]


def test_engine_configuration_is_checked(tmp_path: Path) -> None:
    registry = registry_of(tmp_path, manifest("x", {"url": "http://127.0.0.1:9/x"}))
    with pytest.raises(ConfigError, match="header 'X-Token'"):
        HTTPToolEngine(registry, headers={"X-Token": "t\n"})
    with pytest.raises(ConfigError, match="max_response_bytes"):
        HTTPToolEngine(registry, max_response_bytes=0)
    engine = HTTPToolEngine(registry, policy=CallPolicy(timeout=5))
    engine.close()
