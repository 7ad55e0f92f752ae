"""Tests of fms_dgt/core/tools/mcp/redaction.py: the secrets of a server's configuration.

Secrets registered here are hidden for the rest of the test process, so every value is unique to
its test.
"""

from __future__ import annotations

import pytest

from fms_dgt.core.tools.mcp import MCPServerSpec
from fms_dgt.core.tools.mcp.redaction import looks_sensitive, register_resolved, secrets_in
from fms_dgt.secrets import redact


@pytest.mark.parametrize(
    ("args", "found"),
    [
        (["--token=tok-aaa-111"], {"tok-aaa-111"}),
        (["--api-key", "key-bbb-222", "--verbose"], {"key-bbb-222"}),
        (["API_SECRET=sec-ccc-333"], {"sec-ccc-333"}),
        (["--model", "gpt-4o", "serve.py"], set()),
        (["--no-auth", "serve.py", "--private", "x.py"], set()),
        (["ghp_0123456789abcdefghij"], {"ghp_0123456789abcdefghij"}),
        (["--db", "postgres://user:pw-ddd-444@db/x"], {"pw-ddd-444"}),
        (["--endpoint=https://h/x?api_key=qk-eee-555&page=2"], {"qk-eee-555"}),
    ],
)
def test_secrets_in_args(args: list[str], found: set[str]) -> None:
    assert set(secrets_in(args, None, None, None)) == found


def test_secrets_in_env_headers_and_url() -> None:
    env = {"GITHUB_TOKEN": "env-fff-666", "LOG_LEVEL": "debug", "HOME_DIR": "/home/someone"}
    headers = {"Authorization": "Bearer hdr-ggg-777", "Accept": "text/plain", "X-Tenant": "acme-tenant-77"}
    found = set(secrets_in((), env, headers, "https://u:url-hhh-888@h/mcp"))
    assert found == {"env-fff-666", "Bearer hdr-ggg-777", "hdr-ggg-777", "acme-tenant-77", "url-hhh-888"}
    assert set(secrets_in((), None, {"User-Agent": "xoxb-12345678901"}, None)) == {"xoxb-12345678901"}


def test_a_value_of_a_credential_variable_found_in_an_argument(monkeypatch: pytest.MonkeyPatch) -> None:
    # What `args: ["${MY_SERVICE_KEY}"]` becomes once the config resolved it.
    monkeypatch.setenv("MY_SERVICE_KEY", "var-iii-999-xyz")
    monkeypatch.setenv("DATA_DIR", "/srv/data-not-secret")
    assert set(secrets_in(["serve.py", "var-iii-999-xyz", "/srv/data-not-secret"], None, None, None)) == {
        "var-iii-999-xyz"
    }


def test_resolved_variables_are_registered_without_the_text_around_them() -> None:
    register_resolved("Bearer ${T}", "Bearer res-jjj-000")
    assert redact("sent Bearer res-jjj-000 and res-jjj-000") == "sent Bearer *** and ***"
    register_resolved("plain", "plain")  # no variable: nothing registered
    assert redact("plain") == "plain"


def test_describe_and_repr_hide_what_the_spec_holds() -> None:
    spec = MCPServerSpec(
        name="gh",
        command="github-mcp",
        args=("--token=spec-kkk-111", "--read-only"),
        env={"GITHUB_PERSONAL_ACCESS_TOKEN": "spec-lll-222"},
    )
    assert spec.describe() == "gh (stdio: github-mcp --token=*** --read-only)"
    assert "spec-lll-222" not in repr(spec) and "GITHUB_PERSONAL_ACCESS_TOKEN" in repr(spec)
    url = "https://r.example/mcp?token=spec-mmm-333"
    remote = MCPServerSpec(name="r", url=url, headers={"X-Api-Key": "spec-nnn-444"})
    assert "spec-mmm-333" not in remote.describe() and "spec-nnn-444" not in repr(remote)
    assert redact("key spec-nnn-444 in a log line") == "key *** in a log line"


@pytest.mark.parametrize("name", ["Authorization", "X-API-KEY", "cookie", "GITHUB_TOKEN", "db_password"])
def test_credential_names(name: str) -> None:
    assert looks_sensitive(name)


@pytest.mark.parametrize("name", ["Accept", "LOG_LEVEL", "PWD", "model", "--verbose"])
def test_ordinary_names(name: str) -> None:
    assert not looks_sensitive(name)
