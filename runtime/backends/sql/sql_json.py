"""Reading sql.json, the part every engine's reader shares: JSON nodes that know where they sit
(so an error names the key, `sql.json: tools.top.params[0].type`), the error they raise, and a
tool entry's result kind, columns and max_rows. The engines' readers (catalog.py for DuckDB,
postgres/catalog.py, sqlite/catalog.py) build on this module and never on one another.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

FORMAT = 1
RESULTS = ("many", "one")
# The implied settings of a server with SQL tools, spelled once (the backend's declaration, the
# compiler's settings schema and sql.json's defaults use these).
THREADS_SETTING = "duckdb_threads"
TIMEOUT_SETTING = "sql_timeout_seconds"


class CatalogError(ValueError):
    """sql.json does not have the shape this runtime reads; the message names the key."""


@dataclass(frozen=True)
class SqlColumn:
    name: str
    type: Mapping[str, Any]  # the type tree (types.py)
    nullable: bool

    def as_dict(self) -> dict[str, Any]:
        """The column as types.row_converter takes it."""
        return {"name": self.name, "type": self.type, "nullable": self.nullable}


def tool_shape(node: Node) -> tuple[str, tuple[SqlColumn, ...], int]:
    """A tool entry's result kind, columns and max_rows, checked: the part every engine's
    sql.json shares."""
    node.object()
    result = node.key("result", "many").text()
    if result not in RESULTS:
        raise CatalogError(f"{node.where}.result: {result!r} is not many or one")
    columns = tuple(column(item) for item in node.key("columns").array())
    unique([c.name for c in columns], f"{node.where}.columns", "column")
    max_rows = node.key("max_rows").integer()
    if max_rows < 1:
        raise CatalogError(f"{node.where}.max_rows: {max_rows} is not a positive integer")
    return result, columns, max_rows


def column(node: Node) -> SqlColumn:
    node.object()
    tree = node.key("type").object()
    tree.key("id").text()
    tree.key("sql").text()
    nullable = node.key("nullable", True).boolean()
    return SqlColumn(name=node.key("name").text(), type=tree.value, nullable=nullable)


def unique(names: list[str], where: str, what: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise CatalogError(f"{where}: {what} {name!r} appears twice")
        seen.add(name)


_MISSING = object()


class Node:
    """A JSON value and where it sits (`sql.json: tools.top.params[0].type`), for messages."""

    def __init__(self, value: Any, where: str):
        self.value, self.where = value, where

    def key(self, name: str, default: Any = _MISSING) -> Node:
        where = f"{self.where}.{name}" if self.where != "sql.json" else f"sql.json: {name}"
        if name not in self.value:
            if default is _MISSING:
                raise CatalogError(f"{where}: required key is missing")
            return Node(default, where)
        return Node(self.value[name], where)

    def object(self) -> Node:
        return self._expect(dict, "an object")

    def array(self) -> list[Node]:
        self._expect(list, "an array")
        return [Node(item, f"{self.where}[{i}]") for i, item in enumerate(self.value)]

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

    def _expect(self, kind: type, what: str) -> Node:
        if not isinstance(self.value, kind):
            raise CatalogError(f"{self.where}: expected {what}, got {json.dumps(self.value)[:80]}")
        return self
