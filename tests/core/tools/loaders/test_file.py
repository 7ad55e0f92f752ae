from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from fms_dgt.cli import main
from fms_dgt.core.tools.loaders.file import FileToolLoader
from fms_dgt.core.tools.registry import ToolRegistry
from fms_dgt.errors import DuplicateToolError, LoadError
from fms_dgt.io import HAS_LIBYAML, parse_yaml_text

PARAMS = {"type": "object", "properties": {"q": {"type": "string"}}}
# The same check as Draft202012Validator.check_schema, with the meta-schema validator built once.
META = Draft202012Validator(
    Draft202012Validator.META_SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER
)


def _write(tmp_path: Path, name: str, content: Any) -> Path:
    path = tmp_path / name
    if isinstance(content, str):
        path.write_text(content)
    elif name.endswith(".jsonl"):
        path.write_text("\n".join(json.dumps(c) for c in content))
    elif name.endswith(".json"):
        path.write_text(json.dumps(content))
    else:
        path.write_text(yaml.safe_dump(content))
    return path


def _names(path: Path, namespace: str | None = None) -> list[str]:
    return [t.qualified_name for t in FileToolLoader(path, namespace=namespace).load()]


def test_shape_namespace_lists_reads_every_key(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.yaml", {"one": [{"name": "a"}], "two": [{"name": "b"}, {"name": "c"}]})
    assert _names(path) == ["one::a", "two::b", "two::c"]


def test_shape_bare_list_and_map_by_name(tmp_path: Path) -> None:
    assert _names(_write(tmp_path, "l.json", [{"name": "a", "parameters": PARAMS}])) == ["default::a"]
    keyed = _write(
        tmp_path,
        "k.yaml",
        {
            "alpha": {"description": "x", "parameters": PARAMS},
            "beta": {"name": "beta_tool", "description": "y"},
        },
    )
    assert _names(keyed, "ns") == ["ns::alpha", "ns::beta_tool"]


def test_shape_namespace_and_tools(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "t.yaml",
        {"namespace": "files", "tools": [{"name": "a"}, {"name": "b", "namespace": "own"}]},
    )
    assert _names(path) == ["files::a", "own::b"]
    # Namespace precedence: tool's own key > constructor argument > file's namespace > default.
    assert _names(path, "arg") == ["arg::a", "own::b"]


def test_shape_openai_tools(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "o.json",
        [{"type": "function", "function": {"name": "f", "description": "d", "parameters": PARAMS}}],
    )
    tool = FileToolLoader(path).load()[0]
    assert tool.qualified_name == "default::f" and tool.parameters == PARAMS


def test_dataset_records_fold_repeats_and_warn_on_annotation_conflicts(tmp_path: Path) -> None:
    same = {"name": "f", "description": "d", "parameters": {"type": "dict", "properties": {}}}
    other_words = {**same, "description": "other words"}
    overload = {"name": "f", "parameters": {"type": "dict", "properties": {"x": {"type": "int"}}}}
    records = [
        {"id": "r1", "question": "?", "function": [same]},
        {"id": "r2", "question": "?", "function": [same, overload]},
        {"id": "r3", "question": "?", "function": [other_words]},
    ]
    path = _write(tmp_path, "d.jsonl", records)
    loader = FileToolLoader(path)
    tools = loader.load()
    assert [t.description for t in tools] == ["d", ""]
    assert loader.report.folded == 1
    [warning] = loader.report.warnings
    assert "record id=r3" in warning.message and "record id=r1" in warning.message
    assert warning.pointer == "/2/function/0"
    with pytest.raises(LoadError, match="repeats the input schema"):
        FileToolLoader(path, on_conflict="error").load()


def test_exact_repeats_in_one_tool_list_fold_and_are_counted(tmp_path: Path) -> None:
    translate = {
        "name": "translate_text",
        "description": "Translate text.",
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    }
    other = {"name": "detect_language", "parameters": {"type": "object", "properties": {}}}
    path = _write(tmp_path, "spec.json", [translate, other, dict(translate)])
    loader = FileToolLoader(path)
    tools = ToolRegistry.from_loaders([loader]).tools()
    assert [t.name for t in tools] == ["translate_text", "detect_language"]
    assert loader.report.folded == 1 and not loader.report.problems


def test_annotation_only_repeats_in_one_file_follow_on_conflict(tmp_path: Path) -> None:
    path = _write(tmp_path, "dup.yaml", {"ns": [{"name": "a"}, {"name": "a", "description": "x"}]})
    loader = FileToolLoader(path)
    [tool] = loader.load()
    assert tool.description == ""
    [warning] = loader.report.warnings
    assert "ns::a at /ns/1 repeats the input schema of /ns/0" in warning.message
    with pytest.raises(LoadError, match=r"repeats the input schema of /ns/0 .*dup.yaml"):
        FileToolLoader(path, on_conflict="error").load()


def test_a_repeat_across_sources_stays_a_duplicate_error(tmp_path: Path) -> None:
    first = _write(tmp_path, "one.yaml", {"ns": [{"name": "a"}]})
    second = _write(tmp_path, "two.yaml", {"ns": [{"name": "a"}]})
    with pytest.raises(DuplicateToolError, match=r"one.yaml#/ns/0.*two.yaml#/ns/0"):
        ToolRegistry.from_loaders([FileToolLoader(first), FileToolLoader(second)])


def test_a_mapping_that_is_not_a_tool_is_an_error_naming_its_pointer(tmp_path: Path) -> None:
    config_like = {"tools": {"registry": [{"type": "file", "path": "x.yaml"}]}}
    path = _write(tmp_path, "c.yaml", config_like)
    with pytest.raises(LoadError, match=r"mapping under key 'tools' is not a tool.*\[.*c.yaml at /tools\]"):
        FileToolLoader(path).load()
    named_by_key = _write(tmp_path, "k.yaml", {"get_time": {"description": "Now."}})
    assert [t.name for t in FileToolLoader(named_by_key).load()] == ["get_time"]


def test_rapidapi_records(tmp_path: Path) -> None:
    record = {
        "query": "q",
        "query_id": 7,
        "api_list": [
            {
                "category_name": "Data",
                "tool_name": "Geo DB",
                "api_name": "City Details",
                "api_description": "Details.",
                "method": "GET",
                "required_parameters": [{"name": "id", "type": "STRING", "description": "City id"}],
                "optional_parameters": [{"name": "lang", "type": "ENUM", "default": "en"}],
                "template_response": {"name": "str", "population": "int", "loc": {"lat": "float"}},
            }
        ],
    }
    tool = FileToolLoader(_write(tmp_path, "tb.json", [record])).load()[0]
    assert tool.name == "city_details_for_geo_db"
    assert tool.parameters["required"] == ["id"]
    assert tool.parameters["properties"]["id"]["type"] == "string"
    assert "type" not in tool.parameters["properties"]["lang"]
    assert tool.output_parameters["properties"]["loc"]["properties"]["lat"] == {"type": "number"}
    assert tool.metadata["extra"]["rapidapi"]["tool_name"] == "Geo DB"


def test_flat_parameter_maps_under_other_keys(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "n.json",
        [
            {
                "name": "search",
                "host": "h",
                "query_parameters": {"q": {"type": "String", "required": True}},
                "path_parameters": {"id": {"type": "Number", "required": True}},
                "output_parameters": {"hits": {"type": "Array", "items": {"type": "Object"}}},
            }
        ],
    )
    tool = FileToolLoader(path).load()[0]
    assert tool.parameters["properties"] == {"q": {"type": "string"}, "id": {"type": "number"}}
    assert tool.parameters["required"] == ["q", "id"]
    assert tool.output_parameters["properties"]["hits"] == {"type": "array", "items": {"type": "object"}}
    assert tool.metadata["parameter_locations"] == {"q": "query", "id": "path"}
    assert tool.metadata["extra"] == {"host": "h"}
    assert tool.metadata["normalised"]


def test_manifest_keeps_execution_settings(tmp_path: Path) -> None:
    text = """
apiVersion: tools.fms-dgt/v1
kind: Tool
metadata: {name: echo, namespace: util}
spec:
  description: Echo.
  input_schema: {type: object, properties: {text: {type: string}}}
  output_schema: {type: object, properties: {text: {type: string}}}
  mode: mock
  mock_template: "{{text}}"
  timeout_ms: 500
---
apiVersion: tools.fms-dgt/v1
kind: Tool
metadata: {name: ping}
spec: {description: Ping.}
"""
    tools = FileToolLoader(_write(tmp_path, "m.yaml", text)).load()
    assert [t.qualified_name for t in tools] == ["util::echo", "default::ping"]
    assert tools[0].metadata["mode"] == "mock" and tools[0].metadata["timeout_ms"] == 500
    assert tools[0].output_parameters["properties"]["text"] == {"type": "string"}


def test_invalid_yaml_names_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "bad.yaml", "ns:\n  - name: a\n    parameters: {type: object\n")
    with pytest.raises(LoadError) as info:
        FileToolLoader(path).load()
    assert info.value.line is not None and info.value.line >= 3
    assert f"{path}:{info.value.line}" in str(info.value)


def test_invalid_json_and_jsonl_name_the_line(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match=r"bad.json:3"):
        FileToolLoader(_write(tmp_path, "bad.json", '[\n {"name": "a"},\n {"name": }\n]')).load()
    with pytest.raises(LoadError, match=r"bad.jsonl:2"):
        FileToolLoader(_write(tmp_path, "bad.jsonl", '{"name": "a"}\n{oops}\n')).load()


def test_duplicate_yaml_keys_are_errors(tmp_path: Path) -> None:
    path = _write(tmp_path, "d.yaml", "ns:\n  - name: a\n    description: one\n    description: two\n")
    with pytest.raises(LoadError, match=r"duplicate key 'description' \(first at line 3\)") as info:
        FileToolLoader(path).load()
    assert info.value.line == 4
    merged = "base: &b {name: a, description: x}\nns:\n  - <<: *b\n    description: y\n"
    assert parse_yaml_text(merged, "m.yaml")[0]["ns"][0]["description"] == "y"


def test_every_bad_tool_is_reported_with_its_index(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "b.json",
        [
            {"name": "ok"},
            {"description": "no name"},
            {"name": "arr", "parameters": {"type": "array"}},
            {"name": "str", "parameters": "not a schema"},
        ],
    )
    with pytest.raises(LoadError) as info:
        FileToolLoader(path).load()
    pointers = [p.pointer for p in info.value.problems]
    assert pointers == ["/1", "/2", "/3"]
    assert "tool without a name" in str(info.value.problems[0])
    assert "not an object schema" in str(info.value.problems[1])


def test_empty_and_wrong_files_are_errors_not_empty_registries(tmp_path: Path) -> None:
    for name, text in (("empty.yaml", ""), ("comments.yaml", "# nothing yet\n"), ("none.json", "[]")):
        with pytest.raises(LoadError, match="no tools in file"):
            FileToolLoader(_write(tmp_path, name, text)).load()
    with pytest.raises(LoadError, match="not found"):
        FileToolLoader(tmp_path / "missing.yaml").load()
    with pytest.raises(LoadError, match="unsupported tool file type"):
        FileToolLoader(_write(tmp_path, "t.txt", "x")).load()
    with pytest.raises(LoadError, match="expected a list or mapping"):
        FileToolLoader(_write(tmp_path, "s.yaml", "just a string\n")).load()


def test_exported_tools_load_back_identically(tmp_path: Path) -> None:
    from fms_dgt.cli import main

    source = Path(__file__).resolve().parents[4] / "data" / "weather_tools.yaml"
    original = ToolRegistry.from_file(source)
    exported = tmp_path / "export.json"
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(["tools", "list", str(source), "--json"]) == 0
    exported.write_text(buffer.getvalue())
    again = ToolRegistry.from_file(exported)
    strip = lambda t: {**t.to_dict(), "metadata": {k: v for k, v in t.metadata.items() if k != "source"}}  # noqa: E731
    assert [strip(t) for t in again] == [strip(t) for t in original]


def test_libyaml_is_used_when_available() -> None:
    from fms_dgt import io as fio

    assert hasattr(yaml, "CSafeLoader") == HAS_LIBYAML
    if HAS_LIBYAML:
        assert fio._EventLoader is yaml.CSafeLoader


# ---------------------------------------------------------------- the real-world corpus


def _entries(path: Path) -> int:
    """Tool definitions in a dataset file, counted independently of the loader."""
    text = path.read_text()
    try:
        docs = [json.loads(text)]
    except json.JSONDecodeError:
        docs = [json.loads(line) for line in text.splitlines() if line.strip()]
    if len(docs) == 1 and isinstance(docs[0], list):
        docs = docs[0]
    count = 0
    for doc in docs:
        listed = doc.get("function", doc.get("api_list"))
        count += len(listed) if isinstance(listed, list) else 1
    return count


CORPUS_COUNTS = {
    "api-bank/openai_tools.json": 67,
    "api-bank/tool_catalog.json": 67,
    "bfcl/BFCL_v4_multiple.json": 470,
    "bfcl/BFCL_v4_simple_python.json": 396,
    "nestful/executable-spec.json": 39,
    "toolbench/G1_query.json": 12,
    "toolmind/APIGen-MT-5k-query_tools.yaml": 26,
    "toolmind/glaive-function-calling-v2-query_tools.yaml": 959,
    "toolmind/When2Call-query_tools.yaml": 3448,
}


@pytest.mark.parametrize("relative", sorted(CORPUS_COUNTS))
def test_corpus_toolsets_load_with_expected_counts(corpus: Path, relative: str) -> None:
    path = corpus / "toolsets" / relative
    loader = FileToolLoader(path)
    tools = ToolRegistry.from_loaders([loader]).tools()
    assert len(tools) == CORPUS_COUNTS[relative]
    if path.suffix == ".json":
        conflicts = len(loader.report.warnings)
        assert len(tools) + loader.report.folded + conflicts == _entries(path)
    else:
        assert len(tools) == len(yaml.load(path.read_text(), Loader=yaml.CSafeLoader))
    for tool in tools:
        META.validate(tool.parameters)
        META.validate(tool.output_parameters)
        assert tool.parameters["type"] == "object"


def test_every_bfcl_multi_turn_file_loads_with_response_schemas(corpus: Path) -> None:
    files = sorted((corpus / "toolsets" / "bfcl" / "multi_turn_func_doc").glob("*.json"))
    assert files
    for path in files:
        lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        tools = FileToolLoader(path).load()
        assert [t.name for t in tools] == [line["name"] for line in lines]
        with_response = [t for t, line in zip(tools, lines, strict=True) if line.get("response")]
        assert all(t.output_parameters for t in with_response)
        for tool in tools:
            Draft202012Validator.check_schema(tool.parameters)
            Draft202012Validator.check_schema(tool.output_parameters)


def test_every_corpus_toolset_file_is_covered(corpus: Path) -> None:
    files = {
        str(p.relative_to(corpus / "toolsets"))
        for p in (corpus / "toolsets").rglob("*")
        if p.suffix in (".json", ".yaml", ".jsonl") and "multi_turn" not in str(p)
    }
    assert files == set(CORPUS_COUNTS)


def test_references_leaving_a_tool_schema_make_the_tool_invalid_without_a_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import http.server
    import threading

    hits: list[str] = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"type": "string"}')

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    outside = tmp_path.parent / "outside-secret.json"
    outside.write_text('{"type": "string", "description": "private"}')
    url = f"http://127.0.0.1:{server.server_address[1]}/schema.json"
    tools = [
        {"name": "remote", "parameters": {"type": "object", "properties": {"a": {"$ref": url}}}},
        {
            "name": "local_file",
            "parameters": {"type": "object", "properties": {"a": {"$ref": outside.as_uri()}}},
        },
        {"name": "dangling", "parameters": {"type": "object", "properties": {"a": {"$ref": "#/$defs/nope"}}}},
        {
            "name": "fine",
            "parameters": {
                "type": "object",
                "$defs": {"city": {"type": "string"}},
                "properties": {"a": {"$ref": "#/$defs/city"}},
            },
        },
    ]
    path = _write(tmp_path, "refs.json", tools)
    try:
        with pytest.raises(LoadError) as info:
            FileToolLoader(path).load()
        assert main(["tools", "validate", str(path)]) == 1
    finally:
        server.shutdown()
        server.server_close()
    assert hits == [], "nothing is fetched"
    problems = {p.pointer: str(p) for p in info.value.problems}
    assert set(problems) == {
        "/0/parameters/properties/a/$ref",
        "/1/parameters/properties/a/$ref",
        "/2/parameters/properties/a/$ref",
    }
    assert "leaves the schema" in problems["/0/parameters/properties/a/$ref"]
    assert "points to nothing in the schema" in problems["/2/parameters/properties/a/$ref"]
    printed = capsys.readouterr().out
    assert "leaves the schema" in printed and "private" not in printed


def test_live_manifests_with_an_http_block_get_the_http_kind(tmp_path: Path) -> None:
    text = """
apiVersion: tools.fms-dgt/v1
kind: Tool
metadata: {name: forecast, namespace: live}
spec:
  description: Forecast.
  mode: live
  http: {url: "https://api.example/forecast", method: GET}
  timeout_ms: 1500
  requires_approval: true
---
apiVersion: tools.fms-dgt/v1
kind: Tool
metadata: {name: ping, namespace: live}
spec: {description: Ping., mode: live}
---
apiVersion: tools.fms-dgt/v1
kind: Tool
metadata: {name: echo, namespace: live}
spec: {description: Echo., mode: mock, http: {url: "https://api.example/echo"}}
"""
    tools = {t.name: t for t in FileToolLoader(_write(tmp_path, "live.yaml", text)).load()}
    forecast = tools["forecast"].metadata
    assert forecast["kind"] == "http" and forecast["http"]["method"] == "GET"
    assert forecast["timeout_ms"] == 1500 and forecast["requires_approval"] is True
    assert tools["ping"].metadata["kind"] == "file"  # live, but nothing to call
    assert tools["echo"].metadata["kind"] == "file"  # mock mode keeps the mock engine
