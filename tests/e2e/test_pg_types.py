"""Every Postgres type a SQL tool can return, end to end: the edge table of
tests/runtime/backends/sql/test_pg_types.py (one column per case, a row of edge values and a
row of NULLs) in a real PostgreSQL, a spec whose tool selects it, `lynxc build --set
database_url=...` (the build prepares the statement there and derives the output schema from the
result types), then the generated server over stdio with a real MCP client. The host checks each
answer against that output schema, so an answer arriving at all proves the schema; the values
are compared exactly."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lynxc.compiler.cli import main
from tests.conftest import stdio_client
from tests.fixtures.postgres import (  # noqa: F401
    PostgresServer,
    create_database,
    drop_database,
    postgres_server,
)
from tests.runtime.backends.sql.test_pg_types import CASES, column, edge_sql

pytestmark = pytest.mark.anyio


SPEC = """\
lynxc: 1
server:
  name: pg-types
  version: 1.0.0
  settings:
    database_url: {type: string, description: The PostgreSQL database holding the edge values.}
  postgres:
    dsn: {setting: database_url}
tools:
  - name: edge_values
    description:
      purpose: Return every row of the table of edge values, first the values then the nulls.
    annotations: {readOnlyHint: true}
    backend: {sql: "SELECT * FROM lynxc_edge ORDER BY k"}
"""


@pytest.fixture(scope="module")
def project(
    postgres_server: PostgresServer,  # noqa: F811
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Path, str]]:
    """The project built against a database holding the edge table: its root and the DSN."""
    name = create_database(postgres_server)
    try:
        with postgres_server.connect(name, autocommit=True) as conn:
            conn.execute(edge_sql())
        dsn = postgres_server.dsn(name)
        root = tmp_path_factory.mktemp("pg-types")
        spec = root / "specs" / "pg-types"
        spec.mkdir(parents=True)
        (spec / "server.yaml").write_text(SPEC)
        # The command line in-process: a subprocess would add only Python's start-up.
        with pytest.raises(SystemExit) as done:
            main(["--project", str(root), "build", "--set", f"database_url={dsn}"])
        assert done.value.code == 0
        yield root, dsn
    finally:
        drop_database(postgres_server, name)


async def test_every_type_arrives_exactly_through_mcp(project: tuple[Path, str]) -> None:
    root, dsn = project
    async with stdio_client("pg-types", {"database_url": dsn}, project=root) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        result = await client.call_tool("edge_values", {})
        assert not result.is_error, result.content[0].text
        answer = result.structured_content
        assert answer is not None
        assert answer["row_count"] == 2 and answer["truncated"] is False
        values, nulls = answer["rows"]
        assert (values["k"], nulls["k"]) == (0, 1)
        for index, (sql_type, expression, expected) in enumerate(CASES):
            assert values[column(index)] == expected, (sql_type, expression)
            assert type(values[column(index)]) is type(expected), (sql_type, expression)
            assert nulls[column(index)] is None, (sql_type, expression)
        row_schema = listed["edge_values"].output_schema["properties"]["rows"]["items"]
        assert list(row_schema["properties"]) == ["k", *(column(i) for i in range(len(CASES)))]
        # k is the primary key, so the build proves it NOT NULL; the other columns may be NULL.
        assert row_schema["properties"]["k"] == {"type": "integer", "minimum": -(2**31), "maximum": 2**31 - 1}
