"""Records of real runs for the export tests: the demo config and a config over BFCL's own tools."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.runs import BFCL_TOOLS, REPO, TEMPLATES, bfcl_config, run


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The output folder of 30 records of configs/demo.yaml (OpenAI layout)."""
    return run(REPO / "configs" / "demo.yaml", tmp_path_factory.mktemp("demo"), 30)


@pytest.fixture(scope="session")
def bfcl_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The output folder of 30 records over BFCL's tools; skipped when ../shared is absent."""
    if not BFCL_TOOLS.is_file():
        pytest.skip("../shared/corpus is absent")
    out = tmp_path_factory.mktemp("bfcl")
    return run(bfcl_config(out), out, 30)


@pytest.fixture(scope="session")
def templates() -> dict[str, str]:
    """The shared chat templates by file name; skipped when ../shared or transformers is absent."""
    pytest.importorskip("transformers.utils.chat_template_utils")
    if not TEMPLATES.is_dir():
        pytest.skip("../shared/chat-templates is absent")
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(TEMPLATES.glob("*.jinja"))}
