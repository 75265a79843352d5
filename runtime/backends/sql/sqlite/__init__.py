"""SQL tools over a SQLite database (issue 26): sql.json's `"engine": "sqlite"` form, read-only
access through the standard library's sqlite3, and the type rules from declared column types."""
