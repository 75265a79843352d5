"""The suite's parallel run (tests/fixtures/parallel.py): a small suite with this suite's hooks,
run by pytest on xdist workers as the README's command runs this one, builds a module-scoped
fixture and the Ray cluster's session fixture once, on one worker, and hands the benchmarks out
first. And the README's test command is the one `.ci/run` runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

CONFTEST = """
import os, pytest
from tests.fixtures import parallel

def pytest_configure(config):
    parallel.register(config)

def pytest_collection_modifyitems(config, items):
    parallel.assign_groups(config, items)

def built(name):
    with open(os.path.join(os.environ["BUILT"], f"{name}-{os.getpid()}"), "w"):
        pass

@pytest.fixture(scope="session")
def ray_cluster():
    built("ray_cluster")
"""

MODULE = """
import pytest
from conftest import built

@pytest.fixture(scope="module")
def index():
    built("index")

@pytest.mark.parametrize("n", range(8))
def test_search(index, n):
    pass

@pytest.mark.parametrize("n", range(8))
def test_unrelated(n):
    pass
"""

RAY = """
import pytest

@pytest.mark.parametrize("n", range(4))
def test_on_ray(ray_cluster, n):
    pass
"""

RAY_TOO = """
def test_also_on_ray(ray_cluster):
    pass
"""

BENCHMARK = """
import pytest

@pytest.mark.benchmark
def test_z_benchmark():
    pass
"""


def write_suite(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The small suite, and the environment it runs in (its fixtures write what they build to
    BUILT, one file per build: name-pid)."""
    suite, built = tmp_path / "suite", tmp_path / "built"
    suite.mkdir()
    built.mkdir()
    files = {
        "conftest.py": CONFTEST,
        "test_index.py": MODULE,
        "test_ray.py": RAY,
        "test_ray_too.py": RAY_TOO,
        "test_zz.py": BENCHMARK,
    }
    for name, text in files.items():
        (suite / name).write_text(text)
    (suite / "pytest.ini").write_text("[pytest]\nmarkers =\n    benchmark: a benchmark\n")
    return suite, {**os.environ, "BUILT": str(built), "PYTHONPATH": str(ROOT)}


def pytest_in(
    suite: Path, env: dict[str, str], *args: str, cache: bool = False
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", *([] if cache else ["-p", "no:cacheprovider"]), *args]
    return subprocess.run(command, cwd=suite, env=env, capture_output=True, text=True, timeout=600)


def run_order(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The tests in the order one worker ran them (`-n 1 -v`)."""
    assert done.returncode == 0, done.stdout + done.stderr
    return [line.split()[-1] for line in done.stdout.splitlines() if " PASSED " in line]


def test_tests_sharing_a_fixture_run_on_one_worker_which_builds_it_once(tmp_path: Path) -> None:
    suite, env = write_suite(tmp_path)
    done = pytest_in(suite, env, "-n", "4", "--dist", "loadgroup", "-v")
    assert done.returncode == 0, done.stdout + done.stderr
    built = sorted(path.name.split("-")[0] for path in Path(env["BUILT"]).iterdir())
    assert built == ["index", "ray_cluster"], built
    workers: dict[str, set[str]] = {}
    for line in done.stdout.splitlines():
        if " PASSED " in line:  # [gw2] [ 13%] PASSED test_ray.py::test_on_ray[0]
            worker, test = line.split()[0], line.split()[-1]
            workers.setdefault(test.split("::")[1].split("[")[0], set()).add(worker)
    assert sum(1 for line in done.stdout.splitlines() if " PASSED " in line) == 22, done.stdout
    assert len(workers["test_search"]) == 1, workers
    assert len(workers["test_on_ray"] | workers["test_also_on_ray"]) == 1, workers


def test_benchmarks_are_handed_out_first(tmp_path: Path) -> None:
    suite, env = write_suite(tmp_path)
    done = pytest_in(suite, env, "-n", "0", "--collect-only", "-q")
    assert done.stdout.splitlines()[0] == "test_zz.py::test_z_benchmark", done.stdout


def test_the_units_that_took_longest_last_time_are_handed_out_first(tmp_path: Path) -> None:
    suite, env = write_suite(tmp_path)
    # No cache yet: the benchmark first, before the groups of many tests (xdist's own order, by
    # number of tests, would hand it out after them)
    first = run_order(pytest_in(suite, env, "-n", "1", "--dist", "loadgroup", "-v", cache=True))
    assert len(first) == 22 and first[0] == "test_zz.py::test_z_benchmark", first
    cached = suite / ".pytest_cache" / "v" / "lynxc" / "durations"
    durations = json.loads(cached.read_text())
    assert sorted(durations) == sorted(first) and all(seconds >= 0 for seconds in durations.values())
    # As if a test alone and then the Ray group had been the longest: they go first, the rest
    # keeps its order; a test the cache does not know counts as the median
    durations.update({"test_index.py::test_unrelated[5]": 60.0, "test_ray_too.py::test_also_on_ray": 30.0})
    del durations["test_zz.py::test_z_benchmark"]
    cached.write_text(json.dumps(durations))
    order = run_order(pytest_in(suite, env, "-n", "1", "--dist", "loadgroup", "-v", cache=True))
    ray = ["test_ray.py::test_on_ray[0]", "test_ray.py::test_on_ray[1]", "test_ray.py::test_on_ray[2]"]
    assert order[0] == "test_index.py::test_unrelated[5]", order
    assert set(order[1:6]) == {*ray, "test_ray.py::test_on_ray[3]", "test_ray_too.py::test_also_on_ray"}
    assert sorted(order) == sorted(first)


def test_the_readme_test_command_is_what_ci_runs() -> None:
    command = '.venv/bin/pip install -e ".[test]" && .venv/bin/python -m pytest'
    assert command in (ROOT / "README.md").read_text()
    assert command in (ROOT / ".ci/run").read_text()
