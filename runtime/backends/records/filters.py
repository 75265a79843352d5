"""Filters of search_records and query_records: argument list -> checked conditions -> SQL.

A filter names a field path (`status`, `capital.name`, `name.fr`), an operator and a value.
`parse_filters` checks each against the resource's declaration (the path exists, the operator
suits the field's type, the value has the field's type and the operator's arity) and raises a
ToolError naming `filters.i.field`, `.op` or `.value` and the rule broken. `where_sql` renders
the conditions as one LanceDB (DataFusion) WHERE clause over the store columns (contract §4),
used as the pre-filter of full-text, vector and plain scans alike.

Semantics worth knowing:
- `ne` and `not_in` also match records without a value: "status is not Draft" keeps a record
  that has no status.
- Arrays of scalars test membership: `eq`/`contains` = has that element, `in` = has any of
  them, `not_in` = has none of them, `exists` = has at least one element.
- `contains` on string and text fields is a case-insensitive substring test.
- A localized field is stored as "locale\\x1ftext" pairs: `name.fr` tests the French text only,
  `name` any locale's text.
- `{any_of: [filter, ...]}` in place of a filter: at least one of its filters holds (OR). The
  filters inside are plain ones (no any_of inside any_of), at most MAX_ANY_OF of them; errors
  name `filters.i.any_of.j.field`.
- Sub-fields of arrays of objects (`currencies.code`) are arrays of their values: "has an
  element whose code is EUR". Two conditions on sub-fields of one array may match different
  elements.
- `where_sql` renders for LanceDB (DataFusion) by default and for DuckDB with DUCKDB (the
  serving process's column frames, frame.py): the same conditions, each engine's function names.
- Every value reaches SQL as a literal built here (strings quoted, numbers and dates rendered
  from checked Python values; regular expressions spell every non-alphanumeric character as
  `\\x{..}`), never as text pasted from the request.
"""

from __future__ import annotations

import datetime as dt
import difflib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lynxc.runtime.errors import ToolError

from .columns import LOCALE_SEPARATOR as LOCALE_SEP  # between a pair's locale and its text
from .definitions import FieldPath, Resource, Resources, column_name

PAIR_SEP = "\x1e"  # between pairs, once a localized column is joined into one string
# The bounds the records tools publish on a filter's value (records_tools.yaml: maxItems,
# maxLength), checked here too for callers that skip the host. A `contains` on localized text
# compiles to a regular expression, which LanceDB refused at 100,000 characters ("CompiledTooBig")
# and took at 16,000 of every script tried (é, ß, ǅ, k, emoji): 2,000 stays far below.
MAX_LIST_VALUES = 1000
MAX_ANY_OF = 8  # filters in one any_of group
MAX_VALUE_CHARS = 2000
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
LOCALE_CODE = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$")
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
ISO_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})?)?$")

ORDERED = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "not_in", "between", "exists")
# Which operators each kind of path accepts (dispatch table; `kind` below names the kinds).
OPS: Mapping[str, tuple[str, ...]] = {
    "string": (*ORDERED, "contains"),
    "integer": ORDERED,
    "number": ORDERED,
    "date": ORDERED,
    "datetime": ORDERED,
    "enum": ("eq", "ne", "in", "not_in", "exists"),
    "boolean": ("eq", "ne", "exists"),
    "reference": ("eq", "ne", "in", "not_in", "exists"),
    "text": ("eq", "ne", "contains", "exists"),
    "localized": ("eq", "ne", "in", "not_in", "contains", "exists"),
    "element": ("eq", "contains", "in", "not_in", "exists"),
    "presence": ("exists",),  # arrays of objects or arrays, arrays of localized text
}
SORTABLE_TYPES = frozenset(
    {"string", "integer", "number", "boolean", "date", "datetime", "enum", "reference"}
)


@dataclass(frozen=True)
class Dialect:
    """How one SQL engine spells what conditions need beyond standard SQL."""

    name: str
    length: str  # of a list
    list_of: str  # a list from its elements
    regex: str  # (text, pattern) -> bool
    timestamp: str  # the type a UTC timestamp literal is cast to


DATAFUSION = Dialect("datafusion", "cardinality", "make_array", "regexp_like", "TIMESTAMP")
DUCKDB = Dialect("duckdb", "len", "list_value", "regexp_matches", "TIMESTAMPTZ")


@dataclass(frozen=True)
class Condition:
    """One checked filter: `value` is already of the path's type (a list for in/not_in, a pair
    for between, a bool for exists)."""

    path: FieldPath
    op: str
    value: Any
    value_type: str  # the scalar type literals are rendered as (a reference's target key type)


@dataclass(frozen=True)
class AnyOf:
    """An any_of group: at least one of its conditions holds."""

    conditions: tuple[Condition, ...]

    @property
    def paths(self) -> tuple[FieldPath, ...]:
        return tuple(c.path for c in self.conditions)


Filter = Condition | AnyOf


def condition_paths(filters: Sequence[Filter]) -> list[FieldPath]:
    """Every path the filters test, any_of groups included."""
    return [p for f in filters for p in (f.paths if isinstance(f, AnyOf) else (f.path,))]


# --- paths --------------------------------------------------------------------------------------


def stored_paths(resource: Resource) -> dict[str, FieldPath]:
    return {p.path: p for p in resource.stored_paths()}


def kind(path: FieldPath) -> str:
    """Which row of OPS applies to `path`."""
    if path.in_array:
        return "presence" if path.field.type == "localized" else "element"
    if path.field.type in ("array", "object"):
        return "presence"
    return path.field.type


def ops_for(path: FieldPath) -> tuple[str, ...]:
    return OPS[kind(path)]


def is_sortable(path: FieldPath) -> bool:
    """Scalars, and one locale of a localized field (`name.de`)."""
    if path.in_array:
        return False
    if path.field.type == "localized":
        return path.locale is not None
    return path.field.type in SORTABLE_TYPES


def resolve_path(resource: Resource, name: str, where: str) -> FieldPath:
    """The path `name` names, with a locale for `name.fr` on a localized field; else ToolError
    `where: ...` with a did-you-mean."""
    paths = stored_paths(resource)
    if name in paths:
        return paths[name]
    head, dot, locale = name.rpartition(".")
    if dot and head in paths and paths[head].field.type == "localized" and not paths[head].in_array:
        if not LOCALE_CODE.match(locale):
            raise ToolError(f"{where}: {locale!r} is not a locale code (like en, fr, pt-BR)")
        base = paths[head]
        return FieldPath(name, base.field, locale, False)
    objects = [p for p in paths if p.startswith(name + ".")]
    if objects:
        raise ToolError(f"{where}: {name!r} is an object; name one of its fields ({', '.join(objects[:6])})")
    raise ToolError(f"{where}: {resource.id!r} has no field {name!r}{did_you_mean(name, paths)}")


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    options = list(candidates)
    close = difflib.get_close_matches(name, options, n=1, cutoff=0.6)
    if close:
        return f" (did you mean {close[0]!r}?)"
    if len(options) <= 12:
        return f" (known: {', '.join(options)})" if options else ""
    return ""


def key_type(resources: Resources, path: FieldPath) -> str:
    """The scalar type a path's values have: a reference holds its target's key type."""
    field = path.field
    if field.type == "reference":
        target = resources.by_name(field.to or "")
        return target.key_field.type if target is not None else "string"
    return field.type


# --- parsing ------------------------------------------------------------------------------------


def parse_filters(resources: Resources, resource: Resource, filters: Sequence[Any] | None) -> list[Filter]:
    """Check every filter (models or mappings with field, op, value, or any_of) against
    `resource`."""
    return [_parse_item(resources, resource, item, f"filters.{i}") for i, item in enumerate(filters or ())]


def _parse_item(resources: Resources, resource: Resource, item: Any, where: str) -> Filter:
    group = _attr(item, "any_of")
    if group is None:
        return _parse_one(resources, resource, item, where)
    if _attr(item, "field") is not None or _attr(item, "value") is not None:
        raise ToolError(f"{where}: give either field (one filter) or any_of (a group), not both")
    if not isinstance(group, list) or not group:
        raise ToolError(f"{where}.any_of: a list of 1 to {MAX_ANY_OF} filters, at least one of which holds")
    if len(group) > MAX_ANY_OF:
        raise ToolError(f"{where}.any_of: at most {MAX_ANY_OF} filters, not {len(group)}")
    conditions = []
    for j, inner in enumerate(group):
        if _attr(inner, "any_of") is not None:
            raise ToolError(
                f"{where}.any_of.{j}: an any_of group holds plain filters only (field, op, value); "
                "any_of inside any_of is not supported"
            )
        conditions.append(_parse_one(resources, resource, inner, f"{where}.any_of.{j}"))
    return AnyOf(tuple(conditions))


def _attr(item: Any, name: str) -> Any:
    value = item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)
    return getattr(value, "value", value)  # an Enum member of a generated model -> its value


def _parse_one(resources: Resources, resource: Resource, item: Any, where: str) -> Condition:
    name = _attr(item, "field")
    if not isinstance(name, str) or not name:
        raise ToolError(f"{where}.field: a field path is required (or any_of, a group of filters)")
    path = resolve_path(resource, name, f"{where}.field")
    op = _attr(item, "op") or "eq"
    allowed = ops_for(path)
    if op not in allowed:
        raise ToolError(
            f"{where}.op: {op!r} does not apply to {name!r} ({_describe(path)}); "
            f"use one of {', '.join(allowed)}"
        )
    vtype = key_type(resources, path)
    lenient = path.field.type == "reference" or (path.path == resource.key)
    value = _parse_value(path, op, _attr(item, "value"), vtype, lenient, f"{where}.value")
    return Condition(path, op, value, vtype)


def _describe(path: FieldPath) -> str:
    if path.in_array:
        return f"an array of {path.field.type}"
    if path.locale is not None:
        return f"the {path.locale!r} text of a localized field"
    return f"a {path.field.type} field" if path.field.type not in ("array", "object") else "an array"


def _parse_value(path: FieldPath, op: str, value: Any, vtype: str, lenient: bool, where: str) -> Any:
    if op == "exists":
        if value is None:
            return True
        if not isinstance(value, bool):
            raise ToolError(
                f"{where}: exists takes true or false (or no value, meaning true), not {_show(value)}"
            )
        return value
    if value is None:
        raise ToolError(f"{where}: {op} needs a value (to test for a missing value use op exists with false)")
    if op in ("in", "not_in"):
        if not isinstance(value, list):
            raise ToolError(f"{where}: {op} takes a list of values, not {_show(value)}")
        if len(value) > MAX_LIST_VALUES:
            raise ToolError(f"{where}: {op} takes at most {MAX_LIST_VALUES} values, not {len(value)}")
        return [_scalar(path, v, vtype, lenient, f"{where}[{j}]") for j, v in enumerate(value)]
    if op == "between":
        if not isinstance(value, list) or len(value) != 2:
            raise ToolError(f"{where}: between takes a list of two values [low, high], not {_show(value)}")
        low, high = (_scalar(path, v, vtype, lenient, f"{where}[{j}]") for j, v in enumerate(value))
        if high < low:
            raise ToolError(
                f"{where}: between's low bound {_show(value[0])} is above its high bound {_show(value[1])}"
            )
        return (low, high)
    if isinstance(value, list):
        raise ToolError(f"{where}: {op} takes a single value, not a list (use in for a list)")
    parsed = _scalar(path, value, vtype, lenient, where)
    if op == "contains" and vtype in ("string", "text", "localized") and not path.in_array and parsed == "":
        raise ToolError(f"{where}: contains needs some text")
    return parsed


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _scalar(path: FieldPath, value: Any, vtype: str, lenient: bool, where: str) -> Any:
    """`value` checked against `vtype` and converted to the Python value its literal is made of."""
    if isinstance(value, str) and len(value) > MAX_VALUE_CHARS:
        raise ToolError(f"{where}: text of at most {MAX_VALUE_CHARS} characters, not {len(value)}")
    if vtype in ("string", "text", "localized"):
        if not isinstance(value, str):
            raise ToolError(f"{where}: {path.path!r} holds text; {_show(value)} is not a string")
        return value
    if vtype == "enum":
        values = path.field.values or ()
        if isinstance(value, bool) or value not in values:
            close = difflib.get_close_matches(str(value), [str(v) for v in values], n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close and isinstance(value, str) else ""
            raise ToolError(
                f"{where}: {_show(value)} is not a value of {path.path!r}{hint}; "
                f"values: {', '.join(map(str, values))}"
            )
        return value
    if vtype == "integer":
        if lenient and isinstance(value, str) and re.fullmatch(r"-?\d{1,19}", value):
            value = int(value)  # record ids are strings on the wire, even for integer keys
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise ToolError(f"{where}: {path.path!r} holds integers; {_show(value)} is not one")
        if not INT64_MIN <= value <= INT64_MAX:
            raise ToolError(f"{where}: {value} is outside the 64-bit integer range")
        return value
    if vtype == "number":
        if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
            raise ToolError(f"{where}: {path.path!r} holds numbers; {_show(value)} is not a finite number")
        return value
    if vtype == "boolean":
        if not isinstance(value, bool):
            raise ToolError(f"{where}: {path.path!r} holds true or false; {_show(value)} is neither")
        return value
    if vtype == "date":
        if not isinstance(value, str) or not ISO_DATE.match(value):
            raise ToolError(
                f"{where}: {path.path!r} holds dates; give one as 'YYYY-MM-DD', not {_show(value)}"
            )
        try:
            return dt.date.fromisoformat(value)
        except ValueError as err:
            raise ToolError(f"{where}: {value!r} is not a date: {err}") from None
    if vtype == "datetime":
        return _datetime(path, value, where)
    raise ToolError(f"{where}: {path.path!r} cannot be compared with a value")  # pragma: no cover


def _datetime(path: FieldPath, value: Any, where: str) -> dt.datetime:
    """ISO 8601; without an offset the time is taken as UTC; a bare date is its midnight UTC."""
    if not isinstance(value, str) or not ISO_DATETIME.match(value):
        raise ToolError(
            f"{where}: {path.path!r} holds date-times; give one in ISO 8601 like '2024-05-01T12:00:00Z', "
            f"not {_show(value)}"
        )
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError as err:
        raise ToolError(f"{where}: {value!r} is not a date-time: {err}") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    return parsed.astimezone(dt.UTC)


def parse_key(resource: Resource, value: str, where: str) -> Any:
    """A record key given as a string (record_id, a parents value) as the key field's type."""
    if resource.key_field.type == "integer":
        if not re.fullmatch(r"-?\d{1,19}", value) or not INT64_MIN <= int(value) <= INT64_MAX:
            raise ToolError(f"{where}: {value!r} is not a key of {resource.id!r} (its keys are integers)")
        return int(value)
    return value


# --- SQL ----------------------------------------------------------------------------------------


def sql_string(text: str) -> str:
    """A SQL string literal. DataFusion reads backslashes literally in '...' strings, so doubling
    the quote is the whole escape (tests feed it quotes, backslashes, %, _ and NUL)."""
    return "'" + text.replace("'", "''") + "'"


def duck_string(text: str) -> str:
    """A DuckDB string literal: its parser ends a literal at NUL, so NUL is spelled chr(0)."""
    if "\x00" not in text:
        return sql_string(text)
    return "(" + " || chr(0) || ".join(sql_string(part) for part in text.split("\x00")) + ")"


def _string(text: str, dialect: Dialect) -> str:
    return duck_string(text) if dialect is DUCKDB else sql_string(text)


def sql_literal(value: Any, vtype: str, dialect: Dialect = DATAFUSION) -> str:
    if vtype == "date":
        return f"CAST({sql_string(value.isoformat())} AS DATE)"
    if vtype == "datetime":
        stamp = value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return f"CAST({sql_string(stamp)} AS {dialect.timestamp})"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        # -2**63 written out is read as a float (its absolute value overflows int64).
        return "(-9223372036854775807 - 1)" if value == INT64_MIN else str(value)
    if isinstance(value, float):
        return repr(value)
    return _string(str(value), dialect)


def regex_literal(text: str) -> str:
    """`text` as a regular expression matching it literally: every character that is not a
    letter or digit as `\\x{..}`, which the Rust regex engine reads the same in any context."""
    return "".join(c if c.isalnum() and c.isascii() else f"\\x{{{ord(c):x}}}" for c in text)


def where_sql(
    conditions: Sequence[Filter], extra: Sequence[str] = (), dialect: Dialect = DATAFUSION
) -> str | None:
    """All conditions and `extra` clauses joined with AND, or None when there are none."""
    clauses = [*extra, *(condition_sql(c, dialect) for c in conditions)]
    return " AND ".join(f"({c})" for c in clauses) or None


def condition_sql(c: Filter, dialect: Dialect = DATAFUSION) -> str:
    if isinstance(c, AnyOf):
        return " OR ".join(f"({condition_sql(inner, dialect)})" for inner in c.conditions)
    column = c.path.column
    k = kind(c.path)
    if c.op == "exists":
        present = _presence(c.path, k, dialect)
        return present if c.value else f"NOT ({present})"
    if k == "localized":
        return _localized(c, column, dialect)
    if k == "element":
        return _element(c, column, dialect)
    lit = sql_literal(c.value, c.value_type, dialect) if c.op not in ("in", "not_in", "between") else ""
    if c.op == "contains":  # string and text: case-insensitive substring
        return f"strpos(lower({column}), lower({lit})) > 0"
    if c.op in _COMPARE:
        return f"{column} {_COMPARE[c.op]} {lit}"
    if c.op == "ne":
        return f"{column} IS NULL OR {column} <> {lit}"
    if c.op == "between":
        low, high = (sql_literal(v, c.value_type, dialect) for v in c.value)
        return f"{column} BETWEEN {low} AND {high}"
    items = ", ".join(sql_literal(v, c.value_type, dialect) for v in c.value)
    if c.op == "in":
        return f"{column} IN ({items})" if items else "FALSE"
    return f"{column} IS NULL OR {column} NOT IN ({items})" if items else "TRUE"  # not_in


_COMPARE = {"eq": "=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


def _presence(path: FieldPath, k: str, dialect: Dialect) -> str:
    """A condition that is true or false, never NULL, so that NOT works for exists false."""
    column = path.column
    if k in ("element", "localized") and path.locale is None:
        return f"coalesce({dialect.length}({column}), 0) > 0"
    if k == "localized":
        needle = _string(PAIR_SEP + path.locale + LOCALE_SEP, dialect)
        return f"coalesce(strpos({_joined(column, dialect, leading=True)}, {needle}), 0) > 0"
    if k == "presence":
        if path.in_array:  # an array of localized texts: its column is a list
            return f"coalesce({dialect.length}({column}), 0) > 0"
        return f"coalesce({column}, 0) > 0"  # arrays of objects are stored as their length
    return f"{column} IS NOT NULL"


def _joined(column: str, dialect: Dialect, leading: bool = False, trailing: bool = False) -> str:
    """A localized column's pairs as one string, each pair after PAIR_SEP when `leading`."""
    sep = _string(PAIR_SEP, dialect)
    text = f"array_to_string({column}, {sep})"
    if leading:
        text = f"{sep} || {text}"
    if trailing:
        text = f"{text} || {sep}"
    return text


def _localized(c: Condition, column: str, dialect: Dialect) -> str:
    locale = c.path.locale
    if c.op == "contains":
        prefix = (
            "(^|" + regex_literal(PAIR_SEP) + ")" + regex_literal(locale + LOCALE_SEP)
            if locale
            else regex_literal(LOCALE_SEP)
        )
        pattern = "(?i)" + prefix + "[^" + regex_literal(PAIR_SEP) + "]*" + regex_literal(c.value)
        return f"{dialect.regex}({_joined(column, dialect)}, {sql_string(pattern)})"
    values = c.value if c.op in ("in", "not_in") else [c.value]
    if not values:
        return "FALSE" if c.op == "in" else "TRUE"
    if locale is not None:
        pairs = ", ".join(_string(locale + LOCALE_SEP + v, dialect) for v in values)
        has = f"array_has_any({column}, {dialect.list_of}({pairs}))"
    else:  # some locale's text is exactly the value: "\x1fvalue\x1e" in "\x1een\x1f...\x1e..."
        joined = _joined(column, dialect, leading=True, trailing=True)
        has = " OR ".join(
            f"strpos({joined}, {_string(LOCALE_SEP + v + PAIR_SEP, dialect)}) > 0" for v in values
        )
    return has if c.op in ("eq", "in") else f"{column} IS NULL OR NOT ({has})"


def _element(c: Condition, column: str, dialect: Dialect) -> str:
    if c.op in ("eq", "contains"):
        return f"array_has({column}, {sql_literal(c.value, c.value_type, dialect)})"
    items = ", ".join(sql_literal(v, c.value_type, dialect) for v in c.value)
    if c.op == "in":
        return f"array_has_any({column}, {dialect.list_of}({items}))" if items else "FALSE"
    if not items:
        return "TRUE"
    return f"{column} IS NULL OR NOT array_has_any({column}, {dialect.list_of}({items}))"


# --- parents ------------------------------------------------------------------------------------


def parent_clauses(
    resources: Resources, resource: Resource, parents: Mapping[str, str], dialect: Dialect = DATAFUSION
) -> list[str]:
    """SQL conditions selecting the records under the given parents. A placeholder left without
    a value selects nothing: the records under every parent are searched (record keys are unique
    across parents, so get_record needs none either). A placeholder the id lacks is an error."""
    known = {p.placeholder: p for p in resource.parents}
    unknown = [name for name in parents if name not in known]
    if unknown:
        if not known:
            raise ToolError(f"parents: {resource.id!r} is not nested under another resource; omit parents")
        raise ToolError(
            f"parents: {resource.id!r} has no placeholder {unknown[0]!r}{did_you_mean(unknown[0], known)}"
        )
    clauses = []
    for placeholder, parent in known.items():
        if placeholder not in parents:
            continue
        target = resources.by_name(parent.resource)
        value = parents[placeholder]
        if not isinstance(value, str):
            raise ToolError(f"parents.{placeholder}: the parent key is a string, not {_show(value)}")
        typed = parse_key(target, value, f"parents.{placeholder}") if target is not None else value
        vtype = "integer" if isinstance(typed, int) else "string"
        clauses.append(f"{column_name(parent.field)} = {sql_literal(typed, vtype, dialect)}")
    return clauses
