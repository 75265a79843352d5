"""What a Postgres statement depends on in the catalog, exactly as Postgres resolved it.

The statement (its parameters replaced by typed NULLs) becomes a temporary view inside a
transaction that is rolled back: Postgres records in pg_depend every relation and column, type
and function the view's query uses, by OID, so an overloaded or schema-qualified name is the
object Postgres chose. (Built-in objects are pinned and not recorded: check.py refuses built-in
functions by name.) A statement that cannot be a view (a write) falls back to the relations it
names.

`depends` is canonical JSON (sorted keys); its sha256 is the statement's fingerprint, so a
migration that changes a column's type or nullability, an enum's labels or a function's
volatility changes sql.json: `lynxc build --check` calls it stale and `lynxc diff` shows it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from ....ir import canonical_json

_VOLATILITY = {"i": "immutable", "s": "stable", "v": "volatile"}
_SYSTEM_SCHEMAS = ("pg_catalog", "information_schema")


@dataclass
class Depends:
    relations: dict[str, dict[str, str]] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    functions: dict[str, str] = field(default_factory=dict)
    volatile: list[str] = field(default_factory=list)  # user functions that are VOLATILE
    exact: bool = True  # False when only the names the statement writes were looked up

    def document(self) -> dict[str, Any]:
        found: dict[str, Any] = {"relations": _sorted(self.relations), "types": _sorted(self.types)}
        if self.functions:
            found["functions"] = _sorted(self.functions)
        return found

    def fingerprint(self) -> str:
        return hashlib.sha256(canonical_json(self.document()).encode("utf-8")).hexdigest()


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    return value


def statement_depends(
    connection: Any,
    text: str,
    param_types: list[str],
    type_oids: list[int],
    relations: list[tuple[str | None, str]],
) -> Depends:
    """The depends of `text` (with $1..$n of the given types); `type_oids` are the result and
    parameter types, whose user-defined ones are recorded too."""
    import psycopg

    depends = Depends()
    refs: list[tuple[str, int, int]] = []
    try:
        with connection.transaction(force_rollback=True):
            connection.execute(f"CREATE TEMPORARY VIEW lynxc_probe AS\n{_with_nulls(text, param_types)}")
            refs = connection.execute(
                "SELECT d.refclassid::regclass::text, d.refobjid::int8, d.refobjsubid"
                " FROM pg_depend d JOIN pg_rewrite r"
                " ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid"
                " WHERE r.ev_class = 'pg_temp.lynxc_probe'::regclass"
                " ORDER BY 1, 2, 3"
            ).fetchall()
    except psycopg.errors.QueryCanceled:
        raise
    except psycopg.Error:
        depends.exact = False
    if not depends.exact:
        for schema, name in relations:
            qualified = f"{schema}.{name}" if schema else name
            oid = connection.execute("SELECT to_regclass(%s)::oid::int8", [_quoted(qualified)]).fetchone()
            if oid and oid[0]:
                refs.append(("pg_class", int(oid[0]), 0))
    columns: dict[int, set[int]] = {}
    types = set(type_oids)
    for catalog, oid, sub in refs:
        if catalog == "pg_class":
            columns.setdefault(oid, set())
            if sub > 0:
                columns[oid].add(sub)
        elif catalog == "pg_type":
            types.add(oid)
        elif catalog == "pg_proc":
            _function(connection, oid, depends)
    for relation, used in sorted(columns.items()):
        _relation(connection, relation, used, depends, types)
    for oid in sorted(types):
        _type(connection, oid, depends)
    return depends


def _with_nulls(text: str, param_types: list[str]) -> str:
    from pglast import parser

    pieces, last = [], 0
    for token in parser.scan(text):
        if token.name == "PARAM":
            number = int(text[token.start + 1 : token.end + 1])
            pieces += [text[last : token.start], f"(NULL::{param_types[number - 1]})"]
            last = token.end + 1
    pieces.append(text[last:])
    return "".join(pieces)


def _quoted(name: str) -> str:
    return ".".join('"' + part.replace('"', '""') + '"' for part in name.split("."))


def _relation(connection: Any, oid: int, used: set[int], depends: Depends, types: set[int]) -> None:
    """The relation with the columns the statement uses (every column when only its name is
    known); read as a whole (count(*)), no column: a dropped or renamed relation still shows."""
    row = connection.execute(
        "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE c.oid = %s",
        [oid],
    ).fetchone()
    if row is None or row[0] in _SYSTEM_SCHEMAS:
        return
    described: dict[str, str] = {}
    for name, type_name, not_null, type_oid in connection.execute(
        "SELECT attname, format_type(atttypid, atttypmod), attnotnull, atttypid::int8 FROM pg_attribute"
        " WHERE attrelid = %s AND attnum > 0 AND NOT attisdropped AND (attnum = ANY(%s) OR %s)"
        " ORDER BY attnum",
        [oid, sorted(used), not depends.exact],
    ):
        described[name] = type_name + (" not null" if not_null else "")
        types.add(int(type_oid))
    depends.relations[f"{row[0]}.{row[1]}"] = described


def _function(connection: Any, oid: int, depends: Depends) -> None:
    row = connection.execute(
        "SELECT n.nspname, p.proname, pg_get_function_identity_arguments(p.oid), p.provolatile,"
        " pg_get_function_result(p.oid)"
        " FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE p.oid = %s",
        [oid],
    ).fetchone()
    if row is None:
        return
    schema, name, arguments, volatility, result = row
    key = f"{schema}.{name}({arguments})"
    depends.functions[key] = f"{_VOLATILITY.get(volatility, volatility)} returns {result}"
    if volatility == "v" and schema not in _SYSTEM_SCHEMAS:
        depends.volatile.append(f"{schema}.{name}")


def _type(connection: Any, oid: int, depends: Depends) -> None:
    row = connection.execute(
        "SELECT n.nspname, t.typname, t.typtype, t.typelem::int8, t.typbasetype::int8, t.typnotnull,"
        " format_type(t.typbasetype, t.typtypmod), t.typrelid::int8, t.typcategory"
        " FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace WHERE t.oid = %s",
        [oid],
    ).fetchone()
    if row is None:
        return
    schema, name, kind, element, base, not_null, base_name, relid, category = row
    if category == "A" and element:
        _type(connection, element, depends)
        return
    key = f"{schema}.{name}"
    if schema in _SYSTEM_SCHEMAS or key in depends.types:
        return
    if kind == "e":
        labels = connection.execute(
            "SELECT enumlabel FROM pg_enum WHERE enumtypid = %s ORDER BY enumsortorder", [oid]
        ).fetchall()
        depends.types[key] = "enum(" + ",".join(label for (label,) in labels) + ")"
    elif kind == "d":
        checks = connection.execute(
            "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE contypid = %s ORDER BY conname", [oid]
        ).fetchall()
        text = f"domain over {base_name}" + (" not null" if not_null else "")
        depends.types[key] = text + "".join(f" {check}" for (check,) in checks)
        _type(connection, base, depends)
    elif kind == "c":
        fields = connection.execute(
            "SELECT attname, format_type(atttypid, atttypmod), atttypid::int8 FROM pg_attribute"
            " WHERE attrelid = %s AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
            [relid],
        ).fetchall()
        depends.types[key] = "composite(" + ", ".join(f"{f} {t}" for f, t, _ in fields) + ")"
        for _, _, field_type in fields:
            _type(connection, field_type, depends)
    elif kind == "r":
        subtype = connection.execute(
            "SELECT format_type(rngsubtype, NULL) FROM pg_range WHERE rngtypid = %s", [oid]
        ).fetchone()
        depends.types[key] = f"range({subtype[0] if subtype else '?'})"
    else:
        depends.types[key] = "base"
