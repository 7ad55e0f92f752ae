"""Which parts of an MCP server's configuration are secrets, registered with :mod:`fms_dgt.secrets`.

A server's configuration carries credentials in several places: the HTTP headers of a remote
server (``Authorization: Bearer ...``), the environment of a stdio server (``GITHUB_TOKEN``), its
command line (``--api-key=...``) and, now and then, its URL (``https://user:pw@host/?token=...``).
:func:`register_spec_secrets` finds them and registers each with
:func:`fms_dgt.secrets.register_secret`, so every exit of the process (messages, load reports,
tool metadata, log records) shows ``***`` instead. It treats as secret:

* the value of every HTTP header but the few that never carry one (``Accept``,
  ``Content-Type``, ``User-Agent``...): a remote server's headers are there to authenticate;
* the value of an environment variable, URL query parameter or ``--flag=value``
  argument whose *name* looks like a credential (auth, key, token, secret, password, cookie,
  session, credential, private), and the argument after ``--api-key``, ``--token``, ``--secret``,
  ``--password`` and the like;
* a value shaped like a well-known token (``sk-...``, ``ghp_...``, ``xoxb-...``, ``AKIA...``, a
  JWT);
* the password of a URL (``scheme://user:password@host``);
* any value holding the value of a credential-named environment variable of this process (what
  ``${API_TOKEN}`` in a config turns into);
* any value resolved from ``${VAR}`` when connecting (:func:`register_resolved`).

A value that is not a secret (``Accept: application/json``, ``LOG_LEVEL=debug``) is left alone:
registering it would hide ordinary text in every record.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Final
from urllib.parse import parse_qsl, urlsplit

from fms_dgt.secrets import install_log_filter, register_secret

__all__ = ["looks_sensitive", "register_resolved", "register_spec_secrets", "secrets_in"]

_SENSITIVE: Final = re.compile(
    r"auth|key|token|secret|passw|cookie|session|credential|private|bearer", re.IGNORECASE
)
# A flag that names one of these is followed by its value; "auth", "session", "private" flags
# are as often switches (--no-auth, --private) whose next argument is something else.
_FLAG_WITH_SECRET: Final = re.compile(r"token|key|secret|passw|credential|bearer", re.IGNORECASE)
_TOKEN_SHAPES: Final = re.compile(
    r"(?:sk-|sk_live_|sk_test_|ghp_|gho_|ghs_|ghu_|github_pat_|glpat-|xox[abposr]-|AKIA|ASIA|hf_|eyJ)"
    r"[A-Za-z0-9._\-+/=]{8,}"
)
# Headers that never carry a credential; every other header's value is treated as one.
_PLAIN_HEADERS: Final = frozenset(
    {
        "accept",
        "accept-encoding",
        "accept-language",
        "cache-control",
        "connection",
        "content-type",
        "mcp-protocol-version",
        "user-agent",
    }
)
# Environment values shorter than this are not looked for inside arguments (``1``, ``true``...).
_MIN_ENV_SECRET: Final = 8


def looks_sensitive(name: str) -> bool:
    """True when a header, variable, parameter or flag called ``name`` holds a credential."""
    return bool(_SENSITIVE.search(name))


def register_spec_secrets(
    args: Sequence[str], env: Mapping[str, str] | None, headers: Mapping[str, str] | None, url: str | None
) -> None:
    """Register every secret found in a server's command line, environment, headers and URL."""
    found = set(secrets_in(args, env, headers, url))
    if not found:
        return
    for secret in found:
        register_secret(secret)
    install_log_filter()


def register_resolved(template: str, resolved: str) -> None:
    """Register what a ``${VAR}`` in ``template`` resolved to (the text around it is not secret)."""
    if "${" not in template or template == resolved:
        return
    for part in _resolved_parts(template, resolved):
        register_secret(part)
    install_log_filter()


def secrets_in(
    args: Sequence[str], env: Mapping[str, str] | None, headers: Mapping[str, str] | None, url: str | None
) -> Iterator[str]:
    """The secrets a server's configuration holds (see the module docstring)."""
    yield from _in_args(args)
    for name, value in (env or {}).items():
        yield from _named(str(name), str(value))
    for name, value in (headers or {}).items():
        yield from _named(str(name), str(value), secret=str(name).lower() not in _PLAIN_HEADERS)
    if url:
        yield from _in_url(url)
    yield from _environment_values(_all_values(args, env, headers, url))


def _in_args(args: Sequence[str]) -> Iterator[str]:
    for i, arg in enumerate(args):
        flag, sep, value = arg.partition("=")
        if sep and looks_sensitive(flag):
            yield from _named(flag, value)
        elif _takes_secret(arg) and i + 1 < len(args):
            yield from _named(arg, args[i + 1])
        yield from _shaped(arg)
        if "://" in arg:
            yield from _in_url(arg)


def _takes_secret(arg: str) -> bool:
    """``--api-key`` (whose value is the next argument), not ``--no-auth`` or ``--private``."""
    return arg.startswith("-") and not arg.startswith("--no-") and bool(_FLAG_WITH_SECRET.search(arg))


def _named(name: str, value: str, *, secret: bool = False) -> Iterator[str]:
    """The secrets in ``value``, all of it when ``name`` looks like a credential (or ``secret``)."""
    if (secret or looks_sensitive(name)) and value.strip():
        yield value
        scheme, _, token = value.strip().partition(" ")
        if token and scheme.isalpha():  # "Bearer abc": the token alone appears elsewhere too
            yield token.strip()
    yield from _shaped(value)
    if "://" in value:
        yield from _in_url(value)


def _shaped(text: str) -> Iterator[str]:
    yield from (match.group(0) for match in _TOKEN_SHAPES.finditer(text))


def _in_url(url: str) -> Iterator[str]:
    try:
        parts = urlsplit(url.strip())
        password = parts.password
    except ValueError:
        return
    if password:
        yield password
    for name, value in parse_qsl(parts.query):
        if looks_sensitive(name) and value:
            yield value


def _environment_values(values: Iterable[str]) -> Iterator[str]:
    """Values of this process's credential-named variables that appear inside ``values``."""
    secrets = [v for k, v in os.environ.items() if looks_sensitive(k) and len(v.strip()) >= _MIN_ENV_SECRET]
    if not secrets:
        return
    for value in values:
        yield from (secret for secret in secrets if secret in value)


def _all_values(
    args: Sequence[str], env: Mapping[str, str] | None, headers: Mapping[str, str] | None, url: str | None
) -> Iterator[str]:
    yield from (str(a) for a in args)
    yield from (str(v) for v in (env or {}).values())
    yield from (str(v) for v in (headers or {}).values())
    if url:
        yield url


def _resolved_parts(template: str, resolved: str) -> Iterator[str]:
    """The parts of ``resolved`` that came from variables: the template's literal text removed."""
    literals = [p for p in re.split(r"\$\{[^}]*\}", template) if p]
    rest = resolved
    for literal in literals:
        head, sep, tail = rest.partition(literal)
        if not sep:
            break
        if head:
            yield head
        rest = tail
    if rest:
        yield rest
