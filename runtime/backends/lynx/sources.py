"""Sources: named folders of code or docs, with include/exclude globs, and the files they hold.

The globs' syntax is globs.py's, as for the `file_glob` search filter, and they apply as in
.gitignore: a pattern that matches a folder matches everything in it, so `exclude: ["tests/*"]`
also drops `tests/unit/test_a.py` and `exclude: ["*.egg-info"]` everything in `pkg.egg-info/`
(which a config written for fnmatch, where `*` crosses `/`, meant). `file_glob` matches the file's
own path only: `src/*.py` there never matches `src/pkg/b.py`."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from lynxc.runtime.backends.vendored import VENDOR_DIRS
from lynxc.runtime.errors import ToolError

from .globs import check_glob, glob_match

MAX_FILE_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True)
class Source:
    name: str
    root: str
    kind: str  # "code" or "docs"
    include: tuple[str, ...] = ("**/*",)
    exclude: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for setting in ("include", "exclude"):
            for pattern in getattr(self, setting):
                check_glob(pattern, f"sources: {self.name!r} {setting}")

    def wants(self, rel: str) -> bool:
        """Whether the file at `rel` (relative to the root, '/'-separated) belongs to the source:
        it or a folder it is in matches an include pattern, and none matches an exclude one."""
        paths = _with_folders(rel)
        return _any_match(paths, self.include) and not _any_match(paths, self.exclude)

    def excludes_folder(self, rel: str) -> bool:
        """Whether everything in the folder `rel` is excluded (so the walk need not enter it)."""
        return _any_match(_with_folders(rel), self.exclude)

    def files(self) -> Iterator[tuple[str, str]]:
        """(path relative to the root, absolute path) of every wanted regular file, in path order."""
        for folder, dirs, names in os.walk(self.root):
            here = os.path.relpath(folder, self.root).replace(os.sep, "/")
            dirs[:] = sorted(
                d
                for d in dirs
                if d not in VENDOR_DIRS
                and not d.startswith(".")
                and not self.excludes_folder(d if here == "." else f"{here}/{d}")
            )
            for name in sorted(names):
                full = os.path.join(folder, name)
                rel = os.path.relpath(full, self.root).replace(os.sep, "/")
                if name.startswith(".") or os.path.islink(full) or not self.wants(rel):
                    continue
                yield rel, full


def _with_folders(rel: str) -> list[str]:
    """The path and every folder above it: `a/b/c.py` -> `a/b/c.py`, `a`, `a/b`."""
    parts = rel.split("/")
    return [rel, *("/".join(parts[:i]) for i in range(1, len(parts)))]


def _any_match(paths: list[str], patterns: tuple[str, ...]) -> bool:
    return any(glob_match(path, pattern) for pattern in patterns for path in paths)


def sources_from_settings(settings: Mapping[str, Any]) -> dict[str, Source]:
    found = {}
    for item in settings.get("sources") or []:
        found[item["name"]] = Source(
            item["name"],
            item["root"],
            item.get("kind", "code"),
            tuple(item.get("include") or ("**/*",)),
            tuple(item.get("exclude") or ()),
        )
    if not found:
        raise ToolError("no sources are configured: start the server with --set sources='[{...}]'")
    return found


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]
