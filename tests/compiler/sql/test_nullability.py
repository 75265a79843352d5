"""Which result columns of a SQL tool's statement are provably never NULL (`not_null_columns`).

Each case states the tuple it expects, and every case also runs: on a database filled so that each
nullable column holds a NULL and each outer join pads, and on the same tables empty (aggregates
of no rows). A column claimed not null must hold no NULL in either, so the expectations cannot
drift into unsound ones."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import duckdb
import pytest

from lynxc.compiler.lower.sql.nullability import not_null_columns

T, F = True, False

SCHEMA = """
CREATE TABLE countries (
    code VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    region VARCHAR,
    population BIGINT NOT NULL,
    area DOUBLE,
    extra JSON NOT NULL
);
CREATE TABLE cities (id INTEGER PRIMARY KEY, country VARCHAR NOT NULL, name VARCHAR NOT NULL, mayor VARCHAR);
CREATE VIEW big AS SELECT code, name FROM countries WHERE population > 1000000;
"""
# Nowhere has no region, no area, a JSON null and no city; Atlantis's country is not a row.
ROWS = """
INSERT INTO countries VALUES
    ('FR', 'France', 'Europe', 68000000, 551695.0, '1'),
    ('XX', 'Nowhere', NULL, 0, NULL, 'null'),
    ('JP', 'Japan', 'Asia', 125000000, 377975.0, '3');
INSERT INTO cities VALUES
    (1, 'FR', 'Paris', 'Hidalgo'), (2, 'JP', 'Tokyo', NULL), (3, 'ZZ', 'Atlantis', NULL);
"""


def _database(rows: bool) -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    connection.execute(SCHEMA)
    if rows:
        connection.execute(ROWS)
    return connection


# Shared by the cases that only read; a test that creates objects takes `fresh_*`.
@pytest.fixture(scope="module")
def filled() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = _database(rows=True)
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def empty() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = _database(rows=False)
    yield connection
    connection.close()


@pytest.fixture
def fresh_filled() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = _database(rows=True)
    yield connection
    connection.close()


@pytest.fixture
def fresh_empty() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = _database(rows=False)
    yield connection
    connection.close()


def check(
    filled: duckdb.DuckDBPyConnection,
    empty: duckdb.DuckDBPyConnection,
    sql: str,
    params: dict[str, Any] | None = None,
) -> tuple[bool, ...]:
    """The claim for `sql`, after checking it against what the statement returns on both databases."""
    claims = None
    for connection in (filled, empty):
        result = connection.execute(sql, params) if params else connection.execute(sql)
        count = len(result.description)
        rows = result.fetchall()
        claim = not_null_columns(connection, sql, count)
        assert len(claim) == count
        assert claims is None or claim == claims, "the claim depends on the catalog only, not the rows"
        claims = claim
        for row in rows:
            for index, value in enumerate(row):
                assert not (claim[index] and value is None), f"column {index} claimed not null: {sql}"
    assert claims is not None
    return claims


# (statement, expected) by rule; ids name the rule.
CASES = {
    "literals": (
        "SELECT 1, 'x', NULL, TRUE, DATE '2024-01-01', INTERVAL 1 DAY, 2.5",
        (T, T, F, T, T, T, T),
    ),
    "cast": (
        "SELECT CAST(population AS VARCHAR), population::DOUBLE, TRY_CAST(name AS INTEGER), "
        "CAST(area AS BIGINT), CAST(region AS VARCHAR) FROM countries",
        (T, T, F, F, F),
    ),
    "cast from json maps a json null to NULL": (
        "SELECT CAST(extra AS INTEGER), extra, CAST(population AS JSON) FROM countries",
        (F, T, F),
    ),
    "count is never null, other aggregates are": (
        "SELECT count(*), count(region), count(DISTINCT region), count(*) FILTER (WHERE population > 0), "
        "sum(population), min(name), max(population), avg(area), list(name), array_agg(code), "
        "string_agg(name, ',') FROM countries",
        (T, T, T, T, F, F, F, F, F, F, F),
    ),
    "coalesce and null tests": (
        "SELECT coalesce(region, 'none'), coalesce(region, CAST(area AS VARCHAR)), ifnull(region, name), "
        "region IS NULL, area IS NOT NULL, region IS DISTINCT FROM 'x', "
        "region IS NOT DISTINCT FROM NULL FROM countries",
        (T, F, T, T, T, T, T),
    ),
    "operators and allowed functions": (
        "SELECT population + 1, population * 2, -population, population - area, name || '!', "
        "region || '!', lower(name), upper(region), length(name), concat(name, code), abs(population), "
        "round(population, -3), population > 10, area > 10, name = 'x' AND population > 0, "
        "NOT (population > 10), population BETWEEN 1 AND 10, code IN ('FR', 'JP'), "
        "name LIKE 'F%', greatest(population, 1) FROM countries",
        (T, T, T, F, T, F, T, F, T, T, T, T, T, F, T, T, T, T, T, T),
    ),
    "division, nullif, date parts and unknown functions": (
        "SELECT population / 2, population // 2, population % 7, nullif(name, 'x'), "
        "year(DATE '2024-01-01'), concat_ws(',', name, code), [1, 2][1], md5(name) FROM countries",
        (F, F, F, F, F, F, F, F),
    ),
    "constructors": (
        "SELECT [region, NULL], {'r': region}, row(area) FROM countries",
        (T, T, T),
    ),
    "case": (
        "SELECT CASE WHEN population > 10 THEN 'big' ELSE 'small' END, "
        "CASE WHEN population > 10 THEN 'big' END, "
        "CASE WHEN population > 10 THEN region ELSE 'small' END, "
        "CASE code WHEN 'FR' THEN 1 ELSE 0 END FROM countries",
        (T, F, F, T),
    ),
    "table columns": (
        "SELECT code, name, region, population, area FROM countries",
        (T, T, F, T, F),
    ),
    "aliases and qualified names": (
        'SELECT c.code AS k, c.name, name AS n, C.REGION, "Population" FROM countries AS c',
        (T, T, T, F, T),
    ),
    "schema and database qualified tables": (
        "SELECT countries.name, m.name FROM main.countries, memory.main.countries AS m",
        (T, T),
    ),
    "star over one table": (
        "SELECT * FROM countries",
        (T, T, F, T, F, T),
    ),
    "star exclude and FROM-first": (
        "FROM countries SELECT * EXCLUDE (extra, region)",
        (T, T, T, F),
    ),
    "star over a cross join": (
        "SELECT * FROM cities, countries",
        (T, T, T, F, T, T, F, T, F, T),
    ),
    "qualified star": (
        "SELECT ci.* FROM countries co JOIN cities ci ON ci.country = co.code",
        (T, T, T, F),
    ),
    "columns of views are nullable": (
        "SELECT code, name FROM big",
        (F, F),
    ),
    "columns of table functions are nullable": (
        "SELECT range FROM range(3)",
        (F,),
    ),
    "inner join": (
        "SELECT ci.name, co.name, co.region FROM cities ci JOIN countries co ON ci.country = co.code",
        (T, T, F),
    ),
    "left join pads the right side": (
        "SELECT co.name, ci.name, ci.id FROM countries co LEFT JOIN cities ci ON ci.country = co.code",
        (T, F, F),
    ),
    "right join pads the left side": (
        "SELECT co.name, ci.name FROM countries co RIGHT JOIN cities ci ON ci.country = co.code",
        (F, T),
    ),
    "full join pads both sides": (
        "SELECT co.name, ci.name FROM countries co FULL OUTER JOIN cities ci ON ci.country = co.code",
        (F, F),
    ),
    "a nested join on the padded side": (
        "SELECT co.name, ci.name, c2.name FROM countries co "
        "LEFT JOIN (cities ci JOIN cities c2 ON ci.id = c2.id) ON ci.country = co.code",
        (T, F, F),
    ),
    "positional join pads the shorter side": (
        "SELECT co.name, ci.name FROM countries co POSITIONAL JOIN (SELECT name FROM cities LIMIT 1) ci",
        (F, F),
    ),
    "semi join": (
        "SELECT * FROM countries co SEMI JOIN cities ci ON ci.country = co.code",
        (T, T, F, T, F, T),
    ),
    "using: an inner join keeps both sides": (
        "SELECT code FROM countries JOIN (SELECT country AS code FROM cities) USING (code)",
        (T,),
    ),
    "using: a left join is left nullable (conservative)": (
        "SELECT code FROM countries LEFT JOIN (SELECT country AS code FROM cities) USING (code)",
        (F,),
    ),
    "group by keys": (
        "SELECT name, region, count(*) FROM countries GROUP BY name, region",
        (T, F, T),
    ),
    "group by all": (
        "SELECT name, count(*) FROM countries GROUP BY ALL",
        (T, T),
    ),
    "rollup": (
        "SELECT name, count(*) FROM countries GROUP BY ROLLUP (name)",
        (F, T),
    ),
    "cube": (
        "SELECT name, code FROM countries GROUP BY CUBE (name, code)",
        (F, F),
    ),
    "grouping sets": (
        "SELECT name, code, count(*) + 1 FROM countries GROUP BY GROUPING SETS ((name, code), (name))",
        (F, F, T),
    ),
    # The key is the whole expression (by position, alias or repetition): NULL in the total row.
    "rollup of an expression": (
        "SELECT coalesce(region, '-'), upper(name) AS u, count(*) FROM countries GROUP BY ROLLUP (1, u)",
        (F, F, T),
    ),
    "union all": (
        "SELECT name, region FROM countries UNION ALL SELECT name, 'x' FROM cities",
        (T, F),
    ),
    "union": (
        "SELECT name, 'x' FROM countries UNION SELECT mayor, name FROM cities",
        (F, T),
    ),
    "intersect: one side suffices": (
        "SELECT name FROM countries INTERSECT SELECT mayor FROM cities",
        (T,),
    ),
    "except: the left side decides": (
        "SELECT mayor FROM cities EXCEPT SELECT name FROM countries",
        (F,),
    ),
    "union by name pads missing columns": (
        "SELECT name FROM countries UNION BY NAME SELECT name, id FROM cities",
        (F, F),
    ),
    "windows": (
        "SELECT row_number() OVER (ORDER BY code), rank() OVER (ORDER BY population), "
        "dense_rank() OVER (ORDER BY name), count(*) OVER (), count(region) OVER (PARTITION BY name), "
        "sum(population) OVER (), lag(name) OVER (ORDER BY code), first_value(name) OVER (ORDER BY code) "
        "FROM countries",
        (T, T, T, T, T, F, F, F),
    ),
    "distinct, qualify, order and limit": (
        "SELECT DISTINCT name, region FROM countries "
        "QUALIFY row_number() OVER (PARTITION BY region ORDER BY population DESC) = 1 ORDER BY name LIMIT 5",
        (T, F),
    ),
    "distinct on": (
        "SELECT DISTINCT ON (region) region, name FROM countries ORDER BY region",
        (F, T),
    ),
    "unnest": (
        "SELECT unnest([1, 2]), x FROM unnest([3]) AS u(x)",
        (F, F),
    ),
    "subquery in FROM": (
        "SELECT n, r, c FROM (SELECT name AS n, region AS r, count(*) OVER () AS c FROM countries) AS s",
        (T, F, T),
    ),
    "aggregate subquery over no rows": (
        "SELECT total, top FROM (SELECT count(*) AS total, max(population) AS top FROM countries)",
        (T, F),
    ),
    "subquery column aliases": (
        "SELECT a, b FROM (SELECT name, region FROM countries) AS s(a, b)",
        (T, F),
    ),
    "values list": (
        "SELECT * FROM (VALUES (1, NULL), (2, 'b')) AS v(x, y)",
        (T, F),
    ),
    "scalar subquery and exists": (
        "SELECT (SELECT max(population) FROM countries), (SELECT 1), EXISTS (SELECT 1 FROM cities), "
        "name IN (SELECT name FROM cities) FROM countries",
        (F, F, T, F),
    ),
    "cte": (
        "WITH named AS (SELECT name, region FROM countries), again(n, r) AS (SELECT * FROM named) "
        "SELECT named.name, named.region, again.n FROM named, again",
        (T, F, T),
    ),
    "a cte shadows the table of the same name": (
        "WITH countries AS (SELECT NULL AS name) SELECT name FROM countries",
        (F,),
    ),
    "recursive cte": (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT n FROM r",
        (F,),
    ),
    "lateral subquery sees outer columns as nullable": (
        "SELECT co.name, s.z FROM countries co, LATERAL (SELECT co.name AS z) s",
        (T, F),
    ),
    "where proves columns it compares or tests": (
        "SELECT region, area, ci.mayor FROM countries co LEFT JOIN cities ci ON ci.country = co.code "
        "WHERE region IS NOT NULL AND area > 1 AND ci.mayor = 'Hidalgo'",
        (T, T, T),
    ),
    "where with OR proves nothing": (
        "SELECT region, area FROM countries WHERE region IS NOT NULL OR area > 1",
        (F, F),
    ),
    "a later duplicate name is renamed by DuckDB": (
        "SELECT a FROM (SELECT region AS a, name AS a FROM countries)",
        (F,),
    ),
    "a derived name may equal a reference": (
        'SELECT "NULL" FROM (SELECT NULL, 2 AS "NULL")',
        (F,),
    ),
    "a subquery this module cannot follow hides only its own columns": (
        "SELECT co.name, s.name FROM countries co "
        "JOIN (SELECT COLUMNS('^n') FROM cities) s ON s.name = co.name",
        (T, F),
    ),
    "struct fields are not followed": (
        "SELECT s.k FROM (SELECT {'k': 1} AS s)",
        (F,),
    ),
}


@pytest.mark.parametrize(("sql", "expected"), list(CASES.values()), ids=list(CASES))
def test_rule(filled: Any, empty: Any, sql: str, expected: tuple[bool, ...]) -> None:
    assert check(filled, empty, sql) == expected


SOUNDNESS = {
    "left join": "SELECT ci.name FROM countries co LEFT JOIN cities ci ON ci.country = co.code",
    "rollup": "SELECT name FROM countries GROUP BY ROLLUP (name)",
    "nullif": "SELECT nullif(name, 'France') FROM countries",
    "integer division": "SELECT population // 0 FROM countries",
    "modulo": "SELECT population % 0 FROM countries",
    "scalar subquery": "SELECT (SELECT name FROM countries WHERE false)",
    "null": "SELECT NULL",
    "max over a not null column": "SELECT max(population) FROM countries",
    "sum over a not null column": "SELECT sum(population) FROM countries WHERE false",
    "case without else": "SELECT CASE WHEN false THEN name END FROM countries",
    "try_cast": "SELECT TRY_CAST(name AS INTEGER) FROM countries",
    "json null cast": "SELECT CAST(extra AS INTEGER) FROM countries",
    "json through coalesce": "SELECT CAST(coalesce(extra, '1') AS INTEGER) FROM countries",
    "infinite date part": "SELECT year(DATE 'infinity') FROM countries",
    "lag": "SELECT lag(name) OVER (ORDER BY code) FROM countries",
    "parameter": "SELECT $value FROM countries",
}


@pytest.mark.parametrize("sql", list(SOUNDNESS.values()), ids=list(SOUNDNESS))
def test_soundness(filled: Any, empty: Any, sql: str) -> None:
    params = {"value": None} if "$value" in sql else None
    assert check(filled, empty, sql, params) == (F,)
    # Each of these does give NULL, on the filled tables or on the empty ones.
    values = [row[0] for c in (filled, empty) for row in c.execute(sql, params).fetchall()]
    assert None in values


def test_named_parameters(filled: Any, empty: Any) -> None:
    sql = (
        "SELECT name, region, $region, population + $extra FROM countries WHERE region = $region LIMIT $limit"
    )
    params = {"region": "Europe", "extra": 1, "limit": 10}
    # The WHERE compares region with $region: a row whose region is NULL never passes.
    assert check(filled, empty, sql, params) == (T, T, F, F)


def test_a_macro_named_like_a_builtin_is_not_trusted(fresh_filled: Any, fresh_empty: Any) -> None:
    filled, empty = fresh_filled, fresh_empty
    for connection in (filled, empty):
        connection.execute("CREATE MACRO lower(x) AS NULL; CREATE MACRO count(x) AS NULL")
    assert check(filled, empty, "SELECT lower(name), upper(name), count(name) FROM countries") == (F, T, F)


def test_a_temporary_table_of_the_same_name_is_not_guessed(fresh_filled: Any, fresh_empty: Any) -> None:
    filled, empty = fresh_filled, fresh_empty
    for connection in (filled, empty):
        connection.execute("CREATE TEMP TABLE countries (name VARCHAR)")
        connection.execute("INSERT INTO countries VALUES (NULL)")
    assert check(filled, empty, "SELECT name FROM countries") == (F,)
    assert check(filled, empty, "SELECT name FROM memory.main.countries") == (T,)


def test_a_temporary_table_with_not_null_columns(fresh_filled: Any, fresh_empty: Any) -> None:
    filled, empty = fresh_filled, fresh_empty
    # How the build declares a view by its columns.
    for connection in (filled, empty):
        connection.execute("CREATE TEMP TABLE places (id INTEGER NOT NULL, label VARCHAR)")
    assert check(filled, empty, "SELECT * FROM places") == (T, F)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT COLUMNS('n.*') FROM countries",
        "SELECT * REPLACE (upper(name) AS name) FROM countries",
        "SELECT * FROM countries JOIN (SELECT country AS code FROM cities) USING (code)",
        "SELECT * FROM countries NATURAL JOIN (SELECT country AS code FROM cities)",
        "SELECT * FROM read_csv('missing.csv')",
    ],
    ids=["columns", "replace", "star-using", "star-natural", "table-function"],
)
def test_shapes_left_to_duckdb_are_all_nullable(filled: Any, sql: str) -> None:
    assert not_null_columns(filled, sql, 3) == (F, F, F)


def test_never_raises(filled: Any) -> None:
    assert not_null_columns(filled, "SELEC nonsense", 2) == (F, F)
    assert not_null_columns(filled, "SELECT 1; SELECT 2", 1) == (F,)
    assert not_null_columns(filled, "INSERT INTO cities VALUES (9, 'FR', 'Lyon', NULL)", 1) == (F,)
    # A count that does not match the select list: nothing is trusted.
    assert not_null_columns(filled, "SELECT name, code FROM countries", 3) == (F, F, F)
    # Deeper than Python's recursion limit (DuckDB binds it, in about a second): not proven, no crash.
    deep = "SELECT " + "(1 + " * 400 + "1" + ")" * 400
    assert not_null_columns(filled, deep, 1) == (F,)
    assert not_null_columns(filled, "SELECT " + "(1 + " * 50 + "1" + ")" * 50, 1) == (T,)
    closed = duckdb.connect()
    closed.close()
    assert not_null_columns(closed, "SELECT 1", 1) == (F,)


def test_duckdb_is_not_imported_at_module_level() -> None:
    import ast
    import inspect

    from lynxc.compiler.lower.sql import nullability

    tree = ast.parse(inspect.getsource(nullability))
    top = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)]
    names = {alias.name for node in top for alias in node.names}
    names |= {node.module for node in top if isinstance(node, ast.ImportFrom) and node.module}
    assert not any(name.split(".")[0] == "duckdb" for name in names)
