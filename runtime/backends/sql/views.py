"""How a declared view reads its files, as SQL text: the same text when `lynxc build` checks the
statements over a sample and when the server reads the data a setting names."""

from __future__ import annotations

import re
from typing import Any

READERS = ("read_parquet", "read_csv", "read_json")
# An option is pasted as `name := literal`: the name is code, so only a plain identifier will do.
OPTION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def sql_literal(value: Any) -> str:
    """A value of the spec (a path, a reader option) as a SQL literal: quoted as data, never
    spliced as code. Lists and mappings of strings (read_csv's `columns`) become DuckDB list
    and struct literals."""
    if isinstance(value, list):
        return "[" + ", ".join(sql_literal(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{sql_literal(k)}: {sql_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    raise TypeError(f"{type(value).__name__} is not a reader option value")


def quoted(name: str) -> str:
    """An identifier as SQL text."""
    return '"' + name.replace('"', '""') + '"'


def reader_call(reader: str, path: str, options: dict[str, Any]) -> str:
    """`read_json('path', format := 'newline_delimited')`. The path and values are SQL literals;
    a reader or an option name out of shape is a ValueError, never pasted."""
    if reader not in READERS:
        raise ValueError(f"{reader!r} is not a reader of data files")
    for name in options:
        if not isinstance(name, str) or not OPTION_NAME.fullmatch(name):
            raise ValueError(f"reader option name {name!r} is not an identifier")
    args = [sql_literal(path), *(f"{name} := {sql_literal(value)}" for name, value in options.items())]
    return f"{reader}({', '.join(args)})"
