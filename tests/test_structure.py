"""The package's shape: public front doors, one home for errors, no import cycles, short modules."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

import fms_dgt.errors as errors_module
from fms_dgt.errors import DGTError

PACKAGE = Path(__file__).resolve().parents[1] / "fms_dgt"
FRONT_DOORS = [
    "fms_dgt",
    "fms_dgt.core.tools",
    "fms_dgt.core.tools.loaders",
    "fms_dgt.core.tools.enrichments",
    "fms_dgt.core.tools.samplers",
    "fms_dgt.core.tools.engines",
    "fms_dgt.core.tools.wire",
    "fms_dgt.core.tools.schema",
    "fms_dgt.core.tools.mcp",
    "fms_dgt.core.tools.openapi",
]


def _modules() -> list[tuple[str, Path]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found.append((name, path))
    return found


@pytest.mark.parametrize("package", FRONT_DOORS)
def test_every_front_door_exports_its_public_names(package: str) -> None:
    module = importlib.import_module(package)
    names = getattr(module, "__all__", None)
    assert names, f"{package} has no __all__"
    for name in names:
        assert getattr(module, name) is not None, f"{package}.{name}"


def test_the_documented_imports_work() -> None:
    code = (
        "from fms_dgt.core.tools import Tool, ToolRegistry\n"
        "from fms_dgt.core.tools.samplers import get_tool_sampler\n"
        "from fms_dgt.core.tools.engines import MultiToolEngine, CallPolicy\n"
        "from fms_dgt.core.tools.loaders import FileToolLoader\n"
        "from fms_dgt.core.tools.enrichments import ToolEnrichment\n"
        "import sys\n"
        "print(sorted(m for m in ('mcp', 'httpx2', 'openapi_spec_validator') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", "front doors import protocol libraries only when a name needs them"


def _error_classes() -> list[type]:
    found = []
    for name, _ in _modules():
        module = importlib.import_module(name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, DGTError) and obj.__module__ == name:
                found.append(obj)
    return found


def test_every_error_class_lives_in_errors_and_in_its_tree() -> None:
    tree = errors_module.__doc__ or ""
    for cls in _error_classes():
        assert cls.__module__ == "fms_dgt.errors", f"{cls.__qualname__} is defined in {cls.__module__}"
        drawn = re.search(rf"^\s*(?:[│├└─ ]+)?{cls.__name__}\b", tree, re.MULTILINE)
        assert drawn, f"{cls.__name__} is missing from the tree in errors.py"


def _imports(path: Path, package: str) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {id(n) for node in ast.walk(tree) if _is_type_checking(node) for n in ast.walk(node)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return {m for m in found if m.startswith("fms_dgt")}


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def test_the_import_graph_has_no_cycle_outside_type_checking() -> None:
    modules = dict(_modules())
    graph = {
        name: {m for m in _imports(path, name) if m in modules and m != name}
        for name, path in modules.items()
    }
    # A package's __init__ is where its modules' names are re-exported; an edge from a package
    # to its own submodules and back is how Python packages work, not a cycle of logic.
    for name in graph:
        graph[name] = {
            m for m in graph[name] if not m.startswith(name + ".") and not name.startswith(m + ".")
        }
    cycles = _cycles(graph)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_is_over_600_lines() -> None:
    long = {name: n for name, path in _modules() if (n := len(path.read_text().splitlines())) > 600}
    assert not long, f"modules over 600 lines: {long}"
