"""The catalog entries a statement depends on, read again from a served database.

The build records, per tool, what its statement depends on (compiler/lower/sql/postgres/
depends.py: the entries pg_depend lists for it, described there) and the sha256 of that record.
A served server reads the same entries again here, described in the same words, and compares
them (drift.py): the same text means the same schema, so a migration that retyped a column, made
it nullable, changed an enum's labels or a function's volatility names itself.

- relations: `schema.name` -> column -> `format_type[ not null]` (the recorded columns only);
- types: `schema.name` -> `enum(a,b)`, `domain over integer not null CHECK (...)`,
  `composite(x integer, y text)`, `range(integer)` or `base`;
- functions: `schema.name(identity arguments)` -> `volatile returns integer`.

An entry that no longer exists reads as GONE.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

GONE = "(gone)"
_VOLATILITY = {"i": "immutable", "s": "stable", "v": "volatile"}

RELATION_COLUMNS = """\
SELECT attname, format_type(atttypid, atttypmod), attnotnull FROM pg_attribute
WHERE attrelid = to_regclass(%s) AND attnum > 0 AND NOT attisdropped ORDER BY attnum"""

TYPE_ROW = """\
SELECT t.typtype, format_type(t.typbasetype, t.typtypmod), t.typnotnull, t.typrelid::int8, t.oid::int8
FROM pg_type t WHERE t.oid = to_regtype(%s)"""

FUNCTION_ROW = """\
SELECT p.provolatile, pg_get_function_result(p.oid) FROM pg_proc p WHERE p.oid = to_regprocedure(%s)"""


def quoted(name: str) -> str:
    """`schema.name` as recorded (unquoted) -> a name Postgres resolves to the same object."""
    return ".".join('"' + part.replace('"', '""') + '"' for part in name.split("."))


def column_text(type_text: str, not_null: bool) -> str:
    return f"{type_text} not null" if not_null else type_text


async def read_depends(conn: Any, recorded: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The live description of every entry `recorded` names, on an async psycopg connection."""
    relations: dict[str, dict[str, str]] = {}
    for name, columns in recorded.get("relations", {}).items():
        rows = await (await conn.execute(RELATION_COLUMNS, [quoted(name)])).fetchall()
        live = {column: column_text(type_text, not_null) for column, type_text, not_null in rows}
        relations[name] = {column: live.get(column, GONE) for column in columns}
    types = {name: await _type(conn, name) for name in recorded.get("types", {})}
    functions = {name: await _function(conn, name) for name in recorded.get("functions", {})}
    return {"relations": relations, "types": types, "functions": functions}


async def _type(conn: Any, name: str) -> str:
    row = await (await conn.execute(TYPE_ROW, [quoted(name)])).fetchone()
    if row is None:
        return GONE
    kind, base_name, not_null, relid, oid = row
    kind = kind.decode() if isinstance(kind, bytes) else kind
    if kind == "e":
        labels = await (
            await conn.execute(
                "SELECT enumlabel FROM pg_enum WHERE enumtypid = %s ORDER BY enumsortorder", [oid]
            )
        ).fetchall()
        return "enum(" + ",".join(label for (label,) in labels) + ")"
    if kind == "d":
        checks = await (
            await conn.execute(
                "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE contypid = %s ORDER BY conname",
                [oid],
            )
        ).fetchall()
        text = f"domain over {base_name}" + (" not null" if not_null else "")
        return text + "".join(f" {check}" for (check,) in checks)
    if kind == "c":
        fields = await (
            await conn.execute(
                "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute"
                " WHERE attrelid = %s AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
                [relid],
            )
        ).fetchall()
        return "composite(" + ", ".join(f"{f} {t}" for f, t in fields) + ")"
    if kind == "r":
        subtype = await (
            await conn.execute(
                "SELECT format_type(rngsubtype, NULL) FROM pg_range WHERE rngtypid = %s", [oid]
            )
        ).fetchone()
        return f"range({subtype[0] if subtype else '?'})"
    return "base"


async def _function(conn: Any, name: str) -> str:
    schema, _, signature = name.partition(".")
    function, _, arguments = signature.partition("(")
    row = await (
        await conn.execute(FUNCTION_ROW, [f"{quoted(schema)}.{quoted(function)}({arguments}"])
    ).fetchone()
    if row is None:
        return GONE
    volatility, result = row
    volatility = volatility.decode() if isinstance(volatility, bytes) else volatility
    return f"{_VOLATILITY.get(volatility, volatility)} returns {result}"
