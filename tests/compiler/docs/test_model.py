"""What the docs pages say, read from real compiled servers (the bundled specs) and from the
functions that shape it: types, bounds, the caps a parameter quotes, secrets, escaping."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from lynxc.compiler.build import build
from lynxc.compiler.docs.model import (
    MAX_ENUM,
    MAX_TEXT,
    MAX_VALUE,
    _field,
    secret_settings,
    server_doc,
    type_text,
)
from lynxc.compiler.docs.render import code_text, embedded_json, paragraph, render_site
from lynxc.compiler.ir import RecordFieldIR, ServerIR
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def servers() -> dict[str, ServerIR]:
    specs = [ROOT / "specs" / name for name in ("lynx-mcp", "groundhog", "conformance")]
    output = build(ROOT, specs)
    assert not output.diagnostics
    return {server.name: server for server in output.servers}


def test_a_parameter_shows_its_bounds_default_enum_and_the_cap_it_quotes(
    servers: dict[str, ServerIR],
) -> None:
    doc = server_doc(servers["lynx-mcp"], ROOT)
    search = next(tool for tool in doc.tools if tool.name == "search")
    params = {p.name: p for p in search.params}
    top_k = params["top_k"]
    cap = next(c for c in servers["lynx-mcp"].tools if c.name == "search").cap_values["max_top_k"]
    assert f"max_top_k = {cap}" in top_k.caps
    assert any(b.startswith("≤ ") or b.startswith("≥ ") for b in top_k.bounds)
    deep = next(tool for tool in doc.tools if tool.name == "deep_search")
    mode = next(p for p in deep.params if p.name == "mode")
    assert '"hybrid"' in mode.enum and not mode.required
    assert params["query"].required
    assert [text for _, text in search.badges] == ["read-only", "idempotent"]
    assert search.score is not None and len(search.score.dimensions) == 6  # the six TDQS dimensions
    assert all(d.reasons for d in search.score.dimensions)


def test_badges_say_what_clients_assume_of_a_hint_left_out(servers: dict[str, ServerIR]) -> None:
    """MCP: a tool that declares no hints is taken as destructive and open-world."""
    server = servers["conformance"]
    bare = replace(server.tools[0], annotations=())
    read_only = replace(server.tools[0], annotations=(("readOnlyHint", True),))
    doc = server_doc(replace(server, tools=(bare, read_only)), ROOT)
    assert [text for _, text in doc.tools[0].badges] == ["destructive (assumed)", "open-world (assumed)"]
    assert [text for _, text in doc.tools[1].badges] == ["read-only", "open-world (assumed)"]
    assert [cls for cls, _ in doc.tools[0].badges] == ["destructive", "open-world"]  # their colours


def test_a_record_fields_values_are_bounded_as_a_parameters_are() -> None:
    values = ("x" * 100_000, *(f"v{i}" for i in range(5000)))
    shown = _field(RecordFieldIR("kind", "enum", values=values)).values
    assert len(shown) == MAX_ENUM + 1 and shown[-1] == f"… {len(values) - MAX_ENUM} more"
    assert len(shown[0]) == MAX_VALUE


def test_the_output_schema_is_a_tree_of_named_fields(servers: dict[str, ServerIR]) -> None:
    doc = server_doc(servers["lynx-mcp"], ROOT)
    search = next(tool for tool in doc.tools if tool.name == "search")
    assert search.output is not None
    names = [child.name for child in search.output.children]
    assert "results" in names
    results = next(child for child in search.output.children if child.name == "results")
    assert results.type.startswith("array") and results.children  # the items' fields


def test_secrets_are_those_the_spec_names_as_credentials(servers: dict[str, ServerIR]) -> None:
    assert "brave_api_key" in secret_settings(servers["groundhog"])
    assert "max_tokens" not in secret_settings(servers["groundhog"])
    doc = server_doc(servers["groundhog"], ROOT)
    key = next(s for s in doc.settings if s.name == "brave_api_key")
    assert key.secret and key.default is None


def test_a_changelog_counts_breaking_entries(servers: dict[str, ServerIR]) -> None:
    doc = server_doc(servers["lynx-mcp"], ROOT)
    newest = doc.versions[0]
    assert newest.version == "0.2.0" and newest.breaking == sum(e.breaking for e in newest.entries) > 0
    assert doc.versions[-1].since is None  # first observed


def test_types_read_as_a_person_says_them() -> None:
    assert type_text({"type": "string"}) == "string"
    assert type_text({"anyOf": [{"type": "integer"}, {"type": "null"}]}) == "integer | null"
    assert type_text({"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "null"}]}}) == (
        "array of (string | null)"
    )
    assert type_text({"$ref": "#/$defs/Item"}) == "$ref Item"
    assert type_text("nonsense") == "any"


def test_code_spans_and_sections_are_escaped() -> None:
    assert (
        str(code_text("Use `<b>` & `x` <i>")) == "Use <code>&lt;b&gt;</code> &amp; <code>x</code> &lt;i&gt;"
    )
    assert str(paragraph("- one `a`\n- two")) == "<ul><li>one <code>a</code></li><li>two</li></ul>"
    assert str(paragraph("a\n<b>")) == "<p>a<br>\n&lt;b&gt;</p>"
    assert str(embedded_json({"t": "</script><!--"})) == '{"t":"\\u003c/script\\u003e\\u003c!--"}'


def test_a_huge_description_is_clipped_and_the_site_is_the_same_each_time(
    servers: dict[str, ServerIR],
) -> None:
    server = servers["conformance"]
    huge = "<script>x</script> " * 50_000
    hostile = replace(server, tools=(replace(server.tools[0], description=huge), *server.tools[1:]))
    doc = server_doc(hostile, ROOT)
    assert sum(len(s) for s in doc.tools[0].sections) <= MAX_TEXT
    site = render_site([doc])
    assert "<script>x</script>" not in site["conformance/index.html"]
    assert len(site["conformance/index.html"]) < 500_000
    assert render_site([server_doc(hostile, ROOT)]) == site
    assert list(site) == sorted(site)


def test_every_bundled_page_is_built_from_templates_with_one_h1(servers: dict[str, ServerIR]) -> None:
    site = render_site([server_doc(s, ROOT) for s in servers.values()])
    for name, text in site.items():
        if name.endswith(".html"):
            assert text.startswith('<!doctype html>\n<html lang="en">'), name
            assert text.count("<h1") == 1, name
            assert "http://" not in text.split("</head>")[0] and "https://" not in text.split("</head>")[0]


def test_the_site_names_no_path_of_this_machine(servers: dict[str, ServerIR]) -> None:
    site = render_site([server_doc(s, ROOT) for s in servers.values()])
    assert not [name for name, text in site.items() if str(Path(ROOT)) in text]


def _deep(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for level in range(levels):
        if level % 2:
            node = {"anyOf": [{"type": "array", "items": node}, {"type": "null"}]}
        else:
            node = {"type": "object", "properties": {"a": node}}
    return node


def test_hostile_schemas_give_a_bounded_page(servers: dict[str, ServerIR]) -> None:
    """10,000 parameters, a 50,000-value enum, 60 levels of nesting, and an output schema whose
    $refs loop and fan out: the page is built, bounded, and the same each time."""
    properties: dict[str, Any] = {f"p{i}": {"type": "string", "maxLength": 5} for i in range(10_000)}
    properties["choice"] = {"enum": list(range(50_000))}
    properties["deep"] = _deep(60)
    node = {"type": "object", "properties": {f"f{i}": {"$ref": "#/$defs/Node"} for i in range(10)}}
    output = {"type": "object", "$defs": {"Node": node}, "properties": {"root": {"$ref": "#/$defs/Node"}}}
    server = servers["conformance"]
    tool = replace(
        server.tools[0],
        input_schema_json=json.dumps({"type": "object", "properties": properties}),
        output_schema_json=json.dumps(output),
    )
    hostile = replace(server, tools=(tool,))
    site = render_site([server_doc(hostile, ROOT)])
    page = site["conformance/index.html"]
    assert len(page) < 8_000_000  # some 250 bytes a parameter row, the rest clipped
    assert "… 49940 more" in page
    assert render_site([server_doc(hostile, ROOT)]) == site


def test_every_id_of_a_page_is_unique_whatever_the_tool_names(servers: dict[str, ServerIR]) -> None:
    """`a` and `a-h` (a heading's id was the tool's id and `-h`), and two names of 128 characters
    that differ only at the end: MCP allows all of them."""
    server = servers["conformance"]
    long = "x" * 127
    names = ("a", "a-h", "a-params", f"{long}1", f"{long}2")
    tools = tuple(replace(server.tools[0], name=name) for name in names)
    page = render_site([server_doc(replace(server, tools=tools), ROOT)])["conformance/index.html"]
    ids = re.findall(r' id="([^"]+)"', page)
    assert len(ids) == len(set(ids)), sorted(i for i in set(ids) if ids.count(i) > 1)
