"""Build checks of SQL tools over a SQLite database (issue 26): check.py is the entry."""
