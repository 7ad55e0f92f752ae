"""Tests of fms_dgt/core/tools/mcp/transports.py (the transports themselves run in test_client.py)."""

from __future__ import annotations

import pytest

from fms_dgt.core.tools.mcp import MCPServerSpec
from fms_dgt.core.tools.mcp.transports import describe_exc, interpolated_headers
from fms_dgt.errors import ConfigError


def test_headers_are_interpolated_at_connect(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = MCPServerSpec(
        name="h", transport="sse", url="http://h/sse", headers={"Authorization": "Bearer ${TOKEN_X}"}
    )
    monkeypatch.setenv("TOKEN_X", "s3cret")
    assert interpolated_headers(spec) == {"Authorization": "Bearer s3cret"}
    monkeypatch.delenv("TOKEN_X")
    with pytest.raises(ConfigError, match="TOKEN_X"):
        interpolated_headers(spec)


class _Group(Exception):
    """Shaped like an exception group (``exceptions``), which anyio raises from task groups."""

    def __init__(self, *exceptions: BaseException) -> None:
        super().__init__("group")
        self.exceptions = exceptions


def test_describe_exc_reads_the_innermost_exception_of_a_group() -> None:
    group = _Group(_Group(ConnectionRefusedError("refused")), ValueError("second"))
    assert describe_exc(group) == "ConnectionRefusedError: refused"
    assert describe_exc(ValueError()) == "ValueError"
