"""Every file lynxc writes survives `kill -9` at any instant: a generated server folder is the
old build or the new one, never a mix; released baselines stay readable; and the next run
repairs whatever a kill interrupted.

Writing takes milliseconds of a build that takes a second, so kills at random moments would
rarely land in it. Instead each command runs with `CRASH_AT`, which counts the operations that
put data on disk (every open for writing, fsync, rename and replace) and SIGKILLs the process
right after the Nth: the kill lands exactly inside the write phase, at points spread over all of
it, whatever the machine's speed. With the old file-by-file writes these tests fail (mixed
trees, an empty releases.json)."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from lynxc.compiler.files import replace_tree
from lynxc.compiler.review.changelog import load_releases
from tests.conftest import ROOT
from tests.fixtures.forked import Completed, run_source

TOOLS = 8


def spec(variant: str, version: str = "0.1.0") -> str:
    """A server whose every tool (so every generated file) differs between variants."""
    tools = "".join(
        f"""
  - name: tool_{i}
    backend: tests.fixtures.backends:echo
    description:
      purpose: Echo the text back, variant {variant}, tool {i}.
    parameters:
      text: {{type: string, required: true, description: The text to echo ({variant}).}}
      n_{variant}: {{type: integer, minimum: 1, description: How many times ({variant}).}}
"""
        for i in range(TOOLS)
    )
    return f"lynxc: 1\nserver:\n  name: shop\n  version: {version}\ntools:{tools}"


def lynxc(project: Path, *args: str) -> Completed:
    """`lynxc --project PROJECT ARGS...` in a process forked with the compiler imported (the
    installed console script is run by test_cli.py and test_malformed_specs.py)."""
    return run_source(
        lynxc_code(), ["--project", str(project), *args], {"PYTHONPATH": str(ROOT)}, timeout=120
    )


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


# Run before the command: counts write operations, SIGKILLs itself after the Nth
# (LYNXC_TEST_CRASH_AT=N), or with N=0 only reports the count on stderr at exit.
CRASH_AT = """
import atexit, builtins, io, os, signal, sys
_crash_at, _done = int(os.environ["LYNXC_TEST_CRASH_AT"]), [0]
def _counted(fn, writes_only=False):
    def wrapped(*args, **kwargs):
        result = fn(*args, **kwargs)
        mode = args[1] if len(args) > 1 else kwargs.get("mode", "r")
        if not writes_only or any(c in str(mode) for c in "wax+"):
            _done[0] += 1
            if _done[0] == _crash_at:
                os.kill(os.getpid(), signal.SIGKILL)
        return result
    return wrapped
builtins.open = io.open = _counted(io.open, writes_only=True)
os.fsync, os.replace, os.rename = _counted(os.fsync), _counted(os.replace), _counted(os.rename)
if _crash_at == 0:
    atexit.register(lambda: sys.stderr.write(f"\\nwrite operations: {_done[0]}\\n"))
"""


def crash_command(code: str, *args: str) -> list[str]:
    return [sys.executable, "-c", CRASH_AT + code, *args]


def lynxc_code() -> str:
    return "from lynxc.compiler.cli import main\nmain()\n"


def run_crashing(
    command: list[str], crash_at: int, stdin: str | None = None, fresh: bool = False
) -> subprocess.CompletedProcess[str] | Completed:
    """The command (`python -c SOURCE ARGS...`) killed after its `crash_at`th write: in a process
    forked with the compiler imported, or with `fresh`, as written, in a new interpreter."""
    env = {"PYTHONPATH": str(ROOT), "LYNXC_TEST_CRASH_AT": str(crash_at)}
    if not fresh:
        return run_source(command[2], command[3:], env, stdin, timeout=300)
    return subprocess.run(
        command, input=stdin, capture_output=True, text=True, env={**os.environ, **env}, timeout=300
    )


def write_operations(command: list[str], stdin: str | None = None, fresh: bool = False) -> int:
    done = run_crashing(command, 0, stdin, fresh)
    assert done.returncode == 0, done.stderr
    return int(done.stderr.rsplit("write operations: ", 1)[1])


def kill_points(total: int, count: int, seed: int) -> list[int]:
    """`count` operation numbers spread over 1..total: the first, the last, and random ones."""
    rng = random.Random(seed)
    return sorted({1, total, *rng.sample(range(1, total + 1), min(count, total))})


def test_killed_builds_leave_the_old_tree_or_the_new_one(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    trees = {}
    for variant in ("a", "b"):
        (specs / "shop.yaml").write_text(spec(variant))
        assert lynxc(tmp_path, "build").returncode == 0
        trees[variant] = snapshot(tmp_path / "generated/shop")
    assert trees["a"].keys() == trees["b"].keys()
    assert all(trees["a"][name] != trees["b"][name] for name in trees["a"] if name != "models/__init__.py")
    build = crash_command(lynxc_code(), "--project", str(tmp_path), "build")
    (specs / "shop.yaml").write_text(spec("a"))
    total = write_operations(build)  # a whole build from tree b to tree a
    assert total > 2 * len(trees["a"])  # each file opened and fsynced, and the swap
    points = kill_points(total, 14, seed=11)
    killed = 0
    for point in points:
        current = "a" if snapshot(tmp_path / "generated/shop") == trees["a"] else "b"
        (specs / "shop.yaml").write_text(spec("b" if current == "a" else "a"))  # a real swap to do
        done = run_crashing(build, point)
        # A build after a kill may write a little less (a changelog already current), so the
        # last points can fall past its end: those runs simply finish.
        assert done.returncode in (0, -signal.SIGKILL), done.stderr
        killed += done.returncode == -signal.SIGKILL
        tree = snapshot(tmp_path / "generated/shop")
        assert tree in (trees["a"], trees["b"]), f"a mixed tree after a kill at write {point} of {total}"
    assert killed >= len(points) - 3
    assert lynxc(tmp_path, "build").returncode == 0
    assert lynxc(tmp_path, "build", "--check").returncode == 0
    assert [p.name for p in (tmp_path / "generated").iterdir()] == ["shop"]  # no staging left over


def test_a_tree_swap_killed_while_writing_is_all_or_nothing(tmp_path: Path) -> None:
    """The swap itself, killed after each kind of step: a 300-file tree replaces another; the
    target is always one of the two complete trees, and the next swap clears what was left."""
    target = tmp_path / "out"
    old = {f"m/{i}.py": f"old {i}\n" for i in range(300)}
    new = {f"m/{i}.py": f"new {i}\n" * 3 for i in range(300)}
    code = (
        "import json, sys\nfrom pathlib import Path\nfrom lynxc.compiler.files import replace_tree\n"
        f"replace_tree(Path({str(target)!r}), json.loads(sys.stdin.read()))\n"
    )
    replace_tree(target, old)
    total = write_operations(crash_command(code), stdin=json.dumps(new))
    outcomes = set()
    for point in kill_points(total, 12, seed=5):
        replace_tree(target, old)  # also clears what the previous kill left beside it
        assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
        done = run_crashing(crash_command(code), point, stdin=json.dumps(new))
        assert done.returncode == -signal.SIGKILL
        tree = {p.relative_to(target).as_posix(): p.read_text() for p in target.rglob("*") if p.is_file()}
        assert tree in (old, new), f"a mixed tree after a kill at write {point} of {total}"
        outcomes.add("new" if tree == new else "old")
    assert outcomes == {"old", "new"}  # kills before the swap and after it


def test_a_file_write_killed_at_any_step_leaves_old_or_new_text(tmp_path: Path) -> None:
    """The single-file primitive every other write uses (releases.json, baselines, changelogs,
    scaffolds), killed after each of its steps: the old text or the new, never a prefix."""
    target = tmp_path / "releases.json"
    old, new = "o" * 100_000, "n" * 100_000
    code = (
        "from pathlib import Path\nfrom lynxc.compiler.files import write_text_atomic\n"
        f"write_text_atomic(Path({str(target)!r}), 'n' * 100_000)\n"
    )
    target.write_text(old)
    # In a new interpreter, as every command ran before the forked runs: the same writes counted.
    total = write_operations(crash_command(code), fresh=True)
    assert write_operations(crash_command(code)) == total
    outcomes = []
    for point in range(1, total + 1):
        target.write_text(old)
        done = run_crashing(crash_command(code), point, fresh=True)
        assert done.returncode == -signal.SIGKILL
        text = target.read_text()
        assert text in (old, new), f"a partial file after a kill at step {point} of {total}"
        outcomes.append(text[0])
    assert outcomes[0] == "o" and outcomes[-1] == "n"


def test_killed_releases_leave_readable_baselines(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "shop.yaml").write_text(spec("a"))
    assert lynxc(tmp_path, "build").returncode == 0
    assert lynxc(tmp_path, "release", "shop", "--date", "2026-01-01").returncode == 0
    release = crash_command(
        lynxc_code(), "--project", str(tmp_path), "release", "shop", "--date", "2026-01-02"
    )
    # One whole release counts its writes (and releases 1.0.0); then kills spread over them,
    # each on a fresh version.
    (specs / "shop.yaml").write_text(spec("b", version="1.0.0"))
    total = write_operations(release)
    points = kill_points(total, 12, seed=3)
    killed = 0
    for minor, point in enumerate(points, start=2):
        (specs / "shop.yaml").write_text(spec("ab"[minor % 2], version=f"{minor}.0.0"))
        done = run_crashing(release, point)
        assert done.returncode in (0, -signal.SIGKILL), done.stderr  # as for builds: see above
        killed += done.returncode == -signal.SIGKILL
        releases, problems = load_releases(tmp_path, "shop")
        assert problems == [], problems
        assert [r.version for r in releases][:2] == ["0.1.0", "1.0.0"]
    assert killed >= len(points) - 3
    done = lynxc(tmp_path, "build")
    assert done.returncode == 0, done.stderr
    assert "BASELINE_INVALID" not in done.stderr


def test_editing_one_tool_rewrites_only_that_tools_models(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "shop.yaml").write_text(spec("a"))
    assert lynxc(tmp_path, "build").returncode == 0
    before = snapshot(tmp_path / "generated/shop")
    edited = spec("a").replace("The text to echo (a).", "The text to echo back (a).", 1)
    (specs / "shop.yaml").write_text(edited)
    assert lynxc(tmp_path, "build").returncode == 0
    after = snapshot(tmp_path / "generated/shop")
    changed = sorted(name for name in after if after[name] != before[name])
    assert changed == ["README.md", "models/tool_0.py", "server.py", "tools.json"]


def test_the_do_not_edit_header_stays_in_the_file_not_on_the_wire() -> None:
    tools_json = json.loads((ROOT / "generated/dot-harness/tools.json").read_text())
    assert tools_json["_generated"].startswith("Generated by lynxc from specs/dot-harness/")
    assert "_meta" not in tools_json


def test_atomic_writes_keep_the_files_mode(tmp_path: Path) -> None:
    """The temporary file is private; the file it becomes is not: a new file gets the usual mode
    (0666 less the umask), an existing one keeps its own."""
    from lynxc.compiler.files import write_text_atomic

    umask = os.umask(0o022)
    try:
        fresh, kept = tmp_path / "new.yaml", tmp_path / "run.sh"
        write_text_atomic(fresh, "a\n")
        kept.write_text("old\n")
        kept.chmod(0o755)
        write_text_atomic(kept, "new\n")
    finally:
        os.umask(umask)
    assert fresh.stat().st_mode & 0o777 == 0o644
    assert kept.stat().st_mode & 0o777 == 0o755 and kept.read_text() == "new\n"


def test_a_killed_release_is_finished_by_the_next_one(tmp_path: Path) -> None:
    """`lynxc release` killed at each write of its first step (the baseline, then releases.json)
    and at points of its second (the generated files and changelogs): in between, `build --check`
    says what to run; the next `lynxc release` finishes the job, and the project then holds
    exactly what an uninterrupted release writes, without a temporary file left over."""
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "shop.yaml").write_text(spec("a"))
    assert lynxc(tmp_path, "build").returncode == 0
    assert lynxc(tmp_path, "release", "shop", "--date", "2026-01-01").returncode == 0
    (specs / "shop.yaml").write_text(spec("b", version="1.0.0"))
    assert lynxc(tmp_path, "build").returncode == 0
    before = _outputs(tmp_path)
    args = ("--project", str(tmp_path), "release", "shop", "--date", "2026-01-02")
    total = write_operations(crash_command(lynxc_code(), *args))
    released = _outputs(tmp_path)
    # The first step writes the baseline, then releases.json: open, fsync, replace and folder
    # fsync each. Killed after an open (a temporary file left), after each replace, and at
    # points of the second step.
    rng = random.Random(13)
    points = sorted({1, 3, 5, 7, *rng.sample(range(9, total), 2), total})
    for point in points:
        _restore(tmp_path, before)
        assert run_crashing(crash_command(lynxc_code(), *args), point).returncode == -signal.SIGKILL
        check = lynxc(tmp_path, "build", "--check")
        complete = _outputs(tmp_path) == released
        # Passing is right when nothing the build reads was touched yet (an unlisted baseline is
        # read by nothing, and the next release overwrites it).
        assert check.returncode in (0, 1) and (check.returncode == 0) == (check.stderr == "")
        for line in check.stderr.splitlines():
            assert "error GENERATED_STALE" in line and "(run `lynxc build`" in line, line
        again = lynxc(tmp_path, "release", "shop", "--date", "2026-01-02")
        if complete:
            assert again.returncode == 1 and "already released (2026-01-02)" in again.stderr
            assert re.search(
                r"raise server.version in \S*specs/shop.yaml, then run `lynxc release shop`", again.stderr
            )
        else:
            assert again.returncode == 0, f"after a kill at write {point} of {total}: {again.stderr}"
        assert _outputs(tmp_path) == released, f"after a kill at write {point} of {total}"


def _outputs(project: Path) -> dict[str, bytes]:
    """Every file of generated/ and schema-changelog/, hidden ones (temporary files) included."""
    return {
        path.relative_to(project).as_posix(): path.read_bytes()
        for folder in ("generated", "schema-changelog")
        for path in sorted((project / folder).rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def _restore(project: Path, files: dict[str, bytes]) -> None:
    for folder in ("generated", "schema-changelog"):
        shutil.rmtree(project / folder)
    for relative, data in files.items():
        (project / relative).parent.mkdir(parents=True, exist_ok=True)
        (project / relative).write_bytes(data)


def test_a_killed_diff_leaves_the_old_report_or_the_new_one(tmp_path: Path) -> None:
    versions = ROOT / "tests/data/mcp-tool-versions"
    report = tmp_path / "diff-report.md"
    old_pair = [str(versions / "server-memory_0.6.2.json"), str(versions / "server-memory_2025.8.4.json")]
    new_pair = [str(versions / "server-memory_0.6.2.json"), str(versions / "server-memory_2026.8.31.json")]
    command = crash_command(lynxc_code(), "diff", *new_pair, "--fail-on", "never", "--report", str(report))
    assert lynxc(ROOT, "diff", *old_pair, "--report", str(report)).returncode == 0
    old = report.read_text()
    total = write_operations(command)
    new = report.read_text()
    assert old != new and "OUTPUT_SCHEMA_ADDED" in new
    for point in range(1, total + 1):
        report.write_text(old)
        done = run_crashing(command, point)
        assert done.returncode == -signal.SIGKILL
        assert report.read_text() in (old, new), f"a partial report after a kill at step {point} of {total}"
