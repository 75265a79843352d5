"""SQL completions over SQLite (issue 31): countries-sqlite's own spec and data, copied into a
project of its own with a prompt added, built, and served over stdio to a real MCP client;
the statement binds $value and another argument, and the build refuses a statement the SQL
tools' authorizer would refuse."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import LYNXC, ROOT

pytestmark = pytest.mark.anyio
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

PROMPTS = """\
prompts:
  - name: country_brief
    description: Ask for a short brief on one country.
    arguments:
      region:
        description: "A region, e.g. Europe."
        complete:
          sql: "SELECT DISTINCT region FROM countries WHERE region LIKE $value || '%' ORDER BY region"
      code:
        description: "The country's code, e.g. FRA."
        required: true
        sample: FRA
        complete:
          sql: >-
            SELECT code FROM countries WHERE code LIKE $value || '%'
            AND ($region = '' OR region = $region) ORDER BY code
    messages:
      - {text: "Brief on {{ code }}{% if region %} in {{ region }}{% endif %}."}
"""


def project_with(tmp_path: Path, prompts: str) -> tuple[Path, subprocess.CompletedProcess[str]]:
    project = tmp_path / "project"
    shutil.copytree(ROOT / "specs" / "countries-sqlite", project / "specs" / "countries-sqlite")
    server = project / "specs" / "countries-sqlite" / "server.yaml"
    server.write_text(server.read_text() + prompts)
    built = subprocess.run(
        [LYNXC, "--project", str(project), "build"], env=ENV, capture_output=True, text=True
    )
    return project, built


async def test_sqlite_completions_over_stdio(tmp_path: Path) -> None:
    project, built = project_with(tmp_path, PROMPTS)
    assert built.returncode == 0, built.stdout + built.stderr
    args = ["--project", str(project), "serve", "countries-sqlite"]
    ref = types.PromptReference(name="country_brief")
    async with Client(StdioServerParameters(command=LYNXC, args=args, env=ENV, cwd=str(project))) as client:
        regions = await client.complete(ref, {"name": "region", "value": "A"})
        in_europe = await client.complete(ref, {"name": "code", "value": "F"}, {"region": "Europe"})
    assert regions.completion.values == ["Africa", "Americas", "Antarctic", "Asia"]
    assert in_europe.completion.values == ["FIN", "FRA", "FRO"]


def test_a_statement_the_authorizer_refuses_is_refused_at_build(tmp_path: Path) -> None:
    refused = PROMPTS.replace(
        "SELECT DISTINCT region FROM countries WHERE region LIKE $value || '%' ORDER BY region",
        "SELECT readfile('/etc/passwd')",
    )
    _, built = project_with(tmp_path, refused)
    assert built.returncode != 0
    assert "COMPLETION_SQL_INVALID" in built.stdout + built.stderr
    assert "readfile" in built.stdout + built.stderr
