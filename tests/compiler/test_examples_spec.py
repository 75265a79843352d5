"""Spec `examples:` and the `test:` fixture (issue 29): what the build keeps of them, what it
refuses (the golden cases are in malformed/example-*.yaml and test-fixture-invalid.yaml), how
the README shows them; the pure judgement of an answer; the fuzz arguments."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from lynxc.compiler.emit.examples import describe_expectation
from lynxc.compiler.lower.server import compile_spec
from lynxc.compiler.spec.models import SpecFile
from lynxc.compiler.testing.expectations import Answer, error_kind, mismatches, subset_mismatches
from lynxc.compiler.testing.fuzz import EXTRA_PROPERTY, near_misses, valid_arguments
from lynxc.compiler.wire import tools_list

SPEC = """\
lynxc: 1
server:
  name: demo
  version: 1.0.0
  settings:
    greeting: {type: string, default: hello, description: The greeting.}
  test:
    settings: {greeting: "{spec_dir}/hi"}
    setup:
      - lynxc: [load, demo, things, "{tmp}/x.jsonl"]
    examples:
      - tool: echo
        name: from the server
        arguments: {text: yo}
tools:
  - name: echo
    backend: tests.fixtures.backends:echo
    description:
      purpose: Echo the given text back unchanged.
    parameters:
      text: {type: string, required: true, maxLength: 5, description: What to echo.}
    output:
      type: object
      properties:
        echo: {type: object, properties: {text: {type: string}}}
EXAMPLES
"""
TOOL_EXAMPLES = """\
    examples:
      - arguments: {text: hi}
        expect:
          result: {echo: {text: hi}}
      - name: too long
        arguments: {text: far too long}
        expect:
          error: {kind: invalid_arguments, field: text}
"""


def compiled(tmp_path: Path, examples: str):
    spec = tmp_path / "demo.yaml"
    spec.write_text(SPEC.replace("EXAMPLES\n", examples))
    result = compile_spec(spec)
    assert result.value is not None, [d.render() for d in result.diagnostics]
    return result.value


def test_examples_are_kept_in_order_with_default_names_and_never_reach_the_wire(tmp_path: Path) -> None:
    server = compiled(tmp_path, TOOL_EXAMPLES)
    assert [(e.tool, e.name) for e in server.examples] == [
        ("echo", "example 1"),
        ("echo", "too long"),
        ("echo", "from the server"),
    ]
    first = server.examples[0]
    assert first.arguments == {"text": "hi"} and first.expect == {"result": {"echo": {"text": "hi"}}}
    assert (first.span.line, first.span.col) == (27, 9)  # the example's own line
    assert server.examples[1].expect == {"error": {"kind": "invalid_arguments", "field": "text"}}
    fixture = server.test_fixture
    assert fixture is not None and fixture.settings == {"greeting": "{spec_dir}/hi"}
    assert [step.lynxc for step in fixture.setup] == [("load", "demo", "things", "{tmp}/x.jsonl")]
    bare = compiled(tmp_path, "")
    assert tools_list(server) == tools_list(bare)  # examples are documentation and tests only


def test_the_readme_lists_each_tools_examples(tmp_path: Path) -> None:
    from lynxc.compiler.emit.server import emit_server
    from lynxc.compiler.lint.linter import lint_server
    from lynxc.compiler.wire import wire_from_ir

    server = compiled(tmp_path, TOOL_EXAMPLES)
    files = emit_server(server, score=lint_server(wire_from_ir(server, "demo.yaml")).score)
    readme = files["generated/demo/README.md"]
    assert "**Examples** (run by `lynxc test`)" in readme
    assert (
        '- *example 1*: arguments `{"text": "hi"}`; answers; the result includes `{"echo": {"text": "hi"}}`.'
        in readme
    )
    assert (
        '- *too long*: arguments `{"text": "far too long"}`; refused (invalid_arguments) naming `text`.'
        in readme
    )
    assert '- *from the server*: arguments `{"text": "yo"}`; answers without an error.' in readme
    tools_json = json.loads(files["generated/demo/tools.json"])
    assert "examples" not in json.dumps(tools_json["tools"][0]["inputSchema"])


def test_the_editor_schema_completes_examples_and_the_fixture() -> None:
    schema = json.dumps(SpecFile.model_json_schema())
    for name in ("Expectation", "RowsExpectation", "ErrorExpectation", "ServerExample", "TestFixture"):
        assert name in schema


@pytest.mark.parametrize(
    ("expect", "rows"),
    [
        ({"rows": {"count": 1}}, []),
        ({"rows": {"min": 2}}, ["rows: expected at least 2 items at /rows, got 1"]),
        ({"rows": {"max": 0}}, ["rows: expected at most 0 items at /rows, got 1"]),
        ({"rows": {"at": "/nothing"}}, ['rows: nothing at /nothing in {"rows": [{"id": 1, "ok": true}]}']),
    ],
)
def test_row_counts(expect: dict, rows: list[str]) -> None:
    answer = Answer(structured={"rows": [{"id": 1, "ok": True}]}, text="{}")
    assert mismatches("t", expect, answer) == rows


def test_subsets_lists_contains_and_booleans() -> None:
    got = {"rows": [{"id": 1, "tags": ["a", "b"]}, {"id": 2, "tags": []}], "total": 2, "ok": True}
    assert subset_mismatches({"total": 2, "rows": [{"id": 1}, {"id": 2}]}, got, "result") == []
    assert subset_mismatches({"rows": {"contains": [{"id": 2}]}}, got, "result") == []
    assert subset_mismatches({"rows": {"contains": [{"id": 3}]}}, got, "result") == [
        'result.rows: no item matches {"id": 3}'
    ]
    assert subset_mismatches({"rows": [{"id": 1}]}, got, "result")[0].startswith(
        "result.rows: expected 1 items"
    )
    assert subset_mismatches({"ok": 1}, got, "result") == ["result.ok: expected 1, got true"]
    assert subset_mismatches({"total": 2.0, "missing": None}, got, "result") == [
        "result.missing: missing (expected null)"
    ]


def test_errors_by_kind_field_and_message() -> None:
    refused = Answer(is_error=True, text="invalid arguments for 'find': limit: Input should be <= 10")
    assert error_kind("find", refused.text) == "invalid_arguments"
    assert error_kind("find", "'find' refused: missing scope") == "forbidden"
    assert error_kind("find", "no row matched") == "tool_error"
    assert mismatches("find", {"error": {"kind": "invalid_arguments", "field": "limit"}}, refused) == []
    assert mismatches("find", {"error": {"kind": "tool_error", "message": "nope"}}, refused) == [
        f"error: expected kind tool_error, got invalid_arguments: {refused.text}",
        f"error: expected to contain 'nope': {refused.text}",
    ]
    assert mismatches("find", {"result": {}}, refused) == [f"expected a result, got an error: {refused.text}"]
    assert mismatches("find", {"error": {}}, Answer(structured={"a": 1})) == [
        'expected an error, got a result: {"a": 1}'
    ]
    assert mismatches("find", {}, Answer(protocol_error="JSON-RPC error -32602: Unknown tool")) == [
        "protocol error instead of an answer: JSON-RPC error -32602: Unknown tool"
    ]
    assert mismatches("find", {"text": "Paris"}, Answer(text="Lyon")) == [
        "text: expected to contain 'Paris', got 'Lyon'"
    ]


def test_the_readme_sentence_of_each_expectation() -> None:
    assert describe_expectation({}) == "answers without an error."
    assert (
        describe_expectation({"rows": {"at": "/items", "min": 1, "max": 5}, "text": "ok"})
        == 'answers; 1 to 5 items at `/items`; the text contains "ok".'
    )
    assert (
        describe_expectation({"error": {"message": "no row"}})
        == 'refused with a message containing "no row".'
    )


SCHEMA = {
    "type": "object",
    "properties": {
        "q": {"type": "string", "minLength": 1, "maxLength": 5},
        "n": {"type": "integer", "minimum": 1, "maximum": 10},
        "kind": {"enum": ["a", "b"]},
        "maybe": {"anyOf": [{"type": "boolean"}, {"type": "null"}]},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
    },
    "required": ["q"],
    "additionalProperties": False,
}


def test_drawn_arguments_are_valid_distinct_and_the_same_for_the_same_seed() -> None:
    drawn = valid_arguments(SCHEMA, 12, seed=7)
    assert len(drawn) == 12 and len({json.dumps(d, sort_keys=True) for d in drawn}) == 12
    for arguments in drawn:
        jsonschema.validate(arguments, SCHEMA)
    assert valid_arguments(SCHEMA, 12, seed=7) == drawn
    assert valid_arguments(SCHEMA, 12, seed=8) != drawn


def test_near_misses_each_break_the_schema_at_the_field_they_name() -> None:
    misses = near_misses(SCHEMA, {"q": "hi"}, seed=1)
    validator = jsonschema.Draft202012Validator(SCHEMA)
    whats = {(m.field, m.what) for m in misses}
    assert {
        ("q", "required field dropped"),
        ("q", "maxLength + 1"),
        ("q", "minLength - 1"),
        ("n", "maximum + 1"),
        ("n", "minimum - 1"),
        ("n", "wrong type (not integer)"),
        ("kind", "value outside the enum"),
        ("tags", "maxItems + 1"),
        (EXTRA_PROPERTY, "extra property"),
    } <= whats
    assert ("maybe", "null") not in whats  # null is allowed there: not a near-miss
    for miss in misses:
        assert not validator.is_valid(miss.arguments), miss
    assert near_misses(SCHEMA, {"q": "hi"}, seed=1) == misses
