"""Every benchmark runs, at smoke size, on every CI run: `python bench/X.py --smoke` for each
`bench/*.py` with an `if __name__ == "__main__":` block, as a process, must exit 0. A new
benchmark is covered by being there; one without `--smoke` fails here (bench/smoke.py says what
counts as a benchmark and what `--smoke` means).

Each runs in its own process with its own temporary files and servers, so they are marked
`benchmark`: `-m "not benchmark"` leaves them out of a quick run, and they can run in parallel."""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT

BENCH = ROOT / "bench"
# A hang guard, not a speed target: a smoke run takes seconds (distributed.py, which starts a
# Ray cluster and an S3 server, about a minute), on a 2-core machine shared with other work.
TIMEOUT_SECONDS = 600


def has_main_block(path: Path) -> bool:
    """Whether the module has `if __name__ == "__main__":` at its top level."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and ast.unparse(node.test).replace("'", '"') == '__name__ == "__main__"':
            return True
    return False


def imported_names(path: Path) -> set[str]:
    """Top-level module names a bench script imports (bench/ is first on its sys.path)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


BENCHMARKS = sorted(path for path in BENCH.glob("*.py") if has_main_block(path))
HELPERS = sorted(path for path in BENCH.glob("*.py") if not has_main_block(path))


def test_the_benchmarks_are_found() -> None:
    names = {path.stem for path in BENCHMARKS}
    assert {"sql_speed", "distributed", "cold_start", "retrieval_quality"} <= names
    assert "records_common" not in names and "smoke" not in names


def test_every_helper_is_imported_by_a_benchmark() -> None:
    """A bench module without a main block is a helper; one that no script imports is more likely
    a benchmark that lost its main block, and would silently leave CI."""
    imported = set().union(*(imported_names(path) for path in BENCH.glob("*.py")))
    orphans = [path.name for path in HELPERS if path.stem not in imported]
    assert not orphans, f"bench modules without a main block that nothing imports: {orphans}"


def smoke_args(monkeypatch: pytest.MonkeyPatch, *argv: str) -> argparse.Namespace:
    """bench/smoke.py's parse_args_with_smoke on a parser like a benchmark's, for `argv`."""
    spec = importlib.util.spec_from_file_location("bench_smoke", BENCH / "smoke.py")
    assert spec and spec.loader
    smoke = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(smoke)
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--embedder", default="minilm")
    monkeypatch.setattr(sys, "argv", ["bench.py", *argv])
    return smoke.parse_args_with_smoke(parser, rows=20_000, calls=3)


def test_smoke_takes_the_smoke_sizes_of_options_left_at_their_defaults(monkeypatch) -> None:
    args = smoke_args(monkeypatch, "--smoke", "--calls", "7")
    assert (args.smoke, args.rows, args.calls, args.embedder) == (True, 20_000, 7, "minilm")
    args = smoke_args(monkeypatch, "--rows", "5")
    assert (args.smoke, args.rows, args.calls) == (False, 5, 50)


# distributed.py starts a Ray cluster, moto's S3 server and nine servers (over a minute of CPU);
# records_distributed.py starts a Ray of its own and loads three times, records_search_quality.py
# loads the PEPs and their sections and asks every question of eight systems (about half a minute
# of CPU each): they are `slow` too. Every smoke run is left out of the README's command and run by
# .ci/run after it (`-m "slow or benchmark"`).
SLOW = {"distributed", "records_distributed", "records_search_quality"}


@pytest.mark.benchmark
@pytest.mark.parametrize(
    "script",
    [pytest.param(path, marks=pytest.mark.slow) if path.stem in SLOW else path for path in BENCHMARKS],
    ids=lambda path: path.stem,
)
def test_the_benchmark_runs_at_smoke_size(script: Path, tmp_path: Path) -> None:
    source = script.read_text(encoding="utf-8")
    assert "parse_args_with_smoke(" in source, f"{script.name} takes no --smoke (see bench/smoke.py)"
    start = time.perf_counter()
    # A session of its own, so that a run over time is stopped with everything it started: TERM
    # first (distributed.py stops its Ray cluster and servers on it), then KILL.
    process = subprocess.Popen(
        [sys.executable, str(script), "--smoke"],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        stdout, stderr = _stop(process)
        pytest.fail(f"{script.name} --smoke ran over {TIMEOUT_SECONDS} s:\n{_tail(stdout + stderr)}")
    took = time.perf_counter() - start
    assert process.returncode == 0, (
        f"{script.name} --smoke exited {process.returncode}:\n{_tail(stdout + stderr)}"
    )
    assert stdout.strip(), f"{script.name} --smoke printed no figures"
    print(f"{script.name} --smoke: {took:.1f} s")


def _stop(process: subprocess.Popen) -> tuple[str, str]:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            return process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            continue
    return process.communicate()


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.splitlines()[-lines:])
