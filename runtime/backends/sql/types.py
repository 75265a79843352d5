"""The one table from DuckDB result types to JSON: the compiler's output schemas and the runtime's
row conversion both read it, so what a tool returns always matches what it declared.

A column's type is kept as a JSON *type tree* (built once by `type_tree` from the DuckDBPyType a
statement's description gives; stored in generated/<server>/sql.json), so serving needs no
DuckDB type objects and this module never imports duckdb.

Rendering, by tree id (what DuckDB 1.5's Python client hands to `fetchall` -> the JSON value):

  tinyint .. uinteger       int -> integer (schema carries the type's min/max)
  bigint, ubigint, hugeint, uhugeint, bignum (VARINT)
                            int (bignum: decimal text) -> integer when |v| <= 2^53-1, else the
                            decimal text as a string: JSON readers lose digits past 2^53
  float, double             float -> number; NaN/inf -> "NaN", "Infinity", "-Infinity". FLOAT is
                            printed as its shortest float32 text (1.1, not 1.100000023841858)
  decimal(p,s)              Decimal -> number when p <= 15 (a double holds 15 digits exactly;
                            scale 0 -> integer), else fixed-point text keeping the scale ('1.500')
  varchar                   str -> string (any Unicode, NUL included)
  json                      text -> the parsed JSON value; a number a double cannot hold (1e400)
                            or a NaN/Infinity literal stays as its text
  blob                      bytes -> standard base64 with padding
  bit                       str of 0/1 -> the same string
  boolean                   bool
  uuid                      UUID -> canonical lowercase text (format uuid)
  enum                      str -> string enum (the enum skipped past MAX_ENUM_VALUES labels)
  date                      'YYYY-MM-DD' (format date); 'infinity' / '-infinity' as those words
  time                      time -> 'HH:MM:SS[.ffffff]'; '24:00:00' kept as DuckDB prints it
  time_ns                   'HH:MM:SS[.fffffffff]': nanoseconds kept
  time with time zone       time+offset -> 'HH:MM:SS[.ffffff]+HH:MM[:SS]' (the stored offset)
  timestamp, _s, _ms        'YYYY-MM-DDTHH:MM:SS[.ffffff]' (naive, no zone); 'infinity' / '-infinity'
  timestamp_ns              the same with nine fraction digits: nanoseconds kept
  timestamp with time zone  the same in UTC with 'Z' (format date-time); 'infinity' / '-infinity'
  interval                  ISO 8601 duration of DuckDB's three parts, months, days and
                            microseconds, none folded into another ('1 year 2 months 3 days
                            04:05:06.789' -> 'P1Y2M3DT4H5M6.789S'); '-' before the P when no part
                            is positive, else each negative part signed ('1 day -25:00:00' ->
                            'P1DT-25H'); 'PT0S' for zero
  list / array(n)           list / tuple -> array (array: exactly n items)
  struct                    dict -> object with every field present
  map(varchar, V)           dict -> object {key: value}
  map(other K, V)           dict, or {'key': [...], 'value': [...]} when DuckDB's client deems
                            the key type unhashable -> array of {"key": k, "value": v}
  union                     the active member's value (the client drops the tag) -> that
                            member's rendering; schema anyOf the members
  null (type of NULL)       None -> null

Fetched as DuckDB's own text (`fetch_type`, `fetch_statement`): DuckDB's Python client loses
parts of these types (DATE/TIMESTAMP 'infinity' arrive as date(time).max, an INTERVAL as a
timedelta with months counted as 30 days, TIMESTAMP_NS and TIME_NS truncated to microseconds),
so the statement a server runs CASTs every column holding one (at any depth of lists, arrays,
structs and maps) to the same shape with VARCHAR in their place, and the converters read the
text. Inside a UNION they cannot be cast (the member would no longer be found from its value):
there they still arrive through the Python client, with its losses, and the build warns
(SQL_TYPE_LOSSY, from `lossy_in_union`).
A UNION member is found again from the Python value too: members whose values look alike
(VARCHAR vs JSON vs ENUM, INTEGER vs BIGINT) resolve to the first listed that fits.
Years Python's dates cannot hold (past 9999, or BC) are rendered as ISO 8601 expanded years:
'+12345-01-01', and 44 BC as '-0043-03-15' (astronomical numbering: 1 BC is year 0000); their
schemas accept that form besides the usual one.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import math
import re
import struct
import uuid
from collections.abc import Callable
from typing import Any

from .views import quoted

# Largest integer every JSON reader holds exactly (an IEEE double's 53-bit mantissa).
MAX_SAFE_INT = 2**53 - 1
# DECIMAL up to this precision renders as a JSON number: a double holds 15 digits exactly.
MAX_NUMBER_DECIMAL_PRECISION = 15
# An ENUM with more labels than this is declared as a plain string: the schema stays small.
MAX_ENUM_VALUES = 256

_SMALL_INTS = {
    "tinyint": (-(2**7), 2**7 - 1),
    "smallint": (-(2**15), 2**15 - 1),
    "integer": (-(2**31), 2**31 - 1),
    "utinyint": (0, 2**8 - 1),
    "usmallint": (0, 2**16 - 1),
    "uinteger": (0, 2**32 - 1),
}
_BIG_INTS = {"bigint": True, "hugeint": True, "bignum": True, "ubigint": False, "uhugeint": False}
_FLOATS = ("float", "double")
_TIMESTAMPS = ("timestamp", "timestamp_s", "timestamp_ms", "timestamp_ns")
_TIMESTAMP_TZ = "timestamp with time zone"
_TIMES = ("time", "time_ns")
_TIME_TZ = "time with time zone"
_SCALARS = frozenset(
    [
        *_SMALL_INTS,
        *_BIG_INTS,
        *_FLOATS,
        *_TIMESTAMPS,
        _TIMESTAMP_TZ,
        *_TIMES,
        _TIME_TZ,
        "varchar",
        "json",
        "blob",
        "bit",
        "boolean",
        "date",
        "interval",
        "uuid",
        "null",
    ]
)
_NON_FINITE = ("NaN", "Infinity", "-Infinity")
# Types DuckDB's Python client hands over with a loss (module docstring): fetched as their text.
_FETCHED_AS_TEXT = frozenset({"date", *_TIMESTAMPS, _TIMESTAMP_TZ, "time_ns", "interval"})
_INFINITIES = ("infinity", "-infinity")
# Fraction digits a timestamp or time type holds: its text is padded to them.
_NANOSECOND_TYPES = ("timestamp_ns", "time_ns")

# DuckDB's text for a date/timestamp Python cannot hold: '12345-06-07', '0044-03-15 (BC)',
# '0044-03-15 (BC) 01:02:03.25', '12345-06-07 08:09:10.5+00'.
_DUCK_TEMPORAL_TEXT = re.compile(
    r"(\d{4,})-(\d\d)-(\d\d)( \(BC\))?(?: (\d\d:\d\d:\d\d(?:\.\d+)?)([+-]\d\d(?::\d\d){0,2})?)?"
)
_INT_TEXT = re.compile(r"-?\d+")
# DuckDB's text of an INTERVAL: '1 year 2 months 3 days 04:05:06.789', '-1 day 00:00:01',
# '1 month -1 day 100:00:00', '00:00:00' (each part signed on its own; hours unbounded).
_DUCK_INTERVAL_TEXT = re.compile(
    r"(?:(-?\d+) years? ?)?(?:(-?\d+) months? ?)?(?:(-?\d+) days? ?)?"
    r"(?:(-?)(\d+):(\d\d):(\d\d)(?:\.(\d{1,6}))?)?"
)

_TIME_PATTERN = r"[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?"
_TIME_NS_PATTERN = r"[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?"
_OFFSET_PATTERN = r"[+-][0-9]{2}:[0-9]{2}(:[0-9]{2})?"
_EXPANDED_DATE_PATTERN = r"[+-][0-9]{4,}-[0-9]{2}-[0-9]{2}"
_DATE_PATTERN = r"[+-]?[0-9]{4,}-[0-9]{2}-[0-9]{2}"


class UnsupportedType(Exception):
    """A result type with no JSON rendering; the compiler reports it as SQL_TYPE_UNSUPPORTED."""

    def __init__(
        self, sql_type: str, within: str | None = None, hint: str | None = None, engine: str = "DuckDB"
    ):
        self.sql_type = sql_type
        self.within = within
        where = f" (in {within})" if within and within != sql_type else ""
        hint = hint or "CAST the column to a type that has one, e.g. CAST(column AS VARCHAR)"
        super().__init__(f"{engine} type {sql_type}{where} has no JSON rendering: {hint}")


# --- type tree ----------------------------------------------------------------------------------


def type_tree(t: Any) -> dict[str, Any]:
    """DuckDBPyType -> the contract's JSON type tree. Reads only `.id`, `.children` and str(t)."""
    return _tree(t, str(t))


def _tree(t: Any, top: str) -> dict[str, Any]:
    sql = str(t)
    tid = t.id
    # JSON is a VARCHAR alias to DuckDB (id 'varchar'); only its name tells them apart.
    if tid == "varchar" and sql == "JSON":
        tid = "json"
    node: dict[str, Any] = {"id": tid, "sql": sql}
    if tid in _SCALARS:
        return node
    if tid not in ("decimal", "list", "array", "struct", "union", "map", "enum"):
        raise UnsupportedType(sql, top)
    children = t.children
    if tid == "decimal":
        parts = dict(children)
        node["precision"], node["scale"] = int(parts["precision"]), int(parts["scale"])
    elif tid == "list":
        node["child"] = _tree(dict(children)["child"], top)
    elif tid == "array":
        parts = dict(children)
        node["child"], node["size"] = _tree(parts["child"], top), int(parts["size"])
    elif tid == "struct":
        if any(name == "" for name, _ in children):
            # row(a, b) / (a, b): Python gets a tuple, and JSON objects need field names.
            raise UnsupportedType(
                sql, top, "name the fields, e.g. {'a': x, 'b': y} or CAST(... AS STRUCT(a ..., b ...))"
            )
        node["fields"] = [[name, _tree(child, top)] for name, child in children]
    elif tid == "union":
        # The first child is DuckDB's hidden tag (named '', UTINYINT); the members follow.
        node["members"] = [[name, _tree(child, top)] for name, child in children[1:]]
    elif tid == "map":
        parts = dict(children)
        node["key"], node["value"] = _tree(parts["key"], top), _tree(parts["value"], top)
    else:  # enum
        node["values"] = [str(v) for v in dict(children)["values"]]
    return node


def same_type(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two type trees describe the same type (their SQL text, node by node)."""
    if a.get("id") != b.get("id") or a.get("sql") != b.get("sql"):
        return False
    for key in ("child", "key", "value"):
        if (key in a) != (key in b) or (key in a and not same_type(a[key], b[key])):
            return False
    for key in ("fields", "members"):
        left, right = a.get(key, []), b.get(key, [])
        if len(left) != len(right):
            return False
        for (name_a, tree_a), (name_b, tree_b) in zip(left, right, strict=True):
            if name_a != name_b or not same_type(tree_a, tree_b):
                return False
    keys = ("precision", "scale", "size", "values", "max_length", "length", "varying", "nan", "infinite")
    return all(a.get(key) == b.get(key) for key in (*keys, "domain", "delimiter"))


# --- JSON Schema --------------------------------------------------------------------------------


def json_schema(tree: dict[str, Any], nullable: bool) -> dict[str, Any]:
    """The JSON Schema of a column's values; nested values (items, fields, map values, union
    members) are always nullable, as DuckDB allows NULL in them whatever the column says."""
    schema = _schema(tree)
    return _or_null(schema) if nullable else schema


def _or_null(schema: dict[str, Any]) -> dict[str, Any]:
    if schema == {} or schema == {"type": "null"}:
        return schema  # already accepts null
    if list(schema) == ["anyOf"]:
        members = schema["anyOf"]
        return schema if {"type": "null"} in members else {"anyOf": [*members, {"type": "null"}]}
    return {"anyOf": [schema, {"type": "null"}]}


def _schema(tree: dict[str, Any]) -> dict[str, Any]:
    tid = tree["id"]
    if tid in _SMALL_INTS:
        low, high = _SMALL_INTS[tid]
        return {"type": "integer", "minimum": low, "maximum": high}
    if tid in _BIG_INTS:
        signed = _BIG_INTS[tid]
        return {
            "anyOf": [
                {"type": "integer", "minimum": -MAX_SAFE_INT if signed else 0, "maximum": MAX_SAFE_INT},
                {"type": "string", "pattern": "^-?[0-9]+$" if signed else "^[0-9]+$"},
            ]
        }
    if tid in _FLOATS:
        return {"anyOf": [{"type": "number"}, {"enum": list(_NON_FINITE)}]}
    if tid == "decimal":
        precision, scale = tree["precision"], tree["scale"]
        if precision <= MAX_NUMBER_DECIMAL_PRECISION:
            schema = {"type": "integer" if scale == 0 else "number"}
        else:
            fraction = rf"\.[0-9]{{{scale}}}" if scale else ""
            schema = {"type": "string", "pattern": f"^-?[0-9]+{fraction}$"}
        # Postgres stores NaN even in a constrained numeric column.
        return {"anyOf": [schema, {"enum": ["NaN"]}]} if tree.get("nan") else schema
    if tid == "varchar":
        if "max_length" in tree:  # Postgres varchar(n), char(n): n characters at most
            return {"type": "string", "maxLength": tree["max_length"]}
        return {"type": "string"}
    if tid == "json":
        return {}
    if tid == "blob":
        return {"type": "string", "contentEncoding": "base64"}
    if tid == "bit":
        return _bit_schema(tree)
    if tid == "boolean":
        return {"type": "boolean"}
    if tid == "uuid":
        return {"type": "string", "format": "uuid"}
    if tid == "null":
        return {"type": "null"}
    if tid == "enum":
        values = tree["values"]
        if len(values) > MAX_ENUM_VALUES:
            return {"type": "string"}
        return {"type": "string", "enum": list(values)}
    if tid == "date":
        return {
            "type": "string",
            "anyOf": [
                {"format": "date"},
                {"pattern": f"^{_EXPANDED_DATE_PATTERN}$"},
                {"enum": list(_INFINITIES)},
            ],
        }
    if tid in _TIMES:
        return {"type": "string", "pattern": f"^{_time_pattern(tid)}$"}
    if tid == _TIME_TZ:
        return {"type": "string", "pattern": f"^{_TIME_PATTERN}{_OFFSET_PATTERN}$"}
    if tid in _TIMESTAMPS:
        return {
            "type": "string",
            "anyOf": [{"pattern": f"^{_DATE_PATTERN}T{_time_pattern(tid)}$"}, {"enum": list(_INFINITIES)}],
        }
    if tid == _TIMESTAMP_TZ:
        expanded = f"^{_EXPANDED_DATE_PATTERN}T{_TIME_PATTERN}(Z|{_OFFSET_PATTERN})$"
        return {
            "type": "string",
            "anyOf": [{"format": "date-time"}, {"pattern": expanded}, {"enum": list(_INFINITIES)}],
        }
    if tid == "interval":
        part = r"-?[0-9]+"
        clock = rf"T({part}H)?({part}M)?({part}(\.[0-9]{{1,6}})?S)?"
        pattern = rf"^-?P({part}Y)?({part}M)?({part}D)?({clock})?$"
        if tree.get("infinite"):  # Postgres 17+: 'infinity', '-infinity'
            return {"type": "string", "anyOf": [{"pattern": pattern}, {"enum": list(_INFINITIES)}]}
        return {"type": "string", "pattern": pattern}
    if tid == "list":
        return {"type": "array", "items": _or_null(_schema(tree["child"]))}
    if tid == "array":
        size = tree["size"]
        items = _or_null(_schema(tree["child"]))
        return {"type": "array", "items": items, "minItems": size, "maxItems": size}
    if tid == "struct":
        fields = tree["fields"]
        return {
            "type": "object",
            "properties": {name: _or_null(_schema(child)) for name, child in fields},
            "required": [name for name, _ in fields],
            "additionalProperties": False,
        }
    if tid == "map":
        value = _or_null(_schema(tree["value"]))
        if tree["key"]["id"] == "varchar":
            return {"type": "object", "additionalProperties": value}
        entry = {
            "type": "object",
            "properties": {"key": _schema(tree["key"]), "value": value},  # DuckDB map keys are never NULL
            "required": ["key", "value"],
            "additionalProperties": False,
        }
        return {"type": "array", "items": entry}
    if tid == "union":
        # A member may hold NULL whatever the column says: null is always one of the options.
        members: list[dict[str, Any]] = []
        for _, child in tree["members"]:
            schema = _schema(child)
            for option in schema["anyOf"] if list(schema) == ["anyOf"] else [schema]:
                if option not in members:
                    members.append(option)
        if {} in members:
            return {}
        return _or_null({"anyOf": members})
    if tid in _POSTGRES_SCHEMAS:
        return _POSTGRES_SCHEMAS[tid](tree)
    raise UnsupportedType(tree.get("sql", tid))


def _bit_schema(tree: dict[str, Any]) -> dict[str, Any]:
    if tree.get("varying"):  # Postgres varbit(n): at most n bits, maybe none
        schema: dict[str, Any] = {"type": "string", "pattern": "^[01]*$"}
        if "length" in tree:
            schema["maxLength"] = tree["length"]
        return schema
    if "length" in tree:  # Postgres bit(n): exactly n bits
        return {
            "type": "string",
            "pattern": "^[01]+$",
            "minLength": tree["length"],
            "maxLength": tree["length"],
        }
    return {"type": "string", "pattern": "^[01]+$"}


# --- Postgres-only type trees (runtime/backends/sql/postgres/types.py makes them) ----------------

# Postgres arrays have at most 6 dimensions (MAXDIM), all of one depth in a value.
_PG_MAX_ARRAY_DIMENSIONS = 6
_IPV4 = r"[0-9]{1,3}(\.[0-9]{1,3}){3}"
_IPV6 = r"[0-9a-f:]*:[0-9a-f:]*([0-9]{1,3}(\.[0-9]{1,3}){3})?"
_MAC = "[0-9a-f]{2}"


def _options(*schemas: dict[str, Any]) -> dict[str, Any]:
    """A schema accepting what any of `schemas` accepts, with nested anyOf flattened."""
    options: list[dict[str, Any]] = []
    for schema in schemas:
        if schema == {}:
            return {}
        for option in schema["anyOf"] if list(schema) == ["anyOf"] else [schema]:
            if option not in options:
                options.append(option)
    return options[0] if len(options) == 1 else {"anyOf": options}


def _pg_array_schema(tree: dict[str, Any]) -> dict[str, Any]:
    # One level per possible dimension: an item is an element (or null) or a sub-array.
    element = _or_null(_schema(tree["child"]))
    schema: dict[str, Any] = {"type": "array", "items": element}
    for _ in range(_PG_MAX_ARRAY_DIMENSIONS - 1):
        schema = {"type": "array", "items": _options(element, schema)}
    return schema


def _range_schema(tree: dict[str, Any]) -> dict[str, Any]:
    bound = _or_null(_schema(tree["child"]))
    flag = {"type": "boolean"}
    properties = {
        "lower": bound,
        "upper": bound,
        "lower_inclusive": flag,
        "upper_inclusive": flag,
        "empty": flag,
    }
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


_POSTGRES_SCHEMAS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    # Unconstrained numeric: a number when exact, else its text; NaN and infinities as words.
    "numeric": lambda tree: {
        "anyOf": [
            {"type": "number"},
            {"type": "string", "pattern": r"^-?[0-9]+(\.[0-9]+)?$"},
            {"enum": list(_NON_FINITE)},
        ]
    },
    "pg_array": _pg_array_schema,
    "range": _range_schema,
    "multirange": lambda tree: {"type": "array", "items": _range_schema(tree["child"])},
    "inet": lambda tree: {"type": "string", "pattern": f"^({_IPV4}|{_IPV6})(/[0-9]{{1,3}})?$"},
    "cidr": lambda tree: {"type": "string", "pattern": f"^({_IPV4}|{_IPV6})/[0-9]{{1,3}}$"},
    "macaddr": lambda tree: {"type": "string", "pattern": f"^{_MAC}(:{_MAC}){{5}}$"},
    "macaddr8": lambda tree: {"type": "string", "pattern": f"^{_MAC}(:{_MAC}){{7}}$"},
    "money": lambda tree: {"type": "string"},  # as Postgres prints it, by its lc_monetary
}


def _time_pattern(tid: str) -> str:
    return _TIME_NS_PATTERN if tid in _NANOSECOND_TYPES else _TIME_PATTERN


# --- fetching -----------------------------------------------------------------------------------


def fetch_type(tree: dict[str, Any]) -> str | None:
    """The type to CAST a column of this type to before fetching it, so that no value loses a
    part on its way through DuckDB's Python client (module docstring): the same shape with
    VARCHAR for each type fetched as text; None when the column is fetched as it is."""
    tid = tree["id"]
    if tid in _FETCHED_AS_TEXT:
        return "VARCHAR"
    if tid in ("list", "array"):
        child = fetch_type(tree["child"])
        if child is None:
            return None
        return f"{child}[]" if tid == "list" else f"{child}[{tree['size']}]"
    if tid == "struct":
        fields = [(name, fetch_type(child)) for name, child in tree["fields"]]
        if all(fetched is None for _, fetched in fields):
            return None
        parts = [
            f"{quoted(name)} {fetched or child['sql']}"
            for (name, fetched), (_, child) in zip(fields, tree["fields"], strict=True)
        ]
        return f"STRUCT({', '.join(parts)})"
    if tid == "map":
        key, value = fetch_type(tree["key"]), fetch_type(tree["value"])
        if key is None and value is None:
            return None
        return f"MAP({key or tree['key']['sql']}, {value or tree['value']['sql']})"
    return None  # scalars the client keeps whole; a UNION (module docstring)


def lossy_in_union(tree: dict[str, Any], in_union: bool = False) -> str | None:
    """The SQL type of a value this type still fetches with a loss: one of the types fetched as
    text, inside a UNION (module docstring); None when every value arrives whole."""
    if in_union and tree["id"] in _FETCHED_AS_TEXT:
        return tree.get("sql", tree["id"])
    children = [tree[key] for key in ("child", "key", "value") if key in tree]
    children += [child for _, child in (*tree.get("fields", []), *tree.get("members", []))]
    for child in children:
        found = lossy_in_union(child, in_union or tree["id"] == "union")
        if found is not None:
            return found
    return None


def fetch_statement(statement: str, columns: list[dict[str, Any]]) -> str:
    """`statement` as a server runs it: the columns that hold a type fetched as text CAST to
    their `fetch_type`, in place (same names, same order)."""
    casts = [
        f"CAST({quoted(column['name'])} AS {fetched}) AS {quoted(column['name'])}"
        for column in columns
        if (fetched := fetch_type(column["type"])) is not None
    ]
    if not casts:
        return statement
    return f"SELECT * REPLACE ({', '.join(casts)}) FROM (\n{statement}\n) AS lynxc_fetched"


# --- conversion ---------------------------------------------------------------------------------

Converter = Callable[[Any], Any]


def converter(tree: dict[str, Any]) -> Converter:
    """Build, once per column, the function from a fetched Python value to its JSON value.
    None stays None at every level; no float it returns is NaN or infinite."""
    tid = tree["id"]
    if tid in _SMALL_INTS or tid in ("varchar", "boolean", "bit", "enum", "null"):
        return _identity
    build = _BUILDERS.get(tid)
    if build is None:
        raise UnsupportedType(tree.get("sql", tid))
    return build(tree)


def row_converter(columns: list[dict[str, Any]]) -> Callable[[tuple], dict[str, Any]]:
    """A fetched row (tuple) -> the row object, for columns `{"name", "type", "nullable"}`."""
    names = [column["name"] for column in columns]
    if len(set(names)) != len(names):
        duplicates = sorted({name for name in names if names.count(name) > 1})
        raise ValueError(f"result columns must have distinct names; repeated: {', '.join(duplicates)}")
    pairs = [(column["name"], converter(column["type"])) for column in columns]

    def convert_row(row: tuple) -> dict[str, Any]:
        return {name: convert(value) for (name, convert), value in zip(pairs, row, strict=True)}

    return convert_row


def _identity(value: Any) -> Any:
    return value


def _big_int(tree: dict[str, Any]) -> Converter:
    if tree["id"] == "bignum":
        return _bignum

    def convert(value: Any) -> Any:
        if value is None or -MAX_SAFE_INT <= value <= MAX_SAFE_INT:
            return value
        return str(value)

    return convert


def _bignum(value: Any) -> Any:
    # VARINT arrives as its decimal text. Only short texts become ints: int() refuses texts over
    # 4300 digits, and anything past 16 digits is beyond 2^53 anyway.
    if value is None or len(value) > 17:
        return value
    number = int(value)
    return number if -MAX_SAFE_INT <= number <= MAX_SAFE_INT else value


def _non_finite(value: float) -> str:
    return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")


def _double(value: Any) -> Any:
    if value is None or math.isfinite(value):
        return value
    return _non_finite(value)


_F32 = struct.Struct("f")


def _float32(value: Any) -> Any:
    if value is None:
        return None
    if not math.isfinite(value):
        return _non_finite(value)
    # A FLOAT reaches Python widened to a double (1.1 -> 1.100000023841858); print the shortest
    # decimal that reads back as the same float32, as DuckDB itself does. 9 digits always do.
    for digits in (6, 7, 8):
        candidate = float(f"{value:.{digits}g}")
        try:
            if _F32.unpack(_F32.pack(candidate))[0] == value:
                return candidate
        except OverflowError:  # rounded past float32's largest value
            continue
    return value


def _decimal(tree: dict[str, Any]) -> Converter:
    if tree["precision"] > MAX_NUMBER_DECIMAL_PRECISION:
        # Fixed point with the declared scale: str(Decimal) would say '0E-10' or '1.234E-7'.
        return lambda value: None if value is None else format(value, "f")
    if tree["scale"] == 0:
        return lambda value: None if value is None else int(value)
    return lambda value: None if value is None else float(value)


def _json_constant(text: str) -> str:
    return text  # NaN, Infinity, -Infinity: DuckDB's JSON accepts them, JSON output cannot


def _json_float(text: str) -> Any:
    number = float(text)
    return number if math.isfinite(number) else text


def _json(value: Any) -> Any:
    if value is None:
        return None
    return json.loads(value, parse_float=_json_float, parse_constant=_json_constant)


def _blob(value: Any) -> Any:
    return None if value is None else base64.b64encode(value).decode("ascii")


def _uuid(value: Any) -> Any:
    return None if value is None else str(value)


def _expanded(text: str) -> tuple[str, str | None, str | None]:
    """DuckDB's text of an out-of-range date/timestamp -> (ISO expanded date, time, offset)."""
    match = _DUCK_TEMPORAL_TEXT.fullmatch(text)
    if match is None:
        raise ValueError(f"unexpected date text from DuckDB: {text!r}")
    year_text, month, day, bc, time, offset = match.groups()
    year = 1 - int(year_text) if bc else int(year_text)  # astronomical: 1 BC is year 0
    sign = "+" if year > 9999 else "-" if year < 0 else ""  # ISO 8601 signs only expanded years
    return f"{sign}{abs(year):04d}-{month}-{day}", time, offset


def _date(value: Any) -> Any:
    if value is None or value in _INFINITIES:
        return value
    if isinstance(value, str):
        return _expanded(value)[0]
    return value.isoformat()  # a UNION member: the client's date


def _padded(clock: str, digits: int) -> str:
    """DuckDB's clock text with its fraction (DuckDB drops trailing zeros) at `digits` digits,
    as a type of that precision prints; none when it is zero."""
    whole, _, fraction = clock.partition(".")
    return f"{whole}.{fraction.ljust(digits, '0')}" if fraction else whole


def _time(value: Any) -> Any:
    if value is None or isinstance(value, str):  # '24:00:00' has no Python time
        return value
    return value.isoformat()


def _time_ns(value: Any) -> Any:
    if isinstance(value, str) and value != "24:00:00":
        return _padded(value, 9)
    return _time(value)


def _offset_text(seconds: int) -> str:
    sign = "-" if seconds < 0 else "+"
    hours, rest = divmod(abs(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{sign}{hours:02d}:{minutes:02d}" + (f":{secs:02d}" if secs else "")


def _normal_offset(offset: str) -> str:
    # DuckDB prints '+00', '+05:30', '+15:59:59'; JSON text wants at least ±HH:MM.
    return offset if len(offset) > 3 else offset + ":00"


def _time_tz(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, str):  # '24:00:00+00'
        match = re.fullmatch(r"(.*?)([+-]\d\d(?::\d\d){0,2})", value)
        return value if match is None else match[1] + _normal_offset(match[2])
    offset = value.utcoffset()
    clock = value.replace(tzinfo=None).isoformat()
    return clock + _offset_text(int(offset.total_seconds()) if offset is not None else 0)


def _timestamp(tree: dict[str, Any]) -> Converter:
    digits = 9 if tree["id"] in _NANOSECOND_TYPES else 6

    def convert(value: Any) -> Any:
        if value is None or value in _INFINITIES:
            return value
        if isinstance(value, str):
            day, time, _ = _expanded(value)
            return f"{day}T{_padded(time or '00:00:00', digits)}"
        return value.isoformat()  # a UNION member: the client's datetime

    return convert


_UTC = dt.UTC


def _timestamp_tz(value: Any) -> Any:
    if value is None or value in _INFINITIES:
        return value
    if isinstance(value, str):
        day, time, offset = _expanded(value)
        zone = "Z" if offset is None or offset.strip("+-:0") == "" else _normal_offset(offset)
        return f"{day}T{_padded(time or '00:00:00', 6)}{zone}"
    offset = value.utcoffset()  # a UNION member: the client's datetime
    if offset:
        try:
            value = value.astimezone(_UTC)
        except OverflowError:  # shifting would leave Python's range: keep the offset
            return value.isoformat()
    return value.replace(tzinfo=None).isoformat() + "Z"


_MICROS_PER_DAY = 86_400_000_000


def _interval(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, str):
        return _iso_duration(*_interval_parts(value))
    # A UNION member: the client's timedelta, months already folded into days.
    micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
    days, rest = divmod(abs(micros), _MICROS_PER_DAY)
    sign = -1 if micros < 0 else 1
    return _iso_duration(0, sign * days, sign * rest)


def _interval_parts(text: str) -> tuple[int, int, int]:
    """DuckDB's text of an INTERVAL -> its (months, days, microseconds), each signed."""
    match = _DUCK_INTERVAL_TEXT.fullmatch(text)
    if match is None:
        raise ValueError(f"unexpected interval text from DuckDB: {text!r}")
    years, months, days, minus, hours, minutes, seconds, fraction = match.groups()
    micros = ((int(hours or 0) * 60 + int(minutes or 0)) * 60 + int(seconds or 0)) * 1_000_000
    micros += int((fraction or "").ljust(6, "0"))
    return int(years or 0) * 12 + int(months or 0), int(days or 0), -micros if minus else micros


def _iso_duration(months: int, days: int, micros: int) -> str:
    """ISO 8601 duration of an interval's three parts, none folded into another."""
    if months <= 0 and days <= 0 and micros <= 0 and (months or days or micros):
        return "-" + _iso_duration(-months, -days, -micros)

    def signed(number: int, unit: str) -> str:
        return f"{number}{unit}" if number else ""

    years, rest = divmod(abs(months), 12)
    month_sign = -1 if months < 0 else 1
    text = signed(month_sign * years, "Y") + signed(month_sign * rest, "M") + signed(days, "D")
    sign = "-" if micros < 0 else ""
    hours, rest = divmod(abs(micros), 3_600_000_000)
    minutes, rest = divmod(rest, 60_000_000)
    seconds, fraction = divmod(rest, 1_000_000)
    clock = (f"{sign}{hours}H" if hours else "") + (f"{sign}{minutes}M" if minutes else "")
    if fraction:
        clock += sign + f"{seconds}.{fraction:06d}".rstrip("0") + "S"
    elif seconds:
        clock += f"{sign}{seconds}S"
    if clock:
        text += "T" + clock
    return f"P{text}" if text else "PT0S"


def _list(tree: dict[str, Any]) -> Converter:
    convert_item = converter(tree["child"])
    if convert_item is _identity:
        return lambda value: None if value is None else list(value)

    def convert(value: Any) -> Any:
        return None if value is None else [convert_item(item) for item in value]

    return convert


def _struct(tree: dict[str, Any]) -> Converter:
    fields = [(name, converter(child)) for name, child in tree["fields"]]

    def convert(value: Any) -> Any:
        if value is None:
            return None
        return {name: convert_field(value[name]) for name, convert_field in fields}

    return convert


def _key_is_hashable(tree: dict[str, Any]) -> bool:
    """Mirrors the Python client's KeyIsHashable: a MAP whose key type fails it arrives as
    {'key': [...], 'value': [...]} instead of a dict."""
    tid = tree["id"]
    if tid in ("list", "array", "map", "struct"):
        return False
    if tid == "union":
        return all(_key_is_hashable(child) for _, child in tree["members"])
    return True


def _map(tree: dict[str, Any]) -> Converter:
    convert_key, convert_value = converter(tree["key"]), converter(tree["value"])
    if tree["key"]["id"] == "varchar":

        def as_object(value: Any) -> Any:
            if value is None:
                return None
            return {key: convert_value(item) for key, item in value.items()}

        return as_object
    hashable = _key_is_hashable(tree["key"])

    def as_entries(value: Any) -> Any:
        if value is None:
            return None
        pairs = value.items() if hashable else zip(value["key"], value["value"], strict=True)
        return [{"key": convert_key(key), "value": convert_value(item)} for key, item in pairs]

    return as_entries


def _accepts(tree: dict[str, Any]) -> Callable[[Any], bool]:
    """Whether a Python value can be this type's fetched value: finds a union's member again."""
    tid = tree["id"]
    if tid in _SMALL_INTS or (tid in _BIG_INTS and tid != "bignum"):
        return lambda value: isinstance(value, int) and not isinstance(value, bool)
    kinds: dict[str, Any] = {
        "float": float,
        "double": float,
        "decimal": decimal.Decimal,
        "blob": bytes,
        "boolean": bool,
        "uuid": uuid.UUID,
        "interval": dt.timedelta,
        "list": list,
        "array": tuple,
    }
    if tid in kinds:
        kind = kinds[tid]
        return lambda value: isinstance(value, kind)
    if tid in ("varchar", "json"):
        return lambda value: isinstance(value, str)
    if tid == "bignum":
        return lambda value: isinstance(value, str) and _INT_TEXT.fullmatch(value) is not None
    if tid == "bit":
        return lambda value: isinstance(value, str) and value != "" and set(value) <= {"0", "1"}
    if tid == "enum":
        labels = frozenset(tree["values"])
        return lambda value: isinstance(value, str) and value in labels
    if tid == "date":
        return lambda value: type(value) is dt.date or _is_duck_temporal(value, time=False)
    if tid in _TIMESTAMPS or tid == _TIMESTAMP_TZ:
        return lambda value: isinstance(value, dt.datetime) or _is_duck_temporal(value, time=True)
    if tid in _TIMES:
        return lambda value: (isinstance(value, dt.time) and value.tzinfo is None) or value == "24:00:00"
    if tid == _TIME_TZ:
        return lambda value: (
            (isinstance(value, dt.time) and value.tzinfo is not None)
            or (isinstance(value, str) and value.startswith("24:00:00"))
        )
    if tid == "struct":
        names = [name for name, _ in tree["fields"]]
        return lambda value: isinstance(value, dict) and list(value) == names
    if tid == "map":
        return lambda value: isinstance(value, dict)
    if tid == "union":
        tests = [_accepts(child) for _, child in tree["members"]]
        return lambda value: any(test(value) for test in tests)
    return lambda value: value is None  # null


def _is_duck_temporal(value: Any, time: bool) -> bool:
    if not isinstance(value, str):
        return False
    match = _DUCK_TEMPORAL_TEXT.fullmatch(value)
    return match is not None and (match[5] is not None) == time


def _union(tree: dict[str, Any]) -> Converter:
    members = [(_accepts(child), converter(child)) for _, child in tree["members"]]

    def convert(value: Any) -> Any:
        if value is None:
            return None
        for accepts, convert_member in members:
            if accepts(value):
                return convert_member(value)
        for _, convert_member in members:  # no member claims it: the first that converts it
            try:
                return convert_member(value)
            except (TypeError, ValueError, AttributeError, KeyError):
                continue
        raise ValueError(f"no member of {tree.get('sql', 'the UNION')} fits the value {value!r}")

    return convert


_BUILDERS: dict[str, Callable[[dict[str, Any]], Converter]] = {
    **dict.fromkeys(_BIG_INTS, _big_int),
    "float": lambda tree: _float32,
    "double": lambda tree: _double,
    "decimal": _decimal,
    "json": lambda tree: _json,
    "blob": lambda tree: _blob,
    "uuid": lambda tree: _uuid,
    "date": lambda tree: _date,
    "time": lambda tree: _time,
    "time_ns": lambda tree: _time_ns,
    _TIME_TZ: lambda tree: _time_tz,
    **dict.fromkeys(_TIMESTAMPS, _timestamp),
    _TIMESTAMP_TZ: lambda tree: _timestamp_tz,
    "interval": lambda tree: _interval,
    "list": _list,
    "array": _list,
    "struct": _struct,
    "map": _map,
    "union": _union,
}
