"""Tests of the record/replay cache of real calls (fms_dgt/core/tools/engines/cache.py).

Real servers on loopback: the petstore of tests/support/rest_server.py (stateful: created pets
change later answers) and the chat stand-in of tests/support/chat_server.py for the ``lm`` engine.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.rest_server import API_KEY, TOKEN, ServerState, serve

from fms_dgt.config import load_config
from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.engines.base import CallPolicy, ToolEngine
from fms_dgt.core.tools.engines.cache import CacheSettings, CallCache, cacheable, call_key
from fms_dgt.core.tools.engines.rest import RESTToolEngine
from fms_dgt.core.tools.loaders.rest import RESTToolLoader
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.errors import ConfigError
from fms_dgt.plugins import TOOL_ENGINES
from fms_dgt.secrets import register_secret

REPO = Path(__file__).resolve().parents[4]
SPEC = REPO / "data" / "rest" / "petstore.yaml"
AUTH = {"bearerAuth": {"token": TOKEN}, "apiKeyQuery": {"value": API_KEY}}


@pytest.fixture(scope="module")
def registry() -> ToolRegistry:
    return ToolRegistry(loaders=[RESTToolLoader(str(SPEC), namespace="pets")])


@pytest.fixture
def server() -> Iterator[ServerState]:
    with serve() as state:
        yield state


def rest(registry: ToolRegistry, base_url: str, folder: Path, mode: str, **policy: Any) -> RESTToolEngine:
    cache = CacheSettings(mode=mode, path=str(folder))
    return RESTToolEngine(registry, base_url=base_url, auth=AUTH, policy=CallPolicy(cache=cache, **policy))


def call(
    engine: ToolEngine, session: str, tool: str, call_id: str | None = None, /, **arguments: Any
) -> ToolResult:
    if session not in engine._sessions:
        engine.setup(session)
    (result,) = engine.execute(session, [ToolCall(f"pets::{tool}", arguments, call_id)])
    return result


def lines(folder: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for shard in sorted(folder.glob("*.jsonl"))
        for line in shard.read_text().splitlines()
    ]


# ---------------------------------------------------------------- settings


def test_settings_accept_a_mode_or_a_mapping_and_refuse_the_rest() -> None:
    assert CacheSettings.of(None) == CacheSettings() and not CacheSettings().enabled
    assert CacheSettings.of("replay") == CacheSettings(mode="replay")
    assert CacheSettings.of({"mode": "auto", "path": "c"}) == CacheSettings(mode="auto", path="c")
    with pytest.raises(ConfigError, match="invalid cache mode 'sometimes'"):
        CacheSettings.of({"mode": "sometimes"})
    with pytest.raises(ConfigError, match="unknown key 'dir' in cache"):
        CacheSettings.of({"mode": "auto", "dir": "c"})
    with pytest.raises(ConfigError, match="missing cache mode"):
        CacheSettings.of({"path": "c"})
    with pytest.raises(ConfigError, match="invalid cache:"):
        CacheSettings.of(["auto"])


def test_cache_and_max_in_flight_are_engine_keys_of_every_engine(tmp_path: Path) -> None:
    registry = ToolRegistry([Tool("t", "ns")])
    engine = TOOL_ENGINES.create(
        "mock",
        {"cache": {"mode": "record", "path": "calls"}, "max_in_flight": 3, "retries": 1},
        registry=registry,
    )
    assert engine.policy.cache == CacheSettings(mode="record", path="calls")
    assert engine.policy.max_in_flight == 3 and engine.policy.retries == 1
    assert engine.in_flight is not None
    with pytest.raises(ConfigError, match="max_in_flight"):
        TOOL_ENGINES.create("mock", {"max_in_flight": 0}, registry=registry)
    with pytest.raises(ConfigError, match="invalid cache mode"):
        TOOL_ENGINES.create("mock", {"cache": "always"}, registry=registry)
    # A dispatcher's policy never lends its cache or limit to the engine it routes to.
    own = CallPolicy(cache=CacheSettings(mode="auto"), max_in_flight=2)
    outer = CallPolicy(cache=CacheSettings(mode="replay"), max_in_flight=9, retries=4)
    merged = own.within(outer)
    assert merged.cache.mode == "auto" and merged.max_in_flight == 2 and merged.retries == 4


def test_the_cache_is_placed_beside_the_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "run.yaml").write_text("tools:\n  registry: []\n  cache_dir: store\n")
    config = load_config(tmp_path / "run.yaml")
    registry = ToolRegistry([Tool("t", "ns")])
    named = TOOL_ENGINES.create("mock", {"cache": {"mode": "record", "path": "calls/x"}}, registry=registry)
    named.place_cache("sim", base_dir=config.base_dir, cache_dir=config.cache_dir())
    assert named.call_cache() is not None and named.call_cache().folder == tmp_path / "calls" / "x"  # type: ignore[union-attr]
    default = TOOL_ENGINES.create("mock", {"cache": "record"}, registry=registry)
    default.place_cache("sim", base_dir=config.base_dir, cache_dir=config.cache_dir())
    assert default.call_cache().folder == tmp_path / "store" / "calls" / "sim"  # type: ignore[union-attr]
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DGT_CACHE_DIR", raising=False)
    unplaced = TOOL_ENGINES.create("mock", {"cache": "record"}, registry=registry)
    assert unplaced.call_cache().folder == tmp_path / ".cache" / "calls" / "mock"  # type: ignore[union-attr]
    assert TOOL_ENGINES.create("mock", {}, registry=registry).call_cache() is None


# ---------------------------------------------------------------- keys and what is recorded


def test_the_key_covers_tool_fingerprint_arguments_and_material_in_any_key_order() -> None:
    tool = Tool("t", "ns", parameters={"type": "object", "properties": {"a": {}, "b": {}}})
    other = Tool("t", "ns", parameters={"type": "object", "properties": {"a": {"type": "string"}}})
    key = call_key(tool, {"a": 1, "b": [1, 2]}, {})
    assert key == call_key(tool, {"b": [1, 2], "a": 1}, {})
    assert key != call_key(tool, {"a": 1, "b": [2, 1]}, {})
    assert key != call_key(other, {"a": 1, "b": [1, 2]}, {})
    assert key != call_key(Tool("u", "ns", parameters=tool.parameters), {"a": 1, "b": [1, 2]}, {})
    assert key != call_key(tool, {"a": 1, "b": [1, 2]}, {"model": "m"})
    assert call_key(tool, {"a": object()}, {}) is None


def test_only_transient_failures_are_left_out() -> None:
    def failed(**metadata: Any) -> ToolResult:
        return ToolResult("c", "ns::t", error="failed", metadata=metadata)

    assert cacheable(ToolResult("c", "ns::t", result=1))
    assert cacheable(failed(status=404, error={"type": "execution", "phase": "execution", "code": 404}))
    assert cacheable(failed(is_error=True))  # an MCP tool's own error answer
    assert cacheable(failed(error={"type": "policy", "phase": "execution"}))  # refused before sending
    for status in (408, 425, 429, 500, 503):
        assert not cacheable(failed(status=status))
    assert not cacheable(failed(error={"type": "transport", "phase": "execution"}))
    assert not cacheable(failed(error={"type": "timeout", "phase": "execution"}))
    assert not cacheable(failed(error={"type": "execution", "phase": "execution", "code": 502}))


# ---------------------------------------------------------------- record, replay, auto


def test_replay_answers_offline_what_record_saw(registry: ToolRegistry, tmp_path: Path) -> None:
    with serve() as server:
        with rest(registry, server.base_url, tmp_path, "record") as recorder:
            created = call(recorder, "a", "createPet", "c1", name="Rex", tag="dog")
            missing = call(recorder, "a", "getPet", "c2", petId="404")
            listed = call(recorder, "a", "listPets", "c3")
        base_url = server.base_url
    assert created.ok and missing.error and "404" in missing.error
    assert created.metadata["cache"] == "recorded" and missing.metadata["cache"] == "recorded"
    with rest(registry, base_url, tmp_path, "replay") as replayer:  # the server is gone
        again = [
            call(replayer, "a", "createPet", "c1", name="Rex", tag="dog"),
            call(replayer, "a", "getPet", "c2", petId="404"),
            call(replayer, "a", "listPets", "c3"),
        ]
    for live, replayed in zip((created, missing, listed), again, strict=True):
        assert (replayed.result, replayed.error) == (live.result, live.error)
        assert replayed.metadata["cache"] == "hit"
        assert replayed.metadata.get("status") == live.metadata.get("status")
        assert "elapsed_ms" not in replayed.metadata
    assert again[1].metadata["error"] == {"type": "execution", "phase": "execution", "code": 404}


def test_a_miss_in_replay_fails_the_call_clearly_and_sends_nothing(
    registry: ToolRegistry, server: ServerState, tmp_path: Path
) -> None:
    with rest(registry, server.base_url, tmp_path / "empty", "replay") as replayer:
        result = call(replayer, "s", "listPets", limit=3)
    assert server.requests == []
    assert result.error is not None and result.error.startswith(
        "CacheMissError: cache miss for pets::listPets"
    )
    assert str(tmp_path / "empty") in result.error and "record or auto" in result.error
    assert "the folder does not exist" in result.error
    assert result.metadata["error"] == {"type": "policy", "phase": "cache"}


def test_auto_records_misses_and_replays_hits(
    registry: ToolRegistry, server: ServerState, tmp_path: Path
) -> None:
    with rest(registry, server.base_url, tmp_path, "auto") as engine:
        first = call(engine, "s", "listPets", limit=2)
        second = call(engine, "t", "listPets", limit=2)  # another session: the latest answer
        other = call(engine, "t", "listPets", limit=3)
    assert len(server.requests) == 2
    assert (first.metadata["cache"], second.metadata["cache"], other.metadata["cache"]) == (
        "recorded",
        "hit",
        "recorded",
    )
    with rest(registry, server.base_url, tmp_path, "auto") as engine:
        assert call(engine, "u", "listPets", limit=3).metadata["cache"] == "hit"
    assert len(server.requests) == 2


def test_the_same_call_of_the_same_session_gets_its_own_answer(
    registry: ToolRegistry, server: ServerState, tmp_path: Path
) -> None:
    # The server's state changes between two identical calls: each must replay as it was.
    with rest(registry, server.base_url, tmp_path, "record") as recorder:
        before = call(recorder, "a", "listPets", "c1")
        call(recorder, "a", "createPet", "c2", name="Rex")
        after = call(recorder, "b", "listPets", "c1")
    assert before.result == [] and after.result == [{"id": "1", "name": "Rex"}]
    with rest(registry, server.base_url, tmp_path, "replay") as replayer:
        assert call(replayer, "a", "listPets", "c1").result == []
        assert call(replayer, "b", "listPets", "c1").result == after.result
        assert call(replayer, "c", "listPets", "c9").result == after.result  # unknown call: the latest
    assert len(server.requests) == 3


def test_transient_failures_are_not_recorded(registry: ToolRegistry, tmp_path: Path) -> None:
    with serve() as server:
        with rest(registry, server.base_url, tmp_path, "record") as recorder:
            unavailable = call(recorder, "s", "flakyPost", key="k", failures=5)  # 503, POST: not retried
        base_url = server.base_url
    with rest(registry, base_url, tmp_path, "record") as recorder:  # nothing listens any more
        refused = call(recorder, "s", "listPets")
    assert "503" in (unavailable.error or "") and refused.metadata["error"]["type"] == "transport"
    assert "cache" not in unavailable.metadata and "cache" not in refused.metadata
    assert lines(tmp_path) == []


def test_a_replayed_hit_skips_retries_timeouts_and_the_in_flight_limit(
    registry: ToolRegistry, tmp_path: Path
) -> None:
    with serve(latency=0.2) as server, rest(registry, server.base_url, tmp_path, "record") as recorder:
        call(recorder, "s", "listPets", "c1")
    policy = {"timeout": 0.01, "retries": 3, "max_in_flight": 1}
    with rest(registry, server.base_url, tmp_path, "replay", **policy) as replayer:
        replayer.setup("s")
        results = replayer.execute("s", [ToolCall("pets::listPets", {}, "c1")] * 6)
    assert all(r.ok and r.metadata["cache"] == "hit" and "attempts" not in r.metadata for r in results)


# ---------------------------------------------------------------- secrets


class Leaky(ToolEngine):
    """An engine that puts a secret everywhere a result can hold one."""

    def call(self, tool: Tool, call: ToolCall, state: dict[str, Any]) -> ToolResult:
        secret = call.arguments["secret"]
        return ToolResult(
            call.call_id,
            call.name,
            result={"echo": f"Bearer {secret}", secret: 1},
            error=None,
            metadata={"headers": {"authorization": secret}},
        )


def test_secrets_never_reach_the_cache(registry: ToolRegistry, server: ServerState, tmp_path: Path) -> None:
    secret = "cache-secret-8412"
    register_secret(secret)
    tool = Tool("leak", "ns", parameters={"type": "object", "properties": {"secret": {"type": "string"}}})
    leaky = Leaky(
        ToolRegistry([tool]),
        policy=CallPolicy(cache=CacheSettings(mode="record", path=str(tmp_path / "leaky"))),
    )
    leaky.setup("s")
    [result] = leaky.execute("s", [ToolCall("ns::leak", {"secret": secret})])
    assert result.ok and result.metadata["cache"] == "recorded"
    # The loopback server echoes the bearer token and the query key it received.
    cache = CacheSettings(mode="record", path=str(tmp_path / "rest"))
    with RESTToolEngine(
        registry,
        base_url=server.base_url,
        auth=AUTH,
        headers={"Authorization": f"Bearer {TOKEN}"},
        policy=CallPolicy(cache=cache),
    ) as recorder:
        echoed = call(recorder, "s", "echo", value="v", q="x")
        keyed = call(recorder, "s", "secureEcho")
    assert echoed.ok and keyed.ok
    assert TOKEN in json.dumps(server.requests) and API_KEY in json.dumps(server.requests)
    stored = "".join(p.read_text() for p in tmp_path.rglob("*.jsonl"))
    assert stored.count("***") >= 4
    for value in (secret, TOKEN, API_KEY):
        assert value not in stored


# ---------------------------------------------------------------- the store


def test_damaged_lines_are_skipped_with_a_warning(
    registry: ToolRegistry, server: ServerState, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with rest(registry, server.base_url, tmp_path, "record") as recorder:
        for limit in (1, 2, 3):
            call(recorder, "s", "listPets", f"c{limit}", limit=limit)
    [shard] = tmp_path.glob("*.jsonl")
    good = shard.read_bytes().splitlines(keepends=True)
    # a garbage line in the middle, and the last line cut as by a writer killed mid-write
    wrong = json.dumps({**json.loads(good[2]), "metadata": [1]}).encode() + b"\n"  # JSON, wrong shape
    shard.write_bytes(good[0] + b'{"key": "x", not json\n' + good[1] + wrong + good[2][:40])
    caplog.set_level(logging.WARNING)
    with rest(registry, server.base_url, tmp_path, "replay") as replayer:
        assert call(replayer, "s", "listPets", "c1", limit=1).metadata["cache"] == "hit"
        assert call(replayer, "s", "listPets", "c2", limit=2).metadata["cache"] == "hit"
        lost = call(replayer, "s", "listPets", "c3", limit=3)
    assert lost.error is not None and "CacheMissError" in lost.error
    assert f"skipped 2 unreadable line(s) of cache shard {shard} (first: line 2)" in caplog.text
    assert f"skipped the cut last line 5 of cache shard {shard}" in caplog.text


def _fill(folder: str, start: int, count: int) -> None:
    """Record ``count`` answers through one cache (run in a child process)."""
    cache = CallCache(Path(folder), mode="record", engine="e")
    tool = Tool("t", "ns")
    for n in range(start, start + count):
        answer = ToolResult(f"c{n}", "ns::t", result={"n": n, "pad": "x" * (n % 700) * 10})
        cache.answer(tool, ToolCall("ns::t", {"n": n}), ("s", f"c{n}"), {}, lambda a=answer: a)
    cache.close()


def test_concurrent_writers_never_interleave(tmp_path: Path) -> None:
    processes = [
        multiprocessing.get_context("spawn").Process(target=_fill, args=(str(tmp_path), 1000 * (i + 1), 150))
        for i in range(3)
    ]
    for process in processes:
        process.start()
    threads = [threading.Thread(target=_fill, args=(str(tmp_path), 100 * i, 100)) for i in range(6)]
    for thread in threads:
        thread.start()
    for worker in [*threads, *processes]:
        worker.join()
    assert all(p.exitcode == 0 for p in processes)
    assert len(list(tmp_path.glob("*.jsonl"))) == 9  # one shard per writer
    recorded = lines(tmp_path)  # every line parses
    assert sorted(r["result"]["n"] for r in recorded) == sorted(
        [*range(600), *(n for i in range(3) for n in range(1000 * (i + 1), 1000 * (i + 1) + 150))]
    )
    replay = CallCache(tmp_path, mode="replay", engine="e")
    assert len(replay) == 1050


def test_a_forked_writer_starts_its_own_shard(tmp_path: Path) -> None:
    cache = CallCache(tmp_path, mode="record", engine="e")
    tool = Tool("t", "ns")
    cache.answer(
        tool, ToolCall("ns::t", {"n": 0}), ("s", "c0"), {}, lambda: ToolResult("c0", "ns::t", result=0)
    )
    child = multiprocessing.get_context("fork").Process(target=_record_one, args=(cache,))
    child.start()
    child.join()
    assert child.exitcode == 0
    assert len(list(tmp_path.glob("*.jsonl"))) == 2 and len(lines(tmp_path)) == 2


def _record_one(cache: CallCache) -> None:
    cache.answer(
        Tool("t", "ns"),
        ToolCall("ns::t", {"n": 1}),
        ("s", "c1"),
        {},
        lambda: ToolResult("c1", "ns::t", result=1),
    )


# ---------------------------------------------------------------- the lm engine


def test_lm_answers_are_keyed_by_model_and_prompt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from support.chat_server import serve as chat

    from fms_dgt.core.tools.engines.lm import LMToolEngine

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    tool = Tool("quote", "fin", parameters={"type": "object", "properties": {"symbol": {"type": "string"}}})
    registry = ToolRegistry([tool])

    def lm(url: str, model: str, mode: str) -> LMToolEngine:
        cache = CacheSettings(mode=mode, path=str(tmp_path))
        return LMToolEngine(registry, base_url=url, model=model, policy=CallPolicy(cache=cache))

    with chat(lambda body: {"price": len(body["messages"][-1]["content"])}) as server:
        with lm(server.url, "sim", "record") as engine:
            engine.setup("s")
            first, second = (
                engine.execute("s", [ToolCall("fin::quote", {"symbol": "IBM"}, f"c{i}")])[0] for i in (1, 2)
            )
        url = server.url
    assert first.result != second.result  # the second prompt holds the first call: another question
    with lm(url, "sim", "replay") as engine:
        engine.setup("s")
        again = [engine.execute("s", [ToolCall("fin::quote", {"symbol": "IBM"}, f"c{i}")])[0] for i in (1, 2)]
    assert [r.result for r in again] == [first.result, second.result]
    with lm(url, "bigger-sim", "replay") as engine:
        engine.setup("s")
        [other] = engine.execute("s", [ToolCall("fin::quote", {"symbol": "IBM"}, "c1")])
    assert other.error is not None and "CacheMissError" in other.error


# ---------------------------------------------------------------- a whole run


def _job_config(base_url: str, cache: dict[str, Any]) -> dict[str, Any]:
    """configs/rest_example.yaml with the debug operations left out and a cache on the engine."""
    return {
        "tools": {
            "registry": [
                {
                    "type": "rest",
                    "spec": str(SPEC),
                    "namespace": "petstore",
                    "include": {"tags": ["pets"]},
                    "exclude": {"methods": ["delete"]},
                    "base_url": base_url,
                    "engine": "petstore",
                }
            ],
            "engines": {
                "petstore": {
                    "type": "rest",
                    "auth": {"bearerAuth": {"token": TOKEN}},
                    "timeout": 10,
                    "retries": 2,
                    "backoff": 0.2,
                    "cache": cache,
                }
            },
        },
        "generation": {
            "seed": 7,
            "count": 24,
            "scenarios": [
                {"name": "single", "sampler": {"type": "tc/random", "k": 1}},
                {"name": "pair", "sampler": {"type": "tc/random", "k": 2}},
            ],
        },
    }


def test_a_run_replayed_from_its_own_cache_is_byte_identical_offline(tmp_path: Path) -> None:
    from fms_dgt.databuilders.tool_calling.job import GenerationJob

    cache = {"mode": "record", "path": str(tmp_path / "calls")}
    with serve() as server:
        with GenerationJob(_job_config(server.base_url, cache), out=tmp_path / "recorded") as job:
            summary = job.run()
        # A call the live API refused (a 404 for a pet that does not exist) rejects its record.
        assert summary.written + summary.rejected == 24 and summary.written >= 12
        base_url = server.base_url
        sent = len(server.requests)
    assert sent >= 24 and any(r["method"] == "POST" for r in server.requests)
    recorded = (tmp_path / "recorded" / "records.jsonl").read_bytes()
    # The server is gone: every answer must come from the cache.
    replay = {**cache, "mode": "replay"}
    with GenerationJob(_job_config(base_url, replay), out=tmp_path / "replayed") as job:
        assert job.run().written == summary.written
    assert (tmp_path / "replayed" / "records.jsonl").read_bytes() == recorded
    rejects = (tmp_path / "recorded" / "rejects.jsonl").read_bytes()
    assert (tmp_path / "replayed" / "rejects.jsonl").read_bytes() == rejects
    records = [json.loads(line) for line in recorded.splitlines()]
    assert {e for r in records for e in r["metadata"]["engines"]} == {"petstore"}
    assert TOKEN not in recorded.decode()
