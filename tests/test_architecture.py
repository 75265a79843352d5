"""The layout's import contracts (pyproject.toml, [tool.importlinter]) hold: compiler stages
import one way, the runtime never imports the compiler, built-in backends share code only
through shared modules. `.ci/run` runs `lint-imports` too; this makes `pytest` alone catch a
broken contract."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

LINT_IMPORTS = str(Path(sys.executable).with_name("lint-imports"))


def test_import_contracts_are_kept() -> None:
    done = subprocess.run([LINT_IMPORTS, "--no-cache"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert "0 broken" in done.stdout
