"""sql.json -> SqlCatalog: the contract's example reads back whole, every shape error names its
key, and the package's start-up check of the implied settings; the reader call's option names."""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import pytest

from lynxc.runtime.backends.sql import check_settings
from lynxc.runtime.backends.sql.catalog import (
    DEFAULT_THREADS,
    DEFAULT_TIMEOUT_SECONDS,
    THREADS_SETTING,
    TIMEOUT_SETTING,
    CatalogError,
    SqlCatalog,
    SqlColumn,
    SqlDatabase,
    SqlParam,
    SqlView,
    parse_catalog,
)
from lynxc.runtime.backends.sql.tools import run_sql
from lynxc.runtime.backends.sql.views import reader_call

VARCHAR = {"id": "varchar", "sql": "VARCHAR"}
EXAMPLE: dict[str, Any] = {
    "_generated": "do not edit",
    "format": 1,
    "data": {
        "database": {"setting": "db_file", "writable": False},
        "views": [
            {
                "name": "countries",
                "reader": "read_json",
                "setting": "countries_file",
                "options": {"format": "newline_delimited", "sample_size": 100},
            },
            {
                "name": "rates",
                "reader": "read_csv",
                "setting": "rates_file",
                "options": {"header": True, "names": ["a", "b"], "columns": {"a": "VARCHAR", "b": "DOUBLE"}},
            },
        ],
    },
    "settings": {"threads": "duckdb_threads", "timeout": "sql_timeout_seconds"},
    "tools": {
        "top_countries": {
            "statement": "SELECT name FROM countries WHERE region = $region",
            "wrapped": "SELECT * FROM (\nSELECT name FROM countries WHERE region = $region\n) AS lynxc_rows "
            "LIMIT 101",
            "params": [{"name": "region", "type": "VARCHAR"}],
            "columns": [{"name": "name", "type": VARCHAR, "nullable": True}],
            "result": "many",
            "max_rows": 100,
            "read_only": True,
        }
    },
}


def text(document: Any) -> str:
    return json.dumps(document)


def changed(path: str, value: Any) -> str:
    """EXAMPLE with the value at dotted `path` replaced (or removed when value is ...)."""
    document = copy.deepcopy(EXAMPLE)
    *parents, last = path.split(".")
    node: Any = document
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if value is ...:
        del node[last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return text(document)


def test_the_contract_example_reads_back_whole() -> None:
    catalog = parse_catalog(text(EXAMPLE))
    assert catalog.database == SqlDatabase("db_file", writable=False)
    assert catalog.views[0] == SqlView(
        "countries", "read_json", "countries_file", (("format", "newline_delimited"), ("sample_size", 100))
    )
    assert catalog.views[1].options_dict() == {
        "header": True,
        "names": ["a", "b"],
        "columns": {"a": "VARCHAR", "b": "DOUBLE"},
    }
    assert (catalog.threads_setting, catalog.timeout_setting) == ("duckdb_threads", "sql_timeout_seconds")
    assert catalog.data_settings() == ("db_file", "countries_file", "rates_file")
    tool = catalog.tools["top_countries"]
    assert tool.name == "top_countries"
    assert tool.params == (SqlParam("region", "VARCHAR"),)
    assert tool.columns == (SqlColumn("name", VARCHAR, True),)
    assert tool.columns[0].as_dict() == {"name": "name", "type": VARCHAR, "nullable": True}
    assert (tool.result, tool.max_rows, tool.read_only) == ("many", 100, True)
    assert tool.wrapped.endswith("LIMIT 101")


def test_the_catalog_is_frozen() -> None:
    catalog = parse_catalog(text(EXAMPLE))
    with pytest.raises(dataclasses.FrozenInstanceError):
        catalog.database = None  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        catalog.tools["top_countries"].max_rows = 5  # type: ignore[misc]


def test_no_database_no_views_and_default_setting_names() -> None:
    document = copy.deepcopy(EXAMPLE)
    document["data"] = {"database": None}
    del document["settings"]
    catalog = parse_catalog(text(document))
    assert isinstance(catalog, SqlCatalog)
    assert (catalog.database, catalog.views) == (None, ())
    assert (catalog.threads_setting, catalog.timeout_setting) == ("duckdb_threads", "sql_timeout_seconds")


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("{not json", "sql.json is not JSON"),
        (text([1]), "sql.json: expected an object"),
        (changed("format", 2), "format 2 (this runtime reads 1)"),
        (changed("data", ...), "sql.json: data: required key is missing"),
        (
            changed("data.database", {"writable": True}),
            "sql.json: data.database.setting: required key is missing",
        ),
        (changed("data.database.writable", "no"), "data.database.writable: expected true or false"),
        (changed("data.views.0.reader", "read_text"), "data.views[0].reader: 'read_text' is not one of"),
        (changed("data.views.0.setting", ""), "data.views[0].setting: must not be empty"),
        (
            changed("data.views.0.options", {"format); DROP TABLE t; --": 1}),
            "a reader option name must be an identifier",
        ),
        (changed("data.views.0.options", {"columns": {"a": 1}}), "options.columns: a reader option is"),
        (changed("data.views.0.options", {"names": [1, 2]}), "options.names: a reader option is"),
        (changed("data.views.1.name", "Countries"), "view name 'countries' appears twice"),
        (
            changed("tools.top_countries.result", "few"),
            "tools.top_countries.result: 'few' is not many or one",
        ),
        (changed("tools.top_countries.max_rows", 0), "max_rows: 0 is not a positive integer"),
        (changed("tools.top_countries.max_rows", True), "max_rows: expected an integer, got true"),
        (changed("tools.top_countries.wrapped", ...), "tools.top_countries.wrapped: required key is missing"),
        (changed("tools.top_countries.params.0.type", 3), "params[0].type: expected a string, got 3"),
        (
            changed("tools.top_countries.params", [{"name": "a", "type": "INTEGER"}] * 2),
            "params: parameter 'a' appears twice",
        ),
        (
            changed("tools.top_countries.columns.0.type", {"sql": "VARCHAR"}),
            "columns[0].type.id: required key",
        ),
        (
            changed("tools.top_countries.columns", [{"name": "a", "type": VARCHAR}] * 2),
            "columns: column 'a' appears twice",
        ),
    ],
)
def test_a_shape_error_names_its_key(document: str, message: str) -> None:
    with pytest.raises(CatalogError, match=None) as caught:
        parse_catalog(document)
    assert message in str(caught.value)


def test_check_settings_reports_the_implied_settings_out_of_range() -> None:
    assert check_settings({"duckdb_threads": 2, "sql_timeout_seconds": 0.5}) == []
    assert check_settings({}) == []  # a server without SQL tools' settings: nothing to say
    problems = check_settings({"duckdb_threads": 0, "sql_timeout_seconds": float("inf")})
    assert problems == [
        "setting 'duckdb_threads': 0 is not a positive integer",
        "setting 'sql_timeout_seconds': inf is not a positive number of seconds",
    ]
    assert check_settings({"duckdb_threads": True, "sql_timeout_seconds": -1}) == [
        "setting 'duckdb_threads': True is not a positive integer",
        "setting 'sql_timeout_seconds': -1 is not a positive number of seconds",
    ]


# --- the database's NOT NULL promises, the reader call, the setting names --------------------------


def test_the_database_not_null_columns_read_back_and_default_to_none() -> None:
    assert parse_catalog(text(EXAMPLE)).database == SqlDatabase("db_file", writable=False, not_null=())
    listed = parse_catalog(changed("data.database.not_null", ["cities.name", "cities.country"]))
    assert listed.database is not None and listed.database.not_null == ("cities.name", "cities.country")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("cities.name", "data.database.not_null: expected an array"),
        ([3], "data.database.not_null[0]: expected a string, got 3"),
        ([""], "data.database.not_null[0]: must not be empty"),
    ],
)
def test_a_not_null_list_out_of_shape_names_its_key(value: Any, message: str) -> None:
    with pytest.raises(CatalogError) as caught:
        parse_catalog(changed("data.database.not_null", value))
    assert message in str(caught.value)


@pytest.mark.parametrize(
    "name",
    [
        "format := 'csv'), read_text('/etc/passwd'",  # what the compiler would paste as code
        "sample size",
        "1st",
        "",
        "delim;",
        "ünïcode",
    ],
)
def test_reader_call_refuses_an_option_name_that_is_not_an_identifier(name: str) -> None:
    with pytest.raises(ValueError, match="is not an identifier"):
        reader_call("read_csv", "/data/x.csv", {name: 1})


def test_reader_call_quotes_values_and_passes_identifier_names() -> None:
    assert reader_call("read_csv", "/d/it's.csv", {"delim": ";", "_x1": ["a"], "header": True}) == (
        "read_csv('/d/it''s.csv', delim := ';', _x1 := ['a'], header := true)"
    )


def test_the_implied_setting_names_are_defined_once() -> None:
    assert (THREADS_SETTING, TIMEOUT_SETTING) == ("duckdb_threads", "sql_timeout_seconds")
    assert (DEFAULT_THREADS, DEFAULT_TIMEOUT_SECONDS) == (2, 30.0)
    # The backend declares the one every engine reads (the build checks the spec provides it);
    # duckdb_threads is implied for DuckDB servers only (a SQLite server has no such setting).
    assert run_sql.__lynxc_backend__.settings == {TIMEOUT_SETTING}
