"""Lexical depth-first walk under a pinned folder, with the enumeration caps and skip counters.

Each folder is opened with `openat(parent_fd, name, O_NOFOLLOW | O_DIRECTORY)`, so a folder
swapped for a symlink mid-walk fails to open instead of leading outside. Entries are visited
in code-point order of their names, folders descended into where they fall in that order.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field

from lynxc.runtime.context import CancelToken

from .workspace import DIR_FLAGS, EXCLUDED_DIRECTORY_NAMES, join


@dataclass(frozen=True)
class WalkLimits:
    max_children: int
    max_filename_bytes: int
    max_depth: int | None
    include_hidden: bool


@dataclass
class WalkStats:
    entries_scanned: int = 0
    filename_bytes: int = 0
    hidden: int = 0
    excluded: int = 0
    symlinks: int = 0
    special: int = 0
    invalid_names: int = 0
    depth_limited: int = 0
    changed: int = 0
    reasons: list[str] = field(default_factory=list)
    stopped: bool = False

    def incomplete(self, reason: str) -> None:
        if reason not in self.reasons:
            self.reasons.append(reason)

    def stop(self, reason: str) -> None:
        self.incomplete(reason)
        self.stopped = True

    def skipped_entries(self) -> dict[str, int]:
        return {
            "hidden": self.hidden,
            "excluded": self.excluded,
            "symlinks": self.symlinks,
            "special": self.special,
            "invalidNames": self.invalid_names,
        }


@dataclass(frozen=True)
class Found:
    """A regular file or a folder reached by the walk. `dir_fd` is the open parent folder,
    valid until the walk advances: open the file relative to it straight away."""

    rel: str
    name: str
    dir_fd: int
    depth: int
    is_dir: bool


@dataclass
class _Frame:
    fd: int
    rel: str
    depth: int
    entries: Iterator[tuple[str, int]]


def walk(
    root_fd: int, root_rel: str, limits: WalkLimits, stats: WalkStats, cancel: CancelToken
) -> Iterator[Found]:
    """Yield files and folders below the pinned folder `root_fd` (the caller keeps it open)."""
    frames: list[_Frame] = []
    try:
        start = os.dup(root_fd)
        children = _enumerate(start, limits, stats)
        frames.append(_Frame(start, root_rel, 0, iter(children)))
        while frames and not stats.stopped:
            if cancel.cancelled:
                stats.stop("cancelled")
                break
            frame = frames[-1]
            entry = next(frame.entries, None)
            if entry is None:
                os.close(frames.pop().fd)
                continue
            name, mode = entry
            rel = join(frame.rel, name)
            hidden = name.startswith(".") and not limits.include_hidden
            if stat.S_ISLNK(mode):
                stats.symlinks += 1
            elif stat.S_ISDIR(mode):
                if name in EXCLUDED_DIRECTORY_NAMES:
                    stats.excluded += 1
                elif hidden:
                    stats.hidden += 1
                elif limits.max_depth is not None and frame.depth >= limits.max_depth:
                    # Listed, as an entry of its parent, but not opened or descended into.
                    stats.depth_limited += 1
                    stats.incomplete("maxDepth")
                    yield Found(rel, name, frame.fd, frame.depth, True)
                else:
                    child = _open_dir(frame.fd, name, stats)
                    if child is None:
                        continue
                    yield Found(rel, name, frame.fd, frame.depth, True)
                    grandchildren = _enumerate(child, limits, stats)
                    frames.append(_Frame(child, rel, frame.depth + 1, iter(grandchildren)))
            elif stat.S_ISREG(mode):
                if hidden:
                    stats.hidden += 1
                else:
                    yield Found(rel, name, frame.fd, frame.depth, False)
            else:
                stats.special += 1
    finally:
        for frame in frames:
            os.close(frame.fd)


def _open_dir(parent: int, name: str, stats: WalkStats) -> int | None:
    try:
        return os.open(name, DIR_FLAGS, dir_fd=parent)
    except OSError:
        # Gone, or replaced by a symlink or a file since it was listed.
        stats.changed += 1
        stats.incomplete("changedDuringScan")
        return None


def _enumerate(fd: int, limits: WalkLimits, stats: WalkStats) -> list[tuple[str, int]]:
    """A folder's entries in name order, with their lstat type. Past a cap the walk stops and
    this folder's partial listing is dropped: an arbitrary subset would not be reproducible."""
    found: list[tuple[str, int]] = []
    with os.scandir(fd) as entries:
        for entry in entries:
            if stats.entries_scanned >= limits.max_children:
                stats.stop("entryLimit")
                return []
            stats.entries_scanned += 1
            raw = os.fsencode(entry.name)
            if stats.filename_bytes + len(raw) > limits.max_filename_bytes:
                stats.stop("filenameBytesLimit")
                return []
            stats.filename_bytes += len(raw)
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                stats.invalid_names += 1
                continue
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                stats.changed += 1
                stats.incomplete("changedDuringScan")
                continue
            found.append((entry.name, mode))
    found.sort()
    return found
