"""Completion values from a collection's records (issue 31): the distinct values of one
top-level field that start with what the user typed, among the records the caller may see
(a collection's `bind` holds here as in every records tool)."""

from __future__ import annotations

from typing import Any

from lynxc.runtime.context import ToolContext

from .binding import visibility
from .filters import DUCKDB, condition_sql, stored_paths, where_sql
from .tools import _current, _open, _store, server_resources


async def field_values(ctx: ToolContext, collection: str, field: str, prefix: str, limit: int) -> list[str]:
    """At most `limit` distinct values of `field`, as text, sorted, starting with `prefix`
    (case-insensitive); none when the collection holds no records yet."""
    from .frame import Selection, frame_of, run

    resource = server_resources(ctx).by_name(collection)
    if resource is None:
        return []
    path = stored_paths(resource).get(field)
    if path is None:
        return []
    store = _store(ctx)
    state = _current(store).resources.get(resource.name)
    if state is None:
        return []
    seen = visibility(resource, ctx.caller)  # ToolError for a caller who cannot be bound
    table = await _open(store, state.table, state.version, False)
    frame = await frame_of(ctx, str(store.data_dir), table, state.table, state.version, resource)
    if not frame.holds([path.column, *(c.path.column for c in seen.conditions)]):
        return []
    where = where_sql([], [condition_sql(c, DUCKDB) for c in seen.conditions], DUCKDB)
    pattern = _like_literal(prefix.lower())
    column = f'"{path.column}"'
    statement = (
        f"SELECT CAST(raw AS VARCHAR) FROM (SELECT DISTINCT {column} AS raw FROM records "
        f"WHERE {column} IS NOT NULL AND lower(CAST({column} AS VARCHAR)) LIKE {pattern} ESCAPE '\\') "
        f"ORDER BY raw LIMIT {int(limit)}"
    )
    rows: Any = await ctx.run_sync(run, Selection(frame, where), [statement])
    return [row[0] for row in rows[0]]


def _like_literal(prefix: str) -> str:
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_").replace("'", "''")
    return f"'{escaped}%'"
