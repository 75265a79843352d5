"""Crash-safe writes. Every file lynxc writes survives `kill -9` at any instant:

- one file: written to a temporary file beside it, fsynced, renamed over the target, and the
  folder fsynced, so a reader sees the old content or the new, never a prefix of either;
- a generated server folder: built whole in a hidden sibling folder and swapped in with one
  `renameat2(RENAME_EXCHANGE)`, so `lynxc serve` never meets a tree that mixes two builds.
"""

from __future__ import annotations

import ctypes
import errno
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

GENERATED_DIR = "generated"  # generated/<server>/: the folder lynxc owns (emit fills it)
STAGING_MARK = ".staging-"  # hidden siblings `.<name>.staging-XXXX` hold a tree being built
TEMP_SUFFIX = ".tmp"  # `.<name>.XXXXXXXX.tmp` holds a file being written until it is renamed
_TEMP_FILE = re.compile(r"^\..+\.[a-z0-9_]{8}" + re.escape(TEMP_SUFFIX) + "$")  # mkstemp's 8 characters
_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100


def write_text_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
    try:
        # mkstemp makes the file private (0600), and the rename would keep that: give it the
        # mode the target has, or a new file's usual mode.
        os.fchmod(fd, path.stat().st_mode & 0o7777 if path.exists() else _new_file_mode())
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def leftover_temp_files(folder: Path) -> list[Path]:
    """What `write_text_atomic` calls killed before their rename left in `folder`. Nothing else
    names or reads them, so whoever writes into the folder next removes them."""
    if not folder.is_dir():
        return []
    return sorted(path for path in folder.iterdir() if _TEMP_FILE.match(path.name) and path.is_file())


def _new_file_mode() -> int:
    """0666 less the process's umask, as open() would give a new file."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def replace_tree(target: Path, files: Mapping[str, str]) -> None:
    """Make `target` hold exactly `files` ({path relative to target: text}), all at once."""
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_staging(target)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}{STAGING_MARK}"))
    try:
        for relative, text in files.items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
        for folder in sorted({(staging / r).parent for r in files}, key=lambda p: -len(p.parts)):
            _fsync_dir(folder)
        os.chmod(staging, 0o755)  # mkdtemp makes it private; a generated folder is not
        if target.exists():
            _exchange(staging, target)  # staging now holds the old tree
        else:
            os.rename(staging, target)
        _fsync_dir(target.parent)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def remove_staging(target: Path) -> None:
    """Remove what a killed `replace_tree` left beside `target` (never the target itself)."""
    for leftover in target.parent.glob(f".{target.name}{STAGING_MARK}*"):
        shutil.rmtree(leftover, ignore_errors=True)


def _exchange(a: Path, b: Path) -> None:
    """Swap two paths atomically. Where the kernel or file system cannot (not Linux, or
    EINVAL on some network file systems), fall back to two renames: a kill between them leaves
    `b` missing, which `lynxc serve` reports and the next build repairs, never a mixed tree."""
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is not None:
        done = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
        if done == 0:
            return
        code = ctypes.get_errno()
        if code not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
            raise OSError(code, os.strerror(code), str(b))
    aside = b.with_name(f".{b.name}{STAGING_MARK}old")
    os.rename(b, aside)
    os.rename(a, b)
    os.rename(aside, a)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
