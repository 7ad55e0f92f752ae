"""Tests of credentials, security schemes and redaction (fms_dgt/core/tools/openapi/auth.py).

End-to-end behaviour against a real server is in tests/core/tools/engines/test_rest.py.
"""

from __future__ import annotations

import base64
import logging

import pytest

from fms_dgt.core.tools.openapi import (
    Credential,
    Credentials,
    Redactor,
    Request,
    Route,
    SecretLogFilter,
    SecurityScheme,
    is_sensitive_header,
)
from fms_dgt.errors import ConfigError

ROUTE = Route(
    method="GET",
    path="/",
    base_url="http://h",
    security=({"oauth": (), "key": ()}, {"bearer": ()}, {}),
    security_schemes={
        "bearer": SecurityScheme(type="http", scheme="bearer"),
        "basic": SecurityScheme(type="http", scheme="basic"),
        "key": SecurityScheme(type="apiKey", location="query", name="api_key"),
        "oauth": SecurityScheme(type="oauth2"),
    },
)


def authenticate(auth: dict[str, object], route: Route = ROUTE) -> Request:
    request = Request("GET", "http://h", "/")
    Credentials(auth).authenticate(route, request)
    return request


def test_first_alternative_with_every_credential_wins() -> None:
    request = authenticate({"bearer": "tok-1", "key": {"value": "k-1"}})
    assert request.headers == {"Authorization": "Bearer tok-1"}  # oauth has no credential
    request = authenticate({"oauth": {"token": "o-1"}, "key": {"value": "k-1"}, "bearer": "tok-1"})
    assert request.headers == {"Authorization": "Bearer o-1"} and request.query == ["api_key=k-1"]
    assert request.auth_applied == ["oauth", "key"]
    assert authenticate({}).auth_applied == []


def test_scheme_decides_where_a_credential_goes() -> None:
    route = Route(
        method="GET",
        path="/",
        base_url="http://h",
        security=({"basic": ()},),
        security_schemes=ROUTE.security_schemes,
    )
    request = authenticate({"basic": {"username": "u", "password": "p"}}, route)
    assert request.headers["Authorization"] == "Basic " + base64.b64encode(b"u:p").decode()


def test_explicit_entries_apply_to_every_call() -> None:
    auth = {
        "tenant": {"type": "apiKey", "in": "cookie", "name": "tenant", "value": "acme corp"},
        "bearer": "tok-1",  # a scheme of the route without a type: only when chosen
        "basic": {
            "type": "basic",
            "username": "u",
            "password": "p",
        },  # a scheme of the route: only when chosen
    }
    request = authenticate(auth)
    assert request.cookies == ["tenant=acme%20corp"]
    assert request.headers == {"Authorization": "Bearer tok-1"}
    assert request.auth_applied == ["bearer", "tenant"]


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        (5, "expected a mapping"),
        ({"type": "digest"}, "invalid auth type 'digest'"),
        ({"type": "apiKey", "in": "body", "name": "k"}, "apiKey needs in: header|query|cookie and name"),
    ],
)
def test_bad_entries_are_config_errors(raw: object, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        Credential.from_config("k", raw)


def test_secrets_are_never_printed_and_include_the_basic_pair() -> None:
    credential = Credential.from_config("basic", {"username": "admin", "password": "hunter22"})
    assert "hunter22" not in repr(credential)
    assert credential.secrets() == ["hunter22", base64.b64encode(b"admin:hunter22").decode()]
    assert Credential.from_config("t", "tok").secrets() == ["tok"]


def test_redactor_hides_plain_and_url_encoded_secrets() -> None:
    redactor = Redactor(["s3cret/key", "ab"])  # "ab" is too short to hide safely
    assert redactor.text("x=s3cret%2Fkey&y=s3cret/key ab") == "x=***&y=*** ab"
    assert redactor.value({"s3cret/key": ["s3cret/key", 1]}) == {"***": ["***", 1]}
    assert not Redactor([]).active and Redactor([]).value("s3cret/key") == "s3cret/key"


def test_log_filter_redacts_every_live_redactor() -> None:
    log_filter = SecretLogFilter()
    redactor = Redactor(["k3y-value"])
    log_filter.redactors.add(redactor)
    record = logging.LogRecord("httpx2", logging.INFO, __file__, 1, "GET %s", ("/a?api_key=k3y-value",), None)
    assert log_filter.filter(record) and record.getMessage() == "GET /a?api_key=***"
    del redactor  # only live engines' secrets are kept
    assert len(log_filter.redactors) == 0


def test_sensitive_header_names() -> None:
    assert all(is_sensitive_header(n) for n in ("X-Api-Key", "Authorization", "x-session-id", "Cookie"))
    assert not is_sensitive_header("X-Client")


def test_values_with_control_characters_are_refused_without_showing_them() -> None:
    for key, value in (("token", "tok-file-1234\n"), ("password", "pw\x00-5678"), ("value", "k\x7fey-9012")):
        with pytest.raises(ConfigError, match=f"auth entry 'entry' for rest engine: its {key} holds") as info:
            Credential.from_config("entry", {key: value})
        assert value.strip() not in str(info.value) and value not in str(info.value)


def test_the_redactor_is_the_process_one_and_credentials_register_there() -> None:
    from fms_dgt import secrets

    assert Redactor is secrets.Redactor
    Credentials({"basic": {"username": "admin", "password": "auth-test-pw-31"}}).register()
    pair = base64.b64encode(b"admin:auth-test-pw-31").decode()
    assert secrets.redact(f"pw auth-test-pw-31, header Basic {pair}") == "pw ***, header Basic ***"
