"""Hand-built sql.json catalogs and data files for the SQL runtime tests (what `lynxc build`
would write, without the compiler), a stand-in server and real ToolContexts."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Any

import duckdb

from lynxc.runtime.backends.sql.catalog import SqlCatalog, parse_catalog
from lynxc.runtime.backends.sql.tools import run_sql
from lynxc.runtime.backends.sql.types import type_tree
from lynxc.runtime.context import ToolContext

COUNTRIES = [
    # code, name, region, area, population
    ("fr", "France", "Europe", 551695.0, 68_000_000),
    ("de", "Germany", "Europe", 357022.0, 84_000_000),
    ("it", "Italy", "Europe", 301340.0, 59_000_000),
    ("es", "Spain", "Europe", 505990.0, 48_000_000),
    ("jp", "Japan", "Asia", 377975.0, 124_000_000),
    ("in", "India", "Asia", 3287263.0, 1_430_000_000),
    ("br", "Brazil", "Americas", 8515767.0, 216_000_000),
    ("ca", "Canada", "Americas", 9984670.0, 40_000_000),
]


def column(name: str, sql_type: str, nullable: bool = True) -> dict[str, Any]:
    return {"name": name, "type": type_tree(duckdb.sqltype(sql_type)), "nullable": nullable}


def tool(
    statement: str,
    columns: list[dict[str, Any]],
    params: Mapping[str, str] | None = None,
    *,
    result: str = "many",
    max_rows: int = 100,
    read_only: bool = True,
    wrapped: str | None = None,
) -> dict[str, Any]:
    return {
        "statement": statement,
        "wrapped": wrapped or f"SELECT * FROM (\n{statement}\n) AS lynxc_rows LIMIT {max_rows + 1}",
        "params": [{"name": name, "type": sql_type} for name, sql_type in (params or {}).items()],
        "columns": columns,
        "result": result,
        "max_rows": max_rows,
        "read_only": read_only,
    }


def catalog_text(
    tools: Mapping[str, dict[str, Any]],
    *,
    database: dict[str, Any] | None = None,
    views: list[dict[str, Any]] | None = None,
) -> str:
    return json.dumps(
        {
            "_generated": "by the tests",
            "format": 1,
            "data": {"database": database, "views": views or []},
            "settings": {"threads": "duckdb_threads", "timeout": "sql_timeout_seconds"},
            "tools": dict(tools),
        }
    )


class FakeServer:
    """What run_sql reads of a ServerDefinition: its folder and `sql_catalog()` (parsed once)."""

    def __init__(self, folder: Path, text: str):
        self.folder = folder
        self.name = "sql-test"
        self._text = text

    @cached_property
    def catalog(self) -> SqlCatalog:
        return parse_catalog(self._text)

    def sql_catalog(self) -> SqlCatalog:
        return self.catalog


def context(
    server: FakeServer, tool_name: str, settings: Mapping[str, Any], caps: Mapping[str, int] | None = None
) -> ToolContext:
    catalog = server.sql_catalog()
    declared = catalog.tools[tool_name].max_rows if tool_name in catalog.tools else 100
    return ToolContext(
        tool=tool_name,
        caps=dict(caps) if caps is not None else {"max_rows": declared, "max_output_json_bytes": 1_048_576},
        settings=dict(settings),
        server=server,  # type: ignore[arg-type]  # a stand-in: run_sql reads folder and sql_catalog()
    )


async def call(
    server: FakeServer,
    tool_name: str,
    settings: Mapping[str, Any],
    arguments: Any = None,
    caps: Mapping[str, int] | None = None,
) -> Any:
    ctx = context(server, tool_name, settings, caps)
    return await run_sql(arguments if arguments is not None else {}, ctx)


def write_data(folder: Path) -> dict[str, str]:
    """Countries as Parquet (one file, and split into parts/ for a glob), CSV and JSON lines; a
    DuckDB file with a `cities` table. Returns the settings naming them."""
    (folder / "parts").mkdir()
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE countries (code VARCHAR, name VARCHAR, region VARCHAR, area DOUBLE, population BIGINT)"
    )
    con.executemany("INSERT INTO countries VALUES (?, ?, ?, ?, ?)", COUNTRIES)
    con.execute(f"COPY countries TO '{folder / 'countries.parquet'}' (FORMAT parquet)")
    for region in ("Europe", "Asia", "Americas"):
        con.execute(
            f"COPY (SELECT * FROM countries WHERE region = '{region}') "
            f"TO '{folder / 'parts' / (region.lower() + '.parquet')}' (FORMAT parquet)"
        )
    con.execute(f"COPY countries TO '{folder / 'countries.csv'}' (FORMAT csv, DELIMITER ';', HEADER)")
    con.execute(f"COPY countries TO '{folder / 'countries.jsonl'}' (FORMAT json)")
    con.close()
    db = duckdb.connect(str(folder / "cities.duckdb"))
    db.execute("CREATE TABLE cities (name VARCHAR, country VARCHAR, population BIGINT)")
    db.execute(
        "INSERT INTO cities VALUES ('Paris', 'fr', 2100000), ('Lyon', 'fr', 520000), "
        "('Berlin', 'de', 3800000), ('Tokyo', 'jp', 14000000)"
    )
    db.close()
    return {
        "countries_file": str(folder / "countries.parquet"),
        "parts_glob": str(folder / "parts" / "*.parquet"),
        "countries_csv": str(folder / "countries.csv"),
        "countries_json": str(folder / "countries.jsonl"),
        "db_file": str(folder / "cities.duckdb"),
        "duckdb_threads": 2,
        "sql_timeout_seconds": 30,
    }


COUNTRY_COLUMNS = [
    column("code", "VARCHAR"),
    column("name", "VARCHAR"),
    column("region", "VARCHAR"),
    column("area", "DOUBLE"),
    column("population", "BIGINT"),
]

VIEWS = [
    {"name": "countries", "reader": "read_parquet", "setting": "countries_file", "options": {}},
    {"name": "parts", "reader": "read_parquet", "setting": "parts_glob", "options": {}},
    {
        "name": "countries_csv",
        "reader": "read_csv",
        "setting": "countries_csv",
        "options": {"delim": ";", "header": True},
    },
    {
        "name": "countries_json",
        "reader": "read_json",
        "setting": "countries_json",
        "options": {"format": "newline_delimited"},
    },
]
