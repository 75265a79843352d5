"""`lynxc index --engine ray`: chunking and embedding spread over a Ray cluster, one commit per wave.

The driver (the `lynxc index` process, holding the writer lease) lists each source's files once,
hashes them against the index as indexer.py does, and splits the files to (re)index into tasks.
A task carries its files' bytes through Ray's object store, so workers need no disk shared with
the driver; they need the index's store (an object-store URI, or for a local folder the same path
on every node) and `lynxc[ray]` installed. Workers are Ray actors, one per CPU of the cluster
(or the `ray_workers` setting), each loading the embedder once when it starts, not per task; a task
chunks its files, embeds the chunks and writes them as Lance fragments straight into the
source's table, uncommitted, and returns their metadata.

The driver commits the fragments of completed tasks in waves of about WAVE_FILES files: one Lance
commit (an Update operation) adds the wave's fragments and deletes the old rows of the same files,
and of removed files in the first wave, so a reader sees a wave entirely or not at all. Then, as
the local indexer does after a batch, the wave's chunkless files are recorded (store.py). A wave,
not the whole run, so that a driver killed mid-run loses at most the wave in flight and the next
run, skipping files already committed by their content hash, finishes the rest; not per task,
because every commit adds a table version and small fragments that `finish` must compact.

A task that fails (a worker's error, its process or node lost) stops the run before the next
commit: its fragments, and those of its wave's other tasks, are never committed, so never
visible (they stay as unreferenced files, which the cleanup of old versions in `finish` deletes
once they are 7 days old: Lance cannot tell younger ones from a write in progress); the index keeps
its last commit and the next run finishes. Tasks are not retried: a task that failed on its own
input would fail again, and the next run redoes only the uncommitted files.

lance-ray's fragment writer is a Ray Data sink whose committer only appends or overwrites; this
commit must also delete rows, and the model must live in long-lived actors, so the actors call
Lance's own `write_fragments` (what lance-ray's writer calls) and the driver commits an Update.

Row ids and contents are the local indexer's (indexer.file_rows, store._arrow; a text's vector
does not depend on its batch), so both engines build the same index from the same files.

Credentials: workers started by `ray start` do not share the driver's environment. The storage
options (the `index_storage` settings over the driver's AWS_/GOOGLE_/AZURE_ environment, as
object_store keys) go to each actor as a constructor argument through Ray's object store, never
as a runtime_env variable (Ray's dashboard and logs show those), and are never printed.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..raycluster import RayUnavailable, connect
from ..raycluster import one_line as _one_line
from .indexer import BATCH_FILES, IndexReport, Progress, _read, file_rows, plan
from .location import IndexLocation
from .sources import Source, content_hash
from .store import ANN_MIN_ROWS, Store, sql_quote

WORKERS_ENV = "LYNXC_RAY_WORKERS"  # the `ray_workers` setting, given as the environment
# Files committed together: a killed driver loses at most this many files' work.
WAVE_FILES = 5 * BATCH_FILES
# A task holds at most TASK_FILES files and about TASK_BYTES of them (a file is never split), and
# fewer when there are few files: each worker gets about TASKS_PER_WORKER tasks, so one slow task
# does not leave the others idle at the end.
TASK_FILES = 50
TASK_BYTES = 1024 * 1024
TASKS_PER_WORKER = 4
# Tasks queued per worker: the next one is there when a worker finishes, and the bytes in flight
# stay bounded (TASK_BYTES x 2 per worker).
QUEUED_PER_WORKER = 2
# No task finishing for this long means a hung worker: the run stops (and its lease goes) rather
# than hold the index forever. A task (50 files, 1 MB) takes seconds; a model load, a minute.
TASK_SECONDS = 600
START_SECONDS = 300  # the workers starting and loading the model (a busy cluster queues them)
_ENV_PREFIXES = ("AWS_", "GOOGLE_", "AZURE_")


@dataclass(frozen=True)
class Task:
    source: Source
    uri: str  # the table's Lance dataset
    files: list[tuple[str, bytes | None]]  # None: gone since it was hashed (its old rows go)


@dataclass
class TaskResult:
    paths: list[str]
    fragments: list[Any]  # lance FragmentMetadata, written, not committed
    chunkless: dict[str, str]
    chunks: int
    pid: int  # the worker's process and how often it loaded the model (once)
    loads: int


@dataclass
class RayIndexReport(IndexReport):
    tasks: int = 0
    commits: int = 0
    workers: dict[int, int] = field(default_factory=dict)  # worker pid -> model loads


_LOADS = 0  # in a worker process: the times it loaded the embedder


class IndexWorker:
    """A Ray actor (made one by `index_with_ray`): the embedder loaded once, then any number of tasks."""

    def __init__(self, embedder: str, storage_options: dict[str, str] | None):
        global _LOADS
        from lynxc.runtime.backends.retrieval.embedders import get_embedder

        from .memory import tune_malloc

        tune_malloc()
        self.embedder = get_embedder(embedder)
        self.embedder.embed(["load the model now"])  # minilm loads with its first text
        _LOADS += 1
        self.storage_options = storage_options

    def ready(self) -> int:
        return os.getpid()

    def run(self, task: Task) -> TaskResult:
        import lance

        from .memory import release_free_memory
        from .store import _arrow

        rows = []
        chunkless = {}
        for rel, data in task.files:
            if data is None:
                continue
            found = file_rows(task.source, rel, data)
            if not found:
                chunkless[rel] = content_hash(data)
            rows += found
        fragments = []
        if rows:
            vectors = self.embedder.embed([f"{row.symbol}\n{row.text}" for row in rows])
            fragments = lance.fragment.write_fragments(
                _arrow(rows, vectors), task.uri, mode="append", storage_options=self.storage_options
            )
        release_free_memory()
        return TaskResult(
            [rel for rel, _ in task.files], fragments, chunkless, len(rows), os.getpid(), _LOADS
        )


def index_with_ray(
    sources: Mapping[str, Source],
    only: str | None,
    store: Store,
    settings: Mapping[str, Any],
    address: str | None,
    progress_for: Callable[[str], Progress],
) -> list[RayIndexReport]:
    """Index each source (or only `only`) with workers of the Ray cluster at `address` (default:
    RAY_ADDRESS, else a local Ray). Raises RayUnavailable when Ray cannot be used."""
    from lynxc.runtime.backends.retrieval.embedders import DIMENSIONS

    wanted_workers = settings.get("ray_workers")
    ray = _connect(address)
    try:
        options = worker_storage_options(store.location)
        embedder = settings.get("embedder", "minilm")
        workers = _start_workers(ray, embedder, options, wanted_workers)
        reports = []
        for name, source in sources.items():
            if only and name != only:
                continue
            reports.append(
                _index_source(
                    ray,
                    workers,
                    source,
                    store,
                    DIMENSIONS[embedder],
                    options,
                    progress_for(name),
                    settings.get("ann_min_rows", ANN_MIN_ROWS),
                )
            )
        return reports
    finally:
        ray.shutdown()  # this driver's connection (and its actors); the cluster stays


def worker_storage_options(location: IndexLocation) -> dict[str, str] | None:
    """The store's options for a process without the driver's environment: the object-store
    variables of this environment as object_store keys (what object_store's from_env reads), the
    `index_storage` settings over them. None for a local folder."""
    if not location.remote:
        return None
    given = {_canonical(k) for k in location.options}
    # An environment variable another name of a setting given (AWS_ENDPOINT_URL for `endpoint`)
    # is left out: both would reach Lance, and it might pick the environment's.
    options = {
        k.lower(): v
        for k, v in os.environ.items()
        if k.startswith(_ENV_PREFIXES) and _canonical(k) not in given
    }
    options.update(location.options)
    return options


# object_store's aliases of one setting (AmazonS3ConfigKey, GoogleConfigKey, AzureConfigKey).
_ALIASES = {"endpoint_url": "endpoint", "default_region": "region", "token": "session_token"}


def _canonical(key: str) -> str:
    name = key.lower()
    for prefix in ("aws_", "google_", "azure_storage_", "azure_"):
        name = name.removeprefix(prefix)
    return _ALIASES.get(name, name)


def _connect(address: str | None) -> Any:
    return connect(address, "lynxc index --engine ray")


def _start_workers(ray: Any, embedder: str, options: dict[str, str] | None, wanted: int | None) -> list[Any]:
    from ray.exceptions import GetTimeoutError

    cpus = float(ray.cluster_resources().get("CPU", 1))
    count = wanted or max(1, int(cpus))
    # One CPU each; more workers than CPUs share them (else the extra ones would wait forever).
    actor = ray.remote(num_cpus=min(1.0, cpus / count), max_restarts=0, max_task_retries=0)(IndexWorker)
    options_ref = ray.put(options)  # by reference: never a runtime_env variable (see above)
    workers = [actor.remote(embedder, options_ref) for _ in range(count)]
    try:
        ray.get([w.ready.remote() for w in workers], timeout=START_SECONDS)
    except GetTimeoutError:
        raise RayUnavailable(
            f"the Ray cluster did not start {count} index workers within {START_SECONDS} s "
            f"(it has {cpus:g} CPUs; set ray_workers to use fewer)"
        ) from None
    except Exception as err:
        raise RayUnavailable(f"a Ray index worker failed to start: {_one_line(err)}") from None
    return workers


def _index_source(
    ray: Any,
    workers: list[Any],
    source: Source,
    store: Store,
    dimension: int,
    options: dict[str, str] | None,
    progress: Progress,
    ann_min_rows: int,
) -> RayIndexReport:
    report = RayIndexReport(source.name)
    report.files, todo, removed = plan(source, store)
    report.removed = len(removed)
    store.guard()  # before the table is created, as the local indexer
    uri = store.table(source.name, dimension).to_lance().uri
    per_task = max(1, min(TASK_FILES, math.ceil(len(todo) / (len(workers) * TASKS_PER_WORKER))))
    tasks = _tasks(source, uri, todo, per_task)
    wave: list[TaskResult] = []
    pending = removed  # the removed files' rows go with the first commit
    for result in _run(ray, workers, tasks, source.name):
        report.tasks += 1
        report.changed += len(result.paths)
        report.chunks += result.chunks
        report.workers[result.pid] = result.loads
        wave.append(result)
        if sum(len(r.paths) for r in wave) >= WAVE_FILES:
            report.commits += _commit(store, source.name, wave, pending, options)
            wave, pending = [], []
        progress(report.changed, len(todo), "files")
    report.commits += _commit(store, source.name, wave, pending, options)
    # Also when nothing changed: a run killed after its last commit left the indices behind.
    progress(len(todo), len(todo), "indices")
    store.finish(source.name, ann_min_rows)
    return report


def _tasks(source: Source, uri: str, todo: list[tuple[str, str]], per_task: int) -> Iterator[Task]:
    """The tasks, each file read as its task is handed out (never all the bytes at once)."""
    files: list[tuple[str, bytes | None]] = []
    size = 0
    for rel, full in todo:
        data = _read(full)
        if files and (len(files) >= per_task or size + len(data or b"") > TASK_BYTES):
            yield Task(source, uri, files)
            files, size = [], 0
        files.append((rel, data))
        size += len(data or b"")
    if files:
        yield Task(source, uri, files)


def _run(ray: Any, workers: list[Any], tasks: Iterator[Task], source: str) -> Iterator[TaskResult]:
    """The tasks' results as they complete; each worker has up to QUEUED_PER_WORKER tasks at a time."""
    queued = [0] * len(workers)
    running: dict[Any, int] = {}  # result ref -> worker
    more = True
    while more or running:
        while more and len(running) < QUEUED_PER_WORKER * len(workers):
            task = next(tasks, None)
            if task is None:
                more = False
                break
            worker = queued.index(min(queued))
            running[workers[worker].run.remote(task)] = worker
            queued[worker] += 1
        if not running:
            break
        done, _ = ray.wait(list(running), num_returns=1, timeout=TASK_SECONDS)
        if not done:
            for other in running:
                ray.cancel(other, force=True)
            raise RayUnavailable(
                f"no Ray index task on {source!r} finished within {TASK_SECONDS} s (a worker hangs?); "
                "nothing of the tasks in flight was committed: run again to finish"
            )
        for ref in done:
            queued[running.pop(ref)] -= 1
            try:
                result = ray.get(ref)
            except Exception as err:
                for other in running:
                    ray.cancel(other, force=False)
                raise RayUnavailable(
                    f"a Ray index worker failed on {source!r} ({_one_line(err)}); the files of its wave "
                    "in flight were not committed and the index holds its last commit: run again to finish"
                ) from None
            yield result


def _commit(
    store: Store, source: str, wave: list[TaskResult], removed: list[str], options: dict[str, str] | None
) -> int:
    """One Lance commit: the wave's fragments added, the old rows of its files and of `removed`
    deleted; then the chunkless files' records. The number of table commits made (0 or 1)."""
    import lance

    paths = sorted({p for r in wave for p in r.paths} | set(removed))
    if not paths:
        return 0
    condition = "path IN (" + ", ".join(sql_quote(p) for p in paths) + ")"
    new = [fragment for r in wave for fragment in r.fragments]
    dataset = store.table(source).to_lance()
    hits = dataset.to_table(columns=["path"], filter=condition, with_row_address=True)
    touched = sorted({address >> 32 for address in hits["_rowaddr"].to_pylist()})
    updated, emptied = [], []
    for fragment_id in touched:
        fragment = dataset.get_fragment(fragment_id).delete(condition)  # not committed yet
        if fragment is None:
            emptied.append(fragment_id)
        else:
            updated.append(fragment)
    made = 0
    if new or touched:
        store.guard()
        operation = lance.LanceOperation.Update(
            removed_fragment_ids=emptied, updated_fragments=updated, new_fragments=new
        )
        # Through the dataset the driver opened with the index's own options, so the commit lands
        # in the store the table, the lease and the deletion files use.
        lance.LanceDataset.commit(dataset, operation, read_version=dataset.version)
        made = 1
    chunkless = {rel: digest for r in wave for rel, digest in r.chunkless.items()}
    store._record(source, condition, chunkless)
    return made
