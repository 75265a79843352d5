"""SQL tools: DuckDB statements compiled by lynxc build and served with bound parameters.

- catalog.py: generated/<server>/sql.json (what the build checked) as frozen dataclasses;
- types.py: DuckDB result types as JSON type trees, their JSON Schemas and value converters;
- views.py: a declared view's reader call as SQL text (build and runtime alike);
- connection.py: the per-process sandboxed DuckDB of a server, and its drift check;
- tools.py: `run_sql`, the backend every SQL tool binds to;
- postgres/: the same tools over PostgreSQL (sql.json with `"engine": "postgres"`).

Importing this package loads no DuckDB: start-up calls `check_settings` (and, when serving,
`check_serving`), `lynxc build` reads the backend's declaration.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .catalog import THREADS_SETTING, TIMEOUT_SETTING
from .postgres.catalog import POOL_SIZE_SETTING, PgCatalog

if TYPE_CHECKING:
    from lynxc.runtime.definition import ServerDefinition

__all__ = ["check_serving", "check_settings"]


def check_settings(settings: Mapping[str, Any]) -> list[str]:
    """The implied settings' values, for what their schemas may not say (the data files are
    checked on the first call, where a missing one disables only the tools that read it)."""
    problems = []
    for name in (THREADS_SETTING, POOL_SIZE_SETTING):
        value = settings.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            problems.append(f"setting {name!r}: {value!r} is not a positive integer")
    timeout = settings.get(TIMEOUT_SETTING)
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        problems.append(f"setting {TIMEOUT_SETTING!r}: {timeout!r} is not a positive number of seconds")
    return problems


def check_serving(
    definition: ServerDefinition, settings: Mapping[str, Any], note: Callable[[str], None]
) -> list[str]:
    """Before a server over PostgreSQL serves: one login with its DSN setting (postgres/login.py),
    so a refused login is one start-up line; an unreachable database is only a `note`."""
    if not definition.sql:
        return []
    try:
        catalog = definition.sql_catalog()
    except Exception:  # a catalog that does not parse is every SQL tool's answer (tools.py)
        return []
    if not isinstance(catalog, PgCatalog):
        return []
    from .postgres.login import check_login

    return check_login(catalog, settings, definition.name, note)
