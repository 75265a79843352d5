"""sql.json in its Postgres form read back strictly: the shape the build writes parses, and a
hand-edited or corrupted file is one clear error naming the key (no Postgres needed)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from lynxc.compiler.lower.sql.postgres.depends import Depends
from lynxc.runtime.backends.sql.catalog import CatalogError, parse_catalog
from lynxc.runtime.backends.sql.postgres.catalog import PgCatalog

DEPENDS = {
    "relations": {"public.film": {"title": "text not null"}},
    "types": {"public.mpaa_rating": "enum(G,PG)"},
}
DOCUMENT: dict[str, Any] = {
    "_generated": "...",
    "format": 1,
    "engine": "postgres",
    "data": {"dsn_setting": "database_url", "writable": False, "shape": "schema: schema.sql"},
    "settings": {"timeout": "sql_timeout_seconds", "pool_size": "postgres_pool_size"},
    "tools": {
        "film_search": {
            "statement": "SELECT title FROM film WHERE title ILIKE $query",
            "wrapped": "SELECT * FROM (\nSELECT title FROM film WHERE title ILIKE $1\n) AS t LIMIT 26",
            "params": [{"name": "query", "type": "text", "oid": 25}],
            "columns": [{"name": "title", "type": {"id": "varchar", "sql": "text"}, "nullable": False}],
            "result": "many",
            "max_rows": 25,
            "read_only": True,
            "depends": DEPENDS,
            "fingerprint": Depends(**DEPENDS).fingerprint(),
        }
    },
}


def parsed(document: dict[str, Any]) -> PgCatalog:
    return parse_catalog(json.dumps(document))  # type: ignore[return-value]


def test_the_build_shape_parses() -> None:
    catalog = parsed(DOCUMENT)
    assert catalog.engine == "postgres" and catalog.dsn_setting == "database_url"
    assert catalog.pool_size_setting == "postgres_pool_size" and catalog.data_settings() == ("database_url",)
    tool = catalog.tools["film_search"]
    assert [(p.name, p.type, p.oid) for p in tool.params] == [("query", "text", 25)]
    assert tool.depends.as_dict() == DEPENDS and tool.read_only and tool.max_rows == 25


def edited(path: str, value: Any) -> dict[str, Any]:
    document = copy.deepcopy(DOCUMENT)
    *parents, last = path.split(".")
    node = document
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if value is DELETE:
        del node[last]
    else:
        node[int(last) if isinstance(node, list) else last] = value
    return document


DELETE = object()
TOOL = "tools.film_search"


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("engine", "oracle", "engine 'oracle' is not one this runtime serves"),
        ("data.dsn_setting", DELETE, "sql.json: data.dsn_setting: required key is missing"),
        ("data.writable", "no", "data.writable: expected true or false"),
        (f"{TOOL}.read_only", False, "read_only: false on a server whose data.writable is false"),
        (f"{TOOL}.params.0.oid", "25", "params[0].oid: expected an integer"),
        (f"{TOOL}.params.0.oid", -1, "params[0].oid: -1 is not a type OID"),
        (f"{TOOL}.wrapped", "SELECT $2", "wrapped: uses $2 but the tool has 1 parameters"),
        (f"{TOOL}.fingerprint", "abc", "fingerprint: expected a sha256 in lower-case hex"),
        (f"{TOOL}.fingerprint", DELETE, "fingerprint: required key is missing"),
        (f"{TOOL}.depends.relations", {"public.film": {"title": 1}}, "depends.relations.public.film.title"),
        (f"{TOOL}.max_rows", 0, "max_rows: 0 is not a positive integer"),
        (f"{TOOL}.result", "all", "result: 'all' is not many or one"),
        (f"{TOOL}.columns", [], None),
    ],
)
def test_a_hand_edit_is_one_clear_error(path: str, value: Any, message: str | None) -> None:
    document = edited(path, value)
    if message is None:  # no columns: a statement that returns none (a write); still parses
        assert parsed(document).tools["film_search"].columns == ()
        return
    with pytest.raises(CatalogError) as raised:
        parsed(document)
    assert message in str(raised.value)


def test_a_duckdb_sql_json_keeps_its_own_reader() -> None:
    document = {"format": 1, "data": {"database": None, "views": []}, "tools": {}}
    catalog = parse_catalog(json.dumps(document))
    assert catalog.engine == "duckdb" and catalog.tools == {}
