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
   changed records on the way (every record of a new table generation); then the FTS index on
   `_text` and, from ann_min_rows records, the vector index; `optimize` folds new rows into the
   indices and removes versions nobody can read any more.
4. point: CURRENT.json names the new version (store.py). Only now do readers see the load.

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

BATCH_ROWS = 10_000
EMBED_CHUNK = 512  # texts per embedder call: progress moves, memory stays small
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
    engine: Any = None,
) -> LoadReport:
    """Load `files` into resource `resource_name` of the server `definition` (a
    ServerDefinition). `ignore_extra` skips columns the resource does not declare instead of
    refusing them. `settings` are the server's (`data_dir`, `embedder`); `embedder`
    overrides the one the settings name (tests count its calls). Raises LoadRejected (bad
    rows), rows.FileError (an unreadable file), store.LoadBusy, store.StoreError, KeyError
    (no such resource)."""
    started = time.monotonic()
    resources = definition.records()
    resource = resources.by_name(resource_name)
    if resource is None:
        raise KeyError(resource_name)
    for path in files:
        check_readable(path)
    model = definition.load_record_model(resource)
    run = _Load(
        resources=resources,
        resource=resource,
        model=model,
        files=list(files),
        delete_missing=delete_missing,
        ignore_extra=ignore_extra,
        data_dir=location_from_settings(settings),
        embedder_name=(embedder.name if embedder is not None else settings.get("embedder", "minilm")),
        embedder=embedder,
        progress=progress or (lambda stage, done, total: None),
        ann_min_rows=ann_min_rows,
        engine=engine,
    )
    with load_lock(run.data_dir) as run.lease:
        report = asyncio.run(run.run())
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
            checkpoint("written")
            await self._index(table, written)
            checkpoint("indexed")
            report.table = table.name
            report.version = await table.version()
            report.records = await table.count_rows()
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
            )
            dropped = self._point(new_state)
            checkpoint("pointed")
            for name in dropped:  # generations retired over an hour ago: nobody reads them
                await self.db.drop_table(name, ignore_missing=True)
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

            self.embedder = get_embedder(self.embedder_name)
        return self.embedder

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
            state = self.current.resources.get(parent.resource)
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
            f"{path}:{line}: column {column!r} is not a field of resource {self.resource.name!r} "
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
            table = await self.db.create_table(name, data=reader, schema=schema)
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
        await merge.execute(pa.RecordBatchReader.from_batches(schema, self._batches(schema, statuses, which)))
        return table, True

    def _batches(self, schema: Any, statuses: Mapping[str, Any], which: str) -> Iterator[Any]:
        """The rows to hand LanceDB, with revision, times and vectors. `which`: "all" rows, or
        the "changed" ones (new or changed). Only new and changed rows are embedded (all rows of
        a new generation); the unchanged rows a deleting merge needs carry zero vectors, which
        its `where` never writes."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        embed_all = self.new_generation
        total_embed = (
            self.spill.rows
            if embed_all
            else int(pc.sum(pc.less(statuses["status"], STATUS_UNCHANGED)).as_py() or 0)
        )
        total_rows = self.spill.rows if which == "all" else total_embed
        embedded = written = offset = 0
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
            if batch.num_rows == 0:
                continue
            columns = {name: batch.column(name) for name in batch.schema.names}
            columns.update(extra)
            if self.resource.meaning:
                texts = columns.pop(MEANING)
                vectors = np.zeros((batch.num_rows, self.dimension or 0), dtype=np.float32)
                todo = (
                    np.arange(batch.num_rows)
                    if embed_all
                    else np.flatnonzero(pc.less(status, STATUS_UNCHANGED).to_numpy(zero_copy_only=False))
                )
                if VECTOR in columns:  # computed by the engine's workers (null: not yet)
                    given = columns[VECTOR]
                    have = pc.is_valid(given).to_numpy(zero_copy_only=False)
                    if have.any():
                        vectors[have] = given.filter(have).flatten().to_numpy().reshape(-1, self.dimension)
                    embedded += int(have[todo].sum())
                    todo = todo[~have[todo]]
                for start in range(0, len(todo), EMBED_CHUNK):
                    part = todo[start : start + EMBED_CHUNK]
                    vectors[part] = self._embedder().embed(texts.take(pa.array(part)).to_pylist())
                    embedded += len(part)
                    self.progress("embed", embedded, total_embed)
                columns[VECTOR] = pa.FixedSizeListArray.from_arrays(
                    pa.array(vectors.reshape(-1), pa.float32()), self.dimension
                )
            yield pa.RecordBatch.from_arrays([columns[name] for name in schema.names], schema=schema)
            written += batch.num_rows
            self.progress("write", written, total_rows)
            checkpoint("writing")

    # 3b. indices and old versions ------------------------------------------------------------

    async def _index(self, table: Any, written: bool) -> None:
        from lancedb.index import FTS, HnswSq

        self.progress("index", 0, None)
        indexed = {column for index in await table.list_indices() for column in index.columns}
        if self.resource.keyword and TEXT not in indexed:
            await table.create_index(TEXT, config=FTS(stem=True, remove_stop_words=True))
        rows = await table.count_rows()
        if self.resource.meaning and VECTOR not in indexed and rows >= self.ann_min_rows:
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

    def _point(self, state: ResourceState) -> list[str]:
        """Writes the new pointer; returns the tables no longer named by it (to drop)."""
        retired = self._retired_now()
        old = self.state
        if old is not None and (old.table, old.version) != (state.table, state.version):
            retired.append(Retired(self.resource.name, old.table, old.version, state.loaded_at))
        resources = {**self.current.resources, self.resource.name: state}
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
