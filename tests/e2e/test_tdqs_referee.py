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
# Settings a server cannot start without. tools/list needs no database: pagila's server starts
# and lists its tools while its database is unreachable (port 1 refuses at once).
REQUIRED_SETTINGS = {"pagila": "--set database_url=postgresql://reader@127.0.0.1:1/pagila"}


@pytest.mark.parametrize(
    ("server", "tools"),
    [
        ("dot-harness", ["list_project_files", "read_project_text", "search_project_text"]),
        ("agent-tool", ["glob", "grep", "read"]),
        ("lynx-mcp", ["deep_search", "list_sources", "search"]),
        (
            "pagila",
            [
                "actor_filmography",
                "customer_rentals",
                "film_availability",
                "overdue_rentals",
                "rental_details",
                "revenue_by_store_month",
                "search_films",
                "top_films",
            ],
        ),
    ],
)
def test_tdqs_lint_finds_no_error_and_no_warning(server: str, tools: list[str]) -> None:
    command = f"{LYNXC} --project {ROOT} serve {server} {REQUIRED_SETTINGS.get(server, '')}".rstrip()
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
