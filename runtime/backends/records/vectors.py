"""The loader's embedding stage: windows of rows with the texts to embed -> their vectors, in order.

The interface is `VectorStage`: a callable that takes an iterator of `Window`s (an opaque
payload, here the rows to write, and the texts to embed) and yields each window back with a
float32 array of the texts' vectors, in the order received. The loader builds the windows from
its spill and writes what comes back; an engine that embeds elsewhere (a cluster) hands the
loader a stage that returns vectors it already has.

`ParallelVectors` is the local stage. Within a window the texts are sorted by (estimated) token
count and cut into jobs of at most JOB_TOKENS padded tokens (`token_batches`, as lynx-mcp's
indexer plans its batches), so the embedder pads little; jobs run on `workers` threads while the
caller reads the spill and LanceDB writes (onnxruntime releases the GIL, so minilm uses both
cores; each call runs one onnxruntime thread, so the two stages do not oversubscribe two cores).
At most `ahead` windows are in flight: memory stays bounded whatever the load's size. A text's
vector does not depend on its job (minilm masks its padding; static pools each text alone), so
the vectors are those of one text at a time.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

# Texts of a window are embedded by jobs of at most this many padded tokens (and MOST_TEXTS
# texts): large enough that a job's fixed cost is small, small enough that two workers share
# a window.
JOB_TOKENS = 8192
MOST_TEXTS = 512
CHARS_PER_TOKEN = 4  # a token estimate from the text's length: jobs only need a rough sort
MAX_TOKENS = 256  # the embedders' truncation: a longer text costs no more


@dataclass
class Window:
    payload: Any  # the caller's: handed back with the vectors
    texts: Sequence[str]


_Pending = tuple[Window, list[tuple[list[int], "Future[Any]"]]]


class VectorStage(Protocol):
    def __call__(self, windows: Iterator[Window]) -> Iterator[tuple[Window, Any]]: ...


def default_workers() -> int:
    """Embedding threads for a load: the cores (at most two: the caller's stage needs one too)."""
    return max(1, min(2, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 2))


def plan_jobs(texts: Sequence[str], budget: int = JOB_TOKENS, most: int = MOST_TEXTS) -> list[list[int]]:
    """Indices of `texts` grouped into jobs of similar length (see the module docstring)."""
    from lynxc.runtime.backends.retrieval.embedders import token_batches

    lengths = [min(MAX_TOKENS, len(text) // CHARS_PER_TOKEN + 2) for text in texts]
    return token_batches(lengths, budget=budget, most=most)


class ParallelVectors:
    """The local VectorStage: `embed(texts) -> array` run on `workers` threads (or, with
    `processes`, `workers` processes each running `embed_in_process(embedder, texts)`)."""

    def __init__(
        self,
        embed: Callable[[list[str]], Any],
        dimension: int,
        *,
        workers: int | None = None,
        ahead: int = 2,
        on_done: Callable[[int], None] | None = None,
        processes: str | None = None,
    ):
        self.embed = embed
        self.dimension = dimension
        self.workers = workers or default_workers()
        self.ahead = max(1, ahead)
        self.on_done = on_done or (lambda count: None)
        self.processes = processes  # an embedder's name: embed in worker processes

    def _pool(self) -> Executor:
        if self.processes is None:
            return ThreadPoolExecutor(self.workers, thread_name_prefix="lynxc-embed")
        import multiprocessing

        # spawn, not fork: the loader's process runs LanceDB's threads, which a fork would copy
        # mid-flight. A worker ends when this process does, killed or not (_start_worker).
        return ProcessPoolExecutor(
            self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker,
            initargs=(self.processes, os.getpid()),
        )

    def __call__(self, windows: Iterator[Window]) -> Iterator[tuple[Window, Any]]:
        import numpy as np

        pending: deque[_Pending] = deque()
        warmed = self.processes is not None  # each worker process loads its model at start
        with self._pool() as pool:
            try:
                for window in windows:
                    jobs: list[tuple[list[int], Future[Any]]] = []
                    for job in plan_jobs(window.texts):
                        texts = [window.texts[i] for i in job]
                        if not warmed:  # the model loads on its first call: once, here
                            done: Future[Any] = Future()
                            done.set_result(self.embed(texts))
                            jobs.append((job, done))
                            warmed = True
                        elif self.processes is not None:
                            jobs.append((job, pool.submit(embed_in_process, self.processes, texts)))
                        else:
                            jobs.append((job, pool.submit(self.embed, texts)))
                    pending.append((window, jobs))
                    while len(pending) > self.ahead:
                        yield self._collect(pending.popleft(), np)
                while pending:
                    yield self._collect(pending.popleft(), np)
            finally:
                for _, jobs in pending:
                    for _, future in jobs:
                        future.cancel()

    def _collect(self, item: _Pending, np: Any) -> tuple[Window, Any]:
        window, jobs = item
        vectors = np.zeros((len(window.texts), self.dimension), dtype=np.float32)
        for job, future in jobs:
            vectors[job] = future.result()
        self.on_done(len(window.texts))
        return window, vectors


# Embedders whose calls hold the GIL (static: its Rust encoder does; two threads ran no faster than
# one, measured on 3,495 sections each) cannot use a second core on threads. Worker processes
# (`processes=`) were measured too and lost: 6,990 sections took 8.8 CPU-s and 10.3 s in two
# spawned workers against 5.1 CPU-s and 6.6 s on threads (30,000: 40 against 26 CPU-s), so the
# loader never picks them on its own (GIL_BOUND is empty); the option stays for an embedder whose
# processes pay off, and for an engine that wants them.
GIL_BOUND: frozenset[str] = frozenset()
PROCESS_MIN_TEXTS = 20_000


def embed_in_process(embedder: str, texts: list[str]) -> Any:
    """A worker process's job: `texts` embedded by the named embedder, one thread."""
    from lynxc.runtime.backends.retrieval.embedders import get_embedder

    return get_embedder(embedder, threads=1).embed(texts)


def _start_worker(embedder: str, parent: int) -> None:
    """A worker process's start: it dies with the loader (a worker of a `kill -9`ed loader would
    otherwise wait on its queue forever, holding its model), then loads its model."""
    import threading
    import time

    # Not prctl(PR_SET_PDEATHSIG): it fires when the *thread* that started the worker ends,
    # and LanceDB may pull the loader's batches on a thread of its own.
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="lynxc-parent-watch").start()
    embed_in_process(embedder, ["warm up"])


def serial_vectors(embed: Callable[[list[str]], Any], dimension: int, chunk: int = 512) -> VectorStage:
    """The loader's stage before the pipeline: chunks of `chunk` texts, in order, on the calling
    thread. Kept for bench/records_load.py's side-by-side figures."""

    def stage(windows: Iterator[Window]) -> Iterator[tuple[Window, Any]]:
        import numpy as np

        for window in windows:
            vectors = np.zeros((len(window.texts), dimension), dtype=np.float32)
            for start in range(0, len(window.texts), chunk):
                vectors[start : start + chunk] = embed(list(window.texts[start : start + chunk]))
            yield window, vectors

    return stage
