"""Which result columns of a SQL tool's statement are provably never NULL.

A SQL tool's output schema marks a column nullable unless this module proves it is not. The
proof works on DuckDB's own parse tree (`json_serialize_sql`), never on the SQL text, and on the
catalog of the connection the statement was bound against. It is deliberately one-sided: a
column is "not null" only when every rule on the way says so; anything it does not know (a
function outside a short list, a view, a table function, a parameter, a shape of the tree it
has not seen) is nullable. An unexpected tree gives all-nullable, never an exception, so a
statement DuckDB accepts always gets an answer.

What it proves:
- non-NULL literals; CAST of a not-null value whose type is a plain one (JSON and VARIANT cast
  a JSON `null` to SQL NULL); TRY_CAST never;
- count(*), count(x), count(DISTINCT x) and their windowed forms; row_number, rank,
  dense_rank, percent_rank, cume_dist; no other aggregate (an empty group gives NULL);
- COALESCE with a not-null argument; IS [NOT] NULL, IS [NOT] DISTINCT FROM, EXISTS;
- comparisons, AND/OR/NOT, IN-lists, BETWEEN, and a short list of scalar functions that are
  not null when every argument is not null (`_PRESERVING`); list/struct constructors always;
- CASE when every branch, ELSE included, is not null;
- a column of a base table declared NOT NULL (or PRIMARY KEY), reached through the FROM
  clause, unless it is on the padded side of an outer or positional join, or it is a key of a
  ROLLUP/CUBE/GROUPING SETS; a column the WHERE clause compares or tests IS NOT NULL (a row
  where it is NULL never passes);
- subqueries and CTEs in FROM, by the same rules on their own select lists, and VALUES lists;
- UNION [ALL] when every side is not null, INTERSECT when one side is, EXCEPT by its left side.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

# Scalar functions and operators that return a non-NULL value whenever every argument is
# non-NULL (they raise on bad input instead). Each was checked against DuckDB 1.5 on edge
# inputs (empty strings, negative lengths, infinities, NaN, JSON `null`). Left out on purpose:
# `/`, `//`, `%` (NULL on division by zero), date parts (NULL for infinite dates), `nullif`,
# `concat_ws`, `[]` indexing, and everything not listed.
_PRESERVING = frozenset(
    {
        "+",
        "-",
        "*",
        "~",
        "&",
        "|",
        "<<",
        ">>",
        "||",
        "~~",
        "!~~",
        "~~*",
        "!~~*",
        "~~~",
        "^@",
        "regexp_full_match",
        "regexp_matches",
        "lower",
        "lcase",
        "upper",
        "ucase",
        "length",
        "len",
        "strlen",
        "char_length",
        "character_length",
        "octet_length",
        "concat",
        "abs",
        "round",
        "ceil",
        "ceiling",
        "floor",
        "trunc",
        "sign",
        "trim",
        "ltrim",
        "rtrim",
        "replace",
        "reverse",
        "lpad",
        "rpad",
        "repeat",
        "left",
        "right",
        "substring",
        "substr",
        "starts_with",
        "ends_with",
        "prefix",
        "suffix",
        "contains",
        "greatest",
        "least",
        "to_years",
        "to_quarters",
        "to_months",
        "to_weeks",
        "to_days",
        "to_hours",
        "to_minutes",
        "to_seconds",
        "to_milliseconds",
        "to_microseconds",
        "to_decades",
        "to_centuries",
        "to_millennia",
    }
)
# Constructors: a list or struct value exists even when its elements are NULL.
_CONSTRUCTORS = frozenset({"list_value", "struct_pack", "row"})
_COUNTS = frozenset({"count", "count_star"})
_NOT_NULL_WINDOWS = frozenset(
    {"WINDOW_ROW_NUMBER", "WINDOW_RANK", "WINDOW_RANK_DENSE", "WINDOW_PERCENT_RANK", "WINDOW_CUME_DIST"}
)
_STRICT_COMPARISONS = frozenset(
    {
        "COMPARE_EQUAL",
        "COMPARE_NOTEQUAL",
        "COMPARE_LESSTHAN",
        "COMPARE_GREATERTHAN",
        "COMPARE_LESSTHANOREQUALTO",
        "COMPARE_GREATERTHANOREQUALTO",
    }
)
_BOOLEAN_ALWAYS = frozenset(
    {"OPERATOR_IS_NULL", "OPERATOR_IS_NOT_NULL", "COMPARE_DISTINCT_FROM", "COMPARE_NOT_DISTINCT_FROM"}
)
# Types whose values a CAST turns into a non-NULL value or an error, never NULL: the built-in
# scalars. JSON (an alias of VARCHAR, "UNBOUND" in the parse tree), VARIANT, user types and
# nested types are not in the list.
_PLAIN_CAST_TARGETS = frozenset(
    {
        "BOOLEAN",
        "TINYINT",
        "SMALLINT",
        "INTEGER",
        "BIGINT",
        "HUGEINT",
        "UTINYINT",
        "USMALLINT",
        "UINTEGER",
        "UBIGINT",
        "UHUGEINT",
        "FLOAT",
        "DOUBLE",
        "DECIMAL",
        "VARCHAR",
        "BLOB",
        "DATE",
        "TIME",
        "TIME WITH TIME ZONE",
        "TIMESTAMP",
        "TIMESTAMP WITH TIME ZONE",
        "TIMESTAMP_S",
        "TIMESTAMP_MS",
        "TIMESTAMP_NS",
        "INTERVAL",
        "UUID",
        "BIT",
        "BIGNUM",
    }
)
# The same, as `duckdb_columns().data_type` spells a table column's type.
_PLAIN_COLUMN_TYPES = _PLAIN_CAST_TARGETS - {"DECIMAL"}
# A STAR node with any other field set (COLUMNS, REPLACE, RENAME, ...) is left to DuckDB.
_PLAIN_STAR_KEYS = frozenset({"class", "type", "alias", "query_location", "relation_name", "exclude_list"})
_JOINS_PADDING = {"INNER": (False, False), "LEFT": (False, True), "RIGHT": (True, False)}
_JOINS_PADDING |= {"FULL": (True, True), "OUTER": (True, True)}


class _Unsupported(Exception):
    """A shape of the parse tree this module does not reason about: every column is nullable."""


@dataclass(frozen=True)
class _Value:
    """What is known of one value: never NULL, and of a plain type (see `_PLAIN_CAST_TARGETS`)."""

    not_null: bool = False
    plain: bool = False


_UNKNOWN = _Value()


@dataclass(frozen=True)
class _Column:
    name: str | None  # lower case; None when DuckDB derives a name this module does not predict
    value: _Value


@dataclass(frozen=True)
class _Relation:
    """One relation of a FROM clause, as the select list sees it."""

    name: str | None  # what qualified references use, lower case
    columns: tuple[_Column, ...] | None  # None: the columns are not known
    padded: bool = False  # on the NULL-padded side of an outer (or positional) join
    visible: bool = True  # the right side of a SEMI/ANTI join is not


@dataclass(frozen=True)
class _Catalog:
    # (database, schema, table) -> (columns in order, is a base table); all lower case
    tables: dict[tuple[str, str, str], tuple[tuple[_Column, ...], bool]]
    shadowed: frozenset[str]  # function names a user macro or function may have taken over


@dataclass(frozen=True)
class _Context:
    catalog: _Catalog
    ctes: dict[str, tuple[_Column, ...] | None] = field(default_factory=dict)


@dataclass
class _Scope:
    """The FROM clause of one SELECT, for resolving column references."""

    relations: list[_Relation]
    merged: frozenset[str] = frozenset()  # names a JOIN ... USING may merge
    natural: bool = False  # a NATURAL join merges names not known in advance
    expandable: bool = True  # `*` lists the relations' columns one after the other
    grouping_nulls: bool = False  # ROLLUP/CUBE/GROUPING SETS put NULL in place of keys
    proven: set[tuple[int, int]] = field(default_factory=set)  # (relation, column) the WHERE keeps non-NULL


def not_null_columns(connection: Any, sql: str, column_count: int) -> tuple[bool, ...]:
    """For the single SELECT `sql` (named parameters allowed), which of its `column_count` result
    columns are provably never NULL, given the catalog of the DuckDB `connection`. Sound: an
    unproven column, or any statement this module does not understand, is False."""
    import duckdb

    unknown = (False,) * column_count
    try:
        tree = _parse(connection, sql)
        if tree is None:
            return unknown
        columns = _query(tree, _Context(_load_catalog(connection, _function_names(tree))))
    except duckdb.InterruptException:
        raise  # the build's time limit stopped the connection: not a question of nullability
    except Exception:  # any surprise in a tree or a catalog means "not proven", never a failed build
        return unknown
    if columns is None or len(columns) != column_count:
        return unknown
    return tuple(column.value.not_null for column in columns)


def _parse(connection: Any, sql: str) -> dict[str, Any] | None:
    text = connection.execute("SELECT json_serialize_sql(?)", [sql]).fetchone()[0]
    parsed = json.loads(text)
    if parsed.get("error") or len(parsed.get("statements") or []) != 1:
        return None
    return parsed["statements"][0]["node"]


def _function_names(tree: Any) -> set[str]:
    """The function names a tree calls (to ask the catalog about those this module trusts)."""
    found: set[str] = set()
    stack = [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("class") in ("FUNCTION", "WINDOW") and item.get("function_name"):
                found.add(str(item["function_name"]).lower())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _load_catalog(connection: Any, called: set[str]) -> _Catalog:
    bases = {
        tuple(name.lower() for name in row)
        for row in connection.execute(
            "SELECT database_name, schema_name, table_name FROM duckdb_tables()"
        ).fetchall()
    }
    rows = connection.execute(
        "SELECT database_name, schema_name, table_name, column_name, is_nullable, data_type "
        "FROM duckdb_columns() ORDER BY database_name, schema_name, table_name, column_index"
    ).fetchall()
    columns: dict[tuple[str, str, str], list[_Column]] = {}
    for database, schema, table, column, nullable, data_type in rows:
        key = (database.lower(), schema.lower(), table.lower())
        base = key in bases
        plain = str(data_type) in _PLAIN_COLUMN_TYPES or str(data_type).startswith("DECIMAL(")
        value = _Value(not_null=base and not nullable, plain=plain)
        columns.setdefault(key, []).append(_Column(column.lower(), value))
    tables = {key: (tuple(cols), key in bases) for key, cols in columns.items()}
    # A macro named like a built-in (`CREATE MACRO lower(x) AS ...`) wins over it. Listing
    # the functions takes ~20 ms, so only when the statement calls one this module trusts.
    shadowed: frozenset[str] = frozenset()
    if called & (_PRESERVING | _CONSTRUCTORS | _COUNTS):
        rows = connection.execute("SELECT DISTINCT function_name FROM duckdb_functions() WHERE NOT internal")
        shadowed = frozenset(str(name).lower() for (name,) in rows.fetchall())
    return _Catalog(tables, shadowed)


# --- query nodes ---------------------------------------------------------------------------


def _query(node: dict[str, Any], context: _Context) -> tuple[_Column, ...] | None:
    """The result columns of a query node, or None when their number is not known."""
    context = _with_ctes(node, context)
    kind = node.get("type")
    if kind == "SELECT_NODE":
        return _select(node, context)
    if kind == "SET_OPERATION_NODE":
        return _set_operation(node, context)
    if kind == "RECURSIVE_CTE_NODE":
        # The recursive part may produce NULLs the anchor does not; keep only the names.
        anchor = _query(node["left"], context)
        if anchor is None:
            return None
        return tuple(_Column(column.name, _UNKNOWN) for column in anchor)
    return None


def _nested(node: dict[str, Any], context: _Context) -> tuple[_Column, ...] | None:
    """A subquery or CTE: one this module cannot follow is a relation of unknown columns."""
    try:
        return _query(node, context)
    except _Unsupported:
        return None


def _with_ctes(node: dict[str, Any], context: _Context) -> _Context:
    entries = (node.get("cte_map") or {}).get("map") or []
    if not entries:
        return context
    ctes = dict(context.ctes)
    for entry in entries:
        name = str(entry["key"]).lower()
        body = entry["value"]
        # A CTE sees the ones before it (and itself, when recursive: not known yet).
        ctes[name] = None
        inner = replace(context, ctes=dict(ctes))
        columns = _nested(body["query"]["node"], inner)
        ctes[name] = _renamed(columns, body.get("aliases") or [])
    return replace(context, ctes=ctes)


def _set_operation(node: dict[str, Any], context: _Context) -> tuple[_Column, ...] | None:
    left = _query(node["left"], context)
    right = _query(node["right"], context)
    kind = node.get("setop_type")
    if left is None or right is None or len(left) != len(right):
        return None
    if kind == "UNION":

        def combine(a: _Value, b: _Value) -> bool:
            return a.not_null and b.not_null
    elif kind == "INTERSECT":
        # Every row of an INTERSECT equals a row of each side (NULLs compare equal here).

        def combine(a: _Value, b: _Value) -> bool:
            return a.not_null or b.not_null
    elif kind == "EXCEPT":

        def combine(a: _Value, b: _Value) -> bool:
            return a.not_null
    else:  # UNION BY NAME pads the columns one side lacks with NULL
        return tuple(_Column(column.name, _UNKNOWN) for column in left)
    # The result takes its names from the left side, its type from both.
    return tuple(
        _Column(a.name, _Value(combine(a.value, b.value), a.value.plain and b.value.plain))
        for a, b in zip(left, right, strict=True)
    )


def _renamed(columns: tuple[_Column, ...] | None, aliases: list[str]) -> tuple[_Column, ...] | None:
    """`AS x(a, b)`: the first columns take the given names, the rest keep theirs."""
    if columns is None or len(aliases) > len(columns):
        return None if columns is None else tuple(_Column(None, c.value) for c in columns)
    names = [str(alias).lower() for alias in aliases]
    return tuple(
        _Column(names[i] if i < len(names) else column.name, column.value) for i, column in enumerate(columns)
    )


def _select(node: dict[str, Any], context: _Context) -> tuple[_Column, ...] | None:
    scope = _from(node.get("from_table"), context)
    groups = node.get("group_expressions") or []
    sets = node.get("group_sets") or []
    if groups:
        every = set(range(len(groups)))
        # A grouping set without some key outputs NULL for it (ROLLUP, CUBE, GROUPING SETS).
        scope.grouping_nulls = not sets or any(set(s) != every for s in sets)
    if node.get("where_clause") is not None:
        _prove(node["where_clause"], scope)
    columns: list[_Column] = []
    for item in node.get("select_list") or []:
        if item.get("class") == "STAR":
            columns.extend(_star(item, scope))
            continue
        if _has_star(item):
            raise _Unsupported("COLUMNS(...) or *COLUMNS: the number of columns is DuckDB's to say")
        value = _value(item, scope, context)
        if scope.grouping_nulls and not _aggregates(item):
            # The item may be a grouping key itself (`GROUP BY ROLLUP (1)`, its alias or the
            # same expression): NULL in the rows where its set leaves it out. An item with an
            # aggregate or window call cannot be a key.
            value = _Value(False, value.plain)
        columns.append(_Column(_derived_name(item), value))
    return tuple(columns)


def _aggregates(expression: Any) -> bool:
    """Whether the expression calls count (the one aggregate proven not null) or a window."""
    if isinstance(expression, dict):
        if expression.get("class") == "WINDOW" or (
            expression.get("class") == "FUNCTION" and str(expression.get("function_name")).lower() in _COUNTS
        ):
            return True
        return any(_aggregates(value) for value in expression.values())
    if isinstance(expression, list):
        return any(_aggregates(value) for value in expression)
    return False


def _derived_name(item: dict[str, Any]) -> str | None:
    if item.get("alias"):
        return str(item["alias"]).lower()
    if item.get("class") == "COLUMN_REF" and len(item.get("column_names") or []) <= 2:
        return str(item["column_names"][-1]).lower()
    return None


def _has_star(expression: Any) -> bool:
    if isinstance(expression, dict):
        if expression.get("class") == "STAR":
            return True
        return any(_has_star(value) for value in expression.values())
    if isinstance(expression, list):
        return any(_has_star(value) for value in expression)
    return False


def _star(item: dict[str, Any], scope: _Scope) -> list[_Column]:
    """`*`, `t.*` and `* EXCLUDE (...)`; any other form is DuckDB's to expand."""
    for key, value in item.items():
        if value and key not in _PLAIN_STAR_KEYS:
            raise _Unsupported(f"star with {key}")
    excluded = {str(name).lower() for name in item.get("exclude_list") or []}
    visible = [(index, r) for index, r in enumerate(scope.relations) if r.visible]
    if item.get("relation_name"):
        wanted = str(item["relation_name"]).lower()
        visible = [(index, r) for index, r in visible if r.name == wanted]
        if len(visible) != 1:
            raise _Unsupported("t.* over an unknown relation")
    elif not scope.expandable or not visible:
        raise _Unsupported("* over USING/NATURAL joins (merged columns) or no FROM")
    out: list[_Column] = []
    for index, relation in visible:
        if relation.columns is None:
            raise _Unsupported("* over a relation whose columns are not known")
        for position, column in enumerate(relation.columns):
            if column.name is not None and column.name in excluded:
                continue
            if column.name is None and excluded:
                raise _Unsupported("EXCLUDE next to a column whose name is not known")
            out.append(_Column(column.name, _through(scope, index, position)))
    return out


def _through(scope: _Scope, index: int, position: int) -> _Value:
    """A relation's column as the select list sees it: padding, WHERE and grouping applied."""
    relation = scope.relations[index]
    assert relation.columns is not None
    value = relation.columns[position].value
    if scope.grouping_nulls:
        return _UNKNOWN
    proven = (index, position) in scope.proven
    return _Value((value.not_null and not relation.padded) or proven, value.plain)


# --- FROM ----------------------------------------------------------------------------------


def _from(ref: dict[str, Any] | None, context: _Context) -> _Scope:
    scope = _Scope(relations=[])
    if ref is not None:
        _add_ref(ref, context, scope)
    return scope


def _add_ref(ref: dict[str, Any], context: _Context, scope: _Scope) -> None:
    kind = ref.get("type")
    alias = str(ref.get("alias") or "").lower() or None
    if kind == "EMPTY":
        return
    if kind == "JOIN":
        if alias:
            raise _Unsupported("an aliased join")
        _add_join(ref, context, scope)
        return
    if kind == "BASE_TABLE":
        columns = _table(ref, context)
        name = alias or str(ref.get("table_name") or "").lower() or None
        scope.relations.append(_Relation(name, _renamed(columns, ref.get("column_name_alias") or [])))
        return
    if kind == "SUBQUERY":
        columns = _nested(ref["subquery"]["node"], context)
        scope.relations.append(_Relation(alias, _renamed(columns, ref.get("column_name_alias") or [])))
        return
    if kind == "EXPRESSION_LIST":
        scope.relations.append(_Relation(alias, _values_list(ref, context)))
        return
    # Table functions (read_parquet, unnest, ...), PIVOT and the rest: columns not known.
    function_name = (ref.get("function") or {}).get("function_name")
    scope.relations.append(_Relation(alias or (str(function_name).lower() if function_name else None), None))
    scope.expandable = False


def _table(ref: dict[str, Any], context: _Context) -> tuple[_Column, ...] | None:
    table = str(ref.get("table_name") or "").lower()
    schema = str(ref.get("schema_name") or "").lower()
    database = str(ref.get("catalog_name") or "").lower()
    if not schema and not database and table in context.ctes:
        return context.ctes[table]
    matches = []
    for (db, sch, name), (columns, base) in context.catalog.tables.items():
        if name != table or (database and db != database):
            continue
        # `x.t` names schema x, or database x with its default schema: either may be meant.
        if schema and not (sch == schema or (not database and db == schema)):
            continue
        matches.append((columns, base))
    # One candidate or none: a temporary table, another schema or a search path could win.
    if len(matches) != 1:
        return None
    columns, base = matches[0]
    if base:
        return columns
    return tuple(_Column(column.name, _Value(False, column.value.plain)) for column in columns)


def _values_list(ref: dict[str, Any], context: _Context) -> tuple[_Column, ...] | None:
    rows = ref.get("values") or []
    if not rows or len({len(row) for row in rows}) != 1:
        return None
    empty = _Scope(relations=[])
    values = [[_value(expression, empty, context) for expression in row] for row in rows]
    return tuple(
        _Column(
            f"col{i}",
            _Value(all(row[i].not_null for row in values), all(row[i].plain for row in values)),
        )
        for i in range(len(rows[0]))
    )


def _add_join(ref: dict[str, Any], context: _Context, scope: _Scope) -> None:
    left = _Scope(relations=[])
    _add_ref(ref["left"], context, left)
    right = _Scope(relations=[])
    _add_ref(ref["right"], context, right)
    join_type = ref.get("join_type")
    ref_type = ref.get("ref_type")
    hide_left = hide_right = False
    if join_type in ("SEMI", "ANTI"):
        pad_left, pad_right, hide_right = False, False, True
    elif join_type in ("RIGHT_SEMI", "RIGHT_ANTI"):
        pad_left, pad_right, hide_left = False, False, True
    elif join_type in _JOINS_PADDING:
        pad_left, pad_right = _JOINS_PADDING[join_type]
    else:
        pad_left = pad_right = True
        scope.expandable = False
    if ref_type not in ("REGULAR", "CROSS", "NATURAL", "ASOF"):
        # POSITIONAL pads the shorter side; anything newer is treated the same way.
        pad_left = pad_right = True
    using = frozenset(str(name).lower() for name in ref.get("using_columns") or [])
    natural = ref_type == "NATURAL"
    for side, pad, hide in ((left, pad_left, hide_left), (right, pad_right, hide_right)):
        for relation in side.relations:
            scope.relations.append(
                replace(relation, padded=relation.padded or pad, visible=relation.visible and not hide)
            )
    scope.merged = scope.merged | left.merged | right.merged | using
    scope.natural = scope.natural or left.natural or right.natural or natural
    scope.expandable = scope.expandable and left.expandable and right.expandable and not using and not natural


# --- column references ---------------------------------------------------------------------


def _resolve(names: list[str], scope: _Scope) -> list[tuple[int, int]] | None:
    """The (relation, column) pairs a reference may denote; None when not known. More than one
    pair only for a name a USING or NATURAL join merges (DuckDB coalesces them)."""
    names = [str(name).lower() for name in names]
    visible = [(index, r) for index, r in enumerate(scope.relations) if r.visible]
    if len(names) == 2:
        owners = [(index, r) for index, r in visible if r.name == names[0]]
        if len(owners) != 1:
            return None
        found = _position(owners[0][1], names[1])
        return None if found is None or found == _MAYBE else [(owners[0][0], found)]
    if len(names) != 1:
        return None  # schema.table.column or struct fields: not followed
    name = names[0]
    candidates = []
    uncertain = False
    for index, relation in visible:
        found = _position(relation, name)
        if found == _MAYBE:
            uncertain = True
        elif found is not None:
            candidates.append((index, found))
    if not candidates:
        return None  # an outer query's column, a select-list alias, rowid...
    if name in scope.merged or scope.natural:
        # A merged name is every side's column coalesced: each side must be known.
        return None if uncertain else candidates
    # Unmerged, DuckDB rejects a name two relations have: one known candidate is the one.
    return candidates if len(candidates) == 1 else None


_MAYBE = -1  # `_position`: the relation may or may not have the column


def _position(relation: _Relation, name: str) -> int | None:
    """The column `name` binds to: the first of that name (DuckDB renames later ones `name_1`);
    None when the relation has no such column. `_MAYBE` when its columns are not known, or a
    column whose name is not predicted comes first: DuckDB's name for it may be `name`."""
    if relation.columns is None:
        return _MAYBE
    for position, column in enumerate(relation.columns):
        if column.name is None:
            return _MAYBE
        if column.name == name:
            return position
    return None


def _column_ref(expression: dict[str, Any], scope: _Scope) -> _Value:
    pairs = _resolve(expression.get("column_names") or [], scope)
    if not pairs:
        return _UNKNOWN
    values = [_through(scope, index, position) for index, position in pairs]
    return _Value(all(v.not_null for v in values), all(v.plain for v in values))


def _prove(where: dict[str, Any], scope: _Scope) -> None:
    """Columns a WHERE conjunct tests with `IS NOT NULL` or a comparison: a row where one of
    them is NULL does not pass, so the select list only sees non-NULL values."""
    if where.get("type") == "CONJUNCTION_AND":
        for child in where.get("children") or []:
            _prove(child, scope)
        return
    operands: list[dict[str, Any]] = []
    kind = where.get("type")
    if kind == "OPERATOR_IS_NOT_NULL":
        operands = list(where.get("children") or [])
    elif kind in _STRICT_COMPARISONS:
        operands = [where.get("left") or {}, where.get("right") or {}]
    elif kind == "COMPARE_BETWEEN":
        operands = [where.get("input") or {}]
    elif kind == "COMPARE_IN":
        operands = list(where.get("children") or [])[:1]
    for operand in operands:
        if operand.get("class") == "COLUMN_REF":
            pairs = _resolve(operand.get("column_names") or [], scope)
            if pairs is not None and len(pairs) == 1:
                scope.proven.add(pairs[0])


# --- expressions ---------------------------------------------------------------------------


def _value(expression: dict[str, Any], scope: _Scope, context: _Context) -> _Value:
    cls = expression.get("class")
    kind = expression.get("type")

    def each(children: list[dict[str, Any]]) -> list[_Value]:
        return [_value(child, scope, context) for child in children]

    if cls == "CONSTANT":
        return _Value(not (expression.get("value") or {}).get("is_null", True), True)
    if cls == "COLUMN_REF":
        return _column_ref(expression, scope)
    if cls == "CAST":
        return _cast(expression, each([expression["child"]])[0])
    if cls == "COLLATE":
        return each([expression["child"]])[0]
    if cls == "COMPARISON":
        if kind in _BOOLEAN_ALWAYS:
            return _Value(True, True)
        if kind in _STRICT_COMPARISONS:
            return _Value(all(v.not_null for v in each([expression["left"], expression["right"]])), True)
        return _Value(False, True)
    if cls == "BETWEEN":
        parts = each([expression["input"], expression["lower"], expression["upper"]])
        return _Value(all(v.not_null for v in parts), True)
    if cls == "CONJUNCTION":
        return _Value(all(v.not_null for v in each(expression.get("children") or [])), True)
    if cls == "OPERATOR":
        return _operator(kind, each(expression.get("children") or []))
    if cls == "CASE":
        branches = [check["then_expr"] for check in expression.get("case_checks") or []]
        values = each([*branches, expression.get("else_expr") or {"class": "CONSTANT"}])
        return _Value(all(v.not_null for v in values), all(v.plain for v in values))
    if cls == "FUNCTION":
        return _function(expression, each(expression.get("children") or []), context)
    if cls == "WINDOW":
        return _window(expression, context)
    if cls == "SUBQUERY":
        # EXISTS is true or false; a scalar subquery is NULL on zero rows, ANY/ALL on NULLs.
        return _Value(expression.get("subquery_type") == "EXISTS", True)
    return _UNKNOWN  # parameters, lambdas, `[i]`, `*` inside a function, and the rest


def _cast(expression: dict[str, Any], child: _Value) -> _Value:
    target = expression.get("cast_type") or {}
    info = target.get("type_info") or {}
    # A type alias (JSON is VARCHAR under another name) is not the plain type it rests on.
    plain_target = target.get("id") in _PLAIN_CAST_TARGETS and not info.get("alias")
    plain_target = plain_target and info.get("type") in (None, "DECIMAL_TYPE_INFO")
    if expression.get("try_cast") or not plain_target:
        return _Value(False, plain_target)
    # From a JSON (or VARIANT) value, CAST maps a JSON null to SQL NULL: only plain sources.
    return _Value(child.not_null and child.plain, True)


def _operator(kind: str | None, children: list[_Value]) -> _Value:
    if kind in _BOOLEAN_ALWAYS:
        return _Value(True, True)
    if kind == "OPERATOR_NOT" or kind in ("COMPARE_IN", "COMPARE_NOT_IN"):
        return _Value(all(v.not_null for v in children), True)
    if kind == "OPERATOR_COALESCE":
        return _Value(any(v.not_null for v in children), all(v.plain for v in children))
    return _UNKNOWN  # ARRAY_EXTRACT, ARRAY_SLICE, STRUCT_EXTRACT, UNPACK, ...


def _function(expression: dict[str, Any], children: list[_Value], context: _Context) -> _Value:
    name = str(expression.get("function_name") or "").lower()
    if (
        name in context.catalog.shadowed
        or expression.get("catalog")
        or str(expression.get("schema") or "main").lower() != "main"
        or expression.get("export_state")
    ):
        return _UNKNOWN
    if name in _COUNTS:
        return _Value(True, True)
    if name in _CONSTRUCTORS:
        return _Value(True, False)
    if name in _PRESERVING:
        # greatest/least/|| keep their arguments' type: JSON in, JSON out.
        return _Value(all(v.not_null for v in children), all(v.plain for v in children))
    return _UNKNOWN  # other aggregates (sum, min, max, avg, list, string_agg...), nullif, `/`, ...


def _window(expression: dict[str, Any], context: _Context) -> _Value:
    kind = expression.get("type")
    if kind in _NOT_NULL_WINDOWS:
        return _Value(True, True)
    name = str(expression.get("function_name") or "").lower()
    if kind == "WINDOW_AGGREGATE" and name in _COUNTS and name not in context.catalog.shadowed:
        return _Value(True, True)
    return _UNKNOWN  # lag/lead/first_value/nth_value/ntile and the other aggregates
