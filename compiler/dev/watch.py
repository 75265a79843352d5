"""What `lynxc dev` watches, and how a burst of saves becomes one rebuild.

Everything in the project counts (specs, backend modules, SQL files, data samples) except what
lynxc or the tools around it write: generated output, caches, stores, virtual environments,
version control, and editors' temporary files. A rebuild's own writes are therefore never seen
as edits, so a rebuild never triggers another."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path, PurePosixPath

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

# Folders never watched, wherever they are (hidden folders, .git and .lynxc-* included, are
# skipped too: see `is_watched`).
IGNORED_DIRS = frozenset({"generated", "__pycache__", "node_modules", "venv", "env", "build", "dist"})
# What `lynxc build` writes beside the release baselines it reads.
BUILD_WRITTEN = frozenset({"CHANGELOG.md", "changelog.json"})
# Saves arriving closer together than this are one edit (an editor's write-then-rename, a
# formatter run on save, a `git checkout` of many files).
QUIET_SECONDS = 0.05


def is_watched(project: Path, path: str | Path) -> bool:
    """Whether a change to `path` (inside `project`) can change what `lynxc dev` serves."""
    try:
        parts = PurePosixPath(Path(path).resolve().relative_to(project.resolve()).as_posix()).parts
    except ValueError:
        return False
    if not parts:
        return False
    if any(part.startswith(".") or part in IGNORED_DIRS for part in parts[:-1]):
        return False
    name = parts[-1]
    if parts[0] == "schema-changelog" and name in BUILD_WRITTEN:
        return False
    return not _is_temporary(name)


def _is_temporary(name: str) -> bool:
    """Editors' and lynxc's own scratch files: swap files, backups, lock files, atomic writes."""
    return (
        name.startswith((".#", "#", "."))
        or name.endswith(("~", ".swp", ".swo", ".swx", ".tmp", ".part", ".crdownload", ".pyc"))
        or name == "4913"  # vim's probe that a folder is writable
    )


def watch_roots(project: Path) -> list[Path]:
    """The project's top-level folders worth watching recursively. The project folder itself is
    watched without recursion, so a large ignored folder (.venv) costs no watches at all."""
    return sorted(
        child
        for child in project.iterdir()
        if child.is_dir() and not child.name.startswith(".") and child.name not in IGNORED_DIRS
    )


async def watch(
    project: Path,
    stop: anyio.Event,
    handle: Callable[[set[Path]], Awaitable[None]],
    quiet: float = QUIET_SECONDS,
) -> None:
    """Call `handle` with each burst of changes to watched files (the set of paths changed),
    one at a time, until `stop` is set. Changes made while `handle` runs form the next burst."""
    send, receive = anyio.create_memory_object_stream[set[Path]](math.inf)
    async with anyio.create_task_group() as group:
        group.start_soon(_watch, project, [project], False, send.clone(), stop)
        roots = watch_roots(project)
        if roots:
            group.start_soon(_watch, project, roots, True, send.clone(), stop)
        send.close()
        async for burst in _bursts(receive, quiet):
            await handle(burst)


async def _watch(
    project: Path,
    roots: list[Path],
    recursive: bool,
    send: MemoryObjectSendStream[set[Path]],
    stop: anyio.Event,
) -> None:
    from watchfiles import awatch

    with send:
        async for batch in awatch(
            *roots,
            watch_filter=lambda _change, path: is_watched(project, path),
            recursive=recursive,
            stop_event=stop,
            step=50,
        ):
            await send.send({Path(path) for _change, path in batch})


async def _bursts(receive: MemoryObjectReceiveStream[set[Path]], quiet: float) -> AsyncIterator[set[Path]]:
    """Merge batches until `quiet` seconds pass without one."""
    async with receive:
        async for first in receive:
            burst = set(first)
            while True:
                with anyio.move_on_after(quiet) as waited:
                    try:
                        burst |= await receive.receive()
                    except anyio.EndOfStream:
                        break
                if waited.cancelled_caught:
                    break
            yield burst
