"""SQL tools over PostgreSQL: the build database, and each statement prepared and checked there.

Nothing here imports psycopg or pglast at module level: a build without Postgres specs loads
neither (tests/compiler/test_light_imports.py)."""
