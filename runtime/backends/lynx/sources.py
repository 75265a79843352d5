"""Sources: named folders of code or docs, with include/exclude globs, and the files they hold."""

from __future__ import annotations

import fnmatch
import hashlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from lynxc.runtime.backends.vendored import VENDOR_DIRS
from lynxc.runtime.errors import ToolError

MAX_FILE_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True)
class Source:
    name: str
    root: str
    kind: str  # "code" or "docs"
    include: tuple[str, ...] = ("**/*",)
    exclude: tuple[str, ...] = ()

    def wants(self, rel: str) -> bool:
        return any(_glob(rel, g) for g in self.include) and not any(_glob(rel, g) for g in self.exclude)

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


def _glob(rel: str, pattern: str) -> bool:
    """`**/*.py` matches at any depth, including the top level."""
    return fnmatch.fnmatch(rel, pattern) or (pattern.startswith("**/") and fnmatch.fnmatch(rel, pattern[3:]))


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
