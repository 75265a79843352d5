"""countries-sqlite end to end: the bundled SQLite server over its shipped database, through the
generated server and a real MCP client over stdio (and HTTP). Expected answers are worked out
from the database file with sqlite3 itself, never written down by hand."""

from __future__ import annotations

import json
import sqlite3

import jsonschema
import pytest
from mcp.client import Client

from tests.conftest import ROOT, http_server, stdio_client

pytestmark = pytest.mark.anyio

SERVER = "countries-sqlite"
DATA = ROOT / "specs" / "countries-sqlite" / "data" / "countries.sqlite"
TOOLS = json.loads((ROOT / "generated" / SERVER / "tools.json").read_text())["tools"]
OUTPUT = {tool["name"]: tool["outputSchema"] for tool in TOOLS}
INJECTIONS = ["' OR 1=1 --", "'; DROP TABLE countries; --", '" OR ""="', "$code", "FRA' --"]


def reference(sql: str, *params: object) -> list[tuple]:
    with sqlite3.connect(f"{DATA.as_uri()}?mode=ro", uri=True) as connection:
        return connection.execute(sql, params).fetchall()


async def test_every_tool_answers_what_sqlite_finds_and_strings_stay_values() -> None:
    async with stdio_client(SERVER) as client:
        found = await client.call_tool("find_countries", {"region": "Africa", "landlocked": True, "limit": 5})
        assert not found.is_error, found.content[0].text
        expected = reference(
            "SELECT code FROM countries WHERE region = 'Africa' AND landlocked = 1 "
            "ORDER BY area DESC NULLS LAST, code LIMIT 5"
        )
        assert [r["code"] for r in found.structured_content["rows"]] == [c for (c,) in expected]
        assert all(r["landlocked"] is True for r in found.structured_content["rows"])

        profile = await client.call_tool("country_profile", {"code": "jpn"})
        row = reference("SELECT name, capital, area, un_member, latlng FROM countries WHERE code = 'JPN'")[0]
        answer = profile.structured_content
        assert (answer["name"], answer["capital"], answer["area"]) == row[:3]
        assert answer["un_member"] is bool(row[3]) and answer["latlng"] == json.loads(row[4])

        neighbours = await client.call_tool("neighbours", {"code": "che"})
        codes = {r["code"] for r in neighbours.structured_content["rows"]}
        assert (
            codes == {n for (n,) in reference("SELECT neighbour FROM borders WHERE code = 'CHE'")} and codes
        )

        speakers = await client.call_tool("countries_by_language", {"language": "SPA"})
        expected_codes = {c for (c,) in reference("SELECT code FROM languages WHERE language = 'spa'")}
        assert {r["code"] for r in speakers.structured_content["rows"]} == expected_codes
        for name, result in (
            ("find_countries", found),
            ("country_profile", profile),
            ("neighbours", neighbours),
            ("countries_by_language", speakers),
        ):
            jsonschema.validate(result.structured_content, OUTPUT[name])

        # One server start for both halves: starting one takes seconds on a loaded machine.
        capped = await client.call_tool("find_countries", {"limit": 250})
        assert capped.structured_content["row_count"] == reference("SELECT count(*) FROM countries")[0][0]
        assert capped.structured_content["truncated"] is False
        missing = await client.call_tool("country_profile", {"code": "ZZZ"})
        assert missing.is_error and "no row matched" in missing.content[0].text
        bad = await client.call_tool("country_profile", {"code": "FRANCE"})
        assert bad.is_error and "code" in bad.content[0].text  # the input schema's pattern
        for text in INJECTIONS:
            result = await client.call_tool("find_countries", {"name_contains": text})
            assert not result.is_error and result.structured_content["rows"] == []
        assert reference("SELECT count(*) FROM countries")[0][0] == 250


async def test_a_database_file_gone_mid_serve_is_a_tool_error_naming_the_setting(tmp_path) -> None:
    copy = tmp_path / "countries.sqlite"
    copy.write_bytes(DATA.read_bytes())
    async with stdio_client(SERVER, {"countries_db": str(copy)}) as client:
        first = await client.call_tool("neighbours", {"code": "FRA"})
        assert not first.is_error and first.structured_content["rows"]
        copy.rename(tmp_path / "moved.sqlite")
        gone = await client.call_tool("neighbours", {"code": "FRA"})
        assert (
            gone.is_error
            and "countries_db" in gone.content[0].text
            and "is not a file" in gone.content[0].text
        )
        (tmp_path / "moved.sqlite").rename(copy)
        back = await client.call_tool("neighbours", {"code": "FRA"})
        assert back.structured_content == first.structured_content


async def test_concurrent_clients_over_http() -> None:
    import anyio

    expected = {c for (c,) in reference("SELECT neighbour FROM borders WHERE code = 'DEU'")}
    with http_server(SERVER) as url:

        async def one() -> None:
            async with Client(url) as client:
                for _ in range(3):
                    result = await client.call_tool("neighbours", {"code": "deu"})
                    assert {r["code"] for r in result.structured_content["rows"]} == expected

        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(one)
