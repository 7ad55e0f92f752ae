"""Tests of fms_dgt/core/tools/mcp/__init__.py: the public names, and that importing stays light."""

from __future__ import annotations

import subprocess
import sys

import fms_dgt.core.tools.mcp as mcp_package


def test_every_public_name_is_exported() -> None:
    assert sorted(mcp_package.__all__) == sorted(set(mcp_package.__all__))
    for name in mcp_package.__all__:
        assert getattr(mcp_package, name) is not None


def test_importing_the_package_and_its_users_does_not_import_the_sdk() -> None:
    code = (
        "import sys, fms_dgt.core.tools.mcp, fms_dgt.core.tools.loaders.mcp, fms_dgt.core.tools.engines.mcp;"
        "print([m for m in ('mcp', 'mcp_types', 'anyio', 'httpx2') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
