"""What `lynxc dev` watches (compiler/dev/watch.py), and a burst of saves becoming one rebuild,
on a real folder with the real watcher."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from lynxc.compiler.dev.watch import is_watched, watch, watch_roots

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    "relative",
    [
        "specs/demo.yaml",
        "specs/shop/orders.yaml",
        "demo_backend.py",
        "pkg/queries/top.sql",
        "data/sample.csv",
        "schema-changelog/demo/releases/0.1.0.json",
    ],
)
def test_what_a_server_is_made_of_is_watched(tmp_path: Path, relative: str) -> None:
    assert is_watched(tmp_path, tmp_path / relative)


@pytest.mark.parametrize(
    "relative",
    [
        "generated/demo/tools.json",
        ".git/index",
        ".venv/lib/site.py",
        "pkg/__pycache__/x.cpython-311.pyc",
        ".lynxc-cache/specs.json",
        ".lynxc-data/demo/table.lance",
        "schema-changelog/demo/CHANGELOG.md",
        "schema-changelog/demo/changelog.json",
        "specs/.demo.yaml.swp",
        "specs/demo.yaml~",
        "specs/.#demo.yaml",
        "specs/4913",
        "specs/.demo.yaml.tmp",
    ],
)
def test_what_lynxc_and_editors_write_is_not(tmp_path: Path, relative: str) -> None:
    assert not is_watched(tmp_path, tmp_path / relative)


def test_outside_the_project_is_not_watched(tmp_path: Path) -> None:
    assert not is_watched(tmp_path / "project", tmp_path / "elsewhere.yaml")


def test_roots_leave_out_ignored_folders(tmp_path: Path) -> None:
    for name in ("specs", "pkg", "generated", ".venv", "__pycache__"):
        (tmp_path / name).mkdir()
    (tmp_path / "backend.py").write_text("")
    assert watch_roots(tmp_path) == [tmp_path / "pkg", tmp_path / "specs"]


async def test_a_burst_of_saves_is_one_rebuild(tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "generated").mkdir()
    bursts: list[set[Path]] = []
    stop = anyio.Event()

    async def handle(changed: set[Path]) -> None:
        bursts.append(changed)
        if len(bursts) == 2:
            stop.set()

    async with anyio.create_task_group() as group:
        group.start_soon(watch, tmp_path, stop, handle, 1.0)
        with anyio.fail_after(60):  # until the watcher hears a save: then it is listening
            while not bursts:
                (tmp_path / "specs" / "probe.yaml").write_text("lynxc: 1\n")
                with anyio.move_on_after(3):  # longer than the quiet window: a burst can end
                    while not bursts:
                        await anyio.sleep(0.05)
        (tmp_path / "generated" / "ignored.json").write_text("{}")
        for name in ("a.yaml", "b.yaml", "c.yaml"):
            (tmp_path / "specs" / name).write_text("lynxc: 1\n")
        (tmp_path / "backend.py").write_text("")
        with anyio.fail_after(60):
            await stop.wait()
    assert {path.name for path in bursts[1]} == {"a.yaml", "b.yaml", "c.yaml", "backend.py"}
