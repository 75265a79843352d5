"""Completion values from a collection's records (issue 31): the distinct values of one
top-level field that start with what the user typed, among the records the caller may see
(a collection's `bind` holds here as in every records tool)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lynxc.runtime.context import ToolContext

from .binding import visibility
from .filters import DUCKDB, condition_sql, stored_paths, where_sql
from .tools import _current, _open, _store, server_resources


@dataclass(frozen=True)
class Prepared:
    """A collection's frame and the caller's visibility in it: what a completion queries."""

    frame: Any
    column: str
    where: str | None


async def prepare(ctx: ToolContext, collection: str, field: str) -> Prepared | None:
    """Open the collection's current table and its DuckDB frame (cached across requests: the
    first one reads the table); None when the collection holds no records yet."""
    from .frame import frame_of

    resource = server_resources(ctx).by_name(collection)
    if resource is None:
        return None
    path = stored_paths(resource).get(field)
    if path is None:
        return None
    store = _store(ctx)
    state = _current(store).resources.get(resource.name)
    if state is None:
        return None
    seen = visibility(resource, ctx.caller)  # ToolError for a caller who cannot be bound
    table = await _open(store, state.table, state.version, False)
    frame = await frame_of(ctx, str(store.data_dir), table, state.table, state.version, resource)
    if not frame.holds([path.column, *(c.path.column for c in seen.conditions)]):
        return None
    where = where_sql([], [condition_sql(c, DUCKDB) for c in seen.conditions], DUCKDB)
    return Prepared(frame, path.column, where)


async def field_values(ctx: ToolContext, prepared: Prepared, prefix: str, limit: int) -> list[str]:
    """At most `limit` distinct values of the prepared field, as text, in the field's order,
    starting with `prefix` (case-insensitive), among the records the caller may see."""
    from .frame import Selection, run

    pattern = _like_literal(prefix.lower())
    column = f'"{prepared.column}"'
    statement = (
        f"SELECT CAST(raw AS VARCHAR) FROM (SELECT DISTINCT {column} AS raw FROM records "
        f"WHERE {column} IS NOT NULL AND lower(CAST({column} AS VARCHAR)) LIKE {pattern} ESCAPE '\\') "
        f"ORDER BY raw LIMIT {int(limit)}"
    )
    rows: Any = await ctx.run_sync(run, Selection(prepared.frame, prepared.where), [statement])
    return [row[0] for row in rows[0]]


def _like_literal(prefix: str) -> str:
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_").replace("'", "''")
    return f"'{escaped}%'"
