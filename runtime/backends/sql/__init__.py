"""SQL tools: DuckDB statements compiled by lynxc build and served with bound parameters.

- catalog.py: generated/<server>/sql.json (what the build checked) as frozen dataclasses;
- types.py: DuckDB result types as JSON type trees, their JSON Schemas and value converters;
- views.py: a declared view's reader call as SQL text (build and runtime alike);
- connection.py: the per-process sandboxed DuckDB of a server, and its drift check;
- tools.py: `run_sql`, the backend every SQL tool binds to;
- postgres/: the same tools over PostgreSQL (sql.json with `"engine": "postgres"`).

Importing this package loads no DuckDB: start-up calls `check_settings`, `lynxc build` reads
the backend's declaration.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .catalog import THREADS_SETTING, TIMEOUT_SETTING
from .postgres.catalog import POOL_SIZE_SETTING

__all__ = ["check_settings"]


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
