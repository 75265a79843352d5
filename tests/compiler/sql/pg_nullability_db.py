"""A pagila database for the Postgres nullability tests, with rows that spring every trap: a film
with no actor, category or copy, an actor with no film, a language no film speaks, a customer with
no rental, and each nullable column NULL in some rows. Plus the check every case goes through: the
claim of `not_null_columns` against the rows the statement returns."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

import psycopg
from psycopg import pq

from lynxc.compiler.lower.sql.postgres.nullability import not_null_columns
from tests.fixtures.postgres import PostgresServer, create_database, drop_database

TRAPS = """
INSERT INTO film (title, language_id, rating, fulltext) VALUES ('LONELY FILM', 1, NULL, '');
INSERT INTO actor (first_name, last_name) VALUES ('NOBODY', 'ATALL');
INSERT INTO category (name) VALUES ('Empty');
INSERT INTO language (name) VALUES ('Klingon');
INSERT INTO address (address, district, city_id, phone) VALUES ('1 Nowhere', 'X', 1, '');
INSERT INTO customer (store_id, first_name, last_name, address_id, active)
    SELECT 1, 'NO', 'RENTALS', max(address_id), NULL FROM address;
UPDATE film SET description = NULL WHERE film_id % 5 = 0;
UPDATE film SET length = NULL WHERE film_id % 6 = 0;
UPDATE film SET rating = NULL, release_year = NULL WHERE film_id % 7 = 0;
UPDATE film SET original_language_id = NULL WHERE film_id % 2 = 0;
UPDATE film SET original_language_id = 2 WHERE film_id % 2 = 1;
UPDATE customer SET email = NULL WHERE customer_id % 4 = 0;
UPDATE address SET address2 = NULL, postal_code = NULL WHERE address_id % 3 = 0;
UPDATE rental SET return_date = NULL WHERE rental_id % 9 = 0;
"""


@contextlib.contextmanager
def trap_database(server: PostgresServer) -> Iterator[psycopg.Connection]:
    """A database of its own (a copy of the template) with the trap rows; autocommit."""
    name = create_database(server)
    try:
        with server.connect(name, autocommit=True) as conn:
            conn.execute(TRAPS)
            yield conn
    finally:
        drop_database(server, name)


def describe(conn: psycopg.Connection, sql: str) -> list[tuple[int, int]]:
    """libpq's source column of each result column, as the build reads it."""
    prepared = conn.pgconn.prepare(b"", sql.encode(), None)
    if prepared.status != pq.ExecStatus.COMMAND_OK:
        raise ValueError(prepared.get_error_message())
    description = conn.pgconn.describe_prepared(b"")
    return [(description.ftable(i), description.ftablecol(i)) for i in range(description.nfields)]


def null_columns(
    conn: psycopg.Connection, sql: str, params: Sequence[str | None] = ()
) -> tuple[set[int], int]:
    """The result columns holding a NULL in some row, and the number of rows."""
    result = conn.pgconn.exec_params(sql.encode(), [None if p is None else p.encode() for p in params])
    if result.status != pq.ExecStatus.TUPLES_OK:
        raise ValueError(result.get_error_message())
    nulls = {
        c for r in range(result.ntuples) for c in range(result.nfields) if result.get_value(r, c) is None
    }
    return nulls, result.ntuples


def check(conn: psycopg.Connection, sql: str, params: Sequence[str | None] = ()) -> tuple[bool, ...]:
    """The claim for `sql`, after checking that no column it calls non-null holds a NULL."""
    described = describe(conn, sql)
    claim = not_null_columns(conn, sql, described)
    assert len(claim) == len(described)
    nulls, _ = null_columns(conn, sql, params)
    wrong = sorted(c for c in nulls if claim[c])
    assert not wrong, f"columns {wrong} claimed non-null hold NULL: {sql}"
    return claim
