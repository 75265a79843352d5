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

from .sql_json import (  # noqa: F401  # RESULTS, SqlColumn: re-exported for the DuckDB backend
    FORMAT,
    RESULTS,
    THREADS_SETTING,
    TIMEOUT_SETTING,
    CatalogError,
    Node,
    SqlColumn,
    tool_shape,
    unique,
)
from .views import OPTION_NAME, READERS

DEFAULT_THREADS = 2
DEFAULT_TIMEOUT_SECONDS = 30.0

# Reader options are spliced into the view's SQL as `name := literal`: names must be plain
# identifiers (views.OPTION_NAME, which reader_call enforces too), values literals of these
# shapes (views.sql_literal quotes them).

OptionValue = str | int | float | bool | tuple[str, ...] | Mapping[str, str]


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
    root = Node(document, "sql.json")
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
    unique([view.name.lower() for view in views], "sql.json: data.views", "view name")
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


def _database(node: Node) -> SqlDatabase:
    node.object()
    return SqlDatabase(
        setting=node.key("setting").text(),
        writable=node.key("writable", False).boolean(),
        not_null=tuple(item.text() for item in node.key("not_null", []).array()),
        shape=_shape(node),
    )


def _view(node: Node) -> SqlView:
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


def _shape(node: Node) -> str:
    """Where the build took the data's shape from; "" in a sql.json from before it was recorded."""
    shape = node.key("shape", None)
    return "" if shape.value is None else shape.text()


def _option(name: str, node: Node) -> OptionValue:
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


def _tool(name: str, node: Node) -> SqlTool:
    result, columns, max_rows = tool_shape(node)
    params = tuple(_param(item) for item in node.key("params", []).array())
    unique([p.name for p in params], f"{node.where}.params", "parameter")
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


def _param(node: Node) -> SqlParam:
    node.object()
    return SqlParam(name=node.key("name").text(), type=node.key("type").text())
