"""SQL tools over PostgreSQL, the runtime's side: the statements `lynxc build` prepared against
the real schema, served over a pool of psycopg connections.

- catalog.py: the Postgres form of generated/<server>/sql.json (`"engine": "postgres"`);
- types.py (with text.py, values.py): type trees, their JSON Schemas, value conversion;
- session.py: the session settings every connection runs with;
- depends.py: the catalog entries a statement depends on, re-read by the drift check;
- arguments.py: JSON arguments rendered as Postgres text (every parameter is bound as text of
  unknown type, so Postgres gives it the type the build saw);
- pool.py: one connection pool per server process, opened on the first call;
- drift.py: each tool checked against the served database on the pool's first connection;
- failures.py: Postgres errors as tool errors (by SQLSTATE), passwords redacted;
- run.py: one call: a read-only transaction, the prepared statement, max_rows + 1 rows.

Imports nothing heavy: psycopg and psycopg_pool are imported by the functions that use them.
"""
