"""SQL tools over PostgreSQL at build time, through the `--set` path against the session's
PostgreSQL: sql.json as the runtime reads it (engine, $1..$n parameters with the types Postgres
inferred, the wrapped statement, depends and fingerprint), output schemas from the result types,
a byte-identical rebuild, a migration that shows in `build --check` and `lynxc diff`, writes
where allowed, and the command line's errors (an unknown --set, an unreachable database).

One database per module, loaded from malformed/schema.sql; the spec is built once per module."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from lynxc.compiler.build import build, stale_files, write_files
from lynxc.compiler.cli import main
from lynxc.compiler.diagnostics import Span
from lynxc.compiler.ir import canonical_json
from lynxc.compiler.lower.sql.positions import SqlText
from lynxc.compiler.lower.sql.postgres.database import load_schema, redact
from tests.conftest import free_port
from tests.fixtures.postgres import (  # noqa: F401
    PostgresServer,
    create_database,
    drop_database,
    postgres_server,
)

SCHEMA = (Path(__file__).parent / "malformed" / "schema.sql").read_text()
SERVER = """\
lynxc: 1
server:
  name: films
  version: 1.0.0
  settings:
    database_url: {type: string, description: The PostgreSQL connection string.}
  postgres:
    dsn: {setting: database_url}
    allow_writes: true
tools:
  - name: film_search
    description: {purpose: Find films by title words and rating.}
    parameters:
      words: {type: string, required: true, description: Words of the title.}
      rating: {type: string, description: Only films of this rating.}
      since: {type: integer, description: Only films released in or after this year.}
    backend:
      sql: |
        SELECT film_id, title, rating, rental_rate, price(rental_rate) AS price
        FROM film
        WHERE title ILIKE '%' || $words || '%'
          AND ($rating::mpaa_rating IS NULL OR rating = $rating::mpaa_rating)
          AND release_year >= coalesce($since, 0)
          AND $words <> ''
        ORDER BY title
  - name: film_count
    description: {purpose: Count the films of the catalogue.}
    backend:
      sql_file: count.sql
      result: one
  - name: add_film
    description: {purpose: Add a film to the catalogue.}
    annotations: {destructiveHint: true, readOnlyHint: false}
    parameters:
      title: {type: string, required: true, description: The title.}
    backend:
      sql: INSERT INTO film (title) VALUES ($title) RETURNING film_id
"""


def load(server: PostgresServer) -> str:
    name = create_database(server, "template0")
    with server.connect(name, autocommit=True) as conn:
        assert load_schema(conn, SqlText(SCHEMA, "schema.sql", Span("schema.sql"), SCHEMA, "file")) is None
    return name


def make_project(root: Path) -> Path:
    (root / "specs" / "films").mkdir(parents=True)
    (root / "specs" / "films" / "server.yaml").write_text(SERVER)
    (root / "specs" / "films" / "count.sql").write_text("SELECT count(*) AS films FROM film;\n")
    return root


@pytest.fixture(scope="module")
def database(postgres_server: PostgresServer) -> Iterator[str]:  # noqa: F811
    name = load(postgres_server)
    try:
        yield postgres_server.dsn(name)
    finally:
        drop_database(postgres_server, name)


@pytest.fixture(scope="module")
def built(database: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    project = make_project(tmp_path_factory.mktemp("pgbuild"))
    output = build(project, (), {"database_url": database})
    assert not [d for d in output.diagnostics if d.severity == "error"], [
        d.render() for d in output.diagnostics
    ]
    write_files(project, output)
    return project, json.loads((project / "generated" / "films" / "sql.json").read_text())


def test_sql_json_holds_what_the_runtime_reads(built: tuple[Path, dict]) -> None:
    _, document = built
    assert document["engine"] == "postgres" and document["format"] == 1
    assert document["data"] == {
        "dsn_setting": "database_url",
        "writable": True,
        "shape": "database given at build",
    }
    assert document["settings"] == {"timeout": "sql_timeout_seconds", "pool_size": "postgres_pool_size"}
    search = document["tools"]["film_search"]
    assert set(search) == {"statement", "wrapped", "params", "columns", "result", "max_rows", "read_only",
                           "depends", "fingerprint"}  # fmt: skip
    # $1..$n in order of first use; the same name twice is one parameter
    params = [(p["name"], p["type"], p["oid"]) for p in search["params"]]
    assert params[::2] == [("words", "text", 25), ("since", "integer", 23)]
    assert search["params"][1]["name"] == "rating" and search["params"][1]["type"] == "mpaa_rating"
    assert "$words" in search["statement"] and "$1" not in search["statement"]
    assert search["wrapped"].startswith("SELECT * FROM (\nSELECT film_id")
    assert search["wrapped"].endswith("\n) AS lynxc_rows LIMIT 101")
    assert "'%' || $1 || '%'" in search["wrapped"] and "$2::mpaa_rating" in search["wrapped"]
    assert [c["name"] for c in search["columns"]] == ["film_id", "title", "rating", "rental_rate", "price"]
    assert search["columns"][2]["type"]["values"] == ["G", "PG", "PG-13", "R", "NC-17"]
    assert search["read_only"] is True


def test_depends_name_the_catalog_entries_and_the_fingerprint_hashes_them(built: tuple[Path, dict]) -> None:
    _, document = built
    search = document["tools"]["film_search"]
    depends = search["depends"]
    assert depends["relations"]["public.film"]["title"] == "text not null"
    assert depends["relations"]["public.film"]["release_year"] == "integer"
    assert "last_update" not in depends["relations"]["public.film"]  # only the columns it reads
    assert depends["types"]["public.mpaa_rating"] == "enum(G,PG,PG-13,R,NC-17)"
    assert depends["functions"]["public.price(rate numeric)"] == "stable returns numeric"
    assert search["fingerprint"] == hashlib.sha256(canonical_json(depends).encode()).hexdigest()
    counted = document["tools"]["film_count"]["depends"]
    assert counted["relations"] == {"public.film": {}}  # read as a whole: dropping it is a change


def test_output_and_input_schemas_come_from_postgres_types(built: tuple[Path, dict]) -> None:
    project, _ = built
    tools = {
        t["name"]: t
        for t in json.loads((project / "generated" / "films" / "tools.json").read_text())["tools"]
    }
    rows = tools["film_search"]["outputSchema"]["properties"]["rows"]
    assert rows["maxItems"] == 100
    rating = rows["items"]["properties"]["rating"]
    assert {"type": "null"} in rating["anyOf"]
    since = tools["film_search"]["inputSchema"]["properties"]["since"]
    assert since["maximum"] == 2**31 - 1  # the range of integer, the type Postgres inferred for $since
    one = tools["film_count"]["outputSchema"]
    assert one["required"] == ["films"]  # result: one is the row itself


def test_writes_pass_where_the_tool_is_destructive_and_the_server_allows_them(
    built: tuple[Path, dict],
) -> None:
    _, document = built
    add = document["tools"]["add_film"]
    assert add["read_only"] is False
    assert add["wrapped"] == "INSERT INTO film (title) VALUES ($1) RETURNING film_id"
    assert add["depends"]["relations"]["public.film"]


def test_a_rebuild_is_byte_identical(built: tuple[Path, dict], database: str) -> None:
    project, _ = built
    again = build(project, (), {"database_url": database})
    assert not stale_files(project, again)


def test_a_migration_shows_in_build_check_and_diff(
    postgres_server: PostgresServer,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Nothing in the spec changes: the database does. The fingerprint makes the generated files
    stale, and the output schema's change is what `lynxc diff` shows."""
    name = load(postgres_server)
    dsn = postgres_server.dsn(name)
    try:
        project = make_project(tmp_path / "project")
        write_files(project, build(project, (), {"database_url": dsn}))
        before = tmp_path / "before.json"
        shutil.copy(project / "generated" / "films" / "tools.json", before)
        with postgres_server.connect(name, autocommit=True) as conn:
            conn.execute("ALTER TABLE film ALTER COLUMN rental_rate TYPE text")
            conn.execute(
                "CREATE OR REPLACE FUNCTION price(rate text) RETURNS text"
                " LANGUAGE sql STABLE AS $$ SELECT rate $$"
            )
        with pytest.raises(SystemExit) as done:
            main(["--project", str(project), "build", "--check", "--set", f"database_url={dsn}"])
        err = capsys.readouterr().err
        assert done.value.code == 1, err
        assert "generated/films/sql.json: error GENERATED_STALE" in err
        main_exit = pytest.raises(SystemExit)
        with main_exit:
            main(["--project", str(project), "build", "--set", f"database_url={dsn}"])
        capsys.readouterr()
        monkeypatch.chdir(project)
        with pytest.raises(SystemExit):
            main(["diff", str(before), "generated/films/tools.json", "--fail-on", "never"])
        shown = capsys.readouterr().out
        assert "film_search" in shown and "rental_rate" in shown, shown
    finally:
        drop_database(postgres_server, name)


@pytest.mark.parametrize("flag", ["nonesuch=1", "database_url"])
def test_a_set_that_names_no_setting_is_a_usage_error(
    flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = make_project(tmp_path)
    with pytest.raises(SystemExit) as done:
        main(["--project", str(project), "build", "--check", "--set", flag])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert "--set" in err and "Traceback" not in err


def test_an_unreachable_database_is_one_line_without_its_password(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = make_project(tmp_path)
    dsn = f"postgresql://lynxc:s3cret-pw@127.0.0.1:{free_port()}/films"  # nothing listens there
    with pytest.raises(SystemExit) as done:
        main(["--project", str(project), "build", "--check", "--set", f"database_url={dsn}"])
    assert done.value.code == 1
    err = capsys.readouterr().err
    assert "s3cret-pw" not in err
    lines = [line for line in err.splitlines() if "SQL_DATABASE_UNREACHABLE" in line]
    assert len(lines) == 1 and "films/server.yaml:8:" in lines[0], err  # at dsn: {setting: ...}
    assert err.count("\n") <= 3, err  # the diagnostic, its hint, the summary: no libpq paragraph
    assert "database_url" in lines[0] and "Traceback" not in err


def test_redaction_covers_urls_keywords_and_the_dsns_own_password() -> None:
    assert redact("postgresql://u:pw@h/db") == "postgresql://u:***@h/db"
    assert redact("host=h password='a b' user=u") == "host=h password=*** user=u"
    assert redact("failed for pw9x", "host=h password=pw9x") == "failed for ***"
