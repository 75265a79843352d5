"""SQL tools over PostgreSQL: the runtime's side (type trees and value conversion in `types`, the
session every connection runs with in `session`). Imports nothing heavy: psycopg is imported by
the functions that use it."""
