"""Every file lynxc writes survives `kill -9` at any instant: a generated server folder is the
old build or the new one, never a mix; released baselines stay readable; and the next run
repairs whatever a kill interrupted.

Writing takes milliseconds of a build that takes a second, so random kills would rarely land in
it. The commands therefore run on a simulated slow disk (`SLOW_DISK`: every open-for-writing,
fsync and rename takes 15 ms longer), which stretches the write phase of any implementation
without changing what it does; kills then land at random moments and the invariant is checked
after each one. With the old file-by-file writes these tests fail (mixed trees, empty
releases.json)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from lynxc.compiler.files import replace_tree
from lynxc.compiler.review.changelog import load_releases
from tests.conftest import LYNXC, ROOT

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


def lynxc(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [LYNXC, "--project", str(project), *args], capture_output=True, text=True, env=env, timeout=120
    )


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


SLOW_DISK = """
import builtins, io, os, time
def slow(fn, writes_only=False):
    def wrapped(*args, **kwargs):
        mode = args[1] if len(args) > 1 else kwargs.get("mode", "r")
        result = fn(*args, **kwargs)
        if not writes_only or any(c in str(mode) for c in "wax+"):
            time.sleep(0.015)
        return result
    return wrapped
builtins.open = io.open = slow(io.open, writes_only=True)
os.fsync, os.replace, os.rename = slow(os.fsync), slow(os.replace), slow(os.rename)
from lynxc.compiler.cli import main
main()
"""


def slow_lynxc(project: Path, *args: str) -> list[str]:
    return [sys.executable, "-c", SLOW_DISK, "--project", str(project), *args]


def run_and_kill(command: list[str], after: float) -> bool:
    """Start `command`, SIGKILL it `after` seconds later; True when it was still running."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    time.sleep(after)
    alive = process.poll() is None
    process.send_signal(signal.SIGKILL)
    process.wait()
    return alive


def timed(command: list[str]) -> float:
    start = time.monotonic()
    done = subprocess.run(
        command, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    assert done.returncode == 0, done.stderr
    return time.monotonic() - start


def test_killed_builds_leave_the_old_tree_or_the_new_one(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    trees = {}
    durations = []
    for variant in ("a", "b"):
        (specs / "shop.yaml").write_text(spec(variant))
        durations.append(timed(slow_lynxc(tmp_path, "build")))
        trees[variant] = snapshot(tmp_path / "generated/shop")
    assert trees["a"].keys() == trees["b"].keys()
    assert all(trees["a"][name] != trees["b"][name] for name in trees["a"] if name != "models/__init__.py")
    rng = random.Random(11)
    killed_running = 0
    for round_ in range(16):
        (specs / "shop.yaml").write_text(spec("ab"[round_ % 2]))
        after = max(durations) * rng.uniform(0.3, 1.05)
        killed_running += run_and_kill(slow_lynxc(tmp_path, "build"), after)
        tree = snapshot(tmp_path / "generated/shop")
        assert tree in (trees["a"], trees["b"]), f"round {round_}: a mixed tree"
    assert killed_running >= 4  # the kills really interrupted builds
    assert lynxc(tmp_path, "build").returncode == 0
    assert lynxc(tmp_path, "build", "--check").returncode == 0
    assert [p.name for p in (tmp_path / "generated").iterdir()] == ["shop"]  # no staging left over


def test_a_tree_swap_killed_while_writing_is_all_or_nothing(tmp_path: Path) -> None:
    """The write window itself, hit directly: a child swaps in a 2,000-file tree and is killed
    at random moments while writing; the target is always one of the two complete trees."""
    target = tmp_path / "out"
    old = {f"m/{i}.py": f"old {i}\n" for i in range(2000)}
    new = {f"m/{i}.py": f"new {i}\n" * 3 for i in range(2000)}
    replace_tree(target, old)
    script = textwrap.dedent(
        f"""
        import json, sys
        from pathlib import Path
        from lynxc.compiler.files import replace_tree
        replace_tree(Path({str(target)!r}), json.loads(sys.stdin.read()))
        """
    )
    start = time.monotonic()
    subprocess.run([sys.executable, "-c", script], input=json.dumps(new), text=True, check=True)
    duration = time.monotonic() - start
    replace_tree(target, old)
    rng = random.Random(5)
    outcomes = set()
    for _ in range(12):
        process = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, text=True)
        process.stdin.write(json.dumps(new))
        process.stdin.close()
        time.sleep(duration * rng.uniform(0.3, 1.0))
        process.send_signal(signal.SIGKILL)
        process.wait()
        tree = {p.relative_to(target).as_posix(): p.read_text() for p in target.rglob("*") if p.is_file()}
        assert tree in (old, new)
        outcomes.add("new" if tree == new else "old")
        replace_tree(target, old)  # also clears what the kill left beside it
        assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert "old" in outcomes  # some kills really landed before the swap


def test_a_file_write_killed_at_any_moment_leaves_old_or_new_text(tmp_path: Path) -> None:
    """The single-file primitive every other write uses (releases.json, baselines, changelogs,
    scaffolds), killed mid-write: the file holds the old text or the new, never a prefix."""
    target = tmp_path / "releases.json"
    old, new = "o" * 8_000_000, "n" * 8_000_000
    target.write_text(old)
    script = f"""
from pathlib import Path
from lynxc.compiler.files import write_text_atomic
write_text_atomic(Path({str(target)!r}), "n" * 8_000_000)
"""
    start = time.monotonic()
    subprocess.run([sys.executable, "-c", script], check=True)
    duration = time.monotonic() - start
    rng = random.Random(7)
    outcomes = set()
    for _ in range(12):
        target.write_text(old)
        run_and_kill([sys.executable, "-c", script], duration * rng.uniform(0.5, 1.0))
        text = target.read_text()
        assert text in (old, new)
        outcomes.add(text[0])
    assert "o" in outcomes  # some kills really landed before the rename


def test_killed_releases_leave_readable_baselines(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "shop.yaml").write_text(spec("a"))
    assert lynxc(tmp_path, "build").returncode == 0
    duration = timed(slow_lynxc(tmp_path, "release", "shop", "--date", "2026-01-01"))
    rng = random.Random(3)
    for minor in range(1, 13):
        (specs / "shop.yaml").write_text(spec("ab"[minor % 2], version=f"{minor}.0.0"))
        run_and_kill(
            slow_lynxc(tmp_path, "release", "shop", "--date", "2026-01-02"), duration * rng.uniform(0.2, 1.1)
        )
        releases, problems = load_releases(tmp_path, "shop")
        assert problems == [], problems
        assert releases[0].version == "0.1.0"
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
