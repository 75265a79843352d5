"""Glob semantics, one table of cases checked three ways: in Python (`glob_match`, what a source's
include/exclude use), and as the SQL condition LanceDB runs inside sparse, dense and hybrid
searches (`Filters(file_glob=...)`), on a plain table and on one whose `path` has a BTREE index
(the literal-prefix LIKE is then answered by the index and the regex only refines)."""

from __future__ import annotations

import asyncio
import random
import re
import time
from pathlib import Path

import numpy as np
import pytest

from lynxc.runtime.backends.lynx.filters import Filters
from lynxc.runtime.backends.lynx.globs import glob_match, glob_regex, glob_sql
from lynxc.runtime.backends.lynx.ranking import search
from lynxc.runtime.backends.lynx.reader import IndexReader
from lynxc.runtime.backends.lynx.sources import Source, sources_from_settings
from lynxc.runtime.backends.lynx.store import TABLE_PREFIX
from lynxc.runtime.errors import ToolError

# (pattern, path, matches)
CASES = [
    # the examples: `**/` matches zero folders, `*` never crosses `/`
    ("**/setup.py", "setup.py", True),
    ("**/setup.py", "pkg/setup.py", True),
    ("**/setup.py", "a/b/setup.py", True),
    ("**/setup.py", "xsetup.py", False),
    ("src/**/*.py", "src/a.py", True),
    ("src/**/*.py", "src/pkg/b.py", True),
    ("src/**/*.py", "src/pkg/deep/c.py", True),
    ("src/**/*.py", "lib/src/a.py", False),
    ("src/**/*.py", "src/a.pyc", False),
    ("src/*.py", "src/a.py", True),
    ("src/*.py", "src/pkg/b.py", False),
    ("src/*.py", "lib/src/a.py", False),
    ("src/*.py", "src/a.b.py", True),
    ("src/*", "src/pkg/b.py", False),
    # no `/`: the file name, in any folder
    ("*.cs", "c.cs", True),
    ("*.cs", "a/b/c.cs", True),
    ("*.cs", "a/b/c.csx", False),
    ("*.cs", "a.cs/readme.md", False),
    ("setup.py", "setup.py", True),
    ("setup.py", "pkg/setup.py", True),
    ("setup.py", "pkg/setup.py.bak", False),
    ("*.py", "src/.hidden.py", True),  # `*` matches a leading dot, as in gitignore
    ("*.py", "we ird/new\nline.py", True),
    # case-sensitive
    ("Makefile", "makefile", False),
    ("*.PY", "src/a.py", False),
    # a `/` at the start or in the middle anchors at the root
    ("/setup.py", "setup.py", True),
    ("/setup.py", "pkg/setup.py", False),
    ("pkg/setup.py", "pkg/setup.py", True),
    ("pkg/setup.py", "x/pkg/setup.py", False),
    ("/*.c", "x.c", True),
    ("/*.c", "a/x.c", False),
    ("./src/*.py", "src/a.py", True),
    ("src//*.py", "src/a.py", True),
    # `?` and classes: one character, never `/`
    ("src/?.py", "src/a.py", True),
    ("src/?.py", "src/ab.py", False),
    ("/a?b", "a/b", False),
    ("src/[ab].py", "src/a.py", True),
    ("src/[ab].py", "src/c.py", False),
    ("src/[!ab].py", "src/c.py", True),
    ("src/[!ab].py", "src/a.py", False),
    ("src/[^ab].py", "src/c.py", True),
    ("src/[a-c].py", "src/b.py", True),
    ("src/[a-c].py", "src/d.py", False),
    ("/a[!x]b", "a/b", False),
    ("/a[--0]b", "a/b", False),  # a range around `/` still skips it
    ("/a[--0]b", "a.b", True),
    ("[]]x", "]x", True),
    ("pages/[id].tsx", "pages/i.tsx", True),
    ("pages/[id].tsx", "pages/[id].tsx", False),
    # `\` makes the next character literal
    ("pages/\\[id\\].tsx", "pages/[id].tsx", True),
    ("\\*.py", "*.py", True),
    ("\\*.py", "a.py", False),
    ("a\\\\b.py", "a\\b.py", True),
    # `**` as a segment: zero or more folders; at the end, everything under
    ("a/**/b", "a/b", True),
    ("a/**/b", "a/x/b", True),
    ("a/**/b", "a/x/y/b", True),
    ("a/**/b", "a/xb", False),
    ("a/**/b", "b", False),
    ("a/**", "a/x", True),
    ("a/**", "a/x/y", True),
    ("a/**", "a", False),
    ("a/**", "ab/x", False),
    ("**", "a/b/c.txt", True),
    ("**/*", "top.txt", True),
    ("**/x/**", "x/y", True),
    ("**/x/**", "a/x/y/z", True),
    ("**/x/**", "x", False),
    ("a/**/**/b", "a/b", True),
    # `**` inside a segment is a plain `*`
    ("/a**b", "axyb", True),
    ("/a**b", "ax/yb", False),
    ("src/**.py", "src/a.py", True),
    ("src/**.py", "src/pkg/a.py", False),
    # a trailing `/`: a folder (at any depth unless anchored) and everything under it
    ("build/", "build/out.o", True),
    ("build/", "pkg/build/x/out.o", True),
    ("build/", "build", False),
    ("build/", "rebuild/x", False),
    ("/build/", "pkg/build/x", False),
    ("/build/", "build/x", True),
    # quotes, SQL and LIKE wildcards, regex metacharacters, non-ASCII: all literal
    ("it's/*.py", "it's/a.py", True),
    ("100%_done.txt", "100%_done.txt", True),
    ("100%_done.txt", "100xxdone.txt", False),
    ("/a_b/*", "a_b/x", True),
    ("/a_b/*", "axb/x", False),
    ("(x)+.txt", "(x)+.txt", True),
    ("(x)+.txt", "xx.txt", False),
    ("ü*/*.md", "über/x.md", True),
    ("ü*/*.md", "uber/x.md", False),
    ("docs/$x|y{2}.md", "docs/$x|y{2}.md", True),
]
PATHS = sorted({path for _, path, _ in CASES} | {"zzz/other.txt", "src/pkg/b.py"})
PATTERNS = sorted({pattern for pattern, _, _ in CASES})
DIMENSION = 8


def test_the_table_is_big_enough_and_consistent() -> None:
    assert len(CASES) >= 40 and len(set(CASES)) == len(CASES)
    assert len({(p, path) for p, path, _ in CASES}) == len(CASES)


@pytest.mark.parametrize(("pattern", "path", "expected"), CASES)
def test_glob_match(pattern: str, path: str, expected: bool) -> None:
    assert glob_match(path, pattern) is expected
    assert (re.fullmatch(glob_regex(pattern), path) is not None) is expected


def _vector(i: int) -> list[float]:
    rng = np.random.default_rng(i)
    v = rng.standard_normal(DIMENSION).astype(np.float32)
    return (v / np.linalg.norm(v)).tolist()


def _write_table(db, name: str, paths: list[str], texts: list[str], path_index: bool) -> None:
    from lancedb.index import FTS, BTree

    rows = [
        {
            "id": f"{i}",
            "path": path,
            "language": "text",
            "kind": "file",
            "symbol": "",
            "start_line": 1,
            "end_line": 1,
            "text": text,
            "search_text": text,
            "vector": _vector(i),
        }
        for i, (path, text) in enumerate(zip(paths, texts, strict=True))
    ]
    table = db.create_table(TABLE_PREFIX + name, data=rows)
    table.create_index("search_text", config=FTS())
    if path_index:
        table.create_index("path", config=BTree())


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Two tables of every path in CASES (one with a BTREE index on `path`), each row holding
    the word `alpha`, and a table where matches rank far below many non-matches."""
    import lancedb

    directory = str(tmp_path_factory.mktemp("globs"))
    db = lancedb.connect(directory)
    for name, path_index in (("plain", False), ("btree", True)):
        _write_table(db, name, PATHS, ["alpha beta"] * len(PATHS), path_index)
    crowd = [f"vendor/lib{i}/mod.py" for i in range(300)] + [f"src/keep{i}.py" for i in range(5)]
    texts = ["alpha alpha alpha alpha"] * 300 + ["alpha gamma delta epsilon zeta eta theta"] * 5
    _write_table(db, "crowd", crowd, texts, False)
    return directory


def _search(directory: str, source: str, query: str, vector: list[float], mode: str, top_k: int, glob: str):
    async def run():
        reader = IndexReader(directory)
        return await search(
            reader, [source], query, np.asarray(vector, np.float32), mode, top_k, Filters(file_glob=glob)
        )

    return asyncio.run(run())


@pytest.mark.parametrize("source", ["plain", "btree"])
@pytest.mark.parametrize("mode", ["sparse", "dense", "hybrid"])
def test_the_same_table_inside_lancedb_queries(index: str, mode: str, source: str) -> None:
    expected = {(p, path): want for p, path, want in CASES}
    for pattern in PATTERNS:
        hits = _search(index, source, "alpha", _vector(0), mode, len(PATHS) + 10, pattern)
        found = {h.path for h in hits}
        for path in PATHS:
            want = expected.get((pattern, path), glob_match(path, pattern))
            assert (path in found) is want, (mode, source, pattern, path, glob_sql(pattern))


def test_a_literal_prefix_is_answered_by_a_path_index(index: str) -> None:
    async def plan(source: str) -> str:
        table = (await IndexReader(index).tables([source]))[source]
        return await table.query().nearest_to_text("alpha").where(glob_sql("src/**/*.py")).explain_plan()

    assert "ScalarIndexQuery" in asyncio.run(plan("btree"))
    assert "ScalarIndexQuery" not in asyncio.run(plan("plain"))
    assert "LIKE" not in glob_sql("**/src/*.py")  # no literal prefix, no LIKE: the regex alone


@pytest.mark.parametrize("mode", ["sparse", "dense", "hybrid"])
def test_a_filtered_page_is_full_while_matches_exist_further_down(index: str, mode: str) -> None:
    # 300 chunks under vendor/ outrank the 5 under src/ (more `alpha`, the query's own vector)
    hits = _search(index, "crowd", "alpha", _vector(0), mode, 3, "src/*.py")
    assert len(hits) == 3 and all(h.path.startswith("src/keep") for h in hits)
    assert len(_search(index, "crowd", "alpha", _vector(0), mode, 10, "**/keep*.py")) == 5


def test_filters_combine_the_glob_with_the_other_filters() -> None:
    where = Filters(file_glob="src/**/*.py", extensions=(".py",), path_contains="a").where()
    assert where is not None and "regexp_like(path, '^src/" in where and where.count(" AND ") >= 3
    assert Filters().where() is None


INVALID = [
    ("", "must not be empty"),
    ("src/[ab", "never closed"),
    ("[", "never closed"),
    ("[!", "never closed"),
    ("a" * 501, "at most 500 characters"),
    ("a\0b", "NUL"),
    ("x\\", "unfinished escape"),
    ("[z-a].py", "runs backwards"),
    ("a[/]b", "other than `/`"),
    ("../x/*.py", "`..` never matches"),
    ("/", "must name something"),
    ("[[:alpha:]]*", "POSIX classes"),
    ("\ud800*.py", "lone surrogate"),
]


@pytest.mark.parametrize(("pattern", "rule"), INVALID)
def test_invalid_globs_name_the_field_and_the_rule(pattern: str, rule: str) -> None:
    with pytest.raises(ToolError) as raised:
        Filters(file_glob=pattern)
    message = str(raised.value)
    assert message.startswith("file_glob: ") and rule in message and len(message) < 300


def test_the_longest_valid_glob_is_accepted() -> None:
    assert glob_match("a" * 500, "a" * 500) and Filters(file_glob="*" * 500).where()


def test_include_exclude_semantics() -> None:
    source = Source(
        "code",
        "/nowhere",
        "code",
        ("src/**/*.py", "*.md", "/Makefile"),
        ("**/test_*.py", "build/", "*.min.*"),
    )
    wanted = {
        "src/a.py": True,
        "src/pkg/deep/b.py": True,
        "lib/src/a.py": False,  # `src/...` is anchored at the root
        "src/pkg/test_b.py": False,
        "src/test_a.py": False,  # `**/` is zero folders too
        "README.md": True,
        "docs/guide/intro.md": True,
        "docs/x.min.md": False,
        "src/build/gen.py": False,  # `build/` at any depth
        "Makefile": True,
        "tools/Makefile": False,
        "src/a.pyi": False,
    }
    assert {path: source.wants(path) for path in wanted} == wanted
    everything = Source("code", "/nowhere", "code")
    # As in .gitignore, a pattern that matches a folder matches everything in it.
    ignoring = Source("code", "/nowhere", "code", ("**/*",), ("tests/*", "*.egg-info", "node_modules"))
    kept = {
        "tests/test_a.py": False,
        "tests/unit/test_a.py": False,
        "src/tests/test_a.py": True,  # `tests/*` is anchored at the root
        "pkg.egg-info/PKG-INFO": False,
        "web/node_modules/x.js": False,
        "web/x.js": True,
    }
    assert {path: ignoring.wants(path) for path in kept} == kept
    assert ignoring.excludes_folder("web/node_modules") and not ignoring.excludes_folder("web")
    only_src = Source("code", "/nowhere", "code", ("src",))
    assert only_src.wants("src/pkg/a.py") and not only_src.wants("lib/a.py")
    assert all(everything.wants(p) for p in ("a", "a/b/c.txt", "x.py"))


def test_source_files_apply_the_globs(tmp_path: Path) -> None:
    for rel in ("setup.py", "src/a.py", "src/pkg/b.py", "src/pkg/test_b.py", "notes.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    source = Source("code", str(tmp_path), "code", ("**/*.py",), ("**/test_*.py",))
    assert [rel for rel, _ in source.files()] == ["setup.py", "src/a.py", "src/pkg/b.py"]


def test_bad_include_or_exclude_settings_name_the_setting() -> None:
    with pytest.raises(ToolError, match=r"^sources: 'code' exclude: `\[` at character 1 is never closed"):
        sources_from_settings({"sources": [{"name": "code", "root": "/x", "exclude": ["[ab"]}]})
    with pytest.raises(ToolError, match=r"^sources: 'docs' include: a glob must be a string, not int"):
        sources_from_settings({"sources": [{"name": "docs", "root": "/x", "include": [3]}]})


def test_python_matching_never_backtracks_badly() -> None:
    # CPU time of this process, not wall time: a hang guard that a loaded machine cannot trip.
    start = time.process_time()
    assert not glob_match("a" * 200, "*a*a*a*a*a*a*a*a*a*a*a*a*b")
    assert not glob_match("/".join(["a"] * 60) + "/c", "**/a/**/a/**/a/**/a/**/a/**/a/**/a/**/b")
    assert glob_match("/".join(["a"] * 60) + "/b", "**/a/**/a/**/a/**/a/**/a/**/a/**/a/**/b")
    assert time.process_time() - start < 1.0


def test_python_and_portable_regexes_agree_on_random_globs() -> None:
    """glob_match uses atomic groups that Rust's regex lacks; both translations must accept the
    same paths."""
    rng = random.Random(16)
    pieces = ["a", "b", ".", "/", "*", "**", "?", "[ab]", "[!a]", "**/", "/**"]
    names = ["a", "b", "ab", "ba", "a.b", "aa", "bab", "."]
    for _ in range(3000):
        pattern = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 7)))
        path = "/".join(rng.choice(names) for _ in range(rng.randint(1, 5)))
        try:
            regex = glob_regex(pattern)
        except ToolError:
            continue
        assert glob_match(path, pattern) is (re.fullmatch(regex, path) is not None), (pattern, path)


def test_built_in_skips_yield_to_include_and_exclude(tmp_path: Path) -> None:
    """Dependency, cache and build folders (`build`, `node_modules`, ...) and hidden names are
    skipped by default; an include pattern naming one brings it back, and a given `exclude`
    replaces the built-in list (a user's own exclude still wins over include)."""
    for rel in ("src/a.py", "build/pkg/core.py", "src/build/gen.py", "node_modules/m/x.py", ".github/ci.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")

    def listed(**settings: object) -> list[str]:
        (source,) = sources_from_settings(
            {"sources": [{"name": "c", "root": str(tmp_path), **settings}]}
        ).values()
        return [rel for rel, _ in source.files()]

    assert listed() == ["src/a.py"]
    assert listed(include=["**/*.py"]) == ["src/a.py"]  # a wildcard names no folder
    assert listed(include=["build/**", "src/**"]) == ["build/pkg/core.py", "src/a.py"]
    assert listed(include=["**/build/**/*.py"]) == ["build/pkg/core.py", "src/build/gen.py"]
    assert listed(include=["src/build/"]) == ["src/build/gen.py"]
    assert listed(include=[".github/**"]) == [".github/ci.py"]
    assert listed(exclude=[]) == ["build/pkg/core.py", "node_modules/m/x.py", "src/a.py", "src/build/gen.py"]
    assert listed(exclude=["node_modules/"]) == ["build/pkg/core.py", "src/a.py", "src/build/gen.py"]
    assert listed(include=["build/**"], exclude=["build/pkg/"]) == []
    named = Source("c", "/nowhere", "code", ("build/**",))
    assert named.wants("build/pkg/core.py") and not named.wants("src/build/gen.py")  # anchored
    assert not named.excludes_folder("build") and named.excludes_folder("src/build")
