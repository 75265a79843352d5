"""Incremental builds (compiler/cache.py, depfile.py, build.py): a build with the cache gives,
byte for byte, the files and diagnostics of a clean build, whatever was edited, whatever
happened to the cache; and what it reuses it really reuses (the store counts its hits).

The projects are small copies in a temporary folder: a DuckDB server written here (a JSON
Lines sample, one YAML file per tool), the bundled countries-sql, and the `lynxc init` server
with its Python backend."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from lynxc.compiler.build import BuildOutput, build, open_cache, write_files
from lynxc.compiler.cache import CACHE_DIR, CACHE_DIR_ENV, Store
from lynxc.compiler.emit.models import MODELS_ENTRY
from lynxc.compiler.fingerprint import compiler_fingerprint
from lynxc.compiler.lower.backend_probe import PROBE_ENTRY
from lynxc.compiler.lower.sql.statement_cache import SQL_ENTRY
from lynxc.compiler.scaffold import scaffold
from lynxc.compiler.spec.source import YAML_ENTRY
from tests.conftest import LYNXC, ROOT

SERVER = """\
lynxc: 1
server:
  name: small-sql
  version: 0.1.0
  title: Small SQL
  instructions: Items of a small table, one DuckDB statement per tool.
  settings:
    items_file: {type: string, default: items.jsonl, description: The items as JSON Lines.}
  duckdb:
    views:
      items:
        reader: read_json
        setting: items_file
        options: {format: newline_delimited}
        sample: data/items.jsonl
"""

TOOL = """\
lynxc: 1
tool:
  name: {name}
  title: Items of group {group}
  annotations: {{readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false}}
  description:
    purpose: List the items of group {group} scoring at least a minimum.
    usage: Use it to browse group {group}; the other tools read the other groups.
    behaviour: Read-only. Sorted by score, highest first. At most {{caps.max_rows}} rows.
    returns: rows of the items, with row_count and truncated.
  parameters:
    min_score:
      {{type: integer, minimum: 0, maximum: 1000, default: 0, description: "The least score a row may have."}}
  backend:
    sql: |
      SELECT * FROM items WHERE grp = {group} AND score >= $min_score ORDER BY score DESC, id
"""

ITEM = {"id": 0, "name": "item", "grp": 0, "score": 1}


@pytest.fixture(autouse=True)
def _own_cache_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CACHE_DIR_ENV, raising=False)  # each project keeps its cache beside it


def small_sql(project: Path, tools: int = 3) -> None:
    spec = project / "specs" / "small-sql"
    (spec / "data").mkdir(parents=True)
    (spec / "server.yaml").write_text(SERVER)
    write_items(project, [{**ITEM, "id": i, "grp": i % tools, "score": i * 7 % 100} for i in range(20)])
    for group in range(tools):
        (spec / f"group_{group}.yaml").write_text(TOOL.format(name=f"group_{group}", group=group))


def write_items(project: Path, rows: list[dict[str, object]]) -> None:
    text = "".join(json.dumps(row) + "\n" for row in rows)
    (project / "specs" / "small-sql" / "data" / "items.jsonl").write_text(text)


def make_project(root: Path, *, countries: bool = False) -> Path:
    small_sql(root)
    scaffold(root, "hello")
    if countries:
        shutil.copytree(ROOT / "specs" / "countries-sql", root / "specs" / "countries-sql")
    return root


def rendered(output: BuildOutput) -> tuple[dict[str, str], list[str], tuple[str, ...]]:
    return output.files, [d.render() for d in output.diagnostics], output.names


def assert_same_as_clean(project: Path, store: Store) -> BuildOutput:
    cached = build(project, cache=store)
    clean = build(project)
    assert rendered(cached) == rendered(clean)
    assert cached.servers == ()  # a build with a cache hands out no IRs; names say what it built
    if not any(d.severity == "error" for d in clean.diagnostics):
        write_files(project, clean)
    return cached


# Edits a spec author makes. Each takes the project and a random source, and changes something.


def some_tool(project: Path, rng: random.Random) -> Path:
    return rng.choice(sorted((project / "specs" / "small-sql").glob("group_*.yaml")))


def edit_description(project: Path, rng: random.Random) -> None:
    path = some_tool(project, rng)
    path.write_text(path.read_text().replace("List the items", f"List the items ({rng.random():.6f})"))


def edit_cap(project: Path, rng: random.Random) -> None:
    path = project / "specs" / "hello.yaml"
    text = path.read_text()
    start = text.index("value: ") + len("value: ")
    end = text.index("\n", start)
    path.write_text(text[:start] + str(rng.randrange(10, 200_000)) + text[end:])


def add_parameter(project: Path, rng: random.Random) -> None:
    path = some_tool(project, rng)
    extra = '    max_score: {type: integer, default: 1000, description: "The most score a row may have."}\n'
    text = path.read_text()
    if "max_score" in text:  # remove it again
        path.write_text(text.replace(extra, "").replace(" AND score <= $max_score", ""))
    else:
        text = text.replace("  backend:\n", extra + "  backend:\n", 1)
        if rng.random() < 0.7:  # else: declared and unused, an error the cached build must report too
            text = text.replace("score >= $min_score", "score >= $min_score AND score <= $max_score")
        path.write_text(text)


def edit_statement(project: Path, rng: random.Random) -> None:
    path = some_tool(project, rng)
    choices = [
        "SELECT *",
        "SELECT id, name",
        "SELECT id, score * 2 AS doubled",
        "SELECT nme",
    ]  # the last: an error
    text = path.read_text()
    current = next(c for c in choices if f"sql: |\n      {c} " in text)
    path.write_text(text.replace(f"      {current} ", f"      {rng.choice(choices)} ", 1))


def edit_sample(project: Path, rng: random.Random) -> None:
    rows = [{**ITEM, "id": i, "grp": i % 3, "score": rng.randrange(100)} for i in range(rng.randrange(5, 30))]
    if rng.random() < 0.5:  # a new column: `SELECT *` returns it, the output schemas change
        rows = [{**row, "colour": "red"} for row in rows]
    write_items(project, rows)


def touch_backend(project: Path, rng: random.Random) -> None:
    path = project / "hello_backend.py"
    text = path.read_text()
    declared, bare = 'caps={"max_text_chars"}', "caps=set()"
    path.write_text(text.replace(declared, bare) if declared in text else text.replace(bare, declared))


def delete_tool_file(project: Path, rng: random.Random) -> None:
    tools = sorted((project / "specs" / "small-sql").glob("group_*.yaml"))
    if len(tools) > 1:
        rng.choice(tools).unlink()
    else:
        (project / "specs" / "small-sql" / "group_1.yaml").write_text(TOOL.format(name="group_1", group=1))


def add_release(project: Path, rng: random.Random) -> None:
    """Release the server as it is, then bump its version: the changelog and baselines change."""
    from lynxc.compiler.cli import main

    text = (project / "specs" / "hello.yaml").read_text()
    version = text.split("version: ", 1)[1].split("\n", 1)[0]
    with pytest.raises(SystemExit):
        main(["--project", str(project), "release", "hello", "--date", "2026-01-02"])
    major, minor, patch = map(int, version.split("."))
    bumped = f"{major}.{minor + 1}.{patch}"
    (project / "specs" / "hello.yaml").write_text(
        text.replace(f"version: {version}", f"version: {bumped}", 1)
    )


EDITS: list[Callable[[Path, random.Random], None]] = [
    edit_description,
    edit_cap,
    add_parameter,
    edit_statement,
    edit_sample,
    touch_backend,
    delete_tool_file,
    add_release,
]


@pytest.mark.parametrize("seed", [1, 2])
def test_random_edits_build_what_a_clean_build_builds(tmp_path: Path, seed: int) -> None:
    project = make_project(tmp_path)
    store = open_cache(project)
    assert_same_as_clean(project, store)
    rng = random.Random(seed)
    for edit in [*EDITS, *rng.sample(EDITS, 4)]:
        edit(project, rng)
        assert_same_as_clean(project, store)
        assert_same_as_clean(project, open_cache(project))  # a second build: reused, same again


def test_a_bundled_sql_server_edited_builds_what_a_clean_build_builds(tmp_path: Path) -> None:
    project = make_project(tmp_path, countries=True)
    store = open_cache(project)
    assert_same_as_clean(project, store)
    tool = project / "specs" / "countries-sql" / "find_countries.yaml"
    tool.write_text(tool.read_text().replace("ORDER BY area DESC NULLS LAST, code", "ORDER BY code"))
    assert_same_as_clean(project, store)
    tool.write_text(tool.read_text().replace("value: 250", "value: 300"))
    assert_same_as_clean(project, store)


def test_a_no_change_build_compiles_nothing_and_one_edit_recompiles_one_tool(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    build(project, cache=open_cache(project))

    again = open_cache(project)
    build(project, cache=again)
    assert again.hits["server"] == 2 and not again.misses  # small-sql and hello, neither compiled

    path = project / "specs" / "small-sql" / "group_1.yaml"
    path.write_text(path.read_text().replace("The least score", "The smallest score"))  # its input schema
    edited = open_cache(project)
    build(project, cache=edited)
    assert edited.misses["server"] == 1 and edited.hits["server"] == 1
    assert (edited.misses[SQL_ENTRY], edited.hits[SQL_ENTRY]) == (1, 2)
    assert (edited.misses[MODELS_ENTRY], edited.hits[MODELS_ENTRY]) == (1, 2)
    assert edited.hits[YAML_ENTRY] == 3 and edited.misses[YAML_ENTRY] == 1  # server.yaml, the others

    spec = project / "specs" / "hello.yaml"
    spec.write_text(spec.read_text().replace("quick size checks", "quick size checks (edited)"))
    described = open_cache(project)
    build(project, cache=described)
    assert described.misses["server"] == 1 and described.hits[PROBE_ENTRY] == 1  # no child process

    backend = project / "hello_backend.py"
    backend.write_text(backend.read_text() + "\n# touched\n")
    touched = open_cache(project)
    build(project, cache=touched)
    assert touched.misses["server"] == 1 and touched.misses[PROBE_ENTRY] == 1  # read again


@pytest.mark.parametrize("damage", ["truncate", "garble", "empty", "swap", "foreign", "not-json-payload"])
def test_a_damaged_cache_builds_what_a_clean_build_builds(tmp_path: Path, damage: str) -> None:
    project = make_project(tmp_path)
    build(project, cache=open_cache(project))
    entries = sorted((project / CACHE_DIR).rglob("*.json"))
    assert len(entries) > 5
    texts = [entry.read_text() for entry in entries]
    for index, entry in enumerate(entries):
        text = texts[index]
        if damage == "truncate":
            entry.write_text(text[: len(text) // 2])
        elif damage == "garble":
            middle = len(text) // 2
            entry.write_text(text[:middle] + ("x" if text[middle] != "x" else "y") + text[middle + 1 :])
        elif damage == "empty":
            entry.write_bytes(b"")
        elif damage == "swap":  # another entry, intact, in this one's place
            entry.write_text(texts[(index + 1) % len(texts)])
        elif damage == "foreign":  # well-formed, its digest right, but not lynxc's
            payload = json.dumps({"files": {}, "inputs": {}})
            entry.write_text(json.dumps({"format": 1, "name": "x", "kind": "server", "payload": payload}))
        else:
            entry.write_bytes(b"\xff\xfe" + text.encode())
    store = open_cache(project)
    cached = assert_same_as_clean(project, store)
    assert cached.files and not store.hits  # nothing damaged was used
    assert not (set(entries) - set((project / CACHE_DIR).rglob("*.json")))  # each rewritten whole
    assert_same_as_clean(project, open_cache(project))


def test_a_cache_of_another_compiler_is_not_used(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    build(project, cache=Store(project / CACHE_DIR, "another lynxc"))
    store = open_cache(project)
    assert store.fingerprint == compiler_fingerprint() != "another lynxc"
    assert_same_as_clean(project, store)
    assert not store.hits


def test_a_payload_that_lies_about_its_server_is_not_used(tmp_path: Path) -> None:
    """An entry intact but whose payload is not what the build writes (a wrong type in a file
    list) is a miss: the reader checks shapes, never trusts them."""
    project = make_project(tmp_path)
    build(project, cache=open_cache(project))
    for entry in (project / CACHE_DIR / "server").rglob("*.json"):
        outer = json.loads(entry.read_text())
        payload = json.loads(outer["payload"])
        payload["files"] = {"generated/x": 1}
        outer["payload"] = json.dumps(payload)
        import hashlib

        outer["sha256"] = hashlib.sha256(outer["payload"].encode()).hexdigest()
        entry.write_text(json.dumps(outer))
    assert_same_as_clean(project, open_cache(project))


def test_the_build_works_when_the_cache_is_deleted_or_cannot_be_written(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    build(project, cache=open_cache(project))
    shutil.rmtree(project / CACHE_DIR)
    assert_same_as_clean(project, open_cache(project))

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    unwritable = Store(blocker / "cache", compiler_fingerprint())
    assert_same_as_clean(project, unwritable)
    assert_same_as_clean(project, unwritable)
    assert not unwritable.hits


def test_the_build_works_when_the_cache_is_deleted_while_it_runs(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    build(project, cache=open_cache(project))
    done = threading.Event()

    def delete_again_and_again() -> None:
        while not done.is_set():
            shutil.rmtree(project / CACHE_DIR, ignore_errors=True)
            time.sleep(0.001)

    deleter = threading.Thread(target=delete_again_and_again)
    deleter.start()
    try:
        for _ in range(3):
            assert_same_as_clean(project, open_cache(project))
    finally:
        done.set()
        deleter.join()
    assert_same_as_clean(project, open_cache(project))


def test_a_file_saved_during_the_build_is_not_recorded_with_the_old_output(tmp_path: Path) -> None:
    """The recorder rehashes every input once the server is built: one that changed meanwhile
    keeps the entry out of the cache, so the next build compiles again."""
    from lynxc.compiler.depfile import Recorder

    path = tmp_path / "input.txt"
    path.write_text("one")
    with Recorder([str(tmp_path)], []) as seen:
        path.read_text()
        path.write_text("two")
    assert str(path) in seen.inputs and not seen.still_valid()


def run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LYNXC, "--project", str(project), *args], capture_output=True, text=True, timeout=300
    )


def test_the_command_line_reuses_the_cache_without_loading_the_compiler(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    assert run(project, "build", "--no-cache").returncode == 0
    assert not (project / CACHE_DIR).exists()  # --no-cache writes none
    assert run(project, "build").returncode == 0
    assert (project / CACHE_DIR).is_dir()
    check = run(project, "build", "--check")
    assert check.returncode == 0, check.stderr
    script = f"""
import sys
from pathlib import Path
from lynxc.compiler.build import build, open_cache
project = Path({str(project)!r})
store = open_cache(project)
output = build(project, cache=store)
assert output.names == ("hello", "small-sql") and not store.misses, (output.names, store.misses)
heavy = ("pydantic", "jinja2", "duckdb", "datamodel_code_generator", "ruamel", "lynxc.compiler.spec.models")
print([name for name in heavy if name in sys.modules])
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"

    readme = project / "generated" / "hello" / "README.md"
    readme.write_text(readme.read_text() + "edited by hand\n")
    edited = run(project, "build", "--check")  # reused from the cache, still compared with the disk
    assert edited.returncode == 1 and "generated/hello/README.md: error GENERATED_STALE" in edited.stderr
    assert run(project, "build").returncode == 0 and run(project, "build", "--check").returncode == 0

    (project / "specs" / "small-sql" / "data" / "items.jsonl").write_text(
        json.dumps({**ITEM, "extra": 1}) + "\n"
    )
    stale = run(project, "build", "--check")  # the cached check notices a changed sample
    assert stale.returncode == 1 and "GENERATED_STALE" in stale.stderr


def test_init_keeps_the_cache_out_of_commits(tmp_path: Path) -> None:
    scaffold(tmp_path, "hello")
    assert f"{CACHE_DIR}/" in (tmp_path / ".gitignore").read_text().splitlines()


def test_lynxc_cache_dir_moves_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = make_project(tmp_path / "project")
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "elsewhere"))
    store = open_cache(project)
    assert_same_as_clean(project, store)
    assert not (project / CACHE_DIR).exists() and any((tmp_path / "elsewhere").rglob("*.json"))
    again = open_cache(project)
    build(project, cache=again)
    assert again.hits["server"] == 2


def test_two_builds_at_once_share_the_cache(tmp_path: Path) -> None:
    """Two `lynxc build --check` processes fill the same cache at the same time (as CI workers or
    `lynxc dev` beside a build would): entries are renamed into place whole, so both succeed and
    what they leave builds what a clean build builds."""
    project = make_project(tmp_path)
    write_files(project, build(project))
    command = [LYNXC, "--project", str(project), "build", "--check"]
    runs = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)
    ]
    for process in runs:
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
    store = open_cache(project)
    assert_same_as_clean(project, store)
    assert store.hits["server"] == 2
