"""Where the specs are, and how a file is named in messages: no parsing here, so a build that
reuses its cache finds its specs without importing the spec models."""

from __future__ import annotations

import os
from pathlib import Path

SERVER_FILE = "server.yaml"
YAML_SUFFIXES = (".yaml", ".yml")


def display_path(path: Path) -> str:
    """Paths relative to the working directory when under it, so messages stay short."""
    try:
        return (
            os.path.relpath(path.resolve(), Path.cwd())
            if path.resolve().is_relative_to(Path.cwd())
            else str(path)
        )
    except ValueError:
        return str(path)


def discover_specs(specs_dir: Path) -> list[Path]:
    if not specs_dir.is_dir():
        return []
    found = []
    for entry in sorted(specs_dir.iterdir()):
        if (entry.is_dir() and (entry / SERVER_FILE).is_file()) or (
            entry.is_file() and entry.suffix in YAML_SUFFIXES
        ):
            found.append(entry)
    return found
