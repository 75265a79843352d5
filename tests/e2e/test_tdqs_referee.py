"""The reference linter, `tdqs lint` (PyPI `tdqs`), run against the live generated server."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import LYNXC, ROOT

TDQS = shutil.which("tdqs") or str(Path(sys.executable).with_name("tdqs"))


@pytest.mark.parametrize(
    ("server", "tools"),
    [
        ("dot-harness", ["list_project_files", "read_project_text", "search_project_text"]),
        ("agent-tool", ["glob", "grep", "read"]),
        ("lynx-mcp", ["deep_search", "list_sources", "search"]),
    ],
)
def test_tdqs_lint_finds_no_error_and_no_warning(server: str, tools: list[str]) -> None:
    command = f"{LYNXC} --project {ROOT} serve {server}"
    done = subprocess.run(
        [TDQS, "lint", "--command", command, "--format", "json", "--fail-on", "warning"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["findings"] == []
    assert {tool["name"]: tool["findings"] for tool in report["tools"]} == {name: [] for name in tools}
    assert all(tool["contextSignals"]["schemaDescriptionCoverage"] == 100 for tool in report["tools"])
