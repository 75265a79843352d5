"""Which result columns of a Postgres statement are provably never NULL (`not_null_columns`), on a
real PostgreSQL over pagila.

Each case states the tuple it expects, and every case also runs on the trap database
(`pg_nullability_db.TRAPS`: outer joins that miss, nullable columns NULL): a column claimed non-null
must hold no NULL there, so the expectations cannot drift into unsound ones. The soundness cases
each do return a NULL, which the claim must allow."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from lynxc.compiler.lower.sql.postgres.nullability import not_null_columns
from tests.compiler.sql.pg_nullability_db import check, describe, null_columns, trap_database
from tests.fixtures.postgres import PostgresServer, postgres_server  # noqa: F401

T, F = True, False


@pytest.fixture(scope="module")
def trap_db(postgres_server: PostgresServer) -> Iterator[psycopg.Connection]:  # noqa: F811
    with trap_database(postgres_server) as conn:
        yield conn


CASES = {
    "columns of one table": (
        "SELECT film_id, title, description, release_year, length_hours, fulltext FROM film",
        (T, T, F, F, F, T),
    ),
    "star": ("SELECT * FROM category", (T, T, T)),
    "qualified star over a join": (
        "SELECT a.*, fa.film_id FROM actor a JOIN film_actor fa ON fa.actor_id = a.actor_id",
        (T, T, T, T, T),
    ),
    "a partitioned table": ("SELECT payment_id, amount, payment_date FROM payment", (T, T, T)),
    "inner join": (
        "SELECT f.title, l.name FROM film f JOIN language l ON l.language_id = f.language_id",
        (T, T),
    ),
    "comma join": (
        "SELECT f.title, l.name FROM film f, language l WHERE l.language_id = f.language_id",
        (T, T),
    ),
    "left join pads the right side": (
        "SELECT f.title, ol.name FROM film f LEFT JOIN language ol ON ol.language_id = "
        "f.original_language_id",
        (T, F),
    ),
    "right join pads the left side": (
        "SELECT fa.film_id, a.first_name FROM film_actor fa RIGHT JOIN actor a ON a.actor_id = fa.actor_id",
        (F, T),
    ),
    "full join pads both sides": (
        "SELECT fa.film_id, a.first_name FROM film_actor fa FULL JOIN actor a ON a.actor_id = fa.actor_id",
        (F, F),
    ),
    "a nested inner join on the padded side": (
        "SELECT f.title, a.first_name, fa.actor_id FROM film f "
        "LEFT JOIN (film_actor fa JOIN actor a ON a.actor_id = fa.actor_id) ON fa.film_id = f.film_id",
        (T, F, F),
    ),
    "an inner join after an outer join keeps matched rows only": (
        "SELECT f.title, fa.actor_id, a.first_name FROM film f "
        "LEFT JOIN film_actor fa ON fa.film_id = f.film_id JOIN actor a ON a.actor_id = fa.actor_id",
        (T, T, T),
    ),
    "an outer join of an inner join": (
        "SELECT a.first_name, c.name FROM actor a LEFT JOIN film_actor fa ON fa.actor_id = a.actor_id "
        "LEFT JOIN film_category fc ON fc.film_id = fa.film_id LEFT JOIN category c USING (category_id)",
        (T, F),
    ),
    "an aliased join hides its tables": (
        "SELECT j.film_id, j.actor_id FROM (film f JOIN film_actor fa USING (film_id)) AS j",
        (T, T),
    ),
    "using: inner": ("SELECT film_id, title FROM film JOIN film_actor USING (film_id)", (T, T)),
    "using: left takes the left column": (
        "SELECT language_id, film_id FROM language LEFT JOIN film USING (language_id)",
        (T, F),
    ),
    "using: full coalesces two not null columns": (
        "SELECT film_id FROM film FULL JOIN film_actor USING (film_id)",
        (T,),
    ),
    "natural join": ("SELECT actor_id, film_id FROM film_actor NATURAL JOIN actor", (T, T)),
    "literals": (
        "SELECT 1, 'x', NULL, true, 2.5, DATE '2024-01-01', NULL::int, 10000000000",
        (T, T, F, T, T, T, F, T),
    ),
    "count and the other aggregates": (
        "SELECT count(*), count(description), count(DISTINCT rating), count(*) FILTER (WHERE length > 0), "
        "sum(length), max(title), min(film_id), avg(rental_rate), array_agg(title), string_agg(title, ',') "
        "FROM film",
        (T, T, T, T, F, F, F, F, F, F),
    ),
    "coalesce, greatest and nullif": (
        "SELECT coalesce(description, 'none'), coalesce(description, title), coalesce(length, release_year), "
        "greatest(length, 1), least(length, release_year), nullif(title, 'x') FROM film",
        (T, T, F, T, F, F),
    ),
    "case": (
        "SELECT CASE WHEN length > 100 THEN 'long' ELSE 'short' END, CASE WHEN length > 100 THEN 'long' END, "
        "CASE WHEN length > 100 THEN description ELSE 'x' END, CASE rating WHEN 'G' THEN "
        "1 ELSE 0 END FROM film",
        (T, F, F, T),
    ),
    "casts": (
        "SELECT film_id::text, title::varchar(5), CAST(film_id AS bigint), description::text, length::int, "
        "release_year::int, film_id::int FROM film",
        (T, T, T, F, F, F, T),
    ),
    "operators": (
        "SELECT film_id + 1, film_id = 3, length + 1, title || '!', title LIKE 'A%', film_id IN (1, 2), "
        "length BETWEEN 1 AND 5, -film_id, description IS NULL, description IS DISTINCT FROM 'x', "
        "film_id > 3 AND length > 3, NOT (film_id > 3), title ~ 'A', rental_rate * 2 FROM film",
        (T, T, F, T, T, T, F, T, T, T, F, T, T, T),
    ),
    "functions": (
        "SELECT lower(title), upper(description), length(title), abs(film_id), round(rental_rate), "
        "concat(description, 'x'), concat_ws(',', title, description), md5(title), now(), "
        "extract(year FROM last_update), to_char(last_update, 'YYYY'), substring(title FROM 'A'), "
        "btrim(title), CURRENT_DATE, current_schema FROM film",
        (T, F, T, T, T, T, T, T, T, F, F, F, T, T, F),
    ),
    "constructors": (
        "SELECT ARRAY[description], ROW(length), ARRAY(SELECT 1 WHERE false) FROM film",
        (T, T, T),
    ),
    "windows": (
        "SELECT row_number() OVER (ORDER BY film_id), rank() OVER (ORDER BY length), count(*) OVER (), "
        "count(description) OVER (), sum(length) OVER (), lag(title) OVER (ORDER BY film_id), "
        "first_value(title) OVER (ORDER BY film_id), ntile(4) OVER (ORDER BY film_id) FROM film",
        (T, T, T, T, F, F, F, T),
    ),
    "group by keys": (
        "SELECT rating, language_id, count(*), max(title) FROM film GROUP BY rating, language_id",
        (F, T, T, F),
    ),
    "rollup": (
        "SELECT language_id, count(*), coalesce(sum(length), 0), count(*) + 1 FROM film "
        "GROUP BY ROLLUP (language_id)",
        (F, T, T, T),
    ),
    "cube": ("SELECT language_id, rating FROM film GROUP BY CUBE (language_id, rating)", (F, F)),
    "grouping sets and grouping()": (
        "SELECT language_id, grouping(language_id), count(*) FROM film GROUP BY GROUPING "
        "SETS ((language_id), ())",
        (F, T, T),
    ),
    "rollup of a literal by position": ("SELECT 'all', count(*) FROM film GROUP BY ROLLUP (1)", (F, T)),
    "rollup of an expression": (
        "SELECT film_id > 500, count(*) FROM film GROUP BY ROLLUP (film_id > 500)",
        (F, T),
    ),
    "union all": (
        "SELECT title, description FROM film UNION ALL SELECT first_name, last_name FROM actor",
        (T, F),
    ),
    "union with a nullable side": ("SELECT title FROM film UNION SELECT email FROM customer", (F,)),
    "intersect: one side suffices": (
        "SELECT email FROM customer INTERSECT SELECT first_name FROM actor",
        (T,),
    ),
    "except: the left side decides": ("SELECT email FROM customer EXCEPT SELECT first_name FROM actor", (F,)),
    "subquery in FROM": (
        "SELECT t, d, n FROM (SELECT title AS t, description AS d, count(*) OVER () AS n FROM film) s",
        (T, F, T),
    ),
    "subquery column aliases": ("SELECT a, b FROM (SELECT title, description FROM film) AS s(a, b)", (T, F)),
    "derived names of a subquery": (
        "SELECT s.title, s.count, s.coalesce, s.lower FROM "
        "(SELECT title, count(*), coalesce(max(description), 'x'), lower(title) FROM film GROUP BY title) s",
        (T, T, T, T),
    ),
    "cte": (
        "WITH f AS (SELECT film_id, description FROM film), g(i) AS (SELECT film_id FROM f) "
        "SELECT f.film_id, f.description, g.i FROM f JOIN g ON g.i = f.film_id",
        (T, F, T),
    ),
    "a cte shadows the table of the same name": (
        "WITH film AS (SELECT NULL::text AS title) SELECT title FROM film",
        (F,),
    ),
    "recursive cte": (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT n FROM r",
        (F,),
    ),
    "values": ("SELECT * FROM (VALUES (1, NULL), (2, 'b')) AS v(x, y)", (T, F)),
    "scalar subquery, exists, in": (
        "SELECT (SELECT 1), EXISTS (SELECT 1 FROM actor), film_id IN (SELECT film_id "
        "FROM film_actor) FROM film",
        (F, T, F),
    ),
    "lateral sees the outer row": (
        "SELECT s.c, s.n FROM actor a CROSS JOIN LATERAL "
        "(SELECT count(*) AS c, a.first_name AS n FROM film_actor fa WHERE fa.actor_id = a.actor_id) s",
        (T, T),
    ),
    "left join lateral pads it": (
        "SELECT a.first_name, s.c, s.n FROM actor a LEFT JOIN LATERAL "
        "(SELECT count(*) AS c, a.first_name AS n FROM film_actor fa WHERE fa.actor_id = "
        "a.actor_id) s ON true",
        (T, F, F),
    ),
    "where proves the columns it tests": (
        "SELECT description, length, fa.actor_id, rating FROM film f LEFT JOIN "
        "film_actor fa ON fa.film_id = f.film_id "
        "WHERE description IS NOT NULL AND length > 60 AND fa.actor_id = $1 AND rating IN ('G', 'PG')",
        (T, T, T, T),
    ),
    "where with OR proves what every branch does": (
        "SELECT description, length FROM film WHERE (description IS NOT NULL AND length "
        "> 1) OR description LIKE 'A%'",
        (T, F),
    ),
    "a view, by its definition": (
        'SELECT id, name, address, "zip code", phone, city, country, notes, sid FROM customer_list',
        (T, T, T, F, T, T, T, T, T),
    ),
    "a view of outer joins and an inner join that filters": (
        "SELECT fid, title, category, price, actors FROM film_list",
        (T, F, T, F, F),
    ),
    "a view on the padded side of a join": (
        "SELECT c.first_name, cl.name FROM customer c "
        "LEFT JOIN customer_list cl ON cl.id = c.customer_id + 100000",
        (T, F),
    ),
    "materialized views are nullable": ("SELECT category, total_sales FROM rental_by_category", (F, F)),
    "system columns are not followed": ("SELECT ctid, tableoid FROM film", (F, F)),
    "an extension's operator may be the one": (
        "SELECT embedding = embedding, film_id = film_id FROM film_embedding",
        (F, T),
    ),
}


@pytest.mark.parametrize(("sql", "expected"), list(CASES.values()), ids=list(CASES))
def test_rule(trap_db: psycopg.Connection, sql: str, expected: tuple[bool, ...]) -> None:
    params = ["1"] if "$1" in sql else []
    assert check(trap_db, sql, params) == expected


# Each returns a NULL in its only column on the trap database.
SOUNDNESS = {
    "left join": (
        "SELECT ol.name FROM film f LEFT JOIN language ol ON ol.language_id = f.original_language_id"
    ),
    "right join": (
        "SELECT f.title FROM film_actor fa JOIN film f USING (film_id) RIGHT JOIN actor a USING (actor_id)"
    ),
    "full join": "SELECT a.actor_id FROM actor a FULL JOIN film_actor fa ON false",
    "left join lateral": "SELECT s.x FROM actor a LEFT JOIN LATERAL (SELECT 1 AS x WHERE false) s ON true",
    "rollup": "SELECT language_id FROM film GROUP BY ROLLUP (language_id)",
    "rollup of a literal": "SELECT 'all' FROM film GROUP BY ROLLUP (1)",
    "grouping sets": (
        "SELECT rating::text || 'x' FROM film GROUP BY GROUPING SETS ((rating::text || 'x'), ())"
    ),
    "nullif": "SELECT nullif(title, title) FROM film",
    "scalar subquery": "SELECT (SELECT title FROM film WHERE false)",
    "max over a not null column": "SELECT max(film_id) FROM film WHERE false",
    "sum over a not null column": "SELECT sum(film_id) FROM film WHERE false",
    "array_agg": "SELECT array_agg(film_id) FROM film WHERE false",
    "case without else": "SELECT CASE WHEN false THEN title END FROM film",
    "lag": "SELECT lag(title) OVER (ORDER BY film_id) FROM film",
    "parameter": "SELECT $1::text FROM film",
    "extract of infinity": "SELECT extract(month FROM 'infinity'::timestamp) FROM film",
    "to_char of infinity": "SELECT to_char('infinity'::timestamp, 'YYYY') FROM film",
    "lower of an empty range": "SELECT lower('empty'::int4range) FROM film",
    "array_length of an empty array": "SELECT array_length('{}'::int[], 1) FROM film",
    "array_position": "SELECT array_position(ARRAY[1], 2) FROM film",
    "substring by regex": "SELECT substring(title FROM 'zzz') FROM film",
    "concat_ws with a NULL separator": "SELECT concat_ws(NULL, title) FROM film",
    "row comparison": "SELECT (film_id, NULL::int) = (film_id, 2) FROM film",
    "= ANY over NULLs": "SELECT film_id = ANY (ARRAY[NULL::int]) FROM film",
    "in over a NULL": "SELECT film_id IN (NULL, -1) FROM film",
    "json field": "SELECT '{}'::jsonb -> 'a' FROM film",
    "subscript": "SELECT special_features[9] FROM film",
    "a view": "SELECT title FROM film_list WHERE false UNION ALL SELECT NULL",
    "where with OR": "SELECT description FROM film WHERE description IS NOT NULL OR length > 0",
}


@pytest.mark.parametrize("sql", list(SOUNDNESS.values()), ids=list(SOUNDNESS))
def test_soundness(trap_db: psycopg.Connection, sql: str) -> None:
    params: list[str | None] = [None] if "$1" in sql else []
    assert check(trap_db, sql, params)[0] is False
    nulls, _ = null_columns(trap_db, sql, params)
    assert 0 in nulls, "the case lost its NULL: it no longer tests anything"


def test_a_domain_not_null_is_no_guarantee(trap_db: psycopg.Connection) -> None:
    # The documented hole: a scalar subquery of no row inserts NULL into a NOT NULL domain column.
    trap_db.execute("CREATE DOMAIN strict_int AS int NOT NULL")
    trap_db.execute("CREATE TABLE domained (x strict_int)")
    trap_db.execute("INSERT INTO domained (x) VALUES ((SELECT x FROM domained WHERE false))")
    assert check(trap_db, "SELECT x FROM domained") == (F,)
    assert null_columns(trap_db, "SELECT x FROM domained")[0] == {0}


def test_a_not_valid_not_null_constraint_is_no_guarantee(trap_db: psycopg.Connection) -> None:
    trap_db.execute("CREATE TABLE unvalidated (x int, y int NOT NULL)")
    trap_db.execute("INSERT INTO unvalidated VALUES (NULL, 1)")
    trap_db.execute("ALTER TABLE unvalidated ADD CONSTRAINT x_set NOT NULL x NOT VALID")
    flag = trap_db.execute(
        "SELECT attnotnull FROM pg_attribute WHERE attrelid = 'unvalidated'::regclass AND attname = 'x'"
    )
    assert flag.fetchone() == (True,)  # the catalog flag alone would claim it
    assert check(trap_db, "SELECT x, y FROM unvalidated") == (F, T)


def test_a_virtual_generated_column_is_nullable_without_its_own_constraint(
    trap_db: psycopg.Connection,
) -> None:
    trap_db.execute(
        "CREATE TABLE generated_t (a int NOT NULL, b int GENERATED ALWAYS AS (nullif(a, 1)) VIRTUAL)"
    )
    trap_db.execute("INSERT INTO generated_t (a) VALUES (1), (2)")
    assert check(trap_db, "SELECT a, b FROM generated_t") == (T, F)


def test_a_user_function_that_takes_over_a_name(trap_db: psycopg.Connection) -> None:
    trap_db.execute("CREATE FUNCTION public.length(text) RETURNS int LANGUAGE sql AS 'SELECT NULL::int'")
    trap_db.execute("CREATE FUNCTION public.count(text) RETURNS bigint LANGUAGE sql AS 'SELECT NULL::bigint'")
    try:
        trap_db.execute("SET search_path = public, pg_catalog")
        # With pg_catalog last, the user's functions win: they do return NULL.
        assert check(trap_db, "SELECT length(title), count(title) FROM film GROUP BY title") == (F, F)
        assert null_columns(trap_db, "SELECT length(title) FROM film")[0] == {0}
    finally:
        trap_db.execute("RESET search_path")
        trap_db.execute("DROP FUNCTION public.length(text), public.count(text)")


def test_a_user_operator_that_takes_over_a_name(trap_db: psycopg.Connection) -> None:
    trap_db.execute(
        "CREATE FUNCTION public.nothing(text, text) RETURNS text LANGUAGE sql AS 'SELECT NULL::text'"
    )
    trap_db.execute("CREATE OPERATOR public.|| (LEFTARG = text, RIGHTARG = text, FUNCTION = public.nothing)")
    try:
        trap_db.execute("SET search_path = public, pg_catalog")
        assert check(trap_db, "SELECT title || 'x', film_id + 1 FROM film") == (F, T)
        assert null_columns(trap_db, "SELECT title || 'x' FROM film")[0] == {0}
    finally:
        trap_db.execute("RESET search_path")
        trap_db.execute("DROP OPERATOR public.|| (text, text)")
        trap_db.execute("DROP FUNCTION public.nothing(text, text)")


def test_a_temporary_table_shadows_a_table(trap_db: psycopg.Connection) -> None:
    trap_db.execute("CREATE TEMP TABLE language (name text)")
    trap_db.execute("INSERT INTO language VALUES (NULL)")
    try:
        assert check(trap_db, "SELECT name FROM language") == (F,)
        assert check(trap_db, "SELECT name FROM public.language") == (T,)
    finally:
        trap_db.execute("DROP TABLE pg_temp.language")


def test_the_source_column_must_agree(trap_db: psycopg.Connection) -> None:
    sql = "SELECT title, film_id FROM film"
    described = describe(trap_db, sql)
    assert not_null_columns(trap_db, sql, described) == (T, T)
    swapped = [described[1], described[0]]
    assert not_null_columns(trap_db, sql, swapped) == (F, F)
    assert not_null_columns(trap_db, sql, described[:1]) == (F,)  # a count that does not match


def test_never_raises(trap_db: psycopg.Connection) -> None:
    assert not_null_columns(trap_db, "SELEC nonsense", [(0, 0)] * 2) == (F, F)
    assert not_null_columns(trap_db, "SELECT 1; SELECT 2", [(0, 0)]) == (F,)
    assert not_null_columns(trap_db, "INSERT INTO category (name) VALUES ('x') RETURNING name", [(0, 0)]) == (
        F,
    )
    assert not_null_columns(trap_db, "SELECT x FROM no_such_table", [(0, 0)]) == (F,)
    deep = "SELECT " + "(1 + " * 400 + "1" + ")" * 400
    assert not_null_columns(trap_db, deep, [(0, 0)]) == (F,)
    assert not_null_columns(trap_db, "SELECT " + "(1 + " * 30 + "1" + ")" * 30, [(0, 0)]) == (T,)
    # The caller's transaction is left as it was.
    with trap_db.transaction():
        trap_db.execute("CREATE TEMP TABLE kept (x int NOT NULL)")
        assert not_null_columns(trap_db, "SELECT x FROM kept", [(0, 0)]) == (F,)  # source column missing
        assert trap_db.execute("SELECT count(*) FROM kept").fetchone() == (0,)
        trap_db.execute("DROP TABLE kept")


def test_pglast_and_psycopg_are_not_imported_at_module_level() -> None:
    import ast
    import inspect

    from lynxc.compiler.lower.sql.postgres import column_names, nullability, nullability_catalog

    for module in (column_names, nullability, nullability_catalog):
        tree = ast.parse(inspect.getsource(module))
        top = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)]
        names = {alias.name for node in top for alias in node.names}
        names |= {node.module for node in top if isinstance(node, ast.ImportFrom) and node.module}
        assert not any(name.split(".")[0] in ("pglast", "psycopg") for name in names)
