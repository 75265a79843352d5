"""SQL tools over PostgreSQL: the statements `lynxc build` prepared against the real schema,
served over a pool of psycopg connections.

- types.py, values.py, text.py: result types as JSON type trees, and Postgres's text of a value
  as its JSON value; session.py: the session every connection runs with;
- catalog.py: the Postgres form of generated/<server>/sql.json (`"engine": "postgres"`);
- depends.py: the catalog entries a statement depends on, described canonically, and their
  fingerprint (what the build recorded; what the drift check reads again);
- arguments.py: JSON arguments rendered as Postgres text (every parameter is bound as text of
  unknown type, so Postgres gives it the type the build saw);
- pool.py: one connection pool per server process, opened on the first call;
- drift.py: each tool checked against the served database on the pool's first connection;
- failures.py: Postgres errors as tool errors (by SQLSTATE), passwords redacted;
- run.py: one call: a read-only transaction, the prepared statement, max_rows + 1 rows.

Importing this package loads neither psycopg nor psycopg_pool.
"""
