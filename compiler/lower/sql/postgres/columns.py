"""The JSON type tree and nullability of each result column, from the other Postgres modules:
runtime/backends/sql/postgres/types.py (`pg_type_trees`) and nullability.py (`not_null_columns`).
"""

from __future__ import annotations

from typing import Any


def type_trees(connection: Any, described: list[tuple[int, int]]) -> list[dict[str, Any]]:
    """One tree per (type OID, typmod); raises UnsupportedType for a type with no JSON form."""
    from lynxc.runtime.backends.sql.postgres.types import pg_type_trees

    return pg_type_trees(connection, described)


def not_null(connection: Any, text: str, sources: list[tuple[int, int]]) -> tuple[bool, ...]:
    """Per column, True when provably never NULL; `sources` are libpq's (ftable, ftablecol)."""
    from .nullability import not_null_columns

    return not_null_columns(connection, text, sources)
