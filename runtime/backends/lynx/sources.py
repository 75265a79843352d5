"""Sources: named folders of code or docs, with include/exclude globs (globs.py has their
semantics, the same as the `file_glob` search filter's), and the files they hold."""

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
        """Whether the file at `rel` (relative to the root, '/'-separated) belongs to the source."""
        return any(glob_match(rel, g) for g in self.include) and not any(
            glob_match(rel, g) for g in self.exclude
        )

    def files(self) -> Iterator[tuple[str, str]]:
        """(path relative to the root, absolute path) of every wanted regular file, in path order."""
        for folder, dirs, names in os.walk(self.root):
            dirs[:] = sorted(d for d in dirs if d not in VENDOR_DIRS and not d.startswith("."))
            for name in sorted(names):
                full = os.path.join(folder, name)
                rel = os.path.relpath(full, self.root).replace(os.sep, "/")
                if name.startswith(".") or os.path.islink(full) or not self.wants(rel):
                    continue
                yield rel, full


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
