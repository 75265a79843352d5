"""Indexing and retrieval on LanceDB with the real embedders: incremental updates, crash
safety, readers during writes, identifier splitting, filters inside the query, calibrated scores."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lynxc.runtime.backends.lynx.filters import Filters
from lynxc.runtime.backends.lynx.indexer import index_source
from lynxc.runtime.backends.lynx.lease import IndexBusy, writer_lock
from lynxc.runtime.backends.lynx.ranking import Hit, search
from lynxc.runtime.backends.lynx.reader import IndexReader
from lynxc.runtime.backends.lynx.sources import Source, content_hash
from lynxc.runtime.backends.lynx.store import FILES_PREFIX, Store
from lynxc.runtime.backends.lynx.tools import _drift
from lynxc.runtime.backends.retrieval.embedders import Embedder, get_embedder
from tests.conftest import ROOT

FILES = {
    "app/config.py": "def parseConfigFile(path):\n    '''Read the settings file.'''\n    return 0\n",
    "app/net.py": "def open_socket(host, port):\n    '''Connect to a TCP server.'''\n    return None\n",
    "app/render.py": "class HtmlRenderer:\n    def render_page(self, title):\n        return title\n",
    "docs/guide.md": "# Guide\n\n## Configuration\nSettings live in a config file read at start-up.\n",
    "lib/util.go": "package util\n\nfunc ParseConfigFile(p string) error { return nil }\n",
}


def make_tree(root: Path, files: dict[str, str] = FILES) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def find(
    store: Store, query: str, mode: str, top_k: int, embedder: Embedder, filters: Filters | None = None
) -> list[Hit]:
    """One search of source `code`, the way a server runs it."""
    reader = IndexReader(store.directory)
    vector = embedder.embed([query])[0]
    return asyncio.run(search(reader, ["code"], query, vector, mode, top_k, filters or Filters()))


@pytest.fixture(params=["static", "minilm"])
def indexed(request: pytest.FixtureRequest, tmp_path: Path):
    root = tmp_path / "code"
    make_tree(root)
    source = Source("code", str(root), "code", ("**/*",), ("docs/**",))
    store = Store(str(tmp_path / "index"))
    embedder = get_embedder(request.param)
    report = index_source(source, store, embedder)
    return source, store, embedder, report, root


def test_index_and_search_modes(indexed) -> None:
    _, store, embedder, report, _ = indexed
    assert (report.files, report.changed, report.removed) == (4, 4, 0)  # docs/ excluded
    sparse = find(store, "parse config file", "sparse", 5, embedder)
    assert {h.path for h in sparse[:2]} == {"app/config.py", "lib/util.go"}  # identifiers split
    dense = find(store, "read the settings", "dense", 5, embedder)
    assert dense[0].path == "app/config.py"
    hybrid = find(store, "parse config file", "hybrid", 5, embedder)
    assert hybrid[0].path in ("app/config.py", "lib/util.go")
    assert all(0.0 <= h.score <= 1.0 for h in sparse + dense + hybrid)
    assert (
        hybrid[0].symbol in ("parseConfigFile", "ParseConfigFile")
        and hybrid[0].start_line == 1 + (hybrid[0].path == "lib/util.go") * 2
    )


def test_filters_apply_inside_the_query(indexed) -> None:
    _, store, embedder, _, _ = indexed
    only_go = find(store, "parse config file", "hybrid", 1, embedder, Filters(extensions=(".go",)))
    assert [h.path for h in only_go] == ["lib/util.go"]
    by_glob = find(store, "parse config file", "hybrid", 5, embedder, Filters(file_glob="*.py"))
    assert by_glob and all(h.path.endswith(".py") for h in by_glob)
    contains = find(store, "render", "sparse", 5, embedder, Filters(path_contains="render"))
    assert {h.path for h in contains} == {"app/render.py"}  # the class and its method
    nothing = find(store, "render", "hybrid", 5, embedder, Filters(path_contains="nope"))
    assert nothing == []


def test_incremental_updates(indexed) -> None:
    source, store, embedder, _, root = indexed
    (root / "app/net.py").write_text("def open_socket(host, port, timeout):\n    return None\n")
    (root / "app/render.py").unlink()
    report = index_source(source, store, embedder)
    assert (report.changed, report.removed) == (1, 1)
    assert index_source(source, store, embedder).changed == 0  # nothing left to do
    paths = {h.path for h in find(store, "render page html", "hybrid", 10, embedder)}
    assert "app/render.py" not in paths


KILL_SCRIPT = """
import os, signal, sys
from lynxc.runtime.backends.lynx import indexer
from lynxc.runtime.backends.lynx.sources import Source
from lynxc.runtime.backends.lynx.lease import IndexBusy, writer_lock
from lynxc.runtime.backends.lynx.store import FILES_PREFIX, Store
from lynxc.runtime.backends.lynx.tools import _drift
from lynxc.runtime.backends.retrieval.embedders import get_embedder
indexer.BATCH_FILES = 10
def die(done, total, stage):
    if done >= 20:
        os.kill(os.getpid(), signal.SIGKILL)  # mid-index, after two committed batches
indexer.index_source(Source("code", sys.argv[1], "code"), Store(sys.argv[2]), get_embedder("static"), die)
"""


def test_kill_9_mid_index_leaves_a_readable_index_and_the_next_run_finishes(tmp_path: Path) -> None:
    root = tmp_path / "code"
    make_tree(root, {f"m{i:02}.py": f"def handler_{i}():\n    return {i}\n" for i in range(50)})
    index_dir = tmp_path / "index"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    killed = subprocess.run([sys.executable, "-c", KILL_SCRIPT, str(root), str(index_dir)], env=env)
    assert killed.returncode == -9
    store = Store(str(index_dir))
    embedder = get_embedder("static")
    assert store.table("code").count_rows() == 20  # the two committed batches, readable
    assert len(find(store, "handler_3", "dense", 5, embedder)) == 5
    report = index_source(Source("code", str(root), "code"), store, embedder)
    assert report.changed == 30 and store.table("code").count_rows() == 50


CHUNKLESS = {
    "a.py": "def alpha():\n    return 1\n",
    "empty.py": "",
    "blank.md": " \n\n\t\n",
    "pkg/__init__.py": "",
}


def make_chunkless_tree(root: Path) -> Source:
    make_tree(root, CHUNKLESS)
    (root / "blob.dat").write_bytes(b"\x00\x01binary\x00")
    return Source("code", str(root), "code")


def settled(source: Source, store: Store, embedder: Embedder) -> None:
    """A complete run leaves nothing to do: no file indexed again, no drift."""
    assert index_source(source, store, embedder).changed == 0
    assert _drift(source, store.indexed_hashes("code")) == {"changed": 0, "added": 0, "removed": 0}


def test_files_without_chunks_are_recorded_not_indexed_again(tmp_path: Path) -> None:
    source = make_chunkless_tree(tmp_path / "code")
    store, embedder = Store(str(tmp_path / "index")), get_embedder("static")
    first = index_source(source, store, embedder)
    assert (first.files, first.changed, first.chunks) == (5, 5, 1)  # one chunk: alpha
    assert set(store.indexed_hashes("code")) == {*CHUNKLESS, "blob.dat"}
    settled(source, store, embedder)
    # A recorded file that gains a chunk, a chunked file that loses its last, a record removed.
    (tmp_path / "code/empty.py").write_text("def beta():\n    return 2\n")
    (tmp_path / "code/a.py").write_text("\n")
    (tmp_path / "code/blob.dat").unlink()
    report = index_source(source, store, embedder)
    assert (report.changed, report.removed, report.chunks) == (2, 1, 1)
    settled(source, store, embedder)
    assert {h.path for h in find(store, "alpha beta", "hybrid", 10, embedder)} == {"empty.py"}
    assert store.table("code").count_rows() == 1  # the records stay out of the searched table


def test_an_index_without_records_indexes_its_chunkless_files_once_more(tmp_path: Path) -> None:
    source = make_chunkless_tree(tmp_path / "code")
    store, embedder = Store(str(tmp_path / "index")), get_embedder("static")
    index_source(source, store, embedder)
    store.db.drop_table(FILES_PREFIX + "code")  # as an index written before the records
    assert _drift(source, store.indexed_hashes("code"))["added"] == 4
    assert index_source(source, store, embedder).changed == 4
    settled(source, store, embedder)


KILL_BETWEEN_COMMITS = """
import os, signal, sys
from lynxc.runtime.backends.lynx.indexer import index_source
from lynxc.runtime.backends.lynx.sources import Source
from lynxc.runtime.backends.lynx.store import Store
from lynxc.runtime.backends.retrieval.embedders import get_embedder
Store._record = lambda *args: os.kill(os.getpid(), signal.SIGKILL)  # after the chunks' commit
index_source(Source("code", sys.argv[1], "code"), Store(sys.argv[2]), get_embedder("static"))
"""


def test_kill_9_between_the_chunks_and_the_records_is_repaired_by_the_next_run(tmp_path: Path) -> None:
    source = make_chunkless_tree(tmp_path / "code")
    index_dir = tmp_path / "index"
    store, embedder = Store(str(index_dir)), get_embedder("static")
    index_source(source, store, embedder)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    kill = [sys.executable, "-c", KILL_BETWEEN_COMMITS, source.root, str(index_dir)]
    # A chunked file emptied and a recorded file given a chunk, in one batch: killed with the
    # chunks committed and the records not, a.py is in neither table, empty.py in both.
    (tmp_path / "code/a.py").write_text("")
    (tmp_path / "code/empty.py").write_text("def beta():\n    return 2\n")
    assert subprocess.run(kill, env=env).returncode == -9
    hashes = store.indexed_hashes("code")
    assert "a.py" not in hashes and hashes["empty.py"] == content_hash(b"def beta():\n    return 2\n")
    assert index_source(source, store, embedder).changed == 1  # a.py, recorded this time
    settled(source, store, embedder)
    # A recorded file deleted: killed after the (empty) chunk commit, its record is left.
    (tmp_path / "code/blank.md").unlink()
    assert subprocess.run(kill, env=env).returncode == -9
    assert index_source(source, store, embedder).removed == 1
    settled(source, store, embedder)
    assert [h.path for h in find(store, "beta", "hybrid", 10, embedder)] == ["empty.py"]


READER_SCRIPT = """
import asyncio, json, sys, time
from lynxc.runtime.backends.lynx.reader import IndexReader
from lynxc.runtime.backends.lynx.ranking import Filters, search
from lynxc.runtime.backends.retrieval.embedders import get_embedder

async def main():
    reader, vector = IndexReader(sys.argv[1]), get_embedder("static").embed(["handler"])[0]
    counts, new = [], []
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:  # one reader, its tables opened once, as in a server
        counts.append(len(await search(reader, ["code"], "handler", vector, "hybrid", 5)))
        later = Filters(path_contains="m2")  # files only the second run indexes
        new.append(len(await search(reader, ["code"], "handler", vector, "hybrid", 5, later)))
        if new[-1] and len(counts) >= 20:
            break
    print(json.dumps([counts, new]))

asyncio.run(main())
"""


def test_readers_keep_answering_while_the_index_is_written(tmp_path: Path) -> None:
    root = tmp_path / "code"
    make_tree(root, {f"m{i:03}.py": f"def handler_{i}():\n    return {i}\n" for i in range(300)})
    store, embedder = Store(str(tmp_path / "index")), get_embedder("static")
    index_source(Source("code", str(root), "code", ("m0*.py",)), store, embedder)  # a first version
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    reader = subprocess.Popen(
        [sys.executable, "-c", READER_SCRIPT, str(tmp_path / "index")],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    index_source(Source("code", str(root), "code"), store, embedder)  # writes while the reader reads
    out, _ = reader.communicate(timeout=300)
    assert reader.returncode == 0
    counts, new = json.loads(out)
    assert counts and all(count == 5 for count in counts)  # never an empty or failed answer
    assert set(new) <= {0, 5} and new[-1] == 5  # the new commit is seen by the open reader


def test_an_ann_index_once_a_table_is_large_and_flat_below(tmp_path: Path) -> None:
    root = tmp_path / "code"
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
    names = {i: f"{words[i % 10]}_{words[i // 10 % 10]}_{i}" for i in range(1000)}
    make_tree(
        root, {f"m{i:04}.py": f"def {name}():\n    return '{words[i // 100]}'\n" for i, name in names.items()}
    )
    store, embedder = Store(str(tmp_path / "index")), get_embedder("static")
    source = Source("code", str(root), "code", ("m0*.py",))
    index_source(source, store, embedder, ann_min_rows=1001)  # 1000 files, one chunk each: flat
    flat = {h.path for h in find(store, "delta echo", "dense", 20, embedder)}
    assert _vector_indexed(store) is None
    index_source(source, store, embedder, ann_min_rows=1000)  # nothing new, but now large enough
    assert _vector_indexed(store) == 1000
    ann = {h.path for h in find(store, "delta echo", "dense", 20, embedder)}
    assert len(ann & flat) >= 18  # approximate, refined: nearly the exact top 20
    (root / "m0000.py").write_text("def delta_echo_zulu():\n    return 'delta echo'\n")
    index_source(source, store, embedder, ann_min_rows=1000)  # the index takes in the change
    assert _vector_indexed(store) == 1000
    assert find(store, "delta echo zulu", "sparse", 1, embedder)[0].path == "m0000.py"


def _vector_indexed(store: Store) -> int | None:
    """Rows in the table's vector index, or None without one."""
    indices = store.table("code").list_indices()
    return next((index.num_indexed_rows for index in indices if index.columns == ["vector"]), None)


def test_one_writer_at_a_time(tmp_path: Path) -> None:
    busy = pytest.raises(IndexBusy, match="another `lynxc index` is writing")
    with writer_lock(str(tmp_path)), busy, writer_lock(str(tmp_path)):
        pass
    with writer_lock(str(tmp_path)):  # released with its holder
        pass
