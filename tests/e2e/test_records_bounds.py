"""Filter values of every bundled records server are bounded in the published schema, and the
served server refuses an over-long one through a real MCP client, naming the field and the rule,
before it reaches LanceDB (whose regular expressions gave up on a 100,000-character `contains`
with "CompiledTooBig ... file a bug report" and a logged traceback)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from lynxc.runtime.backends.records.filters import MAX_LIST_VALUES, MAX_VALUE_CHARS
from tests.conftest import ROOT, http_process
from tests.fixtures.foxnose_store import copy_of_store

pytestmark = pytest.mark.anyio

RECORDS_SERVERS = sorted(
    path.parent.name
    for path in (ROOT / "generated").glob("*/collections.json")
    if json.loads(path.read_text())["resources"]
)
LIST_TOOLS = ("search_records", "query_records")


def tools(server: str) -> dict[str, dict[str, Any]]:
    listed = json.loads((ROOT / "generated" / server / "tools.json").read_text())["tools"]
    return {tool["name"]: tool for tool in listed}


def first_text_field(server: str) -> tuple[str, str]:
    """A resource id and a text field of it that `contains` takes."""
    resources = json.loads((ROOT / "generated" / server / "collections.json").read_text())["resources"]
    for resource in resources:
        for field in resource["fields"]:
            if field["type"] in ("string", "text", "localized"):
                return resource["id"], field["name"]
    raise AssertionError(f"{server} declares no text field")


def test_there_is_a_records_server() -> None:
    assert "foxnose-knowledge" in RECORDS_SERVERS


@pytest.mark.parametrize("server", RECORDS_SERVERS)
def test_filter_values_are_bounded_in_the_published_schema(server: str) -> None:
    listed = tools(server)
    for name in LIST_TOOLS:
        if name not in listed:
            continue
        filters = listed[name]["inputSchema"]["properties"]["filters"]
        value = filters["items"]["properties"]["value"]
        kinds = {option.get("type"): option for option in value["anyOf"]}
        assert kinds["string"]["maxLength"] == MAX_VALUE_CHARS, name
        assert kinds["array"]["maxItems"] == MAX_LIST_VALUES, name
        assert {o.get("type"): o for o in kinds["array"]["items"]["anyOf"]}["string"]["maxLength"] == (
            MAX_VALUE_CHARS
        )
        assert f"{MAX_VALUE_CHARS:,} characters" in filters["description"]
        assert f"at most {MAX_LIST_VALUES:,}" in filters["description"]


async def over_long_values(url: str, server: str) -> list[str]:
    """What the server answers to an over-long contains and an over-long in list, per tool."""
    resource_id, field = first_text_field(server)
    answers = []
    async with Client(url) as client:
        for name in LIST_TOOLS:
            if name not in tools(server):
                continue
            extra = {"query": "x"} if name == "search_records" else {}
            for value, op in (("é" * 100_000, "contains"), (["x"] * (MAX_LIST_VALUES + 1), "in")):
                result = await client.call_tool(
                    name,
                    {
                        "resource_id": resource_id,
                        "filters": [{"field": field, "op": op, "value": value}],
                        **extra,
                    },
                )
                assert result.is_error, (name, op, result.structured_content)
                answers.append(result.content[0].text)
    return answers


@pytest.mark.parametrize("server", RECORDS_SERVERS)
async def test_an_over_long_filter_value_is_refused_naming_the_field_and_the_rule(
    server: str, tmp_path: Path
) -> None:
    settings = {"data_dir": str(tmp_path / "store")}
    with http_process(server, settings) as (port, process):
        answers = await over_long_values(f"http://127.0.0.1:{port}/mcp", server)
    stderr = process.stderr.read() if process.stderr else ""
    for answer in answers:
        assert "filters.0.value" in answer, answer
        assert ("at most 2000 characters" in answer) or (f"at most {MAX_LIST_VALUES} items" in answer), answer
    assert "Traceback" not in stderr, stderr


@pytest.fixture(scope="module")
def countries(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Settings of a foxnose-knowledge store holding its bundled countries: a copy of the run's
    store (tests/fixtures/foxnose_store.py), the module's own, since its servers write to it."""
    return copy_of_store(tmp_path_factory, "countries")


async def query_countries(
    settings: dict[str, str], *filter_lists: list[dict[str, Any]]
) -> tuple[list[Any], str]:
    """query_records on countries once per filter list, through the served foxnose-knowledge;
    the results, and what the server wrote to stderr meanwhile."""
    with http_process("foxnose-knowledge", settings) as (port, process):
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            results = [
                await client.call_tool(
                    "query_records", {"resource_id": "countries", "filters": filters, "limit": 100}
                )
                for filters in filter_lists
            ]
    return results, process.stderr.read() if process.stderr else ""


async def test_with_real_records_the_bound_sits_below_what_lancedb_takes(countries: dict[str, str]) -> None:
    """A `contains` on localized names of the longest value the schema allows runs (LanceDB
    compiles it), one character more is refused by the host, and the value that broke LanceDB
    is refused before it gets there."""
    texts = ("é" * MAX_VALUE_CHARS, "é" * (MAX_VALUE_CHARS + 1), "é" * 100_000)
    (longest, one_more, reported), stderr = await query_countries(
        countries, *([{"field": "name", "op": "contains", "value": text}] for text in texts)
    )
    assert not longest.is_error, longest.content[0].text
    assert longest.structured_content["items"] == []
    for refused in (one_more, reported):
        assert refused.is_error
        text = refused.content[0].text
        assert "filters.0.value" in text and "at most 2000 characters" in text, text
        assert "CompiledTooBig" not in text
    assert "Traceback" not in stderr and "CompiledTooBig" not in stderr, stderr


@pytest.mark.parametrize("server", RECORDS_SERVERS)
def test_filters_say_how_missing_fields_and_empty_arrays_match(server: str) -> None:
    for name in LIST_TOOLS:
        if name in tools(server):
            text = tools(server)[name]["inputSchema"]["properties"]["filters"]["description"]
            assert "ne and not_in also match records that lack the field" in text, name
            assert "exists false matches a missing field and an empty array alike" in text, name


async def test_missing_fields_and_empty_arrays_match_as_the_description_says(
    countries: dict[str, str],
) -> None:
    """Antarctica has no subregion; Aruba's borders are an empty array."""
    among = {"field": "cca3", "op": "in", "value": ["ATA", "ABW", "DEU", "FRA"]}
    results, _ = await query_countries(
        countries,
        [among, {"field": "subregion", "op": "ne", "value": "Western Europe"}],
        [among, {"field": "subregion", "op": "not_in", "value": ["Western Europe", "Caribbean"]}],
        [among, {"field": "borders", "op": "exists", "value": False}],
        [among, {"field": "borders", "op": "exists"}],
    )
    ids = [sorted(item["id"] for item in result.structured_content["items"]) for result in results]
    assert ids == [["ABW", "ATA"], ["ATA"], ["ABW", "ATA"], ["DEU", "FRA"]]
