"""The LanceDB index: one table per source, rows are chunks with their vector.

Writes are LanceDB commits: a batch of files is replaced with one `merge_insert` (new chunks
inserted, the files' old chunks deleted in the same commit), so readers — any number of server
processes — always see a committed version, and a `kill -9` mid-index leaves the last commit
readable; the next run skips files whose content hash is already indexed and finishes the rest.

After a run's writes, `finish` compacts the batches' small fragments, brings the full-text and
vector indices up to date, and adds the ANN index (HNSW over scalar-quantized vectors) once a
table holds `ann_min_rows` chunks. Below that, dense search is an exact flat scan, which is
faster than an index there (bench/retrieval_speed.py measures both). Rows written after an index
was built are searched flat until the next `finish`, so answers stay complete.

Files that yield no chunk (empty, blank or binary) are recorded in a second table per source,
`files_<source>` (path, file_hash), so they count as indexed and are not read again. Searches
never open it. A batch commits its chunks first and its records second; a file's chunk rows win
over a record of the same path. So a `kill -9` between the two commits leaves either a file
with neither (it is indexed again next run) or a stale record hidden by the chunks that replaced
it, never a wrong hash. An index written before this table existed has none: its chunkless
files are indexed once more and recorded.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import numpy as np

from .location import IndexLocation

TABLE_PREFIX = "source_"
FILES_PREFIX = "files_"  # the chunkless files' records, one table per source
# Opt in now to Lance's coming default (index statistics without IVF centroids); unset, listing
# a table's indices prints a warning about it on every `lynxc index` run.
os.environ.setdefault("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")
# Old versions' files are removed this long after they stop being the latest: far longer than
# any search, so a reader mid-query never loses the files of the version it checked out.
KEEP_OLD_VERSIONS = timedelta(hours=1)
# From this many chunks a table gets an ANN index; below it a flat scan is exact and fast
# (384-d, measured here: flat 12 ms at 10k rows, 23 ms at 20k, 150 ms at 56k; HNSW 7-10 ms).
ANN_MIN_ROWS = 20_000


@dataclass(frozen=True)
class Row:
    id: str
    path: str
    file_hash: str
    language: str
    kind: str
    symbol: str
    start_line: int
    end_line: int
    text: str
    search_text: str


def _schema(dimension: int) -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            ("id", pa.string()),
            ("path", pa.string()),
            ("file_hash", pa.string()),
            ("language", pa.string()),
            ("kind", pa.string()),
            ("symbol", pa.string()),
            ("start_line", pa.int32()),
            ("end_line", pa.int32()),
            ("text", pa.string()),
            ("search_text", pa.string()),
            ("vector", pa.list_(pa.float32(), dimension)),
        ]
    )


def _files_schema() -> Any:
    import pyarrow as pa

    return pa.schema([("path", pa.string()), ("file_hash", pa.string())])


def _arrow(rows: list[Row], vectors: np.ndarray) -> Any:
    """The batch as one Arrow table, its vectors copied once into a flat float32 buffer: as Python
    dicts with `vector.tolist()` a 384-d row costs 12 KB of float objects, here 1.5 KB."""
    import pyarrow as pa

    dimension = vectors.shape[1]
    flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1), type=pa.float32())
    columns = {name: [getattr(row, name) for row in rows] for name in Row.__dataclass_fields__}
    columns["vector"] = pa.FixedSizeListArray.from_arrays(flat, dimension)
    return pa.Table.from_pydict(columns, schema=_schema(dimension))


class Store:
    def __init__(self, location: IndexLocation | str):
        import lancedb

        self.location = IndexLocation.of(location)
        self.directory = self.location.uri
        self.db = lancedb.connect(self.location.uri, storage_options=self.location.storage_options())
        # Called before every commit: a writer that lost its lease (lease.py) stops there.
        self.guard: Callable[[], None] = lambda: None

    def table(self, source: str, dimension: int | None = None) -> Any | None:
        name = TABLE_PREFIX + source
        if name in self.db.list_tables().tables:
            table = self.db.open_table(name)
            table.checkout_latest()
            return table
        if dimension is None:
            return None
        return self.db.create_table(name, schema=_schema(dimension))

    def vector_dimensions(self) -> dict[str, int]:
        """Each indexed source's vector width, as its table was created."""
        names = [n for n in self.db.list_tables().tables if n.startswith(TABLE_PREFIX)]
        return {
            name[len(TABLE_PREFIX) :]: self.db.open_table(name).schema.field("vector").type.list_size
            for name in names
        }

    def indexed_hashes(self, source: str) -> dict[str, str]:
        """{path: content hash} of every indexed file, chunkless ones included."""
        hashes = self._records(source)
        table = self.table(source)
        if table is not None and (rows := table.count_rows()):
            data = table.search().select(["path", "file_hash"]).limit(rows).to_arrow()
            # One pair per file, not per chunk, before any Python object is made: at millions of
            # chunks the per-chunk strings would cost gigabytes.
            data = data.group_by(["path", "file_hash"]).aggregate([])
            # Chunks win: they are committed before the record of the same file is removed.
            hashes.update(zip(data["path"].to_pylist(), data["file_hash"].to_pylist(), strict=True))
        return hashes

    def replace_files(
        self,
        source: str,
        paths: Iterable[str],
        rows: list[Row],
        vectors: np.ndarray,
        chunkless: Mapping[str, str] | None = None,
    ) -> None:
        """The given files' chunks become exactly `rows` (one commit), then the records of the
        same files become exactly `chunkless` ({path: hash} of those without a chunk; a second
        commit, made only when a record is added or removed)."""
        paths = sorted(set(paths))
        if not paths:
            return
        self.guard()
        condition = "path IN (" + ", ".join(sql_quote(p) for p in paths) + ")"
        table = self.table(source, vectors.shape[1] if len(rows) else None)
        if table is not None and not rows:
            table.delete(condition)
        elif table is not None:
            (
                table.merge_insert("id")
                .when_matched_update_all()
                .when_not_matched_insert_all()
                .when_not_matched_by_source_delete(condition)
                .execute(_arrow(rows, vectors))
            )
        self._record(source, condition, chunkless or {})

    def _records_table(self, source: str, create: bool = False) -> Any | None:
        name = FILES_PREFIX + source
        if name in self.db.list_tables().tables:
            table = self.db.open_table(name)
            table.checkout_latest()
            return table
        return self.db.create_table(name, schema=_files_schema()) if create else None

    def _records(self, source: str) -> dict[str, str]:
        table = self._records_table(source)
        if table is None or not (rows := table.count_rows()):
            return {}
        data = table.search().select(["path", "file_hash"]).limit(rows).to_arrow()
        return dict(zip(data["path"].to_pylist(), data["file_hash"].to_pylist(), strict=True))

    def _record(self, source: str, condition: str, chunkless: Mapping[str, str]) -> None:
        """The records matching `condition` become exactly `chunkless`."""
        import pyarrow as pa

        table = self._records_table(source, create=bool(chunkless))
        if table is None:
            return
        self.guard()
        if not chunkless:
            if table.count_rows(condition):
                table.delete(condition)
            return
        records = pa.table(
            {"path": list(chunkless), "file_hash": list(chunkless.values())}, schema=_files_schema()
        )
        (
            table.merge_insert("path")
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .when_not_matched_by_source_delete(condition)
            .execute(records)
        )

    def finish(self, source: str, ann_min_rows: int) -> None:
        """Compact the table and bring its indices up to date; build missing ones."""
        from lancedb.index import FTS, HnswSq

        from .memory import release_free_memory

        # Each step is a commit, and the index builds take minutes on a large table: the writer's
        # lease is checked before each.
        self.guard()
        records = self._records_table(source)
        if records is not None:  # a version per batch that found chunkless files
            records.optimize(cleanup_older_than=KEEP_OLD_VERSIONS)
        table = self.table(source)
        if table is None:
            return
        # Compaction first, then a missing index built over the compacted table: built first,
        # the index is rewritten by the compaction, and the two peaks add up (measured).
        self.guard()
        table.optimize(cleanup_older_than=KEEP_OLD_VERSIONS)
        release_free_memory()
        indexed = {column for index in table.list_indices() for column in index.columns}
        if "search_text" not in indexed:
            self.guard()
            table.create_index("search_text", config=FTS(stem=True, remove_stop_words=True))
            release_free_memory()
        if "vector" not in indexed and table.count_rows() >= ann_min_rows:
            self.guard()
            table.create_index("vector", config=HnswSq(distance_type="cosine"))


def sql_quote(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"
