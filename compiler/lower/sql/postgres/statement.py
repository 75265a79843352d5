"""Check one SQL tool's statement against the Postgres build database and derive what it returns.

In order, each step only when the ones before passed: the statement parses (Postgres's own
parser, through pglast), is one statement, only reads (or writes where allowed), names only
declared parameters and uses every one, prepares in Postgres with no parameter types given (so
Postgres infers each, as it will when the server binds the values as text of unknown type), each
inferred type accepts the JSON the parameter declares, its columns have distinct names and types
with a JSON rendering, and it calls no function that writes or reaches outside. Nothing is
executed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from lynxc.runtime.backends.sql.types import UnsupportedType

from ....diagnostics import Diagnostic
from ....ir import PgParamIR, PgToolIR, SqlColumnIR, canonical_json
from ....rules import diagnostic
from ....spec.load import ToolSource
from ....spec.models import SqlBackend
from ....suggest import did_you_mean
from ..positions import SqlText
from ..statements import declared_parameter_problems
from .accept import accepts, declared_kind
from .columns import not_null, type_trees
from .depends import statement_depends
from .params import Rewrite, rewrite
from .readonly import read_statement

# Built-in functions refused by name (built-ins are pinned: pg_depend does not record them).
# Each writes, takes locks, reads the server's files or reaches another server.
_WRITING = frozenset({"nextval", "setval", "set_config", "pg_notify", "txid_current", "pg_current_xact_id",
                      "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile",
                      "pg_switch_wal", "pg_create_restore_point", "pg_logical_emit_message"})  # fmt: skip
_WRITING_PREFIXES = ("pg_advisory", "lo_")
_OUTSIDE = frozenset({"pg_read_file", "pg_read_binary_file", "pg_ls_dir", "pg_stat_file", "pg_ls_logdir",
                      "pg_ls_waldir", "pg_ls_tmpdir", "pg_ls_archive_statusdir", "lo_import",
                      "lo_export"})  # fmt: skip
_OUTSIDE_PREFIXES = ("dblink",)
# Functions that run SQL text they are given: a bound parameter would become code again.
_DYNAMIC = frozenset({"query_to_xml", "query_to_xmlschema", "query_to_xml_and_xmlschema", "cursor_to_xml"})
_FIRST_WORD = re.compile(r"\S")


@dataclass(frozen=True)
class Prepared:
    params: list[int]  # inferred type OID per $k
    columns: list[tuple[str, int, int, int, int]]  # name, type OID, typmod, table OID, attnum


class PrepareError(Exception):
    def __init__(self, sqlstate: str, message: str, hint: str | None, position: int | None):
        super().__init__(message)
        self.sqlstate, self.message, self.hint, self.position = sqlstate, message, hint, position


def prepare(connection: Any, text: str) -> Prepared:
    """Parse and describe `text` as the unnamed prepared statement; PrepareError on failure."""
    import psycopg
    from psycopg import pq

    pgconn = connection.pgconn
    result = pgconn.prepare(b"", text.encode("utf-8"))
    if result.status != pq.ExecStatus.COMMAND_OK:
        raise _prepare_error(result)
    described = pgconn.describe_prepared(b"")
    if described.status != pq.ExecStatus.COMMAND_OK:
        raise _prepare_error(described)
    if pgconn.transaction_status != pq.TransactionStatus.IDLE:  # pragma: no cover - autocommit
        raise psycopg.InterfaceError("the build connection left idle")
    return Prepared(
        [described.param_type(i) for i in range(described.nparams)],
        [
            (
                (described.fname(i) or b"").decode("utf-8"),
                described.ftype(i),
                described.fmod(i),
                described.ftable(i),
                described.ftablecol(i),
            )
            for i in range(described.nfields)
        ],
    )


def _prepare_error(result: Any) -> PrepareError:
    from psycopg import pq

    def field(name: pq.DiagnosticField) -> str | None:
        value = result.error_field(name)
        return value.decode("utf-8", errors="replace") if value is not None else None

    sqlstate = field(pq.DiagnosticField.SQLSTATE)
    if sqlstate in ("57014", "55P03"):  # the build's statement or lock timeout: not the statement's fault
        import psycopg

        error = psycopg.errors.QueryCanceled if sqlstate == "57014" else psycopg.errors.LockNotAvailable
        raise error(field(pq.DiagnosticField.MESSAGE_PRIMARY) or "canceled")
    position = field(pq.DiagnosticField.STATEMENT_POSITION)
    return PrepareError(
        field(pq.DiagnosticField.SQLSTATE) or "",
        field(pq.DiagnosticField.MESSAGE_PRIMARY) or (result.error_message or b"").decode(errors="replace"),
        field(pq.DiagnosticField.MESSAGE_HINT),
        int(position) - 1 if position else None,
    )


def check_statement(
    connection: Any,
    source: ToolSource,
    where: SqlText,
    input_schema: dict[str, Any],
    max_rows: int,
    writable: bool,
) -> tuple[PgToolIR | None, list[Diagnostic]]:
    from pglast.parser import ParseError

    tool = source.tool
    backend = tool.backend
    assert isinstance(backend, SqlBackend)
    body = _without_final_semicolon(where.text)
    declared = input_schema.get("properties", {})
    try:
        rewritten = rewrite(body)
        reading = read_statement(rewritten.text)
    except ParseError as err:
        return None, [_syntax_problem(connection, body, err, where)]
    if rewritten.positional:
        return None, [
            diagnostic(
                "SQL_PARAM_POSITIONAL",
                f"'{o.name}' is a positional parameter",
                where.span(o.start),
                "name it after a declared parameter: $" + next(iter(declared), "name"),
            )
            for o in rewritten.positional
        ]
    if reading.statements != 1:
        return None, [
            diagnostic(
                "SQL_STATEMENT_COUNT",
                f"a SQL tool runs one statement; this holds {reading.statements}",
                where.span(rewritten.original(reading.second_at) if reading.second_at is not None else None),
                "split it into tools, or join the queries into one statement (a CTE, a UNION)",
            )
        ]
    allowed = writable and bool(tool.annotations and tool.annotations.destructiveHint)
    found = _reading_problems(reading, rewritten, where, allowed)
    if found:
        return None, found
    found += declared_parameter_problems(rewritten.occurrences, declared, source, where)
    if found:
        return None, found
    try:
        prepared = prepare(connection, rewritten.text)
    except PrepareError as err:
        return None, [_prepare_problem(connection, err, rewritten, where)]
    found += _param_type_problems(connection, prepared, rewritten, declared, where)
    if found:
        return None, found
    param_types = [_format_type(connection, oid) for oid in prepared.params]
    read_only = reading.kind == "read"
    columns, problems = _columns(connection, prepared, rewritten.text, where)
    if problems:
        return None, problems
    wrapped = (
        f"SELECT * FROM (\n{rewritten.text}\n) AS lynxc_rows LIMIT {max_rows + 1}"
        if read_only
        else rewritten.text
    )
    if read_only:  # what the server will run prepares, with the columns the build derived
        try:
            again = prepare(connection, wrapped)
        except PrepareError as err:
            return None, [
                diagnostic(
                    "SQL_BIND", f"the statement does not run under the row cap: {err.message}", where.start
                )
            ]
        if [c[0] for c in again.columns] != [c.name for c in columns]:
            return None, [
                diagnostic(
                    "SQL_COLUMN_INVALID",
                    "the statement's columns change when it runs under the row cap",
                    where.span(_first_word(body)),
                )
            ]
    depends = statement_depends(
        connection,
        rewritten.text,
        param_types,
        [c[1] for c in prepared.columns] + prepared.params,
        reading.relations,
    )
    found += _function_problems(reading, depends.volatile, rewritten, where, allowed)
    if found:
        return None, found
    return (
        PgToolIR(
            tool=tool.name,
            statement=body,
            wrapped=wrapped,
            params=tuple(
                PgParamIR(name, param_types[index], _portable_oid(prepared.params[index]))
                for index, name in enumerate(rewritten.order)
            ),
            columns=tuple(columns),
            result=backend.result,
            max_rows=max_rows,
            read_only=read_only,
            source="" if backend.sql is not None else where.file,
            depends_json=canonical_json(depends.document()),
            fingerprint=depends.fingerprint(),
        ),
        [],
    )


# OIDs below this are PostgreSQL's own (built-in types, the same in every database); a type a
# schema creates gets the next free OID of the database it is created in.
_FIRST_NORMAL_OID = 16384


def _portable_oid(oid: int) -> int:
    """A built-in type's OID; 0 for a type a schema created, whose OID differs from one database
    to the next (the name says which type, and builds against two databases stay identical)."""
    return oid if oid < _FIRST_NORMAL_OID else 0


def _syntax_problem(connection: Any, body: str, err: Exception, where: SqlText) -> Diagnostic:
    """A syntax error placed by Postgres itself: its position counts characters of the text it
    parsed (pglast's counts neither bytes nor characters past a non-ASCII one)."""
    rewritten: Rewrite | None
    try:
        rewritten = rewrite(body)
    except Exception:  # the scanner failed (an unterminated string): Postgres reads it as written
        rewritten = None
    message, offset = str(err.args[0]), None
    try:
        prepare(connection, rewritten.text if rewritten is not None else body)
    except PrepareError as problem:
        message = problem.message
        if problem.position is not None:
            offset = rewritten.original(problem.position) if rewritten is not None else problem.position
    return diagnostic("SQL_SYNTAX", f"PostgreSQL cannot parse the statement: {message}", where.span(offset))


def _reading_problems(reading: Any, rewritten: Rewrite, where: SqlText, allowed: bool) -> list[Diagnostic]:
    found = []
    start = where.span(_first_word(rewritten.text))
    if reading.kind not in ("read", "write", "call"):
        found.append(
            diagnostic(
                "SQL_NOT_READ_ONLY",
                f"{reading.kind} is not a query: a SQL tool runs a SELECT (or, where writes are "
                "allowed, INSERT, UPDATE, DELETE, MERGE or CALL)",
                start,
                "SQL tools read; session settings come from the server's settings, schema changes "
                "from migrations",
            )
        )
    elif reading.kind != "read" and not allowed:
        found.append(
            diagnostic(
                "SQL_NOT_READ_ONLY",
                f"the statement writes ({rewritten.text[_first_word(rewritten.text) :].split()[0].upper()})",
                start,
                "SQL tools read; a tool that writes is annotated destructiveHint: true on a server "
                "with postgres: {allow_writes: true}",
            )
        )
    for what, offset in reading.refusals:
        if what.startswith("a data-modifying") and allowed:
            continue
        found.append(
            diagnostic(
                "SQL_NOT_READ_ONLY",
                what,
                where.span(rewritten.original(offset) if offset is not None else None),
                "SQL tools read: remove it"
                + (
                    ""
                    if allowed
                    else ", or annotate the tool destructiveHint: true on a server that allows writes"
                ),
            )
        )
    return found


def _function_problems(
    reading: Any, volatile: list[str], rewritten: Rewrite, where: SqlText, allowed: bool
) -> list[Diagnostic]:
    found = []
    for call in reading.calls:
        name = call.name.lower()
        if call.schema not in (None, "pg_catalog"):
            continue  # a user function: judged by its volatility below
        at = where.span(rewritten.original(call.offset))
        if name in _DYNAMIC:
            found.append(
                diagnostic(
                    "SQL_DYNAMIC",
                    f"{name}() runs SQL text made when the tool is called",
                    at,
                    "write the query itself; parameters are values and must stay values",
                )
            )
        elif name in _OUTSIDE or name.startswith(_OUTSIDE_PREFIXES):
            found.append(
                diagnostic(
                    "SQL_FUNCTION_REFUSED",
                    f"{name}() reaches outside the database's tables (the server's files, another server)",
                    at,
                    "SQL tools read the database's tables; remove the call",
                )
            )
        elif (name in _WRITING or name.startswith(_WRITING_PREFIXES)) and not allowed:
            found.append(
                diagnostic(
                    "SQL_NOT_READ_ONLY",
                    f"{name}() changes the database or the session (it is not read-only)",
                    at,
                    "SQL tools read; remove the call",
                )
            )
    for qualified in sorted(set(volatile)):
        if allowed:
            continue
        short = qualified.split(".")[-1]
        offset = next((c.offset for c in reading.calls if c.name == short), None)
        found.append(
            diagnostic(
                "SQL_NOT_READ_ONLY",
                f"{qualified}() is VOLATILE: PostgreSQL lets it write, so a read-only tool cannot call it",
                where.span(rewritten.original(offset) if offset is not None else None),
                f"if it does not write, mark it STABLE: ALTER FUNCTION {qualified} STABLE",
            )
        )
    return found


def _prepare_problem(connection: Any, err: PrepareError, rewritten: Rewrite, where: SqlText) -> Diagnostic:
    offset = rewritten.original(err.position) if err.position is not None else None
    if err.sqlstate in ("42P18", "42P08"):  # indeterminate or ambiguous parameter type
        number = re.search(r"\$(\d+)", err.message)
        name = (
            rewritten.order[int(number.group(1)) - 1]
            if number and int(number.group(1)) <= len(rewritten.order)
            else None
        )
        first = next((o.start for o in rewritten.occurrences if o.name == name), offset)
        return diagnostic(
            "SQL_PARAM_TYPE",
            f"PostgreSQL cannot tell the type of ${name or '?'} from where it stands: {err.message}",
            where.span(first),
            f"cast it in the statement, e.g. ${name or 'name'}::integer or ${name or 'name'}::text",
        )
    rule = "SQL_SYNTAX" if err.sqlstate.startswith("42601") else "SQL_BIND"
    hint = err.hint
    if hint is None and err.sqlstate in ("42P01", "42703"):
        hint = _catalog_hint(connection, err.sqlstate, err.message)
    return diagnostic(rule, err.message, where.span(offset), hint)


def _catalog_hint(connection: Any, sqlstate: str, message: str) -> str | None:
    quoted = re.search(r'"([^"]+)"', message)
    if quoted is None:
        return None
    name = quoted.group(1).split(".")[-1]
    if sqlstate == "42P01":
        query = (
            "SELECT DISTINCT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE relkind IN ('r','v','m','p','f') AND n.nspname NOT IN ('pg_catalog','information_schema')"
            " AND n.nspname NOT LIKE 'pg_toast%%'"
        )
    else:
        query = (
            "SELECT DISTINCT attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid"
            " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE a.attnum > 0 AND NOT a.attisdropped"
            " AND c.relkind IN ('r','v','m','p','f') AND n.nspname NOT IN ('pg_catalog','information_schema')"
        )
    names = [row[0] for row in connection.execute(query).fetchall()]
    return did_you_mean(name, names)


def _param_type_problems(
    connection: Any, prepared: Prepared, rewritten: Rewrite, declared: dict[str, Any], where: SqlText
) -> list[Diagnostic]:
    found = []
    for index, name in enumerate(rewritten.order):
        oid = prepared.params[index]
        first = next(o.start for o in rewritten.occurrences if o.name == name)
        kind = declared_kind(declared[name])
        if oid == 0 or not accepts(connection, kind, declared[name], oid):
            inferred = _format_type(connection, oid) if oid else "unknown"
            found.append(
                diagnostic(
                    "SQL_PARAM_TYPE",
                    f"parameter '{name}' is declared {kind}, but PostgreSQL infers {inferred} for ${name}",
                    where.span(first),
                    f"declare it as type: {_json_type_for(connection, oid)} (what {inferred} reads), "
                    f"or cast in the statement: ${name}::{_cast_for(kind)}",
                )
            )
    return found


def _json_type_for(connection: Any, oid: int) -> str:
    """The JSON type a parameter of Postgres type `oid` is best declared as."""
    for kind in ("integer", "number", "boolean", "string", "array", "object"):
        if oid and accepts(connection, kind, {"type": kind, "items": {}}, oid):
            return kind
    return "string"


def _cast_for(kind: str) -> str:
    return {"integer": "bigint", "number": "float8", "boolean": "boolean", "string": "text"}.get(kind, "text")


def _format_type(connection: Any, oid: int) -> str:
    row = connection.execute("SELECT format_type(%s, NULL)", [oid]).fetchone()
    return str(row[0]) if row else str(oid)


def _columns(
    connection: Any, prepared: Prepared, text: str, where: SqlText
) -> tuple[list[SqlColumnIR], list[Diagnostic]]:
    found: list[Diagnostic] = []
    at = where.span(_first_word(where.text))
    seen: set[str] = set()
    for index, (name, *_rest) in enumerate(prepared.columns):
        if not name or name in seen:
            found.append(
                diagnostic(
                    "SQL_COLUMN_INVALID",
                    f"result column {index + 1} is named '{name}'"
                    + (", like an earlier one" if name else ", which is empty"),
                    at,
                    "give each column its own name with AS: the names are the keys of each row",
                )
            )
        seen.add(name)
    if found:
        return [], found
    trees: list[dict[str, Any]] = []
    for name, oid, typmod, _table, _attnum in prepared.columns:
        try:
            (tree,) = type_trees(connection, [(oid, typmod)])
        except UnsupportedType:
            type_name = _format_type(connection, oid)
            found.append(
                diagnostic(
                    "SQL_TYPE_UNSUPPORTED",
                    f"result column '{name}' is {type_name}, which lynxc cannot render as JSON",
                    at,
                    f"cast {name} to a type that has one, e.g. {name}::text",
                )
            )
            continue
        trees.append(tree)
    if found:
        return [], found
    nulls = not_null(connection, text, [(c[3], c[4]) for c in prepared.columns])
    columns = [
        SqlColumnIR(name, canonical_json(tree), not nulls[i], _format_type_mod(connection, oid, typmod))
        for i, ((name, oid, typmod, _t, _a), tree) in enumerate(zip(prepared.columns, trees, strict=True))
    ]
    return columns, []


def _format_type_mod(connection: Any, oid: int, typmod: int) -> str:
    row = connection.execute("SELECT format_type(%s, %s)", [oid, typmod if typmod >= 0 else None]).fetchone()
    return str(row[0]) if row else str(oid)


def _first_word(text: str) -> int:
    match = _FIRST_WORD.search(text)
    return match.start() if match else 0


def _without_final_semicolon(text: str) -> str:
    stripped = text.rstrip()
    return stripped[:-1].rstrip() if stripped.endswith(";") else stripped
