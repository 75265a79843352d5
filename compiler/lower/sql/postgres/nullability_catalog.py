"""What the Postgres nullability prover asks the build database: a relation's columns and which of
them are NOT NULL for sure, and whether a function, operator or cast target name is the built-in one.

Every answer is cached for one statement. Names are resolved by Postgres itself (`to_regclass`,
`to_regtype`) on the connection the statement was prepared on, so the search path, temporary
tables and quoting are Postgres's, not a guess of this module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Text types, for the functions whose other overloads may return NULL (lower/upper of a range).
TEXT_TYPES = frozenset({25, 1043, 1042, 19})  # text, varchar, bpchar, name
# Relations whose NOT NULL constraints hold for every row: tables and partitioned tables. A view's
# or a materialized view's columns carry none; a foreign table's are not enforced by Postgres.
_TRUSTED_KINDS = frozenset({"r", "p"})

# A relation and its columns in one round trip. A NOT NULL constraint added NOT VALID (PostgreSQL
# 18) sets attnotnull while old rows may hold NULL; an inheritance child or partition is read with
# its parent, and a foreign partition's constraints are not enforced at all: such columns are open.
_RELATION = """
WITH RECURSIVE rel AS (
    SELECT c.oid, c.relkind FROM pg_class c WHERE c.oid = to_regclass(%(name)s)
), tree(relid) AS (
    SELECT oid FROM rel
    UNION
    SELECT i.inhrelid FROM pg_inherits i JOIN tree ON i.inhparent = tree.relid
), open AS (
    SELECT a.attname
    FROM pg_constraint k
    JOIN tree ON k.conrelid = tree.relid
    JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = ANY (k.conkey)
    WHERE k.contype = 'n' AND NOT k.convalidated
)
SELECT rel.oid, rel.relkind,
    EXISTS (SELECT 1 FROM tree JOIN pg_class f ON f.oid = tree.relid WHERE f.relkind = 'f'),
    a.attname, a.attnum, a.attnotnull AND a.attname NOT IN (SELECT attname FROM open), a.atttypid
FROM rel
LEFT JOIN pg_attribute a ON a.attrelid = rel.oid AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum
"""
# Per function name: whether one outside pg_catalog exists (a user's function may be the one a
# call resolves to), and whether every one is an aggregate.
_FUNCTION = """
SELECT bool_or(pronamespace <> 'pg_catalog'::regnamespace), bool_and(prokind = 'a')
FROM pg_proc WHERE proname = %(name)s
"""


@dataclass(frozen=True)
class TableColumn:
    name: str
    attnum: int
    not_null: bool
    type: int  # pg_type oid


@dataclass(frozen=True)
class Relation:
    oid: int
    kind: str  # pg_class.relkind
    columns: tuple[TableColumn, ...]


@dataclass
class Catalog:
    connection: Any  # a sync psycopg Connection
    _relations: dict[str, Relation | None] = field(default_factory=dict)
    _functions: dict[str, tuple[bool, bool]] = field(default_factory=dict)  # (built-in, aggregate)
    _user_operators: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    _reachable: dict[tuple[int, int], bool] = field(default_factory=dict)
    _types: dict[str, int | None] = field(default_factory=dict)

    def _rows(self, query: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        return self.connection.execute(query, params).fetchall()

    def relation(self, names: list[str]) -> Relation | None:
        """The relation `schema.name` (or `name` on the search path), or None when there is none."""
        text = ".".join('"' + name.replace('"', '""') + '"' for name in names)
        if text in self._relations:
            return self._relations[text]
        found = self._rows(_RELATION, {"name": text})
        relation = None
        if found:
            oid, kind, foreign = int(found[0][0]), str(found[0][1]), bool(found[0][2])
            trusted = kind in _TRUSTED_KINDS and not foreign
            columns = tuple(
                # A virtual generated column is computed at read time: only its own validated
                # NOT NULL constraint (checked on every write) makes it non-null.
                TableColumn(str(name), int(attnum), bool(not_null) and trusted, int(typid))
                for _, _, _, name, attnum, not_null, typid in found
                if name is not None
            )
            relation = Relation(oid, kind, columns)
        self._relations[text] = relation
        return relation

    def view_definition(self, oid: int) -> str | None:
        rows = self._rows("SELECT pg_catalog.pg_get_viewdef(%(oid)s::oid)", {"oid": oid})
        return str(rows[0][0]) if rows and rows[0][0] else None

    def _function(self, name: str) -> tuple[bool, bool]:
        if name not in self._functions:
            rows = self._rows(_FUNCTION, {"name": name})
            shadowed, aggregate = rows[0] if rows else (None, None)
            self._functions[name] = (not shadowed, bool(aggregate))
        return self._functions[name]

    def builtin_function(self, name: str) -> bool:
        """Whether every function called `name` is a built-in one."""
        return self._function(name)[0]

    def builtin_operator(self, name: str, left: int | None, right: int | None) -> bool:
        """Whether `left name right` (operand types when known; `left` None for a prefix operator
        and for an unknown type alike) resolves to a built-in operator: no operator of that name
        outside pg_catalog (an extension's `||` or `=` on its own type, say) accepts the operands."""
        if name not in self._user_operators:
            rows = self._rows(
                "SELECT oprleft, oprright FROM pg_operator WHERE oprname = %(name)s "
                "AND oprnamespace <> 'pg_catalog'::regnamespace",
                {"name": name},
            )
            self._user_operators[name] = [(int(a), int(b)) for a, b in rows]
        for user_left, user_right in self._user_operators[name]:
            if (left == 0) != (user_left == 0):
                continue  # a prefix operator for a binary expression, or the other way round
            excluded = (left is not None and not self._coercible(left, user_left)) or (
                right is not None and not self._coercible(right, user_right)
            )
            if not excluded:
                return False
        return True

    def _coercible(self, source: int, target: int) -> bool:
        """Whether a value of type `source` may be taken as `target` when Postgres picks an
        operator: the same type, a pseudo-type or domain target, a domain or composite source (its
        base type and record coercions are not looked at), or an implicit cast. Errs towards yes."""
        if source == target:
            return True
        key = (source, target)
        if key not in self._reachable:
            rows = self._rows(
                "SELECT (SELECT typtype FROM pg_type WHERE oid = %(target)s) IN ('p', 'd')"
                " OR (SELECT typtype FROM pg_type WHERE oid = %(source)s) NOT IN ('b', 'e', 'r', 'm')"
                " OR EXISTS (SELECT 1 FROM pg_cast WHERE castsource = %(source)s"
                "   AND casttarget = %(target)s AND castcontext = 'i')",
                {"source": source, "target": target},
            )
            self._reachable[key] = bool(rows[0][0]) if rows else True
        return self._reachable[key]

    def aggregate(self, name: str) -> bool:
        """Whether every function called `name` is an aggregate (so a call of it is one)."""
        return self._function(name)[1]

    def plain_type(self, type_name: str) -> int | None:
        """The type a cast to `type_name` (as written) converts to, when that cast turns a non-null
        value into a non-null value or an error: a built-in type no user-defined cast converts to."""
        if type_name not in self._types:
            rows = self._rows(
                "SELECT t.oid, t.typnamespace = 'pg_catalog'::regnamespace AND NOT EXISTS ("
                "  SELECT 1 FROM pg_cast c WHERE c.casttarget IN (t.oid, t.typelem) AND c.oid >= 16384)"
                " FROM pg_type t WHERE t.oid = to_regtype(%(name)s)",
                {"name": type_name},
            )
            self._types[type_name] = int(rows[0][0]) if rows and rows[0][1] else None
        return self._types[type_name]
