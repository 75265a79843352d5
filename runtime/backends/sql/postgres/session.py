"""The session every Postgres connection of lynxc runs with, build and server alike, and how
psycopg is made to hand over each value as Postgres's own text.

Why text: psycopg's loaders turn values into Python objects that cannot hold all of Postgres's
(dates and timestamps at ±infinity or past year 9999, intervals with months, which psycopg cannot
even read under IntervalStyle iso_8601, numeric NaN and ±Infinity). Postgres's text is exact, so
every column is fetched in text format and kept as the string Postgres printed; the converters
of `values` read it by the column's type tree. One loader for every OID does it: the built-in
types psycopg knows (and their arrays) are mapped to the plain text loader, and any other OID
(enums, composites, domains' arrays, extension types) already falls back to text.

The settings make that text one fixed form whatever the server's or the role's defaults:
ISO dates, ISO 8601 intervals, timestamps with time zone in UTC, floats printed shortest-exact
(`extra_float_digits` 3, so a float round-trips), bytea as hex, and UTF-8 on the wire.
"""

from __future__ import annotations

from typing import Any

SESSION_SETTINGS: dict[str, str] = {
    "DateStyle": "ISO",
    "IntervalStyle": "iso_8601",
    "TimeZone": "UTC",
    "extra_float_digits": "3",
    "bytea_output": "hex",
    "client_encoding": "UTF8",
}


def session_options(existing: str | None = None) -> str:
    """The libpq `options` value that sets SESSION_SETTINGS at connection start (no round trip),
    after `existing` options from the user's DSN, which ours override where they overlap."""
    ours = " ".join(f"-c {name}={value}" for name, value in SESSION_SETTINGS.items())
    return f"{existing} {ours}" if existing else ours


def session_statements() -> list[str]:
    """The same settings as SET statements, for a connection opened without `session_options`
    (a pooler in transaction mode may drop start-up options: run these in `configure`)."""
    return [f"SET {name} TO '{value}'" for name, value in SESSION_SETTINGS.items()]


def text_loaders(context: Any) -> None:
    """Make `context` (a psycopg connection, cursor or AdaptersMap) load every text-format value
    as the str Postgres sent. Cursors must fetch in text format (psycopg's default)."""
    from psycopg.postgres import types
    from psycopg.types.string import TextLoader

    adapters = getattr(context, "adapters", context)
    adapters.register_loader(0, TextLoader)  # the fallback for OIDs with no loader
    for info in types:
        for oid in (info.oid, info.array_oid):
            if oid:
                adapters.register_loader(oid, TextLoader)
