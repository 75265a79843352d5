"""One call of a SQL tool over Postgres.

On a pooled connection (pool.py), in one round trip (psycopg's pipeline mode): `BEGIN READ
ONLY` (READ WRITE only for a tool the build marked writing, on a server that allows writes),
`SET LOCAL statement_timeout` from the timeout setting, the tool's `wrapped` statement (already
capped at max_rows + 1 rows, so Postgres stops early and `truncated` is exact), prepared once
per connection (psycopg's prepared-statement cache) with every parameter bound as text of
unknown type, and `COMMIT`; the rows are read in Postgres's own text format and converted by
the types module.

A cancelled call (the client's notifications/cancelled) cancels the statement on the server:
psycopg sends a cancel request when its wait is interrupted, and the transaction is rolled back
before the connection goes back to the pool. The server-side statement_timeout is the timeout;
a client-side deadline a little later covers a server that does not answer at all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import anyio

from lynxc.runtime.context import ToolContext
from lynxc.runtime.errors import ToolError

from .arguments import bound_values
from .catalog import PgCatalog, PgTool
from .failures import statement_error, unreachable
from .pool import pool_for

CLIENT_GRACE_SECONDS = 5.0  # past the server's statement_timeout, before giving up on it
ROLLBACK_SECONDS = 5.0


async def fetch_pg_rows(
    catalog: PgCatalog,
    tool: PgTool,
    arguments: Mapping[str, Any],
    wanted: int,
    seconds: float,
    ctx: ToolContext,
) -> tuple[list[dict[str, Any]], int]:
    """(the first rows as JSON values, how many were fetched, at most `wanted`)."""
    import psycopg

    values = bound_values(tool.params, arguments)
    server_pool = await pool_for(ctx.server, catalog, ctx.settings)
    try:
        with anyio.fail_after(seconds + CLIENT_GRACE_SECONDS):
            async with server_pool.connection(seconds) as conn:
                problem = (await server_pool.drift_problems(conn)).get(tool.name)
                if problem is not None:
                    raise ToolError(problem)
                raw = await _run(conn, tool, values, wanted, seconds, catalog)
    except TimeoutError:
        raise ToolError(
            f"the database did not answer within {seconds + CLIENT_GRACE_SECONDS:g} s "
            f"(setting {catalog.timeout_setting!r} plus {CLIENT_GRACE_SECONDS:g} s)"
        ) from None
    except psycopg.OperationalError as err:  # the connection broke mid-call
        raise unreachable(err) from None
    convert = row_converter(tool)
    keep = raw if wanted == 1 else raw[: wanted - 1]
    return [convert(row) for row in keep], len(raw)


async def _run(
    conn: Any, tool: PgTool, values: list[str | None], wanted: int, seconds: float, catalog: PgCatalog
) -> list[tuple[str | None, ...]]:
    import psycopg
    from psycopg import AsyncRawCursor

    mode = "READ ONLY" if tool.read_only else "READ WRITE"
    milliseconds = max(1, round(seconds * 1000))
    try:
        # One round trip for the four statements: pipeline mode sends them together and reads
        # their results at the one Sync (a failed statement aborts those after it, so COMMIT
        # does not run and the except below rolls back).
        cursor = AsyncRawCursor(conn)
        async with conn.pipeline() as pipeline:
            await conn.execute(f"BEGIN {mode}")
            await conn.execute(f"SET LOCAL statement_timeout = {milliseconds}")
            await cursor.execute(tool.wrapped, values, prepare=True)
            await conn.execute("COMMIT")
            await pipeline.sync()
        return _text_rows(cursor.pgresult, wanted)
    except psycopg.Error as err:
        if conn.broken or conn.closed:
            raise unreachable(err) from None
        await _rollback(conn)
        raise statement_error(err, tool, catalog.timeout_setting, seconds) from None
    except BaseException:
        await _rollback(conn)
        raise


def _text_rows(result: Any, wanted: int) -> list[tuple[str | None, ...]]:
    """The first `wanted` rows of a text-format result, each value as Postgres wrote it."""
    if result is None or result.nfields == 0:
        return []
    count = min(result.ntuples, wanted)
    fields = range(result.nfields)
    rows = []
    for row in range(count):
        rows.append(tuple(_decoded(result.get_value(row, column)) for column in fields))
    return rows


def _decoded(value: bytes | None) -> str | None:
    return None if value is None else bytes(value).decode("utf-8")


async def _rollback(conn: Any) -> None:
    """Leave the connection idle for the pool, shielded from the call's own cancellation; a
    connection that cannot roll back is closed (the pool drops it)."""
    from psycopg import pq

    with anyio.CancelScope(shield=True), anyio.move_on_after(ROLLBACK_SECONDS) as scope:
        try:
            if conn.info.transaction_status != pq.TransactionStatus.IDLE:
                await conn.execute("ROLLBACK")
        except Exception:
            await conn.close()
    if scope.cancelled_caught:
        await conn.close()


# Per tool (by identity: a reloaded catalog brings new tool objects), its row converter, built on
# the tool's first call rather than on every call.
_converters: dict[int, tuple[PgTool, Callable[[tuple], dict[str, Any]]]] = {}


def row_converter(tool: PgTool) -> Callable[[tuple], dict[str, Any]]:
    """The types module's converter of a row of Postgres text, by the columns' type trees."""
    found = _converters.get(id(tool))
    if found is not None and found[0] is tool:
        return found[1]
    from .types import pg_row_converter

    convert = pg_row_converter([column.as_dict() for column in tool.columns])
    _converters[id(tool)] = (tool, convert)
    return convert
