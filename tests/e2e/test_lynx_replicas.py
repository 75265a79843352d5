"""Stateless lynx-mcp replicas: three `lynxc serve --transport http` processes over one index on
moto's S3 server, each in its own empty folder (its HOME too; the sources' roots are empty
folders of its own: searching reads nothing but the index), answering several clients at once
with the same results, and seeing a re-index on their next search."""

from __future__ import annotations

import asyncio
import subprocess
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from lynxc.runtime.backends.lynx.indexer import index_source
from lynxc.runtime.backends.lynx.location import IndexLocation
from lynxc.runtime.backends.lynx.reader import IndexReader
from lynxc.runtime.backends.lynx.sources import Source
from lynxc.runtime.backends.lynx.store import Store
from lynxc.runtime.backends.retrieval.embedders import get_embedder
from tests.e2e.test_lynx_s3 import call, handlers, index_command, lynx_settings, run_index, serving
from tests.fixtures.s3 import s3_server  # noqa: F401

QUERIES = ["handler", "handler_7 return", "return 42", "def handler_13", "handler one hundred"]
# Each client asks every query once (SEARCHES = len(QUERIES)), so each replica (two clients)
# answers each query twice, concurrently with the other clients' searches.
CLIENTS, SEARCHES = 6, 5


def answer(result: dict[str, Any]) -> list[tuple[Any, ...]]:
    """What a client sees of a search: each hit's place and scores."""
    return [
        (h["path"], h["start_line"], h["end_line"], h["score"], h["similarity"]) for h in result["results"]
    ]


async def load(urls: list[str], rounds: int = SEARCHES) -> dict[tuple[int, str], set[str]]:
    """CLIENTS clients at once, client i on replica i % len(urls), each searching `rounds` times
    over QUERIES: {(replica, query): the distinct answers}. Every call must succeed."""
    seen: dict[tuple[int, str], set[str]] = {}

    async def client(number: int) -> None:
        replica = number % len(urls)
        async with Client(urls[replica]) as session:
            for i in range(rounds):
                query = QUERIES[(number + i) % len(QUERIES)]
                result = await call(session, "search", query=query, top_k=8)
                seen.setdefault((replica, query), set()).add(repr(answer(result)))

    async with anyio.create_task_group() as group:
        for number in range(CLIENTS):
            group.start_soon(client, number)
    return seen


async def each(sessions: list[Client], query: str, top_k: int = 5) -> list[list[dict[str, Any]]]:
    """One search on every replica at once: their hits, in replica order."""
    found: list[list[dict[str, Any]]] = [[] for _ in sessions]

    async def ask(i: int) -> None:
        found[i] = (await call(sessions[i], "search", query=query, top_k=top_k))["results"]

    async with anyio.create_task_group() as group:
        for i in range(len(sessions)):
            group.start_soon(ask, i)
    return found


@pytest.mark.anyio
async def test_three_replicas_over_one_s3_index(tmp_path: Path, s3_server) -> None:  # noqa: F811
    root = tmp_path / "code"
    handlers(root, range(120))
    env = s3_server.env()
    index_dir = f"s3://{s3_server.new_bucket()}/index"
    folders = [tmp_path / f"replica{i}" for i in range(3)]
    replicas = []
    for folder in folders:
        (folder / "code").mkdir(parents=True)  # its own, empty: no source file is read to search
        replicas.append((lynx_settings(folder / "code", index_dir), env, folder))
    with serving(replicas) as urls, anyio.fail_after(240):  # started before the index exists
        async with AsyncExitStack() as stack:  # one client of each replica, kept open
            sessions = [await stack.enter_async_context(Client(url)) for url in urls]
            await check_replicas(urls, sessions, root, index_dir, env)
    logs = [(folder / "serve.log").read_text() for folder in folders]
    assert not any("Traceback" in log for log in logs), logs


async def check_replicas(
    urls: list[str], sessions: list[Client], root: Path, index_dir: str, env: dict[str, str]
) -> None:
    assert await each(sessions, "handler") == [[], [], []]  # no index yet: no hit, no error
    indexed = await anyio.to_thread.run_sync(run_index, lynx_settings(root, index_dir), env)
    assert indexed.returncode == 0, indexed.stderr
    seen = await load(urls)  # each replica picks the index up once it exists
    assert {query for _, query in seen} == set(QUERIES)
    for query in QUERIES:  # the same query, the same answer, from every replica
        answers = set().union(*(seen[(replica, query)] for replica in range(3) if (replica, query) in seen))
        assert len(answers) == 1, query
        assert "m" in next(iter(answers))  # and not an empty one
    # A re-index that changes a file while the replicas serve.
    (root / "m0042.py").write_text("def zebra_quokka_lookup():\n    return 'zebra'\n")
    command = index_command(lynx_settings(root, index_dir))
    async with await anyio.open_process(command, env=env, stdout=subprocess.DEVNULL) as writer:
        while writer.returncode is None:  # answering throughout
            assert all(await each(sessions, "handler"))
            await anyio.sleep(0.5)
        assert await writer.wait() == 0
    found = await each(sessions, "zebra quokka lookup", top_k=1)  # every replica's next search
    assert [[hit["path"] for hit in hits] for hits in found] == [["m0042.py"]] * 3  # the new commit


def test_a_reader_keeps_its_table_handles_and_picks_up_a_new_table(
    tmp_path: Path,
    s3_server,  # noqa: F811
) -> None:
    root = tmp_path / "code"
    handlers(root, range(10))
    location = IndexLocation.of(f"s3://{s3_server.new_bucket()}/index", s3_server.storage_options())
    reader = IndexReader(location)

    async def versions() -> dict[str, Any]:
        return await reader.tables(["code"])

    async def scenario() -> None:
        assert await versions() == {}  # no index yet: nothing, and no error
        source, store, embedder = Source("code", str(root), "code"), Store(location), get_embedder("static")
        await asyncio.to_thread(index_source, source, store, embedder)
        first = (await versions())["code"]  # the new table, opened once
        before = await first.version()
        handlers(root, range(10, 20))
        await asyncio.to_thread(index_source, source, store, embedder)
        again = (await versions())["code"]
        assert again is first and await again.version() > before  # the same handle, moved on
        assert await again.count_rows() == 20

    asyncio.run(scenario())
