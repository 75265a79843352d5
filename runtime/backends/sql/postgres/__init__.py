"""SQL tools over PostgreSQL: the statements `lynxc build` prepared against the real schema,
served over a pool of psycopg connections.

- catalog.py: the Postgres form of generated/<server>/sql.json (`"engine": "postgres"`);
- depends.py: the catalog entries a statement depends on, described canonically, and their
  fingerprint (what the build recorded; what the drift check reads again);
- arguments.py: JSON arguments rendered as Postgres text (every parameter is bound as text of
  unknown type, so Postgres gives it the type the build saw);
- pool.py: one connection pool per server process, opened on the first call;
- drift.py: each tool checked against the served database on the pool's first connection;
- failures.py: Postgres errors as tool errors (by SQLSTATE), passwords redacted;
- run.py: one call: a read-only transaction, the prepared statement, max_rows + 1 rows;
- types.py: result types as JSON type trees (`pg_type_trees`, read from the catalog) and rows
  of Postgres text as JSON values (`pg_row_converter`; values.py, text.py);
- session.py: the session settings every connection runs with, so values arrive as one fixed
  text (SESSION_SETTINGS, `session_options`, `text_loaders`).

Importing this package loads neither psycopg nor psycopg_pool.
"""
