"""Files a SQL spec names beside itself (a DuckDB or SQLite schema, a statement's sql_file) must
be UTF-8 text: bytes of another encoding are one diagnostic at the spec's line, naming the file,
for every engine (compiler/lower/sql/catalog.py's read_text_beside reads them all)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lynxc.compiler.lower.server import compile_spec

LATIN_1 = "CREATE TABLE caf\u00e9 (x INTEGER);\n".encode("latin-1")
SPEC = """\
lynxc: 1
server:
  name: atlas
  version: 1.0.0
  settings:
    db_path: {{type: string, default: atlas.db, description: The database.}}
    database_url: {{type: string, description: The PostgreSQL to serve from.}}
  {engine}: {data}
tools:
  - name: probe
    description: {{purpose: Probe the atlas.}}
    backend: {backend}
"""
DATA = {"postgres": "{dsn: {setting: database_url}, schema: schema.sql}"}
CASES = {
    "duckdb schema": ("duckdb", "{sql: SELECT 1 AS x}", "schema.sql", "schema 'schema.sql'"),
    "sqlite schema": ("sqlite", "{sql: SELECT 1 AS x}", "schema.sql", "schema 'schema.sql'"),
    "postgres schema": ("postgres", "{sql: SELECT 1 AS x}", "schema.sql", "schema 'schema.sql'"),
    "sql_file": ("sqlite", "{sql_file: probe.sql}", "probe.sql", "sql_file 'probe.sql'"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_file_that_is_not_utf8_is_one_diagnostic_naming_it(tmp_path: Path, case: str) -> None:
    engine, backend, latin, named = CASES[case]
    (tmp_path / "schema.sql").write_text("CREATE TABLE t (x INTEGER);\n")
    (tmp_path / "probe.sql").write_text("SELECT x FROM t\n")
    (tmp_path / latin).write_bytes(LATIN_1)
    data = DATA.get(engine, "{database: {setting: db_path, schema: schema.sql}}")
    (tmp_path / "atlas.yaml").write_text(SPEC.format(engine=engine, data=data, backend=backend))
    errors = [d for d in compile_spec(tmp_path / "atlas.yaml").diagnostics if d.severity == "error"]
    assert [d.rule_id for d in errors] == ["SQL_FILE_UNREADABLE"], [d.render() for d in errors]
    assert f"{named} is not UTF-8 text (invalid continuation byte)" in errors[0].message
    assert errors[0].span.file.endswith("atlas.yaml") and errors[0].span.line > 1
