"""The per-process DuckDB of a server, on real files: views over a file and a glob, the attached
database, the sandbox that keeps statements inside the declared data, the settings it runs
with, one database per server and settings, and the drift check."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from lynxc.runtime.backends.sql import connection
from lynxc.runtime.backends.sql.catalog import SqlCatalog, parse_catalog
from lynxc.runtime.backends.sql.connection import (
    Call,
    CallStopped,
    Database,
    OpenError,
    database_for,
    first_paragraph,
    open_database,
    what_to_rebuild,
)

from .sqldata import COUNTRY_COLUMNS, VIEWS, FakeServer, catalog_text, column, tool, write_data

ALL_COUNTRIES = "SELECT code, name, region, area, population FROM {view} ORDER BY code"


@pytest.fixture
def settings(tmp_path: Path) -> dict[str, Any]:
    return write_data(tmp_path)


def make_catalog(database: bool = True, **tools: dict[str, Any]) -> SqlCatalog:
    tools = tools or {"all": tool(ALL_COUNTRIES.format(view="countries"), COUNTRY_COLUMNS)}
    db = {"setting": "db_file", "writable": False} if database else None
    return parse_catalog(catalog_text(tools, database=db, views=VIEWS))


@pytest.fixture
def database(settings: dict[str, Any]) -> Iterator[Database]:
    opened = open_database(make_catalog(), settings)
    yield opened
    opened.close()


def rows(database: Database, sql: str) -> list[tuple]:
    cursor = database.cursor()
    try:
        return cursor.execute(sql).fetchall()
    finally:
        cursor.close()


def refused(database: Database, sql: str) -> str:
    with pytest.raises(duckdb.Error) as caught:
        rows(database, sql)
    return str(caught.value)


# --- views and the database -----------------------------------------------------------------------


@pytest.mark.parametrize("view", ["countries", "parts", "countries_csv", "countries_json"])
def test_every_reader_and_a_glob_read_the_declared_files(database: Database, view: str) -> None:
    found = rows(database, ALL_COUNTRIES.format(view=view))
    assert [r[0] for r in found] == ["br", "ca", "de", "es", "fr", "in", "it", "jp"]
    assert found[4] == ("fr", "France", "Europe", 551695.0, 68_000_000)


def test_the_database_tables_resolve_by_name_beside_the_views(database: Database) -> None:
    found = rows(
        database,
        "SELECT c.name, k.name FROM cities c JOIN countries k ON k.code = c.country ORDER BY c.name",
    )
    assert found == [("Berlin", "Germany"), ("Lyon", "France"), ("Paris", "France"), ("Tokyo", "Japan")]


def test_cursors_run_in_utc_with_the_threads_setting(settings: dict[str, Any]) -> None:
    opened = open_database(make_catalog(), {**settings, "duckdb_threads": 3})
    try:
        assert rows(opened, "SELECT current_setting('TimeZone'), current_setting('threads')") == [("UTC", 3)]
        found = rows(opened, "SELECT TIMESTAMPTZ '2024-01-02 03:04:05+02:00'")
        assert found[0][0].utcoffset().total_seconds() == 0 and found[0][0].hour == 1
    finally:
        opened.close()


def test_a_view_option_of_every_shape_reaches_the_reader(tmp_path: Path, settings: dict[str, Any]) -> None:
    csv = tmp_path / "plain.csv"
    csv.write_text("x|y\n1|a\n2|b\n")
    views = [
        {
            "name": "plain",
            "reader": "read_csv",
            "setting": "plain_file",
            "options": {"delim": "|", "header": True, "skip": 0, "columns": {"x": "DOUBLE", "y": "VARCHAR"}},
        }
    ]
    text = catalog_text(
        {"all": tool("SELECT x, y FROM plain", [column("x", "DOUBLE"), column("y", "VARCHAR")])}, views=views
    )
    opened = open_database(parse_catalog(text), {**settings, "plain_file": str(csv)})
    try:
        assert opened.problems == {}
        assert rows(opened, "SELECT x, y, typeof(x) FROM plain ORDER BY x") == [
            (1.0, "a", "DOUBLE"),
            (2.0, "b", "DOUBLE"),
        ]
    finally:
        opened.close()


# --- the sandbox ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM read_text('/etc/passwd')",
        "SELECT * FROM read_blob('/etc/hostname')",
        "SELECT * FROM glob('/etc/*')",
        "SELECT * FROM sniff_csv('/etc/passwd')",
        "COPY (SELECT 1) TO '{tmp}/out.csv'",
        "ATTACH '{tmp}/other.duckdb' AS other",
        "SELECT * FROM read_csv('{tmp}/parts/../secret.csv')",  # out of the glob's folder
        "SELECT * FROM read_csv('{tmp}/secret.csv')",  # beside the declared files
        "INSTALL httpfs",
        "LOAD httpfs",
    ],
)
def test_a_statement_cannot_reach_past_the_declared_files(
    database: Database, tmp_path: Path, sql: str
) -> None:
    (tmp_path / "secret.csv").write_text("password\nhunter2\n")
    message = refused(database, sql.format(tmp=tmp_path))
    assert "disabled" in message or "Permission" in message
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "other.duckdb").exists()


@pytest.mark.parametrize(
    "sql",
    [
        "SET enable_external_access = true",
        "SET allowed_directories = ['/']",
        "SET threads = 64",
        "SET memory_limit = '100TB'",
        "RESET lock_configuration",
        "PRAGMA threads = 8",
    ],
)
def test_a_statement_cannot_change_the_configuration(database: Database, sql: str) -> None:
    assert "the configuration has been locked" in refused(database, sql)
    assert rows(database, "SELECT current_setting('enable_external_access')") == [(False,)]


def test_the_declared_data_stays_readable_inside_the_sandbox(
    database: Database, settings: dict[str, Any]
) -> None:
    assert rows(database, "SELECT count(*) FROM parts") == [(8,)]  # a glob: every file under parts/
    assert rows(database, "SELECT count(*) FROM cities") == [(4,)]
    # The declared file itself, named directly, is allowed: it is what the view reads.
    assert rows(database, f"SELECT count(*) FROM read_parquet('{settings['countries_file']}')") == [(8,)]


def test_a_read_only_database_refuses_writes(database: Database) -> None:
    assert "read-only" in refused(database, "INSERT INTO cities VALUES ('Rome', 'it', 2800000)")
    assert "read-only" in refused(database, "CREATE TABLE lynxc_data.main.t (a INTEGER)")
    assert rows(database, "SELECT count(*) FROM cities") == [(4,)]


HOSTNAME = "SELECT content FROM read_text('/etc/hostname')"


def allowed_directories(database: Database) -> list[str]:
    return rows(database, "SELECT current_setting('allowed_directories')")[0][0]


def csv_view(setting: str = "csv_glob") -> list[dict[str, Any]]:
    return [{"name": "rates", "reader": "read_csv", "setting": setting, "options": {"header": True}}]


def rates_catalog() -> SqlCatalog:
    columns = [column("code", "VARCHAR"), column("rate", "DOUBLE")]
    return parse_catalog(
        catalog_text({"all": tool("SELECT code, rate FROM rates", columns)}, views=csv_view())
    )


@pytest.mark.parametrize("glob", ["*.csv", "./*.csv", "r*.csv", "sub/../*.csv", "~/*.csv", "~/./r?tes.csv"])
def test_a_glob_relative_to_the_working_folder_or_home_allows_only_that_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, glob: str
) -> None:
    # A glob in the first segment once gave the base folder "/": every file was readable.
    (tmp_path / "sub").mkdir()
    (tmp_path / "rates.csv").write_text("code,rate\nfr,1.5\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    opened = open_database(rates_catalog(), {"csv_glob": glob})
    try:
        assert opened.problems == {}
        assert rows(opened, "SELECT code, rate FROM rates") == [("fr", 1.5)]
        assert sorted(allowed_directories(opened)) == sorted([str(tmp_path) + "/", *temp_folder(opened)])
        assert "disabled by configuration" in refused(opened, HOSTNAME)
        assert "disabled by configuration" in refused(opened, "SELECT * FROM glob('/etc/*')")
    finally:
        opened.close()


@pytest.mark.parametrize("glob", ["/*.csv", "/tmp/../*.csv", "/[ab]in/*", "/{x}/y.csv"])
def test_a_glob_at_the_root_is_refused(glob: str) -> None:
    with pytest.raises(OpenError) as caught:
        open_database(rates_catalog(), {"csv_glob": glob})
    assert str(caught.value).startswith(
        "setting 'csv_glob': the glob "
    ) and "would let statements read every file" in str(caught.value)


@pytest.mark.parametrize(
    ("location", "base"),
    [
        ("data/a[1]/x.csv", "{cwd}/data"),  # a literal name may be taken for a glob: its parent, never /
        ("data/{old}.csv", "{cwd}/data"),
        ("/srv/data/**/*.parquet", "/srv/data"),
        ("/srv/./data/x/../*.csv", "/srv/data"),
        ("[ab].csv", "{cwd}"),
    ],
)
def test_the_folder_a_glob_reads_under(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, location: str, base: str
) -> None:
    monkeypatch.chdir(tmp_path)
    assert connection.base_folder(location) == (base.format(cwd=tmp_path), True)


def test_one_file_is_allowed_alone_with_home_expanded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rates.csv").write_text("code,rate\nfr,1.5\n")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert connection.base_folder("~/rates.csv") == (str(tmp_path / "rates.csv"), False)
    opened = open_database(rates_catalog(), {"csv_glob": "~/rates.csv"})
    try:
        assert rows(opened, "SELECT code FROM rates") == [("fr",)]
        assert rows(opened, "SELECT current_setting('allowed_paths')")[0][0] == [str(tmp_path / "rates.csv")]
        assert "disabled by configuration" in refused(opened, HOSTNAME)
    finally:
        opened.close()


# --- DuckDB's temporary files ---------------------------------------------------------------------


def temp_folder(database: Database) -> list[str]:
    return [rows(database, "SELECT current_setting('temp_directory')")[0][0] + "/"]


def test_spilled_data_goes_to_a_private_folder_of_the_system_temp_dir(database: Database) -> None:
    folder = rows(database, "SELECT current_setting('temp_directory')")[0][0]
    assert Path(folder).parent == Path(tempfile.gettempdir())
    assert Path(folder).name.startswith(f"lynxc-duckdb-{os.getpid()}-")
    assert Path(folder).is_dir() and (Path(folder).stat().st_mode & 0o777) == 0o700
    assert folder + "/" in allowed_directories(database)
    # Locked with the rest: a statement cannot point it elsewhere.
    assert "locked" in refused(database, "SET temp_directory = '/var/tmp'")


def test_each_database_has_its_own_temp_folder_removed_on_close(settings: dict[str, Any]) -> None:
    # Two DuckDB instances spilling into one folder overwrite each other's files.
    first, second = open_database(make_catalog(), settings), open_database(make_catalog(), settings)
    folders = [temp_folder(first)[0], temp_folder(second)[0]]
    assert folders[0] != folders[1]
    first.close()
    second.close()
    assert not any(Path(folder).exists() for folder in folders)


def test_temp_folders_of_processes_gone_are_swept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: dict[str, Any]
) -> None:
    # A killed server leaves its folder behind; the next process to open a database removes it.
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    gone = int(done.stdout)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    left = tmp_path / f"lynxc-duckdb-{gone}-abc_123"
    left.mkdir()
    mine = tmp_path / f"lynxc-duckdb-{os.getpid()}-xyz"
    mine.mkdir()
    other = tmp_path / f"lynxc-duckdb-{gone}.txt"  # not one of ours: left alone
    other.write_text("x")
    monkeypatch.setattr(connection, "_swept", False)
    opened = open_database(make_catalog(), settings)
    try:
        assert not left.exists() and mine.is_dir() and other.exists()
        assert Path(temp_folder(opened)[0]).parent == tmp_path
    finally:
        opened.close()


# --- one database per process ---------------------------------------------------------------------


def test_one_database_per_server_and_settings(tmp_path: Path, settings: dict[str, Any]) -> None:
    server = FakeServer(
        tmp_path,
        catalog_text({"all": tool(ALL_COUNTRIES.format(view="countries"), COUNTRY_COLUMNS)}, views=VIEWS),
    )
    catalog = server.sql_catalog()
    try:
        first = database_for(server, catalog, settings)
        assert database_for(server, catalog, dict(settings)) is first
        other = database_for(server, catalog, {**settings, "duckdb_threads": 1})
        assert other is not first
        assert rows(other, "SELECT current_setting('threads')") == [(1,)]
    finally:
        connection.close_databases()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"db_file": None}, "setting 'db_file' is not set"),
        (
            {"db_file": "/nonexistent/x.duckdb"},
            "setting 'db_file': no DuckDB database file at '/nonexistent/x.duckdb'",
        ),
        ({"duckdb_threads": 0}, "setting 'duckdb_threads': 0 is not a positive integer"),
    ],
)
def test_data_that_cannot_be_opened_is_an_error_naming_the_setting(
    settings: dict[str, Any], change: dict[str, Any], message: str
) -> None:
    with pytest.raises(OpenError) as caught:
        open_database(make_catalog(), {**settings, **change})
    assert message in str(caught.value)


def test_a_file_that_is_not_a_database_names_its_setting(tmp_path: Path, settings: dict[str, Any]) -> None:
    with pytest.raises(OpenError, match="setting 'db_file': cannot open the DuckDB database"):
        open_database(make_catalog(), {**settings, "db_file": settings["countries_csv"]})


# --- the drift check ------------------------------------------------------------------------------


def test_a_retyped_column_disables_only_the_tools_that_read_it(
    tmp_path: Path, settings: dict[str, Any]
) -> None:
    # The countries file is rewritten with `area` as text: the build saw DOUBLE.
    con = duckdb.connect()
    con.execute(
        f"COPY (SELECT code, name, region, CAST(area AS VARCHAR) AS area, population "
        f"FROM read_parquet('{settings['countries_file']}')) TO '{tmp_path / 'new.parquet'}' (FORMAT parquet)"
    )
    con.close()
    catalog = make_catalog(
        by_area=tool(
            "SELECT code, area FROM countries", [column("code", "VARCHAR"), column("area", "DOUBLE")]
        ),
        from_glob=tool("SELECT code, area FROM parts", [column("code", "VARCHAR"), column("area", "DOUBLE")]),
    )
    opened = open_database(catalog, {**settings, "countries_file": str(tmp_path / "new.parquet")})
    try:
        assert opened.problems == {
            "by_area": "the data behind countries_file changed since lynxc build: column `area` is now "
            "VARCHAR, was DOUBLE; rebuild against the new data"
        }
    finally:
        opened.close()


def test_renamed_columns_and_a_statement_that_no_longer_binds(settings: dict[str, Any]) -> None:
    catalog = make_catalog(
        renamed=tool("SELECT * FROM countries", [column("code", "VARCHAR"), column("title", "VARCHAR")]),
        gone=tool("SELECT surface FROM countries", [column("surface", "DOUBLE")]),
        table=tool(
            "SELECT name, population FROM cities",
            [column("name", "VARCHAR"), column("population", "INTEGER")],
        ),
    )
    opened = open_database(catalog, settings)
    try:
        assert opened.problems["renamed"] == (
            "the data behind countries_file changed since lynxc build: its columns are now "
            "(code, name, region, area, population), were (code, title); rebuild against the new data"
        )
        assert opened.problems["gone"].startswith(
            "the data behind countries_file changed since lynxc build: the statement no longer binds: "
            'Binder Error: Referenced column "surface" not found'
        )
        # No view named: the database setting is the data behind it.
        assert opened.problems["table"] == (
            "the data behind db_file changed since lynxc build: column `population` is now BIGINT, "
            "was INTEGER; rebuild against the new data"
        )
    finally:
        opened.close()


def test_parameters_are_bound_with_their_declared_types(settings: dict[str, Any]) -> None:
    # `$x` is DOUBLE: the build saw `$x * 2` as DOUBLE, and so does the check (typed NULL).
    catalog = make_catalog(
        typed=tool("SELECT $x * 2 AS y", [column("y", "DOUBLE")], {"x": "DOUBLE"}),
        mismatch=tool("SELECT $x * 2 AS y", [column("y", "INTEGER")], {"x": "DOUBLE"}),
    )
    opened = open_database(catalog, settings)
    try:
        assert list(opened.problems) == ["mismatch"]
        assert "column `y` is now DOUBLE, was INTEGER" in opened.problems["mismatch"]
    finally:
        opened.close()


def test_a_missing_file_disables_the_tools_that_read_it(tmp_path: Path, settings: dict[str, Any]) -> None:
    catalog = make_catalog(
        missing=tool(ALL_COUNTRIES.format(view="countries_json"), COUNTRY_COLUMNS),
        fine=tool(ALL_COUNTRIES.format(view="countries"), COUNTRY_COLUMNS),
    )
    opened = open_database(catalog, {**settings, "countries_json": str(tmp_path / "gone.jsonl")})
    try:
        assert list(opened.problems) == ["missing"]
        problem = opened.problems["missing"]
        assert problem.startswith(
            f"view `countries_json` cannot read setting 'countries_json' ({tmp_path / 'gone.jsonl'}): "
        )
        assert "No files found" in problem and problem.endswith("(so 'missing' cannot run)")
    finally:
        opened.close()


def test_the_check_binds_but_never_runs_a_statement(settings: dict[str, Any]) -> None:
    # Minutes of work if it ran; the check only plans it.
    slow = "SELECT count(*) AS n FROM range(100000000000) a, range(1000) b WHERE a.range + b.range = $x"
    catalog = make_catalog(slow=tool(slow, [column("n", "BIGINT")], {"x": "BIGINT"}))
    opened = open_database(catalog, settings)
    opened.close()
    assert opened.problems == {}


def test_a_write_statement_is_prepared_not_run(tmp_path: Path, settings: dict[str, Any]) -> None:
    insert = "INSERT INTO cities VALUES ($name, 'it', 1) RETURNING name"
    catalog = make_catalog(
        add=tool(insert, [column("name", "VARCHAR")], {"name": "VARCHAR"}, read_only=False, wrapped=insert)
    )
    opened = open_database(catalog, settings)
    try:
        assert opened.problems == {}
        assert rows(opened, "SELECT count(*) FROM cities") == [(4,)]
    finally:
        opened.close()


def not_null_catalog(not_null: list[str], **tools: dict[str, Any]) -> SqlCatalog:
    database = {"setting": "db_file", "writable": False, "not_null": not_null, "shape": "schema: schema.sql"}
    return parse_catalog(catalog_text(tools, database=database, views=VIEWS))


def test_a_column_no_longer_not_null_in_the_database_disables_every_tool(
    tmp_path: Path, settings: dict[str, Any]
) -> None:
    # The build saw `cities.name` NOT NULL (and proved `name` non-null from it); this file's
    # table has no such constraint.
    catalog = not_null_catalog(
        ["cities.name", "cities.country"],
        names=tool("SELECT name FROM cities", [column("name", "VARCHAR", nullable=False)]),
        views_only=tool(ALL_COUNTRIES.format(view="countries"), COUNTRY_COLUMNS),
    )
    opened = open_database(catalog, settings)
    try:
        expected = (
            "the data behind db_file changed since lynxc build: column `cities.name` is no longer NOT NULL "
            "in the database; column `cities.country` is no longer NOT NULL in the database; the build "
            "takes the data's shape from the spec: update the schema schema.sql beside the spec to the "
            "new data's tables, then run `lynxc build`"
        )
        assert opened.problems == {"names": expected, "views_only": expected}
    finally:
        opened.close()


def test_not_null_columns_that_still_are_pass_the_check(tmp_path: Path, settings: dict[str, Any]) -> None:
    strict = tmp_path / "strict.duckdb"
    with duckdb.connect(str(strict)) as db:
        db.execute('CREATE TABLE "Cities" ("Name" VARCHAR NOT NULL, country VARCHAR, population BIGINT)')
        db.execute("INSERT INTO Cities VALUES ('Paris', 'fr', 1)")
    catalog = not_null_catalog(
        ["cities.name"],
        names=tool("SELECT name AS name FROM cities", [column("name", "VARCHAR", nullable=False)]),
    )
    opened = open_database(catalog, {**settings, "db_file": str(strict)})
    try:
        assert opened.problems == {}
        assert rows(opened, "SELECT name FROM cities") == [("Paris",)]
    finally:
        opened.close()


def test_no_not_null_list_checks_nothing(settings: dict[str, Any]) -> None:
    catalog = not_null_catalog([], names=tool("SELECT name FROM cities", [column("name", "VARCHAR")]))
    opened = open_database(catalog, settings)
    try:
        assert opened.problems == {}
    finally:
        opened.close()


# --- DuckDB's messages ----------------------------------------------------------------------------


def duckdb_error(sql: str) -> duckdb.Error:
    with duckdb.connect() as con:
        con.execute("CREATE TABLE t (a INTEGER, bb INTEGER)")
        try:
            con.execute(sql)
        except duckdb.Error as err:
            return err
    raise AssertionError(f"{sql!r} ran")


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("SELECT x x x", 'Parser Error: syntax error at or near "x"'),
        (
            "SELECT a FROM t WHERE\n    b = 1",
            'Binder Error: Referenced column "b" not found in FROM clause! Candidate bindings: "bb"',
        ),
        ("SELECT CAST('a' AS INTEGER)", "Conversion Error: Could not convert string 'a' to INT32"),
    ],
)
def test_first_paragraph_is_duckdbs_message_without_its_line_quote_on_one_line(
    sql: str, message: str
) -> None:
    err = duckdb_error(sql)
    assert "\n\nLINE " in str(err)  # what is cut
    assert first_paragraph(err) == message


def test_first_paragraph_of_other_text() -> None:
    assert first_paragraph(ValueError("  one\n\ttwo   three \n\nfour\n")) == "one two three four"
    assert first_paragraph(ValueError("head\nLINE 3: SELECT\n   ^")) == "head"
    assert first_paragraph(RuntimeError("")) == "RuntimeError"


def test_the_connection_module_imports_without_duckdb() -> None:
    # The compiler imports first_paragraph from it while reading backend declarations.
    code = (
        "import sys, lynxc.runtime.backends.sql.connection as c, lynxc.runtime.backends.sql.tools; "
        "print('duckdb' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (0, "False"), done.stderr


# --- one call's cursor ----------------------------------------------------------------------------


def test_a_call_stopped_before_it_started_does_not_run(database: Database) -> None:
    call = Call(database)
    call.stop()
    with pytest.raises(CallStopped):
        call.run(lambda cursor: cursor.execute("SELECT 1").fetchall())
    assert call.finished.is_set()


def test_a_call_closes_its_cursor(database: Database) -> None:
    call = Call(database)
    kept: list[Any] = []
    assert call.run(lambda cursor: kept.append(cursor) or cursor.execute("SELECT 42").fetchall()) == [(42,)]
    with pytest.raises(duckdb.ConnectionException):
        kept[0].execute("SELECT 1")
    call.stop()  # after the end: nothing to interrupt, and no error


def test_the_sandbox_settings_are_sql_literals_not_code(tmp_path: Path, settings: dict[str, Any]) -> None:
    # A path with a quote in it (an operator's folder name) is data, in the view and the sandbox.
    odd = tmp_path / "it's here"
    odd.mkdir()
    target = odd / "c.parquet"
    Path(settings["countries_file"]).rename(target)
    opened = open_database(make_catalog(), {**settings, "countries_file": str(target)})
    try:
        assert opened.problems == {}
        assert rows(opened, "SELECT count(*) FROM countries") == [(8,)]
        allowed = rows(opened, "SELECT current_setting('allowed_paths')")[0][0]
        assert str(target) in allowed
    finally:
        opened.close()


def test_the_catalog_json_round_trip_used_here_is_the_contracts(settings: dict[str, Any]) -> None:
    document = json.loads(catalog_text({"all": tool("SELECT 1 AS one", [column("one", "INTEGER")])}))
    assert set(document) == {"_generated", "format", "data", "settings", "tools"}
    assert set(document["tools"]["all"]) == {
        "statement",
        "wrapped",
        "params",
        "columns",
        "result",
        "max_rows",
        "read_only",
    }


def test_what_to_rebuild_names_the_part_of_the_spec_the_shape_came_from() -> None:
    assert what_to_rebuild(["columns", "sample: data/x.parquet"]) == (
        "the build takes the data's shape from the spec: update the view's `columns` in the spec to "
        "the new data's types; replace the sample data/x.parquet beside the spec with a sample of the "
        "new data, then run `lynxc build`"
    )
    assert what_to_rebuild(["columns", ""]) == "rebuild against the new data"  # an older sql.json
