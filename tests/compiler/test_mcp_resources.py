"""MCP resources (issue 31): each rule of compiler/lower/mcp_resources.py, on a snippet, with
the place it names (file:line:col); and what a clean resource lowers to."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from lynxc.compiler.lower.mcp_resources import (
    McpResourceSource,
    ResourceContext,
    lower_mcp_resources,
    resources_document,
    sources_document,
    sql_tool_sources,
)
from lynxc.compiler.spec.source import parse_yaml
from lynxc.compiler.spec.surface import Resource


def lowered(tmp_path: Path, text: str, **context):
    doc = parse_yaml(textwrap.dedent(text), "spec.yaml").value
    assert doc is not None
    items = [
        McpResourceSource(doc, Resource.model_validate(entry), ("resources", i))
        for i, entry in enumerate(doc.data["resources"])
    ]
    options = {"collections": {"peps": "peps"}, "sql_data": True, **context}
    return lower_mcp_resources(items, ResourceContext(spec_dir=tmp_path, **options))


def found(tmp_path: Path, text: str, **context) -> list[str]:
    return [f"{d.span.line}:{d.span.col} {d.rule_id}" for d in lowered(tmp_path, text, **context).diagnostics]


CASES = {
    "name twice": (
        """
        resources:
          - {name: a, uri: "x://a", description: d, mime_type: text/plain, text: "1"}
          - {name: a, uri: "x://b", description: d, mime_type: text/plain, text: "2"}
        """,
        ["4:12 MCP_RESOURCE_NAME_DUPLICATE"],
    ),
    "uri twice": (
        """
        resources:
          - {name: a, uri: "x://a", description: d, mime_type: text/plain, text: "1"}
          - {name: b, uri: "x://a", description: d, mime_type: text/plain, text: "2"}
        """,
        ["4:20 MCP_RESOURCE_URI_DUPLICATE"],
    ),
    "template twice": (
        """
        resources:
          - {name: a, uri_template: "x://{id}", description: d, mime_type: text/plain, text: "{{ id }}"}
          - {name: b, uri_template: "x://{id}", description: d, mime_type: text/plain, text: "{{ id }}"}
        """,
        ["4:29 MCP_RESOURCE_URI_DUPLICATE"],
    ),
    "neither uri nor template": (
        """
        resources:
          - name: a
            description: d
            mime_type: text/plain
            text: "1"
        """,
        ["3:5 MCP_RESOURCE_URI_ONE_OF"],
    ),
    "both uri and template": (
        """
        resources:
          - name: a
            uri: x://a
            uri_template: x://{id}
            description: d
            mime_type: text/plain
            text: "1"
        """,
        ["5:5 MCP_RESOURCE_URI_ONE_OF"],
    ),
    "no source": (
        """
        resources:
          - name: a
            uri: x://a
            description: d
            mime_type: text/plain
        """,
        ["3:5 MCP_RESOURCE_SOURCE_ONE_OF"],
    ),
    "two sources": (
        """
        resources:
          - name: a
            uri: x://a
            description: d
            mime_type: text/plain
            text: "1"
            function: pkg.mod:fn
        """,
        ["8:5 MCP_RESOURCE_SOURCE_ONE_OF"],
    ),
    "relative uri": (
        """
        resources:
          - name: a
            uri: guide.md
            description: d
            mime_type: text/plain
            text: "1"
        """,
        ["4:10 MCP_RESOURCE_URI_INVALID"],
    ),
    "template unclosed, at its column": (
        """
        resources:
          - name: a
            uri_template: "pep://{number"
            description: d
            mime_type: text/plain
            text: "{{ number }}"
        """,
        ["4:26 MCP_RESOURCE_TEMPLATE_INVALID"],
    ),
    "template without variables": (
        """
        resources:
          - name: a
            uri_template: pep://all
            description: d
            mime_type: text/plain
            text: "x"
        """,
        ["4:19 MCP_RESOURCE_TEMPLATE_INVALID"],
    ),
    "variable not in the template": (
        """
        resources:
          - name: a
            uri_template: pep://{number}
            description: d
            mime_type: text/plain
            text: "{{ number }}"
            variables:
              numbr: {description: The number.}
        """,
        ["9:7 MCP_RESOURCE_VARIABLE_UNKNOWN"],
    ),
    "mime type": (
        """
        resources:
          - name: a
            uri: x://a
            description: d
            mime_type: markdown
            text: "1"
        """,
        ["6:16 MCP_RESOURCE_MIME_TYPE_INVALID"],
    ),
    "file with a template": (
        """
        resources:
          - name: a
            uri_template: x://{id}
            description: d
            mime_type: text/plain
            file: guide.md
        """,
        ["7:11 MCP_RESOURCE_FILE_TEMPLATED"],
    ),
    "file missing": (
        """
        resources:
          - name: a
            uri: x://a
            description: d
            mime_type: text/plain
            file: missing.md
        """,
        ["7:11 MCP_RESOURCE_FILE_MISSING"],
    ),
    "file outside the spec's folder": (
        """
        resources:
          - name: a
            uri: x://a
            description: d
            mime_type: text/plain
            file: ../outside.md
        """,
        ["7:11 MCP_RESOURCE_FILE_MISSING"],
    ),
    "file over max_bytes": (
        """
        resources:
          - name: a
            uri: x://a
            description: d
            mime_type: text/markdown
            file: guide.md
            max_bytes: 4
        """,
        ["7:11 MCP_RESOURCE_TOO_LARGE"],
    ),
    "text over max_bytes": (
        """
        resources:
          - name: a
            uri: x://a
            description: d
            mime_type: text/plain
            text: "12345"
            max_bytes: 4
        """,
        ["7:11 MCP_RESOURCE_TOO_LARGE"],
    ),
    "text template uses an unbound name": (
        """
        resources:
          - name: a
            uri_template: x://{id}
            description: d
            mime_type: text/plain
            text: "{{ idd }}"
        """,
        ["7:11 MCP_RESOURCE_TEXT_TEMPLATE_INVALID"],
    ),
    "text template syntax": (
        """
        resources:
          - name: a
            uri_template: x://{id}
            description: d
            mime_type: text/plain
            text: "{{ id "
        """,
        ["7:11 MCP_RESOURCE_TEXT_TEMPLATE_INVALID"],
    ),
    "text template reading a Python attribute": (
        """
        resources:
          - name: a
            uri_template: x://{id}
            description: d
            mime_type: text/plain
            text: "{{ id.__class__ }}"
        """,
        ["7:11 MCP_RESOURCE_TEXT_TEMPLATE_INVALID"],
    ),
    "record of an unknown collection": (
        """
        resources:
          - name: a
            uri_template: pep://{number}
            description: d
            mime_type: application/json
            record: {collection: pep}
        """,
        ["7:26 MCP_RESOURCE_COLLECTION_UNKNOWN"],
    ),
    "record with two variables": (
        """
        resources:
          - name: a
            uri_template: pep://{number}/{part}
            description: d
            mime_type: application/json
            record: {collection: peps}
        """,
        ["4:19 MCP_RESOURCE_RECORD_VARIABLES"],
    ),
    "record at a static uri": (
        """
        resources:
          - name: a
            uri: pep://8
            description: d
            mime_type: application/json
            record: {collection: peps}
        """,
        ["4:10 MCP_RESOURCE_RECORD_VARIABLES"],
    ),
    "sql without data": (
        """
        resources:
          - name: a
            uri_template: country://{code}
            description: d
            mime_type: application/json
            sql: SELECT * FROM countries WHERE code = $code
        """,
        ["7:10 MCP_RESOURCE_SQL_DATA_MISSING"],
        {"sql_data": False},
    ),
    "sql parameters not the variables": (
        """
        resources:
          - name: a
            uri_template: country://{code}
            description: d
            mime_type: application/json
            sql: SELECT * FROM countries WHERE code = $cod
        """,
        ["7:10 MCP_RESOURCE_SQL_PARAMETERS"],
    ),
    "sql parameters on a static uri": (
        """
        resources:
          - name: a
            uri: country://all
            description: d
            mime_type: application/json
            sql: SELECT count(*) AS n FROM countries WHERE code = $code
        """,
        ["7:10 MCP_RESOURCE_SQL_PARAMETERS"],
    ),
    "function not a target": (
        """
        resources:
          - name: a
            uri: x://a
            description: d
            mime_type: text/plain
            function: not a target
        """,
        ["7:15 MCP_RESOURCE_FUNCTION_INVALID"],
    ),
    "function that cannot be imported": (
        """
        resources:
          - name: a
            uri: x://a
            description: d
            mime_type: text/plain
            function: pkg.mod:fn
        """,
        ["7:15 MCP_RESOURCE_FUNCTION_INVALID"],
        {"probe": lambda targets: {t: "No module named 'pkg'" for t in targets}},
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_rule_at_its_place(tmp_path: Path, case: str) -> None:
    text, expected, *context = CASES[case]
    (tmp_path / "guide.md").write_text("# A guide\n")
    assert found(tmp_path, text, **(context[0] if context else {})) == expected


def test_every_mcp_resource_rule_has_a_case() -> None:
    from lynxc.compiler.rules import RULES

    ours = {rule for rule in RULES if rule.startswith("MCP_RESOURCE_")}
    covered = {line.split()[1] for _, expected, *_ in CASES.values() for line in expected}
    assert ours == covered


def test_clean_resources_lower_to_their_list_entries_and_sources(tmp_path: Path) -> None:
    (tmp_path / "guide.md").write_text("# A guide\n")
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    result = lowered(
        tmp_path,
        """
        resources:
          - {name: guide, uri: "docs://guide", title: Guide, description: d, mime_type: text/markdown,
             file: guide.md}
          - {name: logo, uri: "docs://logo", description: d, mime_type: image/png, file: logo.png}
          - {name: hello, uri: "test://hello", description: d, mime_type: text/plain, text: "hi"}
          - name: pep
            uri_template: "pep://{number}"
            description: d
            mime_type: application/json
            record: {collection: peps}
            variables: {number: {description: The number.}}
          - {name: country, uri_template: "country://{code}", description: d, mime_type: application/json,
             sql: "SELECT * FROM countries WHERE code = $code"}
          - {name: data, uri_template: "test://template/{id}/data", description: d,
             mime_type: application/json, text: '{"id":"{{ id }}"}'}
        """,
    )
    assert result.diagnostics == []
    listing = resources_document(result.resources)
    assert listing["resources"] == [
        {"uri": "docs://guide", "name": "guide", "title": "Guide", "description": "d",
         "mimeType": "text/markdown", "size": 10},
        {"uri": "docs://logo", "name": "logo", "description": "d", "mimeType": "image/png", "size": 10},
        {"uri": "test://hello", "name": "hello", "description": "d", "mimeType": "text/plain", "size": 2},
    ]  # fmt: skip
    assert [t["uriTemplate"] for t in listing["resourceTemplates"]] == [
        "pep://{number}",
        "country://{code}",
        "test://template/{id}/data",
    ]
    sources = {s["name"]: s for s in sources_document(result.resources)["resources"]}
    assert sources["guide"]["path"] == "resource_files/guide" and sources["guide"]["text"] is True
    assert sources["logo"]["encoding"] == "base64" and sources["logo"]["text"] is False
    assert sources["pep"]["kind"] == "record" and sources["pep"]["variable"] == "number"
    assert sources["country"] == {**sources["country"], "kind": "sql", "tool": "resource__country"}
    assert result.files["resource_files/guide"] == "# A guide\n"
    assert json.dumps(sources_document(result.resources))  # JSON all through


def test_sql_resources_become_hidden_sql_tools(tmp_path: Path) -> None:
    doc = parse_yaml(
        'resources:\n  - {name: country, uri_template: "country://{code}", description: d,'
        " mime_type: application/json, sql: \"SELECT 1 AS one WHERE $code = 'x'\"}\n",
        "spec.yaml",
    ).value
    item = McpResourceSource(doc, Resource.model_validate(doc.data["resources"][0]), ("resources", 0))
    (tool,) = sql_tool_sources([item])
    assert tool.tool.name == "resource__country"
    assert list(tool.tool.parameters) == ["code"] and tool.tool.backend.result == "one"


SQL_SERVER = """\
lynxc: 1
server:
  name: shelf
  version: 1.0.0
  settings:
    things_file: {type: string, default: things.csv, description: The things.}
  duckdb:
    views:
      things:
        reader: read_csv
        setting: things_file
        columns: {code: VARCHAR, label: VARCHAR}
tools:
  - name: count_things
    description: {purpose: Count the things.}
    backend: {sql: "SELECT count(*) AS n FROM things", result: one}
resources:
  - name: thing
    uri_template: "thing://{code}"
    description: One thing.
    mime_type: application/json
    sql: "SELECT code, labl FROM things WHERE code = $code"
"""


def test_a_resource_statement_is_checked_like_a_sql_tools(tmp_path: Path) -> None:
    from lynxc.compiler.lower.server import compile_spec

    (tmp_path / "shelf.yaml").write_text(SQL_SERVER)
    result = compile_spec(tmp_path / "shelf.yaml")
    problems = [d for d in result.diagnostics if d.severity == "error"]
    # at the resource's `sql:` (a SQL tool's diagnostics name its statement)
    assert [(d.rule_id, d.span.line, d.span.col) for d in problems] == [("SQL_BIND", 22, 10)], [
        d.render() for d in problems
    ]
    assert "labl" in problems[0].message


def test_a_clean_sql_resource_is_a_hidden_tool_of_sql_json(tmp_path: Path) -> None:
    from lynxc.compiler.lower.server import compile_spec

    (tmp_path / "shelf.yaml").write_text(SQL_SERVER.replace("labl", "label"))
    result = compile_spec(tmp_path / "shelf.yaml")
    assert result.ok, [d.render() for d in result.diagnostics]
    server = result.value
    assert [t.name for t in server.tools] == ["count_things"]
    assert [t.tool for t in server.sql.tools] == ["count_things", "resource__thing"]
    assert [r.name for r in server.mcp_resources] == ["thing"]


def test_a_function_that_does_not_import_is_refused_by_the_real_probe(tmp_path: Path) -> None:
    from lynxc.compiler.lower.server import compile_spec

    (tmp_path / "shelf.yaml").write_text(
        textwrap.dedent(
            """\
            lynxc: 1
            server: {name: shelf, version: 1.0.0}
            tools:
              - {name: echo, description: {purpose: Echo a text.}, backend: echo}
            resources:
              - name: live
                uri_template: "live://{key}"
                description: A live value.
                mime_type: text/plain
                function: lynxc_no_such_package.values:live
            """
        )
    )
    result = compile_spec(tmp_path / "shelf.yaml")
    found = [(d.rule_id, d.span.line, d.span.col) for d in result.diagnostics if d.rule_id.startswith("MCP_")]
    assert found == [("MCP_RESOURCE_FUNCTION_INVALID", 10, 15)]
    assert "lynxc_no_such_package" in next(
        d.message for d in result.diagnostics if d.rule_id.startswith("MCP_")
    )
