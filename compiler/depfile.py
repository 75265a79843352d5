"""What a build read, as ninja's depfiles say: every file and folder listing a server's build
depended on, with its content's sha256, so the next build can tell, without compiling, that
nothing it would read has changed.

Inputs are not declared by hand (a forgotten one would be a stale output): they are observed.
Python raises an audit event for every file it opens and every folder it lists (`open`,
`os.listdir`, `os.scandir`); while a `Recorder` is active, those under the project (not lynxc's
own code, the interpreter's or the installed libraries', which the fingerprint covers, nor
temporary files) become inputs. What Python does not open itself is announced with
`sys.audit(BUILD_INPUT_EVENT, path)`: the modules a backend probe's child process imported, or
a file whose absence decides the output (a server without releases.json).

A state is the sha256 of a file's bytes, of a folder's sorted names, or "absent".
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
import tempfile
import threading
from collections.abc import Iterable, Mapping
from types import TracebackType

BUILD_INPUT_EVENT = "lynxc.build.input"
ABSENT = "absent"
_LISTING_EVENTS = frozenset({"os.listdir", "os.scandir"})
_SYSTEM = ("/dev/", "/proc/", "/sys/")

# Audit hooks cannot be removed, so one is installed per process, the first time a build
# records, and it forwards to the recorders active at that moment (none: it returns at once).
_active: list[Recorder] = []
_installed: list[bool] = []
_local = threading.local()  # set while a recorder hashes a file, whose own open is no input


def state_of(path: str) -> str:
    """What `path` holds now: a file's or a folder listing's sha256, ABSENT, or an error mark."""
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return ABSENT
    except OSError as err:
        return f"error:{err.errno}"
    try:
        if stat.S_ISDIR(info.st_mode):
            names = "\0".join(sorted(os.listdir(path)))
            return "dir:" + hashlib.sha256(names.encode("utf-8", "surrogateescape")).hexdigest()
        if stat.S_ISREG(info.st_mode):
            with open(path, "rb") as handle:
                return "file:" + hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError as err:
        return f"error:{err.errno}"
    return f"other:{stat.S_IFMT(info.st_mode)}"


def own_files(files: Iterable[str], ignored: Iterable[str]) -> list[str]:
    """Those of `files` a build depends on as inputs: not the interpreter's nor the installed
    libraries' (whose versions the fingerprint covers), nor under `ignored` (lynxc's own)."""
    roots = tuple(_folder(root) for root in [*ignored, sys.prefix, sys.base_prefix, sys.exec_prefix])
    return [file for file in files if not os.path.abspath(file).startswith(roots)]


def unchanged(inputs: Mapping[str, str]) -> bool:
    """Whether every recorded input still holds what it held."""
    return all(state_of(path) == state for path, state in inputs.items())


class Recorder:
    """`with Recorder(kept, ignored, listed) as seen:` ... `seen.inputs` maps each input to its state
    when first read. Files under `ignored` (lynxc, the interpreter, the libraries) are no
    inputs, nor those of the temporary folder (where a build keeps its scratch files) unless
    they lie under `kept` (the project and the spec: a project may live in /tmp). `listed` is
    the spec's folder, whose listing counts even when it is on sys.path."""

    def __init__(self, kept: Iterable[str], ignored: Iterable[str], listed: str | None = None) -> None:
        roots = [*ignored, sys.prefix, sys.base_prefix, sys.exec_prefix]
        self._ignored = tuple(_folder(root) for root in roots)
        self._scratch = _folder(tempfile.gettempdir())
        self._kept = tuple(_folder(root) for root in kept)
        # Python's imports list every folder on sys.path (the project's root among them): those
        # listings are the import system's, no build input, unless it is the spec's own folder.
        self._import_folders = {os.path.abspath(entry or ".") for entry in sys.path} - (
            {os.path.abspath(listed)} if listed is not None else set()
        )
        self.inputs: dict[str, str] = {}
        self.missed = False  # a read it could not note: what was built must not be kept

    def __enter__(self) -> Recorder:
        if not _installed:
            sys.addaudithook(_hook)
            _installed.append(True)
        _active.append(self)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        _active.remove(self)

    def still_valid(self) -> bool:
        """Whether the inputs still hold what they held when read: a file saved during the build
        would otherwise be recorded with content the output was not made from."""
        return not self.missed and unchanged(self.inputs)

    def add(self, path: str, *, listing: bool = False) -> None:
        absolute = os.path.abspath(path)
        if absolute in self.inputs or absolute.startswith(_SYSTEM):
            return
        if listing and absolute in self._import_folders:
            return
        if absolute.startswith(self._ignored):
            return
        if absolute.startswith(self._scratch) and not absolute.startswith(self._kept):
            return
        self.inputs[absolute] = state_of(absolute)


def _folder(path: str) -> str:
    """`path` made absolute with a trailing separator, for prefix tests."""
    return os.path.join(os.path.abspath(path), "")


def _hook(event: str, args: tuple) -> None:  # type: ignore[type-arg]
    if not _active or getattr(_local, "busy", False):
        return
    listing = event in _LISTING_EVENTS
    if event == "open":
        path, mode, flags = args
        if not _reads(mode, flags):
            return
    elif listing or event == BUILD_INPUT_EVENT:
        path = args[0]
    else:
        return
    if isinstance(path, int) or path is None:  # a descriptor: its file was named when opened
        return
    _local.busy = True
    try:
        name = os.fsdecode(path)
        for recorder in list(_active):
            recorder.add(name, listing=listing)
    except Exception:  # an audit hook must never break the open it watches
        for recorder in list(_active):
            recorder.missed = True
    finally:
        _local.busy = False


def _reads(mode: str | None, flags: int) -> bool:
    if mode is not None:
        return "r" in mode or "+" in mode
    return (flags & os.O_ACCMODE) != os.O_WRONLY and not flags & (os.O_TRUNC | os.O_CREAT)
