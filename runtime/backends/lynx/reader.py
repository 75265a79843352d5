"""The read side of the index, as a server holds it: one async LanceDB connection, each source's
table opened once, and every search moved to the tables' latest commit first.

Moving to the latest commit once per search (not per query) means all queries of one search read
the same version of each table, while a `lynxc index` running beside the server is seen by the
next search. Any number of server processes can read one index this way: readers take no locks,
and writers only ever add new versions (see store.py).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Sequence
from typing import Any

from .location import IndexLocation
from .store import TABLE_PREFIX


class IndexReader:
    def __init__(self, location: IndexLocation | str):
        self.location = IndexLocation.of(location)
        self._db: Any = None
        self._tables: dict[str, Any] = {}

    async def tables(self, sources: Sequence[str]) -> dict[str, Any]:
        """The tables of the given sources that exist, at their latest version, in the given order."""
        import lancedb

        if self._db is None:
            self._db = await lancedb.connect_async(
                self.location.uri, storage_options=self.location.storage_options()
            )
        missing = [s for s in sources if s not in self._tables]
        if missing:  # a source indexed after the server started is picked up here
            existing = set((await self._db.list_tables()).tables)
            for source in missing:
                if TABLE_PREFIX + source in existing:
                    self._tables[source] = await self._db.open_table(TABLE_PREFIX + source)
        found = {s: self._tables[s] for s in sources if s in self._tables}
        await asyncio.gather(*(table.checkout_latest() for table in found.values()))
        return found


# LanceDB's async objects hand out futures of the event loop that awaits them, so a reader is
# kept per loop (a server has one for its life; tests and benchmarks may run several).
_READERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[Any, ...], IndexReader]] = (
    weakref.WeakKeyDictionary()
)


def reader_for(location: IndexLocation | str) -> IndexReader:
    """This event loop's reader of the index at `location`."""
    location = IndexLocation.of(location)
    readers = _READERS.setdefault(asyncio.get_running_loop(), {})
    key = (location.uri, tuple(sorted(location.options.items())))
    if key not in readers:
        readers[key] = IndexReader(location)
    return readers[key]
