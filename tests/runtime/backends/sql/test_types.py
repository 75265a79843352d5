"""The DuckDB -> JSON table against a real DuckDB: every type, edge values, NULL at every level.

Each converted value must serialize as strict JSON (no NaN/Infinity) and validate against the
schema the compiler would declare for its column, with the house validator."""

from __future__ import annotations

import json
import subprocess
import sys

import duckdb
import pytest

from lynxc.runtime.backends.sql.types import (
    UnsupportedType,
    converter,
    fetch_statement,
    json_schema,
    row_converter,
    same_type,
    type_tree,
)
from lynxc.runtime.output_validation import OutputValidator

# column definition -> edge values (SQL expressions); shorter columns are padded with NULL.
EDGE_COLUMNS: dict[str, list[str]] = {
    "c_tinyint TINYINT": ["-128", "127", "0"],
    "c_smallint SMALLINT": ["-32768", "32767"],
    "c_integer INTEGER": ["-2147483648", "2147483647"],
    "c_bigint BIGINT": [
        "-9223372036854775808",
        "9223372036854775807",
        "9007199254740991",
        "-9007199254740991",
        "9007199254740992",
        "-9007199254740992",
    ],
    "c_hugeint HUGEINT": [
        "-170141183460469231731687303715884105728",
        "170141183460469231731687303715884105727",
        "9007199254740991",
    ],
    "c_utinyint UTINYINT": ["0", "255"],
    "c_usmallint USMALLINT": ["65535"],
    "c_uinteger UINTEGER": ["4294967295"],
    "c_ubigint UBIGINT": ["18446744073709551615", "9007199254740991", "9007199254740992"],
    "c_uhugeint UHUGEINT": ["340282366920938463463374607431768211455", "0"],
    "c_bignum VARINT": [
        "'123456789012345678901234567890123456789012345'",
        "'-9007199254740991'",
        "'9007199254740992'",
        "'0'",
        "repeat('9', 5000)",
    ],
    "c_float FLOAT": ["'nan'", "'inf'", "'-inf'", "1.1", "-0.0", "3.4028235e38", "1e-45", "16777217"],
    "c_double DOUBLE": ["'nan'", "'inf'", "'-inf'", "1.1", "1e308", "-5e-324", "9007199254740993"],
    "c_dec4 DECIMAL(4,2)": ["1.5", "-99.99", "0"],
    "c_dec15_0 DECIMAL(15,0)": ["999999999999999", "-5"],
    "c_dec18 DECIMAL(18,3)": ["1.5", "-1.5", "0", "999999999999999.999"],
    "c_dec38 DECIMAL(38,10)": [
        "0",
        "0.0000001234",
        "-12345678901234567890.1234567890",
        "9999999999999999999999999999.9999999999",
    ],
    "c_varchar VARCHAR": ["'héllo wörld ☃ 🦆'", "'a' || chr(0) || 'b'", "''", "'\"q\" \\ back'"],
    "c_json JSON": [
        """'{"a": [1, null, 2.5], "b": {"c": true}}'""",
        "'null'",
        "'123456789012345678901234567890'",
        "'1e400'",
        "'[NaN, Infinity, -Infinity]'",
        """'"text"'""",
    ],
    "c_blob BLOB": ["'\\xFF\\x00abc'::BLOB", "''::BLOB", "'\\x80'::BLOB"],
    "c_bit BIT": ["'0101'", "'1'"],
    "c_boolean BOOLEAN": ["true", "false"],
    "c_uuid UUID": [
        "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'",
        "'00000000-0000-0000-0000-000000000000'",
        "'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF'",
    ],
    "c_enum ENUM('a', 'b c')": ["'a'", "'b c'"],
    "c_date DATE": [
        "'2024-02-29'",
        "'infinity'",
        "'-infinity'",
        "'0099-01-01'",
        "'0001-01-01'",
        "'12345-06-07'",
        "'0044-03-15 (BC)'",
        "'0001-01-01 (BC)'",
    ],
    "c_time TIME": ["'12:34:56.789'", "'00:00:00'", "'23:59:59.999999'", "'24:00:00'"],
    "c_time_ns TIME_NS": ["'12:34:56.123456789'", "'24:00:00'"],
    "c_timetz TIMETZ": [
        "'12:34:56+02:00'",
        "'12:00:00-00:30'",
        "'12:00:00+15:59:59'",
        "'24:00:00+00'",
        "'01:02:03.5+00'",
    ],
    "c_ts TIMESTAMP": [
        "'2024-01-02 03:04:05.123456'",
        "'infinity'",
        "'-infinity'",
        "'0099-01-01 00:00:00'",
        "'12345-06-07 08:09:10.5'",
        "'0044-03-15 (BC)'::DATE + TIME '01:02:03.25'",
    ],
    "c_ts_s TIMESTAMP_S": ["'2024-01-02 03:04:05'", "'infinity'"],
    "c_ts_ms TIMESTAMP_MS": ["'2024-01-02 03:04:05.123'", "'12345-01-01'::DATE + TIME '01:02:03.5'"],
    "c_ts_ns TIMESTAMP_NS": ["'2024-01-02 03:04:05.123456789'", "'-infinity'"],
    "c_tstz TIMESTAMPTZ": [
        "'2024-01-02 03:04:05.5+02'",
        "'infinity'",
        "'-infinity'",
        "'0099-01-01 00:00:00+00'",
        "'12345-06-07 08:09:10.5+00'",
        "('0044-03-15 (BC)'::DATE + TIME '01:02:03')::TIMESTAMPTZ",
        "'0001-01-01 00:30:00+01'",
    ],
    "c_interval INTERVAL": [
        "INTERVAL '1 year 2 months 3 days 04:05:06.000007'",
        "INTERVAL '-1 month'",
        "INTERVAL '0 seconds'",
        "INTERVAL '-1 microsecond'",
        "INTERVAL '1 day' - INTERVAL '25 hours'",
        "INTERVAL '1000000 years'",
    ],
    "c_list INTEGER[]": ["[1, NULL, 3]", "[]", "[NULL]"],
    "c_list_double DOUBLE[]": ["['nan'::DOUBLE, 'inf'::DOUBLE, NULL, 1.5]", "[]"],
    "c_nested INTEGER[][]": ["[[1], [], NULL, [NULL, 2]]"],
    "c_array INTEGER[3]": ["[1, 2, 3]", "[NULL, 2, NULL]"],
    "c_array_float FLOAT[2]": ["['-inf'::FLOAT, 0.1]"],
    'c_struct STRUCT(a INTEGER, "b c" VARCHAR, d DOUBLE)': [
        "{'a': 1, 'b c': 'x', 'd': 'nan'::DOUBLE}",
        "{'a': NULL, 'b c': NULL, 'd': NULL}",
    ],
    "c_struct_list STRUCT(n HUGEINT, tags VARCHAR[], deep STRUCT(t TIMESTAMPTZ))[]": [
        "[{'n': 170141183460469231731687303715884105727, 'tags': ['x', NULL],"
        " 'deep': {'t': '2024-01-01 00:00:00+00'}}, NULL, {'n': NULL, 'tags': NULL, 'deep': NULL}]",
        "[{'n': 1, 'tags': [], 'deep': {'t': NULL}}]",
    ],
    "c_map_vi MAP(VARCHAR, INTEGER)": ["MAP {'a': 1, 'b': NULL}", "MAP {}", "MAP {'key': 1, 'value': 2}"],
    "c_map_iv MAP(INTEGER, VARCHAR)": ["MAP {1: 'x', 2: NULL}", "MAP {}"],
    "c_map_lv MAP(INTEGER[], DOUBLE)": ["MAP {[1, 2]: 'nan'::DOUBLE, [3]: 1.5}"],
    "c_map_ev MAP(ENUM('key', 'value'), INTEGER[])": ["MAP {'key': [1], 'value': [2]}"],
    "c_union UNION(num INTEGER, str VARCHAR, f DOUBLE)": [
        "union_value(num := 2)",
        "union_value(str := 'x')",
        "union_value(f := 'nan'::DOUBLE)",
    ],
    "c_json_list JSON[]": ["""['{"a": 1}'::JSON, NULL, 'NaN'::JSON]"""],
}


@pytest.fixture(scope="module")
def con():
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")  # as the runtime's connections do
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def edge_result(con):
    con.execute(f"CREATE TABLE edge ({', '.join(EDGE_COLUMNS)})")
    height = max(len(values) for values in EDGE_COLUMNS.values())
    for row in range(height):
        cells = [values[row] if row < len(values) else "NULL" for values in EDGE_COLUMNS.values()]
        con.execute(f"INSERT INTO edge VALUES ({', '.join(cells)})")
    description = con.execute("SELECT * FROM edge LIMIT 0").description
    columns = [{"name": name, "type": type_tree(t)} for name, t, *_ in description]
    rows = con.execute(fetch_statement("SELECT * FROM edge", columns)).fetchall()
    assert len(rows) == height
    return description, rows


def _render(con, expression: str):
    """The value of `expression` as a server fetches and renders it."""
    statement = f"SELECT {expression} AS v"
    tree = type_tree(con.execute(statement).description[0][1])
    fetched = con.execute(fetch_statement(statement, [{"name": "v", "type": tree}])).fetchone()[0]
    return tree, converter(tree)(fetched)


def test_every_edge_value_is_strict_json_valid_against_its_column_schema(edge_result):
    description, rows = edge_result
    assert len(description) == len(EDGE_COLUMNS)
    for index, (name, duck_type, *_) in enumerate(description):
        tree = type_tree(duck_type)
        convert = converter(tree)
        validator = OutputValidator(json_schema(tree, nullable=True))
        for row in rows:
            value = convert(row[index])
            json.dumps(value, allow_nan=False)
            assert validator.problem(value) is None, (name, row[index], value)


def test_row_converter_output_validates_against_the_row_object_schema(edge_result):
    description, rows = edge_result
    columns = [{"name": name, "type": type_tree(t), "nullable": True} for name, t, *_ in description]
    row_schema = {
        "type": "object",
        "properties": {c["name"]: json_schema(c["type"], c["nullable"]) for c in columns},
        "required": [c["name"] for c in columns],
        "additionalProperties": False,
    }
    validator = OutputValidator(row_schema)
    convert = row_converter(columns)
    for row in rows:
        converted = convert(row)
        assert list(converted) == [c["name"] for c in columns]
        json.dumps(converted, allow_nan=False)
        assert validator.problem(converted) is None


EXACT = [
    # integers: exact ints up to 2^53-1, decimal text beyond
    ("9007199254740991::BIGINT", 9007199254740991),
    ("-9007199254740991::BIGINT", -9007199254740991),
    ("9007199254740992::BIGINT", "9007199254740992"),
    ("(-9223372036854775808)::BIGINT", "-9223372036854775808"),
    ("18446744073709551615::UBIGINT", "18446744073709551615"),
    ("170141183460469231731687303715884105727::HUGEINT", "170141183460469231731687303715884105727"),
    ("340282366920938463463374607431768211455::UHUGEINT", "340282366920938463463374607431768211455"),
    ("42::HUGEINT", 42),
    ("'-12345'::VARINT", -12345),
    ("'123456789012345678901234567890'::VARINT", "123456789012345678901234567890"),
    ("(-128)::TINYINT", -128),
    # floats
    ("'nan'::DOUBLE", "NaN"),
    ("'inf'::DOUBLE", "Infinity"),
    ("'-inf'::DOUBLE", "-Infinity"),
    ("'nan'::FLOAT", "NaN"),
    ("'-inf'::FLOAT", "-Infinity"),
    ("1.1::FLOAT", 1.1),
    ("0.1::FLOAT", 0.1),
    ("123456.7::FLOAT", 123456.7),
    ("3.4028235e38::FLOAT", 3.4028235e38),
    ("1.1::DOUBLE", 1.1),
    ("['nan'::DOUBLE, NULL, 2.5]", ["NaN", None, 2.5]),
    ("{'x': 'inf'::FLOAT}", {"x": "Infinity"}),
    # decimals: numbers up to 15 digits, fixed-point text (scale kept) beyond
    ("1.5::DECIMAL(4,2)", 1.5),
    ("-99.99::DECIMAL(4,2)", -99.99),
    ("12::DECIMAL(10,0)", 12),
    ("1.5::DECIMAL(18,3)", "1.500"),
    ("-1.5::DECIMAL(18,3)", "-1.500"),
    ("0::DECIMAL(18,3)", "0.000"),
    ("0::DECIMAL(38,10)", "0.0000000000"),
    ("0.0000001234::DECIMAL(38,10)", "0.0000001234"),
    ("-12345678901234567890.1234567890::DECIMAL(38,10)", "-12345678901234567890.1234567890"),
    ("123::DECIMAL(20,0)", "123"),
    # text, bytes, bits, json
    ("'a' || chr(0) || 'é☃'", "a\x00é☃"),
    ("'\\xFF\\x00abc'::BLOB", "/wBhYmM="),
    ("''::BLOB", ""),
    ("'0101'::BIT", "0101"),
    ("""'{"a": [1, null, 2.5]}'::JSON""", {"a": [1, None, 2.5]}),
    ("'null'::JSON", None),
    ("'123456789012345678901234567890'::JSON", 123456789012345678901234567890),
    ("'[1e400, NaN, -Infinity]'::JSON", ["1e400", "NaN", "-Infinity"]),
    ("""['{"b": 2}'::JSON, NULL]""", [{"b": 2}, None]),
    ("'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::UUID", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
    ("'b'::ENUM('a', 'b')", "b"),
    (
        "union_value(str := 'x')::UNION(num INTEGER, str VARCHAR)",
        "x",
    ),
    ("union_value(num := 7)::UNION(num INTEGER, str VARCHAR)", 7),
    ("union_value(d := '2024-01-02'::DATE)::UNION(s VARCHAR, d DATE)", "2024-01-02"),
    # dates: infinities as words; years Python cannot hold as ISO expanded years
    ("'2024-02-29'::DATE", "2024-02-29"),
    ("'0099-01-01'::DATE", "0099-01-01"),
    ("'infinity'::DATE", "infinity"),
    ("'-infinity'::DATE", "-infinity"),
    ("'9999-12-31'::DATE", "9999-12-31"),
    ("'12345-06-07'::DATE", "+12345-06-07"),
    ("'0044-03-15 (BC)'::DATE", "-0043-03-15"),
    ("'0001-01-01 (BC)'::DATE", "0000-01-01"),
    ("['infinity'::DATE, NULL]", ["infinity", None]),
    # times: nanoseconds kept
    ("'12:34:56.789'::TIME", "12:34:56.789000"),
    ("'23:59:59'::TIME", "23:59:59"),
    ("'24:00:00'::TIME", "24:00:00"),
    ("'12:34:56.123456789'::TIME_NS", "12:34:56.123456789"),
    ("'12:34:56.5'::TIME_NS", "12:34:56.500000000"),
    ("'24:00:00'::TIME_NS", "24:00:00"),
    ("'12:34:56+02:00'::TIMETZ", "12:34:56+02:00"),
    ("'12:00:00-00:30'::TIMETZ", "12:00:00-00:30"),
    ("'12:00:00+15:59:59'::TIMETZ", "12:00:00+15:59:59"),
    ("'24:00:00+00'::TIMETZ", "24:00:00+00:00"),
    # timestamps: naive stay naive; WITH TIME ZONE in UTC with Z; nanoseconds and infinities kept
    ("'2024-01-02 03:04:05.123456'::TIMESTAMP", "2024-01-02T03:04:05.123456"),
    ("'2024-01-02 03:04:05'::TIMESTAMP_S", "2024-01-02T03:04:05"),
    ("'2024-01-02 03:04:05.123'::TIMESTAMP_MS", "2024-01-02T03:04:05.123000"),
    ("'2024-01-02 03:04:05.123456789'::TIMESTAMP_NS", "2024-01-02T03:04:05.123456789"),
    ("'2024-01-02 03:04:05.1'::TIMESTAMP_NS", "2024-01-02T03:04:05.100000000"),
    ("'2024-01-02'::TIMESTAMP_NS", "2024-01-02T00:00:00"),
    ("'infinity'::TIMESTAMP", "infinity"),
    ("'-infinity'::TIMESTAMP", "-infinity"),
    ("'-infinity'::TIMESTAMP_NS", "-infinity"),
    ("'infinity'::TIMESTAMP_S", "infinity"),
    ("'9999-12-31 23:59:59.999999'::TIMESTAMP", "9999-12-31T23:59:59.999999"),
    ("'12345-06-07 08:09:10.5'::TIMESTAMP", "+12345-06-07T08:09:10.500000"),
    ("'0044-03-15 (BC)'::DATE + TIME '01:02:03.25'", "-0043-03-15T01:02:03.250000"),
    ("'2024-01-02 03:04:05.5+02'::TIMESTAMPTZ", "2024-01-02T01:04:05.500000Z"),
    ("'2024-01-02 03:04:05+00'::TIMESTAMPTZ", "2024-01-02T03:04:05Z"),
    ("'infinity'::TIMESTAMPTZ", "infinity"),
    ("'-infinity'::TIMESTAMPTZ", "-infinity"),
    ("'12345-06-07 08:09:10.5+00'::TIMESTAMPTZ", "+12345-06-07T08:09:10.500000Z"),
    ("'0001-01-01 00:30:00+01'::TIMESTAMPTZ", "0000-12-31T23:30:00Z"),
    ("{'at': 'infinity'::TIMESTAMPTZ, 'n': 1}", {"at": "infinity", "n": 1}),
    # intervals: DuckDB's months, days and microseconds, none folded into another
    ("INTERVAL '1 year 2 months 3 days 04:05:06.789'", "P1Y2M3DT4H5M6.789S"),
    ("INTERVAL '1 year 2 months 3 days 04:05:06.000007'", "P1Y2M3DT4H5M6.000007S"),
    ("INTERVAL '1 month'", "P1M"),
    ("INTERVAL '-1 month'", "-P1M"),
    ("INTERVAL '-1 year -2 months'", "-P1Y2M"),
    ("INTERVAL '0 seconds'", "PT0S"),
    ("INTERVAL '-1 microsecond'", "-PT0.000001S"),
    ("INTERVAL '1 day' - INTERVAL '25 hours'", "P1DT-25H"),
    ("INTERVAL '-1 day' + INTERVAL '1 second'", "P-1DT1S"),
    ("INTERVAL '1 month' - INTERVAL '1 day' + INTERVAL '100 hours'", "P1M-1DT100H"),
    ("INTERVAL '90 minutes'", "PT1H30M"),
    ("INTERVAL '1.5 seconds'", "PT1.5S"),
    ("INTERVAL '1000000 years'", "P1000000Y"),
    ("to_microseconds(-9223372036854775807)", "-PT2562047788H54.775807S"),
    ("MAP {'a': INTERVAL '14 months'}", {"a": "P1Y2M"}),
    # inside a UNION the client's value is all there is (module docstring of types.py)
    ("union_value(i := INTERVAL '1 month')::UNION(s VARCHAR, i INTERVAL)", "P30D"),
    # nested: NULL at every level, arrays, structs in lists
    ("NULL::INTEGER[]", None),
    ("[]::INTEGER[]", []),
    ("[NULL]::INTEGER[]", [None]),
    ("[[1], NULL, [NULL]]", [[1], None, [None]]),
    ("[1, NULL, 3]::INTEGER[3]", [1, None, 3]),
    ("[9007199254740992, 1]::BIGINT[2]", ["9007199254740992", 1]),
    ("{'a': NULL, 'b': {'c': 'nan'::DOUBLE}}", {"a": None, "b": {"c": "NaN"}}),
    ("[{'a': 1, 'b': NULL}, NULL]", [{"a": 1, "b": None}, None]),
    # maps: VARCHAR keys -> object; other keys -> entries, whichever shape the client gives
    ("MAP {'a': 1, 'b': NULL}", {"a": 1, "b": None}),
    ("MAP {}::MAP(VARCHAR, INTEGER)", {}),
    ("MAP {'key': [1], 'value': [2]}", {"key": [1], "value": [2]}),
    ("MAP {1: 'x', 2: NULL}", [{"key": 1, "value": "x"}, {"key": 2, "value": None}]),
    (
        "MAP {'key'::ENUM('key', 'value'): [1], 'value'::ENUM('key', 'value'): [2]}",
        [{"key": "key", "value": [1]}, {"key": "value", "value": [2]}],
    ),
    ("MAP {[1, 2]: 'a', [3]: NULL}", [{"key": [1, 2], "value": "a"}, {"key": [3], "value": None}]),
    ("MAP {[1, 2]::INTEGER[2]: 'a'}", [{"key": [1, 2], "value": "a"}]),
    ("MAP {'nan'::DOUBLE: 1}", [{"key": "NaN", "value": 1}]),
    (
        "MAP {union_value(n := 1)::UNION(n INTEGER, l INTEGER[]): 'a'}",
        [{"key": 1, "value": "a"}],
    ),
]


@pytest.mark.parametrize(("expression", "expected"), EXACT)
def test_exact_rendering(con, expression, expected):
    tree, value = _render(con, expression)
    assert value == expected
    assert type(value) is type(expected)
    json.dumps(value, allow_nan=False)
    assert OutputValidator(json_schema(tree, nullable=True)).problem(value) is None


def test_float_rendering_keeps_negative_zero_and_types(con):
    _, value = _render(con, "-0.0::DOUBLE")
    assert json.dumps(value) == "-0.0"
    _, big = _render(con, "9007199254740991::BIGINT")
    assert type(big) is int


def test_non_nullable_schemas_reject_null_and_nullable_accept_it(edge_result):
    # A JSON value may be JSON null, and a UNION's active member may be NULL, in any column.
    null_inside = {"c_json", "c_union"}
    description, _ = edge_result
    for name, duck_type, *_ in description:
        tree = type_tree(duck_type)
        problem = OutputValidator(json_schema(tree, nullable=False)).problem(None)
        assert (problem is None) == (name in null_inside), name
        assert OutputValidator(json_schema(tree, nullable=True)).problem(None) is None, name


@pytest.mark.parametrize(
    ("sql_type", "bad"),
    [
        ("BIGINT", 2**53),
        ("UBIGINT", -1),
        ("UBIGINT", "-5"),
        ("TINYINT", 128),
        ("DOUBLE", "nan"),
        ("DECIMAL(18,3)", "1.5"),
        ("DECIMAL(18,3)", 1.5),
        ("DATE", "2024-13-01"),
        ("DATE", "2024-02-30"),
        ("TIMESTAMP", "2024-01-02 03:04:05"),
        ("TIMESTAMPTZ", "2024-01-02T03:04:05"),
        ("INTERVAL", "1 day"),
        ("INTERVAL", "P1.5Y"),
        ("DATE", "Infinity"),
        ("TIMESTAMP", "infinite"),
        ("TIMESTAMP", "2024-01-02T03:04:05.123456789"),  # nanoseconds only in TIMESTAMP_NS
        ("TIMESTAMP_NS", "2024-01-02T03:04:05.1234567890"),
        ("TIME_NS", "12:34:56.1234567890"),
        ("BIT", "012"),
        ("ENUM('a', 'b')", "c"),
        ("INTEGER[3]", [1, 2]),
        ("STRUCT(a INTEGER)", {"a": 1, "b": 2}),
        ("STRUCT(a INTEGER)", {}),
        ("MAP(VARCHAR, INTEGER)", {"a": "x"}),
        ("MAP(INTEGER, VARCHAR)", {"1": "x"}),
        ("MAP(INTEGER, VARCHAR)", [{"key": None, "value": "x"}]),
        ("UNION(n INTEGER, s VARCHAR)", 1.5),
    ],
)
def test_schemas_are_not_vacuous(sql_type, bad):
    schema = json_schema(type_tree(duckdb.sqltype(sql_type)), nullable=True)
    assert OutputValidator(schema).problem(bad) is not None


def test_type_tree_shapes():
    def tree(sql: str) -> dict:
        return type_tree(duckdb.sqltype(sql))

    assert tree("INTEGER") == {"id": "integer", "sql": "INTEGER"}
    assert tree("JSON") == {"id": "json", "sql": "JSON"}
    assert tree("VARINT") == {"id": "bignum", "sql": "BIGNUM"}
    assert tree("TIMESTAMPTZ") == {"id": "timestamp with time zone", "sql": "TIMESTAMP WITH TIME ZONE"}
    assert tree("DECIMAL(18,3)") == {"id": "decimal", "sql": "DECIMAL(18,3)", "precision": 18, "scale": 3}
    assert tree("JSON[]") == {"id": "list", "sql": "JSON[]", "child": {"id": "json", "sql": "JSON"}}
    assert tree("DOUBLE[3]")["size"] == 3
    assert tree("DOUBLE[3]")["child"]["id"] == "double"
    assert tree('STRUCT(b INTEGER, "a c" VARCHAR)')["fields"] == [
        ["b", {"id": "integer", "sql": "INTEGER"}],
        ["a c", {"id": "varchar", "sql": "VARCHAR"}],
    ]
    union = tree("UNION(num INTEGER, str VARCHAR)")
    assert [name for name, _ in union["members"]] == ["num", "str"]  # the hidden tag is dropped
    assert tree("MAP(VARCHAR, INTEGER[])")["value"]["child"]["id"] == "integer"
    assert tree("ENUM('x', 'y z')")["values"] == ["x", "y z"]
    assert tree("NULL")["id"] == "null"


def test_null_type():
    tree = type_tree(duckdb.sqltype("NULL"))
    assert converter(tree)(None) is None
    assert json_schema(tree, nullable=True) == {"type": "null"}


@pytest.mark.parametrize(
    ("expression", "sql_type"),
    [
        ("'POINT(1 2)'::GEOMETRY", "GEOMETRY"),
        ("1::VARIANT", "VARIANT"),
        ("['POINT(1 2)'::GEOMETRY]", "GEOMETRY"),
        ("(1, 'a')", "STRUCT(INTEGER, VARCHAR)"),
    ],
)
def test_unsupported_types_name_the_type_and_suggest_a_cast(con, expression, sql_type):
    duck_type = con.execute(f"SELECT {expression}").description[0][1]
    with pytest.raises(UnsupportedType) as raised:
        type_tree(duck_type)
    assert raised.value.sql_type == sql_type
    assert "CAST" in str(raised.value)


def test_unknown_tree_ids_are_unsupported_too():
    tree = {"id": "pointer", "sql": "POINTER"}
    for build in (converter, lambda t: json_schema(t, nullable=True)):
        with pytest.raises(UnsupportedType) as raised:
            build(tree)
        assert raised.value.sql_type == "POINTER"
    with pytest.raises(UnsupportedType):
        converter({"id": "list", "sql": "POINTER[]", "child": tree})


def test_same_type():
    def tree(sql: str) -> dict:
        return type_tree(duckdb.sqltype(sql))

    assert same_type(tree("STRUCT(a INTEGER, b VARCHAR[])"), tree("STRUCT(a INTEGER, b VARCHAR[])"))
    assert not same_type(tree("STRUCT(a INTEGER)"), tree("STRUCT(b INTEGER)"))
    assert not same_type(tree("DECIMAL(18,3)"), tree("DECIMAL(18,4)"))
    assert not same_type(tree("JSON"), tree("VARCHAR"))
    assert not same_type(tree("INTEGER[]"), tree("BIGINT[]"))
    stored = json.loads(json.dumps(tree("MAP(VARCHAR, DOUBLE[2])")))  # as read back from sql.json
    assert same_type(stored, tree("MAP(VARCHAR, DOUBLE[2])"))


def test_row_converter_refuses_repeated_column_names():
    column = {"name": "a", "type": {"id": "integer", "sql": "INTEGER"}, "nullable": True}
    with pytest.raises(ValueError, match="repeated: a"):
        row_converter([column, dict(column)])


def test_row_converter_converts_by_position():
    convert = row_converter(
        [
            {"name": "n", "type": {"id": "bigint", "sql": "BIGINT"}, "nullable": False},
            {"name": "f", "type": {"id": "double", "sql": "DOUBLE"}, "nullable": True},
        ]
    )
    assert convert((2**60, float("nan"))) == {"n": str(2**60), "f": "NaN"}
    assert convert((1, None)) == {"n": 1, "f": None}


def test_importing_the_table_does_not_load_duckdb():
    code = "import sys, lynxc.runtime.backends.sql.types; print('duckdb' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
