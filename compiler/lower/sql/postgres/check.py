"""Check a Postgres server's SQL tools: open the build database (database.py), check each
statement there (statement.py), and give each tool its output schema.

The whole check is bounded in wall-clock time (Postgres works in its own process, so CPU time
here says nothing): each statement under the session's statement_timeout, the check as a whole
under limits.PG_CHECK_WALL_SECONDS, after which the rest is reported, never hung.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import replace

from ....diagnostics import Diagnostic
from ....ir import PgDataIR, PgToolIR, ToolIR, canonical_json
from ....limits import PG_CHECK_WALL_SECONDS, PG_STATEMENT_TIMEOUT_SECONDS
from ....rules import diagnostic
from ....spec.load import SpecSource, ToolSource
from ..outcome import SqlCheck
from ..output import with_output
from ..ranges import with_type_ranges
from ..statements import derived_output, statement_text
from .database import build_database, redact

# The range a JSON integer parameter publishes, by the Postgres type it binds as.
_RANGE_TYPES = {"smallint": "SMALLINT", "integer": "INTEGER", "bigint": "BIGINT"}


def check_postgres(
    source: SpecSource,
    sql_tools: list[ToolSource],
    lowered: dict[str, ToolIR],
    build_settings: Mapping[str, str],
    wall_seconds: float | None = None,
) -> SqlCheck:
    import psycopg

    wall_seconds = wall_seconds or PG_CHECK_WALL_SECONDS

    result = SqlCheck()
    data = source.server.server.postgres
    assert data is not None
    if data.dsn.setting not in source.server.server.settings:
        return result  # SQL_SETTING_UNKNOWN, reported by lowering: no database to check against
    started = time.monotonic()
    with build_database(source, build_settings, wall_seconds) as (build, problems):
        result.diagnostics += problems
        if build is None:
            return result
        checked: list[PgToolIR] = []
        for tool_source in sql_tools:
            tool_ir = lowered.get(tool_source.tool.name)
            if tool_ir is None:
                continue
            if time.monotonic() - started > wall_seconds:
                result.diagnostics.append(_timeout(tool_source, wall_seconds, "out of time"))
                break
            where, problems = statement_text(tool_source, build)  # type: ignore[arg-type]
            result.diagnostics += problems
            if where is None:
                continue
            caps = {cap.name: cap.value for cap in tool_ir.caps}
            from .statement import check_statement

            input_schema = json.loads(tool_ir.input_schema_json)
            try:
                sql_ir, problems = check_statement(
                    build.connection, tool_source, where, input_schema, caps["max_rows"], data.allow_writes
                )
            except (psycopg.errors.QueryCanceled, psycopg.errors.LockNotAvailable) as err:
                result.diagnostics.append(_timeout(tool_source, wall_seconds, str(err)))
                break
            except psycopg.OperationalError as err:  # the database went away mid-check
                result.diagnostics.append(
                    diagnostic(
                        "SQL_DATABASE_UNREACHABLE",
                        f"lost the build database while checking tool '{tool_source.tool.name}': "
                        + redact(" ".join(str(err).split())),
                        tool_source.doc.span((*tool_source.base, "backend")),
                    )
                )
                break
            result.diagnostics += problems
            if sql_ir is None:
                continue
            checked.append(sql_ir)
            types = {p.name: _range_type(p.type) for p in sql_ir.params}
            ranged, problems = with_type_ranges(tool_source, input_schema, types)
            result.diagnostics += problems
            tool_ir = replace(tool_ir, input_schema_json=canonical_json(ranged))
            derived = derived_output(sql_ir)  # type: ignore[arg-type]  # a PgToolIR has the same columns
            result.tools[tool_ir.name], problems = with_output(tool_ir, derived, tool_source)
            result.diagnostics += problems
        result.data = PgDataIR(data.dsn.setting, data.allow_writes, build.shape, tuple(checked))
        result.files = build.files
    return result


def _range_type(pg_type: str) -> str:
    element = pg_type.removesuffix("[]")
    return _RANGE_TYPES.get(element, element) + pg_type[len(element) :]


def _timeout(tool_source: ToolSource, wall_seconds: float, why: str) -> Diagnostic:
    return diagnostic(
        "SQL_TIMEOUT",
        f"checking tool '{tool_source.tool.name}' against PostgreSQL was stopped ({why}); the check "
        f"may take {min(wall_seconds, PG_STATEMENT_TIMEOUT_SECONDS):g} s per statement and "
        f"{wall_seconds:g} s in all",
        tool_source.doc.span((*tool_source.base, "backend")),
        "a statement that waits on a lock, or a schema that takes long to load: check the build database",
    )
