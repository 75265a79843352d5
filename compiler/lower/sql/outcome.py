"""What checking a server's SQL tools gives the build, whatever the engine (DuckDB, PostgreSQL,
SQLite): its own module so each engine's check fills it without importing the dispatcher."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...diagnostics import Diagnostic
from ...ir import SqlDataIR, ToolIR


@dataclass
class SqlCheck:
    data: SqlDataIR | None = None
    tools: dict[str, ToolIR] = field(default_factory=dict)  # the SQL tools, with output schemas
    files: list[tuple[str, str]] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
