"""Which Postgres statements only read, judged on the tree Postgres's own parser builds
(libpg_query through pglast), and which functions a statement calls by name.

A tool's statement reads unless its tool is destructive on a server that allows writes. Reading
is a SELECT (or VALUES, or a WITH of SELECTs) that writes nowhere inside: no data-modifying CTE,
no SELECT INTO, no row locks (FOR UPDATE/SHARE take locks a reader must not hold). Everything
else is refused by kind; with writes allowed, INSERT/UPDATE/DELETE/MERGE and CALL pass, and DDL,
COPY, SET, LISTEN/NOTIFY, DO and transaction control never do (the tool runs in the server's own
transaction).

Functions are named here with their place; check.py resolves them in the build database
(pg_proc), so a schema-qualified or overloaded name cannot slip by.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..positions import char_offset

_WRITES = {"InsertStmt": "INSERT", "UpdateStmt": "UPDATE", "DeleteStmt": "DELETE", "MergeStmt": "MERGE"}
_KINDS = {
    "CopyStmt": "COPY",
    "VariableSetStmt": "SET",
    "VariableShowStmt": "SHOW",
    "ListenStmt": "LISTEN",
    "UnlistenStmt": "UNLISTEN",
    "NotifyStmt": "NOTIFY",
    "DoStmt": "DO",
    "CallStmt": "CALL",
    "LockStmt": "LOCK",
    "TransactionStmt": "transaction control",
    "ExplainStmt": "EXPLAIN",
    "PrepareStmt": "PREPARE",
    "ExecuteStmt": "EXECUTE",
    "DeallocateStmt": "DEALLOCATE",
    "VacuumStmt": "VACUUM",
    "TruncateStmt": "TRUNCATE",
    "GrantStmt": "GRANT",
    "DiscardStmt": "DISCARD",
    "CheckPointStmt": "CHECKPOINT",
    "ClusterStmt": "CLUSTER",
    "ReindexStmt": "REINDEX",
    "LoadStmt": "LOAD",
    "RefreshMatViewStmt": "REFRESH MATERIALIZED VIEW",
}
_LOCKING = re.compile(r"\bFOR\s+(?:NO\s+KEY\s+)?(?:UPDATE|SHARE|KEY\s+SHARE)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Call:
    schema: str | None
    name: str
    offset: int  # character offset in the parsed (rewritten) text


@dataclass
class Reading:
    statements: int
    second_at: int | None  # where a second statement starts
    kind: str  # "read", "write" (DML), or the refused kind ("COPY", "DDL (CREATE TABLE)", ...)
    refusals: list[tuple[str, int | None]] = field(default_factory=list)  # (what, offset)
    calls: list[Call] = field(default_factory=list)
    relations: list[tuple[str | None, str]] = field(default_factory=list)  # RangeVars named


def read_statement(text: str) -> Reading:
    """Parse `text` (raises pglast's ParseError on a syntax error) and judge it."""
    from pglast import parser

    tree = json.loads(parser.parse_sql_json(text))
    statements = tree.get("stmts", [])
    second = None
    if len(statements) > 1:
        second = char_offset(text, statements[1].get("stmt_location", 0))
    if len(statements) != 1:
        return Reading(len(statements), second, "none")
    ((node_kind, body),) = statements[0]["stmt"].items()
    reading = Reading(1, None, _kind(node_kind, body))
    for kind, node in _walk(statements[0]["stmt"]):
        if kind in _WRITES and "relation" in node:
            relation = node["relation"]
            reading.relations.append((relation.get("schemaname"), relation.get("relname", "")))
        if kind in _WRITES and node is not body:
            at = _at(text, node.get("relation", {}).get("location"))
            if at is not None:  # the keyword before the table it writes
                found = text.upper().rfind(_WRITES[kind], 0, at)
                at = found if found >= 0 else at
            reading.refusals.append(
                (
                    f"a data-modifying {_WRITES[kind]} inside the statement (a WITH that writes)",
                    at,
                )
            )
        elif kind == "SelectStmt":
            if "intoClause" in node:
                reading.refusals.append(
                    (
                        "SELECT INTO creates a table",
                        _at(text, node["intoClause"].get("rel", {}).get("location")),
                    )
                )
            if "lockingClause" in node:
                found = _LOCKING.search(text)
                reading.refusals.append(("FOR UPDATE/SHARE locks rows", found.start() if found else None))
        elif kind == "FuncCall":
            names = [part["String"]["sval"] for part in node.get("funcname", []) if "String" in part]
            if names:
                schema = names[-2] if len(names) > 1 else None
                reading.calls.append(Call(schema, names[-1], _at(text, node.get("location")) or 0))
        elif kind == "RangeVar":
            reading.relations.append((node.get("schemaname"), node.get("relname", "")))
    return reading


def _kind(node_kind: str, body: dict[str, Any]) -> str:
    if node_kind == "SelectStmt":
        return "read"
    if node_kind in _WRITES:
        return "write"
    if node_kind == "CallStmt":
        return "call"
    if node_kind in _KINDS:
        return _KINDS[node_kind]
    words = re.sub(r"([a-z])([A-Z])", r"\1 \2", node_kind.removesuffix("Stmt")).upper()
    return f"DDL ({words})"


def _walk(node: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every (node kind, node) of the JSON tree, depth first."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if key[:1].isupper() and isinstance(value, dict):
                    yield key, value
                stack.append(value)
        elif isinstance(item, list):
            stack.extend(reversed(item))


def _at(text: str, location: int | None) -> int | None:
    """libpg_query places are bytes of UTF-8; places here are characters."""
    return None if location is None or location < 0 else char_offset(text, location)
