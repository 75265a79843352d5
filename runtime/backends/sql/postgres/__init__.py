"""SQL tools over PostgreSQL, the runtime's side: the statements `lynxc build` prepared against
the real schema, served over a pool of psycopg connections.

- catalog.py: the Postgres form of generated/<server>/sql.json (`"engine": "postgres"`);
- types.py: result types as JSON type trees (`pg_type_trees`, read from the catalog) and rows
  of Postgres text as JSON values (`pg_row_converter`; values.py converts, text.py splits
  arrays, composites and ranges); their JSON Schemas are in ../types.py;
- session.py: the session settings every connection runs with, so values arrive as one fixed
  text (SESSION_SETTINGS, `session_options`, `text_loaders`);
- depends.py: the catalog entries a statement depends on, re-read by the drift check;
- arguments.py: JSON arguments rendered as Postgres text (every parameter is bound as text of
  unknown type, so Postgres gives it the type the build saw);
- login.py: one login before serving, so a refused login is one start-up line (exit 2);
- pool.py: one connection pool per server process, opened on the first call;
- drift.py: each tool checked against the served database on the pool's first connection;
- failures.py: Postgres errors as tool errors (by SQLSTATE), refused logins, passwords redacted;
- run.py: one call: a read-only transaction, the prepared statement, max_rows + 1 rows.

Imports nothing heavy: psycopg and psycopg_pool are imported by the functions that use them.
"""
