"""The records store's read side and its pointer: CURRENT.json parsed once per change, tables
pinned to the pointed version, atomic pointer writes, the one-loader lock, which declaration
changes need a new table, and how long old versions stay readable."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lynxc.runtime.backends.records import loader
from lynxc.runtime.backends.records.definitions import parse_resources
from lynxc.runtime.backends.records.loader import load
from lynxc.runtime.backends.records.store import (
    Current,
    LoadBusy,
    RecordStore,
    ResourceState,
    Retired,
    StoreError,
    VersionGone,
    declaration_sha256,
    load_lock,
    read_current,
    write_current,
)
from lynxc.runtime.definition import ServerDefinition
from tests.runtime.backends.records.test_loader import CountingEmbedder, book, generated, write_jsonl

STATE = ResourceState("books-1", 3, 10, ("en", "fr"), "static", 64, "abc", "2024-01-01T00:00:00Z")


def test_pointer_round_trip_and_atomic_write(tmp_path: Path) -> None:
    assert read_current(tmp_path) == Current()  # nothing loaded
    current = Current({"books": STATE}, (Retired("books", "books-1", 2, "2024-01-01T00:00:00Z"),))
    write_current(tmp_path, current)
    assert read_current(tmp_path) == current
    assert sorted(p.name for p in tmp_path.iterdir()) == ["CURRENT.json"]  # no tmp file left
    document = json.loads((tmp_path / "CURRENT.json").read_text())
    assert document["format"] == 1
    assert document["resources"]["books"] == {
        "table": "books-1",
        "version": 3,
        "records": 10,
        "locales": ["en", "fr"],
        "embedder": "static",
        "dimension": 64,
        "declaration_sha256": "abc",
        "loaded_at": "2024-01-01T00:00:00Z",
    }
    (tmp_path / "CURRENT.json").write_text('{"format": 1, "resources": {"books": {}}}')
    with pytest.raises(StoreError, match="not a records store pointer"):
        read_current(tmp_path)


def test_current_is_read_again_only_when_the_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = RecordStore(tmp_path)
    assert store.current().resources == {}
    write_current(tmp_path, Current({"books": STATE}))
    first = store.current()
    assert first.resources["books"] == STATE
    reads = []
    original = Path.read_text
    monkeypatch.setattr(
        Path, "read_text", lambda self, *a, **k: reads.append(self) or original(self, *a, **k)
    )
    assert store.current() is first and reads == []
    moved = ResourceState(**{**STATE.__dict__, "version": 4})
    write_current(tmp_path, Current({"books": moved}))
    assert store.current().resources["books"].version == 4 and len(reads) == 1
    (tmp_path / "CURRENT.json").unlink()
    assert store.current().resources == {}
    assert RecordStore.for_dir(tmp_path) is RecordStore.for_dir(str(tmp_path))


def test_a_table_stays_at_the_pointed_version(tmp_path: Path) -> None:
    import lancedb
    import pyarrow as pa

    db = lancedb.connect(str(tmp_path / "lance"))
    table = db.create_table("books-1", pa.table({"_key": ["a", "b"]}))
    write_current(tmp_path, Current({"books": ResourceState(**{**STATE.__dict__, "version": table.version})}))

    async def read() -> None:
        store = RecordStore(tmp_path)
        state = store.current().resources["books"]
        pinned = await store.table(state)
        assert await pinned.count_rows() == 2
        table.add(pa.table({"_key": ["c"]}))  # a later commit (a load in progress)
        assert await pinned.count_rows() == 2
        assert await store.table(state) is pinned  # opened once per (table, version)
        assert await (await store.table_at("books-1", table.version)).count_rows() == 3
        with pytest.raises(VersionGone, match="version 99 of table books-1 is no longer kept"):
            await store.table_at("books-1", 99)
        with pytest.raises(VersionGone, match="table books-7"):
            await store.table_at("books-7", 1)

    asyncio.run(read())


def test_one_loader_at_a_time(tmp_path: Path) -> None:
    with load_lock(tmp_path):
        with pytest.raises(LoadBusy) as caught, load_lock(tmp_path):
            pass
        assert str(caught.value) == (
            f"another `lynxc load` (pid {os.getpid()}) is writing {tmp_path}; wait for it to finish"
        )
    with load_lock(tmp_path):  # released with its holder
        pass
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom lynxc.runtime.backends.records.store import load_lock\n"
            f"with load_lock({str(tmp_path)!r}):\n    print('held', flush=True)\n    time.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(LoadBusy, match=f"pid {holder.pid}"), load_lock(tmp_path):
            pass
        holder.kill()  # a killed holder never leaves the lock behind
        holder.wait()
        with load_lock(tmp_path):
            pass
    finally:
        holder.kill()


def test_only_storage_changes_change_the_declaration(tmp_path_factory: pytest.TempPathFactory) -> None:
    document = json.loads(generated("base", tmp_path_factory).read_checked("collections.json"))
    books, chapters = (
        next(r for r in document["resources"] if r["name"] == n) for n in ("books", "chapters")
    )

    def sha(variant: dict[str, Any]) -> str:
        resources = parse_resources(json.dumps({"format": 1, "resources": [variant, chapters]}))
        found = resources.by_name("books")
        assert found is not None
        return declaration_sha256(found, resources)

    base = sha(books)
    assert (
        sha({**books, "title": "x", "description": "y", "sort": [{"field": "year"}], "max_text_chars": 9})
        == base
    )
    fields = [{**f, "description": "z"} for f in books["fields"]]
    assert sha({**books, "fields": fields, "capabilities": ["query"]}) == base
    assert sha({**books, "keyword": ["title"]}) != base
    assert sha({**books, "meaning": ["body"]}) != base
    retyped = [{**f, "type": "text"} if f["name"] == "title" else f for f in books["fields"]]
    assert sha({**books, "fields": retyped}) != base
    # A reference's column is typed like the target's key: the target's key type counts too.
    books_int = {
        **books,
        "fields": [{**f, "type": "integer"} if f["name"] == "id" else f for f in books["fields"]],
    }
    resources = parse_resources(json.dumps({"format": 1, "resources": [books, chapters]}))
    other = parse_resources(json.dumps({"format": 1, "resources": [books_int, chapters]}))
    mine, theirs = resources.by_name("chapters"), other.by_name("chapters")
    assert mine is not None and theirs is not None
    assert declaration_sha256(mine, resources) != declaration_sha256(theirs, other)


@pytest.fixture
def server(tmp_path_factory: pytest.TempPathFactory) -> ServerDefinition:
    return generated("base", tmp_path_factory)


def _age(data_dir: Path, hours: float) -> None:
    path = data_dir / "CURRENT.json"
    document = json.loads(path.read_text())
    for entry in document["retired"]:
        entry["at"] = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=hours)).isoformat()
    path.write_text(json.dumps(document))


def test_old_versions_stay_readable_for_an_hour(
    server: ServerDefinition, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Versions are removed by age: make the margin (10 minutes) short, and the last version
    # written clearly later than the others.
    monkeypatch.setattr(loader, "CLEANUP_MARGIN", dt.timedelta(seconds=3))
    settings = {"data_dir": str(tmp_path / "data")}
    embedder = CountingEmbedder()
    versions = []
    for n in range(3):
        if n == 2:
            time.sleep(6)
        path = write_jsonl(tmp_path / f"{n}.jsonl", [book(i, title=f"round {n}") for i in range(5)])
        load(server, "books", [str(path)], settings=settings, embedder=embedder)
        versions.append(read_current(tmp_path / "data").resources["books"].version)

    async def readable(version: int) -> bool:
        try:
            await RecordStore(tmp_path / "data").table_at("books-1", version)
        except VersionGone:
            return False
        return True

    assert [asyncio.run(readable(v)) for v in versions] == [True, True, True]
    retired = read_current(tmp_path / "data").retired
    assert [r.version for r in retired] == versions[:2]
    # An hour after they were retired, the next load that writes removes them.
    _age(tmp_path / "data", hours=1.5)
    path = write_jsonl(tmp_path / "3.jsonl", [book(9)])
    load(server, "books", [str(path)], settings=settings, embedder=embedder)
    current = read_current(tmp_path / "data")
    assert [r.version for r in current.retired] == [versions[2]]  # the one just moved off
    assert [asyncio.run(readable(v)) for v in versions] == [False, False, True]
    assert asyncio.run(readable(current.resources["books"].version))
