"""countries-sql end to end: the bundled SQL server over its shipped data, through the generated
server and real MCP clients (stdio, and several at once over HTTP). Expected answers are worked
out from the data file itself with DuckDB, never written down by hand."""

from __future__ import annotations

import anyio
import duckdb
import pytest
from mcp.client import Client

from tests.conftest import ROOT, http_server, stdio_client

pytestmark = pytest.mark.anyio

SERVER = "countries-sql"
DATA = ROOT / "specs" / "countries-sql" / "data" / "countries.jsonl.gz"
INJECTIONS = [
    "' OR 1=1 --",
    "'; DROP TABLE countries; --",
    "Robert'); DELETE FROM countries;--",
    '" OR ""="',
    "%' UNION SELECT * FROM duckdb_settings() --",
    "$code",
]


def reference(sql: str, *params: object) -> list[tuple]:
    with duckdb.connect() as connection:
        connection.execute(f"CREATE VIEW countries AS SELECT * FROM read_json('{DATA}')")
        return connection.execute(sql, list(params)).fetchall()


async def test_filters_return_what_duckdb_finds() -> None:
    expected = reference(
        "SELECT cca3 FROM countries WHERE region = 'Africa' AND landlocked AND area >= 500000 "
        "ORDER BY area DESC NULLS LAST, cca3"
    )
    async with stdio_client(SERVER) as client:
        result = await client.call_tool(
            "find_countries", {"region": "Africa", "landlocked": True, "min_area": 500000}
        )
        assert not result.is_error, result.content[0].text
        rows = result.structured_content["rows"]
        assert [r["code"] for r in rows] == [code for (code,) in expected] and rows
        assert all(r["landlocked"] is True and r["area"] >= 500000 for r in rows)
        assert isinstance(rows[0]["capital"], list)
        named = await client.call_tool("find_countries", {"name_contains": "GUINEA"})
        names = [r["name"] for r in named.structured_content["rows"]]
        assert names and all("guinea" in n.lower() for n in names)


async def test_the_row_cap_truncates_and_says_so() -> None:
    async with stdio_client(SERVER) as client:
        result = await client.call_tool("find_countries", {"limit": 3})
        answer = result.structured_content
        assert answer["row_count"] == 3 and answer["truncated"] is False  # LIMIT in the statement
        summary = await client.call_tool("region_summary", {})
        assert summary.structured_content["truncated"] is False
        total = sum(r["countries"] for r in summary.structured_content["rows"])
        assert total == reference("SELECT count(*) FROM countries")[0][0]


async def test_aggregation_join_and_nested_columns() -> None:
    async with stdio_client(SERVER) as client:
        summary = await client.call_tool("region_summary", {"region": "Europe"})
        rows = summary.structured_content["rows"]
        expected = reference(
            "SELECT subregion, count(*), count(*) FILTER (WHERE landlocked) FROM countries "
            "WHERE region = 'Europe' GROUP BY subregion ORDER BY subregion NULLS LAST"
        )
        assert [(r["subregion"], r["countries"], r["landlocked"]) for r in rows] == expected

        neighbours = await client.call_tool("neighbours", {"code": "che"})
        codes = {r["code"] for r in neighbours.structured_content["rows"]}
        assert codes == set(reference("SELECT borders FROM countries WHERE cca3 = 'CHE'")[0][0])
        france = next(r for r in neighbours.structured_content["rows"] if r["code"] == "FRA")
        assert france["shared_languages"] == ["fra"]  # a list computed from two maps' keys
        island = await client.call_tool("neighbours", {"code": "ISL"})
        assert island.structured_content["rows"] == []

        profile = await client.call_tool("country_profile", {"code": "jpn"})
        japan = profile.structured_content
        assert japan["code"] == "JPN" and japan["name"] == "Japan"
        assert japan["languages"] == {"jpn": "Japanese"}  # MAP(VARCHAR, VARCHAR) -> object
        assert japan["currencies"]["JPY"]["symbol"] == "¥"  # MAP of STRUCT, non-ASCII
        assert len(japan["latlng"]) == 2 and all(isinstance(x, float) for x in japan["latlng"])

        euro = await client.call_tool("countries_by_currency", {"currency": "eur"})
        users = euro.structured_content["rows"]
        assert (
            len(users)
            == reference("SELECT count(*) FROM countries WHERE map_contains(currencies, 'EUR')")[0][0]
        )
        assert all(r["currency"] == "Euro" for r in users)
        spoken = await client.call_tool("countries_by_language", {"language": "Portuguese"})
        assert "BRA" in {r["code"] for r in spoken.structured_content["rows"]}


async def test_parameters_are_bound_never_spliced() -> None:
    """Classic injection strings arrive as values: they match nothing, nothing is changed, and
    the table answers as before."""
    async with stdio_client(SERVER) as client:
        before = (await client.call_tool("region_summary", {})).structured_content
        for attack in INJECTIONS:
            found = await client.call_tool("find_countries", {"name_contains": attack})
            assert not found.is_error and found.structured_content["rows"] == [], attack
            spoken = await client.call_tool("countries_by_language", {"language": attack})
            assert not spoken.is_error and spoken.structured_content["rows"] == [], attack
        assert (await client.call_tool("region_summary", {})).structured_content == before


async def test_no_row_for_a_one_row_tool_is_an_error_naming_it() -> None:
    async with stdio_client(SERVER) as client:
        missing = await client.call_tool("country_profile", {"code": "XXX"})
        assert missing.is_error and "no row" in missing.content[0].text
        bad = await client.call_tool("country_profile", {"code": "toolong"})
        assert bad.is_error and "code" in bad.content[0].text  # the field and the rule
        assert not (await client.call_tool("country_profile", {"code": "FRA"})).is_error


async def test_concurrent_clients_over_http() -> None:
    expected = {code for (code,) in reference("SELECT cca3 FROM countries WHERE region = 'Asia'")}
    with http_server(SERVER) as url:
        answers: list[set[str]] = []

        async def one_client() -> None:
            async with Client(url) as client:
                for _ in range(5):
                    result = await client.call_tool("find_countries", {"region": "Asia", "limit": 250})
                    answers.append({r["code"] for r in result.structured_content["rows"]})

        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(one_client)
    assert len(answers) == 20 and all(answer == expected for answer in answers)


async def test_drifted_data_says_to_replace_the_sample_the_build_read(tmp_path) -> None:
    """The build took the view's shape from the spec's sample, never from the data served: a
    data file whose `area` became text makes the tools reading it say which sample to replace
    (rebuilding alone would change nothing)."""
    retyped = tmp_path / "countries.jsonl"
    with duckdb.connect() as connection:
        connection.execute(
            f"COPY (SELECT * REPLACE (CAST(area AS VARCHAR) AS area) FROM read_json('{DATA}')) "
            f"TO '{retyped}' (FORMAT json)"
        )
    async with stdio_client(SERVER, {"countries_file": str(retyped)}) as client:
        result = await client.call_tool("find_countries", {"limit": 1})
        assert result.is_error
        message = result.content[0].text
        assert message.startswith("the data behind countries_file changed since lynxc build"), message
        assert "replace the sample data/countries.jsonl.gz beside the spec" in message, message
        assert "rebuild against the new data" not in message, message
