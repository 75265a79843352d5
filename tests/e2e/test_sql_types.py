"""Every DuckDB type a SQL tool can return, end to end: a table holding one column per case of
the type table's exact cases (edge values included: NULL, NaN, infinities, integers past 2^53,
empty lists, non-ASCII text), a spec whose tool selects it, `lynxc build`, then the generated
server over stdio with a real MCP client. The host checks each answer against the output schema
the build derived from the result types, so an answer arriving at all proves the schema; the
values are compared exactly."""

from __future__ import annotations

import subprocess
from pathlib import Path

import duckdb
import pytest

from tests.conftest import LYNXC, stdio_client
from tests.runtime.backends.sql.test_types import EXACT

pytestmark = pytest.mark.anyio

SPEC = """\
lynxc: 1
server:
  name: sql-types
  version: 1.0.0
  settings:
    db_file: {type: string, format: file-path, description: The database of edge values.}
  duckdb:
    database: {setting: db_file, sample: edge.duckdb}
tools:
  - name: edge_values
    description:
      purpose: Return every row of the table of edge values, first the values then the nulls.
    annotations: {readOnlyHint: true}
    backend: {sql: "SELECT * EXCLUDE (k) FROM edge ORDER BY k"}
  - name: parse_number
    description:
      purpose: Convert a text to an integer in DuckDB, failing on anything else.
    annotations: {readOnlyHint: true}
    parameters:
      text: {type: string, required: true, description: The text to convert.}
    backend: {sql: "SELECT CAST($text AS INTEGER) AS n", result: one}
  - name: echo_integers
    description:
      purpose: Return an integer and a list of integers as DuckDB binds them.
    annotations: {readOnlyHint: true}
    parameters:
      n: {type: integer, required: true, description: The integer.}
      many: {type: array, items: {type: integer}, description: The integers.}
    backend: {sql: "SELECT $n AS n, $many AS many", result: one}
"""


def column(index: int) -> str:
    return f"c{index:03d}"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("sql-types")
    spec = root / "specs" / "sql-types"
    spec.mkdir(parents=True)
    (spec / "server.yaml").write_text(SPEC)
    database = spec / "edge.duckdb"
    with duckdb.connect(str(database)) as connection:
        selected = ", ".join(f"{expression} AS {column(i)}" for i, (expression, _) in enumerate(EXACT))
        connection.execute(f"CREATE TABLE edge AS SELECT 0 AS k, {selected}")
        connection.execute("INSERT INTO edge (k) VALUES (1)")  # every column NULL
    done = subprocess.run([LYNXC, "--project", str(root), "build"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return root, database


async def test_every_type_arrives_exactly_through_mcp(project: tuple[Path, Path]) -> None:
    root, database = project
    async with stdio_client("sql-types", {"db_file": str(database)}, project=root) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        result = await client.call_tool("edge_values", {})
        assert not result.is_error, result.content[0].text
        answer = result.structured_content
        assert answer["row_count"] == 2 and answer["truncated"] is False
        values, nulls = answer["rows"]
        for index, (expression, expected) in enumerate(EXACT):
            assert values[column(index)] == expected, expression
            assert nulls[column(index)] is None, expression
        row_schema = listed["edge_values"].output_schema["properties"]["rows"]["items"]
        assert list(row_schema["properties"]) == [column(i) for i in range(len(EXACT))]


async def test_a_duckdb_error_at_run_time_is_a_tool_error_and_the_server_stays_up(
    project: tuple[Path, Path],
) -> None:
    root, database = project
    async with stdio_client("sql-types", {"db_file": str(database)}, project=root) as client:
        failed = await client.call_tool("parse_number", {"text": "twelve"})
        assert failed.is_error
        assert "Conversion Error" in failed.content[0].text and "twelve" in failed.content[0].text
        parsed = await client.call_tool("parse_number", {"text": "12"})
        assert not parsed.is_error and parsed.structured_content == {"n": 12}


async def test_an_integer_parameter_publishes_and_enforces_bigints_range(project: tuple[Path, Path]) -> None:
    """An integer binds as BIGINT: its schema says so, and a value past it is refused by the
    host naming the field and the rule, never by DuckDB's conversion."""
    root, database = project
    async with stdio_client("sql-types", {"db_file": str(database)}, project=root) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        properties = listed["echo_integers"].input_schema["properties"]
        assert (properties["n"]["minimum"], properties["n"]["maximum"]) == (-(2**63), 2**63 - 1)
        assert properties["many"]["items"]["maximum"] == 2**63 - 1
        edges = await client.call_tool("echo_integers", {"n": 2**63 - 1, "many": [-(2**63)]})
        assert not edges.is_error, edges.content[0].text
        assert edges.structured_content == {"n": str(2**63 - 1), "many": [str(-(2**63))]}
        for arguments, field in (({"n": 2**63}, "n"), ({"n": 1, "many": [-(2**63) - 1]}, "many")):
            refused = await client.call_tool("echo_integers", arguments)
            assert refused.is_error
            message = refused.content[0].text
            assert field in message and "Conversion" not in message, message
            assert "less than or equal" in message or "greater than or equal" in message, message
