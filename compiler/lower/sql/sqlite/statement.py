"""Check one SQL tool's statement against the build's SQLite and derive what it returns.

In order, each step only when the ones before passed: parameters are named (`$name`, bound by
name), declared and used; the statement is one statement; SQLite prepares it (`EXPLAIN`, which
compiles without running: syntax, unknown tables and columns) under the read-only authorizer
(runtime/backends/sql/sqlite/access.py: a write, DDL, ATTACH, PRAGMA or transaction is refused
as SQLite itself analyses the statement); the result columns have distinct names. Each column's
declared type is what SQLite derives for the same select as a view (`PRAGMA table_xinfo` of a
temporary view: a table column's declared type, '' for an expression), typed by
sqlite/types.py; nullability comes from the compiled program (origins.py).
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from typing import Any

from lynxc.runtime.backends.sql.sqlite.access import install
from lynxc.runtime.backends.sql.sqlite.types import sqlite_json_schema, sqlite_tree

from ....diagnostics import Diagnostic
from ....ir import SqlColumnIR, SqlParamIR, SqlToolIR, canonical_json
from ....rules import diagnostic
from ....spec.load import ToolSource
from ....suggest import did_you_mean
from .. import statements
from ..positions import SqlText
from .build import BudgetSpent, SqliteBuild
from .errors import error_offset, missing_name
from .origins import not_null_columns
from .scan import scan, second_statement, without_final_semicolon

_VIEW = "lynxc_build_columns"
_REPEATED = re.compile(r"(.*):[0-9]+")
# A value of each parameter type, to prepare and name the columns (SQLite types values, and a
# NULL would not do where a statement needs a number, as in LIMIT $limit).
_SAMPLES: dict[str, Any] = {"integer": 1, "number": 1.5, "boolean": 1, "string": "a"}


def check_statement(
    build: SqliteBuild, source: ToolSource, where: SqlText, input_schema: dict[str, Any], max_rows: int
) -> tuple[SqlToolIR | None, list[Diagnostic]]:
    tool = source.tool
    text = without_final_semicolon(where.text)
    declared = dict(input_schema.get("properties", {}))
    found = scan(text)
    problems: list[Diagnostic] = []
    for parameter in found.parameters:
        written = where.text[parameter.start : parameter.end]
        if parameter.mark != "$":
            problems.append(
                diagnostic(
                    "SQL_PARAM_POSITIONAL",
                    f"'{written}' is not a $name parameter",
                    where.span(parameter.start),
                    "name it after a declared parameter: $" + next(iter(declared), "name"),
                )
            )
        elif parameter.name not in declared:
            problems.append(
                diagnostic(
                    "SQL_PARAM_UNDECLARED",
                    f"'{written}' is not a parameter of tool '{tool.name}'",
                    where.span(parameter.start),
                    did_you_mean(parameter.name, list(declared)) or "declare it under parameters",
                )
            )
    for name, schema in declared.items():
        if _param_type(schema) in ("array", "object"):
            problems.append(
                diagnostic(
                    "SQL_PARAM_TYPE",
                    f"parameter '{name}' is an {_param_type(schema)}: SQLite binds only numbers, text "
                    "and NULL",
                    source.doc.span((*source.base, "parameters", name), key=True),
                    "pass a JSON text as a string and read it with json_each($" + name + ")",
                )
            )
    used = {p.name for p in found.parameters if p.mark == "$"}
    for name in declared:
        if name not in used:
            problems.append(
                diagnostic(
                    "SQL_PARAM_UNUSED",
                    f"parameter '{name}' of tool '{tool.name}' is not used by its statement",
                    source.doc.span((*source.base, "parameters", name), key=True),
                    f"use it as ${name}, or remove it",
                )
            )
    if problems:
        return None, problems
    second = second_statement(text)
    if second is not None:
        return None, [
            diagnostic(
                "SQL_STATEMENT_COUNT",
                "a SQL tool runs one statement; this holds more",
                where.span(second),
                "split it into tools, or join the queries into one statement (a CTE, a UNION)",
            )
        ]
    destructive = tool.annotations is not None and tool.annotations.destructiveHint is True
    access = install(build.connection, allow_writes=build.writable and destructive)
    values = {name: _SAMPLES.get(_param_type(declared[name])) for name in used}
    try:
        try:
            build.connection.execute("EXPLAIN " + text, values).fetchall()
        except sqlite3.Error as err:
            if build.spent:
                raise BudgetSpent from None
            build.connection.set_authorizer(None)  # the hints read the schema
            return None, [_prepare_problem(build, err, access.refused, text, where)]
        reads = sorted(access.reads)
        writes = build.writable and destructive and _writes(build.connection, text, values)
    finally:
        build.connection.set_authorizer(None)
    not_null = not_null_columns(build.connection, text, values) if not writes else ()
    try:
        result = [] if writes else _result_columns(build.connection, text, found)
    except sqlite3.Error as err:
        if build.spent:
            raise BudgetSpent from None
        return None, [
            diagnostic(
                "SQL_BIND",
                f"SQLite cannot describe the statement's result columns: {err}",
                where.span(_first_token(where.text)),
                "a SQL tool's statement is one SELECT (or VALUES, or a CTE ending in one)",
            )
        ]
    columns, problems = _columns(result, not_null, where)
    if problems:
        return None, problems
    depends = _depends(build, reads)
    params = tuple(SqlParamIR(name, _param_type(declared[name])) for name in declared)
    return (
        SqlToolIR(
            tool=tool.name,
            statement=where.text,
            wrapped=text,
            params=params,
            columns=tuple(columns),
            result=tool.backend.result,  # type: ignore[union-attr]
            max_rows=max_rows,
            read_only=not writes,
            source="" if where.kind != "file" else where.file,
            depends_json=canonical_json(depends),
        ),
        [],
    )


def _prepare_problem(
    build: SqliteBuild, err: sqlite3.Error, refused: list[str], text: str, where: SqlText
) -> Diagnostic:
    message = str(err)
    if refused:
        return diagnostic(
            "SQL_NOT_READ_ONLY",
            f"the statement is not read-only: SQLite refused {refused[0]}",
            where.span(_first_token(text)),
            "a SQL tool reads; a write needs destructiveHint: true and allow_writes: true on the server",
        )
    if isinstance(err, sqlite3.ProgrammingError) and "one statement" in message:
        return diagnostic(
            "SQL_STATEMENT_COUNT",
            "a SQL tool runs one statement; this holds more",
            where.span(second_statement(text)),
            "split it into tools, or join the queries into one statement (a CTE, a UNION)",
        )
    missing = missing_name(message)
    hint = None
    if missing is not None and missing[0] == "table":
        hint = did_you_mean(missing[1].rsplit(".", 1)[-1], build.tables())
    elif missing is not None and missing[0] == "column":
        every = {name for table in build.tables() for name, _, _ in build.columns(table)}
        hint = did_you_mean(missing[1].rsplit(".", 1)[-1], sorted(every))
    rule = "SQL_SYNTAX" if "syntax error" in message or "incomplete input" in message else "SQL_BIND"
    return diagnostic(rule, f"SQLite: {message}", where.span(error_offset(message, text)), hint)


def _writes(connection: sqlite3.Connection, text: str, values: dict[str, Any]) -> bool:
    """Whether the statement writes (SQLite's own answer: the prepared statement is not read-only)."""
    program = connection.execute("EXPLAIN " + text, values).fetchall()
    return any(row[1] in ("OpenWrite", "Insert", "Delete") for row in program)


def _with_nulls(text: str, found: Any) -> str:
    """The statement with each `$name` as NULL (a view takes no parameters)."""
    for parameter in sorted(found.parameters, key=lambda p: p.start, reverse=True):
        text = text[: parameter.start] + "NULL" + text[parameter.end :]
    return text


def _result_columns(connection: sqlite3.Connection, text: str, found: Any) -> list[tuple[str, str]]:
    """Each result column's name and declared type as SQLite derives them for a view of the same
    select (never run: a statement may run long, or forever, on any data). A view takes no
    parameters: each `$name` stands as NULL there, which changes no column's declared type (an
    expression has none either way). A name the select repeats comes back as `name:1`."""
    connection.execute(f"CREATE TEMP VIEW {_VIEW} AS {_with_nulls(text, found)}")
    try:
        rows = connection.execute(f"SELECT name, type FROM pragma_table_xinfo('{_VIEW}')").fetchall()
    finally:
        connection.execute(f"DROP VIEW temp.{_VIEW}")
    return [(name, declared) for name, declared in rows]


def _columns(
    result: list[tuple[str, str]], not_null: tuple[bool, ...], where: SqlText
) -> tuple[list[SqlColumnIR], list[Diagnostic]]:
    columns, problems = [], []
    names = [name for name, _ in result]
    for index, (name, declared) in enumerate(result):
        repeated = _REPEATED.fullmatch(name)
        if repeated is not None and repeated.group(1) in names[:index]:
            problems.append(
                diagnostic(
                    "SQL_COLUMN_INVALID",
                    f"result column {index + 1} is named '{repeated.group(1)}', like an earlier one",
                    where.span(_first_token(where.text)),
                    "give each column its own name with AS: the names are the keys of each row",
                )
            )
            continue
        tree = sqlite_tree(declared)
        nullable = not (index < len(not_null) and not_null[index])
        columns.append(SqlColumnIR(name, canonical_json(tree), nullable, declared))
    return columns, problems


def _depends(build: SqliteBuild, reads: list[tuple[str, str]]) -> dict[str, dict[str, str]]:
    """The tables and columns the statement reads, each with its declared type and NOT NULL."""
    found: dict[str, dict[str, str]] = {}
    for table, column in reads:
        columns = {name: (declared, notnull) for name, declared, notnull in build.columns(table)}
        entry = found.setdefault(table, {})
        if column in columns:
            declared, notnull = columns[column]
            entry[column] = declared + (" NOT NULL" if notnull else "")
    return {table: dict(sorted(cols.items())) for table, cols in sorted(found.items())}


def fingerprint(depends: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(depends, sort_keys=True).encode()).hexdigest()


def _param_type(schema: dict[str, Any]) -> str:
    """The JSON type a parameter's values arrive as (sqlite3 binds int, float, str, None)."""
    kinds = schema.get("type")
    if isinstance(kinds, list):
        kinds = next((k for k in kinds if k != "null"), "string")
    if kinds is None and "anyOf" in schema:
        kinds = next(
            (o.get("type") for o in schema["anyOf"] if o.get("type") not in (None, "null")), "string"
        )
    return str(kinds or "string")


def derived_output(ir: SqlToolIR) -> dict[str, Any]:
    """The output schema the declared types give (DuckDB's shape, SQLite's column schemas)."""
    return statements.derived_output(ir, sqlite_json_schema)


def _first_token(text: str) -> int:
    return len(text) - len(text.lstrip())
