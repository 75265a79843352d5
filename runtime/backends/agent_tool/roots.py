"""Configured roots and the pinned opening of a path under one of them."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from lynxc.runtime.backends.pinned import Opened, open_pinned, split_relative
from lynxc.runtime.errors import ToolError


@dataclass(frozen=True)
class Located:
    root: str  # the configured root, as configured
    opened: Opened

    @property
    def display_root(self) -> str:
        return self.root if self.opened.rel == "." else os.path.join(self.root, self.opened.rel)


def requested_path(params: Any) -> str | None:
    """`path`, or its alias `file_path`; naming two different paths is an error."""
    if params.path and params.file_path and params.path != params.file_path:
        raise ToolError("file_path: an alias of path; give one, or the same value in both")
    return params.path or params.file_path


def configured_roots(settings: Mapping[str, Any]) -> list[str]:
    roots = [os.path.normpath(r) for r in settings.get("roots") or []]
    if not roots:
        raise ToolError("no roots are configured: start the server with --set roots='[\"/path/to/project\"]'")
    return roots


@contextmanager
def open_under_roots(settings: Mapping[str, Any], path: str | None, field: str = "path") -> Iterator[Located]:
    """A relative path is taken from the first root; an absolute one must lie under a root.
    Either way every step is pinned (`..`, NUL and symlinks are refused)."""
    roots = configured_roots(settings)
    if path is None or path in ("", "."):
        root, rest = roots[0], ""
    elif path.startswith("/"):
        if "\x00" in path:
            raise ToolError(f"{field}: must not contain NUL characters")
        root = next((r for r in roots if path == r or path.startswith(r.rstrip("/") + "/")), None)
        if root is None:
            raise ToolError(f"{field}: {path!r} is outside the configured roots ({', '.join(roots)})")
        rest = path[len(root) :].lstrip("/")
    else:
        root, rest = roots[0], path
    parts = split_relative(rest, field) if rest else ()
    with open_pinned(root, parts, label=f"root {root!r}", field=field) as opened:
        yield Located(root, opened)
