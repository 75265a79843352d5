"""The JSON type tree and nullability of each result column, from the other Postgres modules:
runtime/backends/sql/postgres/types.py (`pg_type_trees`) and nullability.py (`not_null_columns`).

Nullability is a STAND-IN until h-pgnull merges: every column nullable (sound, never a wrong
claim, only a weaker schema). Replaced by the merge, never shipped as the answer.
"""

from __future__ import annotations

from typing import Any


def type_trees(connection: Any, described: list[tuple[int, int]]) -> list[dict[str, Any]]:
    """One tree per (type OID, typmod); raises UnsupportedType for a type with no JSON form."""
    from lynxc.runtime.backends.sql.postgres.types import pg_type_trees

    return pg_type_trees(connection, described)


def not_null(connection: Any, text: str, sources: list[tuple[int, int]]) -> tuple[bool, ...]:
    """Per column, True when provably never NULL; `sources` are libpq's (ftable, ftablecol)."""
    return tuple(False for _ in sources)
