"""sql.json of a server over SQLite (`"engine": "sqlite"`), read into frozen dataclasses.

{"_generated": "...", "format": 1, "engine": "sqlite",
 "data": {"database_setting": "db_path", "writable": false, "shape": "schema: schema.sql"},
 "settings": {"timeout": "sql_timeout_seconds"},
 "tools": {"find": {"statement": "as written", "wrapped": "what runs (no final ;)",
                    "params": [{"name": "q", "type": "string"}],
                    "columns": [{"name": "code", "type": {TREE}, "nullable": false,
                                 "declared": "TEXT"}],
                    "result": "many", "max_rows": 100, "read_only": true,
                    "depends": {"countries": {"code": "TEXT NOT NULL"}},
                    "fingerprint": "sha256 of depends"}}}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from ..sql_json import TIMEOUT_SETTING, CatalogError, Node, SqlColumn, tool_shape, unique

ENGINE = "sqlite"


@dataclass(frozen=True)
class SqliteTool:
    name: str
    statement: str
    wrapped: str
    params: tuple[str, ...]
    columns: tuple[SqlColumn, ...]
    result: Literal["many", "one"]
    max_rows: int
    read_only: bool
    depends: Mapping[str, Mapping[str, str]]  # table -> column -> declared type [NOT NULL]


@dataclass(frozen=True)
class SqliteCatalog:
    database_setting: str
    writable: bool
    shape: str
    timeout_setting: str
    tools: Mapping[str, SqliteTool]
    engine: str = ENGINE

    def data_settings(self) -> tuple[str, ...]:
        return (self.database_setting,)


def parse_sqlite_catalog(document: Mapping) -> SqliteCatalog:
    """A sql.json document already read as JSON (format checked) -> SqliteCatalog."""
    root = Node(document, "sql.json")
    data = root.key("data").object()
    writable = data.key("writable", False).boolean()
    settings = root.key("settings", {}).object()
    tools_node = root.key("tools").object()
    shape = data.key("shape", None)
    return SqliteCatalog(
        database_setting=data.key("database_setting").text(),
        writable=writable,
        shape="" if shape.value is None else shape.text(),
        timeout_setting=settings.key("timeout", TIMEOUT_SETTING).text(),
        tools={name: _tool(name, tools_node.key(name), writable) for name in tools_node.value},
    )


def _tool(name: str, node: Node, writable: bool) -> SqliteTool:
    result, columns, max_rows = tool_shape(node)
    params = tuple(item.object().key("name").text() for item in node.key("params", []).array())
    unique(list(params), f"{node.where}.params", "parameter")
    read_only = node.key("read_only", True).boolean()
    if not read_only and not writable:
        raise CatalogError(f"{node.where}.read_only: false on a server whose data.writable is false")
    depends_node = node.key("depends", {}).object()
    depends = {table: _columns_declared(depends_node.key(table)) for table in depends_node.value}
    return SqliteTool(
        name=name,
        statement=node.key("statement").text(),
        wrapped=node.key("wrapped").text(),
        params=params,
        columns=columns,
        result=result,  # type: ignore[arg-type]  # tool_shape checked it
        max_rows=max_rows,
        read_only=read_only,
        depends=depends,
    )


def _columns_declared(node: Node) -> dict[str, str]:
    """One table's entry of `depends`: column -> its declared type (may be "": SQLite allows a
    column with no type)."""
    node.object()
    for name in node.value:
        if not isinstance(node.value[name], str):
            raise CatalogError(f"{node.where}.{name}: expected a string")
    return dict(node.value)
