"""The catalog entries a statement depends on, in one canonical text, and their fingerprint.

The build records, per tool, each relation it reads (`schema.name`: column -> `type[ not null]`)
and each user type its columns or parameters use (`schema.name` -> `enum(a,b)`,
`domain(integer not null)`, `composite(x integer, y text)`, `range(integer)`), and the sha256 of
that record. A served server reads the same entries again from the live database (drift.py):
the same text means the same schema, so a migration that retyped a column names itself.

The descriptions come from Postgres's own `format_type`, so they read as Postgres spells types.
Both sides (the build's sync connection, the server's async one) run the same SQL below.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

# $1: a relation name as recorded (`schema.name`, quoted where Postgres needs it).
RELATION_COLUMNS = """\
SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull
FROM pg_attribute a
WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum"""

# $1: a type name as recorded. One row: its kind and what describes it.
TYPE_SHAPE = """\
SELECT t.typtype,
       (SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder)
          FROM pg_enum e WHERE e.enumtypid = t.oid),
       format_type(t.typbasetype, t.typtypmod), t.typnotnull,
       (SELECT string_agg(quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod), ', '
                          ORDER BY a.attnum)
          FROM pg_attribute a WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped),
       (SELECT format_type(r.rngsubtype, NULL) FROM pg_range r WHERE r.rngtypid = t.oid),
       format_type(t.oid, NULL)
FROM pg_type t WHERE t.oid = to_regtype($1)"""

GONE = "(gone)"


def column_text(type_text: str, not_null: bool) -> str:
    return f"{type_text} not null" if not_null else type_text


def relation_entry(rows: Iterable[tuple[str, str, bool]]) -> dict[str, str]:
    """RELATION_COLUMNS rows -> column -> description."""
    return {name: column_text(type_text, not_null) for name, type_text, not_null in rows}


def type_entry(row: tuple[Any, ...] | None) -> str:
    """The TYPE_SHAPE row of a type (None: no such type) -> its description."""
    if row is None:
        return GONE
    kind, labels, base, not_null, fields, subtype, plain = row
    kind = kind.decode() if isinstance(kind, bytes) else kind
    if kind == "e":
        return f"enum({labels or ''})"
    if kind == "d":
        return f"domain({column_text(base, not_null)})"
    if kind == "c":
        return f"composite({fields or ''})"
    if kind == "r":
        return f"range({subtype})"
    return plain


def fingerprint(depends: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of a tool's depends ({"relations": ..., "types": ...})."""
    canonical = json.dumps(depends, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


async def read_depends(conn: Any, recorded: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The live description of the entries `recorded` names, on an async psycopg connection:
    the recorded columns of each relation (GONE when a column or the relation is gone) and each
    recorded type."""
    relations: dict[str, dict[str, str]] = {}
    for name, columns in recorded.get("relations", {}).items():
        cursor = await conn.execute(RELATION_COLUMNS.replace("$1", "%s"), (name,))
        live = relation_entry(await cursor.fetchall())
        relations[name] = {column: live.get(column, GONE) for column in columns}
    types: dict[str, str] = {}
    for name in recorded.get("types", {}):
        cursor = await conn.execute(TYPE_SHAPE.replace("$1", "%s"), (name,))
        types[name] = type_entry(await cursor.fetchone())
    return {"relations": relations, "types": types}
