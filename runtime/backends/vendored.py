"""Folders of dependencies, caches and build output: skipped by the file backends unless asked
for, the way .gitignore'd paths are."""

VENDOR_DIRS = (
    ".git",
    "node_modules",
    "vendor",
    "dist",
    "build",
    "target",
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    "coverage",
    ".next",
    "bower_components",
)
