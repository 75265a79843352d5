"""The tests' own PostgreSQL (tests/fixtures/postgres.py) and the pagila rows loaded into it
(tests/fixtures/pagila.py): the server starts and stops without leaving a process behind, the
dump loads unedited with rows that satisfy its constraints, the same seed gives the same rows, and
each test's database is its own. Also what psycopg tells of a prepared statement, which the
build-time checks of SQL tools over Postgres read."""

from __future__ import annotations

import os
from pathlib import Path

import psycopg
import pytest

from tests.fixtures import pagila
from tests.fixtures.postgres import (  # noqa: F401
    TEMPLATE,
    TEST_RENTALS,
    TEST_SEED,
    PostgresServer,
    create_database,
    drop_database,
    pagila_db,
    postgres_server,
    running_postgres,
)


def scalar(conn: psycopg.Connection, sql: str, *params: object) -> object:
    row = conn.execute(sql, params).fetchone()
    assert row is not None
    return row[0]


def filled_tables(conn: psycopg.Connection) -> list[str]:
    """The schema's tables that hold rows themselves: ordinary tables (partitions included) and
    partitioned parents, not views."""
    rows = conn.execute(
        "SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace"
        " AND relkind IN ('r', 'p') AND NOT relispartition ORDER BY relname"
    ).fetchall()
    return [name for (name,) in rows]


def content_hashes(conn: psycopg.Connection) -> dict[str, str]:
    return {
        table: str(
            scalar(
                conn,
                f"SELECT md5(string_agg(t::text, E'\\n' ORDER BY t::text)) FROM public.{table} t",
            )
        )
        for table in filled_tables(conn)
    }


def child_pids(pid: int) -> set[int]:
    """The processes whose parent is `pid` (a postmaster's backends and workers)."""
    children = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                children.add(int(entry.name))
    return children


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_server_stops_and_leaves_nothing_even_when_the_body_fails() -> None:
    with pytest.raises(RuntimeError, match="a failing test"), running_postgres() as server:
        with server.connect() as conn:
            assert str(scalar(conn, "SHOW server_version")).startswith("18.")
        processes = {server.pid, *child_pids(server.pid)}
        assert len(processes) > 2  # the postmaster and its checkpointer, writer, ...
        assert server.data_dir.is_dir()
        raise RuntimeError("a failing test")
    assert not [pid for pid in processes if alive(pid)]
    assert not server.data_dir.parent.exists()


def test_every_table_of_the_schema_gets_rows(postgres_server: PostgresServer, pagila_db: str) -> None:  # noqa: F811
    scale = pagila.Scale(TEST_RENTALS)
    with psycopg.connect(pagila_db) as conn:
        counts = {
            table: scalar(conn, f"SELECT count(*) FROM public.{table}") for table in filled_tables(conn)
        }
        assert set(counts) == {table.name for table in pagila.tables(TEST_RENTALS, TEST_SEED)}
        assert all(counts.values()), counts
        assert counts["rental"] == counts["payment"] == TEST_RENTALS
        assert counts["customer"] == scale.customers and counts["inventory"] == scale.inventory
        assert counts["film"] == pagila.FILMS and counts["store"] == counts["staff"] == pagila.STORES
        # the payments spread over the monthly partitions, one per month from 2022-01 to 2026-05
        months = "count(DISTINCT date_trunc('month', payment_date AT TIME ZONE 'UTC'))"
        partitions, spread = conn.execute(
            f"SELECT count(DISTINCT tableoid), {months} FROM public.payment"
        ).fetchone()
        assert partitions == spread >= 53
        assert scalar(conn, "SELECT count(*) FROM public.rental_by_category") == len(pagila.CATEGORIES)


def test_the_rows_satisfy_every_constraint_and_join_up(pagila_db: str) -> None:  # noqa: F811
    with psycopg.connect(pagila_db) as conn:
        # the load added the dump's 37 foreign keys after the rows: each one validated them all
        assert scalar(conn, "SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND convalidated") == 37
        assert scalar(conn, "SELECT count(*) FROM pg_constraint WHERE NOT convalidated") == 0
        # a payment is by the rental's customer, at the rental's store, after the rental
        mismatched = """
            SELECT count(*) FROM public.payment p
            JOIN public.rental r USING (rental_id)
            JOIN public.inventory i USING (inventory_id)
            JOIN public.staff s ON s.staff_id = p.staff_id
            WHERE p.customer_id <> r.customer_id OR s.store_id <> i.store_id
               OR p.payment_date < r.rental_date OR r.return_date <= r.rental_date
        """
        assert scalar(conn, mismatched) == 0
        managers = (
            "SELECT count(*) FROM public.store st JOIN public.staff s"
            " ON s.staff_id = st.manager_staff_id AND s.store_id = st.store_id"
        )
        assert scalar(conn, managers) == pagila.STORES
        overdue = scalar(conn, "SELECT count(*) FROM public.rental WHERE return_date IS NULL")
        assert 0 < overdue < TEST_RENTALS // 20


def test_enums_domains_arrays_and_full_text_are_used(pagila_db: str) -> None:  # noqa: F811
    with psycopg.connect(pagila_db) as conn:
        ratings = scalar(
            conn, "SELECT array_agg(DISTINCT rating::text ORDER BY rating::text) FROM public.film"
        )
        assert ratings == sorted(pagila.RATINGS)
        assert scalar(conn, "SELECT pg_typeof(release_year)::text FROM public.film LIMIT 1") == "year"
        features = scalar(conn, "SELECT array_agg(DISTINCT f) FROM public.film, unnest(special_features) f")
        assert sorted(features) == sorted(pagila.FEATURES)
        assert scalar(conn, "SELECT count(*) FROM public.film WHERE special_features = '{}'") > 0
        assert (
            scalar(
                conn, "SELECT count(*) FROM public.film WHERE fulltext @@ to_tsquery('english', 'dinosaurs')"
            )
            > 0
        )
        # the fulltext we computed is what the schema's own trigger computes on an update
        stored = conn.execute(
            "SELECT film_id, fulltext::text FROM public.film ORDER BY film_id LIMIT 20"
        ).fetchall()
        conn.execute("UPDATE public.film SET title = title WHERE film_id <= 20")
        assert (
            conn.execute(
                "SELECT film_id, fulltext::text FROM public.film ORDER BY film_id LIMIT 20"
            ).fetchall()
            == stored
        )


def test_the_same_seed_gives_the_same_rows(postgres_server: PostgresServer, pagila_db: str) -> None:  # noqa: F811
    def rows(seed: int) -> dict[str, list[tuple[object, ...]]]:
        return {table.name: list(table.rows()) for table in pagila.tables(300, seed)}

    assert rows(7) == rows(7)
    assert rows(7)["rental"] != rows(8)["rental"]
    # and in the database, every column included (uuids, fulltext, the sequences' positions)
    again = create_database(postgres_server, template="template0")
    try:
        with postgres_server.connect(again) as conn:
            pagila.load(conn, rentals=TEST_RENTALS, seed=TEST_SEED)
            # the dump empties search_path for its session: the load leaves the defaults behind
            assert scalar(conn, "SHOW search_path") == '"$user", public'
            reloaded = content_hashes(conn)
        with psycopg.connect(pagila_db) as conn:
            assert content_hashes(conn) == reloaded
    finally:
        drop_database(postgres_server, again)


def test_each_test_database_is_its_own(postgres_server: PostgresServer, pagila_db: str) -> None:  # noqa: F811
    with psycopg.connect(pagila_db) as conn:
        conn.execute("DELETE FROM public.payment WHERE customer_id = 1")
        conn.execute("INSERT INTO public.actor (first_name, last_name) VALUES ('ONLY', 'HERE')")
        assert scalar(conn, "SELECT max(actor_id) FROM public.actor") == pagila.ACTORS + 1
    other = create_database(postgres_server)
    try:
        for dbname in (other, TEMPLATE):
            with postgres_server.connect(dbname) as conn:
                assert scalar(conn, "SELECT count(*) FROM public.actor WHERE first_name = 'ONLY'") == 0
                assert scalar(conn, "SELECT count(*) FROM public.payment") == TEST_RENTALS
    finally:
        drop_database(postgres_server, other)


def test_a_prepared_statement_describes_its_parameters_and_columns(pagila_db: str) -> None:  # noqa: F811
    """libpq's describe of a prepared statement, as psycopg exposes it: the parameter types
    Postgres inferred, and per result column its type, typmod and, for a plain column, the table
    and attribute number it comes from (0 for an expression)."""
    with psycopg.connect(pagila_db) as conn:
        pgconn = conn.pgconn
        sql = (
            b"SELECT f.title, f.rating, f.special_features, f.rental_rate, f.release_year,"
            b" count(r.rental_id) AS n"
            b" FROM public.film f LEFT JOIN public.inventory i USING (film_id)"
            b" LEFT JOIN public.rental r USING (inventory_id)"
            b" WHERE f.release_year >= $1 AND f.fulltext @@ plainto_tsquery('english', $2)"
            b" GROUP BY f.film_id"
        )
        assert pgconn.prepare(b"films", sql).status == psycopg.pq.ExecStatus.COMMAND_OK
        described = pgconn.describe_prepared(b"films")
        assert described.status == psycopg.pq.ExecStatus.COMMAND_OK
        oid = {name: scalar(conn, "SELECT %s::regtype::oid", name) for name in
               ("integer", "text", "mpaa_rating", "text[]", "numeric", "bigint", "year")}  # fmt: skip
        # `release_year >= $1`: the domain `year` is compared as its base type, integer
        assert [described.param_type(i) for i in range(described.nparams)] == [oid["integer"], oid["text"]]
        film = scalar(conn, "SELECT 'public.film'::regclass::oid")
        attnum = dict(
            conn.execute("SELECT attname, attnum FROM pg_attribute WHERE attrelid = %s", (film,)).fetchall()
        )
        d = described
        columns = [
            (d.fname(i).decode(), d.ftype(i), d.fmod(i), d.ftable(i), d.ftablecol(i))
            for i in range(d.nfields)
        ]
        assert columns == [
            ("title", oid["text"], -1, film, attnum["title"]),
            ("rating", oid["mpaa_rating"], -1, film, attnum["rating"]),
            ("special_features", oid["text[]"], -1, film, attnum["special_features"]),
            # numeric(4,2): typmod ((4 << 16) | 2) + 4
            ("rental_rate", oid["numeric"], (4 << 16 | 2) + 4, film, attnum["rental_rate"]),
            # a domain column is described as its base type: the domain is the table column's type
            ("release_year", oid["integer"], -1, film, attnum["release_year"]),
            ("n", oid["bigint"], -1, 0, 0),
        ]
        domain = "SELECT atttypid FROM pg_attribute WHERE attrelid = %s AND attnum = %s"
        assert scalar(conn, domain, film, described.ftablecol(4)) == oid["year"]
