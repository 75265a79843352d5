"""`lynxc index`: build or update each source's table, incrementally by content hash."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from lynxc.runtime.backends.retrieval.embedders import Embedder
from lynxc.runtime.backends.retrieval.identifiers import expand_identifiers

from .chunking import chunk_file
from .sources import MAX_FILE_BYTES, Source, content_hash
from .store import ANN_MIN_ROWS, Row, Store

BATCH_FILES = 200
# progress(done, total, stage): stage "files" counts files embedded and written; "indices" is
# sent once before compaction and the index updates, which take seconds on a large table.
Progress = Callable[[int, int, str], None]


@dataclass
class IndexReport:
    source: str
    files: int = 0
    changed: int = 0
    removed: int = 0
    chunks: int = 0


def index_source(
    source: Source,
    store: Store,
    embedder: Embedder,
    progress: Progress | None = None,
    ann_min_rows: int = ANN_MIN_ROWS,
) -> IndexReport:
    report = IndexReport(source.name)
    known = store.indexed_hashes(source.name)
    wanted = list(source.files())
    report.files = len(wanted)
    todo: list[tuple[str, bytes]] = []
    seen = set()
    for rel, full in wanted:
        seen.add(rel)
        if os.path.getsize(full) > MAX_FILE_BYTES:
            continue
        with open(full, "rb") as handle:
            data = handle.read()
        if known.get(rel) != content_hash(data):
            todo.append((rel, data))
    removed = sorted(set(known) - seen)
    if removed:
        store.replace_files(source.name, removed, [], np.zeros((0, embedder.dimension), dtype=np.float32))
        report.removed = len(removed)
    for start in range(0, len(todo), BATCH_FILES):
        batch = todo[start : start + BATCH_FILES]
        rows = [row for rel, data in batch for row in _rows(source, rel, data)]
        vectors = embedder.embed([f"{row.symbol}\n{row.text}" for row in rows])
        store.replace_files(source.name, [rel for rel, _ in batch], rows, vectors)
        report.changed += len(batch)
        report.chunks += len(rows)
        if progress:
            progress(start + len(batch), len(todo), "files")
    # Also when nothing changed: a run killed after its last batch left the indices behind.
    if progress:
        progress(len(todo), len(todo), "indices")
    store.finish(source.name, ann_min_rows)
    return report


def _rows(source: Source, rel: str, data: bytes) -> list[Row]:
    digest = content_hash(data)
    text = data.decode("utf-8", errors="replace")
    if "\x00" in text:
        return []  # binary
    rows = []
    for chunk in chunk_file(rel, text, kind="docs" if source.kind == "docs" else "auto"):
        search_text = expand_identifiers(f"{chunk.symbol}\n{chunk.path}\n{chunk.text}")
        row_id = f"{rel}:{chunk.start_line}-{chunk.end_line}:{digest}"
        rows.append(
            Row(
                row_id,
                rel,
                digest,
                chunk.language,
                chunk.kind,
                chunk.symbol,
                chunk.start_line,
                chunk.end_line,
                chunk.text,
                search_text,
            )
        )
    return rows
