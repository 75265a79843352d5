"""A generated server folder over Postgres, written by the tests themselves: sql.json in the
Postgres form (the build writes it; these tests need it before and beside the build), with each
statement prepared against the real database here, plus the server.py, tools.json and input
models the runtime host loads from generated/<server>/.

The output schemas are left open (`{"type": "object"}`): what these tests check is the serving
(pool, transactions, cancellation, failures), the values' types belong to the types module."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from lynxc.runtime.backends.sql.postgres.depends import (
    RELATION_COLUMNS,
    TYPE_SHAPE,
    fingerprint,
    relation_entry,
    type_entry,
)

DSN_SETTING = "database_url"
_NAME = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_JSON_TYPES = {"integer": "integer", "number": "number", "string": "string", "boolean": "boolean"}


@dataclass(frozen=True)
class Tool:
    name: str
    statement: str  # with $name parameters
    params: dict[str, str] = field(default_factory=dict)  # name -> JSON Schema type
    result: str = "many"
    max_rows: int = 25
    read_only: bool = True
    relations: dict[str, list[str]] = field(default_factory=dict)  # what the statement reads
    types: tuple[str, ...] = ()
    wrap: bool = True  # False: run as written (a data-modifying CTE cannot be wrapped)


def numbered(statement: str) -> tuple[str, list[str]]:
    """$name -> $1..$n in first-occurrence order; the names in that order."""
    order: list[str] = []

    def number(match: re.Match[str]) -> str:
        if match.group(1) not in order:
            order.append(match.group(1))
        return f"${order.index(match.group(1)) + 1}"

    return _NAME.sub(number, statement), order


def sql_entry(conn: psycopg.Connection, tool: Tool) -> dict[str, Any]:
    """The tool's sql.json entry, its statement prepared and described on `conn`."""
    text, order = numbered(tool.statement)
    wrapped = f"SELECT * FROM (\n{text}\n) AS lynxc_rows LIMIT {tool.max_rows + 1}" if tool.wrap else text
    conn.pgconn.prepare(b"described", wrapped.encode())
    described = conn.pgconn.describe_prepared(b"described")
    conn.execute("DEALLOCATE described")
    oids = [described.param_type(i) for i in range(described.nparams)]
    params = [
        {"name": name, "type": _format_type(conn, oid, -1), "oid": oid}
        for name, oid in zip(order, oids, strict=True)
    ]
    columns = []
    for i in range(described.nfields):
        sql = _format_type(conn, described.ftype(i), described.fmod(i))
        columns.append(
            {"name": described.fname(i).decode(), "type": {"id": "varchar", "sql": sql}, "nullable": True}
        )
    relations = {}
    for relation, wanted in tool.relations.items():
        live = relation_entry(conn.execute(RELATION_COLUMNS.replace("$1", "%s"), (relation,)).fetchall())
        relations[relation] = {column: live[column] for column in wanted}
    types = {
        name: type_entry(conn.execute(TYPE_SHAPE.replace("$1", "%s"), (name,)).fetchone())
        for name in tool.types
    }
    depends = {"relations": relations, "types": types}
    return {
        "statement": tool.statement,
        "wrapped": wrapped,
        "params": params,
        "columns": columns,
        "result": tool.result,
        "max_rows": tool.max_rows,
        "read_only": tool.read_only,
        "depends": depends,
        "fingerprint": fingerprint(depends),
    }


def _format_type(conn: psycopg.Connection, oid: int, typmod: int) -> str:
    row = conn.execute("SELECT format_type(%s, %s)", (oid, typmod if typmod >= 0 else None)).fetchone()
    assert row is not None
    return row[0]


def write_server(project: Path, name: str, dsn: str, tools: list[Tool], *, writable: bool = False) -> Path:
    """project/generated/<name>/, its statements prepared against `dsn`."""
    folder = project / "generated" / name
    (folder / "models").mkdir(parents=True, exist_ok=True)
    with psycopg.connect(dsn, autocommit=True) as conn:
        entries = {tool.name: sql_entry(conn, tool) for tool in tools}
    sql = {
        "_generated": "written by tests/runtime/backends/sql/postgres/pgfolder.py",
        "format": 1,
        "engine": "postgres",
        "data": {"dsn_setting": DSN_SETTING, "writable": writable, "shape": "schema: pagila-schema.sql"},
        "settings": {"timeout": "sql_timeout_seconds", "pool_size": "postgres_pool_size"},
        "tools": entries,
    }
    (folder / "sql.json").write_text(json.dumps(sql, indent=2))
    wire = [_wire_tool(tool) for tool in tools]
    (folder / "tools.json").write_text(json.dumps({"tools": wire}, indent=2))
    for tool in tools:
        (folder / "models" / f"{tool.name}.py").write_text(_model(tool))
    (folder / "server.py").write_text(_server_py(name, tools))
    return folder


def _wire_tool(tool: Tool) -> dict[str, Any]:
    properties = {name: {"type": kind} for name, kind in tool.params.items()}
    return {
        "name": tool.name,
        "description": f"Test tool {tool.name}.",
        "inputSchema": {"type": "object", "properties": properties, "additionalProperties": False},
        "outputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": tool.read_only},
    }


def _model(tool: Tool) -> str:
    python = {"integer": "int", "number": "float", "string": "str", "boolean": "bool", "array": "list"}
    fields = (
        "".join(f"    {name}: {python[kind]} | None = None\n" for name, kind in tool.params.items())
        or "    pass\n"
    )
    return (
        "from pydantic import BaseModel, ConfigDict\n\n\n"
        "class Input(BaseModel):\n"
        "    model_config = ConfigDict(extra='forbid')\n"
        f"{fields}"
    )


def _server_py(name: str, tools: list[Tool]) -> str:
    bindings = "".join(
        f"        ToolBinding(name={tool.name!r}, backend='lynxc.runtime.backends.sql.tools:run_sql',"
        f" models_module={tool.name!r}, input_model='Input', output_model=None,"
        f" caps={{'max_rows': {tool.max_rows}, 'max_output_json_bytes': 1048576}}),\n"
        for tool in tools
    )
    settings = {
        DSN_SETTING: {"type": "string", "description": "The database."},
        "sql_timeout_seconds": {"type": "number", "exclusiveMinimum": 0, "default": 30.0},
        "postgres_pool_size": {"type": "integer", "minimum": 1, "default": 10},
    }
    return (
        "from pathlib import Path\n\n"
        "from lynxc.runtime.definition import ServerDefinition, ToolBinding\n\n"
        "SERVER = ServerDefinition(\n"
        f"    name={name!r}, version='0.1.0', title=None, instructions=None,\n"
        "    folder=Path(__file__).resolve().parent,\n"
        f"    settings_schema={settings!r},\n"
        f"    tools=(\n{bindings}    ),\n"
        "    sql='sql.json',\n"
        ")\n"
    )
