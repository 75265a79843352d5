"""The host fixture project (tests/fixtures/project), built once per session for the tests that
serve it: test_host.py (the host's contract) and test_stdio.py (the stdio transport)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import LYNXC, ROOT

FIXTURE = ROOT / "tests" / "fixtures" / "project"


@pytest.fixture(scope="session")
def fixture_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("fixture") / "project"
    shutil.copytree(FIXTURE, project)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([LYNXC, "--project", str(project), "build"], check=True, env=env, capture_output=True)
    return project
