"""Which Postgres types a declared JSON parameter may bind as.

The server sends every argument as text of unknown type, and Postgres reads it as the type it
inferred for the `$k`. So a declared type fits when every JSON value it allows has a text form
that type reads, and reads the value the caller meant:

| declared (JSON)      | inferred Postgres types accepted                                        |
|----------------------|-------------------------------------------------------------------------|
| integer              | smallint, integer, bigint, numeric, real, double precision, oid         |
| number               | numeric, real, double precision                                         |
| boolean              | boolean                                                                 |
| string               | text, varchar, char, name, citext; date, time, timetz, timestamp,       |
|                      | timestamptz, interval; uuid; inet, cidr, macaddr, macaddr8; json, jsonb; |
|                      | tsquery; xml; bytea (as Postgres's own hex `\\x...` text); money; enums; |
|                      | ranges (their text form)                                                |
| object               | json, jsonb                                                             |
| array of X           | arrays whose element type accepts X; json, jsonb                        |

A domain is judged by its base type. An integer declared for `text` (or a string for `integer`)
is refused: the caller's schema would promise values the statement does not read as meant.
"""

from __future__ import annotations

from typing import Any

_INTEGER = {"int2", "int4", "int8", "numeric", "float4", "float8", "oid"}
_NUMBER = {"numeric", "float4", "float8"}
_STRING_NAMES = {"uuid", "json", "jsonb", "tsquery", "xml", "bytea", "money", "citext", "bpchar", "text",
                 "varchar", "name", "inet", "cidr", "macaddr", "macaddr8"}  # fmt: skip
_STRING_CATEGORIES = {"S", "D", "T", "E", "I", "R"}  # string, date/time, timespan, enum, network, range


def declared_kind(schema: dict[str, Any]) -> str:
    """The JSON type a parameter declares (a nullable one: its non-null member)."""
    if isinstance(schema.get("anyOf"), list):
        for option in schema["anyOf"]:
            if isinstance(option, dict) and option.get("type") != "null":
                return declared_kind(option)
    kind = schema.get("type")
    return kind if isinstance(kind, str) else "any"


def accepts(connection: Any, kind: str, schema: dict[str, Any], oid: int) -> bool:
    row = connection.execute(
        "SELECT t.typname, t.typcategory, t.typelem::int8, t.typtype, t.typbasetype::int8"
        " FROM pg_type t WHERE t.oid = %s",
        [oid],
    ).fetchone()
    if row is None:
        return False
    name, category, element, typtype, base = row
    if typtype == "d":
        return accepts(connection, kind, schema, base)
    if kind == "integer":
        return name in _INTEGER
    if kind == "number":
        return name in _NUMBER
    if kind == "boolean":
        return name == "bool"
    if kind == "string":
        return name in _STRING_NAMES or category in _STRING_CATEGORIES
    if kind == "object":
        return name in ("json", "jsonb")
    if kind == "array":
        if name in ("json", "jsonb"):
            return True
        if category != "A" or not element:
            return False
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        return accepts(connection, declared_kind(items), items, element)
    return False
