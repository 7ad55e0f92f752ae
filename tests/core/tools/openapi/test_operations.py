"""Tests of finding a spec's operations (fms_dgt/core/tools/openapi/operations.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fms_dgt.core.tools.openapi import DocumentStore, Operation, iter_operations, spec_version


@pytest.mark.parametrize(
    ("root", "expected"),
    [
        ({"swagger": "2.0"}, "2.0"),
        ({"openapi": "3.0.3"}, "3.0"),
        ({"openapi": "3.1.0"}, "3.1"),
        ({"openapi": "3.2"}, "3.2"),
        ({"openapi": "3.3.0"}, None),
        ({"openapi": 3.0}, None),
        ({"info": {}}, None),
    ],
)
def test_spec_version(root: dict[str, object], expected: str | None) -> None:
    assert spec_version(root) == expected


def test_every_method_in_document_order_with_query_and_additional_operations(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "openapi: 3.2.0\ninfo: {title: t, version: '1'}\npaths:\n"
        "  /a:\n    post: {}\n    get: {}\n    query: {}\n    additionalOperations: {PURGE: {}}\n"
        "  /b: {$ref: '#/components/pathItems/B'}\n"
        "  /c: {$ref: '#/missing'}\n"
        "  /d: [1]\n"
        "components:\n  pathItems:\n    B: {delete: {}}\n"
    )
    found = list(iter_operations(DocumentStore(str(spec))))
    ops = [(o.method, o.path, o.pointer) for o in found if isinstance(o, Operation)]
    assert ops == [
        ("get", "/a", "/paths/~1a/get"),
        ("post", "/a", "/paths/~1a/post"),
        ("query", "/a", "/paths/~1a/query"),
        ("purge", "/a", "/paths/~1a/additionalOperations/PURGE"),
        ("delete", "/b", "/paths/~1b/delete"),
    ]
    problems = [o for o in found if isinstance(o, tuple)]
    assert [p[0] for p in problems] == ["/paths/~1c", "/paths/~1d"]
    assert "missing" in problems[0][1] and "not an object" in problems[1][1]
