"""`lynxc index`: build or update each source's table, incrementally by content hash."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from lynxc.runtime.backends.retrieval.embedders import Embedder
from lynxc.runtime.backends.retrieval.identifiers import expand_identifiers

from .chunking import chunk_file
from .memory import release_free_memory, tune_malloc
from .sources import MAX_FILE_BYTES, Source, content_hash
from .store import ANN_MIN_ROWS, Row, Store

# A batch (one commit) is up to BATCH_FILES files, fewer once they hold BATCH_CHUNKS chunks.
BATCH_FILES = 200
BATCH_CHUNKS = 1000
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
    tune_malloc()
    report = IndexReport(source.name)
    report.files, todo, removed = plan(source, store)
    if removed:
        store.replace_files(source.name, removed, [], np.zeros((0, embedder.dimension), dtype=np.float32))
        report.removed = len(removed)
    done = 0
    while done < len(todo):
        batch, rows, chunkless = _next_batch(source, todo[done : done + BATCH_FILES])
        vectors = embedder.embed([f"{row.symbol}\n{row.text}" for row in rows])
        release_free_memory()  # the model's buffers, before LanceDB writes
        store.replace_files(source.name, batch, rows, vectors, chunkless)
        done += len(batch)
        report.changed += len(batch)
        report.chunks += len(rows)
        del rows, vectors
        release_free_memory()
        if progress:
            progress(done, len(todo), "files")
    # Also when nothing changed: a run killed after its last batch left the indices behind.
    if progress:
        progress(len(todo), len(todo), "indices")
    store.finish(source.name, ann_min_rows)
    release_free_memory()
    return report


def plan(source: Source, store: Store) -> tuple[int, list[tuple[str, str]], list[str]]:
    """What a run must do, by content hash: (the source's file count, the (relative, absolute)
    paths of the files new or changed since indexed, the indexed paths that are gone). Both
    engines start here.

    Only the paths: a file is read once here to hash it and again in its batch, so the bytes of
    every changed file (the whole source on a first run) are never held at once."""
    known = store.indexed_hashes(source.name)
    todo: list[tuple[str, str]] = []
    seen = set()
    for rel, full in source.files():
        seen.add(rel)
        if os.path.getsize(full) > MAX_FILE_BYTES:
            continue
        data = _read(full)
        if data is not None and known.get(rel) != content_hash(data):
            todo.append((rel, full))
    return len(seen), todo, sorted(set(known) - seen)


def _next_batch(source: Source, todo: list[tuple[str, str]]) -> tuple[list[str], list[Row], dict[str, str]]:
    """The next files to commit together, read and chunked: up to BATCH_FILES files, fewer once
    they hold BATCH_CHUNKS chunks (LanceDB's write of a batch takes about 20 KB per chunk; a file's
    chunks are never split between two). Also {path: hash} of the files without a chunk."""
    paths: list[str] = []
    rows: list[Row] = []
    chunkless: dict[str, str] = {}
    for rel, full in todo:
        if len(rows) >= BATCH_CHUNKS:
            break
        paths.append(rel)
        data = _read(full)
        if data is None:
            continue  # gone since it was hashed: its old chunks and record go with the batch
        found = file_rows(source, rel, data)
        if not found:
            chunkless[rel] = content_hash(data)
        rows += found
    return paths, rows, chunkless


def _read(full: str) -> bytes | None:
    try:
        with open(full, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def file_rows(source: Source, rel: str, data: bytes) -> list[Row]:
    """The chunks of one file's bytes as rows (none for a binary file); shared with distributed.py."""
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
