"""Credentials for REST calls: configuring them, applying a route's security, and keeping them secret.

Credentials come from the ``rest`` engine's ``auth:`` config, keyed by the spec's security scheme
names::

    auth:
      bearerAuth: {token: ${PETSTORE_TOKEN}}
      api_key: {value: ${PETSTORE_KEY}}
      basicAuth: {username: demo, password: ${PETSTORE_PASSWORD}}
      extra: {type: apiKey, in: header, name: X-Tenant, value: acme}   # applied to every call

For each call, :meth:`Credentials.authenticate` takes the route's first security alternative whose
schemes all have credentials and applies them as the scheme says; entries with an explicit ``type``
that are not schemes of the route are applied to every call.

Secrets never appear in logs, errors, results or metadata: :meth:`Credentials.register` hands
every configured secret (and its Basic-encoded pair) to :mod:`fms_dgt.secrets`, the process's one
redactor, which hides every form of it at every exit. A value holding a control character (a token
read from a file with its trailing newline) is refused when the engine is configured, naming the
entry but never the value. :class:`Redactor`, :class:`SecretLogFilter` and :func:`protect_logs`
remain for code written against the earlier API.
"""

from __future__ import annotations

import base64
import logging
import weakref
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fms_dgt.core.tools.openapi.request import Request, place
from fms_dgt.core.tools.openapi.route import ArgumentSpec, Route, SecurityScheme
from fms_dgt.core.tools.transport import has_control_character, is_sensitive_name
from fms_dgt.errors import ConfigError
from fms_dgt.secrets import Redactor, install_log_filter, register_secret

__all__ = [
    "AUTH_KINDS",
    "Credential",
    "Credentials",
    "Redactor",
    "SecretLogFilter",
    "is_sensitive_header",
    "protect_logs",
]

#: The values an ``auth`` entry's ``type`` may take.
AUTH_KINDS = ("bearer", "basic", "apiKey")
_API_KEY_PLACES = ("header", "query", "cookie")
#: Header names whose values are treated as secrets too.
_CLIENT_LOGGERS = ("httpx2", "httpx")


def is_sensitive_header(name: str) -> bool:
    """True when a header's value should be redacted like a secret (``X-Api-Token``, ``Cookie``...)."""
    return is_sensitive_name(name)


@dataclass(frozen=True, slots=True)
class Credential:
    """Configured credentials for one security scheme (secrets are never printed).

    Attributes:
        name: the scheme name (the ``auth`` key).
        values: ``token``, ``username``, ``password`` and/or ``value``.
        kind: an explicit ``type`` (``bearer``, ``basic``, ``apiKey``), else None (the scheme decides).
        location: where an explicit API key goes (``header``, ``query``, ``cookie``).
        param: the explicit API key's header, query or cookie name.
    """

    name: str
    values: Mapping[str, str] = field(repr=False)
    kind: str | None = None
    location: str | None = None
    param: str | None = None

    @classmethod
    def from_config(cls, name: str, raw: Any) -> Credential:
        """Read one ``auth`` entry (a string is a bearer token).

        Raises:
            ConfigError: the entry is not a mapping, has an unknown type, or is an API key
                without ``in`` and ``name``.
        """
        if isinstance(raw, str):
            raw = {"token": raw}
        if not isinstance(raw, Mapping):
            raise ConfigError(
                f"invalid auth entry {name!r} for rest engine: expected a mapping such as "
                "{token: ...}, {username: ..., password: ...} or {value: ...}"
            )
        kind = raw.get("type")
        if kind is not None and kind not in AUTH_KINDS:
            raise ConfigError(f"invalid auth type {kind!r} in entry {name!r}: use one of {AUTH_KINDS}")
        if kind == "apiKey" and (raw.get("in") not in _API_KEY_PLACES or not raw.get("name")):
            raise ConfigError(f"auth entry {name!r} of type apiKey needs in: header|query|cookie and name")
        values = {
            k: str(raw[k]) for k in ("token", "username", "password", "value") if raw.get(k) is not None
        }
        for key, value in values.items():
            if has_control_character(value):
                raise ConfigError(
                    f"invalid auth entry {name!r} for rest engine: its {key} holds a control "
                    "character (a trailing newline from a file?). Strip it where the value is set"
                )
        return cls(name, values, kind, raw.get("in"), raw.get("name"))

    def secrets(self) -> list[str]:
        """Every string that must not be shown: the values and the Basic-encoded pair."""
        found = [v for k, v in self.values.items() if k != "username" and v]
        if "username" in self.values or "password" in self.values:
            found.append(base64.b64encode(self._pair()).decode())
        return found

    def _pair(self) -> bytes:
        return f"{self.values.get('username', '')}:{self.values.get('password', '')}".encode()

    def apply(self, scheme: SecurityScheme | None, request: Request) -> None:
        """Add this credential to ``request`` as its explicit type, else as ``scheme`` says."""
        kind = self.kind or _kind_of(scheme)
        if kind == "basic":
            request.headers["Authorization"] = "Basic " + base64.b64encode(self._pair()).decode()
        elif kind == "apiKey":
            self._apply_key(scheme, request)
        else:
            request.headers["Authorization"] = "Bearer " + self.values.get(
                "token", self.values.get("value", "")
            )
        request.auth_applied.append(self.name)

    def _apply_key(self, scheme: SecurityScheme | None, request: Request) -> None:
        location = self.location or (scheme.location if scheme else None)
        name = self.param or (scheme.name if scheme else None) or self.name
        # A spec whose apiKey scheme omits "in" is invalid; a header is the least surprising place.
        spec = ArgumentSpec(location=location if location in _API_KEY_PLACES else "header", name=name)
        place(request, spec, self.values.get("value", self.values.get("token", "")))


def _kind_of(scheme: SecurityScheme | None) -> str:
    if scheme is None:
        return "bearer"
    if scheme.type == "http":
        return "basic" if scheme.scheme == "basic" else "bearer"
    return "apiKey" if scheme.type == "apiKey" else "bearer"


class Credentials:
    """Every configured credential of one engine.

    Args:
        auth: the ``auth`` config: scheme name -> entry (see the module docstring).

    Raises:
        ConfigError: an entry is invalid.
    """

    def __init__(self, auth: Mapping[str, Any] | None = None) -> None:
        self._by_name = {n: Credential.from_config(n, v) for n, v in (auth or {}).items()}

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)

    def secrets(self) -> list[str]:
        """Every secret of every credential."""
        return [s for c in self._by_name.values() for s in c.secrets()]

    def register(self) -> None:
        """Hide every secret of every credential at every exit of the process (:mod:`fms_dgt.secrets`)."""
        for secret in self.secrets():
            register_secret(secret)
        if self._by_name:
            install_log_filter()

    def authenticate(self, route: Route, request: Request) -> None:
        """Apply the credentials the route's security asks for, then the explicit extras."""
        schemes = route.security_schemes
        chosen = self.choose(route.security)
        for name in chosen:
            self._by_name[name].apply(schemes.get(name), request)
        for credential in self._by_name.values():
            if (
                credential.kind is not None
                and credential.name not in chosen
                and credential.name not in schemes
            ):
                credential.apply(None, request)

    def choose(self, requirements: Sequence[Mapping[str, Any]]) -> list[str]:
        """The scheme names of the first non-empty alternative whose schemes all have credentials."""
        for requirement in requirements:
            if requirement and all(n in self._by_name for n in requirement):
                return list(requirement)
        return []


class SecretLogFilter(logging.Filter):
    """Redacts the secrets of the redactors it holds from log records (the earlier API).

    The engines now register their secrets with :mod:`fms_dgt.secrets`, whose log-record factory
    hides them in every logger's records; this filter stays for code that adds its own redactors.
    """

    def __init__(self) -> None:
        super().__init__()
        self.redactors: weakref.WeakSet[Redactor] = weakref.WeakSet()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = message
        for redactor in list(self.redactors):
            redacted = redactor.text(redacted)
        if redacted != message:
            record.msg, record.args = redacted, ()
        return True


_LOG_FILTER = SecretLogFilter()


def protect_logs(redactor: Redactor) -> None:
    """Redact ``redactor``'s secrets from the HTTP client's loggers for as long as it lives.

    Kept for the earlier API; secrets registered with :mod:`fms_dgt.secrets` need no call.
    """
    if not redactor.active:
        return
    install_log_filter()
    _LOG_FILTER.redactors.add(redactor)
    for name in _CLIENT_LOGGERS:
        logger = logging.getLogger(name)
        if _LOG_FILTER not in logger.filters:
            logger.addFilter(_LOG_FILTER)
