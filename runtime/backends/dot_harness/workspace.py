"""Authorized workspaces and descriptor-pinned path resolution.

Containment is enforced by the kernel, not by string checks: every step from the workspace
root is an `openat` relative to the previous folder's descriptor with `O_NOFOLLOW`, so a
symlink anywhere on the way (or one swapped in during the call) is refused rather than followed.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from lynxc.runtime.errors import ToolError

EXCLUDED_DIRECTORY_NAMES = (".git", "node_modules", "dist", "build", "coverage")
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO must not wait for a writer; regular files ignore it.
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


@dataclass(frozen=True)
class Opened:
    fd: int
    rel: str  # normalized, relative to the workspace; '.' for the root
    is_dir: bool
    st: os.stat_result


def workspace_root(settings: Mapping[str, Any], name: str) -> str:
    workspaces = settings.get("workspaces") or {}
    if name not in workspaces:
        configured = ", ".join(sorted(workspaces)) or "none configured"
        raise ToolError(f"workspace: unknown workspace {name!r} (authorized: {configured})")
    return workspaces[name]


def split_relative(path: str) -> tuple[str, ...]:
    """'src/./app' -> ('src', 'app'). Absolute paths, '..' and NUL are refused outright."""
    if "\x00" in path:
        raise ToolError("path: must not contain NUL characters")
    if path.startswith("/"):
        raise ToolError(f"path: {path!r} is absolute; give a path relative to the workspace root")
    parts = tuple(part for part in path.split("/") if part not in ("", "."))
    if ".." in parts:
        raise ToolError(f"path: {path!r} contains '..'; paths cannot leave the workspace")
    return parts


def join(rel: str, name: str) -> str:
    return name if rel == "." else f"{rel}/{name}"


@contextmanager
def open_in_workspace(settings: Mapping[str, Any], workspace: str, path: str) -> Iterator[Opened]:
    """Open `path` inside the workspace, pinned step by step; closes it on exit."""
    parts = split_relative(path)
    root = workspace_root(settings, workspace)
    try:
        current = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as err:
        raise ToolError(f"workspace: {workspace!r} cannot be opened ({os.strerror(err.errno)})") from None
    rel = "."
    try:
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            child = _open_step(current, part, join(rel, part), final=last)
            os.close(current)
            current = child
            rel = join(rel, part)
        st = os.fstat(current)
        if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
            raise ToolError(f"path: {rel!r} is a special file (not a regular file or folder)")
        yield Opened(current, rel, stat.S_ISDIR(st.st_mode), st)
    finally:
        os.close(current)


def _open_step(parent: int, name: str, rel: str, *, final: bool) -> int:
    try:
        return os.open(name, FILE_FLAGS if final else DIR_FLAGS, dir_fd=parent)
    except OSError as err:
        raise ToolError(_refusal(parent, name, rel, err)) from None


def _refusal(parent: int, name: str, rel: str, err: OSError) -> str:
    if err.errno == errno.ENOENT:
        return f"path: {rel!r} does not exist"
    try:
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except OSError:
        st = None
    if err.errno == errno.ELOOP or (st is not None and stat.S_ISLNK(st.st_mode)):
        return f"path: {rel!r} is a symlink; symlinks are never followed"
    if err.errno == errno.ENOTDIR:
        return f"path: {rel!r} is not a folder"
    return f"path: {rel!r} cannot be opened ({os.strerror(err.errno or 0)})"
