"""The one place secrets are known and hidden: every configured credential is redacted at every exit.

Whoever reads a credential from a config or the environment (a REST engine's ``auth``, an API key
variable, an MCP server's headers or environment) registers it here with :func:`register_secret`.
Every exit (records, rejects, the summary, error messages, log records, load reports, tool
metadata) passes its text through :func:`redact` / :func:`redact_value` *before* cutting it to
length, so no part of a secret survives a truncation.

A secret is hidden in every form it may take on the way out: as written, with surrounding
whitespace stripped, escaped by ``repr`` or JSON (a quote, a backslash or a newline inside it),
percent-encoded (``quote`` and ``quote_plus``) and, for Basic credentials, base64-encoded
(:func:`register_basic`). Values shorter than four characters are left alone: hiding them would
mangle ordinary text.
"""

from __future__ import annotations

import base64
import json
import logging
import threading
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, quote_plus

__all__ = [
    "MIN_SECRET_LENGTH",
    "SECRETS",
    "Redactor",
    "install_log_filter",
    "redact",
    "redact_value",
    "register_basic",
    "register_secret",
]

MIN_SECRET_LENGTH = 4
MASK = "***"


def _forms(secret: str) -> set[str]:
    forms = {secret, secret.strip()}
    for text in list(forms):
        forms.update((repr(text)[1:-1], json.dumps(text)[1:-1], quote(text, safe=""), quote_plus(text)))
    return {f for f in forms if len(f) >= MIN_SECRET_LENGTH}


class Redactor:
    """A set of secrets and the replacement of every form of them by ``***``.

    Thread-safe: secrets may be added while other threads redact.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._lock = threading.Lock()
        self._forms: tuple[str, ...] = ()
        for secret in secrets:
            self.add(secret)

    def add(self, secret: str) -> None:
        """Hide ``secret`` (and its escaped and encoded forms) from now on."""
        if not isinstance(secret, str) or len(secret.strip()) < MIN_SECRET_LENGTH:
            return
        with self._lock:
            merged = set(self._forms) | _forms(secret)
            # Longest first, so a secret is replaced before a shorter secret inside it.
            self._forms = tuple(sorted(merged, key=lambda f: (-len(f), f)))

    @property
    def active(self) -> bool:
        """True when there is anything to hide."""
        return bool(self._forms)

    def text(self, value: str) -> str:
        """``value`` with every form of every secret replaced."""
        for form in self._forms:
            if form in value:
                value = value.replace(form, MASK)
        return value

    def value(self, value: Any) -> Any:
        """A copy of a JSON-like value with every secret in its strings and keys replaced."""
        if not self._forms:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.value(v) for v in value)
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self.value(v) for k, v in value.items()}
        return value


#: Every secret the process was configured with.
SECRETS = Redactor()


def register_secret(value: str) -> None:
    """Hide ``value`` at every exit of the process (see the module docstring)."""
    SECRETS.add(value)


def register_basic(username: str, password: str) -> None:
    """Hide a Basic credential: the password and the base64 of ``username:password``."""
    register_secret(password)
    register_secret(base64.b64encode(f"{username}:{password}".encode()).decode())


def redact(text: str) -> str:
    """``text`` without any registered secret."""
    return SECRETS.text(text)


def redact_value(value: Any) -> Any:
    """A JSON-like value without any registered secret."""
    return SECRETS.value(value)


_INSTALLED = False
_INSTALL_LOCK = threading.Lock()


def install_log_filter() -> None:
    """Hide registered secrets in every log record of the process (idempotent).

    Wraps the log record factory, so records of every logger (the package's, the HTTP clients'
    request lines with keys in their URLs, the MCP SDK's) are redacted when they are made, whatever
    handler writes them.
    """
    global _INSTALLED
    with _INSTALL_LOCK:
        if _INSTALLED:
            return
        _INSTALLED = True
        previous = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            if SECRETS.active:
                message = record.getMessage()
                hidden = SECRETS.text(message)
                if hidden != message:
                    record.msg, record.args = hidden, ()
            return record

        logging.setLogRecordFactory(factory)
