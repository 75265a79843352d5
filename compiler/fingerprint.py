"""The compiler's fingerprint: what, besides a spec and the files it names, decides a build's
output. Every cache key includes it, so a changed lynxc or library never reuses an entry.

- lynxc's own files (compiler/ and runtime/: Python, templates, YAML) by content: they are
  what changes under a developer's hands, often without a version bump;
- the Python version, and every installed distribution with its version (the names of the
  `*.dist-info` folders on `sys.path`): a pip-installed library does not change under us
  without its folder's name changing, and one listing per path entry is cheaper than asking
  importlib.metadata about each library that shapes output (datamodel-code-generator,
  pydantic, ruamel.yaml, duckdb, pglast, jinja2, pgserver...). Any install or upgrade
  therefore starts a fresh cache: cautious, and cheap.

Computed once per process (about 10 ms).
"""

from __future__ import annotations

import hashlib
import os
import sys
from functools import cache
from pathlib import Path

_DIST_SUFFIXES = (".dist-info", ".egg-info")


def package_roots() -> tuple[Path, ...]:
    """The folders of lynxc's own code: compiler/ and runtime/."""
    compiler = Path(__file__).resolve().parent
    import lynxc.runtime

    return (compiler, Path(lynxc.runtime.__file__).resolve().parent)


@cache
def compiler_fingerprint() -> str:
    digest = hashlib.sha256()
    digest.update(sys.version.encode())
    for root in package_roots():
        for path in sorted(_source_files(root)):
            digest.update(f"\0{path.relative_to(root.parent).as_posix()}\0".encode())
            digest.update(path.read_bytes())
    for name in sorted(_distributions()):
        digest.update(f"\0{name}".encode())
    return digest.hexdigest()


def _source_files(root: Path) -> list[Path]:
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__" and not d.startswith(".")]
        found.extend(Path(folder, f) for f in files if not f.endswith((".pyc", ".pyo")))
    return found


def _distributions() -> set[str]:
    names = set()
    for entry in sys.path:
        if Path(entry).name not in ("site-packages", "dist-packages"):
            continue  # the project root and the standard library hold no installed library
        try:
            listing = os.listdir(entry)
        except OSError:
            continue
        names.update(name for name in listing if name.endswith(_DIST_SUFFIXES))
    return names
