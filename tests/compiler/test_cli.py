"""The `lynxc` verbs as a user runs them."""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import LYNXC, ROOT

VERBS = ("init", "build", "serve", "tools", "schema", "config", "rules")


def run(*args: str, cwd: Path = ROOT, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([LYNXC, *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    if check:
        assert done.returncode == 0, done.stderr
    return done


@pytest.mark.parametrize("verb", VERBS)
def test_every_verb_has_help(verb: str) -> None:
    assert "usage: lynxc" in run(verb, "--help").stdout


def test_init_says_next_steps_that_work_from_where_it_ran(tmp_path: Path) -> None:
    """`lynxc --project DIR init X` from elsewhere: the next steps it prints keep --project DIR,
    and run as printed (the serve verb stops at once on a closed stdin)."""
    done = run("--project", "p", "init", "units", cwd=tmp_path)
    steps = done.stdout.splitlines()[-1].removeprefix("next: ").split(" && ")
    assert steps == ["lynxc --project p build", "lynxc --project p serve units"]
    unbuilt = run(*shlex.split(steps[1])[1:], cwd=tmp_path, check=False)
    assert (
        unbuilt.returncode == 2
        and "its spec is not built yet (run `lynxc --project p build`)" in unbuilt.stderr
    )
    run(*shlex.split(steps[0])[1:], cwd=tmp_path)
    typo = run("--project", "p", "serve", "unitz", cwd=tmp_path, check=False)
    assert typo.returncode == 2 and "did you mean 'units'?" in typo.stderr
    served = subprocess.run(
        [LYNXC, *shlex.split(steps[1])[1:]],
        cwd=tmp_path,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert served.returncode == 0, served.stderr


def test_init_build_serve_a_new_server(tmp_path: Path) -> None:
    """From an empty folder to a served, typed tool: the new-user path."""
    assert "created" in run("init", "word-tools", cwd=tmp_path).stdout
    again = run("init", "word-tools", cwd=tmp_path, check=False)
    assert again.returncode == 2 and "already exists" in again.stderr
    run("build", cwd=tmp_path)
    run("build", "--check", cwd=tmp_path)

    async def call() -> tuple[object, object]:
        params = StdioServerParameters(
            command=LYNXC, args=["--project", str(tmp_path), "serve", "word-tools"]
        )
        async with Client(params) as client:
            good = await client.call_tool("count_words", {"text": "one two\nthree"})
            bad = await client.call_tool("count_words", {"text": "x" * 100001})
            return good, bad

    good, bad = anyio.run(call)
    assert good.structured_content == {"words": 3, "lines": 2, "characters": 13}
    assert bad.is_error and "text: String should have at most 100000 characters" in bad.content[0].text
    tested = run("test", cwd=tmp_path)  # the scaffold's examples pass as written
    assert "\n3 passed in " in tested.stdout


def _outputs(project: Path) -> dict[Path, bytes]:
    folders = (project / "generated", project / "schema-changelog")
    return {p: p.read_bytes() for folder in folders for p in folder.rglob("*") if p.is_file()}


# The bundled servers whose build starts a database of its own (pagila: an ephemeral PostgreSQL,
# seconds each time): tests that rebuild every spec again and again leave them out, and their own
# tests check the same things (tests/compiler/sql/postgres/test_build.py: a byte-identical
# rebuild, a migration that makes `build --check` stale).
OWN_DATABASE = shutil.ignore_patterns("pagila")


@pytest.fixture(scope="module")
def built_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled specs (without OWN_DATABASE) and their released baselines, built once, in the
    project (no --project): the tests that need a built project start from a copy of it
    (`copy_built`), so each pays for the builds it checks, not for the first one."""
    project = tmp_path_factory.mktemp("built") / "p"
    shutil.copytree(ROOT / "specs", project / "specs", ignore=OWN_DATABASE)
    shutil.copytree(ROOT / "schema-changelog", project / "schema-changelog", ignore=OWN_DATABASE)
    run("build", cwd=project)
    return project


def copy_built(built_project: Path, project: Path) -> Path:
    shutil.copytree(built_project, project)
    return project


def test_rebuild_is_byte_identical_and_check_names_stale_files(built_project: Path, tmp_path: Path) -> None:
    project = copy_built(built_project, tmp_path / "p")  # built from its own folder, elsewhere
    first = _outputs(project)
    built = [p for p in first if "generated" in p.parts or p.name in ("CHANGELOG.md", "changelog.json")]
    assert run("--project", str(project), "build").stdout.endswith(
        f"0 file(s) written, {len(built)} unchanged\n"
    )
    assert first == _outputs(project)
    # No timestamps: an instant in the output is one the specs write (an example in a
    # description), never the time of the build.
    instant = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d")
    written = {
        m for p in (project / "specs").rglob("*") if p.is_file() for m in instant.findall(p.read_bytes())
    }
    assert written >= {m for text in first.values() for m in instant.findall(text)}

    # Stale files of one spec: checked and repaired by building that spec alone (the stale
    # files are its own); then the whole project checks current and is byte for byte the first.
    stale_file = project / "generated/dot-harness/README.md"
    stale_file.write_text("edited by hand\n")
    (project / "generated/dot-harness/leftover.py").write_text("x = 1\n")
    (project / "generated/dot-harness/tools.json").unlink()
    (project / "schema-changelog/dot-harness/CHANGELOG.md").write_text("edited\n")
    check = run("--project", str(project), "build", "--check", "specs/dot-harness", cwd=project, check=False)
    assert check.returncode == 1
    for stale in (
        "generated/dot-harness/README.md",
        "generated/dot-harness/tools.json",
        "generated/dot-harness/leftover.py",
        "schema-changelog/dot-harness/CHANGELOG.md",
    ):
        assert f"{stale}: error GENERATED_STALE" in check.stderr
    run("--project", str(project), "build", "specs/dot-harness", cwd=project)
    assert not (project / "generated/dot-harness/leftover.py").exists()
    run("--project", str(project), "build", "--check")
    assert first == _outputs(project)


def test_spec_change_changes_the_header_hash(built_project: Path, tmp_path: Path) -> None:
    project = copy_built(built_project, tmp_path / "p")
    spec = project / "specs/dot-harness/server.yaml"
    bumped = re.sub(
        r"version: (\d+)\.(\d+)\.(\d+)", lambda m: f"version: {m[1]}.{int(m[2]) + 1}.0", spec.read_text()
    )
    assert bumped != spec.read_text()
    spec.write_text(bumped)
    check = run("--project", str(project), "build", "--check", "specs/dot-harness", cwd=project, check=False)
    assert check.returncode == 1 and "server.py: error GENERATED_STALE" in check.stderr


def test_repository_generated_folder_is_current() -> None:
    assert "up to date" in run("build", "--check").stdout


def test_tools_prints_the_exact_tools_list() -> None:
    printed = json.loads(run("tools", "dot-harness").stdout)
    written = json.loads((ROOT / "generated/dot-harness/tools.json").read_text())
    assert written.pop("_generated").startswith("Generated by lynxc")  # the file's header, not payload
    assert printed == written
    assert [t["name"] for t in printed["tools"]] == [
        "list_project_files",
        "read_project_text",
        "search_project_text",
    ]


def test_schema_validates_the_bundled_specs() -> None:
    import jsonschema
    from ruamel.yaml import YAML

    schema = json.loads(run("schema").stdout)
    validator = jsonschema.Draft202012Validator(schema)
    for spec in (ROOT / "specs").rglob("*.yaml"):
        data = YAML(typ="safe").load(spec.read_text())
        assert not list(validator.iter_errors(data)), spec


def test_config_prints_an_mcp_servers_entry() -> None:
    config = json.loads(run("config", "dot-harness").stdout)
    entry = config["mcpServers"]["dot-harness"]
    assert Path(entry["command"]).name == "lynxc"
    assert entry["args"] == ["--project", str(ROOT), "serve", "dot-harness"]
    assert entry["env"] == {"LYNXC_WORKSPACES": "{}"}


def test_rules_lists_the_catalogue() -> None:
    out = run("rules").stdout
    assert "PARAM_TYPE_UNKNOWN" in out and "GENERATED_STALE" in out


def test_unknown_server_and_bad_setting_are_clear_errors(tmp_path: Path) -> None:
    missing = run("serve", "nope", check=False)
    assert missing.returncode == 2 and "no generated server 'nope'" in missing.stderr
    assert "(built: agent-tool, conformance, countries-sql, countries-sqlite, dot-harness," in missing.stderr
    typo = run("serve", "dot-harnes", check=False)
    assert typo.returncode == 2 and "did you mean 'dot-harness'?" in typo.stderr
    assert "lynxc build" not in typo.stderr  # a typo, not a missing build
    bad = run("serve", "dot-harness", "--set", "workspaces=[1]", check=False)
    assert bad.returncode == 2 and "setting 'workspaces': [1] is not of type 'object'" in bad.stderr
    env = {**os.environ, "LYNXC_WORKSPACES": "not json"}
    done = subprocess.run([LYNXC, "serve", "dot-harness"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 2 and "expects JSON" in done.stderr and "Traceback" not in done.stderr
    unknown = run("serve", "dot-harness", "--set", "colour=red", check=False)
    assert unknown.returncode == 2 and "unknown setting 'colour'" in unknown.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("tools", "lynx-mcp"),
        ("config", "lynx-mcp"),
        ("schema",),
        ("rules",),
        ("--help",),
        ("lint", "--score", "specs/dot-harness"),  # lint writes as for every spec; one is enough
    ],
)
def test_a_closed_stdout_pipe_ends_quietly(args: tuple[str, ...]) -> None:
    """`lynxc tools X | head`: once the reader has gone, no BrokenPipeError traceback."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first write: every write fails
    try:
        done = subprocess.run(
            [LYNXC, *args], cwd=ROOT, stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120
        )
    finally:
        os.close(write_end)
    assert done.returncode in (0, 141), done.stderr
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr


def test_tool_names_that_would_share_a_models_file_are_refused(tmp_path: Path) -> None:
    """`read-file` beside `read_file`, `Echo` beside `echo` (one file on macOS), and `__init__`:
    refused naming both tools, and nothing is written."""
    (tmp_path / "specs").mkdir()
    shutil.copy(ROOT / "tests/compiler/malformed/tool-name-collision.yaml", tmp_path / "specs/demo.yaml")
    shutil.copytree(ROOT / "tests/fixtures", tmp_path / "tests/fixtures")
    (tmp_path / "tests/__init__.py").write_text("")
    done = run("build", cwd=tmp_path, check=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    for pair in ("'read_file' and 'read-file'", "'read_file' and 'read.file'", "'Echo' and 'echo'"):
        assert re.search(rf"specs/demo.yaml:\d+:\d+: error TOOL_NAME_COLLISION: tools {pair}", done.stderr)
    assert "tool '__init__' would write models/__init__.py" in done.stderr
    assert "nothing written" in done.stderr and not (tmp_path / "generated").exists()


def test_generated_files_name_specs_relative_to_the_project(built_project: Path, tmp_path: Path) -> None:
    """Built in the project (`built_project`: `lynxc build` run in its folder, then copied here),
    checked from its parent and from elsewhere, and the other way round: the headers name spec
    files (and the data a SQL spec reads) from the project, so every run agrees."""
    project = copy_built(built_project, tmp_path / "p")
    for folder in ("specs", "generated", "schema-changelog"):  # the two servers the test is about
        for server in (project / folder).iterdir():
            if server.name not in ("dot-harness", "countries-sql"):
                shutil.rmtree(server)
    header = (project / "generated/countries-sql/server.py").read_text().splitlines()[0]
    assert "from specs/countries-sql/server.yaml " in header
    assert "specs/countries-sql/data/countries.jsonl.gz" in header
    for where, named in ((tmp_path, "p"), (Path("/"), str(project))):
        check = run("--project", named, "build", "--check", cwd=where, check=False)
        assert check.returncode == 0, check.stderr
    run("--project", "p", "build", cwd=tmp_path)
    assert (project / "generated/countries-sql/server.py").read_text().splitlines()[0] == header
    run("build", "--check", cwd=project)


def test_init_types_the_backend_with_the_generated_model_and_ignores_stores(tmp_path: Path) -> None:
    """The scaffolded backend's `params` is the input model `lynxc build` writes (importable from
    the project root, where an editor resolves it), and .gitignore keeps the default store and
    interrupted writes out of commits, beside the lines it already had."""
    (tmp_path / ".gitignore").write_text("node_modules/")
    done = run("init", "units", cwd=tmp_path)
    assert "updated .gitignore" in done.stdout and "go under .lynxc-data/" in done.stdout
    run("build", cwd=tmp_path)
    tree = ast.parse((tmp_path / "units_backend.py").read_text())
    function = next(n for n in tree.body if isinstance(n, ast.AsyncFunctionDef))
    annotation = function.args.args[0].annotation
    assert isinstance(annotation, ast.Name) and annotation.id == "CountWordsInput"
    guarded = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    (imported,) = [n for n in guarded.body if isinstance(n, ast.ImportFrom)]
    assert [a.name for a in imported.names] == ["CountWordsInput"]
    code = f"import {imported.module} as m; print(sorted(m.CountWordsInput.model_fields))"
    fields = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert fields.stdout.strip() == "['text']", fields.stderr
    # A dashed name is no package name: the import resolves with the server's folder as a root,
    # the extra path the scaffold's comment asks an editor for.
    run("init", "word-tools", cwd=tmp_path)
    run("build", cwd=tmp_path)
    dashed = ast.parse((tmp_path / "word_tools_backend.py").read_text())
    guarded = next(n for n in dashed.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    (imported,) = [n for n in guarded.body if isinstance(n, ast.ImportFrom)]
    code = f"import {imported.module} as m; print(sorted(m.CountWordsInput.model_fields))"
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "generated/word-tools")}
    fields = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert fields.stdout.strip() == "['text']", fields.stderr
    assert (
        "add generated/word-tools to your editor's extra paths"
        in (tmp_path / "word_tools_backend.py").read_text()
    )
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    for ignored in (".lynxc-data/units/records.lance", "node_modules/x", "specs/.units.yaml.a1b2c3d4.tmp"):
        assert subprocess.run(["git", "check-ignore", "-q", ignored], cwd=tmp_path).returncode == 0, ignored
    assert subprocess.run(["git", "check-ignore", "-q", "generated/units/server.py"], cwd=tmp_path).returncode
