"""Check one SQL tool's statement against the build's DuckDB and derive what it returns.

In order, each step only when the ones before passed: the statement parses, is one statement,
only reads (or is a write the tool and server allow), names only declared parameters and uses
every one, binds against the data, binds with each parameter at its declared type, and returns
columns with distinct names and types lynxc renders as JSON. Nothing is executed: a read is
bound as a lazy relation, a write is prepared.

What runs when serving is the statement with each `$name` cast to its declared type, under a
`LIMIT` of one row more than `max_rows` (so DuckDB stops early and the tool knows it cut). The
casts make the result types the build sees the ones the server returns, whatever Python type a
value arrives as, and a value that does not fit (a malformed date) a DuckDB error naming it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from lynxc.runtime.backends.sql.connection import first_paragraph
from lynxc.runtime.backends.sql.types import UnsupportedType, json_schema, lossy_in_union, type_tree

from ...diagnostics import Diagnostic, Span
from ...ir import SqlColumnIR, SqlParamIR, SqlToolIR, ToolIR, canonical_json
from ...limits import MAX_SPEC_BYTES
from ...rules import diagnostic
from ...spec.load import ToolSource
from ...spec.models import SqlBackend
from ...suggest import did_you_mean
from .callable import build_catalog, reach, reach_problems, token_problems
from .catalog import BuildData, parse_offset, read_text_beside
from .nullability import not_null_columns
from .positions import SqlText, char_offset, error_offset, yaml_kind
from .ranges import unbounded_limits

# Table functions a SELECT may call that write (a checkpoint), or that run SQL text they are
# given, which would turn a bound parameter back into code.
_WRITING_FUNCTIONS = frozenset({"checkpoint", "force_checkpoint"})
_DYNAMIC_FUNCTIONS = frozenset({"query", "query_table", "json_execute_serialized_sql"})
_WORD = re.compile(r"\w+")
_NAME_TOKEN = re.compile(r'"?([A-Za-z_][A-Za-z0-9_]*)')
_PARAMETER = re.compile(r"\$([^\W\d]\w*|[0-9]+)")
# What a write returns when it has no RETURNING clause: DuckDB's count of changed rows.
_WRITE_COLUMNS = (("Count", "BIGINT"),)


@dataclass(frozen=True)
class Occurrence:
    name: str
    start: int  # character offsets of `$name` in the statement
    end: int


def statement_text(source: ToolSource, build: BuildData) -> tuple[SqlText | None, list[Diagnostic]]:
    """The statement of a SQL tool and where it is written (inline, or a .sql file beside the spec)."""
    backend = source.tool.backend
    assert isinstance(backend, SqlBackend)
    doc, base = source.doc, (*source.base, "backend")
    if (backend.sql is None) == (backend.sql_file is None):
        return None, [
            diagnostic(
                "SQL_SOURCE_MISSING",
                "a SQL tool gives its statement as `sql` (inline) or `sql_file` (a .sql file), "
                "one of the two",
                doc.span(base, key=True),
            )
        ]
    if backend.sql is not None:
        start = doc.span((*base, "sql"))
        after = [s for s in (*doc.value_spans.values(), *doc.key_spans.values()) if s > start]
        kind = yaml_kind(doc.text, start)
        return SqlText(backend.sql, start.file, start, doc.text, kind, min(after, default=None)), []
    span = doc.span((*base, "sql_file"))
    text, file_id, problem = read_text_beside(
        build.spec_dir, backend.sql_file or "", span, MAX_SPEC_BYTES, "sql_file"
    )
    if problem is not None:
        return None, [problem]
    assert text is not None and file_id is not None
    build.files.append(file_id)
    return SqlText(text, file_id[0], Span(file_id[0]), text, "file"), []


# An engine's statement check: (build, tool, its SQL, its input schema, max_rows) -> (the tool's
# SQL IR or None, problems).
StatementCheck = Callable[[Any, ToolSource, SqlText, dict[str, Any], int], tuple[Any, list[Diagnostic]]]


def checked_statements(
    sql_tools: list[ToolSource],
    lowered: Mapping[str, ToolIR],
    build: Any,
    check: StatementCheck,
    diagnostics: list[Diagnostic],
) -> Iterator[tuple[ToolSource, ToolIR, Any]]:
    """Each SQL tool whose statement `check` (the engine's) passed, with its lowered IR and what
    the check gave; the problems of every tool go to `diagnostics`. A tool that did not lower
    has its errors already and is left out."""
    for tool_source in sql_tools:
        tool_ir = lowered.get(tool_source.tool.name)
        if tool_ir is None:
            continue
        where, problems = statement_text(tool_source, build)
        diagnostics += problems
        if where is None:
            continue
        max_rows = next(cap.value for cap in tool_ir.caps if cap.name == "max_rows")
        sql_ir, problems = check(build, tool_source, where, json.loads(tool_ir.input_schema_json), max_rows)
        diagnostics += problems
        if sql_ir is not None:
            yield tool_source, tool_ir, sql_ir


def check_statement(
    build: BuildData,
    source: ToolSource,
    where: SqlText,
    input_schema: dict[str, Any],
    max_rows: int,
) -> tuple[SqlToolIR | None, list[Diagnostic]]:
    import duckdb

    connection = build.connection
    tool, doc = source.tool, source.doc
    backend = tool.backend
    assert isinstance(backend, SqlBackend)
    text = where.text
    occurrences = parameter_occurrences(text)
    declared = input_schema.get("properties", {})
    positional = [o for o in occurrences if o.name.isdigit()] + _question_marks(text)
    if positional:  # DuckDB's parser refuses them mixed with named ones, without a place
        return None, [
            diagnostic(
                "SQL_PARAM_POSITIONAL",
                f"'{text[o.start : o.end]}' is a positional parameter",
                where.span(o.start),
                "name it after a declared parameter: $" + (next(iter(declared), "name")),
            )
            for o in positional
        ]
    try:
        statements = connection.extract_statements(text)
    except duckdb.Error as err:
        return None, [_error("SQL_SYNTAX", err, where, parse_offset(connection, text))]
    if len(statements) != 1:
        second = _second_statement_offset(text) if statements else None
        return None, [
            diagnostic(
                "SQL_STATEMENT_COUNT",
                f"a SQL tool runs one statement; this holds {len(statements)}",
                where.span(second),
                "split it into tools, or join the queries into one statement (a CTE, a UNION)",
            )
        ]
    statement = statements[0]
    body = _without_final_semicolon(text)
    found: list[Diagnostic] = []

    read_only = statement.type == duckdb.StatementType.SELECT
    found += _write_problems(statement, text, tool, build, where)
    if found:
        return None, found
    tree = parse_tree(connection, text) if read_only else None
    reached = reach(tree) if tree is not None else None
    calls = (
        sorted({(name, at) for name, at, _ in reached.calls})
        if reached is not None
        else [(name, at) for name, at, _ in _function_tokens(text)]
    )
    for name, offset in calls:
        if name in _DYNAMIC_FUNCTIONS:
            found.append(
                diagnostic(
                    "SQL_DYNAMIC",
                    f"{name}() runs SQL text made when the tool is called",
                    where.span(offset),
                    "write the query itself; parameters are values and must stay values",
                )
            )
        elif name in _WRITING_FUNCTIONS and not (build.writable and _destructive(tool)):
            found.append(
                diagnostic(
                    "SQL_NOT_READ_ONLY",
                    f"{name}() writes the database",
                    where.span(offset),
                    "SQL tools read; remove the call",
                )
            )
    if found:
        return None, found
    catalog = build_catalog(connection)
    found += (
        reach_problems(reached, catalog, where)
        if reached is not None
        else token_problems(_function_tokens(text), catalog, where)
    )
    if found:
        return None, found
    used = {o.name for o in occurrences}
    found += declared_parameter_problems(occurrences, declared, source, where)
    types: dict[str, str] = {}
    for name, schema in declared.items():
        duckdb_type = parameter_type(schema)
        if duckdb_type is None:
            found.append(
                diagnostic(
                    "SQL_PARAM_TYPE",
                    f"parameter '{name}' has a type SQL tools cannot bind (strings, numbers, booleans "
                    "and arrays of them bind)",
                    doc.span((*source.base, "parameters", name), key=True),
                )
            )
        else:
            types[name] = duckdb_type
    if found:
        return None, found

    first_use = {o.name: o.start for o in reversed(occurrences)}
    if read_only:
        nulls = {name: None for name in used}
        try:
            connection.sql(body, params=nulls or None)
        except duckdb.InterruptException:
            raise
        except duckdb.Error as err:
            return None, [_bind_error(connection, err, where)]
        typed = cast_parameters(body, occurrences, types)
        try:
            relation = connection.sql(typed, params=nulls or None)
        except duckdb.InterruptException:
            raise
        except duckdb.Error as err:
            culprits = _culprits(connection, body, occurrences, types, nulls) or [(next(iter(used)), None)]
            return None, [
                diagnostic(
                    "SQL_PARAM_TYPE",
                    f"parameter '{name}' is declared as {_declared_kind(declared[name])} ({types[name]}), "
                    f"which DuckDB cannot use where ${name} stands: {_message(problem or err)}",
                    where.span(first_use.get(name)),
                    "declare the type the statement needs (format: date for a DATE), "
                    "or CAST in the statement",
                )
                for name, problem in culprits
            ]
        names, column_types = list(relation.columns), list(relation.types)
        not_null = not_null_columns(connection, body, len(names))
        warnings = _column_casts(connection, body, typed, types, where)
        warnings += unbounded_limits(tree or {}, declared, first_use, where)
    else:
        warnings = []
        typed = cast_parameters(body, occurrences, types)
        names = [name for name, _ in _WRITE_COLUMNS]
        column_types = [connection.type(type_text) for _, type_text in _WRITE_COLUMNS]
        not_null = (True,)
        try:
            connection.execute("PREPARE lynxc_write AS " + typed)
            connection.execute("DEALLOCATE lynxc_write")
        except duckdb.InterruptException:
            raise
        except duckdb.Error as err:
            return None, [_error("SQL_BIND", err, where, None)]

    columns, problems = _columns(names, column_types, not_null, where)
    if problems:
        return None, problems
    warnings += _lossy_columns(columns, where)
    wrapped = f"SELECT * FROM (\n{typed}\n) AS lynxc_rows LIMIT {max_rows + 1}" if read_only else typed
    if read_only:  # what the server will run binds, with the columns the build derived
        try:
            bound = connection.sql(wrapped, params={name: None for name in used} or None)
        except duckdb.InterruptException:
            raise
        except duckdb.Error as err:
            return None, [_error("SQL_BIND", err, where, None)]
        if list(bound.columns) != names:
            return None, [
                diagnostic(
                    "SQL_COLUMN_INVALID",
                    "the statement's columns change when it runs under the row cap: "
                    + ", ".join(bound.columns),
                    where.span(_first_token_offset(text)),
                )
            ]
    return (
        SqlToolIR(
            tool=tool.name,
            statement=body,
            wrapped=wrapped,
            params=tuple(SqlParamIR(name, types[name]) for name in declared),
            columns=tuple(columns),
            result=backend.result,
            max_rows=max_rows,
            read_only=read_only,
            source="" if backend.sql is not None else where.file,
        ),
        warnings,
    )


def declared_parameter_problems(
    occurrences: list[Occurrence], declared: dict[str, Any], source: ToolSource, where: SqlText
) -> list[Diagnostic]:
    """A `$name` no parameter declares (placed in the SQL), and a declared parameter the
    statement never uses (placed at its declaration)."""
    found = [
        diagnostic(
            "SQL_PARAM_UNDECLARED",
            f"${occurrence.name} is not a parameter of tool '{source.tool.name}'",
            where.span(occurrence.start),
            did_you_mean(occurrence.name, list(declared))
            or f"declare it under parameters: {occurrence.name}: ...",
        )
        for occurrence in occurrences
        if occurrence.name not in declared
    ]
    used = {o.name for o in occurrences}
    found += [
        diagnostic(
            "SQL_PARAM_UNUSED",
            f"parameter '{name}' is declared but the statement never uses ${name}",
            source.doc.span((*source.base, "parameters", name), key=True),
            did_you_mean(name, sorted(used - set(declared))) or "use it in the statement, or remove it",
        )
        for name in declared
        if name not in used
    ]
    return found


def parameter_occurrences(text: str) -> list[Occurrence]:
    """Every `$name` of the statement that DuckDB reads as a parameter: found with its own
    tokenizer, so a `$` in a string, a quoted name or a comment is not one."""
    import duckdb

    found = []
    for byte_offset, kind in duckdb.tokenize(text):
        if kind != duckdb.token_type.operator:
            continue
        start = char_offset(text, byte_offset)
        match = _PARAMETER.match(text, start)
        if match is not None:
            found.append(Occurrence(match.group(1), start, match.end()))
    return found


# A value of each parameter type, only to plan the statement (EXPLAIN binds, never runs).
_SAMPLE_VALUES = {
    "VARCHAR": "a",
    "BIGINT": 1,
    "DOUBLE": 1.5,
    "BOOLEAN": True,
    "DATE": "2000-01-01",
    "TIMESTAMPTZ": "2000-01-01 00:00:00+00",
    "TIME": "00:00:00",
    "UUID": "00000000-0000-0000-0000-000000000000",
}
_COLUMN_CAST = re.compile(r'CAST\(("?)([A-Za-z_][\w ]*)\1 AS ([A-Z][A-Z0-9_ (),]*?)\)')


def _column_casts(
    connection: Any, body: str, typed: str, types: dict[str, str], where: SqlText
) -> list[Diagnostic]:
    """Columns the declared parameter types make DuckDB cast inside a filter of the typed
    statement's plan (casts the statement writes itself are its author's choice). A cast column
    cannot be pushed into the scan (a Parquet file's row groups are all read: 11 times slower
    for a point lookup in bench/sql_speed.py). Best effort: a plan that cannot be made says
    nothing."""
    import duckdb

    values = {name: _sample_value(duckdb_type) for name, duckdb_type in types.items()}
    if any(value is None for value in values.values()):
        return []
    try:
        casts = _filter_casts(connection, typed, values)
    except duckdb.InterruptException:
        raise
    except duckdb.Error:
        return []
    found = []
    for column, target in sorted(casts):
        written = rf"(CAST\s*\(\s*\"?{re.escape(column)}\"?\s+AS|(?<![\w$])\"?{re.escape(column)}\"?\s*::)"
        if re.search(written, body, re.IGNORECASE):
            continue
        at = re.search(rf"(?<![\w$]){re.escape(column)}(?!\w)", body)
        found.append(
            diagnostic(
                "SQL_PARAM_CASTS_COLUMN",
                f"a parameter's declared type makes DuckDB cast column '{column}' to {target} in a "
                "filter, so it reads all the data instead of skipping by the column's statistics",
                where.span(at.start() if at else None),
                "declare the parameter with the column's own type (integer for an integer column, "
                "format: date for a DATE)",
            )
        )
    return found


def _sample_value(duckdb_type: str) -> Any:
    if duckdb_type.endswith("[]"):
        child = _sample_value(duckdb_type[:-2])
        return None if child is None else [child]
    return _SAMPLE_VALUES.get(duckdb_type)


def _filter_casts(connection: Any, statement: str, values: dict[str, Any]) -> set[tuple[str, str]]:
    import json

    plan = connection.execute("EXPLAIN (FORMAT JSON) " + statement, values or None).fetchall()
    found: set[tuple[str, str]] = set()
    for _, text in plan:
        for node in _plan_nodes(json.loads(text)):
            filters = node.get("extra_info", {}).get("Filters") if isinstance(node, dict) else None
            for piece in filters if isinstance(filters, list) else [filters] if filters else []:
                found |= {(m.group(2), m.group(3)) for m in _COLUMN_CAST.finditer(str(piece))}
    return found


def _plan_nodes(plan: Any) -> list[Any]:
    nodes, stack = [], list(plan) if isinstance(plan, list) else [plan]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            nodes.append(node)
            stack.extend(node.get("children", []))
    return nodes


def _write_problems(
    statement: Any, text: str, tool: Any, build: BuildData, where: SqlText
) -> list[Diagnostic]:
    """Why a statement that is not a SELECT may not run: only INSERT, UPDATE and DELETE write,
    only in a tool annotated destructive (and not read-only) of a server that allows writes."""
    import duckdb

    kind = statement.type
    at = where.span(_first_token_offset(text))
    # Named as written: DuckDB files INSTALL under LOAD, and USE and RESET under SET.
    words = _leading_keywords(text)
    if kind == duckdb.StatementType.SELECT:
        if words[:1] != ["PRAGMA"]:  # DuckDB runs a PRAGMA as a SELECT of a pragma_ function
            return []
        return [
            diagnostic(
                "SQL_FUNCTION_REFUSED",
                "the statement is a PRAGMA, which reveals the server (its settings, paths, catalog or "
                "version) or changes it",
                at,
                "a SQL tool runs one SELECT over the declared data",
            )
        ]
    if kind not in (duckdb.StatementType.INSERT, duckdb.StatementType.UPDATE, duckdb.StatementType.DELETE):
        problem = (
            f"the statement is {' '.join(words)}: SQL tools read, and only INSERT, UPDATE or DELETE may write"
        )
        return [diagnostic("SQL_NOT_READ_ONLY", problem, at, "a SQL tool runs one SELECT")]
    if not (build.writable and _destructive(tool)):
        return [
            diagnostic(
                "SQL_NOT_READ_ONLY",
                f"the statement is {kind.name}, not a read-only SELECT"
                + ("" if _destructive(tool) else " (the tool is not annotated destructiveHint: true)"),
                at,
                "a write needs `duckdb: {allow_writes: true}` on the server and `destructiveHint: true` "
                "on the tool",
            )
        ]
    if tool.annotations is not None and tool.annotations.readOnlyHint is True:
        return [
            diagnostic(
                "SQL_NOT_READ_ONLY", f"the tool is annotated readOnlyHint: true but runs {kind.name}", at
            )
        ]
    returning = [offset for word, offset in _keywords(text) if word == "RETURNING"]
    if returning:
        return [
            diagnostic(
                "SQL_NOT_READ_ONLY",
                "RETURNING is not supported: a write returns the count of rows it changed",
                where.span(returning[0]),
                "read the changed rows with a separate SELECT tool",
            )
        ]
    return []


def _leading_keywords(text: str) -> list[str]:
    """The keywords a statement starts with, up to the first name or value ('CREATE TABLE',
    'INSTALL', 'UPDATE EXTENSIONS'), upper-case."""
    import duckdb

    found: list[str] = []
    for byte_offset, kind in duckdb.tokenize(text):
        start = char_offset(text, byte_offset)
        match = _WORD.match(text, start)
        if kind != duckdb.token_type.keyword or match is None or len(found) == 2:
            break
        found.append(match.group(0).upper())
    return found or ["not a query"]


def _keywords(text: str) -> list[tuple[str, int]]:
    """(upper-case word, offset) of each keyword DuckDB's tokenizer finds (never in a string,
    a quoted name or a comment)."""
    import duckdb

    found = []
    for byte_offset, kind in duckdb.tokenize(text):
        if kind == duckdb.token_type.keyword:
            start = char_offset(text, byte_offset)
            match = _WORD.match(text, start)
            if match is not None:
                found.append((match.group(0).upper(), start))
    return found


def parse_tree(connection: Any, text: str) -> dict[str, Any] | None:
    """DuckDB's parse tree of a SELECT (json_serialize_sql), or None when it gives none."""
    import json

    import duckdb

    try:
        tree = json.loads(connection.execute("SELECT json_serialize_sql(?)", [text]).fetchone()[0])
    except duckdb.InterruptException:
        raise
    except (duckdb.Error, ValueError):
        return None
    return None if not isinstance(tree, dict) or tree.get("error") else tree


def _function_tokens(text: str) -> list[tuple[str, int, bool]]:
    """(lower-case name, offset, whether a bracket follows) of every name token, quoted or
    not: what a write may call, read conservatively (a column named like a function counts)."""
    import duckdb

    found = []
    for byte_offset, kind in duckdb.tokenize(text):
        if kind in (duckdb.token_type.identifier, duckdb.token_type.keyword):
            start = char_offset(text, byte_offset)
            match = _NAME_TOKEN.match(text, start)
            if match is not None:
                bracketed = text[match.end() :].lstrip().startswith("(")
                found.append((match.group(1).lower(), start, bracketed))
    return found


def _destructive(tool: Any) -> bool:
    return tool.annotations is not None and tool.annotations.destructiveHint is True


def _question_marks(text: str) -> list[Occurrence]:
    import duckdb

    found = []
    for byte_offset, kind in duckdb.tokenize(text):
        start = char_offset(text, byte_offset)
        if kind == duckdb.token_type.operator and text.startswith("?", start):
            found.append(Occurrence("?", start, start + 1))
    return found


def cast_parameters(text: str, occurrences: list[Occurrence], types: dict[str, str]) -> str:
    """The statement with each `$name` as `CAST($name AS <declared type>)`."""
    out = text
    for occurrence in sorted(occurrences, key=lambda o: o.start, reverse=True):
        if occurrence.name in types:
            cast = f"CAST(${occurrence.name} AS {types[occurrence.name]})"
            out = out[: occurrence.start] + cast + out[occurrence.end :]
    return out


def parameter_type(schema: dict[str, Any]) -> str | None:
    """The DuckDB type a declared parameter's values bind as; None for what SQL cannot take."""
    schema = _without_null(schema)
    kind = schema.get("type")
    if kind is None and "enum" in schema:
        values = [v for v in schema["enum"] if v is not None]
        if values and all(isinstance(v, str) for v in values):
            kind = "string"
        elif values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            kind = "integer"
    if kind == "string":
        return {"date": "DATE", "date-time": "TIMESTAMPTZ", "time": "TIME", "uuid": "UUID"}.get(
            schema.get("format", ""), "VARCHAR"
        )
    if kind in ("integer", "number", "boolean"):
        return {"integer": "BIGINT", "number": "DOUBLE", "boolean": "BOOLEAN"}[kind]
    if kind == "array" and isinstance(schema.get("items"), dict):
        child = parameter_type(schema["items"])
        return f"{child}[]" if child is not None and not child.endswith("[]") else None
    return None


def derived_output(
    ir: SqlToolIR, column_schema: Callable[[dict[str, Any], bool], dict[str, Any]] = json_schema
) -> dict[str, Any]:
    """The output schema the result types give: the row object, or {rows, row_count, truncated};
    `column_schema` gives a column's schema from its type tree (SQLite has its own)."""
    import json

    row = {
        "type": "object",
        "additionalProperties": False,
        "required": [c.name for c in ir.columns],
        "properties": {c.name: column_schema(json.loads(c.type_json), c.nullable) for c in ir.columns},
    }
    if ir.result == "one":
        return row
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["rows", "row_count", "truncated"],
        "properties": {
            "rows": {
                "type": "array",
                "description": f"The result rows in the statement's order, at most {ir.max_rows}.",
                "maxItems": ir.max_rows,
                "items": row,
            },
            "row_count": {"type": "integer", "minimum": 0, "description": "How many rows are in rows."},
            "truncated": {
                "type": "boolean",
                "description": f"True when the statement had more than {ir.max_rows} rows: the rest "
                "were not returned.",
            },
        },
    }


def _columns(
    names: list[str], column_types: list[Any], not_null: tuple[bool, ...], where: SqlText
) -> tuple[list[SqlColumnIR], list[Diagnostic]]:
    columns, found, seen = [], [], set()
    for index, (name, duckdb_type) in enumerate(zip(names, column_types, strict=True)):
        if not name or name in seen:
            found.append(
                diagnostic(
                    "SQL_COLUMN_INVALID",
                    f"result column {index + 1} is named '{name}'"
                    + (", like an earlier one" if name else ", which is empty"),
                    where.span(_first_token_offset(where.text)),
                    "give each column its own name with AS: the names are the keys of each row",
                )
            )
            continue
        seen.add(name)
        tree, unsupported = _tree(duckdb_type)
        if tree is None:
            found.append(
                diagnostic(
                    "SQL_TYPE_UNSUPPORTED",
                    f"result column '{name}' is {unsupported}, which lynxc cannot render as JSON",
                    where.span(_first_token_offset(where.text)),
                    f"CAST {name} to a type such as VARCHAR",
                )
            )
            continue
        nullable = not (index < len(not_null) and not_null[index])
        columns.append(SqlColumnIR(name, canonical_json(tree), nullable))
    return columns, found


def _lossy_columns(columns: list[SqlColumnIR], where: SqlText) -> list[Diagnostic]:
    """A warning for each column holding a value DuckDB's Python client hands over with a loss
    (a date, timestamp or interval inside a UNION: the server cannot fetch it as text)."""
    import json

    found = []
    for column in columns:
        lossy = lossy_in_union(json.loads(column.type_json))
        if lossy is not None:
            found.append(
                diagnostic(
                    "SQL_TYPE_LOSSY",
                    f"result column '{column.name}' holds {lossy} inside a UNION, which arrives through "
                    "DuckDB's Python client with a loss (infinity as the largest date, an interval's "
                    "months as 30 days, nanoseconds cut)",
                    where.span(_first_token_offset(where.text)),
                    "CAST that member to VARCHAR in the UNION, or return it as a column of its own",
                )
            )
    return found


def _tree(duckdb_type: Any) -> tuple[dict[str, Any] | None, str]:
    """The type tree of a result column, or None and what its type is."""
    try:
        return type_tree(duckdb_type), ""
    except UnsupportedType as err:
        return None, err.sql_type
    except RecursionError:  # nested deeper than Python's stack (a hostile sample)
        return None, "a type nested too deeply"


def _culprits(
    connection: Any, body: str, occurrences: list[Occurrence], types: dict[str, str], nulls: dict[str, None]
) -> list[tuple[str, BaseException | None]]:
    """Each parameter whose declared type alone keeps the statement from binding, and why."""
    import duckdb

    found: list[tuple[str, BaseException | None]] = []
    for name in dict.fromkeys(o.name for o in occurrences):
        if name not in types:
            continue
        try:
            connection.sql(cast_parameters(body, occurrences, {name: types[name]}), params=nulls or None)
        except duckdb.InterruptException:
            raise
        except duckdb.Error as err:
            found.append((name, err))
    return found


def _declared_kind(schema: dict[str, Any]) -> str:
    schema = _without_null(schema)
    kind = schema.get("type", "enum")
    return f"{kind} ({schema['format']})" if "format" in schema else str(kind)


def _without_null(schema: dict[str, Any]) -> dict[str, Any]:
    """A nullable parameter is lowered to anyOf [X, null]: its values bind as X (or NULL)."""
    options = schema.get("anyOf")
    if isinstance(options, list):
        rest = [o for o in options if o != {"type": "null"}]
        if len(rest) == 1 and isinstance(rest[0], dict):
            return {**rest[0], **{k: v for k, v in schema.items() if k != "anyOf"}}
    return schema


def _bind_error(connection: Any, err: BaseException, where: SqlText) -> Diagnostic:
    """A statement that does not bind, at the place DuckDB names; a table it does not know
    gets a did-you-mean among the data's own tables and views (never DuckDB's system ones)."""
    message = _message(err)
    hint = None
    unknown = re.match(r"Catalog Error: Table with name (\S+) does not exist!", message)
    if unknown is not None:
        message = message.split("!", 1)[0] + "!"
        rows = connection.execute(
            "SELECT table_name FROM duckdb_tables() "
            "UNION SELECT view_name FROM duckdb_views() WHERE NOT internal"
        ).fetchall()
        names = sorted(name for (name,) in rows)
        hint = did_you_mean(unknown.group(1), names) or (
            "the data holds: " + ", ".join(names) if names else None
        )
    return diagnostic("SQL_BIND", message, where.span(error_offset(str(err), where.text)), hint)


def _error(rule: str, err: BaseException, where: SqlText, offset: int | None) -> Diagnostic:
    return diagnostic(rule, _message(err), where.span(offset))


def _message(err: BaseException) -> str:
    return first_paragraph(err)


def _without_final_semicolon(text: str) -> str:
    """The statement without the `;` (and anything after it: spaces, a comment) that may end
    it, so it can stand inside the row cap's subquery."""
    import duckdb

    semicolons = [
        start
        for byte_offset, kind in duckdb.tokenize(text)
        if kind == duckdb.token_type.operator
        and text.startswith(";", start := char_offset(text, byte_offset))
    ]
    end = semicolons[-1] if semicolons else len(text)
    return text[:end].rstrip()


def _first_token_offset(text: str) -> int:
    return len(text) - len(text.lstrip())


def _second_statement_offset(text: str) -> int | None:
    """Just after the first `;` that ends a statement, where the second begins."""
    import duckdb

    for byte_offset, kind in duckdb.tokenize(text):
        start = char_offset(text, byte_offset)
        if kind == duckdb.token_type.operator and text.startswith(";", start):
            rest = text[start + 1 :]
            return start + 1 + (len(rest) - len(rest.lstrip()))
    return None
