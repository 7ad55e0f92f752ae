"""Tests of the openapi package as a whole: its exports and what it imports."""

from __future__ import annotations

import subprocess
import sys

from support.openapi_specs import PETSTORE

import fms_dgt.core.tools.openapi as openapi

HEAVY = ("prance", "openapi_core", "openapi_spec_validator", "httpx2", "httpx")


def test_every_exported_name_exists() -> None:
    assert len(openapi.__all__) == len(set(openapi.__all__))
    for name in openapi.__all__:
        assert getattr(openapi, name) is not None


def test_importing_and_loading_a_spec_import_no_openapi_or_http_library() -> None:
    code = (
        "import sys, fms_dgt, fms_dgt.core.tools.openapi\n"
        "import fms_dgt.core.tools.loaders.rest as rest, fms_dgt.core.tools.engines.rest\n"
        f"tools = rest.RESTToolLoader({str(PETSTORE)!r}).load()\n"
        "assert len(tools) == 14, len(tools)\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_validate_imports_the_validator_only_when_asked() -> None:
    code = (
        "import sys, fms_dgt.core.tools.loaders.rest as rest\n"
        f"rest.RESTToolLoader({str(PETSTORE)!r}, validate=True).load()\n"
        "print('openapi_spec_validator' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"  # so the test above can fail
