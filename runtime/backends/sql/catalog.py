"""The SQL tools a server declares, as the compiler wrote them to `generated/<server>/sql.json`.

`lynxc build` checks every statement against the declared data and writes what serving needs:
where the data comes from (settings naming a database file and data files read as views), and
for each tool its statement, the statement as it runs (`wrapped`: capped at max_rows + 1 rows),
its parameters' DuckDB types and its result columns' type trees (types.py). This module reads
that file back into frozen dataclasses; nothing here imports DuckDB.

The file's shape (format 1; the contract in notes/sql-contract.md):

    {"_generated": "...", "format": 1,
     "data": {"database": {"setting": "db_file", "writable": false,
                           "not_null": ["cities.name"]} | null,
              "views": [{"name": "countries", "reader": "read_json", "setting": "countries_file",
                         "options": {"format": "newline_delimited"}}]},
     "settings": {"threads": "duckdb_threads", "timeout": "sql_timeout_seconds"},
     "tools": {"top_countries": {"statement": "...", "wrapped": "...",
                                 "params": [{"name": "region", "type": "VARCHAR"}],
                                 "columns": [{"name": "name", "type": {TREE}, "nullable": true}],
                                 "result": "many", "max_rows": 100, "read_only": true}}}

`not_null` (optional, default []) lists the database's table columns, as lower-case
`table.column`, that the build saw NOT NULL in the database's schema: a result column proved
non-null from one of them holds only while the served database keeps the constraint
(connection.py checks it).

The file is the compiler's output, checked against its sha256 before it is read, so a shape
error is a bug or a hand edit; it still gets a message naming the key and the rule.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .views import OPTION_NAME, READERS

FORMAT = 1
RESULTS = ("many", "one")
# The implied settings of a server with SQL tools, spelled once (the backend's declaration, the
# compiler's settings schema and sql.json's defaults use these).
THREADS_SETTING = "duckdb_threads"
TIMEOUT_SETTING = "sql_timeout_seconds"
DEFAULT_THREADS = 2
DEFAULT_TIMEOUT_SECONDS = 30.0

# Reader options are spliced into the view's SQL as `name := literal`: names must be plain
# identifiers (views.OPTION_NAME, which reader_call enforces too), values literals of these
# shapes (views.sql_literal quotes them).

OptionValue = str | int | float | bool | tuple[str, ...] | Mapping[str, str]


class CatalogError(ValueError):
    """sql.json does not have the shape this runtime reads; the message names the key."""


@dataclass(frozen=True)
class SqlDatabase:
    """A DuckDB database file: its path is the value of `setting`; `not_null`, the columns
    (`table.column`, lower case) the build relied on being NOT NULL."""

    setting: str
    writable: bool = False
    not_null: tuple[str, ...] = ()
    shape: str = ""  # where the build took the tables from (`schema: PATH`, `sample: PATH`)


@dataclass(frozen=True)
class SqlView:
    """A view `name` over data files (a path or glob, the value of `setting`) read by `reader`."""

    name: str
    reader: str
    setting: str
    options: tuple[tuple[str, OptionValue], ...] = ()
    shape: str = ""  # where the build took the columns from (`columns`, `sample: PATH`)

    def options_dict(self) -> dict[str, Any]:
        """The options as views.reader_call takes them (lists and mappings as JSON gave them)."""
        return {name: _plain(value) for name, value in self.options}


def _plain(value: OptionValue) -> Any:
    if isinstance(value, tuple):
        return list(value)
    return dict(value) if isinstance(value, Mapping) else value


@dataclass(frozen=True)
class SqlParam:
    name: str  # as written in the statement ($name) and published in the inputSchema
    type: str  # its DuckDB type, e.g. VARCHAR, DOUBLE, VARCHAR[]


@dataclass(frozen=True)
class SqlColumn:
    name: str
    type: Mapping[str, Any]  # the type tree (types.py)
    nullable: bool

    def as_dict(self) -> dict[str, Any]:
        """The column as types.row_converter takes it."""
        return {"name": self.name, "type": self.type, "nullable": self.nullable}


@dataclass(frozen=True)
class SqlTool:
    name: str
    statement: str  # as the spec wrote it (messages)
    wrapped: str  # what runs: the statement capped at max_rows + 1 rows
    params: tuple[SqlParam, ...]
    columns: tuple[SqlColumn, ...]
    result: Literal["many", "one"]
    max_rows: int
    read_only: bool


@dataclass(frozen=True)
class SqlCatalog:
    database: SqlDatabase | None
    views: tuple[SqlView, ...]
    threads_setting: str
    timeout_setting: str
    tools: Mapping[str, SqlTool]
    engine: str = "duckdb"

    def data_settings(self) -> tuple[str, ...]:
        """Every setting that names data this server reads (the database first)."""
        first = (self.database.setting,) if self.database else ()
        return (*first, *(view.setting for view in self.views))


def parse_catalog(text: str) -> SqlCatalog:
    """sql.json text -> SqlCatalog, or CatalogError naming the first key out of shape."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as err:
        raise CatalogError(f"sql.json is not JSON: {err}") from None
    root = _Node(document, "sql.json")
    root.object()
    if document.get("format") != FORMAT:
        raise CatalogError(f"sql.json: format {document.get('format')!r} (this runtime reads {FORMAT})")
    engine = document.get("engine", "duckdb")
    if engine == "postgres":
        from .postgres.catalog import parse_pg_catalog

        return parse_pg_catalog(document)  # type: ignore[return-value]  # run_sql dispatches on .engine
    if engine == "sqlite":
        from .sqlite.catalog import parse_sqlite_catalog

        return parse_sqlite_catalog(document)  # type: ignore[return-value]
    if engine != "duckdb":
        raise CatalogError(f"sql.json: engine {engine!r} is not one this runtime serves")
    data = root.key("data").object()
    database_node = data.key("database", None)
    database = None if database_node.value is None else _database(database_node)
    views = tuple(_view(node) for node in data.key("views", []).array())
    _unique([view.name.lower() for view in views], "sql.json: data.views", "view name")
    settings = root.key("settings", {}).object()
    tools_node = root.key("tools").object()
    tools = {name: _tool(name, tools_node.key(name)) for name in tools_node.value}
    return SqlCatalog(
        database=database,
        views=views,
        threads_setting=settings.key("threads", THREADS_SETTING).text(),
        timeout_setting=settings.key("timeout", TIMEOUT_SETTING).text(),
        tools=tools,
    )


def _database(node: _Node) -> SqlDatabase:
    node.object()
    return SqlDatabase(
        setting=node.key("setting").text(),
        writable=node.key("writable", False).boolean(),
        not_null=tuple(item.text() for item in node.key("not_null", []).array()),
        shape=_shape(node),
    )


def _view(node: _Node) -> SqlView:
    node.object()
    reader = node.key("reader").text()
    if reader not in READERS:
        raise CatalogError(f"{node.where}.reader: {reader!r} is not one of {', '.join(READERS)}")
    options = node.key("options", {}).object()
    return SqlView(
        name=node.key("name").text(),
        reader=reader,
        setting=node.key("setting").text(),
        options=tuple((name, _option(name, options.key(name))) for name in options.value),
        shape=_shape(node),
    )


def _shape(node: _Node) -> str:
    """Where the build took the data's shape from; "" in a sql.json from before it was recorded."""
    shape = node.key("shape", None)
    return "" if shape.value is None else shape.text()


def _option(name: str, node: _Node) -> OptionValue:
    if not OPTION_NAME.fullmatch(name):
        raise CatalogError(f"{node.where}: a reader option name must be an identifier")
    value = node.value
    if isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    if isinstance(value, dict) and all(isinstance(item, str) for item in value.values()):
        return dict(value)
    raise CatalogError(
        f"{node.where}: a reader option is a string, number, boolean, list of strings or "
        f"mapping of strings, not {json.dumps(value)[:80]}"
    )


def tool_shape(node: _Node) -> tuple[str, tuple[SqlColumn, ...], int]:
    """A tool entry's result kind, columns and max_rows, checked: the part every engine's
    sql.json shares."""
    node.object()
    result = node.key("result", "many").text()
    if result not in RESULTS:
        raise CatalogError(f"{node.where}.result: {result!r} is not many or one")
    columns = tuple(_column(item) for item in node.key("columns").array())
    _unique([c.name for c in columns], f"{node.where}.columns", "column")
    max_rows = node.key("max_rows").integer()
    if max_rows < 1:
        raise CatalogError(f"{node.where}.max_rows: {max_rows} is not a positive integer")
    return result, columns, max_rows


def _tool(name: str, node: _Node) -> SqlTool:
    result, columns, max_rows = tool_shape(node)
    params = tuple(_param(item) for item in node.key("params", []).array())
    _unique([p.name for p in params], f"{node.where}.params", "parameter")
    return SqlTool(
        name=name,
        statement=node.key("statement").text(),
        wrapped=node.key("wrapped").text(),
        params=params,
        columns=columns,
        result=result,  # type: ignore[arg-type]  # checked above
        max_rows=max_rows,
        read_only=node.key("read_only", True).boolean(),
    )


def _param(node: _Node) -> SqlParam:
    node.object()
    return SqlParam(name=node.key("name").text(), type=node.key("type").text())


def _column(node: _Node) -> SqlColumn:
    node.object()
    tree = node.key("type").object()
    tree.key("id").text()
    tree.key("sql").text()
    nullable = node.key("nullable", True).boolean()
    return SqlColumn(name=node.key("name").text(), type=tree.value, nullable=nullable)


def _unique(names: list[str], where: str, what: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise CatalogError(f"{where}: {what} {name!r} appears twice")
        seen.add(name)


_MISSING = object()


class _Node:
    """A JSON value and where it sits (`sql.json: tools.top.params[0].type`), for messages."""

    def __init__(self, value: Any, where: str):
        self.value, self.where = value, where

    def key(self, name: str, default: Any = _MISSING) -> _Node:
        where = f"{self.where}.{name}" if self.where != "sql.json" else f"sql.json: {name}"
        if name not in self.value:
            if default is _MISSING:
                raise CatalogError(f"{where}: required key is missing")
            return _Node(default, where)
        return _Node(self.value[name], where)

    def object(self) -> _Node:
        return self._expect(dict, "an object")

    def array(self) -> list[_Node]:
        self._expect(list, "an array")
        return [_Node(item, f"{self.where}[{i}]") for i, item in enumerate(self.value)]

    def text(self) -> str:
        self._expect(str, "a string")
        if not self.value:
            raise CatalogError(f"{self.where}: must not be empty")
        return self.value

    def boolean(self) -> bool:
        return self._expect(bool, "true or false").value

    def integer(self) -> int:
        if isinstance(self.value, bool) or not isinstance(self.value, int):
            raise CatalogError(f"{self.where}: expected an integer, got {json.dumps(self.value)[:80]}")
        return self.value

    def _expect(self, kind: type, what: str) -> _Node:
        if not isinstance(self.value, kind):
            raise CatalogError(f"{self.where}: expected {what}, got {json.dumps(self.value)[:80]}")
        return self
