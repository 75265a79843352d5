"""Facets of search_records and query_records: counts per value of named fields, under the
current filters.

`facets: ["status", "topic"]` (at most MAX_FACETS paths) and `facet_size` (the values listed per
field, most frequent first, 1 to MAX_FACET_SIZE, default DEFAULT_FACET_SIZE). A field can be
faceted when its values are few and exact: enum, boolean, reference, string and integer fields
(at any object depth), arrays of those (a record counts once for each distinct element) and the
fields of arrays' objects (`currencies.code`). Long text, localized text, numbers, dates and
date-times cannot: naming one is an error naming `facets.i` and the rule.

Each facet answers `{values: [{value, count}], distinct, missing}`: the top values (ties by
value), how many distinct values the selection holds (more than listed when distinct > len),
and how many selected records have no value (absent, or an empty array). query_records counts
every record its filters select; search_records counts the records its ranking holds (page.total).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lynxc.runtime.errors import ToolError

from .definitions import FieldPath, Resource
from .filters import resolve_path, stored_paths

MAX_FACETS = 8
MAX_FACET_SIZE = 50
DEFAULT_FACET_SIZE = 10
FACET_TYPES = frozenset({"enum", "boolean", "reference", "string", "integer"})


@dataclass(frozen=True)
class Facet:
    path: FieldPath

    @property
    def column(self) -> str:
        return self.path.column

    def statement(self, size: int) -> str:
        """DuckDB over `records`, in one scan: the top `size` values with their counts, each row
        also carrying the distinct and missing counts (a NULL value's row stands for the records
        without one; it sorts last)."""
        column = self.column
        if self.path.in_array:
            values = (
                f"SELECT DISTINCT _key, unnest({column}) AS value FROM records UNION ALL "
                f"SELECT _key, NULL AS value FROM records WHERE coalesce(len({column}), 0) = 0"
            )
        else:
            values = f"SELECT {column} AS value FROM records"
        groups = f"SELECT value, count(*) AS n FROM ({values}) GROUP BY value"
        ranked = (
            "SELECT value, n, count(value) OVER () AS distinct_values, "
            "sum(CASE WHEN value IS NULL THEN n ELSE 0 END) OVER () AS missing, "
            "row_number() OVER (ORDER BY value IS NULL, n DESC, value ASC) AS position "
            f"FROM ({groups})"
        )
        top = f"WHERE position <= {int(size)} ORDER BY position"
        return f"SELECT value, n, distinct_values, missing FROM ({ranked}) {top}"

    def answer(self, rows: list[tuple]) -> dict[str, Any]:
        distinct, missing = (rows[0][2], rows[0][3]) if rows else (0, 0)
        return {
            "values": [
                {"value": self._value(value), "count": n} for value, n, _, _ in rows if value is not None
            ],
            "distinct": distinct,
            "missing": int(missing or 0),
        }

    def _value(self, stored: Any) -> Any:
        """An enum value that is not a string is stored as its JSON text: give the value back."""
        field = self.path.field
        if field.type == "enum" and any(not isinstance(v, str) for v in field.values or ()):
            try:
                return json.loads(stored) if stored not in (field.values or ()) else stored
            except ValueError:
                return stored
        return stored


def facetable(path: FieldPath) -> bool:
    return path.locale is None and path.field.type in FACET_TYPES


def parse_facets(
    resource: Resource, names: Sequence[str] | None, size: int | None
) -> tuple[list[Facet], int]:
    """The facets `names` asks for (checked, without repeats) and the values listed per facet."""
    names = list(names or ())
    if len(names) > MAX_FACETS:
        raise ToolError(f"facets: at most {MAX_FACETS} fields, not {len(names)}")
    facets: list[Facet] = []
    for i, name in enumerate(names):
        if not isinstance(name, str) or not name:
            raise ToolError(f"facets.{i}: a field path is required")
        path = resolve_path(resource, name, f"facets.{i}")
        if not facetable(path):
            allowed = [p.path for p in stored_paths(resource).values() if facetable(p)]
            what = "one locale of a localized field" if path.locale else f"a {path.field.type} field"
            raise ToolError(
                f"facets.{i}: {name!r} is {what}; facets count exact values of enum, boolean, reference, "
                f"string and integer fields and of arrays of them ({', '.join(allowed) or 'none here'})"
            )
        if all(f.path.path != path.path for f in facets):
            facets.append(Facet(path))
    if size is None:
        size = DEFAULT_FACET_SIZE
    if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= MAX_FACET_SIZE:
        raise ToolError(f"facet_size: an integer from 1 to {MAX_FACET_SIZE}, not {size!r}")
    return facets, size


def facet_statements(facets: Sequence[Facet], size: int) -> list[str]:
    return [facet.statement(size) for facet in facets]


def facet_answer(facets: Sequence[Facet], rows: Sequence[list[tuple]]) -> dict[str, Any]:
    """{path: answer} from the rows of facet_statements, in order."""
    return {f.path.path: f.answer(rows[i]) for i, f in enumerate(facets)}
