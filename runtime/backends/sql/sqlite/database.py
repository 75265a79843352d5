"""The SQLite database a server's SQL tools read: opened read-only, checked once, pooled.

Opening (per server folder, sql.json and database path; a failed open keeps nothing, so the
next call tries again and the tools recover once the file is there):
1. the path is the setting's value (`~` expanded, made absolute); a missing or unreadable file,
   or one that is not a SQLite database, is a tool error naming the setting;
2. `file:PATH?mode=ro` (read-write only when the server allows writes), `PRAGMA
   query_only = ON` unless it does, and the authorizer of access.py: the same statement
   analysis the build used, so a statement can only read;
3. the drift check, once: the tables and columns each tool's statement reads (recorded by the
   build with their declared types and NOT NULL) are compared with the database's, and each
   statement is prepared. A tool whose data changed answers every call with an error naming
   the table and column and what changed; the other tools keep working.

Connections: sqlite3 connections are cheap and not for concurrent use, so each call takes an
idle connection from a small pool (or opens one) and gives it back after; it is used by one
worker thread at a time (`check_same_thread=False` allows the hand-over between threads).
"""

from __future__ import annotations

import os
import queue
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lynxc.runtime.errors import ToolError

from .access import Access, install
from .catalog import SqliteCatalog, SqliteTool

POOL_SIZE = 8  # idle connections kept; more calls at once open more and close them after


@dataclass
class Pooled:
    connection: sqlite3.Connection
    access: Access


@dataclass
class SqliteDatabase:
    catalog: SqliteCatalog
    path: str
    setting: str
    problems: dict[str, str] = field(default_factory=dict)  # tool -> why it cannot run
    idle: queue.SimpleQueue[Pooled] = field(default_factory=queue.SimpleQueue)

    @contextmanager
    def connection(self) -> Iterator[Pooled]:
        try:
            pooled = self.idle.get_nowait()
        except queue.Empty:
            pooled = self._open()
        try:
            yield pooled
        finally:
            pooled.connection.set_progress_handler(None, 0)
            if self.idle.qsize() < POOL_SIZE:
                self.idle.put(pooled)
            else:
                pooled.connection.close()

    def _open(self) -> Pooled:
        writable = self.catalog.writable
        uri = f"{Path(self.path).as_uri()}?mode={'rw' if writable else 'ro'}"
        try:
            connection = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
        except sqlite3.Error as err:
            raise ToolError(
                f"setting {self.setting!r}: the database {self.path} cannot be opened: {err}"
            ) from None
        try:
            if not writable:
                connection.execute("PRAGMA query_only = ON")
            connection.execute("SELECT count(*) FROM sqlite_schema").fetchone()
        except sqlite3.Error as err:
            connection.close()
            raise ToolError(
                f"setting {self.setting!r}: {self.path} is not a SQLite database this server reads: {err}"
            ) from None
        return Pooled(connection, install(connection))

    def close(self) -> None:
        while True:
            try:
                self.idle.get_nowait().connection.close()
            except queue.Empty:
                return


_databases: dict[tuple[str, int, str], SqliteDatabase] = {}
_lock = threading.Lock()


def sqlite_database_for(server: Any, catalog: SqliteCatalog, settings: Mapping[str, Any]) -> SqliteDatabase:
    """The open database of `server` for these settings (blocking: run it in a worker thread)."""
    path = _path(catalog, settings)
    key = (str(getattr(server, "folder", id(server))), id(catalog), path)
    with _lock:
        database = _databases.get(key)
        if database is None:
            database = SqliteDatabase(catalog, path, catalog.database_setting)
            with database.connection() as pooled:
                database.problems = drift(pooled, catalog)
            _databases[key] = database
    return database


def close_sqlite_databases() -> None:
    with _lock:
        for database in _databases.values():
            database.close()
        _databases.clear()


def _path(catalog: SqliteCatalog, settings: Mapping[str, Any]) -> str:
    setting = catalog.database_setting
    value = settings.get(setting)
    if not isinstance(value, str) or not value:
        raise ToolError(f"setting {setting!r} names no database file (give it with --set {setting}=PATH)")
    path = os.path.abspath(os.path.expanduser(value))
    if not os.path.isfile(path):
        raise ToolError(f"setting {setting!r}: {path} is not a file")
    if not os.access(path, os.R_OK):
        raise ToolError(f"setting {setting!r}: {path} cannot be read")
    return path


def drift(pooled: Pooled, catalog: SqliteCatalog) -> dict[str, str]:
    """tool -> what changed since the build, for each tool whose data changed."""
    connection = pooled.connection
    connection.set_authorizer(None)
    found: dict[str, str] = {}
    try:
        columns: dict[str, dict[str, str]] = {}
        for tool in catalog.tools.values():
            problem = _changed(connection, tool, columns)
            if problem is None:
                problem = _unprepared(connection, tool)
            if problem is not None:
                found[tool.name] = (
                    f"tool {tool.name!r} cannot run on this database: {problem} since the build "
                    f"({catalog.shape or 'its schema'}); rebuild the server against the database, or "
                    "serve the database it was built for"
                )
    finally:
        connection.set_authorizer(pooled.access)
    return found


def _changed(
    connection: sqlite3.Connection, tool: SqliteTool, cache: dict[str, dict[str, str]]
) -> str | None:
    for table, wanted in tool.depends.items():
        if table not in cache:
            rows = connection.execute(
                'SELECT name, type, "notnull" FROM pragma_table_xinfo(?) WHERE hidden IN (0, 2, 3)', (table,)
            ).fetchall()
            cache[table] = {
                name: declared + (" NOT NULL" if notnull else "") for name, declared, notnull in rows
            }
        have = cache[table]
        if not have:
            return f"table {table!r} is gone"
        for column, declared in wanted.items():
            if column not in have:
                return f"column {table}.{column} is gone"
            if have[column] != declared:
                return f"column {table}.{column} changed from {declared!r} to {have[column]!r}"
    return None


def _unprepared(connection: sqlite3.Connection, tool: SqliteTool) -> str | None:
    access = Access(allow_writes=not tool.read_only)
    connection.set_authorizer(access)
    try:
        connection.execute("EXPLAIN " + tool.wrapped, {name: None for name in tool.params}).fetchall()
    except sqlite3.Error as err:
        if access.refused:
            return f"its statement is not read-only: SQLite's authorizer refused {access.refused[0]}"
        return f"its statement no longer prepares ({err})"
    finally:
        connection.set_authorizer(None)
    return None
