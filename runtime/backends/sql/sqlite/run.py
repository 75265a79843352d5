"""run_sql for a server over SQLite: bind the arguments by name, run the tool's statement on a
pooled read-only connection in a worker thread, fetch at most max_rows + 1 rows (SQLite steps
row by row, so it stops there and `truncated` is exact), and convert each value after checking
it fits its column's declared type (types.py).

A statement past the `sql_timeout_seconds` setting, or whose call the client cancels, is
stopped inside SQLite by the progress handler (checked every few thousand virtual machine
steps), so it stops using the CPU rather than running on unobserved.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Mapping
from typing import Any

from lynxc.runtime.context import ToolContext
from lynxc.runtime.errors import ToolError

from ..timeouts import StatementTimeout
from .catalog import SqliteCatalog, SqliteTool
from .database import SqliteDatabase, sqlite_database_for
from .types import Misfit, row_converter

_PROGRESS_STEPS = 1_000
_SQLITE_INT_MIN, _SQLITE_INT_MAX = -(2**63), 2**63 - 1


async def fetch_sqlite_rows(
    catalog: SqliteCatalog,
    tool: SqliteTool,
    arguments: Mapping[str, Any],
    wanted: int,
    seconds: float,
    ctx: ToolContext,
) -> tuple[list[dict[str, Any]], int]:
    """(the first rows as JSON values, how many were fetched, at most `wanted`)."""
    database = await ctx.run_sync(sqlite_database_for, ctx.server, catalog, ctx.settings)
    problem = database.problems.get(tool.name)
    if problem is not None:
        raise ToolError(problem)
    values = _values(tool, arguments)
    return await ctx.run_sync(_fetch, database, tool, values, wanted, seconds, catalog, ctx)


def _values(tool: SqliteTool, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Each parameter by name, as a value sqlite3 binds (never spliced into the SQL)."""
    values: dict[str, Any] = {}
    for name in tool.params:
        value = arguments.get(name)
        if isinstance(value, bool):
            value = int(value)  # SQLite's booleans are 0 and 1
        elif value is not None and not isinstance(value, int | float | str):
            raise ToolError(f"{name}: a {type(value).__name__} cannot be bound to a SQLite parameter")
        elif isinstance(value, int) and not _SQLITE_INT_MIN <= value <= _SQLITE_INT_MAX:
            # sqlite3 would raise OverflowError while binding: a crash, not an answer
            raise ToolError(f"{name}: {value} is outside SQLite's integer range (64-bit); no row can hold it")
        values[name] = value
    return values


def _fetch(
    database: SqliteDatabase,
    tool: SqliteTool,
    values: dict[str, Any],
    wanted: int,
    seconds: float,
    catalog: SqliteCatalog,
    ctx: ToolContext,
) -> tuple[list[dict[str, Any]], int]:
    deadline = time.monotonic() + seconds
    stopped: list[str] = []

    def keep_going() -> int:
        if ctx.cancel.cancelled:
            stopped.append("cancelled")
            return 1
        if time.monotonic() > deadline:
            stopped.append("timeout")
            return 1
        return 0

    convert = row_converter([c.as_dict() for c in tool.columns])
    with database.connection() as pooled:
        pooled.access.allow_writes = catalog.writable and not tool.read_only
        pooled.connection.set_progress_handler(keep_going, _PROGRESS_STEPS)
        try:
            cursor = pooled.connection.execute(tool.wrapped, values)
            # A write runs to its end; the build describes no rows for it (RETURNING included).
            raw = cursor.fetchmany(wanted) if tool.read_only else (cursor.fetchall(), [])[1]
            cursor.close()
        except sqlite3.Error as err:
            if "timeout" in stopped:
                raise StatementTimeout(
                    f"the statement ran longer than {seconds:g} s (setting {catalog.timeout_setting!r}) "
                    "and was stopped; narrow it with more specific arguments"
                ) from None
            if stopped:
                raise ToolError("the call was cancelled; the statement was stopped") from None
            refused = pooled.access.refused
            raise ToolError(f"SQLite: {refused[0] + ' refused' if refused else err}") from None
        finally:
            pooled.access.allow_writes = False
            pooled.access.reset()
    keep = raw if wanted == 1 else raw[: wanted - 1]
    try:
        rows = [convert(row, number) for number, row in enumerate(keep, start=1)]
    except Misfit as err:
        raise ToolError(
            f"the database holds a value that does not fit its declared type: {err}; fix the data or the "
            "column's declared type (SQLite does not enforce it)"
        ) from None
    return rows, len(raw)
