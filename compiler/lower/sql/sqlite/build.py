"""The build's stand-in for a server's SQLite database: an in-memory SQLite holding the same tables,
from the spec's `schema` file (run there) or its `sample` database (copied in, read-only: the
file is never written, and the user's real database is never opened by the build).

All work runs under a budget of CPU time kept by SQLite's progress handler, so a hostile schema
or sample ends in SQL_TIMEOUT, never a hung build. The schema may only create and fill tables,
indexes, views and triggers: no ATTACH (it would read or write other files), no PRAGMA.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ....diagnostics import Diagnostic, Span
from ....limits import MAX_SPEC_BYTES, MAX_SQL_SAMPLE_BYTES
from ....rules import diagnostic
from ....spec.load import SpecSource
from ....spec.models import SqliteData
from ....suggest import did_you_mean
from ..catalog import read_beside, read_text_beside, spec_dir
from .scan import scan

# The schema file may do these (by SQLite's authorizer action codes); nothing else.
_SCHEMA_ACTIONS = frozenset(
    getattr(sqlite3, "SQLITE_" + name)
    for name in (
        "CREATE_TABLE",
        "CREATE_INDEX",
        "CREATE_VIEW",
        "CREATE_TRIGGER",
        "INSERT",
        "UPDATE",
        "DELETE",
        "READ",
        "SELECT",
        "FUNCTION",
        "RECURSIVE",
        "TRANSACTION",
        "SAVEPOINT",
        "ALTER_TABLE",
        "REINDEX",
        "ANALYZE",
    )
)
_PROGRESS_STEPS = 10_000
# Words that run outside the authorizer's view and could touch files.
_SCHEMA_REFUSED_WORDS = frozenset({"vacuum", "attach", "detach", "pragma"})


class BudgetSpent(Exception):
    """The build used its CPU budget on SQLite work."""


@dataclass
class SqliteBuild:
    """The build connection and what sql.json says about the database."""

    connection: sqlite3.Connection
    setting: str
    writable: bool
    shape: str
    spec_dir: Path
    files: list[tuple[str, str]] = field(default_factory=list)
    spent: list[bool] = field(default_factory=list)  # one item once the budget ran out

    def tables(self) -> list[str]:
        rows = self.connection.execute("SELECT name FROM sqlite_schema WHERE type IN ('table', 'view')")
        return [name for (name,) in rows if not name.startswith("sqlite_")]

    def columns(self, table: str) -> list[tuple[str, str, bool]]:
        """(name, declared type, NOT NULL) of each visible column of `table`."""
        rows = self.connection.execute(
            'SELECT name, type, "notnull", hidden FROM pragma_table_xinfo(?)', (table,)
        )
        return [
            (name, declared, bool(notnull)) for name, declared, notnull, hidden in rows if hidden in (0, 2, 3)
        ]


def budgeted(connection: sqlite3.Connection, cpu_seconds: float, spent: list[bool]) -> None:
    """Stop any statement on `connection` once this process used `cpu_seconds` more CPU time."""
    deadline = time.process_time() + cpu_seconds

    def over() -> int:
        if time.process_time() > deadline:
            spent.append(True)
            return 1
        return 0

    connection.set_progress_handler(over, _PROGRESS_STEPS)


def open_build_database(
    source: SpecSource, cpu_seconds: float
) -> tuple[SqliteBuild | None, list[Diagnostic]]:
    server = source.server.server
    doc = source.server_doc
    data = server.sqlite
    assert data is not None
    database = data.database
    path = ("server", "sqlite", "database")
    found = _check_setting(source, data)
    if (database.schema_ is None) == (database.sample is None):
        found.append(
            diagnostic(
                "SQL_DATA_INVALID",
                "the database needs its shape for the build: a `schema` file of CREATE statements "
                "or a `sample` SQLite database beside the spec (one of the two)",
                doc.span(path, key=True),
            )
        )
        return None, found
    shape = f"schema: {database.schema_}" if database.schema_ is not None else f"sample: {database.sample}"
    connection = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    build = SqliteBuild(connection, database.setting, data.allow_writes, shape, spec_dir(source))
    budgeted(connection, cpu_seconds, build.spent)
    if database.schema_ is not None:
        problem = _load_schema(build, database.schema_, doc.span((*path, "schema")))
    else:
        problem = _load_sample(build, database.sample or "", doc.span((*path, "sample")))
    if problem is not None:
        connection.close()
        return None, [*found, problem]
    return build, found


def _check_setting(source: SpecSource, data: SqliteData) -> list[Diagnostic]:
    settings = source.server.server.settings
    setting = data.database.setting
    node = settings.get(setting)
    if node is not None and node.type == "string":
        return []
    return [
        diagnostic(
            "SQL_SETTING_UNKNOWN",
            f"setting '{setting}' holds the database's path: declare it under server.settings as a string"
            + ("" if node is None else f" (it is declared as {node.type or 'untyped'})"),
            source.server_doc.span(("server", "sqlite", "database", "setting")),
            did_you_mean(setting, list(settings)) if node is None else None,
        )
    ]


def _load_schema(build: SqliteBuild, name: str, span: Span) -> Diagnostic | None:
    text, file_id, problem = read_text_beside(build.spec_dir, name, span, MAX_SPEC_BYTES, "schema")
    if problem is not None:
        return problem
    assert text is not None and file_id is not None
    build.files.append(file_id)
    where = Span(file_id[0], 1, 1)
    for word, offset in scan(text).words:
        if word.lower() in _SCHEMA_REFUSED_WORDS:
            return diagnostic(
                "SQL_DATA_INVALID",
                f"schema '{name}' runs {word.upper()}: a schema creates tables, indexes, views and triggers",
                _place(file_id[0], text, offset),
                "keep only CREATE statements (and INSERTs of fixed rows) in the schema file",
            )
    refused: list[str] = []

    def schema_only(action: int, arg1: Any, arg2: Any, db: Any, source: Any) -> int:
        if action in _SCHEMA_ACTIONS and db in ("main", None):
            return sqlite3.SQLITE_OK
        refused.append(str(arg1 or action))
        return sqlite3.SQLITE_DENY

    build.connection.set_authorizer(schema_only)
    try:
        build.connection.executescript(text)
    except sqlite3.Error as err:
        if build.spent:
            raise BudgetSpent from None
        return diagnostic(
            "SQL_DATA_INVALID",
            f"schema '{name}' does not run in SQLite: {err}",
            _error_place(file_id[0], text, str(err)) or where,
            "a schema holds CREATE statements, e.g. the output of `sqlite3 app.db .schema`",
        )
    finally:
        build.connection.set_authorizer(None)
    return None


def _load_sample(build: SqliteBuild, name: str, span: Span) -> Diagnostic | None:
    file, file_id, problem = read_beside(build.spec_dir, name, span, MAX_SQL_SAMPLE_BYTES, "sample")
    if problem is not None:
        return problem
    assert file is not None and file_id is not None
    build.files.append(file_id)
    try:
        sample = sqlite3.connect(f"{file.as_uri()}?mode=ro&immutable=1", uri=True)
        try:
            sample.execute("PRAGMA query_only = ON")
            sample.backup(build.connection)
            build.connection.execute("SELECT count(*) FROM sqlite_schema").fetchone()
        finally:
            sample.close()
    except sqlite3.Error as err:
        return diagnostic(
            "SQL_DATA_INVALID", f"sample '{name}' is not a SQLite database SQLite reads: {err}", span
        )
    return None


def _place(file: str, text: str, offset: int) -> Span:
    line = text.count("\n", 0, offset)
    return Span(file, line + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1)


def _error_place(file: str, text: str, message: str) -> Span | None:
    from .errors import error_offset

    offset = error_offset(message, text)
    return None if offset is None else _place(file, text, offset)
