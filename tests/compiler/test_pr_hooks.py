"""The pre-commit hooks (.pre-commit-hooks.yaml) run by pre-commit itself, `pre-commit try-repo`,
on a project made by `lynxc init` in a temporary git repository. Offline: the hooks use the
`lynxc` on PATH (this venv's), so pre-commit installs nothing, and PRE_COMMIT_HOME is temporary.

A good project tries this repository itself, as a user's `repo:` would name it; the other
cases try a repository of its own holding this repository's .pre-commit-hooks.yaml, so that
each run does not clone all of lynxc's history."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from tests.fixtures.git_repo import commit, git, lynxc, released_demo

MANIFEST = ROOT / ".pre-commit-hooks.yaml"
PRE_COMMIT = str(Path(sys.executable).with_name("pre-commit"))


@pytest.fixture(scope="module")
def hooks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hooks") / "lynxc-hooks"
    folder.mkdir()
    shutil.copy(MANIFEST, folder / MANIFEST.name)
    git(folder, "init", "-q", "-b", "main")
    commit(folder, "hooks")
    return folder


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return released_demo(tmp_path_factory.mktemp("project") / "project")


@pytest.fixture
def project(released: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "project"
    shutil.copytree(released, copy)
    return copy


def try_repo(project: Path, hooks: Path, *hook: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/bin{os.pathsep}/bin",
        "HOME": str(project.parent),
        "PRE_COMMIT_HOME": str(project.parent / "pre-commit-home"),
    }
    command = [PRE_COMMIT, "try-repo", str(hooks), *hook, "--all-files"]
    return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True)


def edit(project: Path, old: str, new: str) -> None:
    spec = project / "specs/demo.yaml"
    text = spec.read_text()
    assert old in text
    spec.write_text(text.replace(old, new))
    git(project, "add", "-A")  # pre-commit checks what is staged (it stashes the rest)


def test_the_manifest_runs_lynxc_from_the_projects_environment() -> None:
    manifest = yaml.safe_load(MANIFEST.read_text())
    assert [hook["id"] for hook in manifest] == ["lynxc-build-check", "lynxc-lint", "lynxc-diff"]
    for hook in manifest:
        assert hook["language"] == "unsupported" and hook["pass_filenames"] is False
        assert hook["entry"].startswith("lynxc ") and hook["minimum_pre_commit_version"] == "4.4.0"


def test_a_good_project_passes_every_hook(project: Path) -> None:
    done = try_repo(project, ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    for name in ("lynxc build --check", "lynxc lint", "lynxc diff"):
        assert any(
            line.startswith(name + ".") and line.endswith("Passed") for line in done.stdout.splitlines()
        )


def test_a_stale_generated_folder_fails_build_check(project: Path, hooks: Path) -> None:
    edit(project, "version: 0.1.0", "version: 0.1.1")
    edit(project, "The three counts; empty text gives zeros.", "The three counts; empty text counts zero.")
    done = try_repo(project, hooks, "lynxc-build-check")
    assert done.returncode == 1
    assert "lynxc build --check" in done.stdout and "Failed" in done.stdout
    assert "generated/demo/tools.json" in done.stdout  # lynxc names each stale file
    assert lynxc(project, "build").returncode == 0
    git(project, "add", "-A")
    assert try_repo(project, hooks, "lynxc-build-check").returncode == 0


def test_a_breaking_change_fails_diff_until_the_version_allows_it(project: Path, hooks: Path) -> None:
    edit(project, "version: 0.1.0", "version: 0.1.1")
    edit(project, "value: 100000", "value: 1000")  # the text cap, and so maxLength, lowered
    done = try_repo(project, hooks, "lynxc-diff")
    assert done.returncode == 1
    assert "breaking MAX_LENGTH_DECREASED: count_words" in done.stdout
    edit(project, "version: 0.1.1", "version: 0.2.0")
    allowed = try_repo(project, hooks, "lynxc-diff")
    assert allowed.returncode == 0, allowed.stdout
