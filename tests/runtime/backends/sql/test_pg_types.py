"""Postgres output types against the tests' real PostgreSQL (tests/fixtures/postgres.py): every
type's edge values, fetched as Postgres's own text through the session lynxc sets
(runtime/backends/sql/postgres/session.py), typed by `pg_type_trees` from the catalog, converted
by `pg_row_converter`, compared exactly with the expected JSON and validated against
`json_schema(tree, nullable)` by the host's validator and by jsonschema.

One database and one connection for the module; the edge values live in one table (`EDGE_SQL`),
which tests/e2e/test_pg_types.py serves through a generated server too."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import jsonschema
import psycopg
import pytest

from lynxc.runtime.backends.sql.postgres import text
from lynxc.runtime.backends.sql.postgres.types import (
    SESSION_SETTINGS,
    UnsupportedType,
    pg_row_converter,
    pg_type_trees,
    session_options,
    text_loaders,
)
from lynxc.runtime.backends.sql.postgres.values import pg_converter
from lynxc.runtime.backends.sql.types import json_schema, same_type
from lynxc.runtime.output_validation import OutputValidator
from tests.fixtures.postgres import (  # noqa: F401
    PostgresServer,
    create_database,
    drop_database,
    postgres_server,
)

# The user-defined types the cases use: an enum whose labels need quoting, a composite nesting
# another, a domain, a range over text (bounds that need quoting).
TYPES_SQL = """
CREATE TYPE lynxc_mood AS ENUM ('ok', 'so so', 'it''s "fine"', 'naïve, {x}');
CREATE TYPE lynxc_inner AS (x double precision, flag boolean);
CREATE TYPE lynxc_pair AS (n integer, label text, tags text[], at timestamptz, inner_pair lynxc_inner);
CREATE DOMAIN lynxc_year AS integer CHECK (VALUE BETWEEN 1 AND 9999);
CREATE TYPE lynxc_textrange AS RANGE (subtype = text);
"""

HARD_TEXT = 'naïve "quoted" \\ back, comma; {brace} (paren) 日本 \t tab'
MAX_INTERVAL_TEXT = "178956970 years 7 months 2147483646 days 2562047788:00:54.775807"

# (SQL type, SQL expression, the exact JSON value). One column per case in the edge table.
CASES: list[tuple[str, str, Any]] = [
    # integers: exact up to 2^53-1, digit strings beyond
    ("smallint", "-32768", -32768),
    ("smallint", "32767", 32767),
    ("integer", "-2147483648", -2147483648),
    ("bigint", "9007199254740991", 9007199254740991),
    ("bigint", "9007199254740992", "9007199254740992"),
    ("bigint", "-9223372036854775808", "-9223372036854775808"),
    ("bigint", "9223372036854775807", "9223372036854775807"),
    ("oid", "4294967295", 4294967295),
    # floats: shortest exact text; non-finite as words
    ("real", "'NaN'", "NaN"),
    ("real", "'Infinity'", "Infinity"),
    ("real", "'-Infinity'", "-Infinity"),
    ("real", "1.1", 1.1),
    ("real", "3.4028235e38", 3.4028235e38),
    ("double precision", "0.1", 0.1),
    ("double precision", "1.7976931348623157e308", 1.7976931348623157e308),
    ("double precision", "5e-324", 5e-324),
    ("double precision", "'-Infinity'", "-Infinity"),
    # numeric(p,s): DuckDB's DECIMAL rule plus NaN; unconstrained: number only when exact
    ("numeric(5,2)", "-999.99", -999.99),
    ("numeric(5,2)", "'NaN'", "NaN"),
    ("numeric(10,0)", "1234567890", 1234567890),
    ("numeric(20,2)", "1.5", "1.50"),
    ("numeric(38,10)", "-12345678901234567890.0123456789", "-12345678901234567890.0123456789"),
    ("numeric(3,-2)", "12345", 12300),
    ("numeric", "'NaN'", "NaN"),
    ("numeric", "'Infinity'", "Infinity"),
    ("numeric", "'-Infinity'", "-Infinity"),
    ("numeric", "0.1", 0.1),
    ("numeric", "123456789012345", 123456789012345),
    ("numeric", "9007199254740993", "9007199254740993"),
    ("numeric", "1.23456789012345678", "1.23456789012345678"),
    ("numeric", "1e-30", 1e-30),
    ("numeric", "1e-400", "0." + "0" * 399 + "1"),
    ("boolean", "true", True),
    ("boolean", "false", False),
    # text
    ("text", "$t$" + HARD_TEXT + "$t$", HARD_TEXT),
    ("text", "''", ""),
    ("varchar(5)", "'abcde'", "abcde"),
    ("char(3)", "'a'", "a  "),
    ("bytea", "'\\x00ff10'", "AP8Q"),
    ("bytea", "''", ""),
    ("bit(3)", "B'101'", "101"),
    ("varbit(4)", "B''", ""),
    ("uuid", "'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
    (
        "json",
        """'{"a": [1, 2.5, null, "x"], "big": 123456789012345678901234567890}'""",
        {"a": [1, 2.5, None, "x"], "big": 123456789012345678901234567890},
    ),
    ("json", "'1e400'", "1e400"),
    ("jsonb", """'{"é": "\\"q\\"", "n": -0.5}'""", {"é": '"q"', "n": -0.5}),
    ("jsonb", "'1e400'", 10**400),
    ("jsonb", "'[1e5000]'", ["1" + "0" * 5000]),
    # dates and times: ISO, infinities kept, BC and far years as ISO 8601 expanded years
    ("date", "'2024-02-29'", "2024-02-29"),
    ("date", "'infinity'", "infinity"),
    ("date", "'-infinity'", "-infinity"),
    ("date", "'0044-03-15 BC'", "-0043-03-15"),
    ("date", "'0001-01-01 BC'", "0000-01-01"),
    ("date", "'4713-01-01 BC'", "-4712-01-01"),
    ("date", "'5874897-12-31'", "+5874897-12-31"),
    ("time", "'24:00:00'", "24:00:00"),
    ("time", "'00:00:00.000001'", "00:00:00.000001"),
    ("time", "'12:34:56.5'", "12:34:56.500000"),
    ("timetz", "'12:00:00.25+05:30'", "12:00:00.250000+05:30"),
    ("timetz", "'23:59:59-15:59'", "23:59:59-15:59"),
    ("timetz", "'00:00:00+00'", "00:00:00+00:00"),
    ("timetz", "'10:00:00+05:30:15'", "10:00:00+05:30:15"),
    ("timestamp", "'2024-01-02 03:04:05.1'", "2024-01-02T03:04:05.100000"),
    ("timestamp", "'infinity'", "infinity"),
    ("timestamp", "'-infinity'", "-infinity"),
    ("timestamp", "'294276-12-31 23:59:59.999999'", "+294276-12-31T23:59:59.999999"),
    ("timestamp", "'4713-01-01 00:00:00 BC'", "-4712-01-01T00:00:00"),
    ("timestamptz", "'2024-01-02 03:04:05.123456+05:30'", "2024-01-01T21:34:05.123456Z"),
    ("timestamptz", "'infinity'", "infinity"),
    ("timestamptz", "'0044-03-15 12:00:00+00 BC'", "-0043-03-15T12:00:00Z"),
    ("timestamptz", "'10000-01-01 00:00:00+00'", "+10000-01-01T00:00:00Z"),
    # intervals: months, days and microseconds apart, in DuckDB's form
    ("interval", "'1 year 2 months 3 days 04:05:06.789'", "P1Y2M3DT4H5M6.789S"),
    ("interval", "'-1 year -2 months -3 days -04:05:06'", "-P1Y2M3DT4H5M6S"),
    ("interval", "'1 day -25:00:00'", "P1DT-25H"),
    ("interval", "'1 month -1 day'", "P1M-1D"),
    ("interval", "'-0.5 seconds'", "-PT0.5S"),
    ("interval", "'0'", "PT0S"),
    ("interval", f"'{MAX_INTERVAL_TEXT}'", "P178956970Y7M2147483646DT2562047788H54.775807S"),
    ("interval", "'infinity'", "infinity"),
    ("interval", "'-infinity'", "-infinity"),
    # enums
    ("lynxc_mood", "'so so'", "so so"),
    ("lynxc_mood", """'it''s "fine"'""", 'it\'s "fine"'),
    # arrays: nested, NULLs, quoting, bounds dropped
    ("integer[]", "'{}'", []),
    ("integer[]", "'{NULL,NULL}'", [None, None]),
    ("integer[]", "'[0:2]={1,NULL,3}'", [1, None, 3]),
    ("integer[]", "'{{1,2},{3,4}}'", [[1, 2], [3, 4]]),
    ("integer[]", "'[2:3][0:0][1:1]={{{1}},{{NULL}}}'", [[[1]], [[None]]]),
    (
        "text[]",
        "ARRAY['a,b', 'NULL', NULL, '', 'q\"x', 'back\\slash', '{b}', ' sp ', $t$" + HARD_TEXT + "$t$]",
        ["a,b", "NULL", None, "", 'q"x', "back\\slash", "{b}", " sp ", HARD_TEXT],
    ),
    ("bigint[]", "ARRAY[9007199254740992, -1]", ["9007199254740992", -1]),
    ("double precision[]", "ARRAY['NaN', 'Infinity', NULL, 1.5]::float8[]", ["NaN", "Infinity", None, 1.5]),
    ("date[]", "ARRAY['infinity', '0044-03-15 BC']::date[]", ["infinity", "-0043-03-15"]),
    ("bytea[]", "ARRAY['\\x00ff'::bytea, NULL]", ["AP8=", None]),
    ("jsonb[]", """ARRAY['{"a": [1]}'::jsonb, 'null', NULL]""", [{"a": [1]}, None, None]),
    ("lynxc_mood[]", "ARRAY['so so', NULL, 'naïve, {x}']::lynxc_mood[]", ["so so", None, "naïve, {x}"]),
    ("box[]", "ARRAY[box '((0,0),(1,1))', box '((2,2),(3,3))']", ["(1,1),(0,0)", "(3,3),(2,2)"]),
    ("interval[]", "ARRAY['1 day -25:00:00'::interval]", ["P1DT-25H"]),
    # composites: objects with every field present, nested and in arrays
    (
        "lynxc_pair",
        "ROW(1, 'say \"hi\", (now)', ARRAY['a b', NULL], 'infinity', ROW('NaN', true))",
        {
            "n": 1,
            "label": 'say "hi", (now)',
            "tags": ["a b", None],
            "at": "infinity",
            "inner_pair": {"x": "NaN", "flag": True},
        },
    ),
    (
        "lynxc_pair",
        "ROW(NULL, '', NULL, NULL, NULL)",
        {"n": None, "label": "", "tags": None, "at": None, "inner_pair": None},
    ),
    (
        "lynxc_pair",
        "ROW(NULL, NULL, '{}', NULL, ROW(NULL, NULL))",
        {"n": None, "label": None, "tags": [], "at": None, "inner_pair": {"x": None, "flag": None}},
    ),
    (
        "lynxc_pair[]",
        "ARRAY[ROW(2, NULL, ARRAY['x'], NULL, NULL)::lynxc_pair]",
        [{"n": 2, "label": None, "tags": ["x"], "at": None, "inner_pair": None}],
    ),
    ("lynxc_inner[]", "ARRAY[ROW(1.5, false)::lynxc_inner, NULL]", [{"x": 1.5, "flag": False}, None]),
    ("lynxc_year", "2024", 2024),
    # ranges and multiranges
    (
        "int4range",
        "'empty'",
        {"lower": None, "upper": None, "lower_inclusive": False, "upper_inclusive": False, "empty": True},
    ),
    (
        "int4range",
        "'(,5]'",
        {"lower": None, "upper": 6, "lower_inclusive": False, "upper_inclusive": False, "empty": False},
    ),
    (
        "int8range",
        "'[9007199254740992,)'",
        {
            "lower": "9007199254740992",
            "upper": None,
            "lower_inclusive": True,
            "upper_inclusive": False,
            "empty": False,
        },
    ),
    (
        "numrange",
        "'(1.5,2.25]'",
        {"lower": 1.5, "upper": 2.25, "lower_inclusive": False, "upper_inclusive": True, "empty": False},
    ),
    (
        "daterange",
        "'[-infinity,2024-01-01)'",
        {
            "lower": "-infinity",
            "upper": "2024-01-01",
            "lower_inclusive": True,
            "upper_inclusive": False,
            "empty": False,
        },
    ),
    (
        "tstzrange",
        "'[\"2024-01-01 00:00+05\",infinity]'",
        {
            "lower": "2023-12-31T19:00:00Z",
            "upper": "infinity",
            "lower_inclusive": True,
            "upper_inclusive": True,
            "empty": False,
        },
    ),
    (
        "tsrange",
        "'(,)'",
        {"lower": None, "upper": None, "lower_inclusive": False, "upper_inclusive": False, "empty": False},
    ),
    (
        "lynxc_textrange",
        "lynxc_textrange('a \"b\"', 'z,z)')",
        {
            "lower": 'a "b"',
            "upper": "z,z)",
            "lower_inclusive": True,
            "upper_inclusive": False,
            "empty": False,
        },
    ),
    ("int4multirange", "'{}'", []),
    (
        "int4multirange",
        "'{[1,3), [5,)}'",
        [
            {"lower": 1, "upper": 3, "lower_inclusive": True, "upper_inclusive": False, "empty": False},
            {"lower": 5, "upper": None, "lower_inclusive": True, "upper_inclusive": False, "empty": False},
        ],
    ),
    # network, money and types rendered as their text
    ("inet", "'192.168.0.1'", "192.168.0.1"),
    ("inet", "'192.168.0.1/24'", "192.168.0.1/24"),
    ("inet", "'2001:DB8::1/64'", "2001:db8::1/64"),
    ("inet", "'::ffff:1.2.3.4'", "::ffff:1.2.3.4"),
    ("cidr", "'10.0.0.0/8'", "10.0.0.0/8"),
    ("cidr", "'2001:db8::/32'", "2001:db8::/32"),
    ("macaddr", "'08-00-2B-01-02-03'", "08:00:2b:01:02:03"),
    ("macaddr8", "'08:00:2b:01:02:03:04:05'", "08:00:2b:01:02:03:04:05"),
    ("money", "'-1234.56'", "-$1,234.56"),  # lc_monetary C: locale-dependent text
    # (xml is its text too; the bundled server is built without libxml, so no case here)
    ("jsonpath", "'$.a[*] ? (@ > 1)'", '$."a"[*]?(@ > 1)'),
    ("pg_lsn", "'16/B374D848'", "16/B374D848"),
    ("tsvector", "'fat cat''s'", "'cat''s' 'fat'"),
    ("point", "'(1.5,2)'", "(1.5,2)"),
]


def column(index: int) -> str:
    return f"c{index:03d}"


def edge_sql(cases: list[tuple[str, str, Any]] = CASES) -> str:
    """The user types, the edge table (one column per case) with a row of values (k = 0) and a
    row of NULLs (k = 1)."""
    columns = ", ".join(f"{column(i)} {sql_type}" for i, (sql_type, _, _) in enumerate(cases))
    values = ", ".join(f"({expression})::{sql_type}" for sql_type, expression, _ in cases)
    return (
        f"{TYPES_SQL}\nCREATE TABLE lynxc_edge (k integer PRIMARY KEY, {columns});\n"
        f"INSERT INTO lynxc_edge VALUES (0, {values}), (1{', NULL' * len(cases)});\n"
    )


@pytest.fixture(scope="module")
def database(postgres_server: PostgresServer) -> Iterator[str]:  # noqa: F811
    """The module's database, holding the edge table: its name."""
    name = create_database(postgres_server)
    try:
        with postgres_server.connect(name, autocommit=True) as setup:
            setup.execute(edge_sql())
        yield name
    finally:
        drop_database(postgres_server, name)


@pytest.fixture(scope="module")
def conn(postgres_server: PostgresServer, database: str) -> Iterator[psycopg.Connection]:  # noqa: F811
    """A connection as lynxc opens one: the session settings, every value as text."""
    with psycopg.connect(
        postgres_server.dsn(database), options=session_options(), autocommit=True
    ) as connection:
        text_loaders(connection)
        yield connection


def result_types(cursor: psycopg.Cursor) -> list[tuple[int, int]]:
    """(type OID, typmod) of each result column, as the build reads them."""
    result = cursor.pgresult
    assert result is not None
    return [(result.ftype(i), result.fmod(i)) for i in range(result.nfields)]


def fetch(conn: psycopg.Connection, sql: str) -> tuple[list[dict[str, Any]], list[tuple]]:
    """Run `sql`; its columns as sql.json has them (name, type tree, nullable) and its rows."""
    cursor = conn.execute(sql)
    assert cursor.description is not None
    trees = pg_type_trees(conn, result_types(cursor))
    columns = [
        {"name": d.name, "type": tree, "nullable": True}
        for d, tree in zip(cursor.description, trees, strict=True)
    ]
    return columns, cursor.fetchall()


@pytest.fixture(scope="module")
def edge(conn: psycopg.Connection) -> tuple[list[dict[str, Any]], list[tuple]]:
    return fetch(conn, "SELECT * FROM lynxc_edge ORDER BY k")


def valid(schema: dict[str, Any], value: Any) -> bool:
    host = OutputValidator(schema).problem(value) is None
    reference = jsonschema.Draft202012Validator(schema).is_valid(value)
    assert host == reference, (schema, value)
    return host


def test_every_value_arrives_as_postgres_text(edge: tuple[list[dict[str, Any]], list[tuple]]) -> None:
    _, rows = edge
    assert all(value is None or type(value) is str for row in rows for value in row)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{t}:{e[:40]}" for t, e, _ in CASES])
def test_edge_value_is_exact_and_fits_its_schema(
    edge: tuple[list[dict[str, Any]], list[tuple]], index: int
) -> None:
    columns, rows = edge
    values, nulls = (pg_row_converter(columns)(row) for row in rows)
    assert values["k"] == 0 and nulls["k"] == 1
    sql_type, expression, expected = CASES[index]
    value = values[column(index)]
    assert value == expected, expression
    assert type(value) is type(expected), expression
    json.dumps(value, allow_nan=False)
    tree = columns[index + 1]["type"]
    nullable_inside = tree["id"] == "json" and expected is None
    assert valid(json_schema(tree, nullable=nullable_inside), value), (sql_type, value)
    assert nulls[column(index)] is None
    assert valid(json_schema(tree, nullable=True), None)
    if tree["id"] != "json":
        assert not valid(json_schema(tree, nullable=False), None), sql_type


def test_trees_reuse_duckdb_ids_and_record_what_schemas_need(conn: psycopg.Connection) -> None:
    columns, _ = fetch(
        conn,
        "SELECT 1::int2 a, 1::int4 b, 1::int8 c, 1::float4 d, 1::float8 e, 1.5::numeric(5,2) f, 1::numeric g,"
        " 'x'::varchar(7) h, 'x'::bpchar(2) i, 'x'::text j, B'1'::bit(1) k, now() l, now()::timestamp m,"
        " '1 day'::interval n, 'so so'::lynxc_mood o, ARRAY[1] p, '[1,2)'::int4range q",
    )
    trees = {column["name"]: column["type"] for column in columns}
    assert {name: tree["id"] for name, tree in trees.items()} == {
        "a": "smallint",
        "b": "integer",
        "c": "bigint",
        "d": "float",
        "e": "double",
        "f": "decimal",
        "g": "numeric",
        "h": "varchar",
        "i": "varchar",
        "j": "varchar",
        "k": "bit",
        "l": "timestamp with time zone",
        "m": "timestamp",
        "n": "interval",
        "o": "enum",
        "p": "pg_array",
        "q": "range",
    }
    assert (trees["f"]["precision"], trees["f"]["scale"], trees["f"]["nan"]) == (5, 2, True)
    assert (trees["h"]["max_length"], trees["i"]["max_length"]) == (7, 2)
    assert "max_length" not in trees["j"]
    assert trees["o"]["values"] == ["ok", "so so", 'it\'s "fine"', "naïve, {x}"]
    assert trees["p"]["child"] == {"id": "integer", "sql": "integer"}
    assert same_type(trees["q"]["child"], trees["b"])


def test_domains_become_their_base_types_with_their_names(conn: psycopg.Connection) -> None:
    year, years = (
        conn.execute("SELECT 'lynxc_year'::regtype::oid::int8, 'lynxc_year[]'::regtype::oid::int8").fetchone()
        or ()
    )
    (tree, array) = pg_type_trees(conn, [(int(year), -1), (int(years), -1)])
    assert tree == {"id": "integer", "sql": "integer", "domain": "lynxc_year"}
    assert array["id"] == "pg_array" and array["child"]["domain"] == "lynxc_year"
    assert not valid(json_schema(tree, nullable=False), 2**31)


def test_composite_fields_follow_the_type_and_skip_dropped_columns(conn: psycopg.Connection) -> None:
    conn.execute("CREATE TABLE lynxc_dropped (a int, b text, c date)")
    conn.execute("ALTER TABLE lynxc_dropped DROP COLUMN b")
    conn.execute("INSERT INTO lynxc_dropped VALUES (1, 'infinity')")
    columns, rows = fetch(conn, "SELECT d FROM lynxc_dropped d")
    assert [name for name, _ in columns[0]["type"]["fields"]] == ["a", "c"]
    assert pg_row_converter(columns)(rows[0]) == {"d": {"a": 1, "c": "infinity"}}


@pytest.mark.parametrize(
    ("sql", "hint"),
    [
        ("SELECT ROW(1, 2) AS r", "to_jsonb"),
        ("SELECT ARRAY[ROW(1, 2)] AS r", "to_jsonb"),
        ("SELECT pg_sleep(0) AS v", "::text"),
    ],
)
def test_types_with_no_rendering_name_a_fix(conn: psycopg.Connection, sql: str, hint: str) -> None:
    cursor = conn.execute(sql)
    with pytest.raises(UnsupportedType) as raised:
        pg_type_trees(conn, result_types(cursor))
    assert hint in str(raised.value) and "Postgres type" in str(raised.value)


def test_the_session_settings_win_over_the_databases_own(
    postgres_server: PostgresServer,  # noqa: F811
    database: str,
) -> None:
    """A database whose defaults print dates, intervals and zones otherwise still hands lynxc the
    text its converters read (the defaults apply to connections opened after them)."""
    with postgres_server.connect(database, autocommit=True) as setup:
        for setting in (
            "DateStyle = 'SQL, DMY'",
            "IntervalStyle = 'postgres_verbose'",
            "TimeZone = 'Asia/Kolkata'",
            "bytea_output = 'escape'",
            "extra_float_digits = 0",
        ):
            setup.execute(f'ALTER DATABASE "{database}" SET {setting}')
    try:
        with psycopg.connect(postgres_server.dsn(database), options=session_options()) as connection:
            text_loaders(connection)
            shown = {key: connection.execute(f"SHOW {key}").fetchone()[0] for key in SESSION_SETTINGS}  # type: ignore[index]
            # DateStyle 'ISO' sets the output form (its input order part is Postgres's default).
            assert shown.pop("DateStyle").startswith("ISO, ")
            assert shown == {key: value for key, value in SESSION_SETTINGS.items() if key != "DateStyle"}
            columns, rows = fetch(
                connection,
                "SELECT '2024-01-02 03:04:05+00'::timestamptz t, '1 mon 2 days'::interval i,"
                " '\\x00'::bytea b, 0.1::float8 f",
            )
            assert pg_row_converter(columns)(rows[0]) == {
                "t": "2024-01-02T03:04:05Z",
                "i": "P1M2D",
                "b": "AA==",
                "f": 0.1,
            }
    finally:
        with postgres_server.connect(database, autocommit=True) as setup:
            setup.execute(f'ALTER DATABASE "{database}" RESET ALL')


@pytest.mark.parametrize(
    ("tree", "good", "bad"),
    [
        ({"id": "smallint"}, 32767, 32768),
        ({"id": "varchar", "max_length": 3}, "abc", "abcd"),
        ({"id": "bit", "length": 3, "varying": False}, "101", "10"),
        ({"id": "bit", "length": 3, "varying": True}, "", "1010"),
        ({"id": "decimal", "precision": 5, "scale": 2, "nan": True}, "NaN", "Infinity"),
        ({"id": "decimal", "precision": 20, "scale": 2, "nan": True}, "1.50", "1.5"),
        ({"id": "numeric"}, "-12.5", "1e5"),
        ({"id": "interval", "infinite": True}, "-infinity", "P1X"),
        ({"id": "macaddr"}, "08:00:2b:01:02:03", "08-00-2B-01-02-03"),
        ({"id": "cidr"}, "10.0.0.0/8", "10.0.0.1"),
        ({"id": "inet"}, "2001:db8::1", "host.example"),
        ({"id": "pg_array", "child": {"id": "integer"}}, [[1, None], [3, 4]], ["x"]),
        ({"id": "pg_array", "child": {"id": "integer"}}, [[[1]], [[None]]], [1, "x"]),
        (
            {"id": "range", "child": {"id": "integer"}},
            {"lower": 1, "upper": None, "lower_inclusive": True, "upper_inclusive": False, "empty": False},
            {"lower": 1, "upper": None},
        ),
        ({"id": "multirange", "child": {"id": "range", "child": {"id": "integer"}}}, [], [None]),
    ],
)
def test_schemas_are_tight(tree: dict[str, Any], good: Any, bad: Any) -> None:
    schema = json_schema(tree, nullable=False)
    assert valid(schema, good)
    assert not valid(schema, bad)


def test_duckdb_schemas_are_unchanged_by_postgres_keys() -> None:
    # The same ids without Postgres's keys keep DuckDB's schemas (its tests pin them too).
    assert json_schema({"id": "bit"}, False) == {"type": "string", "pattern": "^[01]+$"}
    assert json_schema({"id": "decimal", "precision": 4, "scale": 2}, False) == {"type": "number"}
    assert json_schema({"id": "varchar"}, False) == {"type": "string"}
    assert "anyOf" not in json_schema({"id": "interval"}, False)


@pytest.mark.parametrize(
    ("parse", "bad"),
    [
        (text.parse_array, "{1,2"),
        (text.parse_array, '{"a}'),
        (text.parse_array, "{1,2}}"),
        (text.parse_array, "[0:1]={1"),
        (text.parse_array, "1,2"),
        (text.parse_composite, "(1,2"),
        (text.parse_composite, '(1,"x)'),
        (text.parse_composite, "(1)x)"),
        (text.parse_range, "[1,2"),
        (text.parse_range, "1,2)"),
        (text.parse_range, "[1,2)x"),
        (text.parse_multirange, "{[1,2)"),
        (text.parse_multirange, "{[1,2);[3,4)}"),
    ],
)
def test_malformed_text_is_an_error_not_a_value(parse: Any, bad: str) -> None:
    with pytest.raises(ValueError):
        parse(bad)


@pytest.mark.parametrize(
    ("tree", "bad"),
    [
        ({"id": "boolean"}, "yes"),
        ({"id": "date"}, "01/02/2024"),
        ({"id": "timestamp with time zone"}, "2024-01-02 03:04:05"),
        ({"id": "interval"}, "1 day"),
        ({"id": "blob"}, "\\000"),
        ({"id": "numeric"}, "1e5"),
        ({"id": "struct", "fields": [["a", {"id": "integer"}]]}, "(1,2)"),
    ],
)
def test_text_in_another_form_is_refused(tree: dict[str, Any], bad: str) -> None:
    with pytest.raises(ValueError):
        pg_converter(tree)(bad)


def test_unconstrained_numerics_are_numbers_only_when_exact() -> None:
    """A random sweep: every numeric text becomes either a JSON number of exactly its value
    (read back by the shortest repr a JSON writer prints) or the text itself."""
    convert = pg_converter({"id": "numeric"})
    rng = random.Random(26)
    for _ in range(3000):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 30)))
        point = rng.randint(0, len(digits))
        whole, fraction = digits[:point] or "0", digits[point:]
        number_text = ("-" if rng.random() < 0.5 else "") + whole.lstrip("0").rjust(1, "0")
        if fraction:
            number_text += "." + fraction
        value = convert(number_text)
        if isinstance(value, str):
            assert value == number_text
        else:
            assert Decimal(repr(value)) == Decimal(number_text), number_text
