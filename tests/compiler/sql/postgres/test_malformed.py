"""Golden diagnostics for a corpus of malformed Postgres SQL tools: each `malformed/<case>.yaml`
(or folder) must produce exactly the diagnostics in `<case>.expected`, and never a traceback.

Every case is checked against one database of the session's PostgreSQL (`--set` path), loaded
once per module from `malformed/schema.sql` by the compiler's own schema loader. The cases that
need the build's own PostgreSQL (an error inside schema.sql) or no database at all (unreachable)
are in test_build.py.

Regenerate after an intended change with `LYNXC_UPDATE_GOLDENS=1 pytest tests/compiler/sql/postgres`,
then read the diff."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from lynxc.compiler.cli import main
from lynxc.compiler.diagnostics import Span, sort_diagnostics
from lynxc.compiler.lower.server import compile_spec
from lynxc.compiler.lower.sql.positions import SqlText
from lynxc.compiler.lower.sql.postgres.database import load_schema
from tests.fixtures.postgres import (  # noqa: F401
    PostgresServer,
    create_database,
    drop_database,
    postgres_server,
)

CORPUS = Path(__file__).parent / "malformed"
# Hidden folders are no cases: a build run here leaves its cache, .lynxc-cache/.
CASES = sorted(
    p for p in CORPUS.iterdir() if not p.name.startswith(".") and (p.suffix == ".yaml" or p.is_dir())
)
UPDATE = os.environ.get("LYNXC_UPDATE_GOLDENS") == "1"


@pytest.fixture(scope="module")
def corpus_dsn(postgres_server: PostgresServer) -> Iterator[str]:  # noqa: F811
    name = create_database(postgres_server, "template0")
    schema = (CORPUS / "schema.sql").read_text()
    with postgres_server.connect(name, autocommit=True) as conn:
        assert load_schema(conn, SqlText(schema, "schema.sql", Span("schema.sql"), schema, "file")) is None
    try:
        yield postgres_server.dsn(name)
    finally:
        drop_database(postgres_server, name)


def test_corpus_covers_the_cases_of_the_issue() -> None:
    assert len(CASES) >= 22


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_diagnostics_match_golden(case: Path, corpus_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CORPUS)  # diagnostics name files relative to the working directory
    result = compile_spec(Path(case.name), build_settings={"database_url": corpus_dsn})
    assert result.value is None, "a malformed spec must not compile"
    rendered = "\n".join(d.render() for d in sort_diagnostics(result.diagnostics)) + "\n"
    expected_file = CORPUS / f"{case.stem}.expected"
    if UPDATE:
        expected_file.write_text(rendered)
    assert rendered == expected_file.read_text()
    for diagnostic in result.diagnostics:
        assert diagnostic.span.line >= 1 and diagnostic.span.col >= 1
        assert diagnostic.span.file.startswith(case.name)


@pytest.mark.parametrize("case", CASES[::5], ids=lambda p: p.stem)
def test_cli_reports_without_traceback(
    case: Path, corpus_dsn: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`lynxc build --check --set ...` shows the same diagnostics, exit 1, no traceback."""
    monkeypatch.chdir(CORPUS)
    spec = case if case.is_file() else case / "server.yaml"
    given = ["--set", f"database_url={corpus_dsn}"] if "database_url:" in spec.read_text() else []
    with pytest.raises(SystemExit) as done:
        main(["build", "--check", *given, case.name])
    assert done.value.code == 1, case.name
    stderr = capsys.readouterr().err
    assert "Traceback" not in stderr, stderr
    assert case.name in stderr and ": error " in stderr
