"""The build's diagnostics for SQL tools over SQLite: a corpus of bad statements, schemas and
data declarations, each with its golden diagnostics (file:line:col inside the SQL where SQLite
names the token). Regenerate after an intended change with
`LYNXC_UPDATE_GOLDENS=1 pytest tests/compiler/sql/sqlite`, then review the diff."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lynxc.compiler.lower.server import compile_spec

UPDATE = os.environ.get("LYNXC_UPDATE_GOLDENS") == "1"
GOLDEN = Path(__file__).parent / "diagnostics.golden"
SCHEMA = """\
CREATE TABLE countries (code TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL, area REAL);
CREATE TABLE cities (name TEXT NOT NULL, country TEXT REFERENCES countries (code));
"""
SERVER = """\
lynxc: 1
server:
  name: atlas
  version: 1.0.0
  settings:
    db_path: {{type: string, default: atlas.sqlite, description: The atlas database.}}
  sqlite:
    database: {database}
tools:
  - name: probe
    description: {{purpose: Probe the atlas.}}
    annotations: {{readOnlyHint: {read_only}, destructiveHint: {destructive}}}
    parameters:
{parameters}
    backend:
      sql: |
{sql}
"""
CODE = "      code: {type: string, description: A code.}"
DB = "{setting: db_path, schema: schema.sql}"
# name -> (sql, parameters, database declaration, schema text)
CASES: dict[str, tuple[str, str, str, str]] = {
    "syntax": ("SELEC code FROM countries", "      {}", DB, SCHEMA),
    "incomplete": ("SELECT code FROM countries WHERE", "      {}", DB, SCHEMA),
    "unknown_table": ("SELECT code\nFROM countrie", "      {}", DB, SCHEMA),
    "unknown_column": ("SELECT code, nme\nFROM countries", "      {}", DB, SCHEMA),
    "unknown_function": ("SELECT no_such_fn(code) AS x FROM countries", "      {}", DB, SCHEMA),
    "two_statements": ("SELECT code FROM countries;\nSELECT name FROM cities", "      {}", DB, SCHEMA),
    "delete": ("DELETE FROM countries WHERE code = $code", CODE, DB, SCHEMA),
    "update_returning": ("UPDATE countries SET area = 0 RETURNING code", "      {}", DB, SCHEMA),
    "pragma": ("PRAGMA table_info(countries)", "      {}", DB, SCHEMA),
    "attach": ("ATTACH '/tmp/other.db' AS other", "      {}", DB, SCHEMA),
    "create": ("CREATE TABLE t (x)", "      {}", DB, SCHEMA),
    "load_extension": ("SELECT load_extension('evil') AS x", "      {}", DB, SCHEMA),
    "undeclared": ("SELECT code FROM countries WHERE code = $cod", CODE, DB, SCHEMA),
    "unused": ("SELECT code FROM countries", CODE, DB, SCHEMA),
    "positional": ("SELECT code FROM countries WHERE code = ? OR name = :code", CODE, DB, SCHEMA),
    "array_parameter": (
        "SELECT code FROM countries WHERE code IN (SELECT value FROM json_each($codes))",
        "      codes: {type: array, items: {type: string}, description: Codes.}",
        DB,
        SCHEMA,
    ),
    "duplicate_names": ("SELECT code, name AS code FROM countries", "      {}", DB, SCHEMA),
    "dollar_in_string_is_text": ("SELECT code FROM countries WHERE name = '$code'", "      {}", DB, SCHEMA),
    "setting_unknown": (
        "SELECT code FROM countries",
        "      {}",
        "{setting: db_file, schema: schema.sql}",
        SCHEMA,
    ),
    "no_shape": ("SELECT code FROM countries", "      {}", "{setting: db_path}", SCHEMA),
    "schema_attach": ("SELECT code FROM countries", "      {}", DB, "ATTACH 'x.db' AS x;\n" + SCHEMA),
    "schema_vacuum_into": (
        "SELECT code FROM countries",
        "      {}",
        DB,
        SCHEMA + "VACUUM INTO '/tmp/x.db';\n",
    ),
    "schema_broken": ("SELECT code FROM countries", "      {}", DB, "CREATE TABLE countries (code TEXT,\n"),
    "both_engines": ("SELECT code FROM countries", "      {}", DB + "\n  duckdb: {views: {}}", SCHEMA),
    "schema_missing": (
        "SELECT code FROM countries",
        "      {}",
        "{setting: db_path, schema: nope.sql}",
        SCHEMA,
    ),
}


def diagnostics_of(tmp_path: Path, name: str) -> str:
    sql, parameters, database, schema = CASES[name]
    folder = tmp_path / name
    folder.mkdir()
    (folder / "schema.sql").write_text(schema)
    spec = folder / "atlas.yaml"
    writes = name == "update_returning"
    spec.write_text(
        SERVER.format(
            database=database,
            parameters=parameters,
            sql="\n".join("        " + line for line in sql.splitlines()),
            read_only=str(not writes).lower(),
            destructive=str(writes).lower(),
        )
    )
    result = compile_spec(spec)
    lines = [d.render().replace(str(folder), "<case>") for d in result.diagnostics if d.severity == "error"]
    return "\n".join(lines)


def _golden() -> dict[str, str]:
    if not GOLDEN.exists():
        return {}
    cases: dict[str, str] = {}
    for block in GOLDEN.read_text().split("\n=== ")[1:] if GOLDEN.read_text().startswith("\n") else []:
        name, _, body = block.partition("\n")
        cases[name] = body.rstrip("\n")
    return cases


def test_corpus(tmp_path: Path) -> None:
    found = {name: diagnostics_of(tmp_path, name) for name in CASES}
    if UPDATE:
        GOLDEN.write_text("".join(f"\n=== {name}\n{text}\n" for name, text in found.items()))
    golden = _golden()
    assert set(golden) == set(CASES), "run with LYNXC_UPDATE_GOLDENS=1 to write the goldens"
    for name, text in found.items():
        assert text == golden[name], f"case {name}:\n{text}"
        clean = name == "dollar_in_string_is_text"
        assert bool(text) != clean, f"case {name} should {'pass' if clean else 'fail'}"


@pytest.mark.parametrize("name", ["syntax", "unknown_column", "two_statements"])
def test_places_point_into_the_sql(tmp_path: Path, name: str) -> None:
    """The span is the token SQLite names, in the spec's literal block (line 17 is the SQL's first)."""
    text = diagnostics_of(tmp_path, name)
    place = text.split(": ", 1)[0]
    line, col = (int(part) for part in place.rsplit(":", 2)[1:])
    expected = {"syntax": (17, 9), "unknown_column": (17, 22), "two_statements": (18, 9)}[name]
    assert (line, col) == expected, text


def test_a_sample_database_is_copied_never_written(tmp_path: Path) -> None:
    import hashlib
    import sqlite3

    folder = tmp_path / "sampled"
    folder.mkdir()
    with sqlite3.connect(folder / "small.sqlite") as connection:
        connection.executescript(SCHEMA + "INSERT INTO countries VALUES ('FRA', 'France', 1.5);")
    connection.close()
    before = hashlib.sha256((folder / "small.sqlite").read_bytes()).hexdigest()
    spec = folder / "atlas.yaml"
    spec.write_text(
        SERVER.format(
            database="{setting: db_path, sample: small.sqlite}",
            parameters=CODE,
            sql="        SELECT code, name, area FROM countries WHERE code = $code",
            read_only="true",
            destructive="false",
        )
    )
    result = compile_spec(spec)
    assert result.value is not None, [d.render() for d in result.diagnostics]
    assert result.value.sql is not None and result.value.sql.database_shape == "sample: small.sqlite"
    assert [c.nullable for c in result.value.sql.tools[0].columns] == [False, False, True]
    assert hashlib.sha256((folder / "small.sqlite").read_bytes()).hexdigest() == before
    assert sorted(p.name for p in folder.iterdir()) == ["atlas.yaml", "small.sqlite"]  # no journal left


def test_a_schema_that_never_ends_is_stopped_by_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lynxc.compiler.lower import server
    from lynxc.compiler.lower.sql.check import check_sql

    monkeypatch.setattr(
        server, "check_sql", lambda *args, **kwargs: check_sql(*args, cpu_seconds=0.5, **kwargs)
    )
    folder = tmp_path / "endless"
    folder.mkdir()
    endless = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n"
    (folder / "schema.sql").write_text(SCHEMA + f"CREATE TABLE t AS {endless};\n")
    sql = "        SELECT code FROM countries"
    (folder / "atlas.yaml").write_text(
        SERVER.format(database=DB, parameters="      {}", sql=sql, read_only="true", destructive="false")
    )
    result = compile_spec(folder / "atlas.yaml")
    assert [d.rule_id for d in result.diagnostics] == ["SQL_TIMEOUT"], [
        d.render() for d in result.diagnostics
    ]
