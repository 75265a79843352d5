"""Frames: the columns filters, sort, totals and facets read, per (store, table, version), held
by the serving process in DuckDB.

On the first query_records or facet of a table version the serving process reads that
version's `_key` and every stored path's column but long text (`text` fields: `contains` on
them goes to Lance) in one Lance scan, and keeps them as a native DuckDB table. Queries then
run in DuckDB: filters rendered by filters.where_sql in its dialect (literals built by
filters.py, never pasted), ORDER BY ... LIMIT for the page, count(*) for the total, GROUP BY
for facets. Only the page's rows are then read from Lance, by key.

A table version never changes, so a frame is never stale; a newer load is a new version and a
new frame. The last FRAMES frames are kept (the current versions and a few a cursor reads);
the oldest is dropped, once the queries running on it end. Requests that want a frame being
read wait for that read instead of reading it again. Measured at 1,000,000 records of
bench/records_scale.py (9 columns): 142 MB in DuckDB, +220 MiB of the serving process's RSS,
read in 1-2.5 s by the first query of a version (on a busy 2-core machine).
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from .columns import KEY
from .definitions import Resource

FRAMES = 8
FRAME_BATCH = 65536
_names = itertools.count(1)
_lock = threading.Lock()
_frames: OrderedDict[tuple[str, str, int], Frame] = OrderedDict()
_in_use: dict[str, int] = {}  # frame name -> queries running on it
_doomed: set[str] = set()  # evicted while in use: dropped when its last query ends
# Frames being read, per event loop and key: a second request for one awaits the first's read.
_reading: dict[tuple[int, tuple[str, str, int]], asyncio.Future] = {}


@dataclass(frozen=True)
class Frame:
    """One table version's columns in DuckDB: the table's name there, the columns it holds."""

    name: str
    columns: frozenset[str]

    def holds(self, columns: Sequence[str]) -> bool:
        return all(c in self.columns for c in columns)


def frame_columns(resource: Resource, available: Sequence[str]) -> list[str]:
    """The columns a frame of `resource` holds, of those its table has (an older table may lack
    a column a newer declaration adds)."""
    wanted = [p.column for p in resource.stored_paths() if p.field.type != "text"]
    present = set(available)
    return [KEY, *(c for c in dict.fromkeys(wanted) if c in present and c != KEY)]


async def frame_of(
    ctx: Any, store_dir: str, table: Any, name: str, version: int, resource: Resource
) -> Frame:
    """The frame of `table` (named `name`, checked out at `version`), read on first use."""
    key = (store_dir, name, version)
    with _lock:
        found = _frames.get(key)
        if found is not None:
            _frames.move_to_end(key)
            return found
    reading = (id(asyncio.get_running_loop()), key)
    pending = _reading.get(reading)
    if pending is not None:
        return await asyncio.shield(pending)
    future = _reading[reading] = asyncio.get_running_loop().create_future()
    try:
        found = await _read(ctx, key, table, resource)
    except BaseException as error:
        future.set_exception(error)
        future.exception()  # retrieved: no "never retrieved" warning when nobody waits
        raise
    else:
        future.set_result(found)
        return found
    finally:
        del _reading[reading]


async def _read(ctx: Any, key: tuple[str, str, int], table: Any, resource: Resource) -> Frame:
    schema = await table.schema()
    columns = frame_columns(resource, schema.names)
    made = Frame(f"frame_{next(_names)}", frozenset(columns))
    # Batch by batch: the process never holds the whole selection twice (measured at 1,000,000
    # records of bench/records_scale.py: +220 MiB of RSS for the frame, +360 MiB in one piece).
    try:
        reader = await table.query().select(columns).to_batches(max_batch_length=FRAME_BATCH)
        first = True
        async for batch in reader:
            await ctx.run_sync(_append, made, batch, first)
            first = False
        if first:  # no records: an empty frame of the columns' types
            await ctx.run_sync(_append, made, schema.empty_table().select(columns), True)
    except BaseException:
        await asyncio.shield(ctx.run_sync(_drop, made))
        raise
    with _lock:
        found = _frames.get(key)
        if found is None:
            _frames[key] = found = made
            made = None
        dropped = []
        while len(_frames) > FRAMES:
            evicted = _frames.popitem(last=False)[1]
            if _in_use.get(evicted.name):
                _doomed.add(evicted.name)
            else:
                dropped.append(evicted)
    if made is not None:  # another request built it meanwhile
        dropped.append(made)
    for frame in dropped:
        await ctx.run_sync(_drop, frame)
    return found


def _create(records: Any, columns: frozenset[str]) -> Frame:
    """A frame of an Arrow table, in one piece."""
    frame = Frame(f"frame_{next(_names)}", columns)
    _append(frame, records, True)
    return frame


def _append(frame: Frame, records: Any, first: bool) -> None:
    with duckdb().cursor() as db:
        db.register("batch", records)
        if first:
            db.execute(f"CREATE TABLE {frame.name} AS SELECT * FROM batch")
        else:
            db.execute(f"INSERT INTO {frame.name} SELECT * FROM batch")
        db.unregister("batch")


def _drop(frame: Frame) -> None:
    with duckdb().cursor() as db:
        db.execute(f"DROP TABLE IF EXISTS {frame.name}")


@cache
def duckdb() -> Any:
    """One in-memory DuckDB per process: opening one costs ~14 ms, while a cursor of it costs
    ~0.1 ms and is thread-safe. Time zone UTC: datetime columns and literals compare in UTC."""
    import duckdb as duck

    db = duck.connect(":memory:")
    db.execute("SET TimeZone = 'UTC'")
    return db


@dataclass(frozen=True)
class Selection:
    """Which records of a frame a request reads: those `where` (DuckDB SQL) selects, and when
    `keys` is given (an Arrow table with a `_key` column) only those among them."""

    frame: Frame
    where: str | None = None
    keys: Any | None = None

    def sql(self) -> str:
        clauses = []
        if self.where:
            clauses.append(f"({self.where})")
        if self.keys is not None:
            clauses.append("_key IN (SELECT _key FROM selected_keys)")
        return f"SELECT * FROM {self.frame.name}" + (f" WHERE {' AND '.join(clauses)}" if clauses else "")


def run(selection: Selection, statements: Sequence[str]) -> list[list[tuple]]:
    """Each statement's rows, run with `records` standing for the selection (blocking: run it
    with ctx.run_sync)."""
    name = selection.frame.name
    with _lock:
        _in_use[name] = _in_use.get(name, 0) + 1
    try:
        with duckdb().cursor() as db:
            if selection.keys is not None:
                db.register("selected_keys", selection.keys)
            source = selection.sql()
            return [
                db.execute(f"WITH records AS ({source}) {statement}").fetchall() for statement in statements
            ]
    finally:
        with _lock:
            _in_use[name] -= 1
            last = not _in_use[name]
            if last:
                del _in_use[name]
            doomed = last and name in _doomed
            if doomed:
                _doomed.discard(name)
        if doomed:
            _drop(selection.frame)
