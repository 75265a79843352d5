"""Which result columns of a Postgres SQL tool's statement are provably never NULL.

The same one-sided proof as the DuckDB prover (`..nullability`), on Postgres's own parse tree
(pglast: libpg_query of PostgreSQL 18) and the catalog of the build database. A column is "not
null" only when every rule on the way says so; anything else (a function outside a short list, a
materialized view or a foreign table, a table function, a parameter, a shape of the tree this
module has not seen) is nullable, and any surprise gives all-nullable, never an exception.

What it proves:
- non-NULL literals; casts of a non-null value to a built-in type no user cast converts to;
- count(...) and its window form; row_number, rank, dense_rank, percent_rank, cume_dist, ntile
  of a non-null count; grouping(); no other aggregate (an empty group gives NULL);
- COALESCE and GREATEST/LEAST with a non-null argument; IS [NOT] NULL, IS [NOT] DISTINCT FROM,
  IS [NOT] TRUE/FALSE/UNKNOWN, EXISTS, ARRAY[...], ARRAY(subquery), ROW(...);
- built-in comparison, arithmetic, concatenation, LIKE and regex operators, BETWEEN, IN (...),
  AND/OR/NOT, over non-null operands (a row constructor compared field by field may give NULL);
  a short list of functions that are never NULL on non-null arguments (`_PRESERVING`);
- CASE when every branch, ELSE included, is non-null;
- a column of a table or partitioned table with a validated NOT NULL constraint (or of a view,
  by these rules on the view's definition), reached through
  the FROM clause, unless it is on the padded side of an outer join or a grouping key of
  ROLLUP/CUBE/GROUPING SETS; a column an inner join's ON or the WHERE clause compares or tests IS
  NOT NULL (a row where it is NULL never passes); JOIN ... USING merged columns;
- subqueries, LATERAL subqueries, CTEs and VALUES by the same rules on their own select lists;
- UNION when every side is non-null, INTERSECT when one side is, EXCEPT by its left side.

A domain's NOT NULL is never trusted (an outer join or an empty scalar subquery puts NULL in a
NOT NULL domain), nor a CHECK constraint. Where libpq reports the source column of a result
column (`described`), it must be the one this module resolved, or the column is nullable.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from .column_names import derived_name
from .nullability_catalog import TEXT_TYPES, Catalog

# Built-in functions that return a non-NULL value whenever every argument is non-NULL, in every
# overload (they raise on bad input). Left out on purpose: lower/upper (of a range: NULL when
# empty or unbounded; trusted only on text), substring (its regex forms give NULL on no match),
# nullif, to_char and extract/date_part (NULL for infinite dates), array_length, array_position,
# regexp_match, split_part of... and everything not listed.
_PRESERVING = frozenset(
    {
        "length",
        "char_length",
        "character_length",
        "octet_length",
        "abs",
        "ceil",
        "ceiling",
        "floor",
        "round",
        "trunc",
        "sign",
        "btrim",
        "ltrim",
        "rtrim",
        "replace",
        "reverse",
        "lpad",
        "rpad",
        "repeat",
        "left",
        "right",
        "substr",
        "strpos",
        "position",
        "md5",
        "initcap",
        "cardinality",
        "date_trunc",
        "similar_to_escape",
    }
)
_TEXT_ONLY = frozenset({"lower", "upper"})
# Never NULL whatever their arguments: concat skips NULLs; the builders make a value of NULLs.
_ALWAYS = frozenset(
    {
        "concat",
        "now",
        "transaction_timestamp",
        "statement_timestamp",
        "clock_timestamp",
        "jsonb_build_object",
        "json_build_object",
        "jsonb_build_array",
        "json_build_array",
    }
)
_COUNTS = frozenset({"count"})
_NOT_NULL_WINDOWS = frozenset({"row_number", "rank", "dense_rank", "percent_rank", "cume_dist"})
_PRESERVING_WINDOWS = frozenset({"ntile"})
_WINDOW_TYPES = {"percent_rank": 701, "cume_dist": 701}  # the others (and count) are bigints
_OPERATORS = frozenset(
    {
        "=",
        "<>",
        "!=",
        "<",
        ">",
        "<=",
        ">=",
        "+",
        "-",
        "*",
        "/",
        "%",
        "||",
        "~~",
        "!~~",
        "~~*",
        "!~~*",
        "~",
        "!~",
        "~*",
        "!~*",
    }
)
_COMPARISONS = frozenset({"=", "<>", "!=", "<", ">", "<=", ">="})
# Never NULL: CURRENT_DATE, CURRENT_USER, ... but CURRENT_SCHEMA (NULL on an empty search path).
_CURRENT_SCHEMA = "SVFOP_CURRENT_SCHEMA"
_TRUE_OR_FALSE = ("IS_TRUE", "IS_FALSE")  # NULL IS TRUE is false: the row does not pass
_CONST_TYPES = {"Integer": 23, "Float": 1700, "Boolean": 16}  # a quoted string is of unknown type
# System columns every table has, not listed in pg_attribute's positive attnums.
_SYSTEM_COLUMNS = frozenset({"ctid", "xmin", "xmax", "cmin", "cmax", "tableoid"})


class _Unsupported(Exception):
    """A shape of the tree this module does not reason about."""


@dataclass(frozen=True)
class _Value:
    """What is known of one value: never NULL; the table column it is (as libpq reports a result
    column's source, through subqueries and joins) and whether it went through a cast."""

    not_null: bool = False
    origin: tuple[int, int] | None = None
    cast: bool = False
    type: int | None = None  # pg_type oid, where known (to rule out other operator overloads)


_UNKNOWN = _Value()
_NOT_NULL = _Value(True)


@dataclass(frozen=True)
class _Column:
    name: str | None  # None: a name this module does not predict
    value: _Value


@dataclass
class _Item:
    """One entry of a FROM clause's namespace (Postgres's ParseNamespaceItem)."""

    name: str | None  # what qualified references use
    columns: list[tuple[str | None, int]] | None  # (name, slot); None: not known
    rel_visible: bool = True
    cols_visible: bool = True
    hidden: frozenset[str] = frozenset()  # names that bind to something not listed (system columns)


@dataclass
class _Level:
    """The FROM clause of one SELECT: its items and the value of each column slot."""

    slots: list[_Value] = field(default_factory=list)
    items: list[_Item] = field(default_factory=list)
    parent: _Level | None = None
    parent_items: int | None = None  # how many of the parent's items a LATERAL item sees


@dataclass(frozen=True)
class _Context:
    catalog: Catalog
    ctes: dict[str, tuple[_Column, ...] | None] = field(default_factory=dict)
    depth: int = 0


_MAX_DEPTH = 64


def not_null_columns(
    conn: Any, sql: str, described: list[tuple[int, int]] | tuple[tuple[int, int], ...]
) -> tuple[bool, ...]:
    """For the statement `sql` (`$1..$n` placeholders), which result columns are provably never
    NULL on the database of the sync psycopg `conn`; `described` holds libpq's (ftable, ftablecol)
    of each result column, (0, 0) when it reports none. Sound: anything not proven is False."""
    import psycopg

    unknown = (False,) * len(described)
    try:
        import pglast

        statements = pglast.parse_sql(sql)
        if len(statements) != 1:
            return unknown
        tree = statements[0].stmt
        with conn.transaction():  # a savepoint when the caller is in a transaction
            columns = _query(tree, _Context(Catalog(conn)), None)
    except (psycopg.errors.QueryCanceled, psycopg.OperationalError):
        raise  # the build's time limit or a lost connection: not a question of nullability
    except Exception:  # any surprise in a tree or a catalog means "not proven", never a failed build
        return unknown
    if columns is None or len(columns) != len(described):
        return unknown
    return tuple(
        _agrees(column.value, tuple(source)) and column.value.not_null
        for column, source in zip(columns, described, strict=True)
    )


def _agrees(value: _Value, source: tuple[int, int]) -> bool:
    """Whether this module's idea of where a column comes from matches Postgres's (a mismatch
    means a reference was resolved differently: trust nothing about that column)."""
    if source[0] == 0:
        return value.origin is None or value.cast
    return value.origin == source


# --- queries -------------------------------------------------------------------------------


def _query(node: Any, context: _Context, parent: _Level | None) -> tuple[_Column, ...] | None:
    """The result columns of a SELECT (or set operation, or VALUES), or None when not known."""
    from pglast import ast

    if context.depth > _MAX_DEPTH:
        raise _Unsupported("too deep")
    context = replace(context, depth=context.depth + 1)
    if not isinstance(node, ast.SelectStmt):
        return None  # INSERT/UPDATE/DELETE ... RETURNING and the rest
    if node.intoClause is not None:
        return None
    context = _with_ctes(node.withClause, context, parent)
    op = node.op.name if node.op is not None else "SETOP_NONE"
    if op != "SETOP_NONE":
        return _set_operation(node, op, context, parent)
    if node.valuesLists:
        return _values(node.valuesLists, context, parent)
    return _select(node, context, parent)


def _nested(node: Any, context: _Context, parent: _Level | None) -> tuple[_Column, ...] | None:
    try:
        return _query(node, context, parent)
    except _Unsupported:
        return None


def _with_ctes(with_clause: Any, context: _Context, parent: _Level | None) -> _Context:
    if with_clause is None or not with_clause.ctes:
        return context
    ctes = dict(context.ctes)
    if with_clause.recursive:
        # Every CTE of a WITH RECURSIVE sees every other, itself included: not known yet.
        for cte in with_clause.ctes:
            ctes[cte.ctename] = None
    for cte in with_clause.ctes:
        if not with_clause.recursive:
            ctes[cte.ctename] = None  # visible to the later ones only
        inner = replace(context, ctes=dict(ctes))
        query = cte.ctequery
        columns = _nested(query, inner, parent)
        if with_clause.recursive and columns is None:
            columns = _recursive_names(query, inner, parent)
        ctes[cte.ctename] = _renamed(columns, [a.sval for a in cte.aliascolnames or ()])
    return replace(context, ctes=ctes)


def _recursive_names(query: Any, context: _Context, parent: _Level | None) -> tuple[_Column, ...] | None:
    """A recursive CTE (`anchor UNION recursive part`): the anchor's names, every value nullable."""
    from pglast import ast

    if not isinstance(query, ast.SelectStmt) or query.op is None or query.op.name == "SETOP_NONE":
        return None
    anchor = _nested(query.larg, context, parent)
    return None if anchor is None else tuple(_Column(c.name, _UNKNOWN) for c in anchor)


def _renamed(columns: tuple[_Column, ...] | None, aliases: list[str]) -> tuple[_Column, ...] | None:
    """`AS x(a, b)`: the first columns take the given names, the rest keep theirs."""
    if columns is None or len(aliases) > len(columns):
        return None
    return tuple(
        _Column(aliases[i] if i < len(aliases) else column.name, column.value)
        for i, column in enumerate(columns)
    )


def _set_operation(
    node: Any, op: str, context: _Context, parent: _Level | None
) -> tuple[_Column, ...] | None:
    left = _query(node.larg, context, parent)
    right = _query(node.rarg, context, parent)
    if left is None or right is None or len(left) != len(right):
        return None
    combine = {
        "SETOP_UNION": lambda a, b: a and b,
        # Every row of an INTERSECT equals a row of each side (NULLs compare equal there).
        "SETOP_INTERSECT": lambda a, b: a or b,
        "SETOP_EXCEPT": lambda a, b: a,
    }.get(op)
    if combine is None:
        return None
    # Names from the left side; Postgres reports no source column for a set operation's result.
    return tuple(
        _Column(a.name, _Value(combine(a.value.not_null, b.value.not_null)))
        for a, b in zip(left, right, strict=True)
    )


def _values(rows: Any, context: _Context, parent: _Level | None) -> tuple[_Column, ...] | None:
    level = _Level(parent=parent)
    values = [[_value(expression, level, context) for expression in row] for row in rows]
    if not values or len({len(row) for row in values}) != 1:
        return None
    return tuple(
        _Column(f"column{i + 1}", _Value(all(row[i].not_null for row in values)))
        for i in range(len(values[0]))
    )


def _select(node: Any, context: _Context, parent: _Level | None) -> tuple[_Column, ...]:
    level = _Level(parent=parent)
    for item in node.fromClause or ():
        _add_from(item, level, context, top=True)
    if node.whereClause is not None:
        for slot in _proven(node.whereClause, level, 0, context):
            level.slots[slot] = replace(level.slots[slot], not_null=True)
    grouping = _grouping_nulls(node.groupClause)
    columns: list[_Column] = []
    for target in node.targetList or ():
        star = _star_fields(target.val)
        if star is not None:
            columns.extend(_star(star, level))
            continue
        if _has_star(target.val):
            raise _Unsupported("a star inside an expression")
        if grouping and not _aggregated(target.val, context):
            # Any expression without an aggregate may be a grouping key (or equal one, or name
            # one by position): NULL in the rows of the sets that leave it out.
            value = _UNKNOWN
        else:
            value = _value(target.val, level, context, grouped=grouping)
        columns.append(_Column(target.name or derived_name(target.val), value))
    return tuple(columns)


def _grouping_nulls(group_clause: Any) -> bool:
    """Whether some grouping set leaves a key out (ROLLUP, CUBE, GROUPING SETS; `()` alone too)."""
    from pglast import ast

    return any(isinstance(item, ast.GroupingSet) for item in group_clause or ())


# --- FROM ----------------------------------------------------------------------------------


def _new_slots(level: _Level, values: list[_Value]) -> list[int]:
    start = len(level.slots)
    level.slots.extend(values)
    return list(range(start, start + len(values)))


def _add_from(ref: Any, level: _Level, context: _Context, top: bool = False) -> _Item:
    """Add a FROM item's namespace entries to `level`; return the entry its columns are seen by."""
    from pglast import ast

    if isinstance(ref, ast.JoinExpr):
        return _add_join(ref, level, context)
    if isinstance(ref, ast.RangeVar):
        return _add_relation(ref, level, context)
    if isinstance(ref, ast.RangeSubselect):
        alias = ref.alias
        # A LATERAL subquery sees the items before it; any other sees only the outer query.
        lateral_parent = level if ref.lateral else level.parent
        columns = _nested(ref.subquery, context, _lateral(level) if ref.lateral else lateral_parent)
        if alias is not None:
            columns = _renamed(columns, [a.sval for a in alias.colnames or ()])
        return _add_columns(level, alias.aliasname if alias else None, columns)
    # Functions in FROM, XMLTABLE, JSON_TABLE, TABLESAMPLE...: columns not known.
    alias = getattr(ref, "alias", None)
    item = _Item(alias.aliasname if alias is not None else None, None)
    level.items.append(item)
    return item


def _lateral(level: _Level) -> _Level:
    """The view a LATERAL item has of its own level: the items so far, as the parent level."""
    return _Level(slots=level.slots, items=list(level.items), parent=level.parent)


def _add_columns(level: _Level, name: str | None, columns: tuple[_Column, ...] | None) -> _Item:
    if columns is None:
        item = _Item(name, None)
    else:
        slots = _new_slots(level, [column.value for column in columns])
        item = _Item(name, [(column.name, slot) for column, slot in zip(columns, slots, strict=True)])
    level.items.append(item)
    return item


def _add_relation(ref: Any, level: _Level, context: _Context) -> _Item:
    alias = ref.alias
    name = alias.aliasname if alias is not None else ref.relname
    if ref.catalogname is None and ref.schemaname is None and ref.relname in context.ctes:
        columns = context.ctes[ref.relname]
        if alias is not None:
            columns = _renamed(columns, [a.sval for a in alias.colnames or ()])
        return _add_columns(level, name, columns)
    names = [n for n in (ref.catalogname, ref.schemaname, ref.relname) if n is not None]
    relation = context.catalog.relation(names)
    if relation is None:
        raise _Unsupported(f"relation {names} not found")
    not_null = [c.not_null for c in relation.columns]
    if relation.kind == "v":
        not_null = _view_columns(relation.oid, len(not_null), context)
    columns = tuple(
        _Column(c.name, _Value(known, (relation.oid, c.attnum), type=c.type))
        for c, known in zip(relation.columns, not_null, strict=True)
    )
    if alias is not None:
        columns = _renamed(columns, [a.sval for a in alias.colnames or ()])
    item = _add_columns(level, name, columns)
    item.hidden = _SYSTEM_COLUMNS
    return item


def _view_columns(oid: int, count: int, context: _Context) -> list[bool]:
    """Which columns of a view are never NULL, by the same rules on its definition. Postgres
    prints the definition with every name qualified as this session's search path needs, so it
    reads back as the same objects; a view's columns are its query's, by position."""
    import pglast

    definition = context.catalog.view_definition(oid)
    unknown = [False] * count
    if definition is None:
        return unknown
    statements = pglast.parse_sql(definition)
    if len(statements) != 1:
        return unknown
    columns = _nested(statements[0].stmt, _Context(context.catalog, depth=context.depth), None)
    if columns is None or len(columns) != count:
        return unknown
    return [column.value.not_null for column in columns]


def _add_join(ref: Any, level: _Level, context: _Context) -> _Item:
    first_item = len(level.items)
    start_slot = len(level.slots)
    left = _add_from(ref.larg, level, context)
    middle_slot = len(level.slots)
    right = _add_from(ref.rarg, level, context)
    inner_items = level.items[first_item:]
    join_type = ref.jointype.name
    pad_left = join_type in ("JOIN_RIGHT", "JOIN_FULL")
    pad_right = join_type in ("JOIN_LEFT", "JOIN_FULL")
    if join_type not in ("JOIN_INNER", "JOIN_LEFT", "JOIN_RIGHT", "JOIN_FULL"):
        raise _Unsupported(join_type)
    if join_type == "JOIN_INNER" and ref.quals is not None:
        # An inner join keeps only the rows its condition is true for.
        view = _Level(slots=level.slots, items=inner_items, parent=level.parent)
        for slot in _proven(ref.quals, view, 0, context):
            level.slots[slot] = replace(level.slots[slot], not_null=True)
    left_columns = left.columns
    right_columns = right.columns
    if ref.isNatural:
        if (
            left_columns is None
            or right_columns is None
            or any(n is None for n, _ in left_columns + right_columns)
        ):
            raise _Unsupported("NATURAL join over unknown columns")
        right_names = {n for n, _ in right_columns}
        using = [n for n, _ in left_columns if n in right_names]
    else:
        using = [name.sval for name in ref.usingClause or ()]
    merged: list[tuple[str | None, int]] = []
    if using and (left_columns is None or right_columns is None):
        columns: list[tuple[str | None, int]] | None = None
    elif left_columns is None or right_columns is None:
        columns = None
    else:
        left_rest, right_rest = list(left_columns), list(right_columns)
        for name in using:
            left_slot = _take(left_rest, name)
            right_slot = _take(right_rest, name)
            l_value, r_value = level.slots[left_slot], level.slots[right_slot]
            if join_type == "JOIN_FULL":
                # COALESCE(left, right): every row has at least one side.
                slot = _new_slots(level, [_Value(l_value.not_null and r_value.not_null)])[0]
            elif join_type == "JOIN_RIGHT":
                slot = right_slot
            else:
                slot = left_slot
            merged.append((name, slot))
        columns = merged + left_rest + right_rest
    # Padding: every column of a padded side (its nested items included) may be NULL.
    for index in range(start_slot, len(level.slots)):
        on_left = index < middle_slot
        if (on_left and pad_left) or (not on_left and pad_right):
            if any(index == s for _, s in merged) and join_type == "JOIN_FULL":
                continue
            level.slots[index] = replace(level.slots[index], not_null=False)
    # A system column name (ctid, ...) of a table inside binds to it, not to an outer query.
    hidden = frozenset().union(*(inner.hidden for inner in inner_items))
    item = _Item(None, columns, rel_visible=False, cols_visible=True, hidden=hidden)
    for inner in inner_items:
        inner.cols_visible = False
        if ref.alias is not None:
            inner.rel_visible = False
    if ref.alias is not None:
        item.name = ref.alias.aliasname
        item.rel_visible = True
        if columns is not None:
            item.columns = _renamed_pairs(columns, [a.sval for a in ref.alias.colnames or ()])
    level.items.append(item)
    if ref.join_using_alias is not None and columns is not None:
        level.items.append(
            _Item(ref.join_using_alias.aliasname, list(merged), rel_visible=True, cols_visible=False)
        )
    return item


def _take(columns: list[tuple[str | None, int]], name: str) -> int:
    found = [i for i, (n, _) in enumerate(columns) if n == name]
    if len(found) != 1 or any(n is None for n, _ in columns):
        raise _Unsupported("a USING column not found once")
    return columns.pop(found[0])[1]


def _renamed_pairs(
    columns: list[tuple[str | None, int]], aliases: list[str]
) -> list[tuple[str | None, int]] | None:
    if len(aliases) > len(columns):
        return None
    return [(aliases[i] if i < len(aliases) else name, slot) for i, (name, slot) in enumerate(columns)]


# --- column references ---------------------------------------------------------------------


def _lookup(fields: list[str], level: _Level | None) -> _Value | None:
    """The value a column reference denotes, searching the levels outward as Postgres does; None
    when it cannot be told for sure (a relation of unknown columns might hold the name)."""
    while level is not None:
        found = _lookup_here(fields, level)
        if found is not _NOT_HERE:
            return found  # type: ignore[return-value]
        level = level.parent
    return None


_NOT_HERE = object()


def _lookup_here(fields: list[str], level: _Level) -> object:
    if len(fields) == 1:
        name = fields[0]
        hits: list[int] = []
        for item in level.items:
            if not item.cols_visible:
                continue
            if item.columns is None or name in item.hidden:
                return None
            for column_name, slot in item.columns:
                if column_name is None:
                    return None
                if column_name == name:
                    hits.append(slot)
        if not hits:
            return _NOT_HERE
        return level.slots[hits[0]] if len(hits) == 1 else None
    if len(fields) == 2:
        owners = [item for item in level.items if item.rel_visible and item.name == fields[0]]
        if not owners:
            # An unnamed item (a subquery without alias) or an unknown one could be it.
            if any(item.rel_visible and item.name is None and item.columns is None for item in level.items):
                return None
            return _NOT_HERE
        if len(owners) != 1 or owners[0].columns is None or fields[1] in owners[0].hidden:
            return None
        pairs = owners[0].columns
        if any(column_name is None for column_name, _ in pairs):
            return None
        hits = [slot for column_name, slot in pairs if column_name == fields[1]]
        return level.slots[hits[0]] if len(hits) == 1 else None
    return None  # schema.table.column, (row).field: not followed


def _star_fields(expression: Any) -> list[str] | None:
    """`*` -> [], `t.*` -> ["t"]; None when the expression is not a star."""
    from pglast import ast

    if isinstance(expression, ast.ColumnRef) and isinstance(expression.fields[-1], ast.A_Star):
        if not all(isinstance(f, ast.String) for f in expression.fields[:-1]):
            raise _Unsupported("star")
        return [f.sval for f in expression.fields[:-1]]
    return None


def _has_star(expression: Any) -> bool:
    from pglast import ast

    if isinstance(expression, ast.A_Star):
        return True
    if isinstance(expression, ast.Node):
        return any(_has_star(getattr(expression, name)) for name in expression)
    if isinstance(expression, tuple | list):
        return any(_has_star(item) for item in expression)
    return False


def _star(fields: list[str], level: _Level) -> list[_Column]:
    if len(fields) > 1:
        raise _Unsupported("schema.table.*")
    if fields:
        items = [item for item in level.items if item.rel_visible and item.name == fields[0]]
        if len(items) != 1:
            raise _Unsupported("t.* over an unknown relation")
    else:
        items = [item for item in level.items if item.cols_visible]
        if not items:
            raise _Unsupported("* without FROM")
    out: list[_Column] = []
    for item in items:
        if item.columns is None:
            raise _Unsupported("* over a relation whose columns are not known")
        out.extend(_Column(name, level.slots[slot]) for name, slot in item.columns)
    return out


def _proven(condition: Any, level: _Level, depth: int, context: _Context) -> set[int]:
    """Slots a condition keeps non-NULL: the rows where one of them is NULL make it NULL or false
    (a strict built-in comparison, IS NOT NULL, LIKE, IN, BETWEEN), so they never pass."""
    from pglast import ast

    if isinstance(condition, ast.BoolExpr):
        parts = [_proven(arg, level, depth + 1, context) for arg in condition.args]
        if condition.boolop.name == "AND_EXPR":
            return set().union(*parts)
        if condition.boolop.name == "OR_EXPR":
            return set.intersection(*parts) if parts else set()
        return set()
    operands: list[Any] = []
    not_null_test = isinstance(condition, ast.NullTest) and condition.nulltesttype.name == "IS_NOT_NULL"
    if not_null_test or (
        isinstance(condition, ast.BooleanTest) and condition.booltesttype.name in _TRUE_OR_FALSE
    ):
        operands = [condition.arg]
    elif isinstance(condition, ast.A_Expr) and _strict_test(condition, level, context):
        operands = (
            [condition.lexpr] if condition.kind.name in _LEFT_ONLY else [condition.lexpr, condition.rexpr]
        )
    elif isinstance(condition, ast.ColumnRef):
        operands = [condition]  # WHERE flag: a NULL flag does not pass
    slots: set[int] = set()
    for operand in operands:
        if isinstance(operand, ast.ColumnRef) and all(isinstance(f, ast.String) for f in operand.fields):
            slot = _slot_here([f.sval for f in operand.fields], level)
            if slot is not None:
                slots.add(slot)
    return slots


def _slot_here(fields: list[str], level: _Level) -> int | None:
    """The slot of this level a reference binds to, when it binds to one for sure."""
    value = _lookup_here(fields, level)
    if not isinstance(value, _Value):
        return None
    # Find the slot back (values are not unique: search the same way, by position).
    if len(fields) == 1:
        hits = [
            slot
            for item in level.items
            if item.cols_visible
            for n, slot in item.columns or ()
            if n == fields[0]
        ]
    else:
        owners = [item for item in level.items if item.rel_visible and item.name == fields[0]]
        hits = [slot for n, slot in owners[0].columns or () if n == fields[1]] if len(owners) == 1 else []
    return hits[0] if len(hits) == 1 else None


# --- expressions ---------------------------------------------------------------------------


def _operator_name(expression: Any) -> str | None:
    name = expression.name or ()
    if len(name) == 1:
        return name[0].sval
    if len(name) == 2 and name[0].sval == "pg_catalog":
        return name[1].sval
    return None


def _function_name(call: Any) -> str | None:
    """A function's name when the call resolves among built-ins only: unqualified or pg_catalog."""
    names = [part.sval for part in call.funcname]
    if len(names) == 1 or (len(names) == 2 and names[0] == "pg_catalog"):
        return names[-1]
    return None


def _aggregated(expression: Any, context: _Context) -> bool:
    """Whether the expression contains an aggregate, a window call or grouping(): such an
    expression is never a grouping key, nor equal to one."""
    from pglast import ast

    if isinstance(expression, ast.GroupingFunc):
        return True
    if isinstance(expression, ast.FuncCall):
        if expression.over is not None or expression.agg_star or expression.agg_within_group:
            return True
        name = _function_name(expression)
        if name is not None and context.catalog.aggregate(name):
            return True
    if isinstance(expression, ast.SelectStmt):
        return False  # a subquery's aggregates are its own
    if isinstance(expression, ast.Node):
        return any(_aggregated(getattr(expression, name), context) for name in expression)
    if isinstance(expression, tuple | list):
        return any(_aggregated(item, context) for item in expression)
    return False


def _value(expression: Any, level: _Level, context: _Context, grouped: bool = False) -> _Value:
    """What is known of an expression's value. `grouped`: in a select list of ROLLUP/CUBE/
    GROUPING SETS, where any aggregate-free part but a plain literal may be a key set to NULL."""
    from pglast import ast

    if grouped and not isinstance(expression, ast.A_Const) and not _aggregated(expression, context):
        return _UNKNOWN

    def each(children: Any) -> list[_Value]:
        return [_value(child, level, context, grouped) for child in children or ()]

    if isinstance(expression, ast.A_Const):
        return _Value(
            not expression.isnull,
            type=None if expression.isnull else _CONST_TYPES.get(type(expression.val).__name__),
        )
    if isinstance(expression, ast.ColumnRef):
        if not all(isinstance(f, ast.String) for f in expression.fields):
            return _UNKNOWN
        return _lookup([f.sval for f in expression.fields], level) or _UNKNOWN
    if isinstance(expression, ast.TypeCast):
        return _cast(expression, each([expression.arg])[0], context)
    if isinstance(expression, ast.CollateClause):
        return each([expression.arg])[0]
    if isinstance(expression, ast.A_Expr):
        return _a_expr(expression, level, context, grouped)
    if isinstance(expression, ast.BoolExpr):
        return _Value(all(v.not_null for v in each(expression.args)))
    if isinstance(expression, ast.NullTest | ast.BooleanTest | ast.GroupingFunc):
        return _NOT_NULL
    if isinstance(expression, ast.CoalesceExpr | ast.MinMaxExpr):
        # GREATEST and LEAST skip NULLs: NULL only when every argument is.
        return _Value(any(v.not_null for v in each(expression.args)))
    if isinstance(expression, ast.CaseExpr):
        results = [when.result for when in expression.args or ()]
        default = expression.defresult if expression.defresult is not None else ast.A_Const(isnull=True)
        return _Value(all(v.not_null for v in each([*results, default])))
    if isinstance(expression, ast.A_ArrayExpr | ast.RowExpr):
        return _NOT_NULL
    if isinstance(expression, ast.SubLink):
        # EXISTS is true or false and ARRAY(...) an array, maybe empty; a scalar subquery is NULL
        # on no row, IN/ANY/ALL on NULLs.
        return _Value(expression.subLinkType.name in ("EXISTS_SUBLINK", "ARRAY_SUBLINK"))
    if isinstance(expression, ast.SQLValueFunction):
        return _Value(expression.op.name != _CURRENT_SCHEMA)
    if isinstance(expression, ast.FuncCall):
        return _function(expression, level, context, grouped)
    return _UNKNOWN  # parameters, subscripts, field selections, XML, JSON constructors, ...


def _cast(expression: Any, child: _Value, context: _Context) -> _Value:
    from pglast.stream import RawStream

    type_name = expression.typeName
    if type_name.setof or type_name.pct_type:
        return _UNKNOWN
    target = context.catalog.plain_type(RawStream()(type_name))
    return _Value(child.not_null and target is not None, child.origin, cast=True, type=target)


_BETWEENS = frozenset({"AEXPR_BETWEEN", "AEXPR_NOT_BETWEEN", "AEXPR_BETWEEN_SYM", "AEXPR_NOT_BETWEEN_SYM"})
_LEFT_ONLY = _BETWEENS | {"AEXPR_IN"}  # the tested value is the left operand; the list may hold NULLs


def _operands(expression: Any) -> list[Any]:
    operands = [expression.lexpr] if expression.lexpr is not None else []
    if isinstance(expression.rexpr, tuple | list):
        operands.extend(expression.rexpr)
    elif expression.rexpr is not None:
        operands.append(expression.rexpr)
    return operands


def _builtin_operators(expression: Any, values: list[_Value], context: _Context) -> bool:
    """Whether an operator expression resolves to built-in operators of `_OPERATORS` only."""
    kind = expression.kind.name
    name = _operator_name(expression)
    if kind in ("AEXPR_OP", "AEXPR_LIKE", "AEXPR_ILIKE", "AEXPR_SIMILAR"):
        if name not in _OPERATORS:
            return False
        if expression.lexpr is None:
            return context.catalog.builtin_operator(name, 0, values[0].type)
        return context.catalog.builtin_operator(name, values[0].type, values[1].type)
    if kind == "AEXPR_IN":  # x IN (a, b): x = a OR x = b (NOT IN: <> and AND)
        return name in _COMPARISONS and all(
            context.catalog.builtin_operator(name, values[0].type, v.type) for v in values[1:]
        )
    if kind in _BETWEENS:
        return all(
            context.catalog.builtin_operator(op, values[0].type, v.type)
            for op in ("<=", ">=")
            for v in values[1:]
        )
    return False  # NULLIF, = ANY/ALL (NULL elements), IS DISTINCT FROM (handled apart), ...


def _strict_test(condition: Any, level: _Level, context: _Context) -> bool:
    """Whether a WHERE/ON conjunct is NULL (so false) when its tested operands are NULL."""
    from pglast import ast

    operands = _operands(condition)
    if any(isinstance(operand, ast.RowExpr) for operand in operands):
        return False
    values = [_value(operand, level, context) for operand in operands]
    return _builtin_operators(condition, values, context)


def _a_expr(expression: Any, level: _Level, context: _Context, grouped: bool) -> _Value:
    from pglast import ast

    kind = expression.kind.name
    if kind in ("AEXPR_DISTINCT", "AEXPR_NOT_DISTINCT"):
        return _Value(True, type=16)
    operands = _operands(expression)
    if any(isinstance(operand, ast.RowExpr) for operand in operands):
        return _UNKNOWN  # (a, b) = (c, d) compares field by field: NULL when a field is
    values = [_value(operand, level, context, grouped) for operand in operands]
    if not _builtin_operators(expression, values, context):
        return _UNKNOWN
    name = _operator_name(expression)
    result_type = 16 if kind != "AEXPR_OP" or name in _COMPARISONS else None
    if name == "||" and any(v.type in TEXT_TYPES for v in values):
        result_type = 25  # text || anything (but an array) is text; text || array does not take lower()
    return _Value(all(v.not_null for v in values), type=result_type)


def _function(call: Any, level: _Level, context: _Context, grouped: bool) -> _Value:
    name = _function_name(call)
    if name is None or not context.catalog.builtin_function(name):
        return _UNKNOWN
    if call.over is not None:
        if name in _COUNTS or name in _NOT_NULL_WINDOWS:
            return _Value(True, type=_WINDOW_TYPES.get(name, 20))
        if name in _PRESERVING_WINDOWS:
            args = [_value(arg, level, context, grouped) for arg in call.args or ()]
            return _Value(all(v.not_null for v in args), type=23)
        return _UNKNOWN  # lag/lead/first_value/nth_value and the other aggregates
    if name in _COUNTS:
        return _Value(True, type=20)  # count(*), count(x), count(DISTINCT x), FILTER: a bigint
    if call.agg_within_group or call.func_variadic or call.agg_distinct or call.agg_order:
        return _UNKNOWN
    if context.catalog.aggregate(name) or call.agg_filter is not None or call.agg_star:
        return _UNKNOWN
    if name in _ALWAYS:
        return _NOT_NULL
    args = [_value(arg, level, context, grouped) for arg in call.args or ()]
    if name == "concat_ws":
        return _Value(bool(args) and args[0].not_null)
    if name in _TEXT_ONLY and len(args) == 1 and args[0].type in TEXT_TYPES:
        return _Value(args[0].not_null, type=25)
    if name in _PRESERVING:
        return _Value(all(v.not_null for v in args))
    return _UNKNOWN
