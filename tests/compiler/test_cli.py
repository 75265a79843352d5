"""The `lynxc` verbs as a user runs them."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
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


def _outputs(project: Path) -> dict[Path, bytes]:
    folders = (project / "generated", project / "schema-changelog")
    return {p: p.read_bytes() for folder in folders for p in folder.rglob("*") if p.is_file()}


def test_rebuild_is_byte_identical_and_check_names_stale_files(tmp_path: Path) -> None:
    project = tmp_path / "p"
    shutil.copytree(ROOT / "specs", project / "specs")
    shutil.copytree(ROOT / "schema-changelog", project / "schema-changelog")
    run("--project", str(project), "build")
    first = _outputs(project)
    built = [p for p in first if "generated" in p.parts or p.name in ("CHANGELOG.md", "changelog.json")]
    assert run("--project", str(project), "build").stdout.endswith(
        f"0 file(s) written, {len(built)} unchanged\n"
    )
    assert first == _outputs(project)
    assert not any(re.search(rb"\d{4}-\d\d-\d\dT\d\d:\d\d", text) for text in first.values())  # no timestamps

    stale_file = project / "generated/dot-harness/README.md"
    stale_file.write_text("edited by hand\n")
    (project / "generated/dot-harness/leftover.py").write_text("x = 1\n")
    (project / "generated/dot-harness/tools.json").unlink()
    (project / "schema-changelog/dot-harness/CHANGELOG.md").write_text("edited\n")
    check = run("--project", str(project), "build", "--check", check=False)
    assert check.returncode == 1
    for stale in (
        "generated/dot-harness/README.md",
        "generated/dot-harness/tools.json",
        "generated/dot-harness/leftover.py",
        "schema-changelog/dot-harness/CHANGELOG.md",
    ):
        assert f"{stale}: error GENERATED_STALE" in check.stderr
    run("--project", str(project), "build")
    assert not (project / "generated/dot-harness/leftover.py").exists()
    run("--project", str(project), "build", "--check")
    assert first == _outputs(project)


def test_spec_change_changes_the_header_hash(tmp_path: Path) -> None:
    project = tmp_path / "p"
    shutil.copytree(ROOT / "specs", project / "specs")
    run("--project", str(project), "build")
    spec = project / "specs/dot-harness/server.yaml"
    spec.write_text(spec.read_text().replace("version: 0.1.0", "version: 0.1.1"))
    check = run("--project", str(project), "build", "--check", check=False)
    assert check.returncode == 1 and "server.py: error GENERATED_STALE" in check.stderr


def test_repository_generated_folder_is_current() -> None:
    assert "up to date" in run("build", "--check").stdout


def test_tools_prints_the_exact_tools_list() -> None:
    printed = json.loads(run("tools", "dot-harness").stdout)
    assert printed == json.loads((ROOT / "generated/dot-harness/tools.json").read_text())
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
    assert missing.returncode == 2 and "holds no generated server.py" in missing.stderr
    bad = run("serve", "dot-harness", "--set", "workspaces=[1]", check=False)
    assert bad.returncode == 2 and "setting 'workspaces': [1] is not of type 'object'" in bad.stderr
    env = {**os.environ, "LYNXC_WORKSPACES": "not json"}
    done = subprocess.run([LYNXC, "serve", "dot-harness"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 2 and "expects JSON" in done.stderr and "Traceback" not in done.stderr
    unknown = run("serve", "dot-harness", "--set", "colour=red", check=False)
    assert unknown.returncode == 2 and "unknown setting 'colour'" in unknown.stderr
