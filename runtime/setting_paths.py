"""Path settings, declared by a JSON Schema `format` on a string node of a setting's schema.

The format names follow Pydantic's, so a schema exported from a Pydantic model reads the same:

- `directory-path`: an existing folder the server can read (a root, a workspace, a source);
- `file-path`: an existing regular file the server can read;
- `path`: any path, which need not exist yet (an index folder that `lynxc index` creates);
- `path-or-uri`: as `path`, or a URI (`s3://bucket/prefix`), which is kept as written: an index
  that may live on an object store.

The node may sit anywhere in the setting: the setting itself, its array items, its object's
properties or additional properties (`roots: [..]`, `workspaces: {name: folder}`,
`sources: [{root: ..}]`). At start-up every such value is made absolute and checked, so a
missing folder is reported before serving rather than at the first call. A relative path is
taken from the directory the server starts in, `~` from the user's home; backends then only
ever see absolute, normalised paths, whatever their own working directory becomes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

PATH_FORMATS = ("directory-path", "file-path", "path", "path-or-uri")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def is_uri(value: str) -> bool:
    """`scheme://...` (RFC 3986's scheme syntax): kept as written by a `path-or-uri` setting."""
    return bool(_URI.match(value))


def resolve_paths(
    schema: Mapping[str, Mapping[str, Any]], values: Mapping[str, Any], base: str
) -> tuple[dict[str, Any], list[str]]:
    """(values with every declared path made absolute, one problem per path that fails its format)."""
    problems: list[str] = []
    resolved = {
        name: _walk(schema.get(name, {}), value, _Where(name, name, base, problems))
        for name, value in values.items()
    }
    return resolved, problems


class _Where:
    """Where a value sits in its setting, for messages, and where problems are collected."""

    def __init__(self, setting: str, label: str, base: str, problems: list[str]):
        self.setting, self.label, self.base, self.problems = setting, label, base, problems

    def child(self, suffix: str) -> _Where:
        return _Where(self.setting, self.label + suffix, self.base, self.problems)


def _walk(node: Mapping[str, Any], value: Any, where: _Where) -> Any:
    node = _branch_for(node, value)
    if isinstance(value, str):
        fmt = _path_format(node)
        return _check(value, fmt, where) if fmt else value
    if isinstance(value, list) and isinstance(node.get("items"), Mapping):
        return [_walk(node["items"], item, where.child(f"[{i}]")) for i, item in enumerate(value)]
    if isinstance(value, dict):
        properties = node.get("properties") or {}
        extra = node.get("additionalProperties")
        other = extra if isinstance(extra, Mapping) else {}
        return {
            key: _walk(properties.get(key, other), item, where.child(f".{key}"))
            for key, item in value.items()
        }
    return value


def _branch_for(node: Mapping[str, Any], value: Any) -> Mapping[str, Any]:
    """A nullable array or object (`anyOf: [node, {type: null}]`) describes a list or dict value
    in its branch of that type."""
    kind = "array" if isinstance(value, list) else "object" if isinstance(value, dict) else None
    branches = [b for b in node.get("anyOf") or () if isinstance(b, Mapping) and b.get("type") == kind]
    return branches[0] if kind and branches else node


def _path_format(node: Mapping[str, Any]) -> str | None:
    """The node's path format; a nullable node (`anyOf: [node, null]`) carries it in a branch."""
    branches = [node, *(b for b in node.get("anyOf") or () if isinstance(b, Mapping))]
    return next((b["format"] for b in branches if b.get("format") in PATH_FORMATS), None)


def _check(raw: str, fmt: str, where: _Where) -> str:
    if fmt == "path-or-uri" and is_uri(raw):
        return raw
    expanded = os.path.expanduser(raw)
    path = os.path.normpath(os.path.join(where.base, expanded))
    shown = repr(raw) if where.label == where.setting else f"{where.label} = {raw!r}"
    if not os.path.isabs(expanded):
        shown += f" (relative, so taken from the directory the server starts in: {path})"
    elif expanded != raw:
        shown += f" (that is, {path})"
    problem = _problem(path, fmt)
    if problem:
        where.problems.append(f"setting {where.setting!r}: {shown} {problem}")
    return path


def _problem(path: str, fmt: str) -> str | None:
    if fmt in ("path", "path-or-uri"):
        return None
    want_folder = fmt == "directory-path"
    if not os.path.exists(path):
        return "does not exist" + (" (it must be an existing folder)" if want_folder else "")
    if want_folder and not os.path.isdir(path):
        return "is a file, not a folder" if os.path.isfile(path) else "is not a folder"
    if not want_folder and not os.path.isfile(path):
        return "is a folder, not a file" if os.path.isdir(path) else "is not a regular file"
    if not os.access(path, os.R_OK | (os.X_OK if want_folder else 0)):
        return "cannot be read by this server (permission denied)"
    return None
