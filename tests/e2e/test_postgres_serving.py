"""A Postgres spec built by `lynxc build --set database_url=...` against the pagila database,
then served by `lynxc serve` over stdio to a real MCP client: typed answers (validated by the
host against the output schemas the build derived), an enum parameter and an array column,
`truncated`, a writing tool on a server that allows writes (READ WRITE, committed), and a
migration after the build that disables only the tool it touches."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from lynxc.compiler.cli import main
from tests.conftest import stdio_client
from tests.fixtures.postgres import PostgresServer, create_database, drop_database, postgres_server  # noqa: F401

pytestmark = pytest.mark.anyio

SPEC = """\
lynxc: 1
server:
  name: pagila-serving
  version: 1.0.0
  settings:
    database_url: {type: string, description: The pagila database.}
  postgres:
    dsn: {setting: database_url}
    allow_writes: true
tools:
  - name: films_rated
    description: {purpose: List the films of one rating with their special features in id order.}
    annotations: {readOnlyHint: true}
    parameters:
      rating: {type: string, required: true, description: The MPAA rating.}
    backend:
      sql: |
        SELECT film_id, title, rating, rental_rate, special_features
        FROM film WHERE rating = $rating::mpaa_rating ORDER BY film_id
    caps:
      max_rows: {value: 5, description: Films one call returns at most.}
  - name: customer_name
    description: {purpose: Return the first and last name of one customer by id.}
    annotations: {readOnlyHint: true}
    parameters:
      id: {type: integer, required: true, description: The customer id.}
    backend:
      sql: SELECT first_name, last_name FROM customer WHERE customer_id = $id
      result: one
  - name: add_category
    description: {purpose: Add a film category and return its id.}
    annotations: {destructiveHint: true, readOnlyHint: false}
    parameters:
      name: {type: string, required: true, description: The category name.}
    backend:
      sql: INSERT INTO category (name) VALUES ($name) RETURNING category_id
      result: one
"""


@pytest.fixture(scope="module")
def built(
    postgres_server: PostgresServer,  # noqa: F811
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Path, str]]:
    name = create_database(postgres_server)
    dsn = postgres_server.dsn(name)
    root = tmp_path_factory.mktemp("pagila-serving")
    (root / "specs" / "pagila-serving").mkdir(parents=True)
    (root / "specs" / "pagila-serving" / "server.yaml").write_text(SPEC)
    with pytest.raises(SystemExit) as done:
        main(["--project", str(root), "build", "--set", f"database_url={dsn}"])
    assert done.value.code in (0, None)
    try:
        yield root, dsn
    finally:
        drop_database(postgres_server, name)


async def test_a_built_spec_serves_typed_answers_and_writes_where_allowed(built: tuple[Path, str]) -> None:
    root, dsn = built
    with psycopg.connect(dsn) as conn:
        expected = conn.execute(
            "SELECT film_id, title, rental_rate::text, special_features FROM film"
            " WHERE rating = 'PG' ORDER BY film_id LIMIT 5"
        ).fetchall()
        total = conn.execute("SELECT count(*) FROM film WHERE rating = 'PG'").fetchone()
        names = conn.execute("SELECT first_name, last_name FROM customer WHERE customer_id = 7").fetchone()
    async with stdio_client("pagila-serving", {"database_url": dsn}, project=root) as client:
        films = await client.call_tool("films_rated", {"rating": "PG"})
        customer = await client.call_tool("customer_name", {"id": 7})
        nobody = await client.call_tool("customer_name", {"id": -1})
        bad_rating = await client.call_tool("films_rated", {"rating": "XXX"})
        added = await client.call_tool("add_category", {"name": "Serving"})
    assert not films.is_error, films.content[0].text
    rows = films.structured_content["rows"]
    assert [(r["film_id"], r["title"], r["special_features"]) for r in rows] == [
        (i, t, f) for i, t, _, f in expected
    ]
    assert all(r["rating"] == "PG" for r in rows) and isinstance(rows[0]["film_id"], int)
    assert films.structured_content["truncated"] == (total is not None and total[0] > 5)
    assert customer.structured_content == {"first_name": names[0], "last_name": names[1]}
    assert nobody.is_error and "id=-1" in nobody.content[0].text
    assert bad_rating.is_error and bad_rating.content[0].text.startswith("rating: "), bad_rating.content[
        0
    ].text
    assert not added.is_error, added.content[0].text
    with psycopg.connect(dsn) as conn:
        stored = conn.execute(
            "SELECT name FROM category WHERE category_id = %s", [added.structured_content["category_id"]]
        )
        assert stored.fetchone() == ("Serving",)


async def test_a_migration_after_the_build_disables_only_the_tool_it_touches(built: tuple[Path, str]) -> None:
    root, dsn = built
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ALTER TABLE customer ALTER COLUMN first_name DROP NOT NULL")
    async with stdio_client("pagila-serving", {"database_url": dsn}, project=root) as client:
        drifted = await client.call_tool("customer_name", {"id": 7})
        kept = await client.call_tool("films_rated", {"rating": "G"})
    message = drifted.content[0].text
    assert drifted.is_error and "'customer_name'" in message and "`first_name`" in message, message
    assert "was text not null" in message and "lynxc build" in message
    assert not kept.is_error
