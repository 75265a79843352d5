"""`lynxc docs` as a user runs it: real `lynxc` subprocesses over a small project of its own
(tests/compiler/docs/project.py) and over the bundled specs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.compiler.docs.project import HOSTILE_CODE, SECRET_DEFAULT, lynxc, make_shop, write_spec
from tests.conftest import LYNXC, ROOT


def tree_bytes(folder: Path) -> dict[str, bytes]:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in files}


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shop project with its site written once to site/ (the default --out)."""
    project = make_shop(tmp_path_factory.mktemp("docs") / "shop")
    done = lynxc(project, "docs")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"lynxc docs: 1 server(s), 6 files written to {project / 'site'}\n"
    return project


@pytest.fixture
def project(shop: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(shop, tmp_path / "shop"))


def test_the_site_has_an_index_a_page_and_a_changelog_per_server_and_its_marker(shop: Path) -> None:
    assert sorted(tree_bytes(shop / "site")) == [
        ".lynxc-docs",
        "assets/docs.css",
        "assets/docs.js",
        "index.html",
        "shop/changelog.html",
        "shop/index.html",
    ]


def test_same_input_same_bytes(shop: Path, tmp_path: Path) -> None:
    for out in ("a", "b"):
        assert lynxc(shop, "docs", "--out", str(tmp_path / out)).returncode == 0
    first, second = tree_bytes(tmp_path / "a"), tree_bytes(tmp_path / "b")
    assert first == second == tree_bytes(shop / "site")


def test_hostile_description_text_is_escaped_and_code_spans_render_safely(shop: Path) -> None:
    for page in ("index.html", "shop/index.html", "shop/changelog.html"):
        html = (shop / "site" / page).read_text()
        assert "<script>alert" not in html and "<img src=x" not in html and "<b>bold" not in html
        assert "<i>items" not in html
    page = (shop / "site/shop/index.html").read_text()
    assert "&lt;script&gt;alert(&#39;owned&#39;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in page
    assert "<code>&lt;img src=x onerror=alert(1)&gt;</code>" in page
    assert "<title>Shop &lt;i&gt;items&lt;/i&gt; (shop 0.2.0)</title>" in page
    # The search data embedded in the index cannot close its <script> element.
    index = (shop / "site/index.html").read_text()
    data = re.search(r'<script type="application/json" id="search-data">(.*?)</script>', index, re.S)
    assert data and "<" not in data.group(1) and "\\u003cscript\\u003e" in data.group(1)
    assert HOSTILE_CODE not in index


def test_a_secret_setting_is_marked_and_its_value_never_shown(shop: Path) -> None:
    page = (shop / "site/shop/index.html").read_text()
    row = re.search(r"<tr class=\"secret\">(.*?)</tr>", page, re.S)
    assert row and "<code>api_token</code>" in row.group(1) and ">secret<" in row.group(1)
    assert "(secret: not shown)" in row.group(1)
    assert "<code>page_size</code>" in page and "<code>20</code>" in page  # other defaults are shown
    for name, data in tree_bytes(shop / "site").items():
        assert SECRET_DEFAULT.encode() not in data, name


def test_a_rename_links_to_the_tools_current_anchor_and_breaking_is_said_in_words(shop: Path) -> None:
    changelog = (shop / "site/shop/changelog.html").read_text()
    removed = re.search(r'<li class="change change-breaking breaking">(.*?)</li>', changelog, re.S)
    assert removed is not None
    entry = removed.group(1)
    assert '<strong class="level level-breaking">Breaking</strong>' in entry
    assert "tool find_items" in entry  # the old name, no longer on the server page: not linked
    assert 'Renamed to <a href="index.html#tool-findItems"><code>findItems</code></a>' in entry
    page = (shop / "site/shop/index.html").read_text()
    assert '<article class="tool" id="tool-findItems"' in page
    assert '<a href="index.html#tool-findItems">tool findItems</a>' in changelog  # the added tool


def test_a_parameter_table_shows_type_bounds_default_and_values(shop: Path) -> None:
    page = (shop / "site/shop/index.html").read_text()
    row = re.search(r"<tr>\s*<th scope=\"row\"><code>q</code></th>(.*?)</tr>", page, re.S)
    assert row is not None
    assert "string" in row.group(1) and "required" in row.group(1)
    assert "length ≥ 1" in row.group(1) and "length ≤ 50" in row.group(1)
    sort = re.search(r"<tr>\s*<th scope=\"row\"><code>sort</code></th>(.*?)</tr>", page, re.S)
    assert sort and "optional" in sort.group(1) and "<code>&#34;name&#34;</code>" in sort.group(1)
    assert "<code>&#34;price&#34;</code>" in sort.group(1)
    assert '<li class="badge badge-read-only">read-only</li>' in page
    assert "badge-destructive" not in page


def test_a_folder_lynxc_did_not_write_is_refused(project: Path, tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine")
    done = lynxc(project, "docs", "--out", str(theirs))
    assert done.returncode == 2
    assert done.stderr == (
        f"lynxc docs: {theirs} is not empty and was not written by `lynxc docs` (no .lynxc-docs in it); "
        "refusing to replace it: give --out a new or empty folder\n"
    )
    assert tree_bytes(theirs) == {"notes.txt": b"mine"}
    empty = tmp_path / "empty"
    empty.mkdir()
    assert lynxc(project, "docs", "--out", str(empty)).returncode == 0  # an empty folder is fine
    assert (empty / ".lynxc-docs").is_file()


def test_a_spec_that_does_not_build_leaves_the_old_site_as_it_was(project: Path) -> None:
    before = tree_bytes(project / "site")
    write_spec(project, "0.2.0", "findItems")
    spec = project / "specs/shop.yaml"
    spec.write_text(spec.read_text().replace("type: string, required", "type: strin, required"))
    done = lynxc(project, "docs")
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert lines[-1] == "lynxc docs: 1 error(s); the site is left as it was"
    assert any("shop.yaml:" in line and ": error " in line for line in lines), lines
    assert lynxc(project, "build").stderr.splitlines()[:-1] == lines[:-1]  # as `lynxc build` says it
    assert tree_bytes(project / "site") == before
    assert not [p for p in project.iterdir() if p.name.startswith(".site")]  # no staging left


def test_a_new_build_replaces_the_site_whole(project: Path) -> None:
    (project / "site" / "stray.html").write_text("old")
    write_spec(project, "0.2.0", "findItems")
    spec = project / "specs/shop.yaml"
    spec.write_text(spec.read_text().replace("Items per page.", "Items on one page."))
    assert lynxc(project, "docs").returncode == 0
    assert not (project / "site/stray.html").exists()
    assert "Items on one page." in (project / "site/shop/index.html").read_text()
    assert not [p for p in project.iterdir() if p.name.startswith(".site")]


def test_an_unknown_server_is_a_usage_error_naming_the_known_ones(shop: Path, tmp_path: Path) -> None:
    done = lynxc(shop, "docs", "shopp", "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert done.stderr == "lynxc docs: no server 'shopp': did you mean 'shop'? (known: shop)\n"
    assert not (tmp_path / "out").exists()


def test_named_servers_only(tmp_path: Path) -> None:
    done = lynxc(ROOT, "docs", "countries-sqlite", "dot-harness", "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    folders = sorted(p.name for p in (tmp_path / "out").iterdir() if p.is_dir())
    assert folders == ["assets", "countries-sqlite", "dot-harness"]
    index = (tmp_path / "out/index.html").read_text()
    assert 'href="countries-sqlite/index.html"' in index and "lynx-mcp" not in index


def test_a_killed_run_leaves_the_old_site_or_the_new_one(project: Path) -> None:
    """`lynxc docs` killed after each kind of write (tests/compiler/test_crash_safety.py's
    CRASH_AT): the site is always one whole site, and the next run clears what was left."""
    from tests.compiler.test_crash_safety import (
        crash_command,
        kill_points,
        lynxc_code,
        run_crashing,
        write_operations,
    )

    spec = project / "specs/shop.yaml"
    texts = {"a": spec.read_text(), "b": spec.read_text().replace("Items per page.", "Items on a page.")}
    sites = {}
    for variant in ("b", "a"):
        spec.write_text(texts[variant])
        assert lynxc(project, "docs").returncode == 0
        sites[variant] = tree_bytes(project / "site")
    assert sites["a"] != sites["b"]
    command = crash_command(lynxc_code(), "--project", str(project), "docs")
    spec.write_text(texts["b"])
    total = write_operations(command)
    outcomes = set()
    for point in kill_points(total, 4, seed=3):  # the first and last writes, and four between
        spec.write_text(texts["a"])
        assert lynxc(project, "docs").returncode == 0  # from site a, also clearing the last kill's leftovers
        assert not [p for p in project.iterdir() if p.name.startswith(".site")]
        spec.write_text(texts["b"])
        done = run_crashing(command, point)
        site = tree_bytes(project / "site")
        assert site in (sites["a"], sites["b"]), f"a mixed site after a kill at write {point} of {total}"
        outcomes.add("b" if site == sites["b"] else "a")
        assert done.returncode != 0 or site == sites["b"]
    assert outcomes == {"a", "b"}


def test_no_specs_or_an_out_that_is_not_a_folder_are_said_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    done = lynxc(tmp_path, "docs")
    assert (done.returncode, done.stderr) == (1, "lynxc docs: no specs found (looked in specs/)\n")
    assert not (tmp_path / "site").exists()
    (tmp_path / "file").write_text("x")
    done = lynxc(tmp_path, "docs", "--out", str(tmp_path / "file"))
    assert (done.returncode, done.stderr.count("\n")) == (2, 1) and "is not a folder" in done.stderr
    (tmp_path / "link").symlink_to(tmp_path / "specs")
    done = lynxc(tmp_path, "docs", "--out", str(tmp_path / "link"))
    assert (done.returncode, done.stderr.count("\n")) == (2, 1) and "symbolic link" in done.stderr


def test_an_out_that_cannot_be_written_is_said_in_one_line(project: Path, tmp_path: Path) -> None:
    """Root ignores file modes, so the folder cannot be made because a file sits in its path."""
    (tmp_path / "file").write_text("x")
    done = lynxc(project, "docs", "--out", str(tmp_path / "file" / "site"))
    assert (done.returncode, done.stderr.count("\n")) == (2, 1), done.stderr
    assert done.stderr.startswith(f"lynxc docs: cannot write the site to {tmp_path / 'file' / 'site'}: ")


def test_the_site_is_the_same_from_any_working_folder(tmp_path: Path) -> None:
    """Spec files are named relative to the project (pagila's statements live in .sql files)."""
    sites = []
    for cwd, out in ((ROOT, "here"), (tmp_path, "there")):
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        command = [LYNXC, "--project", str(ROOT), "docs", "pagila", "--out", str(tmp_path / out)]
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr
        sites.append(tree_bytes(tmp_path / out))
    assert sites[0] == sites[1]
    assert b"from <code>specs/pagila/sql/" in sites[0]["pagila/index.html"]
