"""Declared records, compiler side: a `resources` block lowers to CollectionIR with a record JSON
Schema, brings the five records tools (schemas as the contract fixes them), and emits
collections.json, one record model per resource, the server's `collections=` and a README section."""

from __future__ import annotations

import copy
import itertools
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pydantic
import pytest

from lynxc.compiler.emit.server import emit_server
from lynxc.compiler.ir import ServerIR, collections_document
from lynxc.compiler.lint.linter import lint_server
from lynxc.compiler.lower.records_tools import RECORDS_TOOLS_DISPLAY, SYNTHESIZED_TOOLS
from lynxc.compiler.lower.server import compile_spec
from lynxc.compiler.rules import RULES
from lynxc.compiler.spec.models import SpecFile
from lynxc.compiler.wire import wire_from_ir, wire_tool
from lynxc.runtime.backends.records.definitions import parse_resources
from lynxc.runtime.definition import load_definition
from tests.compiler.test_generated_markdown import glued_headings

HERE = Path(__file__).parent
SPEC = HERE / "records_spec"
MALFORMED = HERE / "malformed"
LOCALE = "^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$"
TDQS = shutil.which("tdqs") or str(Path(sys.executable).with_name("tdqs"))


def compiled(path: Path = SPEC) -> ServerIR:
    result = compile_spec(path)
    assert result.value is not None, [d.render() for d in result.diagnostics]
    return result.value


def write_spec(tmp_path: Path, text: str) -> Path:
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    return spec


# Lowering --------------------------------------------------------------------------------


def test_resources_lower_to_ir_from_the_server_file_and_resource_files() -> None:
    server = compiled()
    assert [r.name for r in server.collections] == ["countries", "peps", "sections"]
    countries, peps, sections = server.collections
    assert countries.id == "countries" and countries.key == "cca3" and countries.parents == ()
    assert countries.capabilities == ("search", "query", "get_one")  # the default
    assert [(s.field, s.descending) for s in countries.sort] == [("area", True), ("capital.name", False)]
    assert countries.keyword == ("name",) and countries.meaning == ("name",)
    assert countries.max_text_chars is None and countries.model == "records_countries"
    assert peps.max_text_chars == 2000 and peps.keyword == ("title", "abstract", "text")
    assert sections.id == "peps/{pep}/sections"
    assert [(p.placeholder, p.field, p.resource) for p in sections.parents] == [("pep", "pep", "peps")]
    assert sections.capabilities == ("query", "get_one")
    borders = next(f for f in countries.fields if f.name == "borders")
    assert borders.type == "array" and borders.items is not None and borders.items.to == "countries"
    capital = next(f for f in countries.fields if f.name == "capital")
    assert [f.name for f in capital.fields or ()] == ["name", "population"]
    assert str(sections.span).startswith(str(Path("tests/compiler/records_spec/sections.yaml")))


def test_record_schema_maps_every_type() -> None:
    countries, peps, sections = compiled().collections
    schema = countries.schema
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["title"] == "Countries" and schema["description"] == "One country or territory."
    assert schema["required"] == ["cca3", "name", "region", "landlocked", "borders"]
    props = schema["properties"]
    assert props["name"] == {
        "type": "object",
        "additionalProperties": {"type": "string"},
        "propertyNames": {"pattern": LOCALE},
        "description": "The common name by locale.",
    }
    assert props["region"]["enum"] == ["Africa", "Americas", "Antarctic", "Asia", "Europe", "Oceania"]
    assert props["borders"]["items"] == {
        "type": "string",  # the key type of `countries`
        "description": "A neighbour. The key of a record of resource `countries`.",
    }
    # Not required: absent or null.
    assert props["area"] == {
        "anyOf": [{"type": "number"}, {"type": "null"}],
        "description": "Square kilometres.",
    }
    assert props["independence"] == {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}]}
    capital = props["capital"]["anyOf"][0]
    assert capital["required"] == ["name"] and capital["additionalProperties"] is False
    assert peps.schema["properties"]["created"] == {"type": "string", "format": "date"}
    assert peps.schema["properties"]["requires"]["items"]["type"] == "integer"  # peps' key is an integer
    pep = sections.schema["properties"]["pep"]
    assert pep == {
        "type": "integer",
        "description": "The PEP of the section. The key of a record of resource `peps`.",
    }


def test_resources_document_is_what_the_runtime_reads() -> None:
    server = compiled()
    document = collections_document(server)
    assert document["format"] == 1
    assert list(document["resources"][0]) == [
        "name",
        "id",
        "title",
        "description",
        "key",
        "parents",
        "fields",
        "keyword",
        "meaning",
        "capabilities",
        "sort",
        "max_text_chars",
        "schema",
        "model",
    ]
    resources = parse_resources(json.dumps(document))
    sections = resources.by_id("peps/{pep}/sections")
    assert sections is not None and sections.parents[0].resource == "peps"
    assert resources.nested_under("peps") == (sections,)
    countries = resources.by_name("countries")
    assert countries is not None and countries.key_field.type == "string"
    assert countries.sort[0].descending and countries.schema == server.collections[0].schema
    assert [p.path for p in countries.references()] == ["borders"]


# The synthesized tools -------------------------------------------------------------------

ANNOTATIONS = {"readOnlyHint": True, "idempotentHint": True, "destructiveHint": False, "openWorldHint": False}
_FILTER_OP = {
    "type": "string",
    "enum": ["eq", "ne", "gt", "gte", "lt", "lte", "in", "not_in", "between", "contains", "exists"],
    "default": "eq",
}
# The seed's contract leaves value open; bounded here (issue 24), so an over-long value is refused
# by the host, naming the field and the rule, before it reaches LanceDB.
_FILTER_VALUE = {
    "anyOf": [
        {"type": "string", "maxLength": 2000},
        {"type": "integer"},
        {"type": "number"},
        {"type": "boolean"},
        {
            "type": "array",
            "maxItems": 1000,
            "items": {
                "anyOf": [
                    {"type": "string", "maxLength": 2000},
                    {"type": "integer"},
                    {"type": "number"},
                    {"type": "boolean"},
                ]
            },
        },
    ]
}
_FILTER_FIELD = {"type": "string", "maxLength": 256}
# A filter is one condition (field, op, value) or an any_of group of 1 to 8 of them (issue 30).
FILTERS = {
    "type": "array",
    "maxItems": 32,
    "items": {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "field": _FILTER_FIELD,
            "op": _FILTER_OP,
            "value": _FILTER_VALUE,
            "any_of": {
                "type": "array",
                "minItems": 1,
                "maxItems": 8,
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["field"],
                    "properties": {"field": _FILTER_FIELD, "op": _FILTER_OP, "value": _FILTER_VALUE},
                },
            },
        },
    },
}
FACETS = {"type": "array", "maxItems": 8, "items": {"type": "string", "maxLength": 256}}
FACET_SIZE = {"type": "integer", "minimum": 1, "maximum": 50, "default": 10}
INCLUDE = {"type": "array", "maxItems": 4, "items": {"type": "string", "maxLength": 256}}
INCLUDE_LIMIT = {"type": "integer", "minimum": 1, "maximum": 50, "default": 10}
LOCALES = {"type": "array", "items": {"type": "string"}}
POPULATE = {"type": "array", "maxItems": 16, "items": {"type": "string"}}
LIMIT = {"type": "integer", "minimum": 1, "maximum": 100, "default": 5}
CURSOR = {"anyOf": [{"type": "string"}, {"type": "null"}]}
PARENTS = {"anyOf": [{"type": "object", "additionalProperties": {"type": "string"}}, {"type": "null"}]}
RESOURCE_ID = {"type": "string"}
SORT = {
    "type": "array",
    "maxItems": 8,
    "items": {
        "type": "object",
        "properties": {
            "field": {"type": "string"},
            "order": {"type": "string", "enum": ["asc", "desc"], "default": "asc"},
        },
        "required": ["field"],
        "additionalProperties": False,
    },
}
CONTRACT_INPUTS: dict[str, tuple[dict[str, Any], list[str]]] = {
    "discover_resources": ({}, []),
    "describe_resource": ({"resource_id": RESOURCE_ID}, ["resource_id"]),
    "search_records": (
        {
            "query": {"type": "string", "minLength": 1, "maxLength": 2000},
            "resource_id": RESOURCE_ID,
            "search_type": {
                "type": "string",
                "enum": ["hybrid", "text", "semantic", "vector_boosted"],
                "default": "hybrid",
            },
            "filters": FILTERS,
            "facets": FACETS,
            "facet_size": FACET_SIZE,
            "locales": LOCALES,
            "populate": POPULATE,
            "limit": LIMIT,
            "cursor": CURSOR,
            "parents": PARENTS,
        },
        ["query", "resource_id"],
    ),
    "query_records": (
        {
            "resource_id": RESOURCE_ID,
            "filters": FILTERS,
            "facets": FACETS,
            "facet_size": FACET_SIZE,
            "sort": SORT,
            "locales": LOCALES,
            "populate": POPULATE,
            "limit": LIMIT,
            "cursor": CURSOR,
            "parents": PARENTS,
        },
        ["resource_id"],
    ),
    "get_record": (
        {
            "resource_id": RESOURCE_ID,
            "record_id": {"type": "string"},
            "locales": LOCALES,
            "populate": POPULATE,
            "parents": PARENTS,
            "include": INCLUDE,
            "include_limit": INCLUDE_LIMIT,
        },
        ["resource_id", "record_id"],
    ),
}

# The output schema of the seed's search_records, structure only (its descriptions are the seed's
# words, not ours): every field, type, format and required list.
_STRING_OR_NULL = {"type": ["string", "null"]}
SEED_SEARCH_OUTPUT = {
    "type": "object",
    "required": ["items", "page"],
    "properties": {
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "data", "_sys"],
                "properties": {
                    "id": {"type": "string"},
                    "data": {"type": "object", "additionalProperties": True},
                    "_sys": {
                        "type": "object",
                        "required": ["key"],
                        "properties": {
                            "key": {"type": "string"},
                            "revision": {"type": "string"},
                            "created_at": {"type": "string", "format": "date-time"},
                            "updated_at": {"type": "string", "format": "date-time"},
                            "relevance": {"type": ["number", "null"]},
                            "truncated": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "required": ["field", "original_length"],
                                    "properties": {
                                        "field": {"type": "string"},
                                        "locale": _STRING_OR_NULL,
                                        "original_length": {"type": "integer"},
                                    },
                                },
                            },
                            "folder": {"type": "string"},
                        },
                    },
                },
            },
        },
        "page": {
            "type": "object",
            "required": ["has_more", "returned", "limit", "total", "total_relation"],
            "properties": {
                "has_more": {"type": "boolean"},
                "returned": {"type": "integer"},
                "limit": {"type": "integer"},
                "next_cursor": _STRING_OR_NULL,
                "previous_cursor": _STRING_OR_NULL,
                # issue 30: how many match, exactly (eq) or at least (gte)
                "total": {"type": "integer"},
                "total_relation": {"type": "string", "enum": ["eq", "gte"]},
            },
        },
        "facets": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["values", "distinct", "missing"],
                "properties": {
                    "values": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["value", "count"],
                            "properties": {"value": {}, "count": {"type": "integer"}},
                        },
                    },
                    "distinct": {"type": "integer"},
                    "missing": {"type": "integer"},
                },
            },
        },
        "truncation": {
            "type": "object",
            "properties": {
                "applied": {"type": "boolean"},
                "max_text_chars": {"type": "integer"},
                "note": {"type": "string"},
            },
        },
        "execution_info": {
            "type": "object",
            "properties": {"search_mode": {"type": "string"}, "applied_search_type": {"type": "string"}},
        },
    },
}


def structure(schema: Any) -> Any:
    """A schema without its words, nullable written as the seed writes it (a type list)."""
    if isinstance(schema, list):
        return [structure(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    members = schema.get("anyOf")
    if isinstance(members, list) and len(members) == 2 and members[1] == {"type": "null"}:
        rest = {k: v for k, v in schema.items() if k != "anyOf"}
        core = structure(members[0])
        return structure({**rest, **core, "type": [core["type"], "null"]})
    return {
        key: (structure(value) if key != "properties" else {k: structure(v) for k, v in value.items()})
        for key, value in schema.items()
        if key not in ("description", "$schema", "title")
    }


def tools_by_name(server: ServerIR) -> dict[str, dict[str, Any]]:
    return {tool.name: wire_tool(tool) for tool in server.tools}


def test_five_tools_are_synthesized_with_the_contract_schemas() -> None:
    server = compiled()
    tools = tools_by_name(server)
    assert list(tools) == list(SYNTHESIZED_TOOLS)
    for name, (properties, required) in CONTRACT_INPUTS.items():
        schema = tools[name]["inputSchema"]
        assert list(schema["properties"]) == list(properties), name
        assert {k: structure(v) for k, v in schema["properties"].items()} == {
            k: structure(v) for k, v in properties.items()
        }, name
        assert schema.get("required", []) == required, name
        assert schema["additionalProperties"] is False
        assert tools[name]["annotations"] == ANNOTATIONS, name
        for prop, node in schema["properties"].items():
            assert node.get("description"), f"{name}.{prop} has no description"
    bound = {tool.name: tool for tool in server.tools}
    assert bound["search_records"].cap_values == {"max_limit": 100}
    assert bound["query_records"].cap_values == {"max_limit": 100}
    assert bound["get_record"].cap_values == {}
    for name in SYNTHESIZED_TOOLS:
        assert bound[name].backend == f"records.{name}"
        assert bound[name].backend_target == f"lynxc.runtime.backends.records.tools:{name}"
        assert bound[name].span.file == RECORDS_TOOLS_DISPLAY


# Beyond the seed: the cosine beside relevance (the score the list is ordered by), as lynx-mcp.
SIMILARITY = {"type": ["number", "null"], "minimum": 0, "maximum": 1}


def test_search_records_returns_exactly_the_seeds_output_schema() -> None:
    tools = tools_by_name(compiled())
    search_output = copy.deepcopy(SEED_SEARCH_OUTPUT)
    search_output["properties"]["items"]["items"]["properties"]["_sys"]["properties"]["similarity"] = (
        SIMILARITY
    )
    assert structure(tools["search_records"]["outputSchema"]) == search_output
    query_output = copy.deepcopy(search_output)
    del query_output["properties"]["execution_info"]
    assert structure(tools["query_records"]["outputSchema"]) == query_output
    got = structure(tools["get_record"]["outputSchema"])
    assert got["required"] == ["id", "data", "_sys"]
    assert "truncated" not in got["properties"]["_sys"]["properties"]
    assert "relevance" not in got["properties"]["_sys"]["properties"]
    assert "similarity" not in got["properties"]["_sys"]["properties"]


VISIBLE_RECORDS = "Present when the resource shows each caller only their own records: which ones."


def test_outputs_of_discover_and_describe_carry_the_contract_fields() -> None:
    tools = tools_by_name(compiled())
    entry = tools["discover_resources"]["outputSchema"]["properties"]["resources"]["items"]
    assert entry["required"] == [
        "resource_id",
        "title",
        "description",
        "capabilities",
        "record_count",
        "locales",
        "parents",
        "nested",
        "key",
    ]
    # visible_records: only on a resource that shows each caller their own records (bind:)
    assert entry["properties"]["visible_records"] == {"type": "string", "description": VISIBLE_RECORDS}
    described = tools["describe_resource"]["outputSchema"]
    assert described["properties"].pop("visible_records") == {
        "type": "string",
        "description": VISIBLE_RECORDS,
    }
    assert (
        described["required"]
        == list(described["properties"])
        == [
            "resource_id",
            "name",
            "title",
            "description",
            "key",
            "capabilities",
            "schema",
            "fields",
            "keyword_fields",
            "embedded_fields",
            "references",
            "locales",
            "nested",
            "parents",
            "default_sort",
            "max_text_chars",
            "record_count",
        ]
    )
    field = described["properties"]["fields"]["items"]
    assert field["required"] == ["path", "type", "sortable", "ops", "locale_keyed"]


def test_only_the_tools_the_capabilities_allow_and_no_mention_of_the_others(tmp_path: Path) -> None:
    spec = write_spec(
        tmp_path,
        """\
lynxc: 1
server: {name: only-query, version: 1.0.0}
collections:
  - name: peps
    key: number
    fields: {number: {type: integer, required: true}}
    capabilities: [query]
""",
    )
    server = compiled(spec)
    assert [t.name for t in server.tools] == ["discover_resources", "describe_resource", "query_records"]
    for tool in server.tools:
        text = json.dumps(wire_tool(tool))
        for absent in ("search_records", "get_record"):
            assert f"`{absent}`" not in text, (tool.name, absent)
    query = tools_by_name(server)["query_records"]
    assert "`describe_resource`" in query["description"]
    findings = lint_server(wire_from_ir(server, str(spec))).findings
    assert not [f for f in findings if f.severity in ("error", "warning")], findings


def test_implied_settings_and_declared_ones(tmp_path: Path) -> None:
    settings = {s.name: s.schema for s in compiled().settings}
    assert settings["data_dir"]["default"] == ".lynxc-data/records-demo"
    assert settings["data_dir"]["format"] == "path-or-uri"  # a folder, or an object-store URI (s3://...)
    assert (
        settings["embedder"]["enum"] == ["minilm", "static"] and settings["embedder"]["default"] == "minilm"
    )
    spec = write_spec(
        tmp_path,
        """\
lynxc: 1
server:
  name: mine
  version: 1.0.0
  settings:
    data_dir: {type: string, format: path, default: /srv/records, description: Where records live.}
collections:
  - name: peps
    key: number
    fields: {number: {type: integer, required: true}}
    capabilities: [get_one]
""",
    )
    server = compiled(spec)
    declared = {s.name: s.schema for s in server.settings}
    assert declared["data_dir"]["default"] == "/srv/records"
    assert list(declared) == ["data_dir", "data_storage", "embedder"]


def test_a_server_of_resources_alone_needs_no_tools(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, "lynxc: 1\nserver: {name: bare, version: 1.0.0}\n")
    assert [d.rule_id for d in compile_spec(spec).diagnostics] == ["TOOL_NONE"]


# A records server unlike the bundled one: no localized field, no nested resource, no reference.
CATALOGUE = """\
lynxc: 1
server:
  name: shop
  version: 1.0.0
  title: Product catalogue
  instructions: Products of a small shop, read with the records tools.
collections:
  - name: products
    title: Products
    description: One product of the catalogue.
    key: sku
    fields:
      sku: {type: string, required: true, description: The stock-keeping unit.}
      name: {type: string, required: true, description: The product name.}
      category: {type: enum, required: true, values: [tools, garden, kitchen]}
      price: {type: number, required: true, description: Price in euros.}
      tags: {type: array, items: {type: string}, description: Free tags.}
      blurb: {type: text, description: Marketing text.}
    keyword: [name, blurb]
    sort: [name]
"""
# The same catalogue grown the three things the optional parameters serve.
CATALOGUE_GROWN = CATALOGUE.replace(
    "      blurb: {type: text, description: Marketing text.}\n",
    "      blurb: {type: text, description: Marketing text.}\n"
    "      label: {type: localized, description: The name shown in each language.}\n"
    "      maker: {type: object, fields: {city: {type: string}}}\n"
    "      replaces: {type: array, items: {type: reference, to: products}}\n",
) + (
    "  - name: reviews\n"
    '    id: "products/{product}/reviews"\n'
    "    key: review_id\n"
    "    fields:\n"
    "      review_id: {type: integer, required: true}\n"
    "      product: {type: reference, to: products, required: true}\n"
    "      stars: {type: integer, required: true}\n"
    "    capabilities: [query, get_one]\n"
)


def test_a_records_server_quotes_only_its_own_declarations(tmp_path: Path) -> None:
    server = compiled(write_spec(tmp_path, CATALOGUE))
    tools = tools_by_name(server)
    text = json.dumps(list(tools.values()), ensure_ascii=False)
    assert "pep" not in text.lower()
    for borrowed in ("name.fr", "capital.name", "author.bio", "<<"):
        assert borrowed not in text, borrowed
    for tool in tools.values():
        assert not {"locales", "parents", "populate"} & set(tool["inputSchema"]["properties"]), tool["name"]
    assert "such as name)" in tools["describe_resource"]["description"]
    result = lint_server(wire_from_ir(server, "shop"))
    assert not [f for f in result.findings if f.severity in ("error", "warning")], result.findings
    assert all(tool.total >= 4.4 for tool in result.score.tools), result.score.tools


def test_optional_parameters_and_examples_follow_the_declarations(tmp_path: Path) -> None:
    server = compiled(write_spec(tmp_path, CATALOGUE_GROWN))
    tools = tools_by_name(server)
    text = json.dumps(list(tools.values()), ensure_ascii=False)
    assert "pep" not in text.lower() and "<<" not in text
    for name in ("search_records", "query_records", "get_record"):
        assert {"locales", "parents", "populate"} <= set(tools[name]["inputSchema"]["properties"]), name
    query = tools["query_records"]
    assert "label.fr names one locale" in query["inputSchema"]["properties"]["filters"]["description"]
    assert (
        '{"product": "product-1"} for products/{product}/reviews'
        in (query["inputSchema"]["properties"]["parents"]["description"])
    )
    assert "(products/product-1/reviews)" in query["inputSchema"]["properties"]["resource_id"]["description"]
    assert "`products/{product}/reviews`" in tools["discover_resources"]["description"]
    assert "such as maker.city" in tools["describe_resource"]["description"]
    result = lint_server(wire_from_ir(server, "shop"))
    assert not [f for f in result.findings if f.severity in ("error", "warning")], result.findings


def test_localized_text_only_in_arrays_gets_locales_but_no_locale_path(tmp_path: Path) -> None:
    spec = CATALOGUE.replace(
        "      blurb: {type: text, description: Marketing text.}\n",
        "      blurb: {type: text, description: Marketing text.}\n"
        "      notes: {type: array, items: {type: localized}, description: Care notes by language.}\n",
    )
    tools = tools_by_name(compiled(write_spec(tmp_path, spec)))
    query = tools["query_records"]["inputSchema"]["properties"]
    assert "locales" in query and not {"parents", "populate"} & set(query)
    assert "one locale of a localized field" not in query["filters"]["description"]


@pytest.mark.parametrize("spec", ["records_spec", "catalogue"])
def test_the_records_tools_lint_clean_and_score_high(spec: str, tmp_path: Path) -> None:
    path = SPEC if spec == "records_spec" else write_spec(tmp_path, CATALOGUE)
    result = lint_server(wire_from_ir(compiled(path), str(path)))
    assert not result.findings, result.findings
    assert result.score.total >= 4.5
    assert all(tool.total >= 4.4 for tool in result.score.tools)


@pytest.mark.parametrize(
    "capabilities",
    [list(mix) for size in (1, 2, 3) for mix in itertools.combinations(("search", "query", "get_one"), size)],
    ids="+".join,
)
def test_every_capability_mix_lints_clean(capabilities: list[str], tmp_path: Path) -> None:
    """Whichever tools a catalogue gets, none of their descriptions is left without a sibling to
    name, a dangling sentence or a path the server lacks."""
    spec = CATALOGUE.replace("    sort: [name]\n", f"    sort: [name]\n    capabilities: {capabilities}\n")
    if "search" not in capabilities:
        spec = spec.replace("    keyword: [name, blurb]\n", "")
    server = compiled(write_spec(tmp_path, spec))
    findings = lint_server(wire_from_ir(server, "shop")).findings
    assert not [f for f in findings if f.severity in ("error", "warning")], findings


def test_lint_flags_a_description_naming_what_the_server_lacks(tmp_path: Path) -> None:
    wire = wire_from_ir(compiled(write_spec(tmp_path, CATALOGUE)), "shop")
    query = next(tool for tool in wire.tools if tool["name"] == "query_records")
    query["description"] += " Sections of one PEP are under `peps/{pep}/sections`."
    filters = query["inputSchema"]["properties"]["filters"]
    filters["description"] += " Use name.fr for one locale, or capital.name."
    found = {
        (f.param, f.message.split("'")[1])
        for f in lint_server(wire).findings
        if f.rule_id == "RECORD_PATH_UNDECLARED"
    }
    assert found == {
        (None, "peps/{pep}/sections"),
        ("filters", "name.fr"),
        ("filters", "capital.name"),
    }
    # What the catalogue does declare, the tool's own output paths, and prose that only looks
    # like paths (a URL, a file, a version, a call, and/or) are no finding.
    query["description"] += " A product's blurb, price and tags; page.next_cursor continues."
    query["description"] += (
        " See https://peps.python.org/pep-0008/, tools.json, v2.0, os.path.join() and/or e.g. this."
    )
    filters["description"] += " products is the only resource; tags holds text."
    assert {f.message.split("'")[1] for f in lint_server(wire).findings} == {
        "peps/{pep}/sections",
        "name.fr",
        "capital.name",
    }


# Emit ------------------------------------------------------------------------------------

PEP_636 = {
    "abstract": "This PEP is a tutorial for the pattern matching introduced by :pep:`634`.",
    "authors": ["Daniel F Moisset"],
    "created": "2020-09-12",
    "number": 636,
    "python_version": "3.10",
    "replaces": [],
    "requires": [],
    "sections": ["Abstract", "Tutorial", "Matching sequences", "Copyright"],
    "status": "Final",
    "superseded_by": [],
    "text": "Abstract\n========\n\nThis PEP is a tutorial for the pattern matching introduced by :pep:`634`.",
    "title": "Structural Pattern Matching: Tutorial",
    "topic": None,
    "type": "Informational",
}
GABON = {
    "cca3": "GAB",
    "name": {"en": "Gabon", "fr": "Gabon", "pt-BR": "Gabão"},
    "region": "Africa",
    "area": 267668,
    "landlocked": False,
    "borders": ["CMR", "COG", "GNQ"],
    "capital": {"name": "Libreville", "population": 703904},
    "currencies": [{"code": "XAF", "symbol": "Fr"}],
    "independence": "1960-08-17T00:00:00+01:00",
}


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    server = compiled()
    files = emit_server(server, score=lint_server(wire_from_ir(server, str(SPEC))).score)
    root = tmp_path_factory.mktemp("build")
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "generated" / server.name


def test_emit_writes_collections_json_with_its_header(generated: Path) -> None:
    text = (generated / "collections.json").read_text()
    document = json.loads(text)
    assert document.pop("_generated").startswith("Generated by lynxc from ")
    assert document == collections_document(compiled())
    assert [r.name for r in parse_resources(text).items] == ["countries", "peps", "sections"]


def test_server_py_names_collections_json_and_checks_every_new_file(generated: Path) -> None:
    server_py = (generated / "server.py").read_text()
    assert "    collections='collections.json',\n" in server_py
    definition = load_definition(generated)
    assert definition.collections == "collections.json"
    for name in ("collections.json", *(f"models/records_{n}.py" for n in ("countries", "peps", "sections"))):
        assert name in definition.files_sha256, name
    assert [r.name for r in definition.records().items] == ["countries", "peps", "sections"]


def record_model(generated: Path, name: str) -> type[pydantic.BaseModel]:
    definition = load_definition(generated)
    resource = definition.records().by_name(name)
    assert resource is not None
    return definition.load_record_model(resource)


def test_record_models_validate_a_real_pep_row_and_a_country_like_row(generated: Path) -> None:
    pep = record_model(generated, "peps").model_validate(PEP_636)
    assert pep.number == 636 and str(pep.created) == "2020-09-12"  # type: ignore[attr-defined]
    dumped = pep.model_dump(mode="json", exclude_unset=True)
    assert dumped == PEP_636
    country = record_model(generated, "countries").model_validate(GABON)
    assert country.model_dump(mode="json", exclude_unset=True)["name"]["pt-BR"] == "Gabão"
    header = (generated / "models" / "records_peps.py").read_text().splitlines()[0]
    assert re.match(
        r"# Generated by lynxc from the record schema of collection `peps` in .*peps\.yaml", header
    )


@pytest.mark.parametrize(
    ("resource", "change", "field"),
    [
        ("peps", {"number": "six hundred"}, "number"),
        ("peps", {"status": "Finished"}, "status"),
        ("peps", {"created": "yesterday"}, "created"),
        ("peps", {"extra": 1}, "extra"),
        ("countries", {"name": {"English": "Gabon"}}, "name"),
        ("countries", {"capital": {"population": 3}}, "capital.name"),
    ],
)
def test_record_models_reject_a_wrong_value_naming_the_field(
    generated: Path, resource: str, change: dict[str, Any], field: str
) -> None:
    row = {**(PEP_636 if resource == "peps" else GABON), **change}
    with pytest.raises(pydantic.ValidationError) as raised:
        record_model(generated, resource).model_validate(row)
    locations = [".".join(str(p) for p in error["loc"]) for error in raised.value.errors()]
    assert any(location.startswith(field) for location in locations), locations


def test_readme_documents_every_resource(generated: Path) -> None:
    readme = (generated / "README.md").read_text()
    assert glued_headings(readme) == []
    section = readme[readme.index("## Collections") : readme.index("## Tools")]
    assert "### PEP sections" in section and "- **resource_id:** `peps/{pep}/sections`" in section
    assert "- **Parents:** `{pep}` is a key of `peps`" in section
    assert "- **Nested collections:** `peps/{pep}/sections`" in section
    assert (
        "- **Default sort:** `area` descending, then `capital.name` ascending, then `cca3` ascending"
        in section
    )
    assert "- **Text limit:** 2,000 characters per text field in list results" in section
    assert "- **Capabilities:** query, get_one" in section
    assert "| `name` | localized | yes | keyword, meaning | The common name by locale. |" in section
    assert "| `capital.population` | integer | no |  |  |" in section
    assert "| `currencies[].code` | string | yes |  |  |" in section
    assert "| `borders` | array of reference to `countries` | yes |  |  |" in section


@pytest.mark.skipif(not Path(TDQS).exists(), reason="tdqs is not installed")
def test_the_reference_linter_finds_nothing_in_the_records_tools(generated: Path) -> None:
    done = subprocess.run(
        [TDQS, "lint", "--file", str(generated / "tools.json"), "--format", "json", "--fail-on", "warning"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


# Spec format and rules -------------------------------------------------------------------


def test_spec_schema_exports_collections_prompts_and_resources() -> None:
    schema = SpecFile.model_json_schema(by_alias=True)
    keys = {"collections", "collection", "prompts", "prompt", "resources", "resource"}
    assert keys <= set(schema["properties"])
    assert "Collection" in schema["$defs"] and "Prompt" in schema["$defs"]
    field_type = schema["$defs"]["RecordField"]["properties"]["type"]
    assert "localized" in field_type["enum"]


def test_every_collection_check_rule_has_a_malformed_case() -> None:
    reported = set()
    for expected in MALFORMED.glob("*.expected"):
        reported |= set(re.findall(r" (?:error|warning) (COLLECTION_[A-Z_]+):", expected.read_text()))
    rules = {rule_id for rule_id, rule in RULES.items() if rule.category == "collection"}
    assert rules and rules <= reported, sorted(rules - reported)
