"""The database a build prepares Postgres statements against.

Either the one named on the command line (`lynxc build --set SETTING=postgresql://...`, a team's
dev database), or, when the spec declares `schema:`, a PostgreSQL the build starts for itself
(ephemeral.py), loaded with that file in one transaction and stopped at the end. Never a DSN
from the environment: a production DSN in a shell must not be used by a build by accident.

A connection that fails is one diagnostic line, its password redacted; an error in the schema
file is a diagnostic at its file:line:col, from Postgres's own position.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ....diagnostics import Diagnostic, Span
from ....limits import MAX_SPEC_BYTES, PG_CONNECT_TIMEOUT_SECONDS, PG_STATEMENT_TIMEOUT_SECONDS
from ....rules import diagnostic
from ....spec.load import SpecSource
from ..catalog import read_text_beside, spec_dir
from ..positions import SqlText

# psql meta-commands (`\restrict`, `\connect`) that pg_dump writes: blanked, places kept.
_META_COMMAND = re.compile(r"^\\.*$", re.MULTILINE)
_PASSWORD_IN_URL = re.compile(r"(://[^:/@\s]*:)[^@\s]*@")
_PASSWORD_KEYWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)
# Session settings of the build connection: every check ends, none waits on another's lock.
_SESSION = (
    "SET statement_timeout = {ms}",
    "SET lock_timeout = {ms}",
    "SET idle_in_transaction_session_timeout = {ms}",
)


@dataclass
class BuildDatabase:
    connection: Any  # a psycopg Connection (autocommit) to the build database
    shape: str  # what sql.json records: `schema: schema.sql` or `database given at build`
    files: list[tuple[str, str]] = field(default_factory=list)  # (display path, sha256) it read
    spec_dir: Path = Path()


def redact(text: str, dsn: str = "") -> str:
    """`text` with every password it holds replaced by ***: in URLs, keyword DSNs, and the
    given DSN's own password wherever the text repeats it."""
    text = _PASSWORD_IN_URL.sub(r"\1***@", text)
    text = _PASSWORD_KEYWORD.sub(r"\1***", text)
    password = _dsn_password(dsn)
    if password:
        text = text.replace(password, "***")
    return text


def _dsn_password(dsn: str) -> str | None:
    try:
        from psycopg.conninfo import conninfo_to_dict

        value = conninfo_to_dict(dsn).get("password")
    except Exception:  # a malformed DSN is reported by the connection attempt itself
        return None
    return str(value) if value else None


@contextlib.contextmanager
def build_database(
    source: SpecSource, build_settings: Mapping[str, str], timeout_seconds: float
) -> Iterator[tuple[BuildDatabase | None, list[Diagnostic]]]:
    """The build database, connected; closed (and an ephemeral server stopped and removed) at the
    end of the block, whatever happens in it."""
    data = source.server.server.postgres
    assert data is not None
    doc = source.server_doc
    setting = data.dsn.setting
    dsn = build_settings.get(setting)
    base = spec_dir(source)
    if dsn is not None:
        connection, problem = _connect(dsn, doc.span(("server", "postgres", "dsn", "setting")), setting)
        if connection is None:
            yield None, [problem] if problem else []
            return
        with connection:
            _configure(connection, timeout_seconds)
            yield BuildDatabase(connection, "database given at build", [], base), []
        return
    if data.schema_ is None:
        yield (
            None,
            [
                diagnostic(
                    "SQL_DATA_MISSING",
                    f"the build prepares every statement against PostgreSQL, and has none: setting "
                    f"'{setting}' was not given at build and the spec declares no schema",
                    doc.span(("server", "postgres"), key=True),
                    f"run `lynxc build --set {setting}=postgresql://...` against a database with the "
                    "tables, or declare postgres: {schema: schema.sql} (CREATE statements, e.g. "
                    "pg_dump --schema-only) for a database the build starts itself",
                )
            ],
        )
        return
    span = doc.span(("server", "postgres", "schema"))
    text, file_id, problem = read_text_beside(base, data.schema_, span, MAX_SPEC_BYTES, "schema")
    if problem is not None:
        yield None, [problem]
        return
    assert text is not None and file_id is not None
    from .ephemeral import EphemeralError, running_postgres

    where = SqlText(text, file_id[0], Span(file_id[0]), text, "file")
    try:
        with running_postgres() as server, server.connect(autocommit=True) as connection:
            _configure(connection, timeout_seconds)
            problem = load_schema(connection, where)
            if problem is not None:
                yield None, [problem]
                return
            yield BuildDatabase(connection, f"schema: {data.schema_}", [file_id], base), []
    except EphemeralError as err:
        yield (
            None,
            [
                diagnostic(
                    "SQL_DATA_INVALID",
                    f"the build's own PostgreSQL did not start: {_one_line(str(err))}",
                    doc.span(("server", "postgres"), key=True),
                    "or give a database at build: lynxc build --set " + setting + "=postgresql://...",
                )
            ],
        )


def load_schema(connection: Any, where: SqlText) -> Diagnostic | None:
    """Run the schema file in one transaction; an error is a diagnostic at its place in the file.
    The session's settings the file changes (pg_dump empties search_path) are reset after."""
    import psycopg

    text = _META_COMMAND.sub(lambda m: " " * len(m.group(0)), where.text)
    try:
        with connection.transaction():
            connection.execute(text.encode("utf-8"), prepare=False)
    except psycopg.errors.QueryCanceled:
        return diagnostic("SQL_TIMEOUT", "loading the schema took too long and was stopped", where.start)
    except psycopg.Error as err:
        position = err.diag.statement_position
        offset = int(position) - 1 if position else None
        return diagnostic(
            "SQL_DATA_INVALID",
            f"the schema does not load in PostgreSQL: {_one_line(err.diag.message_primary or str(err))}",
            where.span(offset),
            err.diag.message_hint,
        )
    finally:
        with contextlib.suppress(psycopg.Error):
            connection.execute("RESET ALL")
    return None


def _connect(dsn: str, span: Span, setting: str) -> tuple[Any, Diagnostic | None]:
    import psycopg

    try:
        connection = psycopg.connect(dsn, autocommit=True, connect_timeout=PG_CONNECT_TIMEOUT_SECONDS)
    except (psycopg.Error, ValueError) as err:
        return None, diagnostic(
            "SQL_DATABASE_UNREACHABLE",
            f"cannot connect to the database of setting '{setting}': {redact(_one_line(str(err)), dsn)}",
            span,
            "check the value given with --set (host, port, user, password, database name)",
        )
    return connection, None


def _configure(connection: Any, timeout_seconds: float) -> None:
    ms = int(min(timeout_seconds, PG_STATEMENT_TIMEOUT_SECONDS) * 1000)
    for statement in _SESSION:
        connection.execute(statement.format(ms=ms))


def _one_line(text: str) -> str:
    return "; ".join(line.strip() for line in text.strip().splitlines() if line.strip())
