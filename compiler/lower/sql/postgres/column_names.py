"""The name Postgres gives an unaliased result column (parse_target.c's FigureColname), for the
statement analyses that resolve references by name (a subquery's columns seen from outside)."""

from __future__ import annotations

from typing import Any


def derived_name(expression: Any) -> str | None:
    """The name Postgres gives an unaliased result column (FigureColname), where this module is
    sure of it; None otherwise."""
    name, strength = _figure(expression)
    return name if strength > 0 else "?column?"


def _figure(expression: Any) -> tuple[str | None, int]:
    from pglast import ast

    if isinstance(expression, ast.ColumnRef):
        last = expression.fields[-1]
        return (last.sval, 2) if isinstance(last, ast.String) else (None, 2)
    if isinstance(expression, ast.FuncCall):
        return expression.funcname[-1].sval, 2
    if isinstance(expression, ast.TypeCast):
        name, strength = _figure(expression.arg)
        if strength <= 1 and expression.typeName is not None and expression.typeName.names:
            return expression.typeName.names[-1].sval, 1
        return name, strength
    if isinstance(expression, ast.CollateClause):
        return _figure(expression.arg)
    if isinstance(expression, ast.A_Expr):
        return ("nullif", 2) if expression.kind.name == "AEXPR_NULLIF" else ("?column?", 0)
    if isinstance(expression, ast.A_Const | ast.BoolExpr | ast.NullTest | ast.BooleanTest):
        return "?column?", 0
    if isinstance(expression, ast.CaseExpr):
        name, strength = _figure(expression.defresult) if expression.defresult is not None else (None, 0)
        return (name, strength) if strength > 1 else ("case", 1)
    if isinstance(expression, ast.CoalesceExpr):
        return "coalesce", 2
    if isinstance(expression, ast.MinMaxExpr):
        return ("greatest" if expression.op.name == "IS_GREATEST" else "least"), 2
    if isinstance(expression, ast.A_ArrayExpr):
        return "array", 2
    if isinstance(expression, ast.RowExpr):
        return "row", 2
    if isinstance(expression, ast.GroupingFunc):
        return "grouping", 2
    if isinstance(expression, ast.SubLink) and expression.subLinkType.name in (
        "EXISTS_SUBLINK",
        "ARRAY_SUBLINK",
    ):
        return ("exists" if expression.subLinkType.name == "EXISTS_SUBLINK" else "array"), 2
    return None, 2  # not predicted: None with a strength that keeps it
