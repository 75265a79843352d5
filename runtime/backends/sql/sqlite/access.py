"""What a SQLite statement of a SQL tool may do, decided by SQLite's own statement analysis.

SQLite calls the authorizer for every action a statement would take while it prepares the
statement, before anything runs: reading a column, calling a function, writing a table,
creating or dropping, ATTACH, PRAGMA, a transaction. The build and the server install the same
authorizer, so what the build accepted is exactly what serving allows, and `PRAGMA query_only`
plus a read-only open (`mode=ro`) stand behind it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field

_READS = frozenset(
    {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
)
_WRITES = frozenset({sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE})
# Action codes by name, for messages.
_ACTION_NAMES = {
    getattr(sqlite3, "SQLITE_" + name): name.replace("_", " ")
    for name in (
        "CREATE_INDEX",
        "CREATE_TABLE",
        "CREATE_TEMP_INDEX",
        "CREATE_TEMP_TABLE",
        "CREATE_TEMP_TRIGGER",
        "CREATE_TEMP_VIEW",
        "CREATE_TRIGGER",
        "CREATE_VIEW",
        "DELETE",
        "DROP_INDEX",
        "DROP_TABLE",
        "DROP_TEMP_INDEX",
        "DROP_TEMP_TABLE",
        "DROP_TEMP_TRIGGER",
        "DROP_TEMP_VIEW",
        "DROP_TRIGGER",
        "DROP_VIEW",
        "INSERT",
        "PRAGMA",
        "READ",
        "SELECT",
        "TRANSACTION",
        "UPDATE",
        "ATTACH",
        "DETACH",
        "ALTER_TABLE",
        "REINDEX",
        "ANALYZE",
        "CREATE_VTABLE",
        "DROP_VTABLE",
        "FUNCTION",
        "SAVEPOINT",
        "RECURSIVE",
    )
}
# Functions a statement may not call even when they exist: they reach outside the database.
REFUSED_FUNCTIONS = frozenset({"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"})


@dataclass
class Access:
    """The authorizer of one connection; `refused` collects what it refused since `reset`,
    `reads` the (table, column) pairs statements read (the build records them)."""

    allow_writes: bool = False
    refused: list[str] = field(default_factory=list)
    reads: set[tuple[str, str]] = field(default_factory=set)

    def reset(self) -> None:
        self.refused.clear()
        self.reads.clear()

    def __call__(
        self, action: int, arg1: str | None, arg2: str | None, db: str | None, source: str | None
    ) -> int:
        if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in REFUSED_FUNCTIONS:
            self.refused.append(f"calling {arg2}()")
            return sqlite3.SQLITE_DENY
        if action in _READS or (self.allow_writes and action in _WRITES and db == "main"):
            if action == sqlite3.SQLITE_READ and arg1 and arg2 is not None and db == "main":
                self.reads.add((arg1, arg2))
            return sqlite3.SQLITE_OK
        if action in _WRITES and arg1 in ("sqlite_master", "sqlite_temp_master"):
            self.refused.append("a change of the schema (CREATE, DROP or ALTER)")
            return sqlite3.SQLITE_DENY
        what = _ACTION_NAMES.get(action, f"action {action}").lower()
        target = " ".join(part for part in (arg1, arg2) if part)
        self.refused.append(f"{what} {target}".strip())
        return sqlite3.SQLITE_DENY


def install(connection: sqlite3.Connection, allow_writes: bool = False) -> Access:
    """Put the read-only (or write-allowing) authorizer on `connection`; return it."""
    access = Access(allow_writes)
    connection.set_authorizer(access)
    return access


Authorizer = Callable[[int, str | None, str | None, str | None, str | None], int]
