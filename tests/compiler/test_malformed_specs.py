"""Golden diagnostics for a corpus of malformed specs: each `malformed/<case>.yaml` (or folder)
must produce exactly the diagnostics in `<case>.expected`, and never a traceback.

Regenerate after an intended change with `LYNXC_UPDATE_GOLDENS=1 pytest tests/compiler`, then
read the diff."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lynxc.compiler.cli import main
from lynxc.compiler.diagnostics import sort_diagnostics
from lynxc.compiler.lower.server import compile_spec

CORPUS = Path(__file__).parent / "malformed"
# Hidden folders are no cases: a build run here leaves its cache, .lynxc-cache/.
CASES = sorted(
    p for p in CORPUS.iterdir() if not p.name.startswith(".") and (p.suffix == ".yaml" or p.is_dir())
)
UPDATE = os.environ.get("LYNXC_UPDATE_GOLDENS") == "1"


def test_corpus_is_large_enough() -> None:
    assert len(CASES) >= 25


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_diagnostics_match_golden(case: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CORPUS)  # diagnostics name files relative to the working directory
    result = compile_spec(Path(case.name))
    assert result.value is None, "a malformed spec must not compile"
    rendered = "\n".join(d.render() for d in sort_diagnostics(result.diagnostics)) + "\n"
    expected_file = CORPUS / f"{case.stem}.expected"
    if UPDATE:
        expected_file.write_text(rendered)
    assert rendered == expected_file.read_text()
    for diagnostic in result.diagnostics:
        assert diagnostic.span.line >= 1 and diagnostic.span.col >= 1
        assert diagnostic.span.file.startswith(case.name)


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_cli_reports_without_traceback(
    case: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command line shows the same diagnostics, exit 1, and no Python traceback. Its entry
    point runs in this process, case by case: an exception escaping `main` fails the test, as a
    traceback would, without paying an interpreter start per case (the console script itself is
    run below)."""
    monkeypatch.chdir(CORPUS)
    with pytest.raises(SystemExit) as done:
        main(["build", "--check", case.name])
    assert done.value.code == 1, case.name
    stderr = capsys.readouterr().err
    assert "Traceback" not in stderr, stderr
    assert f"{case.name}" in stderr and ": error " in stderr


@pytest.mark.parametrize("case", CASES[:: len(CASES) // 4], ids=lambda p: p.stem)
def test_the_installed_command_reports_without_traceback(case: Path) -> None:
    """The console script as a user runs it, on a spread of the corpus."""
    lynxc = str(Path(sys.executable).with_name("lynxc"))
    done = subprocess.run(
        [lynxc, "build", "--check", case.name], cwd=CORPUS, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1, case.name
    assert "Traceback" not in done.stderr, done.stderr
    assert f"{case.name}" in done.stderr and ": error " in done.stderr
