"""SQL tools over a real PostgreSQL, served by the real runtime host to real MCP clients over
HTTP: bound parameters (injection strings are values), the read-only transaction (a write
through a data-modifying CTE refused, nothing written), statement_timeout and cancellation
(the statement gone from pg_stat_activity), exact `truncated`, statements prepared once per
connection, a dropped connection replaced, 32 concurrent clients on a pool of 4.

One database (a copy of the pagila template) and one server process for the module."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import anyio
import psycopg
import pytest
from mcp import Client

from tests.fixtures.postgres import PostgresServer, create_database, drop_database

from .pgfolder import DSN_SETTING, Tool, write_server
from .serving import http_serving, sessions, wait_until

pytestmark = pytest.mark.anyio

NAME = "pg-serving"
POOL = 4
TIMEOUT = 3.0
INJECTIONS = ["'; DROP TABLE film; --", 'O\'Brien "quoted"', "back\\slash\\", "%_ LIKE %", "$1 $2", "ünï €"]
TOOLS = [
    Tool(
        "echo",
        "SELECT $value::text AS value, length($value::text) AS chars",
        {"value": "string"},
        result="one",
    ),
    Tool(
        "film_by_title",
        "SELECT film_id, title FROM film WHERE title = $title",
        {"title": "string"},
        relations={"public.film": ["film_id", "title"]},
    ),
    Tool(
        "film_search",
        "SELECT film_id, title FROM film WHERE title ILIKE '%' || $part || '%' ORDER BY film_id",
        {"part": "string"},
        max_rows=5,
    ),
    Tool("film", "SELECT film_id, title FROM film WHERE film_id = $id", {"id": "integer"}, result="one"),
    Tool(
        "numbers",
        "SELECT g AS n FROM generate_series(1, $count) AS g ORDER BY g",
        {"count": "integer"},
        max_rows=3,
    ),
    Tool("sleep", "SELECT true AS slept FROM pg_sleep($seconds)", {"seconds": "number"}, result="one"),
    Tool("plus_one", "SELECT $n::integer + 1 AS n", {"n": "string"}, result="one"),
    Tool(
        "delete_payment",  # a hand-written sql.json: the build refuses this statement
        "WITH gone AS (DELETE FROM payment WHERE payment_id = $id RETURNING payment_id)"
        " SELECT count(*) AS n FROM gone",
        {"id": "integer"},
        result="one",
        wrap=False,
    ),
    Tool(
        "prepared_self",
        "SELECT count(*) AS copies, sum(generic_plans + custom_plans) AS runs FROM pg_prepared_statements"
        " WHERE statement LIKE '%prepared-self-marker%'",
        result="one",
    ),
]


@pytest.fixture(scope="module")
def database(serving_postgres: PostgresServer) -> Iterator[str]:
    name = create_database(serving_postgres)
    try:
        yield serving_postgres.dsn(name)
    finally:
        drop_database(serving_postgres, name)


@pytest.fixture(scope="module")
def served(database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, subprocess.Popen]]:
    project = tmp_path_factory.mktemp("pg-serving")
    write_server(project, NAME, database, TOOLS)
    settings = {DSN_SETTING: database, "postgres_pool_size": POOL, "sql_timeout_seconds": TIMEOUT}
    with http_serving(project, NAME, settings) as serving:
        yield serving


async def call(url: str, tool: str, arguments: dict) -> tuple[bool, object]:
    async with Client(url) as client:
        result = await client.call_tool(tool, arguments)
    return result.is_error, (result.content[0].text if result.is_error else result.structured_content)


def scalar(dsn: str, sql: str, *params: object) -> object:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(sql, params).fetchone()
    assert row is not None
    return row[0]


async def test_injection_strings_are_matched_as_values(
    served: tuple[str, subprocess.Popen], database: str
) -> None:
    url, _ = served
    films = scalar(database, "SELECT count(*) FROM film")
    async with Client(url) as client:
        for text in INJECTIONS:
            echoed = await client.call_tool("echo", {"value": text})
            assert not echoed.is_error, echoed.content[0].text
            assert echoed.structured_content == {"value": text, "chars": str(len(text))}
            matched = await client.call_tool("film_by_title", {"title": text})
            assert matched.structured_content == {"rows": [], "row_count": 0, "truncated": False}
        title = scalar(database, "SELECT title FROM film ORDER BY film_id LIMIT 1")
        found = await client.call_tool("film_by_title", {"title": title})
        nul = await client.call_tool("echo", {"value": "a\x00b"})
    assert [row["title"] for row in found.structured_content["rows"]] == [title]
    assert nul.is_error and "value" in nul.content[0].text and "NUL" in nul.content[0].text
    assert scalar(database, "SELECT count(*) FROM film") == films


async def test_a_write_through_a_cte_is_refused_by_the_read_only_transaction(
    served: tuple[str, subprocess.Popen], database: str
) -> None:
    url, _ = served
    payment = scalar(database, "SELECT min(payment_id) FROM payment")
    failed, message = await call(url, "delete_payment", {"id": payment})
    assert failed and "read-only" in message and "nothing was written" in message, message
    assert scalar(database, "SELECT count(*) FROM payment WHERE payment_id = %s", payment) == 1


async def test_truncated_is_exact(served: tuple[str, subprocess.Popen]) -> None:
    url, _ = served
    async with Client(url) as client:
        answers = {
            n: (await client.call_tool("numbers", {"count": n})).structured_content for n in (2, 3, 4, 1000)
        }
    assert answers[2] == {"rows": [{"n": "1"}, {"n": "2"}], "row_count": 2, "truncated": False}
    assert (answers[3]["row_count"], answers[3]["truncated"]) == (3, False)
    for over in (4, 1000):
        assert answers[over] == {
            "rows": [{"n": "1"}, {"n": "2"}, {"n": "3"}],
            "row_count": 3,
            "truncated": True,
        }


async def test_invalid_input_names_the_parameter(served: tuple[str, subprocess.Popen]) -> None:
    url, _ = served
    failed, message = await call(url, "plus_one", {"n": "forty"})
    assert failed and message.startswith("n: invalid input syntax for type integer"), message
    assert await call(url, "plus_one", {"n": "41"}) == (False, {"n": "42"})


async def test_statement_timeout_cancels_on_the_server(
    served: tuple[str, subprocess.Popen], database: str
) -> None:
    url, _ = served
    failed, message = await call(url, "sleep", {"seconds": TIMEOUT + 5})
    assert failed and "longer than 3 s" in message and "sql_timeout_seconds" in message, message
    assert not sessions(database, NAME, "pg_sleep")


async def test_a_cancelled_call_cancels_its_statement(
    served: tuple[str, subprocess.Popen], database: str
) -> None:
    url, _ = served
    async with Client(url) as client:
        with anyio.move_on_after(1.5) as scope:
            await client.call_tool("sleep", {"seconds": 2.9})
        assert scope.cancelled_caught
        # cancelled long before the statement would end: pg_sleep(2.9) is gone at once
        assert await anyio.to_thread.run_sync(
            lambda: wait_until(lambda: not sessions(database, NAME, "pg_sleep"), 1.0)
        )
        after = await client.call_tool("echo", {"value": "after"})
    assert not after.is_error


async def test_statements_are_prepared_once_per_connection(served: tuple[str, subprocess.Popen]) -> None:
    url, _ = served
    async with Client(url) as client:
        answers = [(await client.call_tool("prepared_self", {})).structured_content for _ in range(6)]
    assert {answer["copies"] for answer in answers} == {"1"}
    assert max(int(answer["runs"]) for answer in answers) >= 2


async def test_a_dropped_connection_is_replaced(served: tuple[str, subprocess.Popen], database: str) -> None:
    url, _ = served
    assert not (await call(url, "echo", {"value": "before"}))[0]
    with psycopg.connect(database, autocommit=True) as conn:
        dropped = conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = %s",
            (f"lynxc {NAME}",),
        ).fetchone()
    assert dropped and dropped[0] >= 1
    assert await call(url, "echo", {"value": "after"}) == (False, {"value": "after", "chars": "5"})


async def test_32_concurrent_clients_on_a_pool_of_4(
    served: tuple[str, subprocess.Popen], database: str
) -> None:
    url, _ = served
    with psycopg.connect(database) as conn:
        titles = dict(conn.execute("SELECT film_id, title FROM film ORDER BY film_id LIMIT 32").fetchall())
    answers: dict[int, object] = {}

    async def one(film_id: int) -> None:
        answers[film_id] = await call(url, "film", {"id": film_id})

    async with anyio.create_task_group() as group:
        for film_id in titles:
            group.start_soon(one, film_id)
    assert answers == {i: (False, {"film_id": str(i), "title": t}) for i, t in titles.items()}
    assert len(sessions(database, NAME)) <= POOL
