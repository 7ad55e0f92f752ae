"""Tests of the HTTP exits' shared rules (fms_dgt/core/tools/transport.py), on real loopback servers.

Every case that leaves the declared base is also checked on the receiving side: a second server on
another port records every request, and must see none.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Iterator
from urllib.parse import quote

import httpx2
import pytest
from support.rest_server import ServerState, serve

from fms_dgt.core.tools.transport import (
    Sender,
    byte_cap,
    decode_json,
    has_control_character,
    origin_base,
    parse_base,
)
from fms_dgt.errors import (
    ConfigError,
    HTTPTransportError,
    RequestRefusedError,
    ResponseTooLargeError,
    RESTCallError,
)


@pytest.fixture
def server() -> Iterator[ServerState]:
    with serve() as state:
        yield state


@pytest.fixture
def other() -> Iterator[ServerState]:
    """A second server on another port: what reaches it left the declared origin."""
    with serve() as state:
        yield state


@pytest.fixture
def sender() -> Iterator[Sender]:
    sent = Sender(timeout=5.0)
    yield sent
    sent.close()


# ---------------------------------------------------------------------------- the declared base


@pytest.mark.parametrize(
    ("url", "admitted"),
    [
        ("http://h:8080/v1", True),
        ("http://h:8080/v1/pets/1", True),
        ("http://H:8080/v1/pets", True),
        ("http://h:8080/v1/pets/%2E%2E", True),  # back to /v1: still inside
        ("http://h:8080/v1/%2e%2e/admin", False),  # a server decoding the dots reaches /admin
        ("http://h:8080/v1/..%2F..%2Fadmin", False),
        ("http://h:8080/v1/..%5C..%5Cadmin", False),  # backslashes read as separators
        ("http://h:8080/v1/../admin", False),  # the client itself removes the dots
        ("http://h:8080/v10", False),  # a prefix of the text, not of the path
        ("http://h:8080/", False),
        ("https://h:8080/v1", False),
        ("http://h:8081/v1", False),
        ("http://other:8080/v1", False),
        ("http://u:p@h:8080/v1", False),
    ],
)
def test_base_admits_only_its_origin_and_path(url: str, admitted: bool) -> None:
    assert parse_base("http://h:8080/v1/").admits(httpx2.URL(url)) is admitted


def test_default_ports_and_an_empty_prefix() -> None:
    base = parse_base("https://api.example.com")
    assert base.port == 443 and base.prefix == ""
    assert base.admits(httpx2.URL("https://api.example.com:443/anything"))
    assert not base.admits(httpx2.URL("http://api.example.com/anything"))
    assert origin_base("http://h:9/v1/chat/completions").url == "http://h:9"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("/relative", r"not an http\(s\) URL"),
        ("ftp://h/x", r"not an http\(s\) URL"),
        ("http://user:pa55word@h/v1", "carries credentials"),
        ("http://h/v1?key=abc", "query or fragment"),
        ("http://user:pa55word@h:port/v1", "invalid base URL 'http://h:port/v1'"),
        ("ftp://user:pa55word@h/x", r"no absolute base URL: 'ftp://h/x'"),
    ],
)
def test_bad_base_urls_are_refused(url: str, message: str) -> None:
    with pytest.raises(RESTCallError, match=message) as info:
        parse_base(url)
    assert "pa55word" not in str(info.value)


def test_control_characters_and_byte_caps() -> None:
    assert has_control_character("token\n") and has_control_character("a\x7fb")
    assert not has_control_character("plain-token")
    assert byte_cap(10, "rest") == 10
    with pytest.raises(ConfigError, match="max_response_bytes"):
        byte_cap(0, "rest")


# ---------------------------------------------------------------------------- bounded JSON


def test_json_too_deep_or_with_huge_integers_is_a_clear_error() -> None:
    assert decode_json(b'{"a": [1, {"b": 2}]}', "x") == {"a": [1, {"b": 2}]}
    for body in (b"[" * 100_000 + b"]" * 100_000, b"[" * 200 + b"]" * 200):
        with pytest.raises(RESTCallError, match="nested deeper than 128 levels"):
            decode_json(body, "the answer")
    with pytest.raises(RESTCallError, match="unusable JSON in the answer: Exceeds the limit"):
        decode_json(b"1" * 5000, "the answer")
    with pytest.raises(ValueError, match="Expecting value"):
        decode_json(b"not json", "the answer")


# ---------------------------------------------------------------------------- sending


def test_a_request_outside_the_base_is_not_sent(
    sender: Sender, server: ServerState, other: ServerState
) -> None:
    base = parse_base(server.base_url)
    for url in (
        f"{other.base_url}/text",
        server.base_url.replace("/v1", "/admin"),
        f"{server.base_url}/%2e%2e/x",
    ):
        with pytest.raises(RequestRefusedError, match="Nothing was sent"):
            sender.send("GET", url, base)
    assert server.requests == [] and other.requests == []


def test_same_base_redirects_keep_credentials(sender: Sender, server: ServerState) -> None:
    target = quote(f"{server.base_url}/secure?api_key=k3y-value", safe="")
    reply = sender.send(
        "GET",
        f"{server.base_url}/redirect?to={target}",
        parse_base(server.base_url),
        headers={"Authorization": "Bearer tok-1234", "X-Api-Key": "key-5678"},
    )
    assert reply.status == 200 and reply.url.path == "/v1/secure"
    followed = server.requests[-1]
    assert followed["headers"]["authorization"] == "Bearer tok-1234"
    assert followed["headers"]["x-api-key"] == "key-5678"


def test_cross_origin_redirects_are_refused(sender: Sender, server: ServerState, other: ServerState) -> None:
    for to in (f"{other.base_url}/echo/x", server.base_url.replace("/v1", "/elsewhere")):
        with pytest.raises(RequestRefusedError, match="redirect refused for GET") as info:
            sender.send(
                "GET",
                f"{server.base_url}/redirect?to={quote(to, safe='')}",
                parse_base(server.base_url),
                headers={"X-Api-Key": "key-5678", "Cookie": "session=abcd1234"},
            )
        assert "outside the declared base" in str(info.value)
    assert other.requests == []
    assert [r["path"] for r in server.requests] == ["/v1/redirect", "/v1/redirect"]


def test_see_other_turns_a_post_into_a_get_without_its_body(sender: Sender, server: ServerState) -> None:
    target = quote(f"{server.base_url}/text", safe="")
    reply = sender.send(
        "POST",
        f"{server.base_url}/redirect?status=303&to={target}",
        parse_base(server.base_url),
        headers={"Content-Type": "application/json"},
        body={"content": b'{"a": 1}'},
    )
    assert reply.text == "plain words"
    assert server.requests[-1]["method"] == "GET" and server.requests[-1]["body"] == ""
    assert "content-type" not in server.requests[-1]["headers"]


def test_redirect_loops_end(sender: Sender, server: ServerState) -> None:
    with pytest.raises(HTTPTransportError, match="too many redirects"):
        sender.send("GET", f"{server.base_url}/redirect", parse_base(server.base_url))
    assert len(server.requests) == 11


def test_a_gzip_bomb_stops_at_the_cap_without_inflating(sender: Sender, server: ServerState) -> None:
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(ResponseTooLargeError, match=r"more than 10,000,000 bytes \(decompressed\)"):
            sender.send("GET", f"{server.base_url}/gzip-bomb", parse_base(server.base_url))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40_000_000, "the bomb was inflated in memory"
    assert time.perf_counter() - started < 5


def test_sizes_are_capped_with_and_without_content_length(sender: Sender, server: ServerState) -> None:
    base = parse_base(server.base_url)
    assert len(sender.send("GET", f"{server.base_url}/big?size=1000", base, max_bytes=1000).content) == 1000
    for query in ("size=5000", "size=5000&unsized=true"):
        with pytest.raises(ResponseTooLargeError) as info:
            sender.send("GET", f"{server.base_url}/big?{query}", base, max_bytes=1000)
        assert info.value.limit == 1000


def test_one_deadline_bounds_the_whole_exchange(server: ServerState) -> None:
    sender = Sender(timeout=0.5)
    started = time.perf_counter()
    try:
        with pytest.raises(HTTPTransportError, match="ran out of time") as info:
            sender.send("GET", f"{server.base_url}/trickle", parse_base(server.base_url))
    finally:
        sender.close()
    assert info.value.timed_out
    assert time.perf_counter() - started < 2.0  # the trickle alone would take 4 s


def test_connection_failures_are_transport_errors(sender: Sender) -> None:
    with serve() as gone:
        url = gone.base_url
    with pytest.raises(HTTPTransportError, match=r"request failed for GET .*ConnectError"):
        sender.send("GET", f"{url}/text", parse_base(url))
