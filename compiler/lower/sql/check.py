"""Check a server's SQL tools: open the build's DuckDB for the declared data, check each
statement, and give each tool its output schema (derived from the result types, or the one
the spec writes, once checked to accept every value those types produce).

The whole check runs under one budget of CPU time (`limits.SQL_CHECK_CPU_SECONDS`, with a wide
wall-clock backstop): a watchdog interrupts DuckDB itself, so a hostile sample or schema ends in
a diagnostic, never a hung build, and a loaded machine never trips it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from ...ir import SqlDataIR, SqlToolIR, ToolIR, canonical_json
from ...limits import SQL_CHECK_CPU_SECONDS, SQL_CHECK_WALL_SECONDS
from ...rules import diagnostic
from ...spec.load import SpecSource, ToolSource
from ...spec.models import SqlBackend
from ...work_budget import cpu_watchdog
from .catalog import cleanup, open_build_data
from .outcome import SqlCheck
from .output import with_output
from .ranges import with_type_ranges
from .statement_cache import cached_check
from .statements import check_statement, checked_statements, derived_output

if TYPE_CHECKING:
    from ...cache import Store


def is_sql_tool(source: ToolSource) -> bool:
    return isinstance(source.tool.backend, SqlBackend)


def check_sql(
    source: SpecSource,
    sql_tools: list[ToolSource],
    lowered: dict[str, ToolIR],
    *,
    cpu_seconds: float = SQL_CHECK_CPU_SECONDS,
    wall_seconds: float = SQL_CHECK_WALL_SECONDS,
    build_settings: Mapping[str, str] | None = None,
    cache: Store | None = None,
) -> SqlCheck:
    result = SqlCheck()
    if not sql_tools:
        return result
    if source.server.server.postgres is not None:
        from .postgres.check import check_postgres

        return check_postgres(source, sql_tools, lowered, build_settings or {})
    if source.server.server.sqlite is not None:  # SQLite (issue 26): its own package
        from .sqlite.check import check_sqlite

        return check_sqlite(source, sql_tools, lowered, result, cpu_seconds)
    if source.server.server.duckdb is None:
        first = sql_tools[0]
        result.diagnostics.append(
            diagnostic(
                "SQL_DATA_MISSING",
                f"tool '{first.tool.name}' runs SQL, but the server declares no database",
                first.doc.span((*first.base, "backend")),
                "declare it under server: duckdb: {views: {NAME: {reader, setting, columns or sample}}}, "
                "or server: postgres: {dsn: {setting: NAME}, schema: schema.sql}",
            )
        )
        return result
    import duckdb

    with cleanup() as stack, cpu_watchdog(cpu_seconds, wall_seconds, stack.expire) as watch:
        try:
            build, problems = open_build_data(source, stack)
            result.diagnostics += problems
            if build is None:
                return result
            checked: list[SqlToolIR] = []
            check = check_statement if cache is None else cached_check(cache, source, build)
            passed = checked_statements(sql_tools, lowered, build, check, result.diagnostics)
            for tool_source, tool_ir, sql_ir in passed:
                checked.append(sql_ir)
                types = {param.name: param.duckdb_type for param in sql_ir.params}
                ranged, problems = with_type_ranges(tool_source, json.loads(tool_ir.input_schema_json), types)
                result.diagnostics += problems
                tool_ir = replace(tool_ir, input_schema_json=canonical_json(ranged))
                result.tools[tool_ir.name], problems = with_output(
                    tool_ir, derived_output(sql_ir), tool_source
                )
                result.diagnostics += problems
            data = source.server.server.duckdb
            assert data is not None
            result.data = SqlDataIR(
                database_setting=build.database_setting,
                writable=data.allow_writes,
                views=build.views,
                tools=tuple(checked),
                not_null=build.not_null,
                database_shape=build.database_shape,
            )
            result.files = build.files
        except duckdb.InterruptException:
            first = sql_tools[0]
            result.diagnostics.append(
                diagnostic(
                    "SQL_TIMEOUT",
                    f"checking the SQL tools against the declared data {watch.describe()} and was stopped",
                    first.doc.span(
                        ("server", "duckdb") if first.doc is source.server_doc else (*first.base, "backend")
                    ),
                    "use smaller samples; a schema file describes tables, it does not fill them",
                )
            )
    return result


def server_files(source: SpecSource, extra: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """Every file the build read: the spec's, then the SQL files and samples, each once."""
    seen = dict(source.files)
    for path, digest in extra:
        seen.setdefault(path, digest)
    return tuple(seen.items())
