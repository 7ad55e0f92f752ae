"""One redactor hides every form of every configured secret."""

from __future__ import annotations

import base64
import json
import logging
from urllib.parse import quote, quote_plus

import pytest

from fms_dgt.secrets import Redactor, install_log_filter


def test_every_form_of_a_secret_is_hidden() -> None:
    secret = 'tok"en/+ with\\ space\n'
    redactor = Redactor([secret])
    leaks = [
        secret,
        secret.strip(),
        repr(secret)[1:-1],
        json.dumps(secret)[1:-1],
        quote(secret, safe=""),
        quote_plus(secret),
        repr(secret.strip())[1:-1],
    ]
    for leak in leaks:
        assert "tok" not in redactor.text(f"before {leak} after"), leak
    assert redactor.value({"k": [f"x{secret}y"], secret.strip(): 1}) == {"k": ["x***y"], "***": 1}


def test_basic_credentials_and_short_values() -> None:
    redactor = Redactor(["abc"])
    assert not redactor.active, "values under four characters would mangle ordinary text"
    pair = base64.b64encode(b"admin:hunter22").decode()
    redactor.add(pair)
    redactor.add("hunter22")
    assert redactor.text(f"Authorization: Basic {pair}") == "Authorization: Basic ***"


def test_log_records_are_redacted(caplog: pytest.LogCaptureFixture) -> None:
    from fms_dgt.secrets import register_secret

    register_secret("sk-live-0123456789")
    install_log_filter()
    logger = logging.getLogger("fms_dgt.test")
    with caplog.at_level(logging.INFO):
        logging.getLogger("httpx2").warning("calling %s", "https://x/?key=sk-live-0123456789")
        logger.info("plain")
    assert "sk-live" not in caplog.text and "key=***" in caplog.text
