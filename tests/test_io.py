"""Bounded, strict parsing of untrusted YAML and JSON (fms_dgt/io.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fms_dgt.errors import LoadError
from fms_dgt.io import ParseLimits, parse_json_text, parse_yaml_text, read_document

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
REPO = Path(__file__).resolve().parents[1]


def _yaml_files() -> list[Path]:
    found = sorted(REPO.glob("configs/*.yaml")) + sorted(REPO.glob("data/**/*.yaml"))
    if CORPUS.is_dir():
        found += sorted(CORPUS.rglob("*.yaml")) + sorted(CORPUS.rglob("*.yml"))
    return found


@pytest.mark.parametrize("path", _yaml_files(), ids=lambda p: p.name)
def test_yaml_documents_equal_what_pyyamls_safe_loader_gives(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    try:
        expected = list(yaml.load_all(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        with pytest.raises(LoadError):
            parse_yaml_text(text, str(path))
        return
    assert parse_yaml_text(text, str(path)) == expected


def test_scalars_merge_keys_and_anchors_resolve_as_the_safe_loader_does() -> None:
    text = (
        "base: &b {name: a, description: x, n: 1}\n"
        "more: &m {description: z, extra: true}\n"
        "one: {<<: *b, description: y}\n"
        "values: [1, 1.5, 0x10, .inf, ~, yes, 'yes', 2024-01-02, '007', 1e3]\n"
        "200: status code key\n"
    )
    assert parse_yaml_text(text, "t.yaml") == [yaml.safe_load(text)]


def test_merged_maps_earlier_in_the_list_win_as_the_merge_key_spec_says() -> None:
    # The YAML 1.1 merge key: of the maps listed, an earlier one's keys win over a later one's.
    # PyYAML up to 6.0.3 agrees; the safe_load of 6.0.4 lets the later map win.
    text = (
        "base: &b {name: a, description: x, n: 1}\n"
        "more: &m {description: z, extra: true}\n"
        "two: {<<: [*m, *b]}\n"
    )
    [document] = parse_yaml_text(text, "t.yaml")
    assert document["two"] == {"description": "z", "extra": True, "name": "a", "n": 1}


def test_a_yaml_stream_keeps_every_document() -> None:
    assert parse_yaml_text("a: 1\n---\n- 2\n---\n", "s.yaml") == [{"a": 1}, [2], None]
    assert parse_yaml_text("", "e.yaml") == []


@pytest.mark.parametrize(
    "text",
    ["[" * 40_000 + "]" * 40_000, "- " * 40_000 + "x\n", "{a: " * 40_000 + "1" + "}" * 40_000],
    ids=["flow-lists", "block-sequences", "flow-maps"],
)
def test_yaml_nested_40000_deep_is_an_error_in_a_child_process_too(tmp_path: Path, text: str) -> None:
    with pytest.raises(LoadError, match=r"nested too deeply \(more than 128 levels\)"):
        parse_yaml_text(text, "deep.yaml")
    # The C composer would crash the process (a segmentation fault): prove the CLI survives it.
    path = tmp_path / "deep.yaml"
    path.write_text(text)
    done = subprocess.run(
        [sys.executable, "-m", "fms_dgt.cli", "tools", "validate", str(path)], capture_output=True, text=True
    )
    assert done.returncode == 1 and "nested too deeply" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_an_alias_bomb_is_refused_before_it_expands() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    bomb = "\n".join(lines) + "\n"
    assert len(bomb) < 700
    with pytest.raises(LoadError, match="too large: more than 5,000,000 values once aliases are expanded"):
        parse_yaml_text(bomb, "bomb.yaml")
    small = ParseLimits(max_nodes=50)
    with pytest.raises(LoadError, match="more than 50 values"):
        parse_yaml_text("a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nb: [*a, *a, *a, *a, *a]\n", "b.yaml", small)


def test_self_referencing_and_undefined_aliases_are_errors() -> None:
    with pytest.raises(LoadError, match=r"alias \*s refers to no finished anchor.*self-reference") as info:
        parse_yaml_text("root: &s\n  child: *s\n", "self.yaml")
    assert info.value.line == 2
    with pytest.raises(LoadError, match=r"invalid YAML|refers to no finished anchor"):
        parse_yaml_text("a: *nowhere\n", "undef.yaml")


def test_unsupported_tags_and_unhashable_keys_are_errors_with_lines() -> None:
    with pytest.raises(LoadError, match="unsupported YAML tag '!Ref'") as info:
        parse_yaml_text("a: 1\nb: !Ref other\n", "cfn.yaml")
    assert info.value.line == 2
    with pytest.raises(LoadError, match="unsupported YAML tag"):
        parse_yaml_text("s: !!set {a, b}\n", "set.yaml")
    with pytest.raises(LoadError, match="unhashable mapping key"):
        parse_yaml_text("? [a, b]\n: c\n", "key.yaml")


def test_duplicate_json_keys_are_refused_with_their_pointer() -> None:
    text = (
        json.dumps({"tools": [{"name": "ok"}]})[:-1]
        + ', "x": {"name": "delete_everything", "name": "get_weather"}}'
    )
    with pytest.raises(LoadError, match="duplicate key 'name' in a JSON object") as info:
        parse_json_text(text, "dup.json")
    assert info.value.pointer == "/x"
    with pytest.raises(LoadError, match="duplicate key 'a'") as info:
        parse_json_text('{"a": 1}\n{"a": 1, "a": 2}\n', "dup.jsonl", lines=True)
    assert info.value.line == 2


def test_json_nesting_is_bounded_at_any_depth() -> None:
    with pytest.raises(LoadError, match="nested too deeply"):
        parse_json_text("[" * 100_000 + "]" * 100_000, "deep.json")
    schema: dict[str, object] = {"type": "string"}
    for _ in range(200):
        schema = {"type": "object", "properties": {"a": schema}}
    with pytest.raises(LoadError, match="more than 128 levels"):
        parse_json_text(json.dumps({"name": "t", "parameters": schema}), "s.json")
    assert parse_json_text("[" * 100 + "]" * 100, "ok.json")


def test_files_over_the_size_limit_and_bad_encodings_are_errors(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_text(json.dumps([{"name": "t", "description": "x" * 5000}]))
    with pytest.raises(LoadError, match="file too large: more than 1,000 bytes"):
        read_document(big, ParseLimits(max_bytes=1000))
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("name: caf\xe9\n".encode("latin-1"))
    with pytest.raises(LoadError, match="not UTF-8 text"):
        read_document(latin)


def test_integers_of_thousands_of_digits_are_errors_with_their_line() -> None:
    with pytest.raises(LoadError, match="an integer with thousands of digits") as info:
        parse_yaml_text("a: 1\nb: " + "9" * 5000 + "\n", "big.yaml")
    assert info.value.line == 2
    with pytest.raises(LoadError, match="an integer with thousands of digits"):
        parse_json_text('{"a": ' + "9" * 5000 + "}", "big.json")


def test_a_lone_surrogate_is_refused_with_its_pointer_and_a_pair_is_read() -> None:
    # A JSON escape can write half of an emoji's pair: no record, cache or encoder can hold it.
    with pytest.raises(LoadError, match=r"lone surrogate \(\\ud83d\)") as info:
        parse_json_text('{"tools": [{"name": "t", "description": "Smile \\ud83d."}]}', "t.json")
    assert info.value.pointer == "/tools/0/description"
    with pytest.raises(LoadError, match=r"\(in a key\)") as info:
        parse_json_text('{"properties": {"a\\udc00": {}}}', "k.json")
    assert info.value.pointer == "/properties/a\\udc00"
    str(info.value).encode("utf-8")  # the error itself is printable
    with pytest.raises(LoadError, match="lone surrogate") as info:
        parse_json_text('{"a": 1}\n["ok", "\\udfff"]\n', "t.jsonl", lines=True)
    assert info.value.line == 2
    with pytest.raises(LoadError, match="lone surrogate"):
        parse_json_text('"\\ud800"', "s.json")
    assert parse_json_text('{"d": "Smile \\ud83d\\ude00"}', "ok.json") == [{"d": "Smile \U0001f600"}]
    with pytest.raises(LoadError) as info:  # YAML (libyaml, or the composer's own check)
        parse_yaml_text('a: 1\nb: "x\\ud800"\n', "t.yaml")
    assert info.value.line == 2


def test_a_tool_name_holding_a_lone_surrogate_is_refused() -> None:
    from fms_dgt.core.tools.data_objects import Tool
    from fms_dgt.errors import ToolDefinitionError

    with pytest.raises(ToolDefinitionError, match=r"invalid tool name 'get\\\\ud800': a string holds a lone"):
        Tool(name="get\ud800", namespace="ns")


def test_a_tool_description_holding_a_lone_surrogate_is_refused() -> None:
    from fms_dgt.core.tools.data_objects import Tool
    from fms_dgt.errors import ToolDefinitionError

    with pytest.raises(ToolDefinitionError, match=r"invalid description of tool ns::t: a string holds"):
        Tool(name="t", namespace="ns", description="Smile \ud83d.")
