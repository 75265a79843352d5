"""query_records and get_record over one resource's table: filter, order, page, fetch.

query_records selects and orders in DuckDB over the serving process's frame of the table
(frame.py: the filter and sort columns of one table version, held in memory), cuts the page
(ORDER BY the sort keys, then the record key, so the order is total and pages never overlap),
then fetches the page's rows by key from Lance. Missing values sort last in either direction.

A sort on one locale of a localized field (`name.de`) orders by that locale's text under
DuckDB's NOCASE.NOACCENT collation (case and accents ignored: "a" < "Á" < "b"), then by the
exact text, so ties between spellings are ordered too; records without that locale come last.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from lynxc.runtime.errors import ToolError

from .columns import LOCALE_SEPARATOR
from .definitions import Resource, SortKey, column_name
from .filters import duck_string, is_sortable, resolve_path, sql_string, stored_paths

ROW_COLUMNS = ["_key", "_revision", "_created_at", "_updated_at", "_data"]


@dataclass(frozen=True)
class Order:
    """A total order of a resource's records: the sort keys, then the key field."""

    keys: tuple[SortKey, ...]
    key_column: str

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns the order reads (the key column included)."""
        names = [_column_locale(k.field)[0] for k in self.keys]
        return tuple(dict.fromkeys([*names, self.key_column]))

    def sql(self) -> str:
        """The ORDER BY terms, in DuckDB's SQL."""
        terms = []
        for k in self.keys:
            direction = f"{'DESC' if k.descending else 'ASC'} NULLS LAST"
            column, locale = _column_locale(k.field)
            if locale is None:
                terms.append(f"{column} {direction}")
                continue
            text = locale_text(column, locale)
            terms += [f"{text} COLLATE NOCASE.NOACCENT {direction}", f"{text} {direction}"]
        if self.key_column not in [_column_locale(k.field)[0] for k in self.keys]:
            terms.append(f"{self.key_column} ASC")
        return ", ".join(terms)

    def describe(self) -> list[dict[str, str]]:
        return [
            {"field": k.field.replace("@", "."), "order": "desc" if k.descending else "asc"}
            for k in self.keys
        ]


def _column_locale(field: str) -> tuple[str, str | None]:
    """A sort key's column, and its locale for one locale of a localized field (`name@de`)."""
    path, at, locale = field.partition("@")
    return column_name(path), (locale if at else None)


def locale_text(column: str, locale: str) -> str:
    """DuckDB: the `locale` text of a localized column ("de\x1fDeutschland" -> "Deutschland")."""
    prefix = locale + LOCALE_SEPARATOR
    pairs = f"list_filter({column}, pair -> starts_with(pair, {duck_string(prefix)}))"
    return f"substr(list_extract({pairs}, 1), {len(prefix) + 1})"


def default_order(resource: Resource) -> Order:
    return Order(resource.sort, column_name(resource.key))


def parse_sort(resource: Resource, sort: Sequence[Any] | None) -> Order:
    """The order a query_records `sort` argument asks for, checked; the resource's default when
    it is empty."""
    if not sort:
        return default_order(resource)
    keys: list[SortKey] = []
    for i, entry in enumerate(sort):
        name = _attr(entry, "field")
        direction = _attr(entry, "order") or "asc"
        if not isinstance(name, str) or not name:
            raise ToolError(f"sort.{i}.field: a field path is required")
        path = resolve_path(resource, name, f"sort.{i}.field")
        if not is_sortable(path):
            sortable = [p.path for p in stored_paths(resource).values() if is_sortable(p)]
            raise ToolError(
                f"sort.{i}.field: {name!r} cannot be sorted on ({path.field.type}"
                f"{' in an array' if path.in_array else ''}); sortable: {', '.join(sortable)}"
            )
        if direction not in ("asc", "desc"):
            raise ToolError(f"sort.{i}.order: {direction!r} is not asc or desc")
        # A locale's key is spelled `name@de`: its column is `name`'s, read at one locale.
        field = path.path if path.locale is None else f"{path.path.rsplit('.', 1)[0]}@{path.locale}"
        if all(k.field != field for k in keys):
            keys.append(SortKey(field, direction == "desc"))
    return Order(tuple(keys), column_name(resource.key))


def _attr(item: Any, name: str) -> Any:
    value = item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)
    return getattr(value, "value", value)


async def selected(table: Any, where: str | None, columns: Sequence[str]) -> Any:
    """An Arrow table of `columns` of every record `where` selects."""
    builder = table.query()
    if where:
        builder = builder.where(where)
    return await builder.select(list(dict.fromkeys(["_key", *columns]))).to_arrow()


def order_keys(records: Any, order: Order, offset: int = 0, limit: int | None = None) -> list[str]:
    """Keys of an Arrow table's records in `order`, from `offset`, at most `limit` (blocking:
    run it with ctx.run_sync)."""
    with _duckdb().cursor() as db:  # a cursor is its own connection: its `records` is its own
        db.register("records", records)
        page = f" LIMIT {int(limit)}" if limit is not None else ""
        sql = f"SELECT _key FROM records ORDER BY {order.sql()}{page} OFFSET {int(offset)}"
        return [row[0] for row in db.execute(sql).fetchall()]


@cache
def _duckdb() -> Any:
    """One in-memory DuckDB per process: opening one costs ~14 ms, more than the sort of a
    20,000-record selection (measured), while a cursor of it costs ~0.1 ms and is thread-safe."""
    import duckdb

    return duckdb.connect(":memory:")


async def rows_by_key(
    table: Any, keys: Sequence[str], columns: Sequence[str] = ROW_COLUMNS, extra: Sequence[str] = ()
) -> dict[str, dict]:
    """The rows of `keys` (those that exist and meet the `extra` SQL conditions), one query."""
    if not keys:
        return {}
    clauses = [f"_key IN ({', '.join(sql_string(k) for k in keys)})", *extra]
    rows = await table.query().where(_all(clauses)).select(list(columns)).to_list()
    return {row["_key"]: row for row in rows}


async def record_row(table: Any, key: str, extra: Sequence[str] = ()) -> dict[str, Any] | None:
    """The row of one record, or None; `extra`: further SQL conditions it must meet (parents,
    the caller's binding): a record that misses them is not there."""
    clauses = [f"_key = {sql_string(key)}", *extra]
    rows = await table.query().where(_all(clauses)).select(ROW_COLUMNS).to_list()
    return rows[0] if rows else None


def _all(clauses: Sequence[str]) -> str:
    """Each clause in parentheses, so none can widen another (an OR inside stays inside)."""
    return " AND ".join(f"({c})" for c in clauses)
