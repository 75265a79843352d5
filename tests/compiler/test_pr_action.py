"""The composite GitHub Action (action.yml), its steps run as scripts the way a runner runs them:
bash with `-eo pipefail`, the step's `env:` resolved from the inputs and earlier steps' outputs,
GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, RUNNER_TEMP and GITHUB_BASE_REF set, on a pull request's
shallow clone of a real repository (its base branch fetched from a local `origin`, no network).

Not run: the `uses:` steps (actions/setup-python, github/codeql-action/upload-sarif: what they
are given is checked). The install step runs real pip, told by its environment (PIP_DRY_RUN,
PIP_NO_INDEX, PIP_NO_DEPS) to resolve offline and install nothing: the venv's lynxc stays."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT
from tests.fixtures.git_repo import git, lynxc

ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
STEPS = ACTION["runs"]["steps"]
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
# pip's own settings, as variables: resolve what the step asks for, offline, and install nothing.
PIP_OFFLINE = {"PIP_DRY_RUN": "1", "PIP_NO_INDEX": "1", "PIP_NO_DEPS": "1", "PIP_NO_BUILD_ISOLATION": "0"}


@dataclass
class Run:
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    summary: str = ""
    verdict: subprocess.CompletedProcess[str] | None = None
    installed: str = ""  # what pip said it would install
    skipped: list[dict[str, Any]] = field(default_factory=list)


def read_outputs(path: Path) -> dict[str, str]:
    """GITHUB_OUTPUT's two forms: `name=value` and `name<<DELIMITER` ... `DELIMITER`."""
    outputs: dict[str, str] = {}
    lines = iter(path.read_text(encoding="utf-8").splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            value = []
            for inner in lines:
                if inner == delimiter:
                    break
                value.append(inner)
            outputs[name] = "\n".join(value)
        elif "=" in line:
            name, value = line.split("=", 1)
            outputs[name] = value
    return outputs


def run_action(workspace: Path, temp: Path, inputs: dict[str, str], *, install: bool = False) -> Run:
    """Run the action's steps in order; the install step (pip, 1.5 s) only when `install`."""
    defaults = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    values = defaults | {"working-directory": SERVICE} | inputs
    run = Run()

    def resolve(text: str) -> str:
        def value(match: re.Match[str]) -> str:
            expression = match[1]
            if expression.startswith("inputs."):
                return values[expression.removeprefix("inputs.")]
            step, outputs, name = expression.removeprefix("steps.").split(".")
            assert outputs == "outputs", expression
            return run.outputs.get(step, {}).get(name, "")

        return EXPRESSION.sub(value, text)

    summary = temp / "step_summary.md"
    summary.touch()
    runner_temp = temp / "runner"
    runner_temp.mkdir()
    path = f"{Path(sys.executable).parent}{os.pathsep}/usr/local/bin{os.pathsep}/usr/bin{os.pathsep}/bin"
    runner_env = {
        "PATH": path,
        "HOME": os.environ.get("HOME", str(temp)),
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_ACTION_PATH": str(ROOT),
        "GITHUB_BASE_REF": "main",
        "GITHUB_STEP_SUMMARY": str(summary),
        "RUNNER_TEMP": str(runner_temp),
    }
    for index, step in enumerate(STEPS):
        if "uses" in step or (step.get("id") == "install" and not install):
            run.skipped.append(step)
            continue
        output = temp / f"output_{index}"
        output.touch()
        env = (
            runner_env | {"GITHUB_OUTPUT": str(output)} | (PIP_OFFLINE if step.get("id") == "install" else {})
        )
        env |= {name: resolve(str(text)) for name, text in (step.get("env") or {}).items()}
        cwd = workspace / resolve(step.get("working-directory", "."))
        script = temp / f"step_{index}.sh"
        script.write_text(step["run"], encoding="utf-8")
        assert step["shell"] == "bash"
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
        )
        if "id" in step:
            run.outputs[step["id"]] = read_outputs(output)
        if step.get("id") == "install":
            run.installed = done.stdout
        if step["name"] == "Verdict":
            run.verdict = done
        else:
            assert done.returncode == 0, (step["name"], done.stdout, done.stderr)  # checks report, never stop
    run.summary = summary.read_text(encoding="utf-8")
    return run


SERVICE = "service"  # the lynxc project's folder in the repository: the working-directory input


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare `origin` whose main holds, in service/, a lynxc project released at 0.1.0."""
    folder = tmp_path_factory.mktemp("action")
    repository = folder / "main"
    project = repository / SERVICE
    project.mkdir(parents=True)
    git(repository, "init", "-q", "-b", "main")
    assert lynxc(project, "init", "demo").returncode == 0
    assert lynxc(project, "release", "demo", "--date", "2026-01-01").returncode == 0
    git(repository, "add", "-A")
    git(repository, "commit", "-qm", "demo 0.1.0")
    bare = folder / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repository), str(bare)], check=True)
    return bare


ANNOTATIONS = (
    "    annotations:\n      readOnlyHint: true\n      idempotentHint: true\n      destructiveHint: false\n"
    "      openWorldHint: false\n"
)


def pull_request(
    origin: Path, folder: Path, name: str, version: str, *, build: bool, lint_warning: bool = False
) -> Path:
    """A branch that lowers the text cap (a breaking change) at `version`, pushed to origin, and
    the shallow clone of it that actions/checkout makes (the base branch not fetched).
    `lint_warning`: the tool loses its annotations too (ANNOTATIONS_MISSING)."""
    work = folder / "work"
    subprocess.run(["git", "clone", "-q", str(origin), str(work)], check=True)
    git(work, "checkout", "-q", "-b", name)
    spec = work / SERVICE / "specs/demo.yaml"
    text = spec.read_text().replace("version: 0.1.0", f"version: {version}")
    text = text.replace("value: 100000", "value: 1000")
    if lint_warning:
        assert ANNOTATIONS in text
        text = text.replace(ANNOTATIONS, "")
    spec.write_text(text)
    if build:
        assert lynxc(work / SERVICE, "build").returncode == 0
    git(work, "add", "-A")
    git(work, "commit", "-qm", name)
    git(work, "push", "-q", "origin", name)
    workspace = folder / "workspace"
    url = origin.resolve().as_uri()  # file:// so that --depth applies
    subprocess.run(["git", "clone", "-q", "--depth=1", "--branch", name, url, str(workspace)], check=True)
    assert "origin/main" not in git(workspace, "branch", "-r")
    return workspace


def test_no_expression_inside_a_script() -> None:
    """Inputs reach scripts through env: only (a `${{ }}` in a script is pasted in as code)."""
    for step in STEPS:
        assert "${{" not in step.get("run", ""), step["name"]
    uses = {step["uses"].split("@")[0] for step in STEPS if "uses" in step}
    assert uses == {"actions/setup-python", "github/codeql-action/upload-sarif"}


def test_a_bumped_pull_request_passes(origin: Path, tmp_path: Path) -> None:
    workspace = pull_request(origin, tmp_path, "bumped", "0.2.0", build=True)
    (workspace / SERVICE / "requirements.txt").write_text("pyyaml\n")  # what its backends import
    run = run_action(workspace, tmp_path, {"extra-install": "-r requirements.txt"}, install=True)
    assert "Would install lynxc-" in run.installed  # the action's own checkout, by default
    assert "Requirement already satisfied: pyyaml" in run.installed
    assert run.verdict is not None and run.verdict.returncode == 0, run.verdict.stdout + run.verdict.stderr
    assert run.outputs["build"]["status"] == "0" and run.outputs["lint"]["status"] == "0"
    assert run.outputs["diff"]["status"] == "0"
    # The job summary is the diff's markdown, against the fetched base branch.
    assert run.summary.startswith("## Schema changes: `demo`\n")
    assert "(allowed: 0.1.0 -&gt; 0.2.0, a minor bump below 1.0)" in run.summary
    assert run.outputs["diff"]["summary"].strip() == run.summary.strip()
    report = Path(run.outputs["diff"]["report"]).read_text()
    assert report.startswith("# Schema review: full report")
    assert "origin/main" in git(workspace, "branch", "-r")
    # The SARIF file the upload step is given: SARIF 2.1.0.
    sarif = json.loads(Path(run.outputs["lint"]["sarif"]).read_text())
    assert sarif["version"] == "2.1.0" and sarif["$schema"].endswith("sarif-2.1.0.json")
    (lint_run,) = sarif["runs"]
    assert lint_run["tool"]["driver"]["name"] and isinstance(lint_run["results"], list)
    upload = next(step for step in run.skipped if step.get("uses", "").startswith("github/codeql-action"))
    assert upload["with"]["sarif_file"] == "${{ steps.lint.outputs.sarif }}"


def test_an_unbumped_stale_pull_request_fails_naming_each_check(origin: Path, tmp_path: Path) -> None:
    workspace = pull_request(origin, tmp_path, "unbumped", "0.1.1", build=False, lint_warning=True)
    run = run_action(workspace, tmp_path, {})
    assert run.verdict is not None and run.verdict.returncode == 1
    errors = run.verdict.stdout.splitlines()
    assert [line.split("::")[1] for line in errors] == [
        "error title=lynxc build --check",
        "error title=lynxc diff",
    ]
    assert run.outputs["diff"]["status"] == "1"
    # The lint warning is in the SARIF at the repository's path (a warning fails no lint-fail-on: error).
    sarif = json.loads(Path(run.outputs["lint"]["sarif"]).read_text())
    (result,) = sarif["runs"][0]["results"]
    assert result["ruleId"] == "ANNOTATIONS_MISSING" and result["level"] == "warning"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == f"{SERVICE}/specs/demo.yaml"
    assert location["region"]["startLine"] > 0 and run.outputs["lint"]["status"] == "0"
    assert "- **breaking** `MAX_LENGTH_DECREASED` — `count_words`" in run.summary
    assert "0.1.1 follows the release 0.1.0 without bumping the minor version" in run.summary
    # The same review, failing nothing: --fail-on never.
    (tmp_path / "never").mkdir()
    never = run_action(workspace, tmp_path / "never", {"fail-on": "never"})
    assert never.outputs["diff"]["status"] == "0" and "0.1.1 follows the release 0.1.0" in never.summary


def test_an_unreadable_base_is_said_in_the_summary(origin: Path, tmp_path: Path) -> None:
    workspace = pull_request(origin, tmp_path, "explicit", "0.2.0", build=True)
    run = run_action(workspace, tmp_path, {"base": "git:no-such-ref"})
    assert run.outputs["diff"]["status"] == "2" and run.verdict is not None and run.verdict.returncode == 1
    assert run.summary.startswith("lynxc diff could not compare the schemas:")
    assert "git:no-such-ref" in run.summary
