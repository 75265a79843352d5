"""The build cache's layer for DuckDB statements: a statement's check (statements.py), reused
when nothing it could see changed.

A check sees its tool (the tool's YAML document, parsed), the statement and where it is
written, the tool's lowered input schema and row cap, and the build's DuckDB, whose content is
made from the server's document (its `duckdb:` data) and the samples or schema files it
names. The key holds all of these whole: the tool's and the server's documents as text, with
the files' sha256, so editing one tool's file checks that tool's statement again and no other.
DuckDB's version is in every key already (the cache's fingerprint).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from ...cache import Store, diagnostic_from_payload, diagnostic_payload
from ...diagnostics import Diagnostic
from ...ir import SqlColumnIR, SqlParamIR, SqlToolIR
from ...spec.load import SpecSource, ToolSource
from .catalog import BuildData
from .positions import SqlText
from .statements import check_statement

SQL_ENTRY = "duckdb-statement"


def cached_check(cache: Store, server: SpecSource, build: BuildData):  # type: ignore[no-untyped-def]
    """check_statement, through `cache`."""
    shape = {
        "server": [server.server_doc.file, server.server_doc.text],
        "spec_dir": str(build.spec_dir),
        "writable": build.writable,
        "database_setting": build.database_setting,
        "database_shape": build.database_shape,
        "not_null": list(build.not_null),
    }

    def check(
        build: BuildData, source: ToolSource, where: SqlText, input_schema: dict[str, Any], max_rows: int
    ) -> tuple[SqlToolIR | None, list[Diagnostic]]:
        key = {
            "shape": shape,
            "files": [list(item) for item in build.files],  # samples, schema, .sql files read so far
            "tool": [source.doc.file, source.doc.text, list(source.base)],
            "where": [where.text, where.file, where.kind, where.source_text],
            "span": [asdict(where.start), asdict(where.end) if where.end is not None else None],
            "input_schema": input_schema,
            "max_rows": max_rows,
        }
        kept = cache.get(SQL_ENTRY, key, _checked)
        if kept is not None:
            return kept
        sql_ir, problems = check_statement(build, source, where, input_schema, max_rows)
        cache.put(
            SQL_ENTRY,
            key,
            {
                "ir": None if sql_ir is None else asdict(sql_ir),
                "diagnostics": [diagnostic_payload(d) for d in problems],
            },
        )
        return sql_ir, problems

    return check


def _checked(entry: Any) -> tuple[SqlToolIR | None, list[Diagnostic]] | None:
    try:
        problems = [diagnostic_from_payload(d) for d in entry["diagnostics"]]
        ir = entry["ir"]
        if ir is None:
            return None, problems
        sql_ir = SqlToolIR(
            **{
                **ir,
                "params": tuple(SqlParamIR(**p) for p in ir["params"]),
                "columns": tuple(SqlColumnIR(**c) for c in ir["columns"]),
            }
        )
        return sql_ir, problems
    except (KeyError, TypeError, ValueError):  # not what check() writes: a miss
        return None
