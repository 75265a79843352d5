"""run_sql end to end on real DuckDB (no mocks): arguments bound as typed values (injection
strings are matched as values), the result shapes and caps, read-only data, timeouts and
cancellation that stop DuckDB, concurrent calls, data drift, and errors that leave the server
serving."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import duckdb
import pytest
from pydantic import BaseModel, ConfigDict, Field

from lynxc.runtime.backends.sql import connection
from lynxc.runtime.backends.sql.tools import run_sql
from lynxc.runtime.context import ToolContext
from lynxc.runtime.errors import ToolError
from lynxc.runtime.wire_values import encode_json

from .sqldata import COUNTRY_COLUMNS, VIEWS, FakeServer, call, catalog_text, column, context, tool

# Minutes of work: 10^11 x 10^3 rows joined.
SLOW = "SELECT count(*) AS n FROM range(100000000000) a, range(1000) b WHERE a.range + b.range = $x"
CODE = [column("code", "VARCHAR")]
ALL_COUNTRIES_OF = "SELECT code, name, region, area, population FROM {view} ORDER BY code"

TOOLS = {
    "by_region": tool(
        "SELECT code, name FROM countries WHERE region = $region ORDER BY code",
        [column("code", "VARCHAR"), column("name", "VARCHAR")],
        {"region": "VARCHAR"},
    ),
    "by_name": tool("SELECT code FROM countries WHERE name = $name", CODE, {"name": "VARCHAR"}),
    "city": tool(
        "SELECT name, country FROM cities WHERE name = $name",
        [column("name", "VARCHAR"), column("country", "VARCHAR")],
        {"name": "VARCHAR"},
    ),
    "capped": tool("SELECT code FROM countries ORDER BY code", CODE, max_rows=3),
    "all": tool("SELECT code, name, region, area, population FROM parts ORDER BY code", COUNTRY_COLUMNS),
    "country": tool(
        "SELECT code, name, area FROM countries WHERE code = $code",
        [column("code", "VARCHAR"), column("name", "VARCHAR"), column("area", "DOUBLE")],
        {"code": "VARCHAR"},
        result="one",
    ),
    "typed": tool(
        "SELECT typeof($x) AS t, $x / 4 AS quarter",
        [column("t", "VARCHAR"), column("quarter", "DOUBLE")],
        {"x": "DOUBLE"},
        result="one",
    ),
    "larger_than": tool(
        "SELECT code FROM countries WHERE area > $min_area ORDER BY code", CODE, {"min_area": "DOUBLE"}
    ),
    "optional_region": tool(
        "SELECT code FROM countries WHERE ($region IS NULL OR region = $region) ORDER BY code",
        CODE,
        {"region": "VARCHAR"},
    ),
    "next_day": tool("SELECT $d + 1 AS next", [column("next", "DATE")], {"d": "DATE"}, result="one"),
    "some": tool(
        "SELECT code FROM countries WHERE list_contains($codes, code) ORDER BY code",
        CODE,
        {"codes": "VARCHAR[]"},
    ),
    "cast": tool("SELECT CAST($s AS INTEGER) AS n", [column("n", "INTEGER")], {"s": "VARCHAR"}, result="one"),
    "slow": tool(SLOW, [column("n", "BIGINT")], {"x": "BIGINT"}),
    "add_city": tool(
        "INSERT INTO cities VALUES ($name, 'it', 1) RETURNING name",
        [column("name", "VARCHAR")],
        {"name": "VARCHAR"},
        read_only=False,
        wrapped="INSERT INTO cities VALUES ($name, 'it', 1) RETURNING name",
    ),
}


@pytest.fixture(autouse=True)
def fresh_databases() -> Iterator[None]:
    yield
    connection.close_databases()


@pytest.fixture
def settings(tmp_path: Path) -> dict[str, Any]:
    from .sqldata import write_data

    return write_data(tmp_path)


def make_server(folder: Path, tools: dict[str, Any] = TOOLS, writable: bool = False) -> FakeServer:
    database = {"setting": "db_file", "writable": writable}
    return FakeServer(folder, catalog_text(tools, database=database, views=VIEWS))


@pytest.fixture
def server(tmp_path: Path) -> FakeServer:
    return make_server(tmp_path)


def run(server: FakeServer, name: str, settings: dict[str, Any], arguments: Any = None, **kw: Any) -> Any:
    return anyio.run(lambda: call(server, name, settings, arguments, **kw))


def city_count(settings: dict[str, Any]) -> int:
    connection.close_databases()  # release the file before reading it from another connection
    with duckdb.connect(settings["db_file"], read_only=True) as db:
        return db.execute("SELECT count(*) FROM cities").fetchone()[0]


# --- results --------------------------------------------------------------------------------------


def test_many_answers_rows_count_and_truncated(server: FakeServer, settings: dict[str, Any]) -> None:
    assert run(server, "by_region", settings, {"region": "Asia"}) == {
        "rows": [{"code": "in", "name": "India"}, {"code": "jp", "name": "Japan"}],
        "row_count": 2,
        "truncated": False,
    }
    assert run(server, "by_region", settings, {"region": "Oceania"}) == {
        "rows": [],
        "row_count": 0,
        "truncated": False,
    }


def test_the_row_cap_truncates(server: FakeServer, settings: dict[str, Any]) -> None:
    assert run(server, "capped", settings) == {
        "rows": [{"code": "br"}, {"code": "ca"}, {"code": "de"}],
        "row_count": 3,
        "truncated": True,
    }
    # A smaller max_rows cap cuts further; a larger one cannot fetch past the statement's LIMIT.
    assert run(server, "capped", settings, caps={"max_rows": 2})["rows"] == [{"code": "br"}, {"code": "ca"}]
    wider = run(server, "capped", settings, caps={"max_rows": 50})
    assert (wider["row_count"], wider["truncated"]) == (3, True)


def test_exactly_max_rows_is_not_truncated(tmp_path: Path, settings: dict[str, Any]) -> None:
    server = make_server(
        tmp_path, {"eight": tool("SELECT code FROM countries ORDER BY code", CODE, max_rows=8)}
    )
    result = run(server, "eight", settings)
    assert (result["row_count"], result["truncated"]) == (8, False)


def test_rows_past_the_json_cap_are_left_out_and_flagged(
    server: FakeServer, settings: dict[str, Any]
) -> None:
    result = run(server, "all", settings, caps={"max_rows": 100, "max_output_json_bytes": 400})
    assert result["truncated"] is True
    assert 0 < result["row_count"] == len(result["rows"]) < 8
    assert len(encode_json(result)) <= 400
    assert result["rows"][0] == {
        "code": "br",
        "name": "Brazil",
        "region": "Americas",
        "area": 8515767.0,
        "population": 216000000,
    }


def test_one_answers_the_row_itself(server: FakeServer, settings: dict[str, Any]) -> None:
    assert run(server, "country", settings, {"code": "fr"}) == {
        "code": "fr",
        "name": "France",
        "area": 551695.0,
    }


def test_one_with_no_row_is_an_error_naming_the_arguments(
    server: FakeServer, settings: dict[str, Any]
) -> None:
    with pytest.raises(ToolError, match=r'^no row matched code="zz"$'):
        run(server, "country", settings, {"code": "zz"})
    with pytest.raises(ToolError, match=r'^no row matched code="x{58}…$'):  # long values cut
        run(server, "country", settings, {"code": "x" * 500})


# --- binding --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "' OR 1=1 --",
        "'; DROP TABLE cities; --",
        "Robert'); DELETE FROM cities;--",
        "France' UNION SELECT name FROM cities --",
        "$name",
        '" OR ""="',
    ],
)
def test_injection_strings_are_matched_as_values(
    server: FakeServer, settings: dict[str, Any], value: str
) -> None:
    assert run(server, "by_name", settings, {"name": value})["rows"] == []
    assert run(server, "city", settings, {"name": value})["rows"] == []
    assert run(server, "by_name", settings, {"name": "France"})["rows"] == [{"code": "fr"}]
    assert city_count(settings) == 4


def test_values_are_bound_as_their_declared_types(server: FakeServer, settings: dict[str, Any]) -> None:
    # JSON 3 arrives as int; bound bare it would be an INTEGER (and 3 / 4 the same 0.75 only by luck).
    assert run(server, "typed", settings, {"x": 3}) == {"t": "DOUBLE", "quarter": 0.75}
    assert run(server, "larger_than", settings, {"min_area": 3000000})["rows"] == [
        {"code": "br"},
        {"code": "ca"},
        {"code": "in"},
    ]
    assert run(server, "next_day", settings, {"d": "2024-02-28"}) == {"next": "2024-02-29"}
    assert run(server, "some", settings, {"codes": ["jp", "fr", "zz"]})["rows"] == [
        {"code": "fr"},
        {"code": "jp"},
    ]


def test_a_missing_optional_argument_is_null(server: FakeServer, settings: dict[str, Any]) -> None:
    assert run(server, "optional_region", settings, {})["row_count"] == 8
    assert run(server, "optional_region", settings, {"region": None})["row_count"] == 8
    assert run(server, "optional_region", settings, {"region": "Americas"})["rows"] == [
        {"code": "br"},
        {"code": "ca"},
    ]


def test_a_value_the_declared_type_refuses_is_duckdbs_error(
    server: FakeServer, settings: dict[str, Any]
) -> None:
    # DuckDB casts a bound value when the statement runs (the inputSchema's format would
    # normally have refused it first).
    with pytest.raises(ToolError, match=r'^DuckDB: .*invalid date field format: "someday"'):
        run(server, "next_day", settings, {"d": "someday"})


# Every parameter type the compiler declares (compiler/lower/sql/statements.py parameter_type).
BOUND = [
    ("VARCHAR", "it's", "it's"),
    ("BIGINT", -9_007_199_254_740_991, -9_007_199_254_740_991),
    ("BIGINT", 9_007_199_254_740_993, "9007199254740993"),  # past 2^53 - 1: text (types.py)
    ("DOUBLE", 2, 2.0),
    ("BOOLEAN", True, True),
    ("DATE", "2024-02-29", "2024-02-29"),
    ("TIMESTAMPTZ", "2024-02-29T12:30:00+02:00", "2024-02-29T10:30:00Z"),
    ("TIME", "12:30:01.5", "12:30:01.500000"),
    ("UUID", "2c5f8f7e-0b7a-4a4e-9a53-3f0c7c0d2a11", "2c5f8f7e-0b7a-4a4e-9a53-3f0c7c0d2a11"),
    ("VARCHAR[]", ["a", "b'"], ["a", "b'"]),
    ("BIGINT[]", [1, -2], [1, -2]),
    ("DOUBLE[]", [1, 2.5], [1.0, 2.5]),
    ("DATE[]", ["2024-01-01"], ["2024-01-01"]),
]


@pytest.mark.parametrize(("sql_type", "value", "back"), BOUND)
def test_every_declared_parameter_type_binds_and_round_trips(
    tmp_path: Path, settings: dict[str, Any], sql_type: str, value: Any, back: Any
) -> None:
    echo = tool(
        "SELECT $v AS v, typeof($v) AS t", [column("v", sql_type), column("t", "VARCHAR")], {"v": sql_type}
    )
    server = make_server(tmp_path, {"echo": {**echo, "result": "one"}})
    found = run(server, "echo", settings, {"v": value})
    assert (found["v"], found["t"]) == (back, sql_type.replace("TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE"))


class ByRegion(BaseModel):
    """A generated input model: the Python name differs from the published (alias) name."""

    model_config = ConfigDict(extra="forbid", populate_by_name=False)
    region_name: str = Field(alias="region")


def test_the_input_model_is_read_by_published_names(server: FakeServer, settings: dict[str, Any]) -> None:
    params = ByRegion.model_validate({"region": "Americas"})
    assert run(server, "by_region", settings, params)["rows"] == [
        {"code": "br", "name": "Brazil"},
        {"code": "ca", "name": "Canada"},
    ]


# --- read-only data -------------------------------------------------------------------------------


def test_a_read_only_database_refuses_even_a_write_statement(
    server: FakeServer, settings: dict[str, Any]
) -> None:
    with pytest.raises(
        ToolError,
        match=r'^DuckDB: Invalid Input Error: Cannot execute statement of type "INSERT" .*read-only',
    ):
        run(server, "add_city", settings, {"name": "Rome"})
    assert city_count(settings) == 4


def test_a_writable_database_takes_the_write(tmp_path: Path, settings: dict[str, Any]) -> None:
    server = make_server(tmp_path, {"add_city": TOOLS["add_city"]}, writable=True)
    assert run(server, "add_city", settings, {"name": "Rome"}) == {
        "rows": [{"name": "Rome"}],
        "row_count": 1,
        "truncated": False,
    }
    assert city_count(settings) == 5


# --- errors ---------------------------------------------------------------------------------------


def test_a_duckdb_error_answers_the_call_and_the_server_carries_on(
    server: FakeServer, settings: dict[str, Any]
) -> None:
    with pytest.raises(ToolError) as caught:
        run(server, "cast", settings, {"s": "abc"})
    message = str(caught.value)
    assert message.startswith("DuckDB: Conversion Error: Could not convert string 'abc' to INT32")
    assert "\n" not in message and "LINE 1" not in message
    assert run(server, "cast", settings, {"s": "12"}) == {"n": 12}


def test_drifted_data_disables_only_the_tools_that_read_it(tmp_path: Path, settings: dict[str, Any]) -> None:
    retyped = tmp_path / "retyped.parquet"
    with duckdb.connect() as con:
        con.execute(
            f"COPY (SELECT code, name, region, CAST(area AS VARCHAR) AS area, population "
            f"FROM read_parquet('{settings['countries_file']}')) TO '{retyped}' (FORMAT parquet)"
        )
    server = make_server(tmp_path)
    drifted = {**settings, "countries_file": str(retyped)}
    with pytest.raises(ToolError) as caught:
        run(server, "country", drifted, {"code": "fr"})
    assert str(caught.value) == (
        "the data behind countries_file changed since lynxc build: column `area` is now VARCHAR, was DOUBLE; "
        "rebuild against the new data"
    )
    assert run(server, "by_region", drifted, {"region": "Asia"})["row_count"] == 2  # reads no `area`
    assert run(server, "all", drifted)["row_count"] == 8  # the glob's files did not change


def test_a_call_outside_a_server_or_its_catalog_is_an_error(
    server: FakeServer, settings: dict[str, Any]
) -> None:
    with pytest.raises(ToolError, match="no server definition"):
        anyio.run(lambda: run_sql({}, ToolContext(tool="by_region", caps={}, settings=settings)))
    with pytest.raises(ToolError, match=r"'nope' is not a SQL tool of this server's sql\.json"):
        anyio.run(lambda: run_sql({}, context(server, "nope", settings)))


def test_data_that_cannot_be_opened_answers_each_call_and_is_retried(
    server: FakeServer, settings: dict[str, Any], tmp_path: Path
) -> None:
    moved = tmp_path / "moved.duckdb"
    Path(settings["db_file"]).rename(moved)
    with pytest.raises(ToolError, match="setting 'db_file': no DuckDB database file at"):
        run(server, "by_region", settings, {"region": "Asia"})
    moved.rename(settings["db_file"])
    assert run(server, "by_region", settings, {"region": "Asia"})["row_count"] == 2


def test_a_view_whose_file_is_missing_is_retried_on_the_next_call(
    tmp_path: Path, settings: dict[str, Any]
) -> None:
    # The database opened without the file once kept its broken view until the server restarted.
    server = make_server(
        tmp_path, {"json": tool(ALL_COUNTRIES_OF.format(view="countries_json"), COUNTRY_COLUMNS), **TOOLS}
    )
    later = tmp_path / "later.jsonl"
    waiting = {**settings, "countries_json": str(later)}
    with pytest.raises(ToolError, match=r"^view `countries_json` cannot read setting 'countries_json'"):
        run(server, "json", waiting)
    assert run(server, "by_region", waiting, {"region": "Asia"})["row_count"] == 2  # the others serve
    Path(settings["countries_json"]).rename(later)
    assert run(server, "json", waiting)["row_count"] == 8
    # Complete now: kept for the next calls.
    assert connection.database_for(server, server.catalog, waiting) is connection.database_for(
        server, server.catalog, waiting
    )


# --- timeouts, cancellation, concurrency ----------------------------------------------------------


def cpu_seconds_over(wall: float) -> float:
    """CPU time this process (all its threads, DuckDB's included) uses during `wall` seconds."""
    start = time.process_time()
    time.sleep(wall)
    return time.process_time() - start


def test_a_statement_past_the_timeout_is_interrupted(server: FakeServer, settings: dict[str, Any]) -> None:
    quick = {**settings, "sql_timeout_seconds": 0.5}
    run(server, "by_region", quick, {"region": "Asia"})  # open the database first
    started = time.monotonic()
    with pytest.raises(ToolError) as caught:
        run(server, "slow", quick, {"x": 7})
    assert time.monotonic() - started < 3
    assert str(caught.value) == (
        "the statement ran longer than 0.5 s (setting 'sql_timeout_seconds') and was stopped; "
        "narrow it with more specific arguments"
    )
    # DuckDB stopped: its threads no longer burn the CPU (2 threads would use ~1 s in 0.5 s).
    assert cpu_seconds_over(0.5) < 0.2
    assert run(server, "by_region", quick, {"region": "Asia"})["row_count"] == 2


def test_a_cancelled_call_interrupts_duckdb(server: FakeServer, settings: dict[str, Any]) -> None:
    run(server, "by_region", settings, {"region": "Asia"})

    async def cancel_soon() -> None:
        with anyio.move_on_after(0.3):
            await call(server, "slow", settings, {"x": 7})
            raise AssertionError("the slow statement finished")

    started = time.monotonic()
    anyio.run(cancel_soon)
    assert time.monotonic() - started < 2
    time.sleep(0.3)  # the interrupt lands within milliseconds; leave it some room
    assert cpu_seconds_over(0.5) < 0.2
    assert run(server, "by_region", settings, {"region": "Europe"})["row_count"] == 4


def test_concurrent_calls_all_answer(server: FakeServer, settings: dict[str, Any]) -> None:
    regions = ["Europe", "Asia", "Americas", "Oceania"] * 6
    expected = {"Europe": 4, "Asia": 2, "Americas": 2, "Oceania": 0}
    answers: list[tuple[str, int]] = []

    async def one(region: str) -> None:
        result = await call(server, "by_region", settings, {"region": region})
        answers.append((region, result["row_count"]))

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for region in regions:
                group.start_soon(one, region)

    anyio.run(main)
    assert sorted(answers) == sorted((region, expected[region]) for region in regions)


def test_a_slow_call_does_not_hold_up_the_others(server: FakeServer, settings: dict[str, Any]) -> None:
    slowish = {**settings, "sql_timeout_seconds": 3}
    run(server, "by_region", slowish, {"region": "Asia"})
    quick_done: list[float] = []
    errors: list[str] = []

    async def slow() -> None:
        try:
            await call(server, "slow", slowish, {"x": 7})
        except ToolError as err:
            errors.append(str(err))

    async def quick() -> None:
        await anyio.sleep(0.2)
        started = time.monotonic()
        for _ in range(5):
            assert (await call(server, "country", slowish, {"code": "jp"}))["name"] == "Japan"
        quick_done.append(time.monotonic() - started)

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(slow)
            group.start_soon(quick)

    anyio.run(main)
    assert quick_done and quick_done[0] < 1.5
    assert errors and "ran longer than 3 s" in errors[0]


def test_the_result_is_plain_json(server: FakeServer, settings: dict[str, Any]) -> None:
    result = run(server, "all", settings)
    assert json.loads(encode_json(result)) == result
