"""Sources: named folders of code or docs, with include/exclude globs, and the files they hold.

The globs' syntax is globs.py's, as for the `file_glob` search filter, and they apply as in
.gitignore: a pattern that matches a folder matches everything in it, so `exclude: ["tests/*"]`
also drops `tests/unit/test_a.py` and `exclude: ["*.egg-info"]` everything in `pkg.egg-info/`
(which a config written for fnmatch, where `*` crosses `/`, meant). `file_glob` matches the file's
own path only: `src/*.py` there never matches `src/pkg/b.py`.

Two kinds of names are skipped unless the settings say otherwise, like .gitignore'd paths:
- the folders of dependencies, caches and build output (`build`, `dist`, `node_modules`, ...:
  vendored.VENDOR_DIRS), which are `exclude`'s default: a source that gives `exclude` replaces
  the list (ruff's `exclude` works the same way);
- hidden files and folders (a name starting with `.`).
Either is indexed where an `include` pattern names it literally (`build/**`, `src/build/*.py`,
`.github/**`): a package folder named `build` is not lost to a default its author never saw.
A user's own `exclude` always wins over `include`."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from lynxc.runtime.backends.vendored import VENDOR_DIRS
from lynxc.runtime.errors import ToolError

from .globs import check_glob, glob_match

MAX_FILE_BYTES = 2 * 1024 * 1024
_WILDCARDS = re.compile(r"[*?\[\\]")


@dataclass(frozen=True)
class Source:
    name: str
    root: str
    kind: str  # "code" or "docs"
    include: tuple[str, ...] = ("**/*",)
    # None: the built-in folders (VENDOR_DIRS) are skipped, each unless `include` names it
    exclude: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        for setting in ("include", "exclude"):
            for pattern in getattr(self, setting) or ():
                check_glob(pattern, f"sources: {self.name!r} {setting}")

    def wants(self, rel: str) -> bool:
        """Whether the file at `rel` (relative to the root, '/'-separated) belongs to the source:
        it or a folder it is in matches an include pattern, none matches an exclude one, and no
        name on its path is skipped by default (see the module docstring)."""
        paths = _with_folders(rel)
        return (
            _any_match(paths, self.include)
            and not _any_match(paths, self.exclude or ())
            and not any(self._skipped(path, folder=i > 0) for i, path in enumerate(paths))
        )

    def excludes_folder(self, rel: str) -> bool:
        """Whether everything in the folder `rel` is excluded (so the walk need not enter it)."""
        paths = _with_folders(rel)
        return _any_match(paths, self.exclude or ()) or any(
            self._skipped(path, folder=True) for path in paths
        )

    def _skipped(self, path: str, folder: bool) -> bool:
        """Whether `path` (a folder when `folder`) is skipped by default: hidden, or a built-in
        folder while `exclude` is not given, and named by no include pattern."""
        name = path.rsplit("/", 1)[-1]
        default = name.startswith(".") or (folder and self.exclude is None and name in VENDOR_DIRS)
        return default and not any(_names(pattern, path) for pattern in self.include)

    def files(self) -> Iterator[tuple[str, str]]:
        """(path relative to the root, absolute path) of every wanted regular file, in path order."""
        for folder, dirs, names in os.walk(self.root):
            here = os.path.relpath(folder, self.root).replace(os.sep, "/")
            dirs[:] = sorted(d for d in dirs if not self.excludes_folder(d if here == "." else f"{here}/{d}"))
            for name in sorted(names):
                full = os.path.join(folder, name)
                rel = os.path.relpath(full, self.root).replace(os.sep, "/")
                if os.path.islink(full) or not self.wants(rel):
                    continue
                yield rel, full


def _with_folders(rel: str) -> list[str]:
    """The path and every folder above it: `a/b/c.py` -> `a/b/c.py`, `a`, `a/b`."""
    parts = rel.split("/")
    return [rel, *("/".join(parts[:i]) for i in range(1, len(parts)))]


def _any_match(paths: list[str], patterns: tuple[str, ...]) -> bool:
    return any(glob_match(path, pattern) for pattern in patterns for path in paths)


def _names(pattern: str, path: str) -> bool:
    """Whether `pattern` names the file or folder `path` literally: one of its segments is the
    path's last name, without wildcards, and the pattern up to that segment matches the path
    (`build/**` and `**/build/*.py` name `build`; `**/*.py` and `b*/**` do not)."""
    name = path.rsplit("/", 1)[-1]
    segments = pattern.split("/")
    anchored = "/" in pattern.rstrip("/")
    for end, segment in enumerate(segments, 1):
        if segment != name or _WILDCARDS.search(segment):
            continue
        head = "/".join(segments[:end])
        if glob_match(path, "/" + head if anchored and not head.startswith("/") else head):
            return True
    return False


def sources_from_settings(settings: Mapping[str, Any]) -> dict[str, Source]:
    found = {}
    for item in settings.get("sources") or []:
        found[item["name"]] = Source(
            item["name"],
            item["root"],
            item.get("kind", "code"),
            tuple(item.get("include") or ("**/*",)),
            None if item.get("exclude") is None else tuple(item["exclude"]),
        )
    if not found:
        raise ToolError("no sources are configured: start the server with --set sources='[{...}]'")
    return found


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]
