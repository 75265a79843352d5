"""SQL tools over SQLite, served in-process on real SQLite files (no mocks): the sql.json comes
from compiling a spec, the values from a database the test writes. Types and the fit check,
injection strings as values, read-only refusal by the authorizer and by query_only, timeout and
cancellation through the progress handler, drift, and a missing file."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest

from lynxc.compiler.ir import sqlite_document
from lynxc.compiler.lower.server import compile_spec
from lynxc.runtime.backends.sql.sqlite.database import close_sqlite_databases, sqlite_database_for
from lynxc.runtime.backends.sql.tools import run_sql
from lynxc.runtime.context import ToolContext
from lynxc.runtime.errors import ToolError

SCHEMA = """\
CREATE TABLE things (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  price REAL,
  amount DECIMAL(12, 2),
  born DATE,
  seen DATETIME,
  flag BOOLEAN,
  meta JSON,
  data BLOB,
  loose
);
CREATE TABLE notes (id INTEGER NOT NULL, body TEXT);
"""
SPEC = """\
lynxc: 1
server:
  name: things
  version: 1.0.0
  settings:
    db_path: {type: string, default: things.sqlite, description: The database.}
  sqlite:
    database: {setting: db_path, schema: schema.sql}
tools:
  - name: all_things
    description: {purpose: List the things.}
    backend:
      sql: |
        SELECT id, name, price, amount, born, seen, flag, meta, data, loose, length(name) AS size
        FROM things ORDER BY id
  - name: by_name
    description: {purpose: Find things by name.}
    parameters:
      name: {type: string, required: true, description: The name.}
    backend:
      sql: SELECT id, name FROM things WHERE name = $name
  - name: thing
    description: {purpose: Read one thing.}
    parameters:
      id: {type: integer, required: true, description: The id.}
    backend:
      result: one
      sql: SELECT id, name FROM things WHERE id = $id
  - name: notes
    description: {purpose: List the notes.}
    backend:
      sql: SELECT id, body FROM notes
  - name: spin
    description: {purpose: Count for a long time.}
    parameters:
      n: {type: integer, required: true, description: Where to stop.}
    backend:
      result: one
      sql: |
        WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < $n)
        SELECT max(x) AS m FROM c
"""
ROWS = [
    (1, "anvil", 9.5, 12.25, "2024-02-29", "2024-02-29 13:45:10.250", 1, '{"a": [1, null]}', b"\x00\xff", 7),
    (2, "bolt", float("inf"), 2**60, "1999-12-31", "1999-12-31T23:59", 0, "[]", b"", "text"),
    (3, "cog", None, None, None, None, None, None, None, None),
]
INJECTIONS = ["' OR 1=1 --", "anvil'; DROP TABLE things; --", '" OR ""="', "$name", "anvil\x00"]


class Server:
    """What run_sql reads of a ServerDefinition: its folder and sql_catalog()."""

    def __init__(self, folder: Path, text: str):
        from lynxc.runtime.backends.sql.catalog import parse_catalog

        self.folder = folder
        self.name = "things"
        self.catalog = parse_catalog(text)

    def sql_catalog(self) -> Any:
        return self.catalog


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("things")
    (folder / "schema.sql").write_text(SCHEMA)
    (folder / "things.yaml").write_text(SPEC)
    result = compile_spec(folder / "things.yaml")
    assert result.value is not None, [d.render() for d in result.diagnostics]
    text = json.dumps(sqlite_document(result.value.sql))
    outputs = {t.name: json.loads(t.output_schema_json) for t in result.value.tools}
    return folder, text, outputs


def database(path: Path, rows: list[tuple] = ROWS, schema: str = SCHEMA) -> Path:
    connection = sqlite3.connect(path)
    connection.executescript(schema)
    connection.executemany("INSERT INTO things VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    connection.execute("INSERT INTO notes VALUES (1, 'first')")
    connection.commit()
    connection.close()
    return path


@pytest.fixture
def served(built: tuple[Path, str, dict[str, Any]], tmp_path: Path):
    _, text, _ = built
    yield Server(tmp_path, text), {"db_path": str(database(tmp_path / "things.sqlite"))}
    close_sqlite_databases()


def call(server: Server, tool: str, settings: dict[str, Any], arguments: dict[str, Any] | None = None) -> Any:
    catalog = server.sql_catalog()
    ctx = ToolContext(
        tool=tool,
        caps={"max_rows": catalog.tools[tool].max_rows, "max_output_json_bytes": 1_048_576},
        settings={"sql_timeout_seconds": 30, **settings},
        server=server,  # type: ignore[arg-type]
    )
    return anyio.run(run_sql, arguments or {}, ctx)


def test_values_convert_by_declared_type_and_fit_the_schema(built, served) -> None:
    server, settings = served
    answer = call(server, "all_things", settings)
    jsonschema.validate(answer, built[2]["all_things"])
    first, second, third = answer["rows"]
    assert first == {
        "id": 1,
        "name": "anvil",
        "price": 9.5,
        "amount": 12.25,
        "born": "2024-02-29",
        "seen": "2024-02-29T13:45:10.250",
        "flag": True,
        "meta": {"a": [1, None]},
        "data": "AP8=",
        "loose": 7,
        "size": 5,
    }
    assert second["price"] == "Infinity" and second["amount"] == str(2**60)  # past 2^53: digits
    assert second["seen"] == "1999-12-31T23:59:00" and second["flag"] is False and second["loose"] == "text"
    assert third["name"] == "cog" and all(
        v is None for k, v in third.items() if k not in ("id", "name", "size")
    )


def test_the_derived_schema_follows_declared_types_and_nullability(built) -> None:
    row = built[2]["all_things"]["properties"]["rows"]["items"]["properties"]
    assert row["flag"] == {"anyOf": [{"type": "boolean"}, {"type": "null"}]}
    assert row["data"]["anyOf"][0]["contentEncoding"] == "base64"
    assert row["born"]["anyOf"][0]["anyOf"][0] == {"format": "date"}
    one = built[2]["thing"]["properties"]
    assert one["name"] == {"type": "string"}  # NOT NULL, read straight from the table
    assert {"type": "null"} in built[2]["notes"]["properties"]["rows"]["items"]["properties"]["body"]["anyOf"]


@pytest.mark.parametrize(
    ("column", "value", "words"),
    [
        ("price", "cheap", "TEXT 'cheap', not a number"),
        ("born", "yesterday", "not a date"),
        ("born", "2023-02-30", "not a calendar date"),
        ("seen", 1700000000, "not a date and time"),
        ("flag", 2, "not a boolean"),
        ("meta", "{not json", "not one JSON value"),
        ("data", "text", "not a BLOB"),
        ("amount", "12,5", "not a number"),
        ("name", b"\x01", "not text"),
    ],
)
def test_a_value_that_does_not_fit_is_a_tool_error_naming_column_and_row(
    served, column: str, value: Any, words: str
) -> None:
    server, settings = served
    with sqlite3.connect(settings["db_path"]) as connection:
        connection.execute(f"UPDATE things SET {column} = ? WHERE id = 2", (value,))
    with pytest.raises(ToolError) as raised:
        call(server, "all_things", settings)
    message = str(raised.value)
    assert f"column '{column}'" in message and "row 2" in message and words in message, message


@pytest.mark.parametrize("text", INJECTIONS)
def test_injection_strings_are_matched_as_values(served, text: str) -> None:
    server, settings = served
    assert call(server, "by_name", settings, {"name": text})["rows"] == []
    assert call(server, "by_name", settings, {"name": "anvil"})["rows"] == [{"id": 1, "name": "anvil"}]
    assert len(call(server, "all_things", settings)["rows"]) == len(ROWS)


def test_one_row_and_no_row(served) -> None:
    server, settings = served
    assert call(server, "thing", settings, {"id": 2}) == {"id": 2, "name": "bolt"}
    with pytest.raises(ToolError, match="no row matched id=99"):
        call(server, "thing", settings, {"id": 99})


def test_a_write_slipped_into_sql_json_is_refused_by_the_authorizer(built, tmp_path: Path) -> None:
    """A hand-edited sql.json (the build refuses writes): the server's own authorizer stops it."""
    document = json.loads(built[1])
    for statement in ("DELETE FROM things", "PRAGMA writable_schema = 1", "ATTACH 'x.db' AS x"):
        document["tools"]["notes"]["wrapped"] = statement
        server = Server(tmp_path, json.dumps(document))
        path = database(tmp_path / "copy.sqlite")
        with pytest.raises(ToolError, match="refused"):
            call(server, "notes", {"db_path": str(path)})
        close_sqlite_databases()
        path.unlink()
    assert not (tmp_path / "x.db").exists()


def test_query_only_and_mode_ro_stand_behind_the_authorizer(served) -> None:
    server, settings = served
    opened = sqlite_database_for(server, server.sql_catalog(), settings)
    with opened.connection() as pooled:
        pooled.connection.set_authorizer(None)
        with pytest.raises(sqlite3.OperationalError, match=r"readonly|read-only"):
            pooled.connection.execute("DELETE FROM things")
        pooled.connection.execute("PRAGMA query_only = OFF")
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            pooled.connection.execute("DELETE FROM things")  # mode=ro: the file itself
        pooled.connection.execute("PRAGMA query_only = ON")
        pooled.access.reset()
        pooled.connection.set_authorizer(pooled.access)
    assert len(call(server, "all_things", settings)["rows"]) == len(ROWS)


def test_a_statement_past_the_timeout_is_stopped(served) -> None:
    server, settings = served
    with pytest.raises(ToolError, match=r"longer than 0.2 s .*sql_timeout_seconds"):
        call(server, "spin", {**settings, "sql_timeout_seconds": 0.2}, {"n": 2**62})
    assert call(server, "spin", settings, {"n": 5}) == {"m": 5}  # the connection serves on


def test_a_cancelled_call_stops_the_statement(served) -> None:
    server, settings = served
    catalog = server.sql_catalog()
    opened = sqlite_database_for(server, catalog, settings)
    idle_before = opened.idle.qsize()
    ctx = ToolContext(
        tool="spin", caps={"max_rows": 100}, settings={"sql_timeout_seconds": 3600, **settings}, server=server
    )  # type: ignore[arg-type]

    async def cancel_soon() -> None:
        with anyio.move_on_after(0.3):
            await run_sql({"n": 2**62}, ctx)
        # The worker thread gives its connection back once SQLite stopped the statement.
        with anyio.fail_after(20):
            while opened.idle.qsize() < max(1, idle_before):
                await anyio.sleep(0.02)

    anyio.run(cancel_soon)
    assert ctx.cancel.cancelled
    assert call(server, "spin", settings, {"n": 3}) == {"m": 3}


def test_drift_disables_only_the_tools_whose_columns_changed(built, tmp_path: Path) -> None:
    _, text, _ = built
    server = Server(tmp_path, text)
    changed = SCHEMA.replace("name TEXT NOT NULL", "name TEXT").replace("body TEXT", "body BLOB")
    path = database(tmp_path / "drifted.sqlite", schema=changed)
    settings = {"db_path": str(path)}
    with pytest.raises(ToolError, match=r"tool 'notes' .*column notes\.body changed from 'TEXT' to 'BLOB'"):
        call(server, "notes", settings)
    with pytest.raises(ToolError, match=r"column things\.name changed from 'TEXT NOT NULL' to 'TEXT'"):
        call(server, "by_name", settings, {"name": "anvil"})
    assert call(server, "spin", settings, {"n": 3}) == {"m": 3}  # reads no table: keeps working
    close_sqlite_databases()


def test_a_missing_file_is_a_tool_error_naming_the_setting_and_recovers(built, tmp_path: Path) -> None:
    server = Server(tmp_path, built[1])
    settings = {"db_path": str(tmp_path / "later.sqlite")}
    with pytest.raises(ToolError, match=r"setting 'db_path': .*later\.sqlite is not a file"):
        call(server, "notes", settings)
    (tmp_path / "later.sqlite").write_text("not a database, just text " * 100)
    with pytest.raises(ToolError, match=r"setting 'db_path': .*not a SQLite database"):
        call(server, "notes", settings)
    (tmp_path / "later.sqlite").unlink()
    database(tmp_path / "later.sqlite")
    assert call(server, "notes", settings)["rows"] == [{"id": 1, "body": "first"}]
    close_sqlite_databases()
    shutil.rmtree(tmp_path / "unused", ignore_errors=True)


WRITER = """\
lynxc: 1
server:
  name: notes
  version: 1.0.0
  settings:
    db_path: {type: string, default: notes.sqlite, description: The database.}
  sqlite:
    database: {setting: db_path, schema: schema.sql}
    allow_writes: true
tools:
  - name: add_note
    description: {purpose: Add a note.}
    annotations: {readOnlyHint: false, destructiveHint: true}
    parameters:
      id: {type: integer, required: true, description: The id.}
      body: {type: string, required: true, description: The text.}
    backend:
      sql: INSERT INTO notes (id, body) VALUES ($id, $body) RETURNING id, body
  - name: notes
    description: {purpose: List the notes.}
    backend:
      sql: SELECT id, body FROM notes
"""


def test_a_destructive_tool_writes_only_where_the_server_allows_it(tmp_path: Path) -> None:
    (tmp_path / "schema.sql").write_text(SCHEMA)
    (tmp_path / "notes.yaml").write_text(WRITER)
    result = compile_spec(tmp_path / "notes.yaml")
    assert result.value is not None, [d.render() for d in result.diagnostics]
    document = sqlite_document(result.value.sql)
    assert document["data"]["writable"] is True and document["tools"]["add_note"]["read_only"] is False
    server = Server(tmp_path, json.dumps(document))
    settings = {"db_path": str(database(tmp_path / "notes.sqlite"))}
    added = call(server, "add_note", settings, {"id": 7, "body": "'); DROP TABLE notes; --"})
    assert added["row_count"] == 0  # a write's RETURNING rows are not described by the build
    rows = call(server, "notes", settings)["rows"]
    assert {"id": 7, "body": "'); DROP TABLE notes; --"} in rows
    # The read-only tool of a writable server still cannot write: the authorizer is per call.
    document["tools"]["notes"]["wrapped"] = "DELETE FROM notes"
    close_sqlite_databases()
    with pytest.raises(ToolError, match="refused"):
        call(Server(tmp_path, json.dumps(document)), "notes", settings)
    close_sqlite_databases()
