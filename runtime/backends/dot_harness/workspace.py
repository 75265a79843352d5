"""Authorized workspaces of the DOT server, opened through descriptor-pinned paths."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from lynxc.runtime.backends.pinned import DIR_FLAGS, FILE_FLAGS, Opened, join, open_pinned, split_relative
from lynxc.runtime.errors import ToolError

EXCLUDED_DIRECTORY_NAMES = (".git", "node_modules", "dist", "build", "coverage")

__all__ = ["DIR_FLAGS", "EXCLUDED_DIRECTORY_NAMES", "FILE_FLAGS", "Opened", "join", "open_in_workspace"]


def workspace_root(settings: Mapping[str, Any], name: str) -> str:
    workspaces = settings.get("workspaces") or {}
    if name not in workspaces:
        configured = ", ".join(sorted(workspaces)) or "none configured"
        raise ToolError(f"workspace: unknown workspace {name!r} (authorized: {configured})")
    return workspaces[name]


@contextmanager
def open_in_workspace(settings: Mapping[str, Any], workspace: str, path: str) -> Iterator[Opened]:
    """Open `path` inside the workspace, pinned step by step; closes it on exit."""
    parts = split_relative(path)
    root = workspace_root(settings, workspace)
    with open_pinned(root, parts, label=f"workspace: {workspace!r}") as opened:
        yield opened
