"""The load pipeline and what builds on it: a text's vector is the same in any batch, on any
number of threads; the parallel stage returns windows in order; `lynxc load --embed later`
then `lynxc embed` (real processes) gives the vectors an eager load gives; search by meaning
says how much of the resource it covers until then (a real MCP client); parents and children
in one `lynxc load`; and a kill -9 during the embed pass leaves the previous version."""

from __future__ import annotations

import gzip
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lynxc.runtime.backends.records.loader import EMBED_LATER, embed_missing, load
from lynxc.runtime.backends.records.store import StoreError, parse_current, read_current
from lynxc.runtime.backends.records.vectors import ParallelVectors, Window, plan_jobs, serial_vectors
from lynxc.runtime.definition import ServerDefinition
from tests.conftest import LYNXC, ROOT, stdio_client
from tests.runtime.backends.records.test_loader import book, generated, records, write_jsonl

SECTIONS = ROOT / "specs/foxnose-knowledge/data/sections.jsonl.gz"


@pytest.fixture
def server(tmp_path_factory: pytest.TempPathFactory) -> ServerDefinition:
    return generated("base", tmp_path_factory)  # built once per session, shared with test_loader


@pytest.fixture
def settings(tmp_path: Path) -> dict[str, Any]:
    return {"data_dir": str(tmp_path / "data"), "embedder": "static"}


def section_texts(count: int) -> list[str]:
    """Real texts of every length: short titles to bodies far past the 256-token truncation."""
    with gzip.open(SECTIONS, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in itertools.islice(handle, 400)]
    rows.sort(key=lambda r: len(r.get("body") or ""))
    picked = rows[:: max(1, len(rows) // count)][:count]
    return [f"{r.get('title') or ''}\n{r.get('body') or ''}" for r in picked] + ["", "x"]


@pytest.mark.parametrize("name", ["minilm", "static"])
def test_a_texts_vector_does_not_depend_on_its_batch_or_threads(name: str) -> None:
    from lynxc.runtime.backends.retrieval.embedders import get_embedder

    texts = section_texts(16)
    alone = np.vstack([get_embedder(name, threads=1).embed([t]) for t in texts])
    together = get_embedder(name, threads=2).embed(texts)
    stage = ParallelVectors(get_embedder(name, threads=1).embed, alone.shape[1], workers=2)
    ((_, staged),) = list(stage(iter([Window(None, texts)])))
    assert np.array_equal(alone, together)  # bit for bit: padding is masked out
    assert np.array_equal(alone, staged)


def test_the_parallel_stage_keeps_windows_in_order() -> None:
    def embed(texts: list[str]) -> np.ndarray:
        return np.array([[len(t), sum(map(ord, t)) % 101] for t in texts], dtype=np.float32)

    windows = [Window(i, [f"text {i} " * (j % 7 + 1) for j in range(i * 13 % 50)]) for i in range(12)]
    parallel = [(w.payload, v) for w, v in ParallelVectors(embed, 2, workers=2, ahead=2)(iter(windows))]
    serial = [(w.payload, v) for w, v in serial_vectors(embed, 2)(iter(windows))]
    assert [p for p, _ in parallel] == list(range(12))
    assert all(np.array_equal(a, b) for (_, a), (_, b) in zip(parallel, serial, strict=True))


def test_worker_processes_embed_as_threads_do() -> None:
    from lynxc.runtime.backends.retrieval.embedders import get_embedder

    windows = [Window(i, section_texts(12)[i:]) for i in range(3)]
    threads = list(ParallelVectors(get_embedder("static", threads=1).embed, 64, workers=2)(iter(windows)))
    processes = list(ParallelVectors(lambda texts: None, 64, workers=2, processes="static")(iter(windows)))
    assert [w.payload for w, _ in processes] == [0, 1, 2]
    assert all(np.array_equal(a, b) for (_, a), (_, b) in zip(threads, processes, strict=True))


KILLED_WITH_WORKERS = """
import multiprocessing, os, sys
from lynxc.runtime.backends.records.vectors import ParallelVectors, Window

def windows():
    for i in range(4):
        yield Window(i, ["some text to embed"] * 200)
    print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
    os.kill(os.getpid(), 9)

if __name__ == "__main__":
    for _ in ParallelVectors(None, 64, workers=2, processes="static")(windows()):
        pass
"""


def test_worker_processes_die_with_a_killed_loader(tmp_path: Path) -> None:
    script = tmp_path / "killed.py"
    script.write_text(KILLED_WITH_WORKERS)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == -9, done.stderr
    workers = [int(pid) for pid in done.stdout.split()]
    assert len(workers) == 2
    for _ in range(600):  # a hang guard: each notices its parent is gone within a second
        if not any(_alive(pid) for pid in workers):
            break
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in workers)


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "State:\tZ" not in status  # a zombie has exited; only its exit status waits


def test_jobs_hold_similar_lengths_within_the_token_budget() -> None:
    texts = ["a" * n for n in (4000, 8, 2000, 12, 1000, 16, 4000, 8)]
    jobs = plan_jobs(texts, budget=600, most=4)
    assert sorted(i for job in jobs for i in job) == list(range(len(texts)))
    for job in jobs:
        tokens = [min(256, len(texts[i]) // 4 + 2) for i in job]
        assert len(job) == 1 or len(job) * max(tokens) <= 600
    assert jobs[0] == [1, 7, 3, 5]  # the shortest together


def test_old_pointers_read_as_fully_embedded() -> None:
    old = {
        "format": 1,
        "resources": {
            "peps": {
                "table": "peps-1",
                "version": 3,
                "records": 736,
                "embedder": "minilm",
                "dimension": 384,
                "declaration_sha256": "x",
                "loaded_at": "2026-01-01T00:00:00Z",
            }
        },
    }
    state = parse_current(json.dumps(old)).resources["peps"]
    assert (state.embedded, state.missing_vectors) == (None, 0)


# Real `lynxc load` / `lynxc embed` processes ------------------------------------------------------


def lynxc(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    settings = ["--set", f"data_dir={tmp_path / 'data'}", "--set", "embedder=static"]
    return subprocess.run(
        [LYNXC, "--project", str(tmp_path), *args, *settings],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def vectors(data_dir: Path) -> dict[str, Any]:
    return {key: row["_vector"] for key, row in records(data_dir).items()}


def test_embed_later_then_embed_gives_the_eager_vectors(
    server: ServerDefinition, settings: dict[str, Any], tmp_path: Path
) -> None:
    rows = [book(i, body=f"chapter {i} " * (i % 30 + 1)) for i in range(60)]
    path = write_jsonl(tmp_path / "books.jsonl", rows)
    load(server, "books", [str(path)], settings={**settings, "data_dir": str(tmp_path / "eager")})
    later = lynxc(tmp_path, "load", str(server.folder), "books", str(path), "--embed", "later")
    assert later.returncode == 0, later.stderr
    assert "0 of 60 records have vectors" in later.stdout
    assert f"lynxc embed {server.name} books" in later.stdout
    assert set(vectors(tmp_path / "data").values()) == {None}
    state = read_current(tmp_path / "data").resources["books"]
    assert (state.embedded, state.missing_vectors) == (0, 60)

    filled = lynxc(tmp_path, "embed", str(server.folder), "books")
    assert filled.returncode == 0, filled.stderr
    assert "60 embedded; 60 of 60 records have vectors" in filled.stdout
    assert vectors(tmp_path / "data") == vectors(tmp_path / "eager")
    state = read_current(tmp_path / "data").resources["books"]
    assert (state.embedded, state.missing_vectors) == (60, 0)
    again = lynxc(tmp_path, "embed", str(server.folder))  # nothing left: no new version
    assert again.returncode == 0 and "0 embedded; 60 of 60" in again.stdout, again.stderr
    assert read_current(tmp_path / "data").resources["books"] == state


def test_a_deferred_upsert_unembeds_only_what_changed(
    server: ServerDefinition, settings: dict[str, Any], tmp_path: Path
) -> None:
    first = write_jsonl(tmp_path / "a.jsonl", [book(i) for i in range(20)])
    load(server, "books", [str(first)], settings=settings)
    eager = vectors(tmp_path / "data")
    second = write_jsonl(tmp_path / "b.jsonl", [book(i, title=f"new {i}") for i in range(15, 25)])
    report = load(server, "books", [str(second)], settings=settings, embed=EMBED_LATER)
    assert (report.inserted, report.updated, report.embedded, report.records) == (5, 5, 15, 25)
    seen = vectors(tmp_path / "data")
    assert {k for k, v in seen.items() if v is None} == {f"b{i}" for i in range(15, 25)}
    assert all(seen[f"b{i}"] == eager[f"b{i}"] for i in range(15))
    report = embed_missing(server, "books", settings=settings)
    assert (report.embedded_now, report.embedded) == (10, 25)
    assert None not in vectors(tmp_path / "data").values()


def test_the_embed_pass_refuses_what_it_cannot_fill(
    server: ServerDefinition, settings: dict[str, Any], tmp_path: Path
) -> None:
    with pytest.raises(StoreError, match="not loaded yet"):
        embed_missing(server, "books", settings=settings)
    done = lynxc(tmp_path, "embed", str(server.folder), "chapterz")
    assert done.returncode == 2 and "has no collection 'chapterz'" in done.stderr
    assert "Traceback" not in done.stderr


EMBED_STAGES = ["validated", "writing", "written", "indexed", "optimized"]


@pytest.mark.parametrize("stage", EMBED_STAGES)
def test_a_killed_embed_pass_leaves_the_previous_version(
    stage: str, server: ServerDefinition, settings: dict[str, Any], tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", [book(i) for i in range(40)])
    load(server, "books", [str(path)], settings=settings, embed=EMBED_LATER)
    before = read_current(tmp_path / "data")
    killed = lynxc(tmp_path, "embed", str(server.folder), "books", env={"LYNXC_TEST_KILL_AT": stage})
    assert killed.returncode == -9, killed.stderr
    assert read_current(tmp_path / "data") == before
    assert set(vectors(tmp_path / "data").values()) == {None}
    report = embed_missing(server, "books", settings=settings)
    assert (report.embedded_now, report.embedded) == (40, 40)
    assert None not in vectors(tmp_path / "data").values()
    assert not list((tmp_path / "data/tmp").glob("*"))


def test_parents_and_children_load_in_one_command(server: ServerDefinition, tmp_path: Path) -> None:
    books = write_jsonl(tmp_path / "books.jsonl", [book(i) for i in range(5)])
    chapters = write_jsonl(
        tmp_path / "chapters.jsonl", [{"cid": i, "book": f"b{i % 5}", "title": f"c{i}"} for i in range(12)]
    )
    # The child first on the command line: it still loads after its parent.
    done = lynxc(tmp_path, "load", str(server.folder), f"chapters={chapters}", f"books={books}")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("books: 5 inserted") and lines[1].startswith("chapters: 12 inserted")
    assert len(records(tmp_path / "data", "chapters")) == 12
    current = read_current(tmp_path / "data")

    # One commit for all: a refused child leaves its parent (loaded by the same command) as it was.
    before = records(tmp_path / "data")
    new_books = write_jsonl(tmp_path / "books2.jsonl", [book(i, title=f"v2 {i}") for i in range(8)])
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"cid": 99, "book": "b7"}, {"cid": 100, "book": "nope"}])
    refused = lynxc(tmp_path, "load", str(server.folder), f"books={new_books}", f"chapters={bad}")
    assert refused.returncode == 1
    assert f"{bad}:2: book: 'nope' is not the key of a loaded books record" in refused.stderr
    assert "b7" not in refused.stderr  # b7 is loaded by the same command: a valid parent
    assert read_current(tmp_path / "data") == current
    assert records(tmp_path / "data") == before
    good = write_jsonl(tmp_path / "good.jsonl", [{"cid": 99, "book": "b7"}])
    done = lynxc(tmp_path, "load", str(server.folder), f"chapters={good}", f"books={new_books}")
    assert done.returncode == 0, done.stderr
    assert len(records(tmp_path / "data")) == 8 and len(records(tmp_path / "data", "chapters")) == 13


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bookz=x.jsonl"], "has no collection 'bookz' (did you mean 'books'?"),
        (["books=missing.jsonl"], "missing.jsonl"),
        (["books=a.jsonl", "chapters"], "'chapters' is not NAME=FILE"),
        (["books"], "give the files to load into 'books'"),
    ],
)
def test_one_command_errors_are_clear(
    args: list[str], message: str, server: ServerDefinition, tmp_path: Path
) -> None:
    write_jsonl(tmp_path / "a.jsonl", [book(1)])
    done = subprocess.run(
        [
            LYNXC,
            "--project",
            str(tmp_path),
            "load",
            str(server.folder),
            *args,
            "--set",
            f"data_dir={tmp_path / 'd'}",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr


def test_a_parent_cycle_is_named() -> None:
    from lynxc.compiler.load_plan import PlanError, dependency_order

    assert dependency_order([("c", []), ("b", []), ("a", [])], {"c": ["b"], "b": ["a"]}) == ["a", "b", "c"]
    with pytest.raises(PlanError, match="cycle: a -> b -> a"):
        dependency_order([("a", []), ("b", [])], {"a": ["b"], "b": ["a"]})


@pytest.mark.anyio
async def test_search_by_meaning_says_what_it_covers(
    server: ServerDefinition, settings: dict[str, Any], tmp_path: Path
) -> None:
    from anyio.to_thread import run_sync  # the loader runs its own event loop

    first = write_jsonl(tmp_path / "a.jsonl", [book(i, body=f"apples and pears {i}") for i in range(30)])
    await run_sync(lambda: load(server, "books", [str(first)], settings=settings))
    more = write_jsonl(tmp_path / "b.jsonl", [book(i, body=f"apples and pears {i}") for i in range(30, 40)])
    await run_sync(lambda: load(server, "books", [str(more)], settings=settings, embed=EMBED_LATER))
    serve = {"data_dir": settings["data_dir"], "embedder": "static"}

    async def search(search_type: str) -> dict[str, Any]:
        arguments = {"resource_id": "books", "query": "apples", "search_type": search_type, "limit": 50}
        result = await client.call_tool("search_records", arguments)
        assert not result.is_error, result.content[0].text
        return result.structured_content

    async with stdio_client(str(server.folder), serve, project=tmp_path) as client:
        semantic, hybrid, text = await search("semantic"), await search("hybrid"), await search("text")
        boosted = await search("vector_boosted")
    note = "meaning covers 30 of 40 records (the other 10 have no vectors yet"
    assert note in semantic["execution_info"]["search_mode"]
    assert note in hybrid["execution_info"]["search_mode"]
    assert "meaning covers" not in text["execution_info"]["search_mode"]
    assert f"`lynxc embed {server.name} books`" in semantic["execution_info"]["search_mode"]
    # semantic ranks only records with vectors; text finds every record at once
    assert {item["id"] for item in semantic["items"]} == {f"b{i}" for i in range(30)}
    assert len(text["items"]) == 40
    assert len(hybrid["items"]) == 40
    assert len(boosted["items"]) == 40  # records without vectors are matched, never boosted
    assert "meaning covers 30 of 40" in boosted["execution_info"]["search_mode"]

    await run_sync(lambda: embed_missing(server, "books", settings=settings))
    async with stdio_client(str(server.folder), serve, project=tmp_path) as client:
        semantic = await search("semantic")
    assert "meaning covers" not in semantic["execution_info"]["search_mode"]
    assert len(semantic["items"]) == 40
