"""The settings a server starts with, checked before it serves anything.

Three layers, each reporting every problem it finds:

1. values: given by `--set` or `LYNXC_<NAME>`, or the spec's default; a setting without a
   default is required (settings.py);
2. paths: string nodes declared with a path `format` are made absolute and must exist as
   declared (setting_paths.py);
3. backends: a built-in backend package may expose `check_settings(settings) -> list[str]`
   for what no schema can say (lynx-mcp: does the index match the configured embedder?). It
   runs once the values are valid, and each problem it returns names its setting.

Only built-in packages are asked: importing a user's backend package at start-up could load
anything, and user backends get the declarative checks of 1 and 2.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from .definition import ServerDefinition
from .setting_paths import resolve_paths
from .settings import SettingsError, collect_settings, parse_assignments

BUILTIN_BACKENDS_PACKAGE = "lynxc.runtime.backends"

SettingsCheck = Callable[[Mapping[str, Any]], list[str]]


def startup_settings(
    definition: ServerDefinition,
    assignments: list[str],
    base: str,
    environ: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The server's settings, with declared paths absolute (relative ones taken from `base`).
    Raises SettingsError with every problem found."""
    schema = definition.settings_schema
    values, problems = collect_settings(schema, parse_assignments(assignments), environ)
    values, path_problems = resolve_paths(schema, values, base)
    problems += path_problems
    if not problems:
        for check in backend_checks(definition):
            problems += check(values)
    if problems:
        raise SettingsError(problems)
    return values


def backend_checks(definition: ServerDefinition) -> list[SettingsCheck]:
    """The `check_settings` of each built-in backend package the server's tools bind to."""
    packages = sorted(
        {
            binding.backend.partition(":")[0].rpartition(".")[0]
            for binding in definition.tools
            if binding.backend.startswith(BUILTIN_BACKENDS_PACKAGE + ".")
        }
    )
    found = (getattr(importlib.import_module(package), "check_settings", None) for package in packages)
    return [check for check in found if callable(check)]
