"""A bare clone works: nothing the project runs may read the team's `shared/` folder beside the
repository, which exists only on the team's machines. Data the tests and benchmarks need is
copied into `tests/data/` and `bench/data/` with its licence (see their READMEs)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.conftest import ROOT

SCANNED = ("compiler", "runtime", "tests", "bench", ".ci")
# Ways code names the folder: a relative path, a path join with the literal name, or one of its
# subfolders. Prose (*.md) may say where copied data came from; it is never read as a path.
SHARED = "shar" + "ed"  # spelled apart so that this file does not match itself
REFERENCE = re.compile(
    rf"""\.\./{SHARED}\b|["']{SHARED}["']|\b{SHARED}/(?:data|seeds|hooks)\b""", re.IGNORECASE
)


def tracked_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "--cached", "--others", "--exclude-standard", *SCANNED],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    return [ROOT / name for name in listed if not name.endswith(".md") and (ROOT / name).is_file()]


def references(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return []  # binary data (gzip, parquet) names no folder
    return [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for number, line in enumerate(text.splitlines(), 1)
        if REFERENCE.search(line)
    ]


def test_the_pattern_catches_each_way_of_naming_the_folder() -> None:
    for line in (
        f"DATA = ROOT.parent / '{SHARED}' / 'data'",
        f'SEEDS = Path("../{SHARED}/seeds")',
        f"page = open('{SHARED}/seeds/groundhog_research.txt')",
        f"cat ../{SHARED}/data/README.md",
    ):
        assert REFERENCE.search(line), line
    for line in ("from mcp.shared.exceptions import MCPError", "one catalogue shared by lint and diff"):
        assert not REFERENCE.search(line), line


def test_no_file_refers_to_the_shared_folder_outside_the_repository() -> None:
    files = tracked_files()
    assert len(files) > 100  # the scan really looked at the tree
    found = [hit for path in files for hit in references(path)]
    assert not found, "\n".join(found)
