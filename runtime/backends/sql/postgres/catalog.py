"""sql.json of a server over PostgreSQL (`"engine": "postgres"`), as frozen dataclasses.

    {"_generated": "...", "format": 1, "engine": "postgres",
     "data": {"dsn_setting": "database_url", "writable": false, "shape": "schema: schema.sql"},
     "settings": {"timeout": "sql_timeout_seconds", "pool_size": "postgres_pool_size"},
     "tools": {"film_search": {
         "statement": "... $query ...", "wrapped": "SELECT * FROM (\\n... $1 ...\\n) AS lynxc_rows LIMIT 26",
         "params": [{"name": "query", "type": "text", "oid": 25}],       # in $1..$n order
         "columns": [{"name": "title", "type": {TREE}, "nullable": false}],
         "result": "many", "max_rows": 25, "read_only": true,
         "depends": {"relations": {"public.film": {"title": "text not null"}},
                     "types": {"public.mpaa_rating": "enum(G,PG)"}},
         "fingerprint": "<sha256 of canonical depends>"}}}

The same strictness as the DuckDB form (../catalog.py, whose node reader this reuses): a
hand-edited or corrupted file is one error naming the key and the rule.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from ..sql_json import TIMEOUT_SETTING, CatalogError, Node, SqlColumn, tool_shape, unique

ENGINE = "postgres"
POOL_SIZE_SETTING = "postgres_pool_size"
DEFAULT_POOL_SIZE = 10
_FINGERPRINT = re.compile(r"[0-9a-f]{64}")
_PLACEHOLDER = re.compile(r"\$([0-9]+)")


@dataclass(frozen=True)
class PgParam:
    name: str  # as published in the inputSchema ($name in the statement)
    type: str  # as Postgres inferred it (format_type), e.g. text, integer, text[]
    oid: int  # its type OID (0 when Postgres left it unknown)


@dataclass(frozen=True)
class PgDepends:
    """The catalog entries a statement reads, as the build described them (depends.py)."""

    relations: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    types: Mapping[str, str] = field(default_factory=dict)
    functions: Mapping[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, dict]:
        found = {
            "relations": {name: dict(columns) for name, columns in self.relations.items()},
            "types": dict(self.types),
        }
        if self.functions:
            found["functions"] = dict(self.functions)
        return found


@dataclass(frozen=True)
class PgTool:
    name: str
    statement: str  # as the spec wrote it, with $name (messages)
    wrapped: str  # what runs: $1..$n, capped at max_rows + 1 rows
    params: tuple[PgParam, ...]  # in $1..$n order
    columns: tuple[SqlColumn, ...]
    result: Literal["many", "one"]
    max_rows: int
    read_only: bool
    depends: PgDepends
    fingerprint: str


@dataclass(frozen=True)
class PgCatalog:
    dsn_setting: str
    writable: bool
    shape: str
    timeout_setting: str
    pool_size_setting: str
    tools: Mapping[str, PgTool]
    engine: str = ENGINE

    def data_settings(self) -> tuple[str, ...]:
        return (self.dsn_setting,)


def parse_pg_catalog(document: Mapping) -> PgCatalog:
    """A sql.json document already read as JSON (format checked) -> PgCatalog."""
    root = Node(document, "sql.json")
    data = root.key("data").object()
    writable = data.key("writable", False).boolean()
    settings = root.key("settings", {}).object()
    tools_node = root.key("tools").object()
    tools = {name: _tool(name, tools_node.key(name), writable) for name in tools_node.value}
    shape = data.key("shape", None)
    return PgCatalog(
        dsn_setting=data.key("dsn_setting").text(),
        writable=writable,
        shape="" if shape.value is None else shape.text(),
        timeout_setting=settings.key("timeout", TIMEOUT_SETTING).text(),
        pool_size_setting=settings.key("pool_size", POOL_SIZE_SETTING).text(),
        tools=tools,
    )


def _tool(name: str, node: Node, writable: bool) -> PgTool:
    result, columns, max_rows = tool_shape(node)
    params = tuple(_param(item) for item in node.key("params", []).array())
    unique([p.name for p in params], f"{node.where}.params", "parameter")
    read_only = node.key("read_only", True).boolean()
    if not read_only and not writable:
        # The build marks a tool writing only on a server that allows writes; anything else is a
        # hand edit that would take the read-only transaction away.
        raise CatalogError(f"{node.where}.read_only: false on a server whose data.writable is false")
    wrapped_node = node.key("wrapped")
    wrapped = wrapped_node.text()
    used = {int(n) for n in _PLACEHOLDER.findall(wrapped)}
    if used - set(range(1, len(params) + 1)):
        raise CatalogError(
            f"{wrapped_node.where}: uses ${max(used)} but the tool has {len(params)} parameters"
        )
    fingerprint_node = node.key("fingerprint")
    fingerprint = fingerprint_node.text()
    if not _FINGERPRINT.fullmatch(fingerprint):
        raise CatalogError(f"{fingerprint_node.where}: expected a sha256 in lower-case hex")
    return PgTool(
        name=name,
        statement=node.key("statement").text(),
        wrapped=wrapped,
        params=params,
        columns=columns,
        result=result,  # type: ignore[arg-type]  # checked above
        max_rows=max_rows,
        read_only=read_only,
        depends=_depends(node.key("depends", {})),
        fingerprint=fingerprint,
    )


def _param(node: Node) -> PgParam:
    node.object()
    oid = node.key("oid").integer()
    if oid < 0:
        raise CatalogError(f"{node.where}.oid: {oid} is not a type OID")
    return PgParam(name=node.key("name").text(), type=node.key("type").text(), oid=oid)


def _depends(node: Node) -> PgDepends:
    node.object()
    relations_node = node.key("relations", {}).object()
    relations = {}
    for relation in relations_node.value:
        columns = relations_node.key(relation).object()
        relations[relation] = {column: columns.key(column).text() for column in columns.value}
    types_node = node.key("types", {}).object()
    types = {name: types_node.key(name).text() for name in types_node.value}
    functions_node = node.key("functions", {}).object()
    functions = {name: functions_node.key(name).text() for name in functions_node.value}
    return PgDepends(relations=relations, types=types, functions=functions)
