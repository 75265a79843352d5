"""`lynxc load --engine ray`: parsing, validation and embedding spread over a Ray cluster; the
commit stays the local load's (loader.py): compare, one write, the indices, ONE pointer move.

The driver (the `lynxc load` process, holding the store's load lock or lease) cuts the input files
into blocks and ships each block's bytes through Ray's object store, so workers need no disk
shared with the driver (nor the generated server: they get the resources' declaration and the
record model's source as text). A JSON Lines file (`.gz` too: the driver decompresses) is cut at
line boundaries into blocks of about `block_bytes`, each carrying the number of its first line;
a `.json`, `.csv` or `.parquet` file travels whole as one block.

Workers are Ray actors, one per CPU of the cluster (or `workers`), each loading the embedder once
when it starts. A block's worker reads its rows (rows.py), validates them with the loader's own
code (`_Load._validate_batch`: the same model, the same parent-key check, the same problem lines
`file:line: message`), turns the valid ones into a spill batch (SpillBuilder) and embeds the
batch's meaning texts, so the batch comes back carrying its `_vector` column. The driver takes the
blocks' results in file order (a bounded number in flight), writes their batches to the load's
spill and its keys, hashes and lines to the load's bookkeeping: from there on the local load runs
unchanged (duplicate keys, carried-over records, compare, write, index, point), and `_batches`
uses the vectors the batches carry instead of embedding them again.

The seam in loader.py is `engine`: `_Load.engine.validate(run, builder, parents)` replaces the
read-and-validate loop over the files, and `engine.spill_schema` adds the `_vector` column to the
spill's. Every worker embeds every valid row of its blocks (it cannot know which are unchanged
without the stored hashes): a reload that changes few records pays for embedding them all, which
the local engine does not.

A failed task (a worker's error, its process or node lost) stops the load before anything is
written: the pointer and every table stay on the previous version, the message is one line, the
exit code 1. Tasks are not retried: a task that failed on its input would fail again.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..raycluster import RayUnavailable, connect, one_line
from .columns import MEANING, VECTOR
from .rows import FileError, file_format

WORKERS_ENV = "LYNXC_RAY_WORKERS"  # the number of load workers, when not given
# A JSON Lines block: about this many bytes (never less than a line); fewer when the input is
# small, so that each worker gets about BLOCKS_PER_WORKER blocks and none waits at the end.
BLOCK_BYTES = 4 * 1024 * 1024
MIN_BLOCK_BYTES = 64 * 1024
BLOCKS_PER_WORKER = 4
QUEUED_PER_WORKER = 2  # blocks in flight per worker: bytes in flight stay bounded
START_SECONDS = 300  # the workers starting and loading the model (a busy cluster queues them)
TASK_SECONDS = 600  # no block finishing for this long: a hung worker, the load stops


class RayLoadFailed(Exception):
    """A Ray load worker failed: nothing was written."""


@dataclass(frozen=True)
class Block:
    index: int  # the file's index among the load's files
    path: str  # as given on the command line: problems name it
    first_line: int  # the number of the block's first line, minus one (JSON Lines blocks)
    data: bytes
    whole: bool  # the whole file, in its own format (else JSON Lines text)


@dataclass
class BlockResult:
    problems: list[tuple[Any, ...]]  # ("line", text) | ("undeclared", line, column), in row order
    more_problems: int  # problems beyond those listed (the loader's MAX_PROBLEMS cap)
    keys: list[Any]  # pyarrow string arrays, one per validated batch
    hashes: list[Any]
    lines: list[Any]  # pyarrow int64 arrays
    batches: list[Any]  # spill batches carrying _vector (none when the block had problems)
    locales: set[str]
    file_error: str | None = None
    pid: int = 0
    loads: int = 0


@dataclass
class RayLoadStats:
    blocks: int = 0
    workers: dict[int, int] = field(default_factory=dict)  # worker pid -> model loads


_LOADS = 0  # in a worker process: the times it loaded the embedder


class LoadWorker:
    """A Ray actor (made one by RayEngine): the model and the embedder loaded once, then blocks."""

    def __init__(self, spec: Mapping[str, Any]):
        global _LOADS
        from lynxc.runtime.definition import load_module_from_source

        from .columns import key_types
        from .definitions import parse_resources

        self.resources = parse_resources(spec["resources"])
        self.resource = self.resources.by_name(spec["resource"])
        module = load_module_from_source(spec["module"], Path(spec["model_path"]), spec["model_source"])
        self.model = module.Record
        self.types = key_types(self.resources)
        self.ignore_extra = spec["ignore_extra"]
        self.dimension = spec["dimension"]
        self.embedder = None
        if self.resource.meaning and spec["embed"]:  # not with --embed later
            from lynxc.runtime.backends.retrieval.embedders import get_embedder

            self.embedder = get_embedder(spec["embedder"])
            self.embedder.embed(["load the model now"])  # minilm loads with its first text
            _LOADS += 1

    def ready(self) -> int:
        return os.getpid()

    def run(self, block: Block, parents: Mapping[str, Any]) -> BlockResult:
        from .loader import BATCH_ROWS

        run, builder = self._run(block)
        declared = {f.name for f in self.resource.fields}
        problems: list[tuple[Any, ...]] = []
        undeclared: set[str] = set()
        batch: list[tuple[int, dict[str, Any]]] = []
        try:
            for line, row in self._rows(block):
                if not isinstance(row, dict):
                    run.problems.add(f"{block.path}:{line}: {row.message}")
                    continue
                for column in [name for name in row if name not in declared]:
                    del row[column]
                    if not self.ignore_extra and column not in undeclared:
                        undeclared.add(column)
                        problems += self._drain(run)
                        problems.append(("undeclared", line, column))
                batch.append((line, row))
                if len(batch) == BATCH_ROWS:
                    run._validate_batch(0, batch, builder, parents)
                    batch = []
            run._validate_batch(0, batch, builder, parents)
        except FileError as err:
            return BlockResult([], 0, [], [], [], [], set(), file_error=str(err), pid=os.getpid())
        problems += self._drain(run)
        failed = bool(problems) or run.problems.total > 0
        batches = [] if failed else [self._embed(b) for b in run.spill.batches]
        return BlockResult(
            problems,
            run.problems.total - len(run.problems.lines),
            run.keys,
            run.hashes,
            [lines for _, lines in run.origins],
            batches,
            set(builder.locales),
            pid=os.getpid(),
            loads=_LOADS,
        )

    def _run(self, block: Block) -> tuple[Any, Any]:
        """A loader run that only validates: the loader's own `_validate_batch` on this block."""
        from .columns import SpillBuilder
        from .loader import _Load

        run = _Load(
            resources=self.resources,
            resource=self.resource,
            model=self.model,
            files=[block.path],
            delete_missing=False,
            ignore_extra=self.ignore_extra,
            data_dir=Path(tempfile.gettempdir()),
            embedder_name="",
            embedder=None,
            progress=lambda stage, done, total: None,
            ann_min_rows=0,
        )
        run.spill = _Batches()
        run.keys, run.hashes, run.origins = [], [], []
        return run, SpillBuilder(self.resource, self.types)

    @staticmethod
    def _drain(run: Any) -> list[tuple[Any, ...]]:
        taken = [("line", text) for text in run.problems.lines[getattr(run, "_shown", 0) :]]
        run._shown = len(run.problems.lines)
        return taken

    def _rows(self, block: Block) -> Iterator[tuple[int, Any]]:
        from .rows import _jsonl_rows, read_rows

        if not block.whole:
            for line, row in _jsonl_rows(io.BytesIO(block.data)):
                yield block.first_line + line, row
            return
        # Another format: the file's bytes in a file of the same name in a folder of its own.
        with tempfile.TemporaryDirectory(prefix="lynxc-load-") as folder:
            local = os.path.join(folder, os.path.basename(block.path))
            with open(local, "wb") as handle:
                handle.write(block.data)
            try:
                yield from read_rows(local, self.resource, self.types)
            except FileError as err:
                raise FileError(str(err).replace(local, block.path)) from None

    def _embed(self, batch: Any) -> Any:
        import numpy as np
        import pyarrow as pa

        from .loader import EMBED_CHUNK

        if self.embedder is None:
            return batch
        texts = batch.column(MEANING).to_pylist()
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(texts), EMBED_CHUNK):
            vectors[start : start + EMBED_CHUNK] = self.embedder.embed(texts[start : start + EMBED_CHUNK])
        flat = pa.array(vectors.reshape(-1), pa.float32())
        column = pa.FixedSizeListArray.from_arrays(flat, self.dimension)
        # The texts are embedded: they go back as nulls (the loader embeds only rows without a
        # vector), a third less to send.
        at = batch.schema.get_field_index(MEANING)
        batch = batch.set_column(at, batch.schema.field(at), pa.nulls(batch.num_rows, pa.string()))
        return batch.append_column(pa.field(VECTOR, column.type), column)


class _Batches:
    """Stands in for the loader's spill in a worker: the batches, in memory, to send back."""

    def __init__(self) -> None:
        self.batches: list[Any] = []

    def write(self, batch: Any) -> None:
        if batch.num_rows:
            self.batches.append(batch)


class RayEngine:
    """The loader's `engine` (see the module docstring): connects when the load starts validating
    (after it holds the store), and leaves the cluster in `close`."""

    def __init__(self, definition: Any, address: str | None = None, workers: int | None = None):
        self.definition = definition
        self.address = address
        self.wanted = workers or (int(os.environ[WORKERS_ENV]) if os.environ.get(WORKERS_ENV) else None)
        self.ray: Any = None
        self.stats = RayLoadStats()

    def spill_schema(self, schema: Any, dimension: int | None) -> Any:
        """The spill's schema with the vectors the workers computed."""
        import pyarrow as pa

        if dimension is None:
            return schema
        return schema.append(pa.field(VECTOR, pa.list_(pa.float32(), dimension)))

    def validate(self, run: Any, builder: Any, parents: Mapping[str, Any]) -> None:
        """Every file's rows read, validated and embedded by the workers; their results written to
        `run`'s spill and bookkeeping as the local loop would. Raises FileError, RayLoadFailed,
        RayUnavailable."""
        import pyarrow as pa

        from .loader import BATCH_ROWS

        ray = self.connect()
        workers = self._start(run)
        parents_ref = ray.put(dict(parents))
        blocks = _blocks(run.files, len(workers))
        undeclared: dict[int, set[str]] = {}
        pending: list[Any] = []  # the blocks' batches, written as one of about BATCH_ROWS rows
        done = 0
        for block, result in self._results(workers, blocks, parents_ref):
            self.stats.blocks += 1
            self.stats.workers[result.pid] = result.loads
            if result.file_error is not None:
                raise FileError(result.file_error)
            declared = {f.name for f in run.resource.fields}
            for problem in result.problems:
                if problem[0] == "line":
                    run.problems.add(problem[1])
                elif problem[2] not in undeclared.setdefault(block.index, set()):
                    undeclared[block.index].add(problem[2])
                    run.problems.add(run._undeclared(block.path, problem[1], problem[2], declared))
            run.problems.total += result.more_problems  # counted, past the listed ones
            run.keys += result.keys
            run.hashes += result.hashes
            run.origins += [(block.index, pa.array(lines, pa.int64())) for lines in result.lines]
            builder.locales |= result.locales
            if not run.problems.total:
                pending += result.batches
                if sum(b.num_rows for b in pending) >= BATCH_ROWS:
                    _write_together(run.spill, pending)
            done += sum(len(k) for k in result.keys)
            run.progress("validate", done, None)
        if not run.problems.total:
            _write_together(run.spill, pending)

    def connect(self) -> Any:
        """Ray, joined once. Before the load opens its store where Ray may start a local cluster:
        forking after LanceDB's runtime started risks a deadlock (LanceDB warns so)."""
        if self.ray is None:
            self.ray = connect(self.address, "lynxc load --engine ray")
        return self.ray

    def close(self) -> None:
        if self.ray is not None:
            self.ray.shutdown()  # this driver's connection and its actors; the cluster stays
            self.ray = None

    def _start(self, run: Any) -> list[Any]:
        from ray.exceptions import GetTimeoutError

        ray = self.ray
        definition = self.definition
        resource = run.resource
        relative = f"models/{resource.model}.py"
        spec = {
            "resources": definition.read_checked(definition.collections),
            "resource": resource.name,
            "module": f"lynxc_generated.ray_load.models.{resource.model}",
            "model_path": str(definition.folder / relative),
            "model_source": definition.read_checked(relative),
            "ignore_extra": run.ignore_extra,
            "embedder": run.embedder_name,
            "dimension": run.dimension,
            "embed": not run.embed_later,
        }
        cpus = float(ray.cluster_resources().get("CPU", 1))
        count = self.wanted or max(1, int(cpus))
        actor = ray.remote(num_cpus=min(1.0, cpus / count), max_restarts=0, max_task_retries=0)(LoadWorker)
        spec_ref = ray.put(spec)
        workers = [actor.remote(spec_ref) for _ in range(count)]
        try:
            ray.get([w.ready.remote() for w in workers], timeout=START_SECONDS)
        except GetTimeoutError:
            raise RayUnavailable(
                f"the Ray cluster did not start {count} load workers within {START_SECONDS} s "
                f"(it has {cpus:g} CPUs; set {WORKERS_ENV} to use fewer); nothing loaded"
            ) from None
        except Exception as err:
            message = f"a Ray load worker failed to start: {one_line(err)}; nothing loaded"
            raise RayUnavailable(message) from None
        return workers

    def _results(
        self, workers: list[Any], blocks: Iterator[Block], parents_ref: Any
    ) -> Iterator[tuple[Block, BlockResult]]:
        """Each block's result, in the blocks' order, with up to QUEUED_PER_WORKER per worker in
        flight (handed to the least busy worker)."""
        ray = self.ray
        queued = [0] * len(workers)
        pending: list[tuple[Block, Any, int]] = []
        more = True
        while more or pending:
            while more and len(pending) < QUEUED_PER_WORKER * len(workers):
                block = next(blocks, None)
                if block is None:
                    more = False
                    break
                worker = queued.index(min(queued))
                pending.append((block, workers[worker].run.remote(block, parents_ref), worker))
                queued[worker] += 1
            if not pending:
                return
            block, ref, worker = pending.pop(0)
            ready, _ = ray.wait([ref], timeout=TASK_SECONDS)
            try:
                if not ready:
                    raise TimeoutError(f"no result within {TASK_SECONDS} s (a worker hangs?)")
                result = ray.get(ref)
            except Exception as err:
                for _, other, _ in pending:  # (the driver's shutdown ends the rest)
                    with contextlib.suppress(Exception):
                        ray.cancel(other)
                where = f"{block.path}" + (f" from line {block.first_line + 1}" if not block.whole else "")
                raise RayLoadFailed(
                    f"a Ray load worker failed on {where} ({one_line(err)}); nothing loaded, the store "
                    "keeps its previous version"
                ) from None
            queued[worker] -= 1
            yield block, result


def _write_together(spill: Any, batches: list[Any]) -> None:
    """`batches` (emptied) written to the spill as one: blocks are small (a few hundred records),
    and Lance stores rows handed to it in small batches less compactly (2.3x the bytes on disk,
    measured on 20,000 PEP-sized records)."""
    import pyarrow as pa

    if batches:
        together = pa.Table.from_batches(batches).combine_chunks().to_batches()
        for batch in together:
            spill.write(batch)
        batches.clear()


def _blocks(files: list[str], workers: int) -> Iterator[Block]:
    """The files as blocks, read as they are handed out (never all the bytes at once)."""
    from .rows import _open_binary

    total = sum(os.path.getsize(path) * (4 if path.endswith(".gz") else 1) for path in files)
    size = max(MIN_BLOCK_BYTES, min(BLOCK_BYTES, total // max(1, workers * BLOCKS_PER_WORKER)))
    for index, path in enumerate(files):
        if file_format(path) != "jsonl":
            with open(path, "rb") as handle:
                yield Block(index, path, 0, handle.read(), True)
            continue
        try:
            with _open_binary(path) as handle:
                lines = 0
                rest = b""
                while True:
                    chunk = handle.read(size)
                    data = rest + chunk
                    if not chunk:
                        if data:  # a last line without its newline
                            yield Block(index, path, lines, data, False)
                        break
                    cut = data.rfind(b"\n") + 1
                    rest = data[cut:]
                    if cut:  # else no line ends in it yet: read on
                        yield Block(index, path, lines, data[:cut], False)
                        lines += data.count(b"\n", 0, cut)
        except (OSError, EOFError) as err:
            from .rows import _reason

            raise FileError(f"{path}: {_reason(err)}") from None
