"""`lynxc load` on a real LanceDB store in tmp_path: every file format in, all-or-nothing
validation, upserts by key with revisions, --delete-missing, embedding only what changed, new
table generations on a declaration change, and crash safety of real `lynxc load` processes
killed at each stage (the store stays readable at the previous version; the next load works)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lynxc.runtime.backends.records.loader import LoadRejected, load
from lynxc.runtime.backends.records.store import LoadBusy, RecordStore, load_lock, read_current
from lynxc.runtime.backends.retrieval.embedders import Embedder
from lynxc.runtime.definition import ServerDefinition, load_definition
from tests.conftest import LYNXC, ROOT

# A records server built by the compiler: `books` with every field type, and `chapters` nested
# under it. Variants: a description edit (no declaration change) and a new field (a change).
SPEC = """
lynxc: 1
server:
  name: books-{variant}
  version: 0.1.0
collections:
  - name: books
    title: Books
    description: {description}
    key: id
    fields:
      id: {{type: string, required: true, description: The book id.}}
      title: {{type: string, required: true}}
      body: {{type: text}}
      year: {{type: integer}}
      price: {{type: number}}
      draft: {{type: boolean}}
      published: {{type: date}}
      updated: {{type: datetime}}
      tags: {{type: array, items: {{type: string}}}}
      name: {{type: localized}}
      status: {{type: enum, values: [Draft, Final]}}
      author: {{type: object, fields: {{name: {{type: string}}, born: {{type: integer}}}}}}
      parts: {{type: array, items: {{type: object, fields: {{x: {{type: text}}}}}}}}
{extra}    keyword: [title, body, name, tags]
    meaning: [title, body]
  - name: chapters
    id: "books/{{book}}/chapters"
    key: cid
    fields:
      cid: {{type: integer, required: true}}
      book: {{type: reference, to: books, required: true}}
      title: {{type: string}}
    keyword: [title]
"""
VARIANTS = {
    "base": {"description": "One book.", "extra": ""},
    "described": {"description": "One book of the shelf, in other words.", "extra": ""},
    "wider": {"description": "One book.", "extra": "      pages: {type: integer}\n"},
}


def build_server(project: Path, variant: str) -> ServerDefinition:
    from lynxc.compiler.build import build, write_files
    from lynxc.compiler.diagnostics import has_errors

    (project / "specs").mkdir(parents=True)
    (project / "specs/books.yaml").write_text(SPEC.format(variant=variant, **VARIANTS[variant]))
    output = build(project)
    assert not has_errors(output.diagnostics), [d.render() for d in output.diagnostics]
    write_files(project, output)
    return load_definition(project / "generated" / f"books-{variant}")


_BUILT: dict[str, ServerDefinition] = {}


def generated(variant: str, tmp_path_factory: pytest.TempPathFactory) -> ServerDefinition:
    """Each variant built once per session (the stores are per test), for every test module."""
    if variant not in _BUILT:
        _BUILT[variant] = build_server(tmp_path_factory.mktemp(f"books-{variant}"), variant)
    return _BUILT[variant]


@pytest.fixture(scope="session")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], ServerDefinition]:
    return lambda variant: generated(variant, tmp_path_factory)


class CountingEmbedder(Embedder):
    """Deterministic 8-d vectors; counts the texts it embeds."""

    def __init__(self) -> None:
        super().__init__("fake", 8, self._vectors)
        self.texts: list[str] = []

    def _vectors(self, texts: list[str]) -> np.ndarray:
        self.texts += texts
        return np.array([[(hash(t) >> s) % 97 + 1 for s in range(0, 64, 8)] for t in texts], dtype=np.float32)


def book(i: int, **extra: Any) -> dict[str, Any]:
    return {"id": f"b{i}", "title": f"Book number {i}", "year": 1900 + i % 100, **extra}


def write_jsonl(path: Path, rows: Sequence[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def server(servers: Callable[[str], ServerDefinition]) -> ServerDefinition:
    return servers("base")


@pytest.fixture
def settings(tmp_path: Path) -> dict[str, Any]:
    return {"data_dir": str(tmp_path / "data"), "embedder": "static"}


def records(data_dir: str | Path, resource: str = "books") -> dict[str, dict[str, Any]]:
    """What a reader sees: every row of the pointed version, by key."""

    async def read() -> dict[str, dict[str, Any]]:
        store = RecordStore(data_dir)
        state = store.current().resources.get(resource)
        if state is None:
            return {}
        table = await store.table(state)
        rows = (await table.query().to_arrow()).to_pylist()
        return {row["_key"]: row for row in rows}

    return asyncio.run(read())


def test_load_then_upsert(server: ServerDefinition, settings: dict[str, Any], tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    first = write_jsonl(tmp_path / "a.jsonl", [book(i) for i in range(5)])
    report = load(server, "books", [str(first)], settings=settings, embedder=embedder)
    assert (report.inserted, report.updated, report.unchanged, report.deleted) == (5, 0, 0, 0)
    assert report.records == 5 and report.table == "books-1" and report.new_generation
    assert len(embedder.texts) == 5
    before = records(settings["data_dir"])
    assert {r["_revision"] for r in before.values()} == {1}
    assert json.loads(before["b1"]["_data"]) == book(1)

    second = write_jsonl(tmp_path / "b.jsonl", [book(0), book(1, title="Changed"), book(9)])
    embedder.texts.clear()
    report = load(server, "books", [str(second)], settings=settings, embedder=embedder)
    assert (report.inserted, report.updated, report.unchanged, report.deleted) == (1, 1, 1, 0)
    assert not report.new_generation and report.records == 6
    assert sorted(embedder.texts) == sorted(["Changed", "Book number 9"])  # only what changed
    after = records(settings["data_dir"])
    assert after["b0"] == before["b0"]  # untouched, vector and all
    assert after["b1"]["_revision"] == 2 and after["b1"]["_created_at"] == before["b1"]["_created_at"]
    assert after["b1"]["_updated_at"] > before["b1"]["_updated_at"]
    assert after["b9"]["_revision"] == 1 and "b3" in after  # not in the files: kept

    report = load(server, "books", [str(second)], settings=settings, delete_missing=True, embedder=embedder)
    assert (report.inserted, report.updated, report.unchanged, report.deleted) == (0, 0, 3, 3)
    assert set(records(settings["data_dir"])) == {"b0", "b1", "b9"}


FULL = [
    {
        "id": "a1",
        "title": "Dune",
        "body": "Spice and sand.",
        "year": 1965,
        "price": 9.5,
        "draft": False,
        "published": "1965-08-01",
        "updated": "2020-01-02T03:04:05Z",
        "tags": ["sf", "classic"],
        "name": {"fr": "Dune", "en": "Dune"},
        "status": "Final",
        "author": {"name": "Frank Herbert", "born": 1920},
        "parts": [{"x": "Book one"}, {"x": "Book two"}],
    },
    {"id": "a2", "title": "Notes", "price": 3, "draft": True},
]
CSV = (
    "id,title,body,year,price,draft,published,updated,tags,name,status,author,parts\n"
    'a1,Dune,Spice and sand.,1965,9.5,false,1965-08-01,2020-01-02T03:04:05Z,"[""sf"", ""classic""]",'
    '"{""fr"": ""Dune"", ""en"": ""Dune""}",Final,"{""name"": ""Frank Herbert"", ""born"": 1920}",'
    '"[{""x"": ""Book one""}, {""x"": ""Book two""}]"\n'
    "a2,Notes,,,3,TRUE,,,,,,,\n"
)


def write_format(folder: Path, kind: str) -> Path:
    import gzip

    import pyarrow as pa
    import pyarrow.parquet as pq

    base = kind.removesuffix(".gz")
    path = folder / f"books.{kind}"
    if base == "jsonl":
        data = "".join(json.dumps(r) + "\n" for r in FULL).encode()
    elif base == "json":
        data = json.dumps(FULL, indent=2).encode()
    elif base == "wrapped.json":
        data = json.dumps({"version": 2, "items": FULL, "note": {"a": [1]}}).encode()
    elif base == "csv":
        data = CSV.encode()
    else:
        table = pa.Table.from_pylist(FULL)
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        data = sink.getvalue().to_pybytes()
    path.write_bytes(gzip.compress(data) if kind.endswith(".gz") else data)
    return path


@pytest.mark.parametrize(
    "kind", ["jsonl", "jsonl.gz", "json", "wrapped.json", "csv", "csv.gz", "parquet", "parquet.gz"]
)
def test_every_format_loads_the_same_records(
    kind: str, server: ServerDefinition, settings: dict[str, Any], tmp_path: Path
) -> None:
    path = write_format(tmp_path, kind)
    report = load(server, "books", [str(path)], settings=settings, embedder=CountingEmbedder())
    assert report.inserted == 2
    rows = records(settings["data_dir"])
    expected = {**FULL[0], "name": {"en": "Dune", "fr": "Dune"}}  # locales in order
    assert json.loads(rows["a1"]["_data"]) == expected
    assert json.loads(rows["a2"]["_data"]) == {"id": "a2", "title": "Notes", "price": 3.0, "draft": True}
    one = rows["a1"]
    assert one["f_name"] == ["en\x1fDune", "fr\x1fDune"] and one["f_author__born"] == 1920
    assert one["f_tags"] == ["sf", "classic"] and one["f_parts"] == 2
    assert (
        str(one["f_published"]) == "1965-08-01"
        and one["f_updated"].isoformat() == "2020-01-02T03:04:05+00:00"
    )
    # keyword fields as search terms (tokens.py), the title (a string field) twice
    assert one["_terms"] == "dune\ndune\nspice and sand\ndune dune\nsf classic"
    assert read_current(settings["data_dir"]).resources["books"].locales == ("en", "fr")


def test_a_bad_row_in_the_middle_changes_nothing(
    server: ServerDefinition, settings: dict[str, Any], tmp_path: Path
) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", [book(i) for i in range(10_000)])
    load(server, "books", [str(good)], settings=settings, embedder=CountingEmbedder())
    pointer = (Path(settings["data_dir"]) / "CURRENT.json").read_bytes()
    before = records(settings["data_dir"])
    rows: list[Any] = [book(i, title=f"New {i}") for i in range(10_000)]
    rows[4_999] = book(4_999, year="soon")
    bad = write_jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(LoadRejected) as caught:
        load(server, "books", [str(bad)], settings=settings, delete_missing=True, embedder=CountingEmbedder())
    assert caught.value.lines() == [
        f"{bad}:5000: year: Input should be a valid integer, unable to parse string as an integer"
    ]
    assert (Path(settings["data_dir"]) / "CURRENT.json").read_bytes() == pointer
    assert records(settings["data_dir"]) == before
    assert not list((Path(settings["data_dir"]) / "tmp").glob("*"))  # the spill is gone


def test_every_problem_is_listed_up_to_a_hundred(
    server: ServerDefinition, settings: dict[str, Any], tmp_path: Path
) -> None:
    path = tmp_path / "bad.jsonl"
    lines = [
        json.dumps(book(1)),
        "[1, 2]",
        "{not json",
        json.dumps(book(1)),
        json.dumps({"id": "x", "colour": 1}),
    ]
    lines += [json.dumps(book(i, year="x")) for i in range(200, 350)]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(LoadRejected) as caught:
        load(server, "books", [str(path)], settings=settings, embedder=CountingEmbedder())
    listed = caught.value.lines()
    assert listed[:4] == [
        f"{path}:2: not a JSON object but an array",
        f"{path}:3: invalid JSON: Expecting property name enclosed in double quotes (column 2)",
        f"{path}:5: column 'colour' is not a field of collection 'books' (its fields: author, body, "
        "draft, id, name, parts, price, published, status, tags, title, updated, year); remove it from "
        "the file, declare it, or load with --ignore-extra to skip undeclared columns",
        f"{path}:5: title: Field required",
    ]
    assert len(listed) == 101 and listed[-1] == "... and 55 more"  # 4 + 150 + 1 duplicate
    assert caught.value.total == 155
    assert not (Path(settings["data_dir"]) / "CURRENT.json").exists()


def test_duplicate_keys_across_files_are_refused(
    server: ServerDefinition, settings: dict[str, Any], tmp_path: Path
) -> None:
    one = write_jsonl(tmp_path / "one.jsonl", [book(1), book(2)])
    two = write_jsonl(tmp_path / "two.jsonl", [book(3), book(1, title="again")])
    with pytest.raises(LoadRejected) as caught:
        load(server, "books", [str(one), str(two)], settings=settings, embedder=CountingEmbedder())
    assert caught.value.lines() == [f"{two}:2: id: key 'b1' again (first at {one}:1)"]


def test_a_nested_record_needs_its_parent(
    server: ServerDefinition, settings: dict[str, Any], tmp_path: Path
) -> None:
    chapters = write_jsonl(
        tmp_path / "chapters.jsonl", [{"cid": 1, "book": "b1"}, {"cid": 2, "book": "zz", "title": "Lost"}]
    )
    with pytest.raises(LoadRejected) as caught:
        load(server, "chapters", [str(chapters)], settings=settings)
    assert caught.value.lines()[0] == (
        f"{chapters}:1: book: 'b1' is not the key of a loaded books record (nothing of books is loaded yet)"
    )
    load(
        server,
        "books",
        [str(write_jsonl(tmp_path / "b.jsonl", [book(1)]))],
        settings=settings,
        embedder=CountingEmbedder(),
    )
    with pytest.raises(LoadRejected) as caught:
        load(server, "chapters", [str(chapters)], settings=settings)
    assert caught.value.lines() == [f"{chapters}:2: book: 'zz' is not the key of a loaded books record"]
    good = write_jsonl(tmp_path / "good.jsonl", [{"cid": 1, "book": "b1"}])
    report = load(server, "chapters", [str(good)], settings=settings)
    assert report.inserted == 1 and records(settings["data_dir"], "chapters")["1"]["f_book"] == "b1"


def test_a_declaration_change_writes_a_new_generation(
    servers: Callable[[str], ServerDefinition], settings: dict[str, Any], tmp_path: Path
) -> None:
    server = servers("base")
    embedder = CountingEmbedder()
    first = write_jsonl(tmp_path / "a.jsonl", [book(i) for i in range(4)])
    load(server, "books", [str(first)], settings=settings, embedder=embedder)
    second = write_jsonl(tmp_path / "b.jsonl", [book(0, title="v2")])
    load(server, "books", [str(second)], settings=settings, embedder=embedder)

    # A description edit is no declaration change: same table.
    report = load(servers("described"), "books", [str(second)], settings=settings, embedder=embedder)
    assert report.table == "books-1" and not report.new_generation and report.unchanged == 1
    before = records(settings["data_dir"])
    old_state = read_current(settings["data_dir"]).resources["books"]

    # A new field is: a new table, every record embedded again, revisions carried over.
    wider_server = servers("wider")
    embedder.texts.clear()
    extra = write_jsonl(tmp_path / "c.jsonl", [book(1, pages=300), book(7)])
    report = load(wider_server, "books", [str(extra)], settings=settings, embedder=embedder)
    assert report.new_generation and report.table == "books-2"
    assert (report.inserted, report.updated, report.unchanged) == (1, 1, 3)
    assert len(embedder.texts) == 5
    after = records(settings["data_dir"])
    assert set(after) == {"b0", "b1", "b2", "b3", "b7"}
    assert after["b0"]["_revision"] == 2 and after["b0"]["_created_at"] == before["b0"]["_created_at"]
    assert after["b1"]["_revision"] == 2 and after["b1"]["f_pages"] == 300
    assert after["b2"]["_updated_at"] == before["b2"]["_updated_at"]

    # The old generation stays readable for an hour (cursors), then the next load drops it.
    current = read_current(settings["data_dir"])
    assert [(r.table, r.version) for r in current.retired][-1] == (old_state.table, old_state.version)
    old = asyncio.run(_count(settings["data_dir"], old_state.table, old_state.version))
    assert old == 4
    _age_retired(settings["data_dir"], hours=2)
    load(wider_server, "books", [str(extra)], settings=settings, embedder=embedder)
    assert read_current(settings["data_dir"]).retired == ()
    assert not (Path(settings["data_dir"]) / "lance/books-1.lance").exists()


async def _count(data_dir: str, table: str, version: int) -> int:
    return await (await RecordStore(data_dir).table_at(table, version)).count_rows()


def _age_retired(data_dir: str, hours: int) -> None:
    """Pretend the retired versions were retired `hours` ago."""
    import datetime as dt

    path = Path(data_dir) / "CURRENT.json"
    document = json.loads(path.read_text())
    at = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=hours)).isoformat()
    for entry in document["retired"]:
        entry["at"] = at
    path.write_text(json.dumps(document))


def test_another_embedder_embeds_everything_again(
    server: ServerDefinition, settings: dict[str, Any], tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", [book(i) for i in range(3)])
    load(server, "books", [str(path)], settings=settings, embedder=CountingEmbedder())
    other = CountingEmbedder()
    other.name, other.dimension = "other", 4
    other._encode = lambda texts: CountingEmbedder._vectors(other, texts)[:, :4]
    report = load(server, "books", [str(path)], settings=settings, embedder=other)
    assert report.new_generation and report.unchanged == 3 and len(other.texts) == 3
    state = read_current(settings["data_dir"]).resources["books"]
    assert (state.embedder, state.dimension) == ("other", 4)
    assert all(r["_revision"] == 1 for r in records(settings["data_dir"]).values())


def test_a_second_loader_is_refused(
    server: ServerDefinition, settings: dict[str, Any], tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", [book(1)])
    with load_lock(settings["data_dir"]), pytest.raises(LoadBusy, match=f"pid {os.getpid()}"):
        load(server, "books", [str(path)], settings=settings)


# Real `lynxc load` processes -------------------------------------------------------------


def lynxc_load(
    server: ServerDefinition, tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        load_command(server, tmp_path, *args),
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def load_command(server: ServerDefinition, tmp_path: Path, *args: str) -> list[str]:
    settings = ["--set", f"data_dir={tmp_path / 'data'}", "--set", "embedder=static"]
    return [LYNXC, "--project", str(tmp_path), "load", str(server.folder), *args, *settings]


def paused_load(server: ServerDefinition, tmp_path: Path, stage: str, *args: str) -> subprocess.Popen[str]:
    """A real `lynxc load` process, once it waits at `stage` (LYNXC_TEST_PAUSE_AT) for a line on
    its stdin; the caller ends it."""
    paused = subprocess.Popen(
        load_command(server, tmp_path, *args),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "LYNXC_TEST_PAUSE_AT": stage},
    )
    assert paused.stderr is not None
    for line in paused.stderr:  # ends when the process does
        if f"paused at {stage}" in line:
            return paused
    raise AssertionError(f"the load ended before pausing at {stage} (exit {paused.wait(timeout=60)})")


STAGES = ["validated", "writing", "written", "indexed", "optimized", "pointed"]


@pytest.mark.parametrize("stage", STAGES)
def test_a_killed_load_leaves_the_previous_version(
    stage: str, server: ServerDefinition, settings: dict[str, Any], tmp_path: Path
) -> None:
    first = write_jsonl(tmp_path / "a.jsonl", [book(i) for i in range(50)])
    load(server, "books", [str(first)], settings=settings)
    before = records(tmp_path / "data")
    second = write_jsonl(tmp_path / "b.jsonl", [book(i, title=f"v2 {i}") for i in range(30, 80)])
    killed = lynxc_load(
        server, tmp_path, "books", str(second), "--delete-missing", env={"LYNXC_TEST_KILL_AT": stage}
    )
    assert killed.returncode == -9, killed.stderr
    seen = records(tmp_path / "data")
    if stage == "pointed":  # the pointer was written: the load is done, only its clean-up was not
        assert set(seen) == {f"b{i}" for i in range(30, 80)}
    else:
        assert seen == before
    report = load(server, "books", [str(second)], settings=settings, delete_missing=True)
    counts = (report.inserted, report.updated, report.unchanged, report.deleted)
    assert counts == ((0, 0, 50, 0) if stage == "pointed" else (30, 20, 0, 30))
    after = records(tmp_path / "data")
    assert set(after) == {f"b{i}" for i in range(30, 80)}
    assert {after[f"b{i}"]["_revision"] for i in range(30, 50)} == {2}
    assert {after[f"b{i}"]["_revision"] for i in range(50, 80)} == {1}
    assert json.loads(after["b31"]["_data"])["title"] == "v2 31"
    assert not list((tmp_path / "data/tmp").glob("*"))


@pytest.mark.parametrize("stage", ["writing", "indexed"])
def test_a_killed_first_load_leaves_nothing_loaded(
    stage: str, server: ServerDefinition, settings: dict[str, Any], tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", [book(i) for i in range(20)])
    killed = lynxc_load(server, tmp_path, "books", str(path), env={"LYNXC_TEST_KILL_AT": stage})
    assert killed.returncode == -9
    assert records(tmp_path / "data") == {}
    report = load(server, "books", [str(path)], settings=settings)
    assert (report.inserted, report.table) == (20, "books-1")
    assert len(records(tmp_path / "data")) == 20


def test_readers_see_the_old_version_until_the_pointer_moves(
    server: ServerDefinition, settings: dict[str, Any], tmp_path: Path
) -> None:
    first = write_jsonl(tmp_path / "a.jsonl", [book(i) for i in range(40)])
    load(server, "books", [str(first)], settings=settings)
    store = RecordStore(tmp_path / "data")
    old_state = store.current().resources["books"]
    before = records(tmp_path / "data")
    second = write_jsonl(tmp_path / "b.jsonl", [book(i, title=f"new {i}") for i in range(20, 60)])
    paused = paused_load(server, tmp_path, "optimized", "books", str(second), "--delete-missing")
    try:
        assert paused.stdin is not None
        # Every Lance commit of the load is made; readers still see the old version.
        assert store.current().resources["books"] == old_state
        assert records(tmp_path / "data") == before
        # And a second loader is refused meanwhile, naming the one that runs.
        refused = lynxc_load(server, tmp_path, "books", str(first))
        assert refused.returncode == 1
        assert f"another `lynxc load` (pid {paused.pid}) is writing" in refused.stderr
        paused.stdin.write("\n")
        paused.stdin.flush()
        out, err = paused.communicate(timeout=120)
    finally:
        paused.kill()
    assert paused.returncode == 0, err
    assert "20 inserted, 20 updated, 0 unchanged, 20 deleted" in out
    state = store.current().resources["books"]
    assert state.version > old_state.version and state.records == 40
    after = records(tmp_path / "data")
    assert set(after) == {f"b{i}" for i in range(20, 60)}
    # The version readers had stays readable (cursors), an hour at least.
    assert asyncio.run(_count(str(tmp_path / "data"), old_state.table, old_state.version)) == 40


def test_cli_reports_and_errors(server: ServerDefinition, tmp_path: Path) -> None:
    good = write_jsonl(tmp_path / "a.jsonl", [book(1), book(2)])
    done = lynxc_load(server, tmp_path, "books", str(good))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        "books: 2 inserted, 0 updated, 0 unchanged, 0 deleted; 2 records in books-1"
    )

    unknown = lynxc_load(server, tmp_path, "bookz", str(good))
    assert unknown.returncode == 2
    assert "has no collection 'bookz' (did you mean 'books'? collections: books, chapters)" in unknown.stderr

    missing = lynxc_load(server, tmp_path, "books", str(tmp_path / "nope.jsonl"))
    assert (missing.returncode, missing.stderr.strip()) == (
        2,
        f"lynxc load: {tmp_path / 'nope.jsonl'}: no such file; nothing loaded",
    )

    broken = tmp_path / "broken.json"
    broken.write_text('[\n  {"id": "b1", "title": "x"},\n  {"id": ]\n')
    unparsable = lynxc_load(server, tmp_path, "books", str(broken))
    assert unparsable.returncode == 2
    assert f"lynxc load: {broken}:3:10: invalid JSON: Expecting value; nothing loaded" in unparsable.stderr

    bad = write_jsonl(tmp_path / "bad.jsonl", [book(3), {"id": "b4"}])
    refused = lynxc_load(server, tmp_path, "books", str(bad))
    assert refused.returncode == 1
    assert refused.stderr.splitlines()[-2:] == [
        f"{bad}:2: title: Field required",
        "lynxc load: 1 problem(s) in the rows; nothing loaded",
    ]
    unset = lynxc_load(server, tmp_path, "books", str(good), "--set", "colour=red")
    assert unset.returncode == 2 and "unknown setting 'colour'" in unset.stderr
    assert len(records(tmp_path / "data")) == 2


def test_filterable_columns_and_the_key_are_indexed(
    server: ServerDefinition, settings: dict[str, Any], tmp_path: Path
) -> None:
    load(
        server,
        "books",
        [str(write_format(tmp_path, "jsonl"))],
        settings=settings,
        embedder=CountingEmbedder(),
    )
    update = write_jsonl(tmp_path / "more.jsonl", [{**FULL[1], "id": "a3", "status": "Final"}])
    load(server, "books", [str(update)], settings=settings, embedder=CountingEmbedder())

    async def indexed() -> tuple[dict[str, str], list[str]]:
        store = RecordStore(settings["data_dir"])
        table = await store.table(store.current().resources["books"])
        kinds = {index.columns[0]: index.index_type for index in await table.list_indices()}
        final = await table.query().where("f_status = 'Final'").select(["_key"]).to_list()
        return kinds, sorted(row["_key"] for row in final)

    kinds, final = asyncio.run(indexed())
    assert kinds["_key"] == "BTree" and kinds["f_status"] == "Bitmap" and kinds["f_draft"] == "Bitmap"
    assert kinds["f_year"] == "BTree" and kinds["f_tags"] == "LabelList" and kinds["_terms"] == "FTS"
    assert "f_body" not in kinds and "f_name" not in kinds  # long and localized text: scanned
    assert final == ["a1", "a3"]  # the second load's row is found through the updated index


def test_a_load_killed_mid_way_leaves_no_spill_and_no_lock(
    server: ServerDefinition, settings: dict[str, Any], tmp_path: Path
) -> None:
    """A real `lynxc load` stopped with every row spilled, then SIGKILLed from outside: its spill
    file is gone at once (it never had a name), the next load is not blocked, and readers see
    the old data, then the new, each complete."""
    first = write_jsonl(tmp_path / "a.jsonl", [book(i) for i in range(50)])
    load(server, "books", [str(first)], settings=settings)
    before = records(tmp_path / "data")
    second = write_jsonl(tmp_path / "b.jsonl", [book(i, body="long text " * 200) for i in range(300)])
    paused = paused_load(server, tmp_path, "validated", "books", str(second), "--delete-missing")
    try:
        spill_open = [
            os.readlink(fd) for fd in Path(f"/proc/{paused.pid}/fd").iterdir() if "/tmp" in os.readlink(fd)
        ]
        assert spill_open, "the paused load holds its spill open"
        paused.kill()  # SIGKILL
        assert paused.wait(timeout=60) == -9
    finally:
        paused.kill()
        paused.wait(timeout=60)
    left = [p for p in (tmp_path / "data").rglob("*") if p.suffix == ".arrow" or p.parent.name == "tmp"]
    assert left == [], left
    assert records(tmp_path / "data") == before
    # The next load (in this process, as after the other kills) takes the lock at once.
    report = load(server, "books", [str(second)], settings=settings, delete_missing=True)
    assert (report.inserted, report.updated, report.deleted) == (250, 50, 0)
    after = records(tmp_path / "data")
    assert set(after) == {f"b{i}" for i in range(300)}
    assert not [p for p in (tmp_path / "data").rglob("*") if p.suffix == ".arrow"]


def test_undeclared_columns_are_refused_once_per_file_or_skipped_on_request(
    server: ServerDefinition, settings: dict[str, Any], tmp_path: Path
) -> None:
    rows = write_jsonl(tmp_path / "a.jsonl", [book(i, colour="red", tittle="x") for i in range(300)])
    table = tmp_path / "b.csv"
    table.write_text("id,title,isbn\nb900,Nine hundred,978-3\n")
    refused = lynxc_load(server, tmp_path, "books", str(rows), str(table))
    assert refused.returncode == 1
    problems = [line for line in refused.stderr.splitlines() if "is not a field" in line]
    assert problems == [
        f"{rows}:1: column 'colour' is not a field of collection 'books' (its fields: author, body, "
        "draft, id, name, parts, price, published, status, tags, title, updated, year); remove it from the "
        "file, declare it, or load with --ignore-extra to skip undeclared columns",
        f"{rows}:1: column 'tittle' is not a field of collection 'books' (did you mean 'title'?); "
        "remove it from the file, declare it, or load with --ignore-extra to skip undeclared columns",
        f"{table}:2: column 'isbn' is not a field of collection 'books' (its fields: author, body, "
        "draft, id, name, parts, price, published, status, tags, title, updated, year); remove it from the "
        "file, declare it, or load with --ignore-extra to skip undeclared columns",
    ], refused.stderr
    assert "3 problem(s) in the rows; nothing loaded" in refused.stderr
    assert records(tmp_path / "data") == {}
    done = lynxc_load(server, tmp_path, "books", str(rows), str(table), "--ignore-extra")
    assert done.returncode == 0, done.stderr
    loaded = records(tmp_path / "data")
    assert len(loaded) == 301
    assert json.loads(loaded["b900"]["_data"]) == {"id": "b900", "title": "Nine hundred"}
    assert set(json.loads(loaded["b1"]["_data"])) == {"id", "title", "year"}
