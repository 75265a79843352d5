"""Postgres result types -> the JSON type trees of `runtime/backends/sql/types.py` (which gives
each tree's JSON Schema), and Postgres's text of a value -> its JSON value (`values`).

Trees reuse DuckDB's ids where the types coincide, so one table documents both (README, "SQL
types"). The rendering, by Postgres type (values arrive as Postgres's own text: `session`):

  int2, int4              smallint, integer: number (schema: the type's min/max)
  int8                    bigint: number up to 2^53-1, beyond as its digit string
  oid, xid, cid / xid8    uinteger / ubigint (as DuckDB's unsigned integers)
  float4, float8          float, double: number; 'NaN', 'Infinity', '-Infinity' as strings
                          (printed shortest-exact: extra_float_digits 3)
  numeric(p,s), 0<=s      decimal: as DuckDB's DECIMAL, number when p <= 15, else fixed-point
                          text with s fraction digits; plus 'NaN' (Postgres stores it even in a
                          constrained column)
  numeric, numeric(p,-s)  numeric: number when it has at most 15 significant digits (an integer:
                          when |v| <= 2^53-1), else the exact text; 'NaN', '±Infinity' as strings
  bool                    boolean
  text, varchar(n),       varchar: string (maxLength n for varchar(n) and char(n); char(n) keeps
  char(n), name, "char"   its padding, as Postgres prints it)
  bytea                   blob: standard base64 with padding
  bit(n), varbit(n)       bit: the 0/1 string (bit(n): exactly n; varbit: at most n, maybe empty)
  json, jsonb             json: the parsed value (a number a double cannot hold stays text)
  uuid                    uuid: lowercase text
  date                    'YYYY-MM-DD'; 'infinity', '-infinity'; BC and years past 9999 as ISO
                          8601 expanded years (44 BC -> '-0043-03-15', '+10000-01-01')
  time / timetz           'HH:MM:SS[.ffffff]' (fraction at 6 digits, as DuckDB's); timetz with
                          its stored offset '+05:30' ('+05:30:15' when it has seconds)
  timestamp               'YYYY-MM-DDTHH:MM:SS[.ffffff]'; infinities and years as for date
  timestamptz             the same in UTC with 'Z' (the session's TimeZone is UTC)
  interval                ISO 8601 duration with months, days and microseconds apart, in
                          DuckDB's form ('P1Y2M3DT4H5M6.5S', '-P1D', 'P1DT-25H', 'PT0S');
                          'infinity', '-infinity' (Postgres 17+)
  enum                    enum: the labels, in their sort order
  T[] (any dimensions)    pg_array: nested arrays with nulls; lower bounds are dropped
  composite (a table's    struct: object with every field present (NULL fields as null)
  row type, CREATE TYPE)
  range                   range: {"lower", "upper", "lower_inclusive", "upper_inclusive",
                          "empty"}, every key present; an unbounded or empty side is null
  multirange              multirange: array of range objects (never empty ones)
  inet, cidr              inet, cidr: text as Postgres prints it ('10.0.0.1', '10.0.0.0/8')
  macaddr, macaddr8       macaddr, macaddr8: lowercase colon-separated text
  money                   money: text as Postgres prints it ('$1,234.56'): it depends on the
                          server's lc_monetary, so cast to numeric for a number
  domain                  its base type's tree, with "domain": the domain's name
  xml, tsvector, tsquery, varchar: the text as Postgres prints it (geometric types, jsonpath,
  other base types        pg_lsn, reg* names, extension types such as citext or vector too)
  record, other pseudo-   unsupported (UnsupportedType, a hint to cast or name the fields)
  types (void, any*)
"""

from __future__ import annotations

import json
from typing import Any

from ..types import UnsupportedType
from .session import SESSION_SETTINGS, session_options, session_statements, text_loaders
from .values import pg_converter, pg_row_converter

__all__ = [
    "SESSION_SETTINGS",
    "UnsupportedType",
    "pg_converter",
    "pg_row_converter",
    "pg_type_trees",
    "session_options",
    "session_statements",
    "text_loaders",
]

# Postgres arrays have at most this many dimensions (MAXDIM): the array schema nests this deep.
MAX_ARRAY_DIMENSIONS = 6
# Type definitions nest (arrays of composites of ranges ...); past this depth it is a cycle.
_MAX_DEPTH = 32

# pg_catalog types by name -> tree id. Types not named here: by kind (typtype) below.
_BUILTIN_IDS = {
    "int2": "smallint",
    "int4": "integer",
    "int8": "bigint",
    "oid": "uinteger",
    "xid": "uinteger",
    "cid": "uinteger",
    "xid8": "ubigint",
    "float4": "float",
    "float8": "double",
    "bool": "boolean",
    "text": "varchar",
    "varchar": "varchar",
    "bpchar": "varchar",
    "name": "varchar",
    "char": "varchar",
    "unknown": "varchar",  # an untyped literal's type; Postgres resolves most to text itself
    "bytea": "blob",
    "bit": "bit",
    "varbit": "bit",
    "json": "json",
    "jsonb": "json",
    "uuid": "uuid",
    "date": "date",
    "time": "time",
    "timetz": "time with time zone",
    "timestamp": "timestamp",
    "timestamptz": "timestamp with time zone",
    "interval": "interval",
    "inet": "inet",
    "cidr": "cidr",
    "macaddr": "macaddr",
    "macaddr8": "macaddr8",
    "money": "money",
}
_RECORD_HINT = (
    "a row of unnamed fields has no field names for JSON: select its fields as columns, CAST it "
    "to a composite type, or turn it into JSON with to_jsonb(...)"
)
_CAST_HINT = "CAST the column to a type that has one, e.g. column::text"

# One round: every requested (oid, typmod) with what its tree needs, as one JSON text (a str
# whatever loaders the connection has). Arrays are told from other types with a typelem
# (int2vector, point, name) by their element's typarray naming them back.
_TYPES_QUERY = """
SELECT coalesce(json_agg(json_build_object(
    'oid', r.oid::int8, 'typmod', r.typmod, 'sql', format_type(t.oid, r.typmod),
    'name', t.typname, 'schema', n.nspname, 'typtype', t.typtype, 'delimiter', t.typdelim,
    'element', CASE WHEN t.typelem <> 0 AND t.typlen = -1
                     AND (SELECT e.typarray FROM pg_type e WHERE e.oid = t.typelem) = t.oid
                    THEN t.typelem::int8 END,
    'base', t.typbasetype::int8, 'base_typmod', t.typtypmod,
    'labels', (SELECT json_agg(e.enumlabel ORDER BY e.enumsortorder)
               FROM pg_enum e WHERE e.enumtypid = t.oid),
    'subtype', (SELECT g.rngsubtype::int8 FROM pg_range g WHERE g.rngtypid = t.oid),
    'range', (SELECT g.rngtypid::int8 FROM pg_range g WHERE g.rngmultitypid = t.oid),
    'fields', (SELECT json_agg(json_build_array(a.attname, a.atttypid::int8, a.atttypmod)
                               ORDER BY a.attnum)
               FROM pg_attribute a
               WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped)
)), '[]')::text
FROM json_to_recordset(%s::json) AS r(oid oid, typmod int4)
JOIN pg_type t ON t.oid = r.oid
JOIN pg_namespace n ON n.oid = t.typnamespace
"""

Pair = tuple[int, int]


def pg_type_trees(conn: Any, types: list[Pair]) -> list[dict[str, Any]]:
    """The type tree of each (type OID, typmod) of `types`, in order, read from the catalog of
    `conn` (a sync psycopg Connection) in one query per level of nesting. Raises
    UnsupportedType for a type with no JSON rendering."""
    infos: dict[Pair, dict[str, Any]] = {}
    pending = {(int(oid), int(typmod)) for oid, typmod in types}
    for _ in range(_MAX_DEPTH):
        pending -= infos.keys()
        if not pending:
            break
        request = json.dumps([{"oid": oid, "typmod": typmod} for oid, typmod in sorted(pending)])
        row = conn.execute(_TYPES_QUERY, (request,)).fetchone()
        found = {(info["oid"], info["typmod"]): info for info in json.loads(row[0])}
        for pair in pending:
            if pair not in found:
                raise UnsupportedType(
                    f"type OID {pair[0]}", hint="the type is not in pg_type", engine="Postgres"
                )
        infos.update(found)
        pending = {child for info in found.values() for child in _children(info)}
    return [_tree(infos, pair, None, 0) for pair in ((int(o), int(m)) for o, m in types)]


def _children(info: dict[str, Any]) -> list[Pair]:
    if info["typtype"] == "d":
        return [(info["base"], info["base_typmod"])]
    if info["element"]:
        return [(info["element"], info["typmod"])]  # an array's typmod is its elements'
    if info["subtype"]:
        return [(info["subtype"], -1)]
    if info["range"]:
        return [(info["range"], -1)]
    return [(oid, typmod) for _, oid, typmod in info["fields"] or []]


def _tree(infos: dict[Pair, dict[str, Any]], pair: Pair, top: str | None, depth: int) -> dict[str, Any]:
    info = infos.get(pair)
    if info is None or depth > _MAX_DEPTH:
        raise UnsupportedType(f"type OID {pair[0]}", top, "the type nests too deep", engine="Postgres")
    sql = info["sql"]
    top = top or sql
    kind = info["typtype"]

    def child(of: Pair) -> dict[str, Any]:
        return _tree(infos, of, top, depth + 1)

    if kind == "d":
        return {**child((info["base"], info["base_typmod"])), "domain": sql}
    if info["element"]:
        node: dict[str, Any] = {"id": "pg_array", "sql": sql, "child": child((info["element"], pair[1]))}
        element_delimiter = infos[(info["element"], pair[1])]["delimiter"]
        if element_delimiter != ",":
            node["delimiter"] = element_delimiter
        return node
    if kind == "e":
        return {"id": "enum", "sql": sql, "values": list(info["labels"] or [])}
    if kind == "c":
        fields = [[name, child((oid, typmod))] for name, oid, typmod in info["fields"] or []]
        return {"id": "struct", "sql": sql, "fields": fields}
    if kind == "r":
        return {"id": "range", "sql": sql, "child": child((info["subtype"], -1))}
    if kind == "m":
        return {"id": "multirange", "sql": sql, "child": child((info["range"], -1))}
    if kind == "p":
        if info["name"] == "unknown":
            return {"id": "varchar", "sql": sql}
        hint = _RECORD_HINT if info["name"] == "record" else _CAST_HINT
        raise UnsupportedType(sql, top, hint, engine="Postgres")
    if info["schema"] == "pg_catalog" and info["name"] == "numeric":
        return _numeric(sql, pair[1])
    tid = _BUILTIN_IDS.get(info["name"]) if info["schema"] == "pg_catalog" else None
    node = {"id": tid or "varchar", "sql": sql}  # other base types: their text (docstring)
    _add_length(node, info["name"], pair[1])
    if tid == "interval":
        node["infinite"] = True
    return node


def _numeric(sql: str, typmod: int) -> dict[str, Any]:
    if typmod < 4:  # unconstrained
        return {"id": "numeric", "sql": sql}
    # typmod = ((precision << 16) | (scale & 0x7ff)) + 4; the scale is an 11-bit signed number.
    precision = ((typmod - 4) >> 16) & 0xFFFF
    scale = (typmod - 4) & 0x7FF
    scale = scale - 0x800 if scale & 0x400 else scale
    if scale < 0:
        return {"id": "numeric", "sql": sql}
    return {"id": "decimal", "sql": sql, "precision": precision, "scale": scale, "nan": True}


def _add_length(node: dict[str, Any], name: str, typmod: int) -> None:
    if name in ("varchar", "bpchar") and typmod >= 4:
        node["max_length"] = typmod - 4
    elif name in ("bit", "varbit"):
        # bit with no length (B'' literals, expressions) holds any length, as varbit does.
        node["varying"] = name == "varbit" or typmod < 0
        if typmod >= 0:
            node["length"] = typmod
