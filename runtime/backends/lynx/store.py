"""The LanceDB index: one table per source, rows are chunks with their vector.

Writes are LanceDB commits: a batch of files is replaced with one `merge_insert` (new chunks
inserted, the files' old chunks deleted in the same commit), so readers — any number of server
processes — always see a committed version, and a `kill -9` mid-index leaves the last commit
readable; the next run skips files whose content hash is already indexed and finishes the rest.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

TABLE_PREFIX = "source_"


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


class Store:
    def __init__(self, directory: str):
        import lancedb

        self.db = lancedb.connect(directory)

    def table(self, source: str, dimension: int | None = None) -> Any | None:
        name = TABLE_PREFIX + source
        if name in self.db.list_tables().tables:
            table = self.db.open_table(name)
            table.checkout_latest()
            return table
        if dimension is None:
            return None
        return self.db.create_table(name, schema=_schema(dimension))

    def indexed_hashes(self, source: str) -> dict[str, str]:
        table = self.table(source)
        if table is None or table.count_rows() == 0:
            return {}
        rows = table.count_rows()
        data = table.search().select(["path", "file_hash"]).limit(rows).to_arrow().to_pydict()
        return dict(zip(data["path"], data["file_hash"], strict=True))

    def replace_files(self, source: str, paths: Iterable[str], rows: list[Row], vectors: np.ndarray) -> None:
        """One commit: the given files' chunks become exactly `rows`."""
        table = self.table(source, vectors.shape[1] if len(rows) else None)
        paths = sorted(set(paths))
        if table is None or not paths:
            return
        records = [
            {**row.__dict__, "vector": vector.tolist()} for row, vector in zip(rows, vectors, strict=True)
        ]
        condition = "path IN (" + ", ".join(sql_quote(p) for p in paths) + ")"
        if not records:
            table.delete(condition)
            return
        (
            table.merge_insert("id")
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .when_not_matched_by_source_delete(condition)
            .execute(records)
        )

    def ensure_fts(self, source: str) -> None:
        table = self.table(source)
        if table is None:
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # create_fts_index's deprecation notice
            table.create_fts_index("search_text", replace=True, stem=True, remove_stop_words=True)


def sql_quote(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"
