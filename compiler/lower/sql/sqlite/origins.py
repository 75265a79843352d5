"""Which result columns of a SQLite statement are provably never NULL, read from the program
SQLite compiles it to (`EXPLAIN`), never from guesses about the SQL text.

A result column is non-null only when every instruction of the program that touches its result
register is one of:
- `Column` reading a NOT NULL column of a table through a cursor that only ever opens that
  table (or an index of it) in the main database, and that no `NullRow` empties (the
  unmatched side of an outer join reads as NULL through NullRow);
- `Rowid` of such a table cursor (a rowid is never NULL);
- `Integer`, `Int64`, `Real`, `String8` or `String`: a literal.
Anything else that names the register, reads or writes, directly or through a register range
(`Null`, `Copy`, `Move`), leaves the column nullable: sorters, aggregates, subqueries, CASE, a
NULL that initialises the register for a subquery that may find no row. Sound by construction
(a random sweep checks it), and plain selects of NOT NULL columns, with or without WHERE and
inner joins, are proved.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from typing import Any

_LITERALS = frozenset({"Integer", "Int64", "Real", "String8", "String"})
_OPENERS_OF_TABLES = frozenset({"OpenRead", "ReopenIdx"})
_OTHER_OPENERS = frozenset(
    {"OpenWrite", "OpenEphemeral", "OpenAutoindex", "OpenPseudo", "SorterOpen", "OpenDup", "VOpen"}
)
_OPFLAG_P2ISREG = 0x10  # OpenRead: p2 names a register holding the root page
# Instructions that never write a register (they jump, compare, seek, open or only read): the
# registers they name stay out of the count. Affinity changes a value's type, never to NULL.
_NEVER_WRITE = frozenset(
    {
        "Init", "Goto", "Halt", "Transaction", "OpenRead", "ReopenIdx", "Once", "TableLock",
        "Noop", "Explain", "Trace", "CursorHint", "DeferredSeek", "Rewind", "Next", "Prev", "Last",
        "Close", "NullRow", "SeekGE", "SeekGT", "SeekLE", "SeekLT", "SeekRowid", "NotExists",
        "IdxGT", "IdxGE", "IdxLT", "IdxLE", "Eq", "Ne", "Lt", "Le", "Gt", "Ge", "ElseEq",
        "IsNull", "NotNull", "If", "IfNot", "Affinity", "RealAffinity", "Jump", "ResultRow",
        "SorterOpen", "SorterInsert", "SorterSort", "SorterNext", "OpenPseudo",
    }
)  # fmt: skip
# Where common instructions write (the operand naming the register); an instruction not
# listed here counts as touching every register its p1, p2 and p3 could name.
_WRITES_AT = {
    "Column": "p3", "Rowid": "p2", "Integer": "p2", "Int64": "p2", "Real": "p2", "String8": "p2",
    "String": "p2", "Variable": "p2", "Function": "p3", "SCopy": "p2", "IdxRowid": "p2",
    "MakeRecord": "p3", "SorterData": "p2",
}  # fmt: skip


def not_null_columns(
    connection: sqlite3.Connection, statement: str, values: dict[str, Any]
) -> tuple[bool, ...]:
    """For each result column of `statement` (already known to prepare), whether it is never NULL."""
    program = [
        dict(zip(("addr", "opcode", "p1", "p2", "p3", "p4", "p5"), row[:7], strict=True))
        for row in connection.execute("EXPLAIN " + statement, values)
    ]
    results = [op for op in program if op["opcode"] == "ResultRow"]
    if not results:
        return ()
    width = results[0]["p2"]
    if any(op["p2"] != width for op in results):
        return (False,) * width
    touches = _touches(program)
    proof = _Proof(_table_cursors(connection, program), _sorted(program, touches), touches)
    return tuple(all(proof.register(op["p1"] + index) for op in results) for index in range(width))


def _touches(program: list[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    """Every instruction that names each register (ResultRow itself left out)."""
    found: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for op in program:
        name = op["opcode"]
        if name in _NEVER_WRITE:
            continue
        named: set[int] = set()
        if name in _WRITES_AT:
            named.add(op[_WRITES_AT[name]])
        elif name == "Null":  # p2, and through p3 when p3 > p2
            named.update(range(op["p2"], max(op["p2"], op["p3"]) + 1))
        elif name == "Copy":  # p1..p1+p3 into p2..p2+p3
            named.update(range(op["p2"], op["p2"] + op["p3"] + 1))
        elif name == "Move":  # p1..p1+p3-1 into p2..p2+p3-1 (the sources become NULL)
            named.update(range(op["p2"], op["p2"] + op["p3"]))
            named.update(range(op["p1"], op["p1"] + op["p3"]))
        else:
            named.update(op[key] for key in ("p1", "p2", "p3") if isinstance(op[key], int))
        for register in named:
            found[register].append(op)
    return found


class _Proof:
    def __init__(
        self,
        cursors: dict[int, tuple[set[int], set[int] | None]],
        sorted_rows: dict[int, tuple[int, int]],
        touches: dict[int, list[dict[str, Any]]],
    ):
        self.cursors, self.sorted_rows, self.touches = cursors, sorted_rows, touches
        self.known: dict[int, bool] = {}
        self.pending: set[int] = set()

    def register(self, register: int) -> bool:
        """Whether every instruction naming `register` writes it a value that is never NULL."""
        if register not in self.known and not self.pending:
            # A proof that fails may have proved other registers on its own assumption: forget them.
            before = set(self.known)
            if not self._register(register):
                for other in set(self.known) - before - {register}:
                    del self.known[other]
        return self._register(register)

    def _register(self, register: int) -> bool:
        if register not in self.known:
            # While a register is being proved, a path back to it (a sorted row's field that is
            # the register itself) holds what its other writers wrote: assumed, provided one of
            # them is grounded (writes a value, or a proved register's) so it is never unwritten.
            self.known[register] = True
            self.pending.add(register)
            ops = self.touches.get(register) or []
            proved = all(self._writes_not_null(op, register) for op in ops)
            self.pending.discard(register)
            self.known[register] = proved and any(self._grounded(op) for op in ops)
        return self.known[register]

    def _grounded(self, op: dict[str, Any]) -> bool:
        if op["opcode"] == "Column" and op["p1"] in self.sorted_rows:
            first, _ = self.sorted_rows[op["p1"]]
            return first + op["p2"] not in self.pending
        return op["opcode"] in _LITERALS or op["opcode"] in ("Column", "Rowid")

    def _writes_not_null(self, op: dict[str, Any], register: int) -> bool:
        name = op["opcode"]
        if name not in _WRITES_AT or register != op[_WRITES_AT[name]]:
            return False
        if name in _LITERALS:
            return True
        if name == "Column" and op["p1"] in self.sorted_rows:
            # A row of a sorter (ORDER BY): field p2 of the one record every row was made from.
            first, count = self.sorted_rows[op["p1"]]
            return 0 <= op["p2"] < count and self.register(first + op["p2"])
        if name in ("Column", "Rowid"):  # (IdxRowid reads an index cursor: left out)
            table = self.cursors.get(op["p1"])
            if table is None:
                return False
            not_null, _ = table
            return name == "Rowid" or op["p2"] in not_null
        return False


def _sorted(
    program: list[dict[str, Any]], touches: dict[int, list[dict[str, Any]]]
) -> dict[int, tuple[int, int]]:
    """pseudo cursor -> (first register, count) of the record its rows come from, when the
    rows come through one sorter fed by one SorterInsert of one MakeRecord (ORDER BY)."""
    found: dict[int, tuple[int, int]] = {}
    openers = defaultdict(int)
    for op in program:
        if op["opcode"] in _OPENERS_OF_TABLES | _OTHER_OPENERS:
            openers[op["p1"]] += 1
    for pseudo in (op for op in program if op["opcode"] == "OpenPseudo"):
        cursor, content = pseudo["p1"], pseudo["p2"]
        datas = [op for op in program if op["opcode"] == "SorterData" and op["p3"] == cursor]
        if openers[cursor] != 1 or len(datas) != 1 or touches.get(content) != datas:
            continue
        sorter = datas[0]["p1"]
        inserts = [op for op in program if op["opcode"] == "SorterInsert" and op["p1"] == sorter]
        opened = [op for op in program if op["opcode"] == "SorterOpen" and op["p1"] == sorter]
        if len(inserts) != 1 or len(opened) != 1 or openers[sorter] != 1:
            continue
        makers = touches.get(inserts[0]["p2"], [])
        if len(makers) == 1 and makers[0]["opcode"] == "MakeRecord" and makers[0]["p3"] == inserts[0]["p2"]:
            found[cursor] = (makers[0]["p1"], makers[0]["p2"])
    return found


def _table_cursors(
    connection: sqlite3.Connection, program: list[dict[str, Any]]
) -> dict[int, tuple[set[int], set[int] | None]]:
    """cursor -> (the positions Column reads as NOT NULL through it, None): only cursors opened
    on one table or index of the main database, and never emptied by NullRow."""
    roots = _roots(connection)
    opened: dict[int, set[tuple[int, int]]] = defaultdict(set)
    spoiled: set[int] = set()
    for op in program:
        name, cursor = op["opcode"], op["p1"]
        if name in _OPENERS_OF_TABLES:
            if op["p3"] != 0 or (op["p5"] or 0) & _OPFLAG_P2ISREG:
                spoiled.add(cursor)
            opened[cursor].add((op["p2"], op["p3"]))
        elif name in _OTHER_OPENERS or name in ("NullRow", "IfNullRow"):
            spoiled.add(cursor if name != "IfNullRow" else op["p1"])
    cursors: dict[int, tuple[set[int], set[int] | None]] = {}
    for cursor, where in opened.items():
        if cursor in spoiled or len(where) != 1:
            continue
        root = next(iter(where))[0]
        positions = roots.get(root)
        if positions is not None:
            cursors[cursor] = (positions, None)
    return cursors


def _roots(connection: sqlite3.Connection) -> dict[int, set[int]]:
    """rootpage -> the positions a Column instruction reads that hold a NOT NULL value: a
    table's NOT NULL columns (tables with generated columns, or WITHOUT ROWID, are left out:
    their stored positions differ from the declared ones), an index's columns over them."""
    found: dict[int, set[int]] = {}
    tables: dict[str, tuple[int, list[bool]]] = {}
    rows = connection.execute("SELECT type, name, tbl_name, rootpage, sql FROM main.sqlite_schema").fetchall()
    for kind, name, _, root, sql in rows:
        if kind != "table" or not root or "WITHOUT" in (sql or "").upper().replace("\n", " "):
            continue
        info = connection.execute(
            'SELECT "notnull", hidden, pk, type FROM pragma_table_xinfo(?)', (name,)
        ).fetchall()
        if any(hidden for _, hidden, _, _ in info):
            continue
        ipk = [i for i, (_, _, pk, declared) in enumerate(info) if pk and declared.upper() == "INTEGER"]
        flags = [bool(notnull) for notnull, _, _, _ in info]
        if len(ipk) == 1 and sum(1 for _, _, pk, _ in info if pk) == 1:
            flags[ipk[0]] = False  # stored as NULL in the record: read through Rowid instead
        tables[name] = (root, flags)
        found[root] = {i for i, flag in enumerate(flags) if flag}
    for kind, name, table, root, _ in rows:
        if kind != "index" or not root or table not in tables:
            continue
        flags = tables[table][1]
        positions = set()
        for seqno, cid in connection.execute("SELECT seqno, cid FROM pragma_index_xinfo(?)", (name,)):
            if 0 <= cid < len(flags) and flags[cid]:
                positions.add(seqno)
        found[root] = positions
    return found
