"""The JSON type tree and nullability of each result column, from the other Postgres modules:
runtime/backends/sql/postgres/types.py (`pg_type_trees`) and nullability.py (`not_null_columns`).

STAND-IN until those land on this branch: every column nullable, every type a string. Never
shipped: replaced by the merge of h-pgtypes and h-pgnull.
"""

from __future__ import annotations

from typing import Any


def type_trees(connection: Any, described: list[tuple[int, int]]) -> list[dict[str, Any]]:
    """One tree per (type OID, typmod); raises UnsupportedType for a type with no JSON form."""
    return [{"id": "varchar"} for _ in described]


def not_null(connection: Any, text: str, sources: list[tuple[int, int]]) -> tuple[bool, ...]:
    """Per column, True when provably never NULL; `sources` are libpq's (ftable, ftablecol)."""
    return tuple(False for _ in sources)
