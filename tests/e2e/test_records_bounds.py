"""Filter values of every bundled records server are bounded in the published schema, and the
served server refuses an over-long one through a real MCP client, naming the field and the rule,
before it reaches LanceDB (whose regular expressions gave up on a 100,000-character `contains`
with "CompiledTooBig ... file a bug report" and a logged traceback)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from lynxc.runtime.backends.records.filters import MAX_LIST_VALUES, MAX_VALUE_CHARS
from tests.conftest import ROOT, http_process, lynxc_command, settings_args

pytestmark = pytest.mark.anyio

RECORDS_SERVERS = sorted(
    path.parent.name
    for path in (ROOT / "generated").glob("*/resources.json")
    if json.loads(path.read_text())["resources"]
)
LIST_TOOLS = ("search_records", "query_records")
COUNTRIES = ROOT / "specs" / "foxnose-knowledge" / "data" / "countries.jsonl.gz"


def tools(server: str) -> dict[str, dict[str, Any]]:
    listed = json.loads((ROOT / "generated" / server / "tools.json").read_text())["tools"]
    return {tool["name"]: tool for tool in listed}


def first_text_field(server: str) -> tuple[str, str]:
    """A resource id and a text field of it that `contains` takes."""
    resources = json.loads((ROOT / "generated" / server / "resources.json").read_text())["resources"]
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


async def test_with_real_records_the_bound_sits_below_what_lancedb_takes(tmp_path: Path) -> None:
    """foxnose-knowledge with its countries loaded: a `contains` on localized names of the
    longest value the schema allows runs (LanceDB compiles it), one character more is refused
    by the host, and the value that broke LanceDB is refused before it gets there."""
    settings = {"data_dir": str(tmp_path / "store"), "embedder": "static"}
    loaded = subprocess.run(
        lynxc_command("load", "foxnose-knowledge", "countries", str(COUNTRIES), *settings_args(settings)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert loaded.returncode == 0, loaded.stderr
    with http_process("foxnose-knowledge", settings) as (port, process):
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            answers = {}
            for label, text in (
                ("longest", "é" * MAX_VALUE_CHARS),
                ("one more", "é" * (MAX_VALUE_CHARS + 1)),
                ("the report's", "é" * 100_000),
            ):
                answers[label] = await client.call_tool(
                    "query_records",
                    {
                        "resource_id": "countries",
                        "filters": [{"field": "name", "op": "contains", "value": text}],
                    },
                )
    stderr = process.stderr.read() if process.stderr else ""
    longest = answers["longest"]
    assert not longest.is_error, longest.content[0].text
    assert longest.structured_content["items"] == []
    for label in ("one more", "the report's"):
        assert answers[label].is_error
        text = answers[label].content[0].text
        assert "filters.0.value" in text and "at most 2000 characters" in text, text
        assert "CompiledTooBig" not in text
    assert "Traceback" not in stderr and "CompiledTooBig" not in stderr, stderr
