"""Tests of the ``rest`` engine against a real HTTP server on loopback (tests/support/rest_server.py).

The serialisation rules and credential handling it delegates are pinned one by one in
tests/core/tools/openapi/test_request.py and test_auth.py.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest
from support.rest_server import API_KEY, BASIC, TOKEN, ServerState, serve

from fms_dgt.config import interpolate
from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.engines.base import CallPolicy
from fms_dgt.core.tools.engines.rest import RESTToolEngine
from fms_dgt.core.tools.loaders.rest import RESTToolLoader
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.errors import ConfigError
from fms_dgt.plugins import get_tool_engine_class

SPEC = Path(__file__).resolve().parents[4] / "data" / "rest" / "petstore.yaml"
AUTH = {
    "bearerAuth": {"token": TOKEN},
    "basicAuth": {"username": BASIC[0], "password": BASIC[1]},
    "apiKeyQuery": {"value": API_KEY},
}


@pytest.fixture(scope="module")
def registry() -> ToolRegistry:
    return ToolRegistry(loaders=[RESTToolLoader(str(SPEC), namespace="pets")])


@pytest.fixture
def server() -> Iterator[ServerState]:
    with serve() as state:
        yield state


@pytest.fixture
def engine(registry: ToolRegistry, server: ServerState) -> Iterator[RESTToolEngine]:
    with RESTToolEngine(registry, base_url=server.base_url, auth=AUTH) as eng:
        eng.setup("s")
        yield eng


def run(engine: RESTToolEngine, name: str, /, **arguments: Any) -> ToolResult:
    (result,) = engine.execute("s", [ToolCall(f"pets::{name}", arguments)])
    return result


def last(server: ServerState) -> dict[str, Any]:
    return server.requests[-1]


def test_registered_as_rest_plugin() -> None:
    assert get_tool_engine_class("rest") is RESTToolEngine


def test_create_then_get_round_trip(engine: RESTToolEngine, server: ServerState) -> None:
    created = run(engine, "createPet", name="Rex", tag="dog")
    assert created.ok, created.error
    assert created.metadata["status"] == 201
    assert json.loads(last(server)["body"]) == {"name": "Rex", "tag": "dog"}
    fetched = run(engine, "getPet", petId=created.result["id"])
    assert fetched.result == {"id": created.result["id"], "name": "Rex", "tag": "dog"}
    assert fetched.metadata["headers"]["content-type"] == "application/json"
    listed = run(engine, "listPets", limit=10, tags=["dog", "cat"])
    assert [p["name"] for p in listed.result] == ["Rex"]
    assert last(server)["query"] == "limit=10&tags=dog&tags=cat"


@pytest.mark.parametrize(
    ("value", "raw"),
    [
        ("1/../../admin", "/v1/pets/1%2F..%2F..%2Fadmin"),
        ("..", "/v1/pets/%2E%2E"),
        ("a b?c", "/v1/pets/a%20b%3Fc"),
    ],
)
def test_path_values_cannot_change_the_path(
    engine: RESTToolEngine, server: ServerState, value: str, raw: str
) -> None:
    result = run(engine, "getPet", petId=value)
    assert last(server)["path"] == raw
    assert result.metadata["status"] == 404
    assert result.error is not None and result.error.startswith("HTTP 404 Not Found from GET /pets/")
    assert f"no pet {value}" in result.error  # body excerpt


def test_query_header_and_cookie_styles(engine: RESTToolEngine, server: ServerState) -> None:
    result = run(
        engine,
        "echo",
        value="v",
        words=["a", "b c"],
        filter={"color": "red", "size": "L"},
        q="1&2=3",
        **{"X-Trace": "trace-1", "session": "abc def"},
    )
    assert result.ok, result.error
    seen = last(server)
    assert seen["query"] == "words=a|b%20c&filter%5Bcolor%5D=red&filter%5Bsize%5D=L&q=1%262%3D3"
    assert parse_qs(seen["query"])["q"] == ["1&2=3"]
    assert seen["headers"]["x-trace"] == "trace-1"
    assert seen["headers"]["cookie"] == "session=abc%20def"


def test_form_urlencoded_body_with_deep_object(engine: RESTToolEngine, server: ServerState) -> None:
    result = run(engine, "submitForm", name="n&m", tags=["a", "b"], meta={"k": "v"})
    assert result.ok, result.error
    seen = last(server)
    assert seen["headers"]["content-type"] == "application/x-www-form-urlencoded"
    assert parse_qs(seen["body"]) == {"name": ["n&m"], "tags": ["a", "b"], "meta[k]": ["v"]}


def test_multipart_upload(engine: RESTToolEngine, server: ServerState) -> None:
    result = run(engine, "uploadPhoto", petId="7", file="12345678", caption="side view")
    assert result.ok, result.error
    assert result.result == {"filename": "file", "size": 8, "caption": "side view"}
    assert last(server)["headers"]["content-type"].startswith("multipart/form-data; boundary=")


def test_renamed_body_field_goes_back_under_its_own_name(engine: RESTToolEngine, server: ServerState) -> None:
    result = run(engine, "replaceThing", id=3, body_id=4, label="L")
    assert result.ok, result.error
    assert last(server)["path"] == "/v1/things/3"
    assert json.loads(last(server)["body"]) == {"id": 4, "label": "L"}


def test_text_and_empty_responses(engine: RESTToolEngine) -> None:
    assert run(engine, "getText").result == "plain words"
    deleted = run(engine, "deletePet", petId="nope")
    assert deleted.ok and deleted.result is None and deleted.metadata["status"] == 204


# ---------------------------------------------------------------------------- credentials


def test_basic_auth_from_config(engine: RESTToolEngine, server: ServerState) -> None:
    assert run(engine, "deletePet", petId="1").ok
    expected = "Basic " + base64.b64encode(":".join(BASIC).encode()).decode()
    assert last(server)["headers"]["authorization"] == expected


def test_missing_credentials_give_a_hint(registry: ToolRegistry, server: ServerState) -> None:
    with RESTToolEngine(registry, base_url=server.base_url) as eng:
        eng.setup("s")
        result = run(eng, "createPet", name="Rex")
    assert result.metadata["status"] == 401
    assert result.error is not None and "configure auth for bearerAuth" in result.error


def test_secrets_never_appear_in_results_errors_metadata_or_logs(
    registry: ToolRegistry, server: ServerState, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = {"bearerAuth": {"token": "wrong-token-123"}, "apiKeyQuery": {"value": API_KEY}}
    with RESTToolEngine(registry, base_url=server.base_url, auth=wrong) as eng:
        eng.setup("s")
        denied = run(eng, "createPet", name="Rex")  # the server echoes the bad header
        echoed = run(eng, "secureEcho")  # the server echoes the query with the key
        text = json.dumps([denied.to_dict(), echoed.to_dict(), repr(eng)]) + caplog.text
    assert server.requests[-1]["query"] == f"api_key={API_KEY}"  # the key was really sent
    assert denied.error is not None and "Bearer ***" in denied.error
    assert echoed.ok and echoed.result["query"] == "api_key=***"
    assert "wrong-token-123" not in text and API_KEY not in text


def test_sensitive_extra_headers_are_redacted_too(registry: ToolRegistry, server: ServerState) -> None:
    headers = {"X-Api-Token": "hdr-secret-9", "X-Client": "demo-client"}
    with RESTToolEngine(registry, base_url=server.base_url, headers=headers) as eng:
        eng.setup("s")
        echoed = run(eng, "echo", value="v")
    assert last(server)["headers"]["x-api-token"] == "hdr-secret-9"
    assert echoed.result["headers"]["x-api-token"] == "***"
    assert echoed.result["headers"]["x-client"] == "demo-client"


def test_credentials_from_environment_via_config_interpolation(
    registry: ToolRegistry, server: ServerState, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PETS_TOKEN", TOKEN)
    auth = interpolate({"bearerAuth": {"token": "${PETS_TOKEN}"}})
    with RESTToolEngine(registry, base_url=server.base_url, auth=auth) as eng:
        eng.setup("s")
        assert run(eng, "createPet", name="Rex").ok
    assert last(server)["headers"]["authorization"] == f"Bearer {TOKEN}"


def test_explicit_credentials_apply_to_every_call(registry: ToolRegistry, server: ServerState) -> None:
    auth = {"tenant": {"type": "apiKey", "in": "header", "name": "X-Tenant", "value": "acme-corp"}}
    with RESTToolEngine(registry, base_url=server.base_url, auth=auth) as eng:
        eng.setup("s")
        run(eng, "getText")
    assert last(server)["headers"]["x-tenant"] == "acme-corp"


def test_bad_auth_config_is_a_config_error(registry: ToolRegistry) -> None:
    with pytest.raises(ConfigError, match="apiKey needs"):
        RESTToolEngine(registry, auth={"k": {"type": "apiKey", "value": "x"}})


# ---------------------------------------------------------------------------- retries and failures


def test_idempotent_calls_are_retried_on_5xx(registry: ToolRegistry, server: ServerState) -> None:
    policy = CallPolicy(retries=3, backoff=0.001)
    with RESTToolEngine(registry, base_url=server.base_url, policy=policy) as eng:
        eng.setup("s")
        result = run(eng, "flaky", key="a", failures=2)
        post = run(eng, "flakyPost", key="b", failures=1)
    assert result.ok and result.result == {"attempts": 3}
    assert result.metadata["attempts"] == 3
    assert post.metadata["status"] == 503  # POST is not idempotent: not retried
    assert server.attempts["POSTb"] == 1


def test_other_methods_are_retried_when_configured(registry: ToolRegistry, server: ServerState) -> None:
    policy = CallPolicy(retries=2, backoff=0.001)
    with RESTToolEngine(
        registry, base_url=server.base_url, policy=policy, retry_methods=["GET", "POST"]
    ) as eng:
        eng.setup("s")
        assert run(eng, "flakyPost", key="c", failures=1).result == {"attempts": 2}


def test_exhausted_retries_and_connection_errors_are_error_results(registry: ToolRegistry) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again below: nothing listens there
    policy = CallPolicy(retries=1, backoff=0.001)
    with RESTToolEngine(registry, base_url=f"http://127.0.0.1:{port}/v1", policy=policy) as eng:
        eng.setup("s")
        result = run(eng, "getText")
    assert result.error is not None
    assert "request failed for GET" in result.error and "ConnectError" in result.error
    assert result.metadata["attempts"] == 2


def test_timeout_is_an_error_result(registry: ToolRegistry, server: ServerState) -> None:
    with RESTToolEngine(registry, base_url=server.base_url, policy=CallPolicy(timeout=0.6)) as eng:
        eng.setup("s")
        late = run(eng, "slow", seconds=2)
        quick = run(eng, "slow", seconds=0)
    assert late.error is not None and "Timeout" in late.error
    assert quick.ok and quick.result == {"slept": 0}


def test_call_problems_are_error_results(engine: RESTToolEngine, registry: ToolRegistry) -> None:
    (unknown,) = engine.execute("s", [ToolCall("pets::getText", {"nope": 1})])
    assert unknown.error is not None and "unknown argument 'nope'" in unknown.error
    relative = ToolRegistry(loaders=[RESTToolLoader(str(SPEC), namespace="pets", base_url="/v1")])
    with RESTToolEngine(relative) as eng:
        eng.setup("s")
        result = run(eng, "getText")
    assert result.error is not None and "no absolute base URL" in result.error


def test_response_validation_through_the_policy(registry: ToolRegistry, server: ServerState) -> None:
    with RESTToolEngine(
        registry, base_url=server.base_url, policy=CallPolicy(validate_results="error")
    ) as eng:
        eng.setup("s")
        bad = run(eng, "badOutput")
        good = run(eng, "flaky", key="v", failures=0)
    assert bad.error is not None and "violates its output schema" in bad.error
    assert bad.result == {"count": "many"}
    assert good.ok and good.metadata["output_validation"] == "ok"


# ---------------------------------------------------------------------------- sessions and pooling


def test_simulate_sends_only_safe_methods(engine: RESTToolEngine, server: ServerState) -> None:
    before = engine.get_session_state("s")
    results = engine.simulate(
        "s", [ToolCall("pets::getText", {}), ToolCall("pets::createPet", {"name": "Ghost"})]
    )
    assert results[0].ok and results[0].result == "plain words"
    assert results[1].error is not None and "not sent by simulate()" in results[1].error
    assert [r.call_id for r in results] == ["call_0", "call_1"]
    assert all(r["method"] == "GET" for r in server.requests)
    assert engine.get_session_state("s") == before


def test_one_pooled_connection_for_sequential_calls(engine: RESTToolEngine, server: ServerState) -> None:
    for _ in range(20):
        assert run(engine, "getText").ok
    assert len({r["client_port"] for r in server.requests}) == 1


def test_parallel_batch_and_async(engine: RESTToolEngine, server: ServerState) -> None:
    calls = [ToolCall("pets::flaky", {"key": f"k{i}", "failures": 0}) for i in range(8)]
    results = engine.execute("s", calls)
    assert [r.result for r in results] == [{"attempts": 1}] * 8
    again = asyncio.run(engine.execute_async("s", calls[:2]))
    assert [r.result for r in again] == [{"attempts": 2}] * 2


# ---------------------------------------------------------------------------- routes


def test_tools_without_a_route_are_error_results(server: ServerState) -> None:
    good = ToolRegistry(loaders=[RESTToolLoader(str(SPEC), namespace="pets")]).get("pets::getText")
    broken = dict(good.metadata["route"], method=["GET"])
    tools = [
        Tool("plain", "other", metadata={"kind": "file"}),
        Tool("broken", "other", metadata={**good.metadata, "route": broken}),
    ]
    with RESTToolEngine(ToolRegistry(tools), base_url=server.base_url) as eng:
        eng.setup("s")
        plain, bad = eng.execute("s", [ToolCall("other::plain", {}), ToolCall("other::broken", {})])
        (simulated,) = eng.simulate("s", [ToolCall("other::plain", {})])
    assert plain.error is not None and "no route for tool other::plain" in plain.error
    assert "route its namespace to another engine" in plain.error
    assert bad.error is not None and "invalid route of other::broken field method: expected str" in bad.error
    assert simulated.error == plain.error  # simulate() passes it on as data too
    assert server.requests == []


def test_a_route_read_back_from_json_still_executes(server: ServerState) -> None:
    """Tools written by ``fms-dgt tools list --json`` and read back keep working."""
    loaded = ToolRegistry(loaders=[RESTToolLoader(str(SPEC), namespace="pets")]).tools("pets")
    again = [Tool.from_dict(json.loads(json.dumps(t.to_dict()))) for t in loaded]
    with RESTToolEngine(ToolRegistry(again), base_url=server.base_url) as eng:
        eng.setup("s")
        result = run(eng, "echo", value="v", words=["a", "b"])
    assert result.ok, result.error
    assert last(server)["query"] == "words=a|b"


def test_a_refreshed_route_is_used_at_once(tmp_path: Path, server: ServerState) -> None:
    """The engine keeps checked routes; a refresh that changes a tool's route must not hit a stale one."""
    spec = tmp_path / "pets.yaml"
    original = SPEC.read_text()
    spec.write_text(original.replace("http://127.0.0.1:8765/v1", server.base_url))
    registry = ToolRegistry(loaders=[RESTToolLoader(str(spec), namespace="pets")])
    with serve() as other, RESTToolEngine(registry) as eng:
        eng.setup("s")
        assert run(eng, "getText").ok
        spec.write_text(original.replace("http://127.0.0.1:8765/v1", other.base_url))
        registry.refresh()
        assert run(eng, "getText").ok
    assert [r["path"] for r in server.requests] == ["/v1/text"]
    assert [r["path"] for r in other.requests] == ["/v1/text"]


# ---------------------------------------------------------------------------- hostile specs and servers

HOSTILE = Path(__file__).resolve().parents[3] / "data" / "rest" / "hostile.yaml"


@pytest.fixture
def other() -> Iterator[ServerState]:
    """A second server on another port: whatever reaches it left the declared origin."""
    with serve() as state:
        yield state


@pytest.fixture(scope="module")
def hostile() -> ToolRegistry:
    return ToolRegistry(loaders=[RESTToolLoader(str(HOSTILE), namespace="h")])


def hrun(engine: RESTToolEngine, name: str, /, **arguments: Any) -> ToolResult:
    (result,) = engine.execute("s", [ToolCall(f"h::{name}", arguments)])
    return result


@pytest.fixture
def hengine(hostile: ToolRegistry, server: ServerState) -> Iterator[RESTToolEngine]:
    auth = {"bearerAuth": {"token": "bear-9f8e7d"}, "apiKeyHeader": {"value": "hdr-key-4c3b"}}
    with RESTToolEngine(
        hostile, base_url=server.base_url, auth={**auth, "apiKeyQuery": {"value": API_KEY}}
    ) as eng:
        eng.setup("s")
        yield eng


def test_a_path_template_from_json_cannot_change_the_host(
    server: ServerState, other: ServerState, hostile: ToolRegistry
) -> None:
    good = hostile.get("h::longInt")
    port = other.base_url.split(":")[2].split("/")[0]
    for path in (f"@127.0.0.1:{port}/x", "/../../outside", "/%2e%2e/v1/x"):
        edited = Tool(
            "edited", "h", metadata={**good.metadata, "route": {**good.metadata["route"], "path": path}}
        )
        with RESTToolEngine(ToolRegistry([edited]), base_url=server.base_url) as eng:
            eng.setup("s")
            (result,) = eng.execute("s", [ToolCall("h::edited", {})])
        assert result.error is not None and "field path: unsafe path template" in result.error
        assert result.metadata["error"] == {"type": "execution", "phase": "execution"}
    assert server.requests == [] and other.requests == []


def test_a_value_that_climbs_out_of_the_base_path_is_not_sent(
    hengine: RESTToolEngine, server: ServerState
) -> None:
    refused = hrun(hengine, "getItem", item="..")  # /v1/%2E%2E: a decoding server reads /
    assert refused.error is not None and "leaves the declared base" in refused.error
    assert refused.metadata["error"] == {"type": "policy", "phase": "execution"}
    inside = hrun(hengine, "getItem", item="pets")
    assert inside.metadata["status"] == 200
    assert [r["path"] for r in server.requests] == ["/v1/pets"]


@pytest.mark.parametrize("value", ["a#b", "a&api_key=evil&page=9", "x=y", "1+1", "#", "a&b=c#d+e"])
def test_allow_reserved_values_never_break_the_query(
    hengine: RESTToolEngine, server: ServerState, value: str
) -> None:
    result = hrun(hengine, "reservedSecure", filter=value, page="2")
    assert result.ok, result.error  # the server checks the api_key query credential
    query = parse_qs(last(server)["query"])
    assert query == {"filter": [value], "page": ["2"], "api_key": [API_KEY]}
    assert "#" not in last(server)["query"]


def test_reserved_characters_stay_unencoded_where_they_are_safe(
    hengine: RESTToolEngine, server: ServerState
) -> None:
    assert hrun(hengine, "reservedSecure", filter="a/b:c@d,e").ok
    assert last(server)["query"].startswith("filter=a/b:c@d,e&")


def test_same_origin_redirects_are_followed_with_credentials(
    hengine: RESTToolEngine, server: ServerState
) -> None:
    result = hrun(hengine, "redirect", to=f"{server.base_url}/echo/moved")
    assert result.ok, result.error
    assert result.result["path"] == "/v1/echo/moved"
    assert last(server)["headers"]["authorization"] == "Bearer bear-9f8e7d"
    assert last(server)["headers"]["x-api-key"] == "hdr-key-4c3b"


def test_cross_origin_redirects_are_refused_and_nothing_reaches_the_other_host(
    hengine: RESTToolEngine, server: ServerState, other: ServerState
) -> None:
    result = hrun(hengine, "redirect", to=f"{other.base_url}/echo/stolen?x=1")
    assert result.error is not None and "redirect refused for GET" in result.error
    assert result.metadata["error"] == {"type": "policy", "phase": "execution"}
    posted = hrun(hengine, "redirectPost", to=f"{other.base_url}/echo-post", status=307, name="n")
    assert posted.error is not None and "redirect refused for POST" in posted.error
    assert other.requests == []
    text = json.dumps([result.to_dict(), posted.to_dict()])
    assert "bear-9f8e7d" not in text and "hdr-key-4c3b" not in text


def test_redirects_can_be_left_unfollowed(hostile: ToolRegistry, server: ServerState) -> None:
    with RESTToolEngine(hostile, base_url=server.base_url, follow_redirects=False) as eng:
        eng.setup("s")
        result = hrun(eng, "redirect", to="http://elsewhere.invalid/")
    assert (
        result.metadata["status"] == 302
        and result.metadata["headers"]["location"] == "http://elsewhere.invalid/"
    )
    assert result.error is not None and result.error.startswith("HTTP 302")


def test_a_gzip_bomb_is_a_transport_failure_at_the_cap(hengine: RESTToolEngine) -> None:
    result = hrun(hengine, "bomb")
    assert result.error is not None and "response too large from GET" in result.error
    assert result.metadata["error"] == {"type": "transport", "phase": "execution", "limit": 10_000_000}


def test_the_size_cap_is_configurable(hostile: ToolRegistry, server: ServerState) -> None:
    with RESTToolEngine(hostile, base_url=server.base_url, max_response_bytes=2000) as eng:
        eng.setup("s")
        small, large = hrun(eng, "big", size=2000), hrun(eng, "big", size=2001, unsized=True)
    assert small.ok and len(small.result) == 2000
    assert large.error is not None and "more than 2,000 bytes" in large.error
    with pytest.raises(ConfigError, match="max_response_bytes"):
        RESTToolEngine(hostile, max_response_bytes=-1)


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("deep", {}, "nested deeper than 128 levels"),
        ("deep", {"depth": 300}, "nested deeper than 128 levels"),
        ("longInt", {}, "Exceeds the limit"),
        ("halfEmoji", {}, "a string holds a lone surrogate (\\ud83d)"),
    ],
)
def test_unusable_json_bodies_are_clear_errors(
    hengine: RESTToolEngine, name: str, arguments: dict[str, Any], message: str
) -> None:
    result = hrun(hengine, name, **arguments)
    assert result.error is not None and message in result.error and "unusable JSON" in result.error
    assert "Traceback" not in result.error and "RecursionError" not in result.error


def test_secrets_are_redacted_before_the_error_excerpt_is_cut(
    hengine: RESTToolEngine, server: ServerState
) -> None:
    result = hrun(hengine, "echoBack")
    seen = last(server)
    assert seen["headers"]["authorization"] == "Bearer bear-9f8e7d"  # really sent, and echoed back
    assert result.error is not None and result.metadata["status"] == 400
    text = json.dumps(result.to_dict())
    for secret in ("bear-9f8e7d", "hdr-key-4c3b", API_KEY):
        for cut in range(4, len(secret) + 1):
            assert secret[:cut] not in text, f"part of {secret} leaked"


def test_control_characters_in_credentials_are_refused_without_showing_them(registry: ToolRegistry) -> None:
    with pytest.raises(
        ConfigError, match=r"auth entry 'bearerAuth'.*token holds a control character"
    ) as info:
        RESTToolEngine(registry, auth={"bearerAuth": {"token": "tok-from-file-77\n"}})
    assert "tok-from-file-77" not in str(info.value)
    with pytest.raises(ConfigError, match="header 'X-Api-Token'") as info:
        RESTToolEngine(registry, headers={"X-Api-Token": "hdr-from-file-88\r\n"})
    assert "hdr-from-file-88" not in str(info.value)


def test_base_urls_with_credentials_or_a_query_are_config_errors(registry: ToolRegistry) -> None:
    with pytest.raises(ConfigError, match="carries credentials") as info:
        RESTToolEngine(registry, base_url="http://me:pw-123456@127.0.0.1/v1")
    assert "pw-123456" not in str(info.value)
    with pytest.raises(ConfigError, match="query or fragment"):
        RESTToolEngine(registry, base_url="http://127.0.0.1/v1?key=1")


def test_a_body_holding_a_lone_surrogate_names_where(hengine: RESTToolEngine) -> None:
    result = hrun(hengine, "halfEmoji")
    assert result.error is not None and result.result is None
    assert "at /smile/0]" in result.error  # the JSON pointer of the broken string
    json.dumps(result.to_dict(), ensure_ascii=False).encode("utf-8")  # the record stays writable
