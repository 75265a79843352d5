"""The compiler's verbs stay light: `lynxc build` reads each backend's declaration without
loading the runtime's heavy libraries, and only `serve` (and `index`) load the MCP SDK.

Each case runs in a fresh interpreter and lists which heavy modules ended up in sys.modules."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import DATA, ROOT

# What the bundled backends use at call time; none of it is needed to compile a spec.
RUNTIME_WEIGHT = (
    "numpy",
    "pyarrow",
    "lancedb",
    "onnxruntime",
    "tokenizers",
    "tree_sitter",
    "duckdb",
    "trafilatura",
    "httpx",
    "mcp",
    "psycopg",  # Postgres SQL tools: only a server with `postgres:` loads them at build
    "pglast",
)


def loaded_after(code: str) -> dict[str, object]:
    script = f"""
import json, sys
{code}
print(json.dumps({{"heavy": [m for m in {RUNTIME_WEIGHT!r} if m in sys.modules],
                  "modules": sorted(sys.modules)}}))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


# Servers with SQL tools are checked against their database at build time (the point of them);
# every other server builds without it.
SQL_SERVERS = ("countries-sql", "countries-sqlite", "pagila")


def test_build_reads_backend_declarations_without_their_libraries() -> None:
    seen = loaded_after(
        f"""
from pathlib import Path
from lynxc.compiler.build import build, stale_files
from lynxc.compiler.spec.load import discover_specs
specs = [p for p in discover_specs(Path("specs")) if p.name not in {SQL_SERVERS!r}]
output = build(Path("."), specs)
assert output.servers and not output.diagnostics, output.diagnostics
assert not stale_files(Path("."), output)
"""
    )
    assert seen["heavy"] == []
    # The check is real: every bundled backend module was imported and its declaration read.
    for module in (
        "lynxc.runtime.backends.lynx.tools",
        "lynxc.runtime.backends.agent_tool.grep",
        "lynxc.runtime.backends.dot_harness.search",
    ):
        assert module in seen["modules"]


def test_a_sql_server_builds_with_duckdb_alone() -> None:
    seen = loaded_after(
        """
from pathlib import Path
from lynxc.compiler.build import build
output = build(Path("."), [Path("specs/countries-sql")])
assert output.servers and not output.diagnostics, output.diagnostics
"""
    )
    assert seen["heavy"] == ["duckdb"]


FIXTURE = DATA / "mcp-tool-versions"


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["diff", str(FIXTURE / "server-memory_0.6.2.json"), str(FIXTURE / "server-memory_2026.8.31.json")],
        ["lint", str(FIXTURE / "server-memory_2026.8.31.json")],
        ["lint", "specs/agent-tool", "specs/dot-harness", "specs/lynx-mcp", "specs/foxnose-knowledge"],
        ["rules"],
    ],
    ids=["help", "diff-json", "lint-json", "lint-specs", "rules"],
)
def test_verbs_other_than_serve_do_not_load_the_runtime(argv: list[str]) -> None:
    seen = loaded_after(
        f"""
import contextlib, io
from lynxc.compiler.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    main({argv!r})
"""
    )
    assert seen["heavy"] == []


def test_docs_reads_compile_results_without_the_runtime_or_the_sdk(tmp_path: Path) -> None:
    """`lynxc docs` builds, lints and reviews: the servers without SQL load none of the runtime's
    heavy libraries, and the site of every server never loads the MCP SDK."""
    servers = ["agent-tool", "dot-harness", "lynx-mcp", "foxnose-knowledge", "groundhog"]
    for names, allowed in ((servers, set()), ([], {"duckdb", "psycopg", "pglast"})):
        argv = ["docs", *names, "--out", str(tmp_path / f"site{len(names)}")]
        seen = loaded_after(
            f"""
import contextlib, io
from lynxc.compiler.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    main({argv!r})
"""
        )
        assert set(seen["heavy"]) <= allowed, names
        assert "lynxc.compiler.docs.render" in seen["modules"]  # the site was made
        assert (tmp_path / f"site{len(names)}" / "index.html").is_file()
