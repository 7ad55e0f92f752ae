from __future__ import annotations

import copy
import itertools
import json
import os
import pickle
import random
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import pytest
from jsonschema import Draft202012Validator

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.schema import CompiledValidator, get_validator
from fms_dgt.core.tools.schema.validate import MAX_RECURSIVE_DEPTH, InvalidSchemaError
from fms_dgt.errors import ToolDefinitionError

BASE = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "City"},
        "units": {"type": "string", "enum": ["c", "f"], "default": "c"},
    },
    "required": ["city", "units"],
}


SCHEMAS: list[dict[str, Any]] = [
    BASE,
    {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 1, "exclusiveMaximum": 10},
            "xs": {"type": "array", "items": {"type": "number"}, "maxItems": 2},
        },
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {
            "s": {"type": "string", "pattern": "^a", "maxLength": 3},
            "u": {"anyOf": [{"type": "null"}, {"type": "boolean"}]},
            "c": {"const": 1},
        },
    },
    {
        "type": "object",
        "properties": {
            "o": {"type": "object", "required": ["k"], "additionalProperties": {"type": "string"}}
        },
    },
]
VALUES = [
    None,
    True,
    False,
    0,
    1,
    1.0,
    1.5,
    10,
    -3,
    "",
    "a",
    "abcd",
    "b",
    [],
    [1, 2],
    [1, 2, 3],
    ["x"],
    {},
    {"k": "v"},
    {"k": 1},
    "c",
    "f",
]


def _instances(schema: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    names = [*schema.get("properties", {}), "zzz"]
    out = []
    for _ in range(300):
        keys = rng.sample(names, rng.randint(0, len(names)))
        out.append({k: rng.choice(VALUES) for k in keys})
    return out


@pytest.mark.parametrize("schema", SCHEMAS)
def test_compiled_validator_agrees_with_jsonschema(schema: dict[str, Any]) -> None:
    rng = random.Random(7)
    compiled = CompiledValidator(schema)
    assert compiled.backend == "jsonschema-rs"
    reference = Draft202012Validator(schema)
    for instance in itertools.chain(_instances(schema, rng), [[], "x", None]):
        assert compiled.is_valid(instance) == reference.is_valid(instance), instance


def test_keywords_beyond_the_common_subset_validate() -> None:
    schema = {"type": "object", "patternProperties": {"^x": {"type": "integer"}}}
    compiled = CompiledValidator(schema)
    assert compiled.backend == "jsonschema-rs"
    assert compiled.is_valid({"x1": 1}) and not compiled.is_valid({"x1": "a"})


def test_schema_jsonschema_rs_cannot_compile_falls_back_to_jsonschema() -> None:
    # \Z is Python's end of input; ECMA-262 (and so jsonschema-rs) has no such escape.
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^a+\\Z"}}}
    compiled = get_validator(schema)
    assert compiled.backend == "jsonschema"
    assert compiled.is_valid({"s": "aaa"})
    assert not compiled.is_valid({"s": "aab"})
    assert "does not match" in (compiled.explain({"s": "aab"}) or "")


def test_validators_are_cached_by_fingerprint_and_explain() -> None:
    reordered = {"required": ["units", "city"], "type": "object", "properties": BASE["properties"]}
    assert get_validator(BASE) is get_validator(reordered)
    reason = get_validator(BASE).explain({"city": 3, "units": "c"})
    assert reason is not None and "3 is not of type 'string'" in reason and "/city" in reason
    assert get_validator(BASE).explain({"city": "x", "units": "c"}) is None


# ---------------------------------------------------------------- semantics the registry promises


@pytest.mark.parametrize(
    ("schema", "instance", "valid"),
    [
        ({"type": "string", "format": "email"}, "not an email", True),  # format is an annotation
        ({"type": "string", "format": "no-such-format"}, "x", True),
        ({"type": "number"}, True, False),  # booleans are not numbers
        ({"type": "integer"}, False, False),
        ({"type": "integer"}, 1.0, True),
        ({"type": "integer"}, 1.5, False),
        ({"type": "integer", "maximum": 10}, 10**30, False),
        ({"enum": [1]}, True, False),
        ({"enum": [True]}, 1, False),
        ({"const": 0}, False, False),
        ({"const": 1}, 1.0, True),
        ({"uniqueItems": True}, [1, True], True),
        ({"uniqueItems": True}, [1, 1.0], False),
        ({"type": "object", "properties": {"a": {"type": "null"}}}, {"a": None}, True),
        ({"prefixItems": [{"type": "string"}], "items": False}, ["a", "b"], False),
        ({"$defs": {"n": {"type": "integer"}}, "items": {"$ref": "#/$defs/n"}}, [1, "x"], False),
    ],
)
def test_draft_2020_12_semantics(schema: dict[str, Any], instance: Any, valid: bool) -> None:
    compiled = CompiledValidator(schema)
    assert compiled.backend == "jsonschema-rs"
    assert compiled.is_valid(instance) is valid
    assert Draft202012Validator(schema).is_valid(instance) is valid
    assert (compiled.explain(instance) is None) is valid


def test_explain_gives_a_reason_whenever_is_valid_says_no() -> None:
    # ECMA-262 \\d is ASCII only; Python's re also takes other scripts' digits. The validator
    # follows JSON Schema (ECMA-262), and explain must not answer "valid" for a rejected value.
    compiled = get_validator({"type": "string", "pattern": "^\\d$"})
    assert compiled.is_valid("3")
    assert not compiled.is_valid("\u0663")
    reason = compiled.explain("\u0663")
    assert reason is not None and "does not match" in reason


class _Record(Mapping[str, Any]):
    def __init__(self, **items: Any) -> None:
        self._items = items

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


@pytest.mark.parametrize(
    ("instance", "valid"),
    [
        (MappingProxyType({"ids": (1, 2), "name": "x"}), True),
        (_Record(ids=[1, 2], name="x"), True),
        (_Record(ids=(1, "two"), name="x"), False),
        ({"ids": (1, 2), "name": "x"}, True),
        ({"ids": {1, 2}, "name": "x"}, False),
        ({"ids": [1], "name": b"x"}, False),
        ({"ids": [1], "name": object()}, False),
        ({"ids": [1], 7: "x"}, True),
        ((1, 2), False),
    ],
)
def test_mappings_tuples_and_non_json_values_do_not_crash(instance: Any, valid: bool) -> None:
    schema = {
        "type": "object",
        "properties": {"ids": {"type": "array", "items": {"type": "integer"}}, "name": {"type": "string"}},
        "required": ["ids"],
    }
    compiled = get_validator(schema)
    assert compiled.is_valid(instance) is valid
    assert (compiled.explain(instance) is None) is valid
    assert get_validator({}).is_valid(instance)


def _nested(depth: int) -> list[Any]:
    root: list[Any] = []
    node = root
    for _ in range(depth - 1):
        node.append([])
        node = node[0]
    return root


RECURSIVE = [
    {"type": "array", "items": {"$ref": "#"}},
    {"$defs": {"node": {"type": "array", "items": {"$ref": "#/$defs/node"}}}, "$ref": "#/$defs/node"},
    {
        "$defs": {"a": {"type": "array", "items": {"$ref": "#/$defs/b"}}, "b": {"$ref": "#/$defs/a"}},
        "$ref": "#/$defs/a",
    },
    {"$defs": {"a b": {"type": "array", "items": {"$ref": "#/$defs/a%20b"}}}, "$ref": "#/$defs/a%20b"},
]


@pytest.mark.parametrize("schema", RECURSIVE)
def test_deep_instances_against_recursive_schemas_are_rejected_not_crashed(schema: dict[str, Any]) -> None:
    compiled = CompiledValidator(schema)
    assert compiled.is_valid(_nested(MAX_RECURSIVE_DEPTH))
    # jsonschema-rs recurses on the native stack: 100,000 levels would overflow it.
    deep = _nested(100_000)
    assert not compiled.is_valid(deep)
    assert "nested too deeply" in (compiled.explain(deep) or "")


def test_references_that_cannot_recurse_need_no_depth_limit() -> None:
    schema = {"$defs": {"list": {"type": "array"}}, "type": "array", "items": {"$ref": "#/$defs/list"}}
    compiled = CompiledValidator(schema)
    assert compiled.is_valid(_nested(100_000))  # validation stops two levels down
    assert not compiled.is_valid([1])


def test_validators_survive_copy_and_pickle() -> None:
    tool = Tool("t", "ns", output_parameters={"type": "object", "required": ["id"]})
    assert not tool.output_validator.is_valid({})
    for clone in (copy.deepcopy(tool), pickle.loads(pickle.dumps(tool))):
        assert clone.output_validator.is_valid({"id": 1})
        assert not clone.output_validator.is_valid({})
    copied = copy.deepcopy(get_validator(BASE))
    assert copied.backend == "jsonschema-rs" and copied.is_valid({"city": "x", "units": "c"})


# ---------------------------------------------------------------- schemas that cannot be used


@pytest.mark.parametrize(
    ("schema", "pointer", "words"),
    [
        ({"type": "object", "properties": {"p": {"type": "strong"}}}, "/properties/p/type", "strong"),
        ({"type": "string", "pattern": "("}, "/pattern", "regex"),
        ({"type": "object", "required": "p"}, "/required", "not of type 'array'"),
        ({"$ref": "#/$defs/missing"}, "", "does not exist"),
    ],
)
def test_schemas_neither_library_can_use_raise_a_clear_error(
    schema: dict[str, Any], pointer: str, words: str
) -> None:
    for _ in range(2):  # the failure is cached and raised again
        with pytest.raises(InvalidSchemaError, match="cannot compile JSON Schema") as info:
            get_validator(schema)
        assert isinstance(info.value, ToolDefinitionError)
        assert info.value.pointer == pointer
        assert words in info.value.reason


# ---------------------------------------------------------------- no network, no files


class _Recorder(BaseHTTPRequestHandler):
    requests: ClassVar[list[str]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.requests.append(self.path)
        body = json.dumps({"$defs": {"n": {"type": "integer"}}, "type": "integer"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/schema+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def schema_server() -> Iterator[tuple[str, list[str]]]:
    """A loopback server that answers every GET with a schema and records the paths asked for."""
    _Recorder.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", _Recorder.requests
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def tripwire_file(tmp_path: Path) -> Iterator[tuple[Path, list[str]]]:
    """A FIFO that records whether anyone opened it for reading (it would then serve a schema).

    Opening a FIFO for writing blocks until a reader opens it, so a thread waiting there notices
    any read, whatever language the reader is written in.
    """
    secret = tmp_path / "outside" / "secret.json"
    secret.parent.mkdir()
    os.mkfifo(secret)
    opened: list[str] = []
    done = threading.Event()

    def wait_for_reader() -> None:
        with secret.open("w") as fifo:
            if not done.is_set():
                opened.append("read by the code under test")
                fifo.write('{"type": "integer"}')

    thread = threading.Thread(target=wait_for_reader, daemon=True)
    thread.start()
    try:
        yield secret, opened
    finally:
        done.set()
        os.close(os.open(secret, os.O_RDONLY | os.O_NONBLOCK))
        thread.join(timeout=5)


def _outside_references(base: str, secret: Path) -> list[dict[str, Any]]:
    return [
        {"$ref": f"{base}/schema.json"},
        {"type": "object", "properties": {"n": {"$ref": f"{base}/defs.json#/$defs/n"}}},
        {"$id": f"{base}/root.json", "$ref": "sibling.json"},
        {"$dynamicRef": f"{base}/dynamic.json#meta"},
        {"$ref": secret.as_uri()},
        {"$id": secret.parent.as_uri() + "/", "$ref": secret.name},
        {"type": "object", "additionalProperties": {"$ref": f"{secret.as_uri()}#/$defs/n"}},
    ]


def test_references_outside_the_schema_are_never_fetched_or_read(
    schema_server: tuple[str, list[str]], tripwire_file: tuple[Path, list[str]]
) -> None:
    (base, requests), (secret, opened) = schema_server, tripwire_file
    for schema in _outside_references(base, secret):
        with pytest.raises(InvalidSchemaError, match="only references inside the schema") as info:
            get_validator(schema)
        assert "http://127.0.0.1" in info.value.reason or "file://" in info.value.reason, schema
    time.sleep(0.1)  # a late request or open would still be recorded
    assert requests == []
    assert opened == []


def test_the_jsonschema_path_refuses_outside_references_too(
    schema_server: tuple[str, list[str]], tripwire_file: tuple[Path, list[str]]
) -> None:
    (base, requests), (secret, opened) = schema_server, tripwire_file
    for ref in (f"{base}/schema.json", secret.as_uri()):
        # YAML reads unquoted numbers as integers; jsonschema-rs takes no integer keys, so this
        # schema goes to jsonschema, which must refuse the reference as well.
        schema = {
            "type": "object",
            "properties": {200: {"type": "string"}},
            "additionalProperties": {"$ref": ref},
        }
        compiled = CompiledValidator(schema)
        assert compiled.backend == "jsonschema"
        assert compiled.is_valid({})  # the reference is not reached
        with pytest.raises(InvalidSchemaError, match="does not resolve"):
            compiled.is_valid({"other": 1})
        with pytest.raises(InvalidSchemaError, match="does not resolve"):
            compiled.explain({"other": 1})
    time.sleep(0.1)
    assert requests == []
    assert opened == []


def test_identifiers_that_look_remote_resolve_inside_the_schema(schema_server: tuple[str, list[str]]) -> None:
    base, requests = schema_server
    schema = {
        "$id": f"{base}/root.json",
        "$defs": {"count": {"$id": "count.json", "type": "integer", "minimum": 0}},
        "type": "object",
        "properties": {"n": {"$ref": "count.json"}, "m": {"$ref": "#/$defs/count"}},
    }
    compiled = get_validator(schema)
    assert compiled.backend == "jsonschema-rs"
    assert compiled.is_valid({"n": 1, "m": 2})
    assert not compiled.is_valid({"n": -1})
    assert "less than the minimum" in (compiled.explain({"n": -1}) or "")
    assert requests == []


def test_import_fms_dgt_loads_no_validator_library() -> None:
    code = (
        "import sys, fms_dgt; "
        "print(sorted(m for m in ('jsonschema_rs', 'jsonschema') if m in sys.modules)); "
        "from fms_dgt.core.tools.schema import get_validator; "
        "get_validator({'type': 'object'}); "
        "print('jsonschema_rs' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "True"]
