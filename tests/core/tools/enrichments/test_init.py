"""Tests for fms_dgt/core/tools/enrichments/__init__.py: the package's exports and its module layout."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

import fms_dgt.core.tools.enrichments as package
from fms_dgt.core.tools import artifacts
from fms_dgt.core.tools.enrichments import _vectors, dataflow, embeddings, neighbors

PLUGINS = ("embeddings", "neighbors", "dataflow", "output_parameters")


def loaded_after(statement: str) -> list[str]:
    """The enrichment modules, and numpy, that ``statement`` imports in a fresh interpreter."""
    code = (
        f"import json, sys; {statement};"
        "print(json.dumps(sorted(m for m in sys.modules if m == 'numpy' or m.startswith(sys.argv[1]))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, f"{package.__name__}."], capture_output=True, text=True, check=True
    )
    return list(json.loads(done.stdout))


@pytest.mark.parametrize("name", package.__all__)
def test_every_public_name_is_the_object_of_its_module(name: str) -> None:
    home = importlib.import_module(f"{package.__name__}.{package._HOME[name]}")
    assert getattr(package, name) is getattr(home, name)
    assert name in dir(package)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        package.Nope  # noqa: B018


def test_importing_the_package_or_base_loads_nothing_else() -> None:
    assert loaded_after(f"import {package.__name__}") == []
    assert loaded_after(f"import {package.__name__}.base") == [f"{package.__name__}.base"]


@pytest.mark.parametrize("plugin", PLUGINS)
def test_no_plugin_imports_another_plugin(plugin: str) -> None:
    found = loaded_after(f"import {package.__name__}.{plugin}")
    others = {f"{package.__name__}.{p}" for p in PLUGINS if p != plugin}
    assert f"{package.__name__}.{plugin}" in found
    assert others.isdisjoint(found)


def test_names_that_moved_are_still_importable_from_their_old_modules() -> None:
    assert embeddings.HashedEncoder is _vectors.HashedEncoder
    assert embeddings.TextEncoder is _vectors.TextEncoder
    assert embeddings.quantise is _vectors.quantise
    assert embeddings.ToolEmbeddings is artifacts.ToolEmbeddings
    assert embeddings.row_index is artifacts.row_index
    assert neighbors.ToolNeighbors is artifacts.ToolNeighbors
    assert dataflow.DataflowGraph is artifacts.DataflowGraph
    assert dataflow.Edge is artifacts.Edge
