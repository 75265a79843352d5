"""Spec -> wire form: what the compiler emits for each schema feature the seeds need."""

from __future__ import annotations

from pathlib import Path

from lynxc.compiler.lower.server import compile_spec
from lynxc.compiler.wire import wire_tool

SPEC = """\
lynxc: 1
server: {name: demo, version: 1.2.3-rc.1}
tools:
  - name: fetch.page
    title: Fetch a page
    backend: tests.fixtures.backends:fetch_page
    annotations: {readOnlyHint: true, openWorldHint: true}
    description:
      purpose: >-
        Fetch one page of {caps.max_bytes:bytes} ({caps.max_bytes:n} bytes), up to
        {caps.max_bytes.max:bytes}.
      usage: 'Literal braces stay {{"a": 1}}.'
    caps:
      max_bytes: {value: 1048576, max: 4194304, unit: bytes, description: Largest page.}
    parameters:
      id:
        anyOf: [{type: string, minLength: 1}, {type: integer, minimum: 0}]
        required: true
        description: A page id, by name or number.
        examples: [home, 7]
      size: {type: integer, minimum: 1, maximum: caps.max_bytes.max, default: 1024, description: Bytes.}
      tags:
        type: array
        items: {type: string, enum: [a, b]}
        minItems: 1
        uniqueItems: true
        description: Tags.
      filter:
        type: object
        description: Optional filter.
        properties: {field: {type: string}, value: {type: number}}
        requiredProperties: [field]
        additionalProperties: false
    output:
      type: object
      required: [page]
      properties:
        page: {$ref: "#/$defs/Page", nullable: true}
      $defs:
        Page: {type: object, properties: {text: {type: string}}}
"""


def test_every_feature_lowers_to_json_schema_2020_12(tmp_path: Path) -> None:
    spec = tmp_path / "demo.yaml"
    spec.write_text(SPEC)
    result = compile_spec(spec)
    assert result.value is not None, [d.render() for d in result.diagnostics]
    tool = wire_tool(result.value.tools[0])
    assert tool["description"] == (
        'Fetch one page of 1 MiB (1,048,576 bytes), up to 4 MiB.\n\nLiteral braces stay {"a": 1}.'
    )
    assert tool["annotations"] == {"readOnlyHint": True, "openWorldHint": True}
    schema = tool["inputSchema"]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["required"] == ["id"] and schema["additionalProperties"] is False
    assert schema["properties"]["id"] == {
        "anyOf": [{"type": "string", "minLength": 1}, {"type": "integer", "minimum": 0}],
        "description": "A page id, by name or number.",
        "examples": ["home", 7],
    }
    assert schema["properties"]["size"]["maximum"] == 4194304
    assert schema["properties"]["tags"]["items"] == {"type": "string", "enum": ["a", "b"]}
    assert schema["properties"]["filter"]["required"] == ["field"]
    output = tool["outputSchema"]
    assert output["properties"]["page"] == {"anyOf": [{"$ref": "#/$defs/Page"}, {"type": "null"}]}
    assert output["$defs"]["Page"]["properties"]["text"] == {"type": "string"}


def test_rst_literals_are_not_tool_references(tmp_path: Path) -> None:
    """``None`` is a reStructuredText literal, not a quoted tool; single backticks still are."""
    spec = """\
lynxc: 1
server: {name: demo, version: 0.1.0}
tools:
  - name: find
    backend: tests.fixtures.backends:echo
    description:
      purpose: Find items; set ``sort_order`` to ``None`` for the stored order, or call `fetch`.
    parameters:
      q: {type: string, required: true, description: Text.}
"""
    path = tmp_path / "demo.yaml"
    path.write_text(spec)
    result = compile_spec(path, check_backends=False)
    unknown = [d.message for d in result.diagnostics if d.rule_id == "TOOL_REFERENCE_UNKNOWN"]
    assert unknown == ["the description quotes `fetch`, which is no tool of this server"]
