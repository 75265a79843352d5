"""Check a server's SQL tools over SQLite (`server: {sqlite: ...}`): open the build's copy of the
database's shape, check each statement, give each tool its output schema (derived from the
declared types, or the spec's own, once checked to accept every value they produce)."""

from __future__ import annotations

from typing import Any

from ....ir import SqlDataIR, SqlToolIR, ToolIR
from ....limits import SQL_CHECK_CPU_SECONDS
from ....rules import diagnostic
from ....spec.load import SpecSource, ToolSource
from ..outcome import SqlCheck
from ..output import with_output
from ..statements import checked_statements
from .build import BudgetSpent, open_build_database
from .statement import check_statement, derived_output


def check_sqlite(
    source: SpecSource,
    sql_tools: list[ToolSource],
    lowered: dict[str, ToolIR],
    result: SqlCheck,
    cpu_seconds: float = SQL_CHECK_CPU_SECONDS,
) -> SqlCheck:
    """Fill `result` for a SQLite server."""
    data = source.server.server.sqlite
    assert data is not None
    if source.server.server.duckdb is not None:  # SQL_ENGINE_CONFLICT, reported by lowering
        return result
    try:
        build, problems = open_build_database(source, cpu_seconds)
    except BudgetSpent:
        build, problems = None, [_timeout(source, cpu_seconds)]
    result.diagnostics += problems
    if build is None:
        return result
    try:
        checked: list[SqlToolIR] = []
        passed = checked_statements(sql_tools, lowered, build, check_statement, result.diagnostics)
        for tool_source, tool_ir, sql_ir in passed:
            checked.append(sql_ir)
            result.tools[tool_ir.name], problems = with_output(tool_ir, derived_output(sql_ir), tool_source)
            result.diagnostics += problems
    except BudgetSpent:
        result.diagnostics.append(_timeout(source, cpu_seconds))
        return result
    finally:
        build.connection.close()
    result.data = SqlDataIR(
        database_setting=build.setting,
        writable=build.writable,
        views=(),
        tools=tuple(checked),
        database_shape=build.shape,
        engine="sqlite",
    )
    result.files = build.files
    return result


def _timeout(source: SpecSource, cpu_seconds: float) -> Any:
    return diagnostic(
        "SQL_TIMEOUT",
        f"checking the SQL tools against the SQLite database used over {cpu_seconds:g} s of CPU "
        "time and was stopped",
        source.server_doc.span(("server", "sqlite")),
        "use a smaller sample; a schema file describes tables, it does not fill them",
    )
