"""Descriptor-pinned paths, shared by the file-reading backends: opening one below a root, and
reading the file it names whole.

Containment is enforced by the kernel, not by string checks: every step from a root is an
`openat` relative to the previous folder's descriptor with `O_NOFOLLOW`, so a symlink anywhere
on the way (or one swapped in during the call) is refused rather than followed.

A pinned file is read through its descriptor and refused if its size or mtime moves meanwhile,
so a reply never mixes two versions of a file.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from lynxc.runtime.errors import ToolError

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO must not wait for a writer; regular files ignore it.
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
READ_CHUNK = 1 << 16


@dataclass(frozen=True)
class Opened:
    fd: int
    rel: str  # normalized, relative to the root; '.' for the root itself
    is_dir: bool
    st: os.stat_result


def split_relative(path: str, field: str = "path") -> tuple[str, ...]:
    """'src/./app' -> ('src', 'app'). Absolute paths, '..' and NUL are refused outright."""
    if "\x00" in path:
        raise ToolError(f"{field}: must not contain NUL characters")
    if path.startswith("/"):
        raise ToolError(f"{field}: {path!r} is absolute; give a path relative to the workspace root")
    parts = tuple(part for part in path.split("/") if part not in ("", "."))
    if ".." in parts:
        raise ToolError(f"{field}: {path!r} contains '..'; paths cannot leave the workspace")
    return parts


def join(rel: str, name: str) -> str:
    return name if rel == "." else f"{rel}/{name}"


@contextmanager
def open_pinned(root: str, parts: tuple[str, ...], *, label: str, field: str = "path") -> Iterator[Opened]:
    """Open `parts` below the folder `root`, one pinned step at a time; closes it on exit.
    `label` names the root in messages (a workspace name, or the root itself)."""
    try:
        current = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as err:
        raise ToolError(f"{label} cannot be opened ({os.strerror(err.errno or 0)})") from None
    rel = "."
    try:
        for index, part in enumerate(parts):
            child = _open_step(current, part, join(rel, part), final=index == len(parts) - 1, field=field)
            os.close(current)
            current = child
            rel = join(rel, part)
        st = os.fstat(current)
        if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
            raise ToolError(f"{field}: {rel!r} is a special file (not a regular file or folder)")
        yield Opened(current, rel, stat.S_ISDIR(st.st_mode), st)
    finally:
        os.close(current)


def _open_step(parent: int, name: str, rel: str, *, final: bool, field: str) -> int:
    try:
        return os.open(name, FILE_FLAGS if final else DIR_FLAGS, dir_fd=parent)
    except OSError as err:
        raise ToolError(f"{field}: {_refusal(parent, name, rel, err)}") from None


def _refusal(parent: int, name: str, rel: str, err: OSError) -> str:
    if err.errno == errno.ENOENT:
        return f"{rel!r} does not exist"
    try:
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except OSError:
        st = None
    if err.errno == errno.ELOOP or (st is not None and stat.S_ISLNK(st.st_mode)):
        return f"{rel!r} is a symlink; symlinks are never followed"
    if err.errno == errno.ENOTDIR:
        return f"{rel!r} is not a folder"
    return f"{rel!r} cannot be opened ({os.strerror(err.errno or 0)})"


class FileChanged(Exception):
    """The file changed (or could not be read) while it was being read."""

    def __init__(self, reason: str, bytes_read: int = 0):
        super().__init__(reason)
        self.bytes_read = bytes_read


def read_pinned(fd: int, st: os.stat_result) -> bytes:
    """Read a regular file whose fstat is `st`; refuse it if its size or mtime moves meanwhile."""
    if not stat.S_ISREG(st.st_mode):
        raise FileChanged("not a regular file")
    chunks = []
    remaining = st.st_size + 1  # one byte more than expected reveals growth
    try:
        while remaining > 0:
            chunk = os.read(fd, min(READ_CHUNK, remaining))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        after = os.fstat(fd)
    except OSError as err:
        raise FileChanged(os.strerror(err.errno or 0), sum(map(len, chunks))) from None
    data = b"".join(chunks)
    if len(data) != st.st_size or after.st_size != st.st_size or after.st_mtime_ns != st.st_mtime_ns:
        raise FileChanged("changed while being read", len(data))
    return data
