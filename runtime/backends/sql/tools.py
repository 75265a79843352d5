"""run_sql: the backend of every SQL tool (`backend: {sql: ...}` in a spec; IR name `sql.query`).

A call finds its tool in the server's sql.json (`ctx.server.sql_catalog()`), binds the caller's
arguments as DuckDB named parameters, each as a value of the parameter's declared type (never
as SQL text), and runs the tool's capped statement on a cursor of the server's database
(connection.py) in a worker thread. It answers

- result many: {"rows": [...], "row_count": n, "truncated": more rows matched than were sent};
- result one: the first row itself; no row is an error naming the arguments.

A statement that runs longer than the `sql_timeout_seconds` setting, or whose call the client
cancels, is interrupted in DuckDB (not merely abandoned), so it stops using the CPU. DuckDB's
errors answer the call with DuckDB's message; the server and its other calls carry on.

This module stays light to import (`lynxc build` reads the declaration): DuckDB loads inside
the calls.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import anyio

from lynxc.runtime.arguments import published_arguments
from lynxc.runtime.backend import backend
from lynxc.runtime.backends.declared import declared_tool
from lynxc.runtime.context import ToolContext
from lynxc.runtime.errors import ToolError
from lynxc.runtime.wire_values import fit_list_to_json_cap

from .catalog import (
    DEFAULT_TIMEOUT_SECONDS,
    TIMEOUT_SETTING,
    CatalogError,
    SqlCatalog,
    SqlTool,
)
from .connection import Call, Database, database_for, first_paragraph, param_key
from .timeouts import StatementTimeout

# After a timeout, how long the call waits for DuckDB to acknowledge the interrupt before
# answering (it answers either way; the interrupts go on in the background).
STOP_WAIT_SECONDS = 2.0
SHOWN_VALUE_CHARS = 60


@backend(
    params=None,
    caps={"max_rows", "max_output_json_bytes"},
    required_caps=set(),
    settings={TIMEOUT_SETTING},  # and duckdb_threads, implied for DuckDB servers only
)
async def run_sql(params: Any, ctx: ToolContext) -> dict[str, Any]:
    catalog, tool = _tool(ctx)
    arguments = published_arguments(params)
    # The statement already stops at max_rows + 1; a smaller cap (never larger) cuts further.
    limit = max(1, min(int(ctx.caps.get("max_rows", tool.max_rows)), tool.max_rows))
    wanted = 1 if tool.result == "one" else limit + 1
    seconds = _timeout(catalog, ctx.settings)
    rows, fetched = await _fetch_logged(catalog, tool, arguments, wanted, seconds, ctx)
    if tool.result == "one":
        if not rows:
            raise ToolError(f"no row matched {describe_arguments(tool, arguments)}")
        return rows[0]
    result = {"rows": rows[:limit], "row_count": len(rows), "truncated": fetched > limit}
    cap = ctx.caps.get("max_output_json_bytes")
    if cap is not None:
        # Rows that would not fit the host's JSON cap are left out (and flagged), not the answer.
        fit_list_to_json_cap(result, "rows", "truncated", int(cap))
    result["row_count"] = len(result["rows"])
    return result


async def _fetch_logged(
    catalog: SqlCatalog,
    tool: SqlTool,
    arguments: dict[str, Any],
    wanted: int,
    seconds: float,
    ctx: ToolContext,
) -> tuple[list[dict[str, Any]], int]:
    """The rows, with the client's log told what ran: the statement, its rows and its duration
    at debug, a timeout at warning. Argument values are not logged (they are the caller's own,
    and may be personal); the statement is the spec's text, which holds no secret."""
    started = time.perf_counter()
    try:
        if catalog.engine == "postgres":
            from .postgres.run import fetch_pg_rows

            rows, fetched = await fetch_pg_rows(catalog, tool, arguments, wanted, seconds, ctx)  # type: ignore[arg-type]
        elif catalog.engine == "sqlite":
            from .sqlite.run import fetch_sqlite_rows

            rows, fetched = await fetch_sqlite_rows(catalog, tool, arguments, wanted, seconds, ctx)  # type: ignore[arg-type]
        else:
            rows, fetched = await _fetch_duckdb(catalog, tool, arguments, wanted, seconds, ctx)
    except StatementTimeout:
        await ctx.log(
            "warning",
            f"SQL statement of {tool.name!r} stopped at the {seconds:g} s timeout",
            engine=catalog.engine,
            statement=tool.statement,
            timeout_setting=catalog.timeout_setting,
        )
        raise
    await ctx.log(
        "debug",
        f"SQL statement of {tool.name!r} ran",
        engine=catalog.engine,
        statement=tool.statement,
        rows=len(rows),
        duration_ms=round((time.perf_counter() - started) * 1000, 1),
    )
    return rows, fetched


async def _fetch_duckdb(
    catalog: SqlCatalog,
    tool: SqlTool,
    arguments: dict[str, Any],
    wanted: int,
    seconds: float,
    ctx: ToolContext,
) -> tuple[list[dict[str, Any]], int]:
    database = await ctx.run_sync(database_for, ctx.server, catalog, ctx.settings)
    problem = database.problems.get(tool.name)
    if problem is not None:
        raise ToolError(problem)
    values = bind_values(database, tool, arguments)
    statement, convert = database.statements[tool.name], database.converters[tool.name]
    work = partial(fetch_rows, statement, values, wanted, convert)
    return await run_interruptible(Call(database), work, seconds, catalog, ctx)


def _tool(ctx: ToolContext) -> tuple[SqlCatalog, SqlTool]:
    return declared_tool(ctx, lambda server: server.sql_catalog(), CatalogError, "a SQL", "sql.json")


def _timeout(catalog: SqlCatalog, settings: Mapping[str, Any]) -> float:
    value = settings.get(catalog.timeout_setting, DEFAULT_TIMEOUT_SECONDS)
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ToolError(f"setting {catalog.timeout_setting!r}: {value!r} is not a positive number of seconds")
    return float(value)


# --- binding --------------------------------------------------------------------------------------


def bind_values(database: Database, tool: SqlTool, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Each parameter's value as a DuckDB value of its declared type: DuckDB types a bare
    Python value by itself (3 -> INTEGER, so `$area * 2` would not be the DOUBLE the build
    saw), so it is converted here. None stays NULL.

    The declared types are those the compiler derives from JSON Schema (VARCHAR, BIGINT,
    DOUBLE, BOOLEAN, DATE, TIMESTAMPTZ, TIME, UUID and lists of them), and the arguments are
    JSON values the inputSchema already checked: each is a Python value DuckDB converts to
    its type directly (a date's text to DATE, an int to DOUBLE)."""
    import duckdb

    values: dict[str, Any] = {}
    for param in tool.params:
        value = arguments.get(param.name)
        if value is None:
            values[param.name] = None  # DuckDB's client cannot bind a typed NULL
            continue
        sql_type = database.param_types[param_key(tool.name, param.name)]
        try:
            values[param.name] = duckdb.Value(value, sql_type)
        except (duckdb.Error, TypeError, ValueError, OverflowError) as err:
            raise ToolError(
                f"{param.name}: {_shown(value)} cannot be read as {sql_type}: {first_paragraph(err)}"
            ) from None
    return values


def describe_arguments(tool: SqlTool, arguments: Mapping[str, Any]) -> str:
    """`code="zz", year=2020`: the arguments a `one` tool matched nothing with."""
    names = [p if isinstance(p, str) else p.name for p in tool.params]  # SQLite's are names
    shown = [f"{name}={_shown(arguments.get(name))}" for name in names]
    return ", ".join(shown) if shown else "(the statement takes no arguments)"


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= SHOWN_VALUE_CHARS else text[: SHOWN_VALUE_CHARS - 1] + "…"


# --- running --------------------------------------------------------------------------------------


def fetch_rows(
    statement: str,
    values: dict[str, Any],
    wanted: int,
    convert: Callable[[tuple], dict[str, Any]],
    cursor: Any,
) -> tuple[list[dict[str, Any]], int]:
    """(the first rows converted to JSON values, how many were fetched): at most `wanted`
    rows are fetched, and the last of max_rows + 1 only counted (it tells `truncated`)."""
    import duckdb

    try:
        raw = cursor.execute(statement, values or None).fetchmany(wanted)
    except duckdb.Error as err:
        raise ToolError(f"DuckDB: {first_paragraph(err)}") from None
    keep = raw if wanted == 1 else raw[: wanted - 1]
    return [convert(row) for row in keep], len(raw)


async def run_interruptible(
    call: Call, work: Callable[[Any], Any], seconds: float, catalog: SqlCatalog, ctx: ToolContext
) -> Any:
    """work(cursor) in a worker thread; past `seconds`, or when the call is cancelled, DuckDB
    is interrupted so the statement stops rather than running on unobserved."""
    try:
        with anyio.fail_after(seconds):
            return await ctx.run_sync(call.run, work)
    except TimeoutError:
        call.stop()
        with anyio.move_on_after(STOP_WAIT_SECONDS):
            while not call.finished.is_set():
                await anyio.sleep(0.01)
        raise StatementTimeout(
            f"the statement ran longer than {seconds:g} s (setting {catalog.timeout_setting!r}) and was "
            "stopped; narrow it with more specific arguments"
        ) from None
    except anyio.get_cancelled_exc_class():
        call.stop()
        raise
