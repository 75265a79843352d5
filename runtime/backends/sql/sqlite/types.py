"""SQLite declared column types -> type trees, JSON Schemas and converters that check each value fits.

SQLite types values, not columns: a column's declared type only gives it an affinity, and any
column may hold a value of another storage class (text in an INTEGER column, a blob anywhere).
So the build derives a tool's output schema from the declared types, and serving checks every
value against its column's tree: a value that does not fit is a tool error naming the column
and the row (`Misfit`), never a value of the wrong type in an answer.

Declared type -> tree id (SQLite's affinity rules, with a few names SQLite stores by convention):

  contains INT                     bigint    integer; beyond 2^53 its decimal text
  BOOL, BOOLEAN                    boolean   0 / 1 -> false / true (anything else does not fit)
  DATE                             date      'YYYY-MM-DD' text (a real calendar date)
  DATETIME, TIMESTAMP              timestamp 'YYYY-MM-DD HH:MM[:SS[.fff]]' (or with T) ->
                                             'YYYY-MM-DDTHH:MM:SS[.fff]' (naive, as stored)
  JSON                             json      text holding one JSON value -> that value
  contains CHAR, CLOB or TEXT      varchar   text
  contains BLOB                    blob      bytes -> base64
  contains REAL, FLOA or DOUB      double    number; Infinity/-Infinity as strings
  anything else (NUMERIC, DECIMAL) sqlite_numeric  integer (beyond 2^53 as text) or number
  none (an expression, or a column declared without a type)
                                   sqlite_any  whatever SQLite holds: integer, number, text,
                                             or a blob as base64 text

Numbers are what SQLite stored (REAL is a double: DECIMAL(10,2) keeps no more digits than that).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import re
from collections.abc import Callable
from typing import Any

from ..types import MAX_SAFE_INT, json_schema

ANY = "sqlite_any"
NUMERIC = "sqlite_numeric"
_NAMED = {
    "BOOL": "boolean",
    "BOOLEAN": "boolean",
    "DATE": "date",
    "DATETIME": "timestamp",
    "TIMESTAMP": "timestamp",
    "JSON": "json",
}
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATETIME = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})[ T]([0-9]{2}:[0-9]{2})(:[0-9]{2}(\.[0-9]{1,6})?)?")
_SHOWN_CHARS = 40

Converter = Callable[[Any], Any]


class Misfit(ValueError):
    """A stored value that does not fit its column's declared type; the message says how."""


def sqlite_tree(declared: str) -> dict[str, Any]:
    """A result column's declared type (as SQLite reports it, '' for none) -> its type tree."""
    upper = declared.upper()
    first = re.split(r"[\s(]", upper.strip(), maxsplit=1)[0] if upper.strip() else ""
    if "INT" in upper:
        tid = "bigint"
    elif first in _NAMED:
        tid = _NAMED[first]
    elif any(word in upper for word in ("CHAR", "CLOB", "TEXT")):
        tid = "varchar"
    elif "BLOB" in upper:
        tid = "blob"
    elif any(word in upper for word in ("REAL", "FLOA", "DOUB")):
        tid = "double"
    elif not upper.strip():
        tid = ANY
    else:
        tid = NUMERIC
    return {"id": tid, "sql": declared or "(no declared type)"}


def sqlite_json_schema(tree: dict[str, Any], nullable: bool) -> dict[str, Any]:
    """The JSON Schema of a column's values (types.json_schema for the trees DuckDB shares)."""
    tid = tree["id"]
    if tid not in (ANY, NUMERIC):
        return json_schema(tree, nullable)
    options: list[dict[str, Any]] = [
        {"type": "integer", "minimum": -MAX_SAFE_INT, "maximum": MAX_SAFE_INT},
        {"type": "number"},
        {"type": "string"},  # integers past 2^53 as digits, non-finite numbers as words
    ]
    if tid == NUMERIC:
        options[2] = {"type": "string", "pattern": "^(-?[0-9]+|Infinity|-Infinity)$"}
    if nullable:
        options.append({"type": "null"})
    return {"anyOf": options}


def converter(tree: dict[str, Any]) -> Converter:
    """The function from a value sqlite3 fetched to its JSON value; Misfit when it does not fit."""
    return _CONVERTERS[tree["id"]]


def row_converter(columns: list[dict[str, Any]]) -> Callable[[tuple, int], dict[str, Any]]:
    """(row, its 1-based number) -> the row object; Misfit names the column and the row."""
    parts = [(c["name"], converter(c["type"]), c.get("nullable", True), c["type"]) for c in columns]

    def convert(row: tuple, number: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for (name, convert_one, nullable, tree), value in zip(parts, row, strict=True):
            try:
                if value is None:
                    if not nullable:
                        raise Misfit("is NULL, but the build proved it never is")
                    out[name] = None
                else:
                    out[name] = convert_one(value)
            except Misfit as err:
                raise Misfit(f"column '{name}' ({tree['sql']}), row {number}: {err}") from None
        return out

    return convert


def shown(value: Any) -> str:
    """A stored value as a message quotes it: its storage class and a bounded text."""
    if isinstance(value, bytes):
        return f"a {len(value)}-byte BLOB"
    kind = {int: "INTEGER", float: "REAL", str: "TEXT"}.get(type(value), type(value).__name__)
    text = repr(value)
    if len(text) > _SHOWN_CHARS:
        text = text[: _SHOWN_CHARS - 1] + "…"
    return f"{kind} {text}"


def _integer(value: Any) -> Any:
    if type(value) is not int:
        raise Misfit(f"holds {shown(value)}, not an integer")
    return value if -MAX_SAFE_INT <= value <= MAX_SAFE_INT else str(value)


def _float(value: float) -> Any:
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if math.isnan(value):  # SQLite stores NaN as NULL; kept for safety
        return "NaN"
    return value


def _double(value: Any) -> Any:
    if type(value) is int:
        return float(value)
    if type(value) is not float:
        raise Misfit(f"holds {shown(value)}, not a number")
    return _float(value)


def _numeric(value: Any) -> Any:
    if type(value) is int:
        return _integer(value)
    if type(value) is float:
        return _float(value)
    raise Misfit(f"holds {shown(value)}, not a number")


def _text(value: Any) -> Any:
    if type(value) is not str:
        raise Misfit(f"holds {shown(value)}, not text")
    return value


def _blob(value: Any) -> Any:
    if type(value) is not bytes:
        raise Misfit(f"holds {shown(value)}, not a BLOB")
    return base64.b64encode(value).decode("ascii")


def _boolean(value: Any) -> Any:
    if type(value) is not int or value not in (0, 1):
        raise Misfit(f"holds {shown(value)}, not a boolean (0 or 1)")
    return value == 1


def _date(value: Any) -> Any:
    if type(value) is not str or not _DATE.fullmatch(value):
        raise Misfit(f"holds {shown(value)}, not a date (YYYY-MM-DD)")
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        raise Misfit(f"holds {shown(value)}, not a calendar date") from None
    return value


def _timestamp(value: Any) -> Any:
    match = _DATETIME.fullmatch(value) if type(value) is str else None
    if match is None:
        raise Misfit(f"holds {shown(value)}, not a date and time (YYYY-MM-DD HH:MM:SS)")
    date, minutes, seconds = match.group(1), match.group(2), match.group(3) or ":00"
    text = f"{date}T{minutes}{seconds}"
    try:
        dt.datetime.fromisoformat(text)
    except ValueError:
        raise Misfit(f"holds {shown(value)}, not a calendar date and time") from None
    return text


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _json(value: Any) -> Any:
    if type(value) is not str:
        raise Misfit(f"holds {shown(value)}, not JSON text")
    try:
        return json.loads(value, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        raise Misfit(f"holds {shown(value)}, not one JSON value") from None


def _any(value: Any) -> Any:
    if type(value) is int:
        return _integer(value)
    if type(value) is float:
        return _float(value)
    if type(value) is bytes:
        return base64.b64encode(value).decode("ascii")
    return value


_CONVERTERS: dict[str, Converter] = {
    "bigint": _integer,
    "double": _double,
    NUMERIC: _numeric,
    "varchar": _text,
    "blob": _blob,
    "boolean": _boolean,
    "date": _date,
    "timestamp": _timestamp,
    "json": _json,
    ANY: _any,
}
