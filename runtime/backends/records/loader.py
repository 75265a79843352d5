"""`lynxc load`: files of records -> a resource's table in the store, all or nothing.

1. validate: every row of every file, streamed in batches of BATCH_ROWS, against the
   generated Pydantic model; a nested resource's parent key must be a loaded record of the
   parent; a key may appear once. A column (top-level key) the resource does not declare is a
   problem, reported once per file, unless `ignore_extra` skips such columns. Valid rows become
   Arrow columns in a spill file under `data_dir/tmp/` that has no name (the kernel frees it
   when the load ends, killed or not), so memory holds one batch of Python objects at a time.
   Every problem is collected (up to MAX_PROBLEMS lines, then a count); with any problem
   nothing is written.
2. compare with the pointed version by key and content hash: new records get revision 1,
   changed ones revision + 1 and a new `_updated_at`, unchanged ones are left untouched;
   `delete_missing` removes the keys in none of the files.
3. write: one `merge_insert` commit (inserts, updates, deletions), embedding only the new and
   changed records on the way (every record of a new table generation): the spill is read in
   windows of EMBED_WINDOW rows, which the vector stage (vectors.py: token-budgeted jobs on two
   threads) embeds while this thread reads on and LanceDB writes. Then the FTS index on
   `_text` and, from ann_min_rows records, the vector index; `optimize` folds new rows into the
   indices and removes versions nobody can read any more.
4. point: CURRENT.json names the new version (store.py). Only now do readers see the load.

With `embed=EMBED_LATER` the new and changed records are written with no vector (null): they
are searchable by text at once, semantic search skips them, and CURRENT.json's `embedded`
counts the records that have one. `embed_missing` (`lynxc embed`) is the later pass: it embeds
the records without a vector and commits like a load (lock, one merge, one pointer move).
`load_many` loads several resources, parents first, and moves the pointer once for all of them.

A declaration change (store.declaration_sha256) or another embedder writes a new generation
`<resource>-<n+1>` instead, carrying revisions and creation times over by key; records of the
old generation absent from the files are kept (validated again) unless `delete_missing`.

A load killed at any point leaves the pointer, and so every reader, on the previous version,
and no spill file (it never had a name); the lock is the kernel's and dies with the process.
The next load drops what the killed one left in the store (restores the table to the pointed
version, drops an unpointed generation) and runs in full. `LYNXC_TEST_KILL_AT=<stage>` SIGKILLs the process at
a named stage and `LYNXC_TEST_PAUSE_AT=<stage>` waits there for a line on stdin: the
crash-safety tests drive real `lynxc load` processes with them.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from .columns import (
    CREATED,
    DATA,
    HASH,
    KEY,
    MEANING,
    REVISION,
    TEXT,
    UPDATED,
    VECTOR,
    SpillBuilder,
    joined_text,
    key_types,
    table_schema,
)
from .definitions import SCALAR_TYPES, Resource, Resources
from .rows import BadRow, check_readable, read_rows
from .store import (
    KEEP_OLD_VERSIONS,
    LANCE_DIR,
    TMP_DIR,
    Current,
    ResourceState,
    Retired,
    StoreError,
    declaration_sha256,
    generation,
    lance_uri,
    load_lock,
    location_from_settings,
    read_current,
    spill_dir,
    table_name,
    write_current,
)
from .vectors import GIL_BOUND, PROCESS_MIN_TEXTS, ParallelVectors, VectorStage, Window

BATCH_ROWS = 10_000
EMBED_CHUNK = 512  # texts per embedder call of the serial stage (the loader before the pipeline)
# Rows per embedding window: texts are sorted by length within it, and progress moves per window.
EMBED_WINDOW = 1024
EMBED_NOW, EMBED_LATER = "now", "later"
MAX_PROBLEMS = 100
# From this many records a table gets an ANN index (HNSW over scalar-quantized vectors); below
# it an exact scan is fast enough (lynx-mcp measured 150 ms at 56k 384-d rows, flat).
ANN_MIN_ROWS = 100_000
ANN_PARTITION_ROWS = 50_000
# progress(stage, done, total): "validate" counts rows read (total None), "embed" records
# embedded, "write" rows handed to LanceDB, "index" is sent once before the index updates.
Progress = Callable[[str, int, "int | None"], None]
STATUS_NEW, STATUS_CHANGED, STATUS_UNCHANGED = 0, 1, 2
KEEP_FOREVER = timedelta(days=36_500)  # optimize() with this removes no version
# Lance removes versions older than (its clock at clean-up) - cleanup_older_than: the margin
# covers the time between measuring the ages and the clean-up, so the oldest version to keep
# can never fall on the wrong side (the clean-up pass has nothing else to do: seconds).
CLEANUP_MARGIN = timedelta(minutes=10)


@dataclass
class LoadReport:
    resource: str
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    records: int = 0
    table: str = ""
    version: int = 0
    new_generation: bool = False
    seconds: float = 0.0
    embedded: int | None = None  # records with vectors after the load (None: no meaning fields)
    embedded_now: int = 0  # texts this load (or embed pass) embedded


class LoadRejected(Exception):
    """Rows that are not valid records (or keys given twice): nothing was written."""

    def __init__(self, problems: list[str], total: int):
        self.problems = problems
        self.total = total
        super().__init__(f"{total} problem(s) in the rows; nothing loaded")

    def lines(self) -> list[str]:
        more = self.total - len(self.problems)
        return self.problems + ([f"... and {more} more"] if more > 0 else [])


def load(
    definition: Any,
    resource_name: str,
    files: Sequence[str],
    *,
    delete_missing: bool = False,
    ignore_extra: bool = False,
    settings: Mapping[str, Any],
    progress: Progress | None = None,
    embedder: Any = None,
    ann_min_rows: int = ANN_MIN_ROWS,
    embed: str = EMBED_NOW,
    vectors: VectorStage | None = None,
    engine: Any = None,
) -> LoadReport:
    """Load `files` into resource `resource_name` of the server `definition` (a
    ServerDefinition). `ignore_extra` skips columns the resource does not declare instead of
    refusing them. `settings` are the server's (`data_dir`, `embedder`); `embedder`
    overrides the one the settings name (tests count its calls). `embed`: EMBED_NOW, or
    EMBED_LATER (new and changed records are written without vectors, searchable by text at
    once; `embed_missing` fills them). `vectors`: the embedding stage (vectors.VectorStage;
    default a ParallelVectors over the embedder). Raises LoadRejected (bad rows),
    rows.FileError (an unreadable file), store.LoadBusy, store.StoreError, KeyError (no such
    resource)."""
    started = time.monotonic()
    (report,) = load_many(
        definition,
        [(resource_name, files)],
        settings=settings,
        progress_for=(lambda _name: progress) if progress is not None else None,
        delete_missing=delete_missing,
        ignore_extra=ignore_extra,
        embedder=embedder,
        ann_min_rows=ann_min_rows,
        embed=embed,
        vectors=vectors,
        engine=engine,
    )
    report.seconds = time.monotonic() - started
    return report


def load_many(
    definition: Any,
    plan: Sequence[tuple[str, Sequence[str]]],
    *,
    settings: Mapping[str, Any],
    progress_for: Callable[[str], Progress] | None = None,
    delete_missing: bool = False,
    ignore_extra: bool = False,
    embedder: Any = None,
    ann_min_rows: int = ANN_MIN_ROWS,
    embed: str = EMBED_NOW,
    vectors: VectorStage | None = None,
    engine: Any = None,
) -> list[LoadReport]:
    """Several resources of one server in one commit: `plan` is [(resource, files)], parents
    before their children (a child's rows are checked against its parent's records as this
    command loads them). Each resource is loaded as `load` describes, but the pointer moves
    once, after the last: readers see every resource's new version or none, and a refused or
    killed child leaves its parents as they were too. `load` is this with one resource."""
    resources = definition.records()
    runs = []
    for name, files in plan:
        resource = resources.by_name(name)
        if resource is None:
            raise KeyError(name)
        for path in files:
            check_readable(path)
        runs.append((resource, list(files)))
    data_dir = location_from_settings(settings)
    pending: dict[str, ResourceState] = {}
    reports: list[LoadReport] = []

    async def run_all() -> None:
        last = None
        for resource, files in runs:
            last = _Load(
                resources=resources,
                resource=resource,
                model=definition.load_record_model(resource),
                files=files,
                delete_missing=delete_missing,
                ignore_extra=ignore_extra,
                data_dir=data_dir,
                embedder_name=(embedder.name if embedder is not None else settings.get("embedder", "minilm")),
                embedder=embedder,
                progress=progress_for(resource.name) if progress_for else (lambda stage, done, total: None),
                ann_min_rows=ann_min_rows,
                embed_later=embed == EMBED_LATER,
                vector_stage=vectors,
                pending=pending,
                engine=engine,
                lease=lease,
            )
            begun = time.monotonic()
            reports.append(await last.run())
            reports[-1].seconds = time.monotonic() - begun
            assert last.new_state is not None
            pending[resource.name] = last.new_state
        if last is not None:
            last.current = read_current(data_dir)  # as every load of the command found it
            await last._point_and_drop(pending)

    with load_lock(data_dir) as lease:
        asyncio.run(run_all())
    return reports


def embed_missing(
    definition: Any,
    resource_name: str,
    *,
    settings: Mapping[str, Any],
    progress: Progress | None = None,
    embedder: Any = None,
    ann_min_rows: int = ANN_MIN_ROWS,
    vectors: VectorStage | None = None,
) -> LoadReport:
    """The pass after `load(..., embed=EMBED_LATER)`: embeds the records of `resource_name`
    that have no vector yet, with the embedder the resource was loaded with, and commits like a
    load: under the load lock, one Lance commit, then one pointer move (a kill at any point
    leaves the previous version). Raises store.StoreError (not loaded yet, no meaning fields),
    store.LoadBusy, KeyError (no such resource)."""
    started = time.monotonic()
    resources = definition.records()
    resource = resources.by_name(resource_name)
    if resource is None:
        raise KeyError(resource_name)
    data_dir = location_from_settings(settings)
    with load_lock(data_dir) as lease:
        state = read_current(data_dir).resources.get(resource.name)
        if state is None:
            raise StoreError(f"{resource.name} is not loaded yet: run `lynxc load` first")
        if not resource.meaning or state.embedder is None:
            raise StoreError(f"{resource.name} declares no meaning fields: it has no vectors to fill")
        if embedder is not None and embedder.name != state.embedder:
            raise StoreError(
                f"{resource.name} was loaded with embedder {state.embedder!r}, not {embedder.name!r}"
            )
        run = _Load(
            resources=resources,
            resource=resource,
            model=None,
            files=[],
            delete_missing=False,
            ignore_extra=False,
            data_dir=data_dir,
            embedder_name=state.embedder,
            embedder=embedder,
            progress=progress or (lambda stage, done, total: None),
            ann_min_rows=ann_min_rows,
            vector_stage=vectors,
            lease=lease,
        )
        report = asyncio.run(run.fill())
    report.seconds = time.monotonic() - started
    return report


def checkpoint(stage: str) -> None:
    """Test hooks: die or wait at a named stage of a real load process."""
    if os.environ.get("LYNXC_TEST_KILL_AT") == stage:
        os.kill(os.getpid(), signal.SIGKILL)
    if os.environ.get("LYNXC_TEST_PAUSE_AT") == stage:
        sys.stderr.write(f"\npaused at {stage}\n")
        sys.stderr.flush()
        sys.stdin.readline()


class _Problems:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.total = 0

    def add(self, line: str) -> None:
        self.total += 1
        if len(self.lines) < MAX_PROBLEMS:
            self.lines.append(line)


class _Spill:
    """Validated rows as Arrow record batches in a file, written once, then read back. The file
    has no name (O_TMPFILE, or unlinked at once where that is missing): whatever ends the load,
    a kill -9 included, the kernel frees it, so no spill can outlive its load."""

    def __init__(self, directory: Path, schema: Any):
        import pyarrow as pa

        directory.mkdir(parents=True, exist_ok=True)
        self.schema = schema
        self._file = tempfile.TemporaryFile(dir=directory)  # noqa: SIM115 (remove() closes it)
        self._writer = pa.ipc.new_file(pa.PythonFile(self._file, mode="w"), schema)
        self.rows = 0
        self._reader: Any = None

    def write(self, batch: Any) -> None:
        import pyarrow as pa

        for column in list(self.schema)[batch.num_columns :]:  # vectors still to compute: nulls
            batch = batch.append_column(column, pa.nulls(batch.num_rows, column.type))
        if batch.num_rows:
            self._writer.write_batch(batch)
            self.rows += batch.num_rows

    def batches(self) -> Iterator[Any]:
        import pyarrow as pa

        if self._reader is None:
            self._writer.close()  # writes the footer; the file stays open
            self._file.flush()
            self._file.seek(0)
            # Read, not memory-mapped: a batch's pages are freed with it instead of staying
            # in the process's resident set for the rest of the load.
            self._reader = pa.ipc.open_file(pa.PythonFile(self._file, mode="r"))
        for i in range(self._reader.num_record_batches):
            yield self._reader.get_batch(i)

    def remove(self) -> None:
        if self._reader is None:
            self._writer.close()
        self._file.close()


@dataclass
class _Load:
    resources: Resources
    resource: Resource
    model: Any
    files: list[str]
    delete_missing: bool
    ignore_extra: bool
    data_dir: Any  # an IndexLocation: a folder, or an object-store URI (store.py)
    embedder_name: str
    embedder: Any
    progress: Progress
    ann_min_rows: int
    embed_later: bool = False
    vector_stage: VectorStage | None = None
    embedded_now: int = 0
    # The states the command's earlier loads made, by resource (load_many): a child is checked
    # against its parent as this command loads it. None outside a command (the embed pass).
    pending: dict[str, ResourceState] | None = None
    new_state: ResourceState | None = None
    # Another engine (distributed.RayEngine) reads, validates and embeds the files instead of
    # `_validate`'s loop: its spill batches carry their vectors (see distributed.py).
    engine: Any = None
    lease: Any = None  # the store's writer lease, on an object store
    problems: _Problems = field(default_factory=_Problems)

    async def run(self) -> LoadReport:
        import lancedb

        resource = self.resource
        self.types = key_types(self.resources)
        self.now = datetime.now(UTC)
        self.current = read_current(self.data_dir)
        self.state = self.current.resources.get(resource.name)
        self.db = await lancedb.connect_async(
            lance_uri(self.data_dir), storage_options=self.data_dir.storage_options()
        )
        await self._drop_leftovers()
        self.declaration = declaration_sha256(resource, self.resources)
        embedder_name = self.embedder_name if resource.meaning else None
        self.dimension = self._dimension() if resource.meaning else None
        state = self.state
        self.new_generation = (
            state is None
            or state.declaration_sha256 != self.declaration
            or state.embedder != embedder_name
            or state.dimension != self.dimension
        )
        report = LoadReport(resource.name, new_generation=self.new_generation)
        self.old_table = await self._old_table()
        spill_schema = SpillBuilder(resource, self.types).schema
        if self.engine is not None:
            spill_schema = self.engine.spill_schema(spill_schema, self.dimension)
        self.spill = _Spill(spill_dir(self.data_dir), spill_schema)
        try:
            builder = await self._validate()
            checkpoint("validated")
            statuses = await self._compare(report)
            table, written = await self._write(statuses, report)
            report.embedded_now = self.embedded_now
            checkpoint("written")
            await self._index(table, written)
            checkpoint("indexed")
            report.table = table.name
            report.version = await table.version()
            report.records = await table.count_rows()
            report.embedded = await self._embedded(table, report.records)
            locales = builder.locales
            if state is not None and not self.new_generation and not self.delete_missing:
                locales |= set(state.locales)
            new_state = ResourceState(
                table=report.table,
                version=report.version,
                records=report.records,
                locales=tuple(sorted(locales)),
                embedder=embedder_name,
                dimension=self.dimension,
                declaration_sha256=self.declaration,
                loaded_at=self.now.isoformat().replace("+00:00", "Z"),
                embedded=report.embedded,
            )
            self.new_state = new_state  # load_many moves the pointer, once for the command
        finally:
            self.spill.remove()
        return report

    def _dimension(self) -> int:
        if self.embedder is not None:
            return int(self.embedder.dimension)
        from lynxc.runtime.backends.retrieval.embedders import DIMENSIONS

        if self.embedder_name not in DIMENSIONS:
            raise StoreError(
                f"unknown embedder {self.embedder_name!r} (known: {', '.join(sorted(DIMENSIONS))})"
            )
        return DIMENSIONS[self.embedder_name]

    def _embedder(self) -> Any:
        if self.embedder is None:
            from lynxc.runtime.backends.retrieval.embedders import get_embedder

            # One onnxruntime thread per call: the stage runs a call per core at once.
            self.embedder = get_embedder(self.embedder_name, threads=1)
        return self.embedder

    def _stage(self, texts: int) -> VectorStage:
        """The vector stage for `texts` texts to embed: the one given, else threads, or worker
        processes for a large load with an embedder that holds the GIL."""
        if self.vector_stage is None:
            embed = lambda texts: self._embedder().embed(texts)  # noqa: E731 (the model loads on use)
            in_processes = (
                self.embedder is None and self.embedder_name in GIL_BOUND and texts >= PROCESS_MIN_TEXTS
            )
            processes = self.embedder_name if in_processes else None
            self.vector_stage = ParallelVectors(embed, self.dimension or 0, processes=processes)
        return self.vector_stage

    async def _embedded(self, table: Any, records: int) -> int | None:
        """Records of `table` with a vector: counted only when some may lack one."""
        if not self.resource.meaning:
            return None
        state = self.state
        complete_before = self.new_generation or state is None or state.missing_vectors == 0
        if not self.embed_later and complete_before:
            return records
        return await table.count_rows(f"{VECTOR} IS NOT NULL")

    # the embed pass (embed_missing) ----------------------------------------------------------

    async def fill(self) -> LoadReport:
        """Vectors for the pointed version's records that have none; see `embed_missing`."""
        import dataclasses

        import lancedb
        import pyarrow as pa

        self.types = key_types(self.resources)
        self.now = datetime.now(UTC)
        self.current = read_current(self.data_dir)
        state = self.state = self.current.resources[self.resource.name]
        self.db = await lancedb.connect_async(
            lance_uri(self.data_dir), storage_options=self.data_dir.storage_options()
        )
        await self._drop_leftovers()
        self.dimension = state.dimension
        self.new_generation = False
        table = self.old_table = await self._old_table()
        report = LoadReport(self.resource.name, table=state.table, version=state.version)
        missing = await table.count_rows(f"{VECTOR} IS NULL")
        if missing:
            schema = await table.schema()
            self.spill = _Spill(spill_dir(self.data_dir), schema)
            try:
                stream = await table.query().where(f"{VECTOR} IS NULL").to_batches()
                async for batch in stream:
                    self.spill.write(batch.select(schema.names).cast(schema))
                checkpoint("validated")
                reader = pa.RecordBatchReader.from_batches(schema, self._filled(schema, missing, report))
                await table.merge_insert(KEY).when_matched_update_all().execute(reader)
                checkpoint("written")
                await self._index(table, True)
                checkpoint("indexed")
            finally:
                self.spill.remove()
        report.version = await table.version()
        report.records = await table.count_rows()
        report.embedded = await table.count_rows(f"{VECTOR} IS NOT NULL")
        new_state = dataclasses.replace(
            state, version=report.version, records=report.records, embedded=report.embedded
        )
        if new_state != state:
            self._point({self.resource.name: new_state})
            checkpoint("pointed")
        return report

    def _filled(self, schema: Any, total: int, report: LoadReport) -> Iterator[Any]:
        """The spilled rows (the table's columns, no vector) with their vectors."""
        import pyarrow as pa

        def windows() -> Iterator[Window]:
            for batch in self.spill.batches():
                for start in range(0, batch.num_rows, EMBED_WINDOW):
                    part = batch.slice(start, EMBED_WINDOW)
                    texts = [
                        joined_text(self.resource, self.resource.meaning, json.loads(text))
                        for text in part.column(DATA).to_pylist()
                    ]
                    yield Window(part, texts)

        for window, vectors in self._stage(total)(windows()):
            part = window.payload
            columns = {name: part.column(name) for name in schema.names}
            columns[VECTOR] = _vector_array(vectors, self.dimension or 0)
            yield pa.RecordBatch.from_arrays([columns[name] for name in schema.names], schema=schema)
            report.embedded_now += part.num_rows
            self.progress("embed", report.embedded_now, total)
            checkpoint("writing")

    async def _tables(self) -> list[str]:
        names: list[str] = []
        token = None
        while True:
            page = await self.db.list_tables(page_token=token)
            names += page.tables
            token = page.page_token
            if not token:
                return names

    async def _drop_leftovers(self) -> None:
        """What a killed load left: its spill files, and tables of this resource that neither
        the pointer nor a retired entry names (a new generation it never pointed to)."""
        local = not self.data_dir.remote
        if local:
            shutil.rmtree(Path(self.data_dir.uri) / TMP_DIR, ignore_errors=True)
        name = self.resource.name
        kept = {r.table for r in self.current.retired}
        if self.state is not None:
            kept.add(self.state.table)
        lance_dir = Path(self.data_dir.uri) / LANCE_DIR
        found = set(await self._tables())
        if local and lance_dir.is_dir():  # a table killed while being created may not list
            found |= {p.name.removesuffix(".lance") for p in lance_dir.iterdir() if p.name.endswith(".lance")}
        self.generations = {t: generation(t, name) for t in found if generation(t, name) is not None}
        for table in sorted(set(self.generations) - kept):
            await self.db.drop_table(table, ignore_missing=True)
            if local:
                shutil.rmtree(lance_dir / f"{table}.lance", ignore_errors=True)
        self.generations = {t: n for t, n in self.generations.items() if t in kept}

    async def _old_table(self) -> Any:
        """The pointed table: checked out at the pointed version when it is only read (a new
        generation), else restored to it, so this load starts from what readers see."""
        state = self.state
        if state is None:
            return None
        try:
            table = await self.db.open_table(state.table)
        except ValueError:
            raise StoreError(
                f"{self.data_dir}: CURRENT.json names table {state.table}, which is missing"
            ) from None
        try:
            if self.new_generation:
                await table.checkout(state.version)
            elif await table.version() != state.version:
                await table.restore(state.version)  # a killed load's commits: undone
        except ValueError as err:  # "no longer exists": removed by hand
            raise StoreError(f"{self.data_dir}: the version CURRENT.json names is gone ({err})") from None
        return table

    async def _parent_keys(self) -> dict[str, Any]:
        keys = {}
        for parent in self.resource.parents:
            # A parent loaded by the same command: its version not yet pointed to.
            state = (self.pending or {}).get(parent.resource) or self.current.resources.get(parent.resource)
            if state is None:
                keys[parent.placeholder] = None
                continue
            table = await self.db.open_table(state.table, version=state.version)
            keys[parent.placeholder] = (
                (await table.query().select([KEY]).to_arrow()).column(KEY).combine_chunks()
            )
        return keys

    # 1. validate -------------------------------------------------------------------------

    async def _validate(self) -> SpillBuilder:
        import pyarrow as pa

        builder = SpillBuilder(self.resource, self.types)
        self.keys: list[Any] = []
        self.hashes: list[Any] = []
        self.origins: list[tuple[int, Any]] = []  # (file index, lines) per batch
        parents = await self._parent_keys()
        declared = {f.name for f in self.resource.fields}
        done = 0
        if self.engine is not None:
            self.engine.validate(self, builder, parents)
        for index, path in enumerate(self.files if self.engine is None else ()):
            batch: list[tuple[int, dict[str, Any]]] = []
            undeclared: set[str] = set()
            for line, row in read_rows(path, self.resource, self.types):
                if isinstance(row, BadRow):
                    self.problems.add(f"{path}:{line}: {row.message}")
                    continue
                for column in [name for name in row if name not in declared]:
                    del row[column]  # skipped, or reported once per file below
                    if not self.ignore_extra and column not in undeclared:
                        undeclared.add(column)
                        self.problems.add(self._undeclared(path, line, column, declared))
                batch.append((line, row))
                if len(batch) == BATCH_ROWS:
                    self._validate_batch(index, batch, builder, parents)
                    done += len(batch)
                    batch = []
                    self.progress("validate", done, None)
            self._validate_batch(index, batch, builder, parents)
            done += len(batch)
            self.progress("validate", done, None)
        self._check_duplicates()
        if (
            self.state is not None
            and self.new_generation
            and not self.delete_missing
            and not self.problems.total
        ):
            await self._carry_over(builder)
        if self.problems.total:
            raise LoadRejected(self.problems.lines, self.problems.total)
        self.all_keys = pa.chunked_array(self.keys, pa.string())
        self.all_hashes = pa.chunked_array(self.hashes, pa.string())
        return builder

    def _undeclared(self, path: str, line: int, column: str, declared: set[str]) -> str:
        names = sorted(declared)
        close = difflib.get_close_matches(column, names, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}?" if close else "its fields: " + ", ".join(names)
        return (
            f"{path}:{line}: column {column!r} is not a field of collection {self.resource.name!r} "
            f"({hint}); remove it from the file, declare it, or load with --ignore-extra to skip "
            "undeclared columns"
        )

    def _validate_batch(
        self,
        index: int,
        batch: list[tuple[int, dict[str, Any]]],
        builder: SpillBuilder,
        parents: Mapping[str, Any],
    ) -> None:
        import pyarrow as pa
        from pydantic import ValidationError

        if not batch:
            return
        path = self.files[index]
        valid: list[tuple[int, dict[str, Any]]] = []
        for line, row in batch:
            try:
                record = self.model.model_validate(row)
            except ValidationError as err:
                for error in err.errors(include_url=False):
                    self.problems.add(f"{path}:{line}: {_location(error)}{error['msg']}")
                continue
            valid.append((line, record.model_dump(mode="json", exclude_unset=True, by_alias=True)))
        valid = self._check_parents(path, valid, parents)
        keys, hashes, lines = [], [], []
        for line, data in valid:
            if self.problems.total:  # the load fails: only keys matter now (duplicates)
                keys.append(str(data[self.resource.key]))
                hashes.append("")
            else:
                key, digest = builder.add(data)
                keys.append(key)
                hashes.append(digest)
            lines.append(line)
        if not self.problems.total:
            self.spill.write(builder.take())
        self.keys.append(pa.array(keys, pa.string()))
        self.hashes.append(pa.array(hashes, pa.string()))
        self.origins.append((index, pa.array(lines, pa.int64())))

    def _check_parents(
        self, path: str, valid: list[tuple[int, dict[str, Any]]], parents: Mapping[str, Any]
    ) -> list[tuple[int, dict[str, Any]]]:
        import pyarrow as pa
        import pyarrow.compute as pc

        bad: set[int] = set()
        for parent in self.resource.parents:
            keys = parents[parent.placeholder]
            values = pa.array([_key_or_none(data.get(parent.field)) for _, data in valid], pa.string())
            found = pc.is_in(values, value_set=keys).to_pylist() if keys is not None else [False] * len(valid)
            for i, ((line, data), ok) in enumerate(zip(valid, found, strict=True)):
                if not ok and data.get(parent.field) is not None:
                    loaded = "" if keys is not None else f" (nothing of {parent.resource} is loaded yet)"
                    self.problems.add(
                        f"{path}:{line}: {parent.field}: {data[parent.field]!r} is not the key of "
                        f"a loaded {parent.resource} record{loaded}"
                    )
                    bad.add(i)
        return [item for i, item in enumerate(valid) if i not in bad]

    def _check_duplicates(self) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        if not self.keys:
            return
        keys = pa.chunked_array(self.keys, pa.string())
        counts = pa.table({"k": keys}).group_by("k").aggregate([("k", "count")])
        repeated = counts.filter(pc.greater(counts["k_count"], 1))["k"].combine_chunks()
        if not len(repeated):
            return
        first: dict[str, str] = {}
        for (index, lines), chunk in zip(self.origins, self.keys, strict=True):
            mask = pc.is_in(chunk, value_set=repeated).to_pylist()
            for i, hit in enumerate(mask):
                if not hit:
                    continue
                key, where = chunk[i].as_py(), f"{self.files[index]}:{lines[i].as_py()}"
                if key in first:
                    self.problems.add(
                        f"{where}: {self.resource.key}: key {key!r} again (first at {first[key]})"
                    )
                else:
                    first[key] = where

    async def _carry_over(self, builder: SpillBuilder) -> None:
        """A new generation keeps the old one's records that the files do not give, validated
        again against the new declaration."""
        import pyarrow as pa
        import pyarrow.compute as pc
        from pydantic import ValidationError

        given = pa.chunked_array(self.keys, pa.string()).combine_chunks()
        keys, hashes = [], []
        stream = await self.old_table.query().select([KEY, DATA]).to_batches()
        async for batch in stream:
            kept = batch.filter(pc.invert(pc.is_in(batch.column(KEY), value_set=given)))
            for key, text in zip(kept.column(KEY).to_pylist(), kept.column(DATA).to_pylist(), strict=True):
                try:
                    record = self.model.model_validate(json.loads(text))
                except ValidationError as err:
                    for error in err.errors(include_url=False):
                        self.problems.add(
                            f"stored record {key!r}: {_location(error)}{error['msg']} (the declaration "
                            "changed: give this record in the files, or pass --delete-missing)"
                        )
                    continue
                if self.problems.total:
                    continue
                new_key, digest = builder.add(
                    record.model_dump(mode="json", exclude_unset=True, by_alias=True)
                )
                keys.append(new_key)
                hashes.append(digest)
                if len(builder) >= BATCH_ROWS:
                    self.spill.write(builder.take())
            if not self.problems.total:
                self.spill.write(builder.take())
        self.keys.append(pa.array(keys, pa.string()))
        self.hashes.append(pa.array(hashes, pa.string()))
        self.origins.append((-1, pa.nulls(len(keys), pa.int64())))

    # 2. compare --------------------------------------------------------------------------

    async def _compare(self, report: LoadReport) -> Any:
        """Per spill row: its status, and the revision and times it will have. Rows are matched
        to the pointed version's by key with a hash lookup (index_in), in spill order."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        count = len(self.all_keys)
        timestamp = pa.timestamp("us", tz="UTC")
        now = pa.scalar(self.now, timestamp)
        old = None
        if self.old_table is not None:
            old = await self.old_table.query().select([KEY, HASH, REVISION, CREATED, UPDATED]).to_arrow()
        if old is None or old.num_rows == 0:
            status: Any = pa.array(np.full(count, STATUS_NEW, dtype=np.int8))
            revision: Any = pa.array(np.ones(count, dtype=np.int64))
            created = updated = pa.array(np.full(count, np.datetime64(self.now.replace(tzinfo=None), "us")))
        else:
            old_keys = old.column(KEY).combine_chunks()
            at = pc.index_in(self.all_keys, value_set=old_keys)  # null: a new key
            old_hash = old.column(HASH).take(at)
            is_new = pc.is_null(at)
            same = pc.fill_null(pc.equal(self.all_hashes, old_hash), False)
            status = pc.if_else(is_new, STATUS_NEW, pc.if_else(same, STATUS_UNCHANGED, STATUS_CHANGED))
            old_revision = old.column(REVISION).take(at)
            revision = pc.if_else(is_new, 1, pc.if_else(same, old_revision, pc.add(old_revision, 1)))
            created = pc.if_else(is_new, now, old.column(CREATED).take(at))
            updated = pc.if_else(same, old.column(UPDATED).take(at), now)
            if self.delete_missing:
                given = self.all_keys.combine_chunks()
                report.deleted = int(pc.sum(pc.invert(pc.is_in(old_keys, value_set=given))).as_py() or 0)
        status = _flat(status).cast(pa.int8())
        counts = {v: int(pc.sum(pc.equal(status, v)).as_py() or 0) for v in (0, 1, 2)}
        report.inserted = counts[STATUS_NEW]
        report.updated = counts[STATUS_CHANGED]
        report.unchanged = counts[STATUS_UNCHANGED]
        return {
            "status": status,
            REVISION: _flat(revision).cast(pa.int64()),
            CREATED: _flat(created).cast(timestamp),
            UPDATED: _flat(updated).cast(timestamp),
        }

    # 3. write ----------------------------------------------------------------------------

    async def _write(self, statuses: Mapping[str, Any], report: LoadReport) -> tuple[Any, bool]:
        """(the table to point at, whether anything was committed)."""
        import pyarrow as pa

        schema = table_schema(self.resource, self.types, self.dimension)
        if self.new_generation:
            number = max(self.generations.values(), default=0) + 1
            name = table_name(self.resource.name, number)
            reader = pa.RecordBatchReader.from_batches(schema, self._batches(schema, statuses, "all"))
            # "null": a record loaded with --embed later has no vector yet (never a bad one).
            table = await self.db.create_table(name, data=reader, schema=schema, on_bad_vectors="null")
            return table, True
        table = self.old_table
        deleting = self.delete_missing and report.deleted > 0
        if report.inserted + report.updated == 0 and not deleting:
            return table, False
        rows = report.inserted + report.updated + (report.unchanged if deleting else 0)
        if rows == 0:  # every record deleted: nothing to merge from
            await table.delete("true")
            return table, True
        which = "all" if deleting else "changed"
        merge = (
            table.merge_insert(KEY)
            .when_matched_update_all(where=f"target.{HASH} != source.{HASH}")
            .when_not_matched_insert_all()
        )
        if deleting:
            merge = merge.when_not_matched_by_source_delete()
        await merge.execute(
            pa.RecordBatchReader.from_batches(schema, self._batches(schema, statuses, which)),
            on_bad_vectors="null",
        )
        return table, True

    def _batches(self, schema: Any, statuses: Mapping[str, Any], which: str) -> Iterator[Any]:
        """The rows to hand LanceDB, with revision, times and vectors. `which`: "all" rows, or
        the "changed" ones (new or changed). Only new and changed rows are embedded (all rows of
        a new generation), by the vector stage while this generator reads on and LanceDB
        writes; with embed_later they get no vector (null). The unchanged rows a deleting merge
        needs carry zero vectors, which its `where` never writes."""
        import pyarrow as pa
        import pyarrow.compute as pc

        total_embed = (
            self.spill.rows
            if self.new_generation
            else int(pc.sum(pc.less(statuses["status"], STATUS_UNCHANGED)).as_py() or 0)
        )
        total_rows = self.spill.rows if which == "all" else total_embed
        embedded = written = 0
        windows = self._windows(statuses, which)
        if self.resource.meaning and not self.embed_later:
            pairs: Iterator[tuple[Window, Any]] = self._stage(total_embed)(windows)
        else:
            pairs = ((window, None) for window in windows)
        for window, vectors in pairs:
            part: _Rows = window.payload
            columns = part.columns
            rows = len(columns[KEY])
            if self.resource.meaning:
                vector_type = schema.field(VECTOR).type
                if vectors is None:  # embed later: searchable by text now, vectors by `lynxc embed`
                    columns[VECTOR] = pa.nulls(rows, vector_type)
                else:
                    import numpy as np

                    dimension = self.dimension or 0
                    full = np.zeros((rows, dimension), dtype=np.float32)
                    full[part.todo] = vectors
                    if part.known_vectors is not None:
                        full[part.known] = part.known_vectors.reshape(-1, dimension)
                    columns[VECTOR] = _vector_array(full, dimension)
                    embedded += len(part.todo) + len(part.known)
                    self.progress("embed", embedded, total_embed)
            yield pa.RecordBatch.from_arrays([columns[name] for name in schema.names], schema=schema)
            written += rows
            self.progress("write", written, total_rows)
            checkpoint("writing")
        self.embedded_now = embedded

    def _windows(self, statuses: Mapping[str, Any], which: str) -> Iterator[Window]:
        """The spill's rows to write in windows of EMBED_WINDOW: payload (columns, indices of the
        rows to embed), and those rows' meaning texts."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        offset = 0
        for batch in self.spill.batches():
            size = batch.num_rows
            status = statuses["status"].slice(offset, size)
            extra = {name: statuses[name].slice(offset, size) for name in (REVISION, CREATED, UPDATED)}
            offset += size
            if which == "changed":
                keep = pc.less(status, STATUS_UNCHANGED)
                batch = batch.filter(keep)
                status = status.filter(keep)
                extra = {name: array.filter(keep) for name, array in extra.items()}
            for start in range(0, batch.num_rows, EMBED_WINDOW):
                part = batch.slice(start, EMBED_WINDOW)
                columns = {name: part.column(name) for name in part.schema.names}
                columns.update({name: array.slice(start, EMBED_WINDOW) for name, array in extra.items()})
                # Vectors an engine's workers computed (distributed.py); null where they did not.
                given = columns.pop(VECTOR, None)
                texts: list[str] = []
                todo = known = np.zeros(0, dtype=np.int64)
                known_vectors = None
                if self.resource.meaning:
                    meaning = columns.pop(MEANING)
                    if not self.embed_later:
                        todo = (
                            np.arange(part.num_rows)
                            if self.new_generation
                            else np.flatnonzero(
                                pc.less(status.slice(start, EMBED_WINDOW), STATUS_UNCHANGED).to_numpy(
                                    zero_copy_only=False
                                )
                            )
                        )
                        if given is not None:
                            have = pc.is_valid(given).to_numpy(zero_copy_only=False)
                            known = todo[have[todo]]
                            known_vectors = given.take(pa.array(known)).flatten().to_numpy()
                            todo = todo[~have[todo]]
                        texts = meaning.take(pa.array(todo)).to_pylist()
                yield Window(_Rows(columns, todo, known, known_vectors), texts)

    # 3b. indices and old versions ------------------------------------------------------------

    async def _index(self, table: Any, written: bool) -> None:
        from lancedb.index import HnswSq

        from .tokens import fts_index

        self.progress("index", 0, None)
        indexed = {column for index in await table.list_indices() for column in index.columns}
        if self.resource.keyword and TEXT not in indexed:
            await table.create_index(TEXT, config=fts_index())
        rows = await table.count_rows()
        if (
            self.resource.meaning
            and VECTOR not in indexed
            and rows >= self.ann_min_rows
            and not await table.count_rows(f"{VECTOR} IS NULL")  # embed later: built once filled
        ):
            # One HNSW graph per IVF partition of about ANN_PARTITION_ROWS vectors: on 200,000
            # 64-d vectors one graph took 83 s to build, eight 42 s (graphs build in parallel);
            # queries probe up to 20 partitions by default, so recall holds up to ~1M records.
            partitions = max(1, rows // ANN_PARTITION_ROWS)
            await table.create_index(VECTOR, config=HnswSq(distance_type="cosine", num_partitions=partitions))
        for column, config in scalar_indices(self.resource):
            if column not in indexed:
                await table.create_index(column, config=config)
        if written and not self.new_generation:
            # Compacts the load's fragments and folds its rows into the indices; removes nothing.
            await table.optimize(cleanup_older_than=KEEP_FOREVER)
            checkpoint("optimized")
            removable = await self._removable_after(table)
            if removable is not None:  # a second, no-op pass whose only work is the clean-up
                await table.optimize(cleanup_older_than=removable)

    async def _removable_after(self, table: Any) -> timedelta | None:
        """The age beyond which this table's versions may be removed: every version readers may
        still read is younger (the pointed one, those retired within the hour), by a margin for
        the time the clean-up pass takes. None when no version is that old. Ages are measured
        from the latest version's own timestamp, so only Lance's clock counts."""
        keep = {r.version for r in self._retired_now() if r.table == table.name}
        if self.state is not None and self.state.table == table.name:
            keep.add(self.state.version)
        stamps = {v["version"]: v["timestamp"] for v in await table.list_versions()}
        latest = max(stamps.values())
        oldest = min((stamps[v] for v in keep if v in stamps), default=latest)
        if not any(stamp < oldest - CLEANUP_MARGIN for stamp in stamps.values()):
            return None
        return (latest - oldest) + CLEANUP_MARGIN

    def _retired_now(self) -> list[Retired]:
        cutoff = self.now - KEEP_OLD_VERSIONS
        return [r for r in self.current.retired if _parse_time(r.at) > cutoff]

    # 4. point ----------------------------------------------------------------------------

    async def _point_and_drop(self, states: Mapping[str, ResourceState]) -> None:
        """One pointer move to `states` (this load's, or every load of a command), then the
        generations retired over an hour ago dropped: nobody reads them."""
        dropped = self._point(states)
        checkpoint("pointed")
        for name in dropped:
            await self.db.drop_table(name, ignore_missing=True)

    def _point(self, states: Mapping[str, ResourceState]) -> list[str]:
        """Writes the new pointer; returns the tables no longer named by it (to drop)."""
        retired = self._retired_now()
        for name, state in states.items():
            old = self.current.resources.get(name)
            if old is not None and (old.table, old.version) != (state.table, state.version):
                retired.append(Retired(name, old.table, old.version, state.loaded_at))
        resources = {**self.current.resources, **states}
        if self.lease is not None:
            try:
                self.lease.check()  # a writer whose lease ran out never moves the pointer
            except Exception as err:
                raise StoreError(str(err)) from None
        write_current(self.data_dir, Current(resources, tuple(retired)))
        named = {s.table for s in resources.values()} | {r.table for r in retired}
        previous = {s.table for s in self.current.resources.values()} | {
            r.table for r in self.current.retired
        }
        return sorted(previous - named)


def _vector_array(vectors: Any, dimension: int) -> Any:
    import pyarrow as pa

    return pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1), pa.float32()), dimension)


@dataclass(frozen=True)
class _Rows:
    """A window's rows on their way to LanceDB: their columns, the indices of those the vector
    stage embeds (`todo`), and of those an engine's workers already embedded (`known`, with
    `known_vectors` flat in the same order)."""

    columns: dict[str, Any]
    todo: Any
    known: Any
    known_vectors: Any


def _flat(array: Any) -> Any:
    import pyarrow as pa

    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


def _location(error: Mapping[str, Any]) -> str:
    location = ".".join(str(part) for part in error.get("loc", ()))
    return f"{location}: " if location else ""


def _key_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _parse_time(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def scalar_indices(resource: Resource) -> list[tuple[str, Any]]:
    """The scalar indices a resource's table gets: the key (get_record, populate and every page's
    rows are fetched by key) and each filterable column, so filters read an index instead of
    scanning. Measured on 1,000,000 records: a key lookup 44 ms -> 2.4 ms, a two-filter scan
    148 ms -> 83 ms, for 0.1-0.2 s of building per column. Long text has none (contains scans)."""
    from lancedb.index import Bitmap, BTree, LabelList

    indices: list[tuple[str, Any]] = [(KEY, BTree())]
    for path in resource.stored_paths():
        kind = path.field.type
        if kind not in SCALAR_TYPES:
            continue  # text, localized, and arrays of objects (their element count)
        if path.in_array:
            indices.append((path.column, LabelList()))  # array_has on list columns
        elif kind in ("enum", "boolean"):
            indices.append((path.column, Bitmap()))  # few distinct values
        else:
            indices.append((path.column, BTree()))
    return indices
