"""The settings a server starts with, checked before it serves anything.

Three layers, each reporting every problem it finds:

1. values: given by `--set` or `LYNXC_<NAME>`, or the spec's default; a setting without a
   default is required (settings.py);
2. paths: string nodes declared with a path `format` are made absolute and must exist as
   declared (setting_paths.py);
3. backends: a built-in backend package may expose `check_settings(settings) -> list[str]`
   for what no schema can say (lynx-mcp: is `index_dir` a folder?). It runs once the values are
   valid, and each problem it returns names its setting.

Serving adds one more: a package's `check_serving(definition, settings, note) -> list[str]`,
for what needs the server's own generated files and is worth a bounded wait before serving
(the sql package: one login to the Postgres database of sql.json's DSN setting, so a refused
login is a start-up problem). `note` prints an informational line. `lynxc serve` alone runs it
(`serving_checks`), once the settings are valid; `lynxc index` never connects anywhere for it.

A check too slow to stand between a client and `initialize` (lynx-mcp's: does the index match
the configured embedder? It loads LanceDB and opens the index, seconds) is a backend package's
`check_settings_deferred`. `lynxc index` runs it with the others (`deferred=True`); a served
host runs it in the background from its first `tools/list` or call (DeferredChecks), reports each
problem on stderr, and answers every call of that package's tools with it.

Only built-in packages are asked: importing a user's backend package at start-up could load
anything, and user backends get the declarative checks of 1 and 2.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any

import anyio.to_thread

from .definition import ServerDefinition
from .setting_paths import resolve_paths
from .settings import SettingsError, collect_settings, parse_assignments

BUILTIN_BACKENDS_PACKAGE = "lynxc.runtime.backends"

SettingsCheck = Callable[[Mapping[str, Any]], list[str]]
ServingCheck = Callable[[ServerDefinition, Mapping[str, Any], Callable[[str], None]], list[str]]


def startup_settings(
    definition: ServerDefinition,
    assignments: list[str],
    base: str,
    environ: Mapping[str, str] | None = None,
    *,
    deferred: bool = False,
) -> dict[str, Any]:
    """The server's settings, with declared paths absolute (relative ones taken from `base`).
    Raises SettingsError with every problem found. `deferred` runs the slow checks too."""
    schema = definition.settings_schema
    values, problems = collect_settings(schema, parse_assignments(assignments), environ)
    values, path_problems = resolve_paths(schema, values, base)
    problems += path_problems
    if not problems:
        for check in backend_checks(definition).values():
            problems += check(values)
    if not problems and deferred:
        for check in backend_checks(definition, "check_settings_deferred").values():
            problems += check(values)
    if problems:
        raise SettingsError(problems)
    return values


def serving_checks(
    definition: ServerDefinition, settings: Mapping[str, Any], note: Callable[[str], None]
) -> list[str]:
    """The problems of each built-in package's `check_serving`, run with valid settings just
    before a server serves."""
    problems: list[str] = []
    for check in backend_checks(definition, "check_serving").values():
        problems += check(definition, settings, note)
    return problems


def backend_package(backend: str) -> str | None:
    """The built-in backend package a binding's backend lives in; None for a user's backend."""
    if not backend.startswith(BUILTIN_BACKENDS_PACKAGE + "."):
        return None
    return backend.partition(":")[0].rpartition(".")[0]


def backend_checks(definition: ServerDefinition, name: str = "check_settings") -> dict[str, SettingsCheck]:
    """Package -> its check called `name`, for each built-in backend package the server's tools
    bind to that has one."""
    packages = sorted({p for p in (backend_package(b.backend) for b in definition.tools) if p})
    found = {package: getattr(importlib.import_module(package), name, None) for package in packages}
    return {package: check for package, check in found.items() if callable(check)}


class DeferredChecks:
    """A served host's slow start-up checks: run once, in a worker thread, from the first
    request that asks (so `initialize` and the first `tools/list` are answered without waiting
    for them). Each problem is logged as found; `problems(package)` waits for the result."""

    def __init__(self, checks: Mapping[str, SettingsCheck], settings: Mapping[str, Any]) -> None:
        self._checks = dict(checks)
        self._settings = settings
        self._lock = threading.Lock()
        self._found: Future[dict[str, list[str]]] | None = None

    def start(self) -> None:
        with self._lock:
            if self._found is not None or not self._checks:
                return
            self._found = Future()
        threading.Thread(target=self._run, name="lynxc-deferred-checks", daemon=True).start()

    async def problems(self, package: str | None) -> list[str]:
        """The problems the checks of `package` found (none for a package without checks)."""
        if package not in self._checks:
            return []
        self.start()
        assert self._found is not None
        found = (
            self._found.result()
            if self._found.done()
            else await anyio.to_thread.run_sync(self._found.result, abandon_on_cancel=True)
        )
        return found[package]

    def _run(self) -> None:
        assert self._found is not None
        found: dict[str, list[str]] = {}
        for package, check in self._checks.items():
            try:
                found[package] = check(self._settings)
            except Exception as err:  # a check that breaks must not leave callers waiting forever
                found[package] = [f"the start-up check of {package} failed: {type(err).__name__}: {err}"]
            for problem in found[package]:
                # stderr, in the words `lynxc serve` used when these checks ran before serving
                logging.getLogger("lynxc serve").error("%s", problem)
        self._found.set_result(found)
