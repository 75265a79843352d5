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

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..catalog import RESULTS, TIMEOUT_SETTING, CatalogError

ENGINE = "sqlite"


@dataclass(frozen=True)
class SqliteTool:
    name: str
    statement: str
    wrapped: str
    params: tuple[str, ...]
    columns: tuple[Mapping[str, Any], ...]  # {"name", "type" (tree), "nullable", "declared"}
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


def parse_sqlite_catalog(document: dict[str, Any]) -> SqliteCatalog:
    data = _object(document.get("data"), "sql.json: data")
    settings = _object(document.get("settings", {}), "sql.json: settings")
    tools = _object(document.get("tools"), "sql.json: tools")
    return SqliteCatalog(
        database_setting=_text(data.get("database_setting"), "sql.json: data.database_setting"),
        writable=_flag(data.get("writable", False), "sql.json: data.writable"),
        shape=_text(data.get("shape", ""), "sql.json: data.shape", empty=True),
        timeout_setting=_text(settings.get("timeout", TIMEOUT_SETTING), "sql.json: settings.timeout"),
        tools={name: _tool(name, _object(node, f"sql.json: tools.{name}")) for name, node in tools.items()},
    )


def _tool(name: str, node: dict[str, Any]) -> SqliteTool:
    where = f"sql.json: tools.{name}"
    result = node.get("result")
    if result not in RESULTS:
        raise CatalogError(f"{where}.result: {result!r} is not one of {', '.join(RESULTS)}")
    max_rows = node.get("max_rows")
    if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1:
        raise CatalogError(f"{where}.max_rows: {max_rows!r} is not a positive integer")
    columns = node.get("columns")
    if not isinstance(columns, list) or not all(
        isinstance(c, dict) and isinstance(c.get("name"), str) and isinstance(c.get("type"), dict)
        for c in columns
    ):
        raise CatalogError(f"{where}.columns: a list of {{name, type, nullable}}")
    params = node.get("params")
    if not isinstance(params, list) or not all(
        isinstance(p, dict) and isinstance(p.get("name"), str) for p in params
    ):
        raise CatalogError(f"{where}.params: a list of {{name, type}}")
    depends = _object(node.get("depends", {}), f"{where}.depends")
    return SqliteTool(
        name=name,
        statement=_text(node.get("statement"), f"{where}.statement"),
        wrapped=_text(node.get("wrapped"), f"{where}.wrapped"),
        params=tuple(p["name"] for p in params),
        columns=tuple(columns),
        result=result,
        max_rows=max_rows,
        read_only=_flag(node.get("read_only", True), f"{where}.read_only"),
        depends={table: dict(_object(cols, f"{where}.depends.{table}")) for table, cols in depends.items()},
    )


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise CatalogError(f"{where}: an object, not {json.dumps(value)[:40]}")
    return value


def _text(value: Any, where: str, empty: bool = False) -> str:
    if not isinstance(value, str) or (not value and not empty):
        raise CatalogError(f"{where}: a string")
    return value


def _flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise CatalogError(f"{where}: true or false")
    return value
