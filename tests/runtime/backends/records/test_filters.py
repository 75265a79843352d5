"""Filters: every operator on every kind of field, the errors a bad filter gets, and the SQL they
compile to run against a real Lance table in the store's layout (hostile strings included)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from lynxc.runtime.backends.records.filters import (
    DUCKDB,
    OPS,
    kind,
    parent_clauses,
    parse_filters,
    regex_literal,
    resolve_path,
    sql_string,
    where_sql,
)
from lynxc.runtime.errors import ToolError

from .tables import RESOURCES, write_store

ITEMS = RESOURCES.by_name("items")
SECTIONS = RESOURCES.by_name("sections")
ALL_OPS = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "not_in", "between", "contains", "exists")
HOSTILE = [
    "O'Brien",
    "back\\slash",
    "100%",
    "_x_",
    "nul\x00here",
    "x' OR '1'='1",
    "'); DROP TABLE t; --",
    "é\u200bß",
]

RECORDS = [
    {
        "id": "a",
        "title": "O'Brien \\ 100% _x_",
        "body": "Hello World",
        "name": {"en": "Apple", "fr": "Pomme"},
        "status": "Draft",
        "count": 1,
        "score": 1.5,
        "flag": True,
        "day": "2020-01-02",
        "at": "2020-01-02T03:04:05Z",
        "tags": ["red", "blue"],
        "nums": [1, 2],
        "days": ["2020-01-01"],
        "kinds": ["a"],
        "author": 1,
        "friends": [1, 2],
        "capital": {"name": "Paris", "population": 100},
        "parts": [{"x": "p"}],
    },
    {
        "id": "b",
        "title": "nul\x00here 50%",
        "body": "Bonjour",
        "name": {"fr": "Banane", "de": "Banane"},
        "status": "Final",
        "count": 2,
        "score": -3.0,
        "flag": False,
        "day": "2021-06-01",
        "at": "2021-06-01T00:00:00+02:00",
        "tags": [],
        "nums": [3],
        "days": [],
        "kinds": ["b"],
        "author": 2,
        "friends": [],
        "capital": {"name": "Rome"},
        "parts": [],
    },
    {"id": "c", "status": "It's", "count": -(2**63)},
    {
        "id": "d",
        "title": "o'brien lower",
        "name": {"en": "Pomme"},
        "count": 2**63 - 1,
        "tags": ["Red"],
        "score": 0,
    },
    {"id": "e", "title": "percent_sign", "body": "50% off, x' OR '1'='1", "tags": ["x' OR '1'='1"]},
]


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Any:
    import lancedb

    data_dir = tmp_path_factory.mktemp("filters")
    write_store(data_dir, RESOURCES, {"items": RECORDS})
    return lancedb.connect(str(data_dir / "lance")).open_table("items-1")


def keys(table: Any, *filters: dict[str, Any]) -> set[str]:
    where = where_sql(parse_filters(RESOURCES, ITEMS, list(filters)))
    builder = table.search()
    if where:
        builder = builder.where(where)
    return {row["_key"] for row in builder.select(["_key"]).limit(100).to_list()}


def f(field: str, op: str | None = None, value: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {"field": field, "value": value}
    if op is not None:
        out["op"] = op
    return out


# --- semantics, on a real table -------------------------------------------------------------

CASES = [
    # strings
    (f("title", value="O'Brien \\ 100% _x_"), {"a"}),
    (f("title", "ne", "O'Brien \\ 100% _x_"), {"b", "c", "d", "e"}),
    (f("title", "contains", "o'brien"), {"a", "d"}),
    (f("title", "contains", "100%"), {"a"}),
    (f("title", "contains", "%"), {"a", "b"}),
    (f("title", "contains", "_"), {"a", "e"}),
    (f("title", "contains", "\\"), {"a"}),
    (f("title", "contains", "\x00"), {"b"}),
    (f("title", value="nul\x00here 50%"), {"b"}),
    (f("title", "in", ["o'brien lower", "percent_sign", "nope"]), {"d", "e"}),
    (f("title", "not_in", ["o'brien lower"]), {"a", "b", "c", "e"}),
    (f("title", "gt", "o"), {"d", "e"}),
    (f("title", "between", ["O", "o"]), {"a", "b"}),  # code point order: O < n(ul) < o
    (f("title", "exists"), {"a", "b", "d", "e"}),
    (f("title", "exists", False), {"c"}),
    # text
    (f("body", "contains", "WORLD"), {"a"}),
    (f("body", "contains", "x' OR '1'='1"), {"e"}),
    (f("body", value="Bonjour"), {"b"}),
    (f("body", "ne", "Bonjour"), {"a", "c", "d", "e"}),
    (f("body", "exists", False), {"c", "d"}),
    # localized: one locale, any locale
    (f("name.fr", value="Pomme"), {"a"}),
    (f("name", value="Pomme"), {"a", "d"}),
    (f("name", value="Pom"), set()),
    (f("name", "contains", "anan"), {"b"}),
    (f("name", "contains", "fr"), set()),  # a locale code is not text
    (f("name.en", "contains", "POM"), {"d"}),
    (f("name.de", "contains", "pomme"), set()),
    (f("name.fr", "ne", "Pomme"), {"b", "c", "d", "e"}),
    (f("name", "ne", "Banane"), {"a", "c", "d", "e"}),
    (f("name.de", "exists"), {"b"}),
    (f("name.de", "exists", False), {"a", "c", "d", "e"}),
    (f("name", "exists"), {"a", "b", "d"}),
    # enum
    (f("status", value="It's"), {"c"}),
    (f("status", "in", ["Draft", "Final"]), {"a", "b"}),
    (f("status", "not_in", ["Draft"]), {"b", "c", "d", "e"}),
    (f("status", "ne", "Final"), {"a", "c", "d", "e"}),
    # integers, at the ends of int64
    (f("count", "gt", 1), {"b", "d"}),
    (f("count", "lte", 1), {"a", "c"}),
    (f("count", value=-(2**63)), {"c"}),
    (f("count", value=2**63 - 1), {"d"}),
    (f("count", "between", [1, 2]), {"a", "b"}),
    (f("count", "in", [1, -(2**63)]), {"a", "c"}),
    (f("count", "exists", False), {"e"}),
    (f("count", value=2.0), {"b"}),
    # numbers
    (f("score", "lt", 0), {"b"}),
    (f("score", "gte", 0), {"a", "d"}),
    (f("score", "between", [-3, 0.5]), {"b", "d"}),
    (f("score", "ne", 1.5), {"b", "c", "d", "e"}),
    # booleans
    (f("flag", value=False), {"b"}),
    (f("flag", "ne", True), {"b", "c", "d", "e"}),
    # dates and date-times
    (f("day", "gt", "2020-01-02"), {"b"}),
    (f("day", "between", ["2020-01-01", "2020-12-31"]), {"a"}),
    (f("day", "in", ["2021-06-01"]), {"b"}),
    (f("at", value="2020-01-02T03:04:05Z"), {"a"}),
    (f("at", value="2020-01-02T05:04:05+02:00"), {"a"}),
    (f("at", value="2020-01-02 03:04:05"), {"a"}),  # no offset: UTC
    (f("at", "lt", "2021-05-31T22:00:00Z"), {"a"}),
    (f("at", "gte", "2021-05-31"), {"b"}),  # a bare date: its midnight UTC
    # arrays of scalars: membership
    (f("tags", value="red"), {"a"}),
    (f("tags", "contains", "Red"), {"d"}),
    (f("tags", "in", ["blue", "Red"]), {"a", "d"}),
    (f("tags", "not_in", ["red", "Red"]), {"b", "c", "e"}),
    (f("tags", "exists"), {"a", "d", "e"}),
    (f("tags", "exists", False), {"b", "c"}),
    (f("tags", value="x' OR '1'='1"), {"e"}),
    (f("nums", value=3), {"b"}),
    (f("nums", "in", [2, 3]), {"a", "b"}),
    (f("days", value="2020-01-01"), {"a"}),
    (f("kinds", "in", ["b"]), {"b"}),
    # references, integer keys given as numbers or as text
    (f("author", value=1), {"a"}),
    (f("author", value="2"), {"b"}),
    (f("author", "ne", 1), {"b", "c", "d", "e"}),
    (f("friends", value="2"), {"a"}),
    (f("friends", "exists", False), {"b", "c", "d", "e"}),
    # objects and arrays of objects
    (f("capital.name", value="Rome"), {"b"}),
    (f("capital.population", "gte", 100), {"a"}),
    (f("parts", "exists"), {"a"}),
    (f("parts", "exists", False), {"b", "c", "d", "e"}),
    # the key
    (f("id", "in", ["a", "e"]), {"a", "e"}),
    # empty lists
    (f("status", "in", []), set()),
    (f("status", "not_in", []), {"a", "b", "c", "d", "e"}),
    # fields of an array's objects: some element has that value
    (f("parts.x", value="p"), {"a"}),
    (f("parts.x", "in", ["q", "p"]), {"a"}),
    (f("parts.x", "exists", False), {"b", "c", "d", "e"}),
    # one locale's text in a list; any locale's
    (f("name.fr", "in", ["Pomme", "Banane"]), {"a", "b"}),
    (f("name.fr", "not_in", ["Pomme"]), {"b", "c", "d", "e"}),
    (f("name", "in", ["Pomme", "Nope"]), {"a", "d"}),
    (f("name.en", "in", []), set()),
    # any_of: at least one holds
    ({"any_of": [f("status", value="It's"), f("count", "gt", 1)]}, {"b", "c", "d"}),
    ({"any_of": [f("tags", value="red"), f("title", "exists", False)]}, {"a", "c"}),
    ({"any_of": [f("title", "contains", "\x00")]}, {"b"}),
]


@pytest.mark.parametrize(("condition", "expected"), CASES, ids=[repr(c[0]) for c in CASES])
def test_filter_semantics(table: Any, condition: dict[str, Any], expected: set[str]) -> None:
    assert keys(table, condition) == expected


@pytest.mark.parametrize(("condition", "expected"), CASES, ids=[repr(c[0]) for c in CASES])
def test_filter_semantics_in_duckdb(table: Any, condition: dict[str, Any], expected: set[str]) -> None:
    """The same filters rendered for DuckDB (the serving process's frames) select the same."""
    assert duck_keys(table, condition) == expected


def duck_keys(table: Any, *filters: dict[str, Any]) -> set[str]:
    from lynxc.runtime.backends.records.frame import Selection, _create, run

    frame = _create(table.to_arrow(), frozenset(table.schema.names))
    where = where_sql(parse_filters(RESOURCES, ITEMS, list(filters)), dialect=DUCKDB)
    [found] = run(Selection(frame, where), ["SELECT _key FROM records"])
    return {row[0] for row in found}


def test_any_of_with_other_filters(table: Any) -> None:
    group = {"any_of": [f("status", value="Draft"), f("status", value="Final")]}
    assert keys(table, group, f("count", "gt", 1)) == {"b"}
    assert duck_keys(table, group, f("count", "gt", 1)) == {"b"}


def test_filters_all_hold(table: Any) -> None:
    assert keys(table, f("count", "gte", 1), f("tags", "exists")) == {"a", "d"}
    assert keys(table) == {"a", "b", "c", "d", "e"}


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_strings_are_literals(table: Any, text: str) -> None:
    """Every hostile string compiles to a query that runs and matches only what it should."""
    for op in ("eq", "ne", "contains"):
        found = keys(table, f("title", op, text))
        assert found <= {"a", "b", "c", "d", "e"}
    assert keys(table, f("title", "in", [text, text + "'"])) == set()
    assert keys(table, f("name", "contains", text)) == set()
    assert keys(table, f("name.fr", value=text)) == set()
    assert keys(table, f("tags", "in", [text])) == ({"e"} if text == "x' OR '1'='1" else set())


def test_sql_string_doubles_quotes_only() -> None:
    assert sql_string("a'b\\c") == "'a''b\\c'"


def test_regex_literal_spells_out_every_symbol() -> None:
    assert regex_literal("a.b*") == "a\\x{2e}b\\x{2a}"
    assert regex_literal("é") == "\\x{e9}"


# --- operators per type ---------------------------------------------------------------------

# Each path with a value of its type.
SAMPLES = {
    "title": "x",
    "body": "x",
    "name": "x",
    "name.fr": "x",
    "status": "Draft",
    "count": 1,
    "score": 1.5,
    "flag": True,
    "day": "2020-01-01",
    "at": "2020-01-01T00:00:00Z",
    "author": 1,
    "tags": "x",
    "nums": 1,
    "kinds": "a",
    "friends": 1,
    "parts": True,
}


def _value(op: str, sample: Any) -> Any:
    if op == "exists":
        return True
    if op in ("in", "not_in"):
        return [sample]
    if op == "between":
        return [sample, sample]
    return sample


@pytest.mark.parametrize("path", list(SAMPLES))
@pytest.mark.parametrize("op", ALL_OPS)
def test_operator_matrix(path: str, op: str) -> None:
    """Each path takes exactly the operators of its kind; the others are refused by name."""
    resolved = resolve_path(ITEMS, path, "f")
    allowed = OPS[kind(resolved)]
    value = _value(op, SAMPLES[path])
    if op in allowed:
        [condition] = parse_filters(RESOURCES, ITEMS, [f(path, op, value)])
        assert condition.op == op
        assert where_sql([condition])
    else:
        with pytest.raises(ToolError, match=rf"filters\.0\.op: '{op}' does not apply to '{path}'"):
            parse_filters(RESOURCES, ITEMS, [f(path, op, value)])


def test_kinds() -> None:
    assert OPS[kind(resolve_path(ITEMS, "tags", "f"))] == ("eq", "contains", "in", "not_in", "exists")
    assert OPS[kind(resolve_path(ITEMS, "parts", "f"))] == ("exists",)
    assert "contains" in OPS[kind(resolve_path(ITEMS, "name.fr", "f"))]
    assert "gt" not in OPS[kind(resolve_path(ITEMS, "body", "f"))]


# --- errors ---------------------------------------------------------------------------------

ERRORS = [
    (f("titel", value="x"), r"filters\.0\.field: 'items' has no field 'titel' \(did you mean 'title'\?\)"),
    (
        f("capital", value="x"),
        r"filters\.0\.field: 'capital' is an object; name one of its fields \(capital\.name",
    ),
    (f("name.FR!", value="x"), r"filters\.0\.field: 'FR!' is not a locale code"),
    (f("title.fr", value="x"), r"filters\.0\.field: 'items' has no field 'title\.fr'"),
    ({"field": "", "value": 1}, r"filters\.0\.field: a field path is required"),
    (f("count", value="1"), r"filters\.0\.value: 'count' holds integers; '1' is not one"),
    (f("count", value=True), r"filters\.0\.value: 'count' holds integers; True is not one"),
    (f("count", value=1.5), r"filters\.0\.value: 'count' holds integers; 1\.5 is not one"),
    (
        f("count", value=2**63),
        r"filters\.0\.value: 9223372036854775808 is outside the 64-bit integer range",
    ),
    (f("score", value=True), r"filters\.0\.value: 'score' holds numbers"),
    (f("score", value=float("nan")), r"'score' holds numbers; nan is not a finite number"),
    (f("flag", value=1), r"filters\.0\.value: 'flag' holds true or false; 1 is neither"),
    (f("title", value=5), r"filters\.0\.value: 'title' holds text; 5 is not a string"),
    (
        f("status", value="draft"),
        r"'draft' is not a value of 'status' \(did you mean 'Draft'\?\); values: Draft, Final",
    ),
    (f("kinds", value="c"), r"filters\.0\.value: 'c' is not a value of 'kinds'"),
    (f("day", value="01/02/2020"), r"filters\.0\.value: 'day' holds dates; give one as 'YYYY-MM-DD'"),
    (f("day", value="2020-02-30"), r"filters\.0\.value: '2020-02-30' is not a date"),
    (f("day", value="20200101"), r"'day' holds dates"),
    (f("at", value="yesterday"), r"filters\.0\.value: 'at' holds date-times; give one in ISO 8601"),
    (f("author", value="x"), r"filters\.0\.value: 'author' holds integers; 'x' is not one"),
    (f("status", "in", "Draft"), r"filters\.0\.value: in takes a list of values, not 'Draft'"),
    (f("status", "in", ["Draft", "x"]), r"filters\.0\.value\[1\]: 'x' is not a value of 'status'"),
    (f("count", "between", [1]), r"filters\.0\.value: between takes a list of two values \[low, high\]"),
    (f("count", "between", [1, 2, 3]), r"between takes a list of two values"),
    (f("count", "between", [3, 1]), r"between's low bound 3 is above its high bound 1"),
    (
        f("count", "eq", [1]),
        r"filters\.0\.value: eq takes a single value, not a list \(use in for a list\)",
    ),
    (
        f("count", "eq", None),
        r"filters\.0\.value: eq needs a value \(to test for a missing value use op exists",
    ),
    (f("count", "exists", "yes"), r"filters\.0\.value: exists takes true or false"),
    (f("title", "contains", ""), r"filters\.0\.value: contains needs some text"),
    (f("status", "in", ["Draft"] * 1001), r"in takes at most 1000 values, not 1001"),
    (f("title", "contains", "é" * 2001), r"filters\.0\.value: text of at most 2000 characters, not 2001"),
    (f("tags", "in", ["x" * 2001]), r"filters\.0\.value\[0\]: text of at most 2000 characters"),
    (f("tags", "gt", "a"), r"filters\.0\.op: 'gt' does not apply to 'tags' \(an array of string\)"),
    (
        f("body", "lt", "a"),
        r"'lt' does not apply to 'body' \(a text field\); use one of eq, ne, contains, exists",
    ),
    (
        {"any_of": [f("count", value=1), f("cuont", value=1)]},
        r"^filters\.0\.any_of\.1\.field: 'items' has no",
    ),
    ({"any_of": [f("count", value="x")]}, r"^filters\.0\.any_of\.0\.value: 'count' holds integers"),
    ({"any_of": []}, r"^filters\.0\.any_of: a list of 1 to 8 filters"),
    ({"any_of": [f("count", value=1)] * 9}, r"^filters\.0\.any_of: at most 8 filters, not 9"),
    ({"any_of": [{"any_of": [f("count", value=1)]}]}, r"^filters\.0\.any_of\.0: an any_of group holds plain"),
    ({"field": "count", "any_of": [f("count", value=1)]}, r"^filters\.0: give either field .* or any_of"),
    ({"op": "eq"}, r"^filters\.0\.field: a field path is required \(or any_of"),
    (f("parts.x", "gt", "a"), r"'gt' does not apply to 'parts\.x' \(an array of text\)"),
]


@pytest.mark.parametrize(("condition", "message"), ERRORS, ids=[repr(e[0])[:60] for e in ERRORS])
def test_filter_errors(condition: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolError, match=message):
        parse_filters(RESOURCES, ITEMS, [condition])


def test_error_names_the_filter_index() -> None:
    with pytest.raises(ToolError, match=r"^filters\.1\.value"):
        parse_filters(RESOURCES, ITEMS, [f("count", value=1), f("count", value="x")])


def test_models_and_enum_ops_are_read() -> None:
    """Generated input models hold filters as objects, their op as an Enum member."""
    from enum import Enum

    class Op(Enum):
        gt = "gt"

    class Filter:
        field = "count"
        op = Op.gt
        value = 1

    [condition] = parse_filters(RESOURCES, ITEMS, [Filter()])
    assert condition.op == "gt"


# --- parents --------------------------------------------------------------------------------


def test_parent_clauses() -> None:
    clauses = parent_clauses(RESOURCES, SECTIONS, {"item": "it's", "person": "7"})
    assert clauses == ["f_item = 'it''s'", "f_person = 7"]
    assert parent_clauses(RESOURCES, SECTIONS, {"item": "a"}) == ["f_item = 'a'"]  # every person


@pytest.mark.parametrize(
    ("parents", "message"),
    [
        (
            {"item": "a", "person": "x"},
            r"parents\.person: 'x' is not a key of 'people' \(its keys are integers\)",
        ),
        (
            {"item": "a", "person": "1", "itme": "b"},
            r"parents: .* has no placeholder 'itme' \(did you mean 'item'\?\)",
        ),
    ],
)
def test_parent_errors(parents: dict[str, str], message: str) -> None:
    with pytest.raises(ToolError, match=message):
        parent_clauses(RESOURCES, SECTIONS, parents)


def test_parents_on_a_resource_that_is_not_nested() -> None:
    with pytest.raises(
        ToolError, match=r"parents: 'items' is not nested under another resource; omit parents"
    ):
        parent_clauses(RESOURCES, ITEMS, {"x": "1"})


def test_runs_as_lance_prefilter_of_async_queries(table: Any, tmp_path: Any) -> None:
    """The same clause is accepted by the async API the tools use."""

    async def run() -> list[str]:
        import lancedb

        db = await lancedb.connect_async(table._conn.uri)
        async_table = await db.open_table("items-1")
        where = where_sql(parse_filters(RESOURCES, ITEMS, [f("name", "contains", "pom")]))
        rows = await async_table.query().where(where).select(["_key"]).to_list()
        return sorted(r["_key"] for r in rows)

    assert asyncio.run(run()) == ["a", "d"]
