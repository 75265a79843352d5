"""The build's stand-in for a server's DuckDB data: the same names and column types as the data
it will serve, in an in-memory DuckDB the statements are checked against.

The data itself is rarely beside the spec (paths come from settings, so one spec serves many
datasets), so each piece says what it looks like: a view by its `columns` or by a small `sample`
file in its format, a database by a `schema` of CREATE statements or a `sample` database. Files
named here lie beside the spec (never outside its folder), count as spec files (a changed sample
rebuilds the server) and are the only files the connection may read once set up: DuckDB's
external access is then switched off and its configuration locked.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lynxc.runtime.backends.sql.connection import first_paragraph
from lynxc.runtime.backends.sql.views import quoted, reader_call, sql_literal

from ...diagnostics import Diagnostic, Span
from ...ir import SqlViewIR, canonical_json
from ...limits import MAX_SPEC_BYTES, MAX_SQL_SAMPLE_BYTES
from ...rules import diagnostic
from ...spec.load import SpecSource, display_path
from ...spec.models import DuckDBData
from ...suggest import did_you_mean
from .positions import SqlText, char_offset

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
_NOT_NULL = re.compile(r"\bNOT\s+NULL\b", re.IGNORECASE)
# One thread is plenty for binding; no extension is installed or loaded behind the spec's back.
_REINTERRUPT_SECONDS = 0.02
_BUILD_CONFIG = {"threads": 1, "autoinstall_known_extensions": False, "autoload_known_extensions": False}


@dataclass
class BuildData:
    """An open build connection and what the generated sql.json says about the data."""

    connection: Any
    database_setting: str | None
    writable: bool
    views: tuple[SqlViewIR, ...]
    files: list[tuple[str, str]] = field(default_factory=list)  # (display path, sha256) read
    spec_dir: Path = Path(".")
    not_null: tuple[str, ...] = ()  # `table.column` the database's schema declares NOT NULL
    database_shape: str = ""  # `schema: PATH` or `sample: PATH`, as the spec writes it


def spec_dir(source: SpecSource) -> Path:
    return Path(source.server_doc.file).parent


def read_beside(
    base: Path, name: str, span: Span, limit: int, what: str
) -> tuple[Path | None, tuple[str, str] | None, Diagnostic | None]:
    """A file the spec names, refused unless it lies in the spec's folder and within `limit`."""
    candidate = Path(name)
    problem = None
    resolved = (base / candidate).resolve()
    if candidate.is_absolute() or not resolved.is_relative_to(base.resolve()):
        problem = f"{what} '{name}' must be a path relative to the spec's folder, inside it"
    elif not resolved.is_file():
        problem = f"{what} '{name}' is not a file beside the spec"
    elif resolved.stat().st_size > limit:
        problem = f"{what} '{name}' holds {resolved.stat().st_size} bytes, over the limit of {limit}"
    if problem is not None:
        return None, None, diagnostic("SQL_FILE_UNREADABLE", problem, span)
    digest = hashlib.sha256(resolved.read_bytes()).hexdigest()
    return resolved, (display_path(resolved), digest), None


def read_text_beside(
    base: Path, name: str, span: Span, limit: int, what: str
) -> tuple[str | None, tuple[str, str] | None, Diagnostic | None]:
    """read_beside, then the file's text: (text, (display path, sha256), None) or a diagnostic."""
    file, file_id, problem = read_beside(base, name, span, limit, what)
    if problem is not None:
        return None, None, problem
    assert file is not None and file_id is not None
    try:
        return file.read_text(encoding="utf-8"), file_id, None
    except UnicodeDecodeError as err:
        return (
            None,
            None,
            diagnostic("SQL_FILE_UNREADABLE", f"{what} '{name}' is not UTF-8 text ({err.reason})", span),
        )


def open_build_data(source: SpecSource, stack: _Cleanup) -> tuple[BuildData | None, list[Diagnostic]]:
    """Connect a DuckDB holding the declared data's shape; None when it cannot.

    The connection is sandboxed before it reads anything the spec wrote (a schema, a sample,
    a reader option): it may read the view samples and nothing else, autoloads no extension
    and changes no setting, so a hostile spec can at worst waste the time budget."""
    import duckdb

    server = source.server.server
    doc = source.server_doc
    data = server.duckdb
    assert data is not None
    base = spec_dir(source)
    build = BuildData(None, None, data.allow_writes, (), [], base)
    found = _check_settings(source, data)
    database = data.database
    database_path = ("server", "duckdb", "database")
    if database is not None:
        build.database_setting = database.setting
        build.database_shape = (
            f"schema: {database.schema_}" if database.schema_ is not None else f"sample: {database.sample}"
        )
        if (database.schema_ is None) == (database.sample is None):
            found.append(
                diagnostic(
                    "SQL_DATA_INVALID",
                    "the database needs its shape for the build: a `schema` file of CREATE statements "
                    "or a `sample` database beside the spec (one of the two)",
                    doc.span(database_path, key=True),
                )
            )
    view_samples: dict[str, Path] = {}
    for name, view in data.views.items():
        problem = _check_view(name, view, doc)
        if problem is None and view.sample is not None:
            file, file_id, problem = read_beside(
                base, view.sample, doc.span(("server", "duckdb", "views", name, "sample")),
                MAX_SQL_SAMPLE_BYTES, "sample",
            )  # fmt: skip
            if file is not None and file_id is not None:
                build.files.append(file_id)
                view_samples[name] = file
        if problem is not None:
            found.append(problem)
    if found:
        return None, found

    if database is not None and database.sample is not None:
        file, file_id, problem = read_beside(
            base, database.sample, doc.span((*database_path, "sample")), MAX_SQL_SAMPLE_BYTES, "sample"
        )
        if problem is not None:
            return None, [problem]
        assert file is not None and file_id is not None
        build.files.append(file_id)
        # A copy: the statements of a server that allows writes are checked by preparing
        # them, and nothing the build does may touch the sample itself.
        copy = stack.temp_dir() / file.name
        shutil.copyfile(file, copy)
        try:
            build.connection = stack.watch(duckdb.connect(str(copy), config=_BUILD_CONFIG))
        except duckdb.InterruptException:
            raise
        except duckdb.Error as err:
            return None, [
                diagnostic(
                    "SQL_DATA_INVALID",
                    f"sample '{database.sample}' is not a DuckDB database: {first_paragraph(err)}",
                    doc.span((*database_path, "sample")),
                )
            ]
    else:
        build.connection = stack.watch(duckdb.connect(":memory:", config=_BUILD_CONFIG))
    _sandbox(build.connection, list(view_samples.values()))
    if database is not None and database.schema_ is not None:
        problem = _run_schema(build, database.schema_, doc.span((*database_path, "schema")))
        if problem is not None:
            return None, [problem]
    tables = _database_tables(build.connection)

    views = []
    for name, view in data.views.items():
        view_path = ("server", "duckdb", "views", name)
        if name.lower() in tables:
            problem = diagnostic(
                "SQL_DATA_INVALID",
                f"view '{name}' has the name of a table of the database",
                doc.span(view_path, key=True),
                "rename the view: a statement naming it would read one or the other",
            )
        elif view.columns is not None:
            problem = _create_from_columns(build.connection, name, view.columns, doc, view_path)
        else:
            problem = _create_from_sample(build.connection, name, view, view_samples[name], doc, view_path)
        if problem is not None:
            found.append(problem)
            continue
        shape = "columns" if view.columns is not None else f"sample: {view.sample}"
        views.append(SqlViewIR(name, view.reader, view.setting, canonical_json(dict(view.options)), shape))
    build.views = tuple(views)
    build.not_null = _not_null_columns(build.connection) if database is not None else ()
    return (None, found) if found else (build, [])


def _check_view(name: str, view: Any, doc: Any) -> Diagnostic | None:
    """What is wrong with a view's declaration before anything is read."""
    view_path = ("server", "duckdb", "views", name)
    if not NAME.match(name):
        return diagnostic(
            "SQL_DATA_INVALID",
            f"view name '{name}' must be letters, digits and underscores, starting with a letter",
            doc.span(view_path, key=True),
        )
    for option in view.options:
        if not NAME.match(option):  # it is written into the SQL that reads the files
            return diagnostic(
                "SQL_DATA_INVALID",
                f"reader option '{option}' is not an option name",
                doc.span((*view_path, "options", option), key=True),
            )
    if (view.columns is None) == (view.sample is None):
        return diagnostic(
            "SQL_DATA_INVALID",
            f"view '{name}' needs its shape for the build: `columns` with their DuckDB types, "
            "or a `sample` file beside the spec (one of the two)",
            doc.span(view_path, key=True),
        )
    return None


def _database_tables(connection: Any) -> set[str]:
    rows = connection.execute(
        "SELECT lower(table_name) FROM duckdb_tables() WHERE NOT temporary "
        "UNION SELECT lower(view_name) FROM duckdb_views() WHERE NOT temporary AND NOT internal"
    ).fetchall()
    return {name for (name,) in rows}


def _not_null_columns(connection: Any) -> tuple[str, ...]:
    """`table.column` of every NOT NULL column of the database's tables: what the build may
    prove result columns from, and what the server checks the database it opens still says."""
    rows = connection.execute(
        "SELECT lower(table_name) || '.' || lower(column_name) FROM duckdb_columns() "
        "WHERE NOT is_nullable AND NOT internal AND database_name <> 'temp' ORDER BY 1"
    ).fetchall()
    return tuple(name for (name,) in rows)


def _check_settings(source: SpecSource, data: DuckDBData) -> list[Diagnostic]:
    settings = source.server.server.settings
    doc = source.server_doc
    named = [
        (("server", "duckdb", "views", name, "setting"), view.setting) for name, view in data.views.items()
    ]
    if data.database is not None:
        named.append((("server", "duckdb", "database", "setting"), data.database.setting))
    found = []
    for path, setting in named:
        node = settings.get(setting)
        if node is None or node.type != "string":
            found.append(
                diagnostic(
                    "SQL_SETTING_UNKNOWN",
                    f"setting '{setting}' holds the data's path: declare it under server.settings "
                    "as a string"
                    + ("" if node is None else f" (it is declared as {node.type or 'untyped'})"),
                    doc.span(path),
                    did_you_mean(setting, list(settings)) if node is None else None,
                )
            )
    return found


def _run_schema(build: BuildData, name: str, span: Span) -> Diagnostic | None:
    """Run the database's schema file: CREATE statements that describe tables, views, types and
    macros. Nothing that fills a table (CREATE TABLE ... AS) or holds credentials (a SECRET):
    the schema says what the data looks like; the data is the database file's."""
    import duckdb

    text, file_id, problem = read_text_beside(build.spec_dir, name, span, MAX_SPEC_BYTES, "schema")
    if problem is not None:
        return problem
    assert text is not None and file_id is not None
    build.files.append(file_id)
    where = SqlText(text, file_id[0], Span(file_id[0]), text, "file")
    connection = build.connection
    try:
        statements = connection.extract_statements(text)
    except duckdb.InterruptException:
        raise
    except duckdb.Error as err:
        return diagnostic(
            "SQL_DATA_INVALID", f"schema: {first_paragraph(err)}", where.span(parse_offset(connection, text))
        )
    offset = 0
    for statement in statements:
        query = statement.query.strip()
        found_at = text.find(query, offset) if query else -1
        offset = found_at if found_at >= 0 else offset
        refusal = _schema_refusal(statement)
        if refusal is not None:
            return diagnostic(
                "SQL_DATA_INVALID",
                f"a schema describes the data: {refusal}",
                where.span(offset),
                "declare each table column by column: CREATE TABLE t (a INTEGER NOT NULL, b VARCHAR)",
            )
        try:
            connection.execute(statement.query)
        except duckdb.InterruptException:
            raise
        except duckdb.Error as err:
            return diagnostic("SQL_DATA_INVALID", f"schema: {first_paragraph(err)}", where.span(offset))
    return None


def _schema_refusal(statement: Any) -> str | None:
    """Why a schema statement is refused, or None."""
    import duckdb

    if statement.type != duckdb.StatementType.CREATE:
        return f"it holds CREATE statements only, not {statement.type.name}"
    words = [
        statement.query[start : start + 16].split(None, 1)[0].upper()
        for start, kind in (
            (char_offset(statement.query, byte), kind) for byte, kind in duckdb.tokenize(statement.query)
        )
        if kind == duckdb.token_type.keyword
    ]
    kinds = words[1:4]
    if "SECRET" in kinds:
        return "no CREATE SECRET (credentials are never part of a spec)"
    if "TABLE" in kinds and ("SELECT" in words or "FROM" in words or "VALUES" in words):
        return "no CREATE TABLE ... AS (a schema never fills a table)"
    return None


def _create_from_columns(
    connection: Any, name: str, columns: dict[str, str], doc: Any, path: tuple
) -> Diagnostic | None:
    """A view declared by its columns is a temporary table at build time with the same names and
    types. Never NOT NULL: nothing checks the files a server will read, so a promise of no
    nulls could not be kept (a statement proves it with WHERE a IS NOT NULL, or COALESCE)."""
    import duckdb

    if not columns:
        return diagnostic(
            "SQL_DATA_INVALID", f"view '{name}' declares no columns", doc.span((*path, "columns"))
        )
    definitions = []
    for column, written in columns.items():
        if _NOT_NULL.search(written):
            return diagnostic(
                "SQL_DATA_INVALID",
                f"column '{column}' of view '{name}' is declared NOT NULL, which nothing can check "
                "in the files the server will read",
                doc.span((*path, "columns", column)),
                "drop NOT NULL; a statement proves it with WHERE col IS NOT NULL or COALESCE",
            )
        type_text = written.strip()
        try:
            canonical = str(connection.type(type_text))
        except duckdb.InterruptException:
            raise
        except duckdb.Error as err:
            return diagnostic(
                "SQL_DATA_INVALID",
                f"column '{column}' of view '{name}': '{type_text}' is no DuckDB type "
                f"({first_paragraph(err)})",
                doc.span((*path, "columns", column)),
                "write a type as DuckDB spells it: VARCHAR, BIGINT, DOUBLE, DATE, VARCHAR[], "
                "STRUCT(a INTEGER)",
            )
        definitions.append(f"{quoted(column)} {canonical}")
    try:
        connection.execute(f"CREATE TEMP TABLE {quoted(name)} ({', '.join(definitions)})")
    except duckdb.InterruptException:
        raise
    except duckdb.Error as err:
        return diagnostic(
            "SQL_DATA_INVALID", f"view '{name}': {first_paragraph(err)}", doc.span((*path, "columns"))
        )
    return None


def _create_from_sample(
    connection: Any, name: str, view: Any, file: Path, doc: Any, path: tuple
) -> Diagnostic | None:
    import duckdb

    try:
        call = reader_call(view.reader, str(file), view.options)
        connection.execute(f"CREATE TEMP VIEW {quoted(name)} AS SELECT * FROM {call}")
        connection.execute(f"SELECT * FROM {quoted(name)} LIMIT 0").fetchall()
    except duckdb.InterruptException:
        raise
    except duckdb.Error as err:
        return diagnostic(
            "SQL_DATA_INVALID",
            f"view '{name}': {view.reader} cannot read sample '{view.sample}': {first_paragraph(err)}",
            doc.span((*path, "sample")),
        )
    return None


def _sandbox(connection: Any, readable: list[Path]) -> None:
    """From here on the connection reads the view samples and nothing else, and nothing may
    change a setting: checking a spec never reaches outside the spec's folder."""
    allowed = "[" + ", ".join(sql_literal(str(p)) for p in readable) + "]"
    connection.execute(f"SET allowed_paths = {allowed}")
    connection.execute("SET enable_external_access = false")
    connection.execute("SET lock_configuration = true")


def parse_offset(connection: Any, text: str) -> int | None:
    """The character offset of a syntax error, as DuckDB's parser reports it."""
    import json

    import duckdb

    try:
        answer = json.loads(connection.execute("SELECT json_serialize_sql(?)", [text]).fetchone()[0])
    except duckdb.InterruptException:
        raise
    except (duckdb.Error, ValueError, TypeError):
        return None
    position = answer.get("position") if answer.get("error") else None
    return int(position) if isinstance(position, str | int) and str(position).isdigit() else None


class _Cleanup:
    """What checking SQL opened (connections, the copy of a sample), closed whatever happens."""

    def __init__(self) -> None:
        self._closers: list[Any] = []
        self._temp: Path | None = None
        self._connections: list[Any] = []
        self._expired = threading.Event()
        self._closed = threading.Event()

    def watch(self, connection: Any) -> Any:
        """Close `connection` at the end, and let the watchdog interrupt what it runs."""
        self._connections.append(connection)
        self._closers.append(connection.close)
        return connection

    def expire(self) -> None:
        """The time is up: interrupt every connection, again and again until the check ends (an
        interrupt that arrives between two statements is lost, and the next one must stop too)."""
        self._expired.set()
        while not self._closed.wait(_REINTERRUPT_SECONDS):
            for connection in list(self._connections):
                connection.interrupt()

    def temp_dir(self) -> Path:
        if self._temp is None:
            holder = tempfile.TemporaryDirectory(prefix="lynxc-sql-")
            self._closers.append(holder.cleanup)
            self._temp = Path(holder.name)
        return self._temp

    def close(self) -> None:
        self._closed.set()
        for fn in reversed(self._closers):
            with contextlib.suppress(Exception):  # closing what is left; nothing to report
                fn()
        self._closers.clear()


@contextmanager
def cleanup() -> Iterator[_Cleanup]:
    stack = _Cleanup()
    try:
        yield stack
    finally:
        stack.close()
