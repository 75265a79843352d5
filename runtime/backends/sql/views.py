"""How a declared view reads its files, as SQL text: the same text when `lynxc build` checks the
statements over a sample and when the server reads the data a setting names."""

from __future__ import annotations

from typing import Any


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
    """`read_json('path', format := 'newline_delimited')`."""
    if reader not in ("read_parquet", "read_csv", "read_json"):
        raise ValueError(f"{reader!r} is not a reader of data files")
    args = [sql_literal(path), *(f"{name} := {sql_literal(value)}" for name, value in options.items())]
    return f"{reader}({', '.join(args)})"
