"""pagila end to end: the bundled Postgres server (specs/pagila/) as generated, served by `lynxc
serve` over the tests' real PostgreSQL 18 (tests/fixtures/postgres.py, rows from the seeded
generator), called through real MCP clients over stdio and HTTP. Every expected answer is worked
out from the same database with psycopg, by simpler statements or in Python, never written down
by hand. One database for the module: every tool is read-only."""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Iterator
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import anyio
import psycopg
import pytest
from mcp.client import Client

from tests.conftest import ROOT, http_server, stdio_client
from tests.fixtures import pagila
from tests.fixtures.postgres import (  # noqa: F401
    PostgresServer,
    create_database,
    drop_database,
    postgres_server,
)

pytestmark = pytest.mark.anyio

SERVER = "pagila"
SPEC = ROOT / "specs" / SERVER
TOOLS = {"actor_filmography", "customer_rentals", "film_availability", "overdue_rentals",
         "rental_details", "revenue_by_store_month", "search_films", "top_films"}  # fmt: skip
CENTS = Decimal("0.01")
INJECTIONS = [
    "' OR 1=1 --",
    "'; DROP TABLE film; --",
    "Robert'); DELETE FROM rental;--",
    "$1",
    "x' UNION SELECT usename, passwd FROM pg_shadow --",
    "!!! & | ( ) :* <-> '",
]


@pytest.fixture(scope="module")
def dsn(postgres_server: PostgresServer) -> Iterator[str]:  # noqa: F811
    """A copy of the pagila template for this module's tests (they only read)."""
    name = create_database(postgres_server)
    try:
        yield postgres_server.dsn(name)
    finally:
        drop_database(postgres_server, name)


def query(dsn: str, sql: str, *params: object) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn) as conn:
        conn.execute("SET TimeZone = 'UTC'")
        return conn.execute(sql, params or None).fetchall()


def instant(text: str | None) -> dt.datetime | None:
    """A timestamptz of an answer ('...Z') as an aware datetime, to compare with psycopg's."""
    return None if text is None else dt.datetime.fromisoformat(text)


def money(value: Any) -> Decimal | None:
    """A numeric of an answer (a JSON number, or exact text) as a Decimal."""
    return None if value is None else Decimal(str(value))


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> Any:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, f"{tool}({arguments}): {result.content[0].text}"
    return result.structured_content


def test_the_spec_ships_the_schema_it_names_with_its_origin_and_licence() -> None:
    """specs/pagila/schema.sql is the pagila dump plus one header line saying where it came
    from; the tests' server loads the same file (tests/fixtures/pagila.py), so the build's
    ephemeral server and the tests' server hold one schema."""
    header, _, body = (SPEC / "schema.sql").read_text(encoding="utf-8").partition("\n")
    assert header.startswith("-- ") and "devrimgunduz/pagila" in header and "LICENSE-pagila.txt" in header
    assert body.startswith("--\n-- PostgreSQL database dump\n") and "CREATE TABLE public.rental" in body
    assert pagila.SCHEMA == SPEC / "schema.sql"
    assert "Copyright (c) Devrim Gündüz" in (SPEC / "LICENSE-pagila.txt").read_text(encoding="utf-8")


async def test_every_tool_is_listed_with_input_and_output_schemas(dsn: str) -> None:
    async with stdio_client(SERVER, {"database_url": dsn}) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(listed) == TOOLS
    for tool in listed.values():
        assert tool.output_schema and tool.annotations.read_only_hint is True, tool.name
    assert listed["search_films"].input_schema["properties"]["rating"]["enum"] == [
        "G",
        "PG",
        "PG-13",
        "R",
        "NC-17",
    ]


async def test_film_search_is_postgres_full_text_with_filters(dsn: str) -> None:
    contains = "(title ILIKE '%dinosaur%' OR description ILIKE '%dinosaur%')"
    expected = query(
        dsn,
        "SELECT film_id, title, rental_rate, special_features, length FROM film "
        f"WHERE {contains} AND rating = 'PG' AND 'Trailers' = ANY (special_features) AND length <= 150",
    )
    async with stdio_client(SERVER, {"database_url": dsn}) as client:
        found = await call(
            client,
            "search_films",
            {"query": "dinosaurs", "rating": "PG", "feature": "Trailers", "max_length": 150, "limit": 50},
        )
        rows = found["rows"]
        # stemming: "dinosaurs" finds every film whose words include "dinosaur"
        assert expected and {r["film_id"] for r in rows} == {film_id for film_id, *_ in expected}
        by_id = {film_id: rest for film_id, *rest in expected}
        for row in rows:
            title, rate, features, length = by_id[row["film_id"]]
            assert (row["title"], money(row["rental_rate"]), row["special_features"], row["length"]) == (
                title, rate, features, length,
            )  # fmt: skip
            assert row["rating"] == "PG"
        ranks = [row["rank"] for row in rows]
        assert ranks == sorted(ranks, reverse=True)

        # web-search syntax: a word excluded with -
        without = (await call(client, "search_films", {"query": "dinosaur -boat", "limit": 50}))["rows"]
        assert without and all("boat" not in (r["title"] + r["description"]).lower() for r in without)
        capped = await call(client, "search_films", {"query": "dinosaur", "limit": 3})
        assert capped["row_count"] == 3 and capped["truncated"] is False
        # punctuation and operators are words to websearch_to_tsquery, never a syntax error, and
        # an injection string is only ever the text searched for: the films it finds are those
        # Postgres finds for the same text bound as a value ('$1' finds the titles with a 1)
        for attack in INJECTIONS:
            answer = await call(client, "search_films", {"query": attack, "limit": 50})
            searched = query(
                dsn,
                "SELECT film_id FROM film, websearch_to_tsquery('english', %s) AS q(query)"
                " WHERE fulltext @@ query ORDER BY ts_rank(fulltext, query) DESC, film_id LIMIT 50",
                attack,
            )
            assert {r["film_id"] for r in answer["rows"]} == {film_id for (film_id,) in searched}, attack
        refused = await client.call_tool("search_films", {"query": "x", "rating": "XXX"})
        assert refused.is_error and "rating" in refused.content[0].text
    assert query(dsn, "SELECT count(*) FROM film")[0][0] == 1000  # nothing was dropped


async def test_stock_per_store_counts_copies_out_and_on_the_shelf(dsn: str) -> None:
    # a film with a copy out now (not returned) and at least two copies
    (film_id,) = query(
        dsn,
        "SELECT i.film_id FROM rental r JOIN inventory i USING (inventory_id) WHERE r.return_date IS NULL "
        "AND (SELECT count(*) FROM inventory j WHERE j.film_id = i.film_id) > 1 ORDER BY 1 LIMIT 1",
    )[0]
    copies = query(dsn, "SELECT inventory_id, store_id FROM inventory WHERE film_id = %s", film_id)
    out = {i for (i,) in query(dsn, "SELECT inventory_id FROM rental WHERE return_date IS NULL")}
    expected: dict[int, list[int]] = defaultdict(list)
    for inventory_id, store_id in copies:
        expected[store_id].append(inventory_id)
    async with stdio_client(SERVER, {"database_url": dsn}) as client:
        rows = (await call(client, "film_availability", {"film_id": film_id}))["rows"]
        assert [r["store_id"] for r in rows] == sorted(expected)
        for row in rows:
            mine = expected[row["store_id"]]
            assert row["film_id"] == film_id and row["copies"] == len(mine)
            assert row["rented_out"] == len([i for i in mine if i in out])
            assert row["in_stock_copies"] == sorted(i for i in mine if i not in out)
            assert row["in_stock"] == len(row["in_stock_copies"])
        assert sum(r["rented_out"] for r in rows) >= 1
        one_store = await call(
            client, "film_availability", {"film_id": film_id, "store_id": rows[0]["store_id"]}
        )
        assert one_store["rows"] == rows[:1]
        assert (await call(client, "film_availability", {"film_id": 999_999}))["rows"] == []


async def test_an_actors_filmography_is_arrays_of_titles_and_categories(dsn: str) -> None:
    (actor_id,) = query(dsn, "SELECT actor_id FROM film_actor GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1")[
        0
    ]
    films = query(
        dsn,
        "SELECT f.title, f.release_year FROM film_actor fa JOIN film f USING (film_id) "
        "WHERE fa.actor_id = %s",
        actor_id,
    )
    categories = query(
        dsn,
        "SELECT DISTINCT c.name FROM film_actor fa JOIN film_category fc USING (film_id) "
        "JOIN category c USING (category_id) WHERE fa.actor_id = %s",
        actor_id,
    )
    async with stdio_client(SERVER, {"database_url": dsn}) as client:
        actor = (await call(client, "actor_filmography", {"actor_id": actor_id}))["rows"]
        assert len(actor) == 1
        row = actor[0]
        assert row["actor_id"] == actor_id and row["film_count"] == len(films)
        assert row["titles"] == sorted(title for title, _ in films)
        assert row["categories"] == sorted(name for (name,) in categories)
        assert (row["first_year"], row["last_year"]) == (min(y for _, y in films), max(y for _, y in films))

        named = await call(client, "actor_filmography", {"name": "NiCk", "limit": 50})
        expected = query(
            dsn, "SELECT count(*) FROM actor WHERE first_name ILIKE '%nick%' OR last_name ILIKE '%nick%'"
        )[0][0]
        assert named["row_count"] == expected > 0
        assert all("NICK" in (r["first_name"] + " " + r["last_name"]) for r in named["rows"])
        keys = [(r["last_name"], r["first_name"], r["actor_id"]) for r in named["rows"]]
        assert keys == sorted(keys)
        # the name's pattern refuses SQL punctuation before any statement runs
        refused = await client.call_tool("actor_filmography", {"name": "a%' OR 1=1 --"})
        assert refused.is_error and "name" in refused.content[0].text


async def test_a_customers_rentals_newest_first_with_what_was_paid(dsn: str) -> None:
    (customer_id,) = query(
        dsn, "SELECT customer_id FROM rental GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1"
    )[0]
    rentals = query(
        dsn,
        "SELECT r.rental_id, r.rental_date, r.return_date, i.film_id, i.store_id, "
        "(SELECT sum(amount) FROM payment p WHERE p.rental_id = r.rental_id) "
        "FROM rental r JOIN inventory i USING (inventory_id) WHERE r.customer_id = %s",
        customer_id,
    )
    rentals.sort(key=lambda r: (r[1], r[0]), reverse=True)
    async with stdio_client(SERVER, {"database_url": dsn}) as client:
        answer = await call(client, "customer_rentals", {"customer_id": customer_id, "limit": 200})
        assert answer["truncated"] is False
        got = [
            (r["rental_id"], instant(r["rented_at"]), instant(r["returned_at"]), r["film_id"], r["store_id"],
             money(r["amount_paid"]))
            for r in answer["rows"]
        ]  # fmt: skip
        assert got == rentals
        first = answer["rows"][0]
        assert first["due_at"] > first["rented_at"]

        limited = await call(client, "customer_rentals", {"customer_id": customer_id, "limit": 2})
        assert limited["rows"] == answer["rows"][:2]
        since = rentals[len(rentals) // 2][1]
        recent = await call(
            client, "customer_rentals", {"customer_id": customer_id, "since": since.isoformat(), "limit": 200}
        )
        assert [r["rental_id"] for r in recent["rows"]] == [r[0] for r in rentals if r[1] >= since]
        assert (await call(client, "customer_rentals", {"customer_id": 2_000_000_000}))["rows"] == []


async def test_one_rental_in_full_and_an_unknown_one_is_an_error(dsn: str) -> None:
    returned, out = query(
        dsn,
        "(SELECT rental_id FROM rental WHERE return_date IS NOT NULL ORDER BY rental_id LIMIT 1) UNION ALL "
        "(SELECT rental_id FROM rental WHERE return_date IS NULL ORDER BY rental_id LIMIT 1)",
    )
    async with stdio_client(SERVER, {"database_url": dsn}) as client:
        for (rental_id,) in (returned, out):
            (expected,) = query(
                dsn,
                "SELECT r.return_date, r.rental_date + f.rental_duration * interval '1 day', f.title, "
                "c.first_name || ' ' || c.last_name "
                "FROM rental r JOIN inventory i USING (inventory_id) JOIN film f USING (film_id) "
                "JOIN customer c USING (customer_id) WHERE r.rental_id = %s",
                rental_id,
            )
            returned_at, due, title, customer = expected
            row = await call(client, "rental_details", {"rental_id": rental_id})
            assert (
                row["rental_id"] == rental_id and row["title"] == title and row["customer_name"] == customer
            )
            assert instant(row["returned_at"]) == returned_at and instant(row["due_at"]) == due
            status = "returned" if returned_at else "overdue" if due < dt.datetime.now(dt.UTC) else "out"
            assert row["status"] == status
        missing = await client.call_tool("rental_details", {"rental_id": 2_000_000_000})
        assert missing.is_error and "no row" in missing.content[0].text
        bad = await client.call_tool("rental_details", {"rental_id": 0})
        assert bad.is_error and "rental_id" in bad.content[0].text


async def test_overdue_rentals_through_the_joins(dsn: str) -> None:
    as_of = dt.date(2026, 7, 1)
    late = query(
        dsn,
        "SELECT r.rental_id, r.rental_date + f.rental_duration * interval '1 day' AS due, i.store_id, "
        "c.email, a.phone "
        "FROM rental r JOIN inventory i USING (inventory_id) JOIN film f USING (film_id) "
        "JOIN customer c USING (customer_id) JOIN address a ON a.address_id = c.address_id "
        "WHERE r.return_date IS NULL",
    )
    late = sorted((row for row in late if row[1].date() < as_of), key=lambda row: (row[1], row[0]))
    async with stdio_client(SERVER, {"database_url": dsn}) as client:
        answer = await call(client, "overdue_rentals", {"as_of": as_of.isoformat(), "limit": 500})
        assert answer["truncated"] is False and late
        got = [
            (r["rental_id"], instant(r["due_at"]), r["store_id"], r["email"], r["phone"])
            for r in answer["rows"]
        ]
        assert got == late
        assert [r["days_overdue"] for r in answer["rows"]] == [
            (as_of - due.date()).days for _, due, *_ in late
        ]
        store = late[0][2]
        mine = await call(
            client, "overdue_rentals", {"as_of": as_of.isoformat(), "store_id": store, "limit": 500}
        )
        assert [r["rental_id"] for r in mine["rows"]] == [row[0] for row in late if row[2] == store]
        first = late[0][1].date()
        assert (await call(client, "overdue_rentals", {"as_of": first.isoformat()}))["rows"] == []


async def test_revenue_per_store_and_month_is_exact_and_truncates_at_its_cap(dsn: str) -> None:
    payments = query(
        dsn,
        "SELECT s.store_id, p.payment_date, p.customer_id, p.amount "
        "FROM payment p JOIN staff s USING (staff_id)",
    )

    def expected(start: dt.date, end: dt.date) -> list[tuple[int, str, int, int, Decimal]]:
        groups: dict[tuple[str, int], list[tuple[int, Decimal]]] = defaultdict(list)
        for store, paid, customer, amount in payments:
            if start <= paid.date() < end:
                groups[(paid.date().replace(day=1).isoformat(), store)].append((customer, amount))
        return [
            (store, month, len(rows), len({c for c, _ in rows}), sum((a for _, a in rows), Decimal(0)))
            for (month, store), rows in sorted(groups.items())
        ]

    async with stdio_client(SERVER, {"database_url": dsn}) as client:
        year = await call(client, "revenue_by_store_month", {"from": "2024-01-01", "until": "2025-01-01"})
        got = [
            (r["store_id"], r["month"], r["payments"], r["customers"], money(r["revenue"]))
            for r in year["rows"]
        ]
        assert got == expected(dt.date(2024, 1, 1), dt.date(2025, 1, 1)) and len(got) == 24
        for row in year["rows"]:
            assert money(row["mean_payment"]) == (money(row["revenue"]) / row["payments"]).quantize(
                CENTS, ROUND_HALF_UP
            )
        # 53 months of two stores: more rows than the cap of 60, cut there and said so
        everything = await call(
            client, "revenue_by_store_month", {"from": "2022-01-01", "until": "2026-07-01"}
        )
        full = expected(dt.date(2022, 1, 1), dt.date(2026, 7, 1))
        assert len(full) > 60 and everything["row_count"] == 60 and everything["truncated"] is True
        assert [(r["store_id"], r["month"]) for r in everything["rows"]] == [row[:2] for row in full[:60]]
        empty = await call(client, "revenue_by_store_month", {"from": "2030-01-01", "until": "2031-01-01"})
        assert empty["rows"] == [] and empty["truncated"] is False


async def test_most_rented_films_of_a_period(dsn: str) -> None:
    rentals = query(
        dsn,
        "SELECT i.film_id, r.customer_id, i.store_id FROM rental r JOIN inventory i USING (inventory_id) "
        "WHERE r.rental_date >= '2024-01-01' AND r.rental_date < '2025-01-01'",
    )
    async with stdio_client(SERVER, {"database_url": dsn}) as client:
        for store in (None, 2):
            counts = Counter(film for film, _, s in rentals if store is None or s == store)
            top = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:7]
            arguments = {"from": "2024-01-01", "until": "2025-01-01", "limit": 7}
            if store is not None:
                arguments["store_id"] = store
            rows = (await call(client, "top_films", arguments))["rows"]
            assert [(r["film_id"], r["rentals"]) for r in rows] == top
            for row in rows:
                customers = {
                    c for film, c, s in rentals if film == row["film_id"] and (store is None or s == store)
                }
                assert row["customers"] == len(customers)


async def test_thirty_two_clients_at_once_over_http(dsn: str) -> None:
    (rental_id,) = query(dsn, "SELECT max(rental_id) FROM rental")[0]
    with http_server(SERVER, {"database_url": dsn}) as url:
        async with Client(url) as client:
            reference = await call(client, "top_films", {"from": "2023-01-01", "until": "2024-01-01"})
            detail = await call(client, "rental_details", {"rental_id": rental_id})
        answers: list[tuple[Any, Any]] = []

        async def one_client() -> None:
            async with Client(url) as client:
                for _ in range(2):
                    top = await call(client, "top_films", {"from": "2023-01-01", "until": "2024-01-01"})
                    answers.append((top, await call(client, "rental_details", {"rental_id": rental_id})))

        async with anyio.create_task_group() as group:
            for _ in range(32):
                group.start_soon(one_client)
    assert len(answers) == 64 and all(answer == (reference, detail) for answer in answers)
