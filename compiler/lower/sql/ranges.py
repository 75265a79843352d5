"""What a SQL tool's parameters publish about the SQL types they bind as, and the bounds a
statement needs from them.

An `integer` parameter binds as BIGINT: a value past BIGINT's range passes a schema that says
nothing and fails inside DuckDB ("Python Conversion Failure"), so the range is carried into the
published schema (the host then refuses the value naming the field and the rule). A declared
bound outside that range could never be met and is an error. A parameter that sets LIMIT or
OFFSET with no maximum is warned about: the row cap bounds what a call returns, not how many
rows DuckDB counts past.
"""

from __future__ import annotations

from typing import Any

from ...diagnostics import Diagnostic
from ...rules import diagnostic
from ...spec.load import ToolSource
from .positions import SqlText

# The range of each SQL type a parameter binds as that has one narrower than JSON's integers.
# (DuckDB binds every integer parameter as BIGINT; Postgres infers smallint, integer or bigint.)
SQL_TYPE_RANGES = {
    "BIGINT": (-(2**63), 2**63 - 1),
    "INTEGER": (-(2**31), 2**31 - 1),
    "SMALLINT": (-(2**15), 2**15 - 1),
}
_BOUNDS = (("minimum", "exclusiveMinimum", 0), ("maximum", "exclusiveMaximum", 1))


def with_type_ranges(
    source: ToolSource, input_schema: dict[str, Any], types: dict[str, str]
) -> tuple[dict[str, Any], list[Diagnostic]]:
    """The input schema with each parameter's SQL type range as its minimum and maximum (where
    none is declared), and a diagnostic for each declared bound outside that range."""
    properties = input_schema.get("properties", {})
    found: list[Diagnostic] = []
    ranged = dict(properties)
    for name, sql_type in types.items():
        schema, problems = _ranged(properties[name], sql_type)
        ranged[name] = schema
        for path, keyword, bound, (low, high) in problems:
            found.append(
                diagnostic(
                    "SQL_PARAM_RANGE",
                    f"parameter '{name}': {keyword} {bound} lies outside {sql_type.rstrip('[]')}'s range "
                    f"[{low}, {high}], the values the statement can bind",
                    source.doc.span((*source.base, "parameters", name, *path, keyword)),
                    f"declare {keyword} within [{low}, {high}]",
                )
            )
    return {**input_schema, "properties": ranged}, found


# (where in the parameter's spec, keyword, its bound, the type's range)
_Problem = tuple[tuple[str, ...], str, Any, tuple[int, int]]


def _ranged(schema: dict[str, Any], sql_type: str) -> tuple[dict[str, Any], list[_Problem]]:
    """`schema` (a parameter's, or an array's items) with the range of `sql_type`."""
    options = schema.get("anyOf")
    if isinstance(options, list):  # a nullable parameter: anyOf [X, null]
        problems: list[_Problem] = []
        ranged_options = []
        for option in options:
            ranged, found = _ranged(option, sql_type) if option != {"type": "null"} else (option, [])
            ranged_options.append(ranged)
            problems += found
        return {**schema, "anyOf": ranged_options}, problems
    if sql_type.endswith("[]"):
        items = schema.get("items")
        if not isinstance(items, dict):
            return schema, []
        ranged, problems = _ranged(items, sql_type[:-2])
        return {**schema, "items": ranged}, [(("items", *path), *rest) for path, *rest in problems]
    limits = SQL_TYPE_RANGES.get(sql_type)
    if limits is None or schema.get("type") != "integer":
        return schema, []
    problems = []
    added: dict[str, Any] = {}
    for keyword, exclusive, side in _BOUNDS:
        declared = [(k, schema[k]) for k in (keyword, exclusive) if isinstance(schema.get(k), int | float)]
        for k, bound in declared:
            if not limits[0] <= bound <= limits[1]:
                problems.append(((), k, bound, limits))
        if not declared:
            added[keyword] = limits[side]
    if not added:
        return schema, problems
    # The bounds right after the type, where a reader of the schema looks for them.
    head = {"type": schema["type"], **added}
    return {**head, **{k: v for k, v in schema.items() if k not in head}}, problems


def unbounded_limits(
    tree: dict[str, Any],
    declared: dict[str, Any],
    first_use: dict[str, int],
    where: SqlText,
) -> list[Diagnostic]:
    """A warning for each parameter that sets a LIMIT or OFFSET and declares no maximum
    (`first_use`: where each parameter's first `$name` stands in the statement)."""
    found: list[Diagnostic] = []
    for clause, name in sorted(_limit_parameters(tree)):
        schema = declared.get(name)
        if not isinstance(schema, dict) or _has_maximum(schema):
            continue
        found.append(
            diagnostic(
                "SQL_LIMIT_UNBOUNDED",
                f"parameter '{name}' sets the {clause} but declares no maximum: a caller can ask "
                f"for any number of rows"
                + (" (the row cap cuts the answer, not the work)" if clause == "LIMIT" else " to skip"),
                where.span(first_use.get(name)),
                "declare `maximum: caps.max_rows` (or a number) on the parameter",
            )
        )
    return found


def _limit_parameters(tree: Any) -> set[tuple[str, str]]:
    """(LIMIT or OFFSET, parameter name) for each parameter inside a LIMIT or OFFSET of the
    statement's parse tree (DuckDB's json_serialize_sql)."""
    found: set[tuple[str, str]] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("type") == "LIMIT_MODIFIER":
                for key, clause in (("limit", "LIMIT"), ("offset", "OFFSET")):
                    found |= {(clause, name) for name in _parameters(node.get(key))}
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def _parameters(expression: Any) -> set[str]:
    found, stack = set(), [expression]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("class") == "PARAMETER" and isinstance(node.get("identifier"), str):
                found.add(node["identifier"])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def _has_maximum(schema: dict[str, Any]) -> bool:
    if "maximum" in schema or "exclusiveMaximum" in schema or "enum" in schema:
        return True
    options = schema.get("anyOf")
    return isinstance(options, list) and all(
        _has_maximum(o) for o in options if isinstance(o, dict) and o != {"type": "null"}
    )
