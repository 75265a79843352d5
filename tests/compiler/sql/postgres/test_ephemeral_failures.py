"""The build's own PostgreSQL when things go wrong: an error inside schema.sql is a diagnostic at
its place in that file, and the server is stopped and removed all the same; so it is when the
build is interrupted (Ctrl-C) while the server runs."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from lynxc.compiler.lower.server import compile_spec
from lynxc.compiler.lower.sql.postgres import database, ephemeral
from tests.compiler.sql.postgres.test_ephemeral_build import SERVER

BROKEN_SCHEMA = """\
-- A film table whose second column names a type that does not exist.
CREATE TABLE film (
    film_id integer PRIMARY KEY,
    title txet NOT NULL
);
"""


class Folders:
    """The folders the build's PostgreSQL is given (other processes share the temp folder)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.made: list[Path] = []
        make = tempfile.mkdtemp

        def recording(*args: object, **kwargs: object) -> str:
            path = make(*args, **kwargs)  # type: ignore[call-overload]
            self.made.append(Path(path))
            return path

        monkeypatch.setattr(ephemeral.tempfile, "mkdtemp", recording)

    def left(self) -> list[Path]:
        return [path for path in self.made if path.exists()]


def spec(tmp_path: Path, schema: str) -> Path:
    (tmp_path / "server.yaml").write_text(SERVER)
    (tmp_path / "schema.sql").write_text(schema)
    return tmp_path / "server.yaml"


def test_an_error_in_the_schema_file_is_placed_in_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    folders = Folders(monkeypatch)
    result = compile_spec(Path(spec(tmp_path, BROKEN_SCHEMA).name))
    assert result.value is None
    (problem,) = [d for d in result.diagnostics if d.severity == "error"]
    assert problem.rule_id == "SQL_DATA_INVALID"
    assert (problem.span.file, problem.span.line, problem.span.col) == ("schema.sql", 4, 11)
    assert 'type "txet" does not exist' in problem.message
    assert folders.made and not folders.left()


def test_an_interrupted_build_stops_and_removes_its_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.compiler.sql.postgres.test_build import SCHEMA

    folders = Folders(monkeypatch)
    running: list[int] = []

    def interrupted(connection, where):  # type: ignore[no-untyped-def]
        running.append(connection.execute("SELECT pg_backend_pid()").fetchone()[0])
        raise KeyboardInterrupt

    monkeypatch.setattr(database, "load_schema", interrupted)
    with pytest.raises(KeyboardInterrupt):
        compile_spec(spec(tmp_path, SCHEMA))
    assert running, "the server was running when the build was interrupted"
    assert folders.made and not folders.left()
