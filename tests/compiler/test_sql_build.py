"""SQL tools at build time: output schemas derived from DuckDB's result types, parameters bound
at their declared types, writes only where allowed, written outputs checked, a bounded check,
and a change of the data's types showing in `build --check` and `lynxc diff`. (The malformed
corpus holds the error cases with their golden diagnostics.)"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from lynxc.compiler.lower.server import compile_spec
from lynxc.compiler.lower.sql.check import check_sql, is_sql_tool
from lynxc.compiler.spec.load import load_spec
from tests.conftest import LYNXC, ROOT

SERVER = """\
lynxc: 1
server:
  name: shop
  version: 1.0.0
  settings:
    orders_file: {{type: string, default: orders.parquet, description: The orders.}}
  duckdb:
    allow_writes: {allow_writes}
    views:
      orders:
        reader: read_parquet
        setting: orders_file
        columns:
          id: BIGINT
          customer: VARCHAR
          total: DECIMAL(18,2)
          placed: DATE
          items: STRUCT(sku VARCHAR, qty INTEGER)[]
tools:
{tools}
"""


def compile_text(tmp_path: Path, tools: str, *, allow_writes: bool = False):
    spec = tmp_path / "shop.yaml"
    spec.write_text(SERVER.format(tools=tools, allow_writes=str(allow_writes).lower()))
    return compile_spec(spec)


def tool_output(result, name: str) -> dict:
    assert result.value is not None, [d.render() for d in result.diagnostics]
    tool = next(t for t in result.value.tools if t.name == name)
    return json.loads(tool.output_schema_json)


def test_output_schema_comes_from_the_result_types(tmp_path: Path) -> None:
    result = compile_text(
        tmp_path,
        """  - name: recent
    description: {purpose: List the orders placed since a day.}
    parameters:
      since: {type: string, format: date, required: true, description: The first day.}
      skus: {type: array, items: {type: string}, description: Only orders with one of these items.}
    backend:
      sql: |
        SELECT id, customer, total, placed, items, count(*) OVER () AS matching
        FROM orders
        WHERE placed >= $since AND id IS NOT NULL
          AND ($skus IS NULL OR len(list_intersect(list_transform(items, i -> i.sku), $skus)) > 0)
        ORDER BY placed DESC""",
    )
    schema = tool_output(result, "recent")
    assert schema["required"] == ["rows", "row_count", "truncated"]
    assert schema["properties"]["rows"]["maxItems"] == 100  # the implied max_rows cap
    row = schema["properties"]["rows"]["items"]
    assert row["required"] == ["id", "customer", "total", "placed", "items", "matching"]
    columns = row["properties"]
    assert columns["id"]["anyOf"][0]["type"] == "integer"  # BIGINT: an integer, or text past 2^53
    assert {"type": "null"} not in columns["id"]["anyOf"]  # proven by the WHERE
    assert {"type": "null"} in columns["customer"]["anyOf"]
    assert columns["items"]["anyOf"][0]["type"] == "array"
    assert set(columns["items"]["anyOf"][0]["items"]["anyOf"][0]["properties"]) == {"sku", "qty"}
    sql = result.value.sql
    assert sql is not None and sql.views[0].name == "orders"
    (recent,) = sql.tools
    assert [(p.name, p.duckdb_type) for p in recent.params] == [("since", "DATE"), ("skus", "VARCHAR[]")]
    assert "CAST($since AS DATE)" in recent.wrapped and recent.wrapped.endswith("LIMIT 101")
    assert recent.statement.startswith("SELECT id, customer") and "$since" in recent.statement


def test_one_row_shape_and_declared_caps(tmp_path: Path) -> None:
    result = compile_text(
        tmp_path,
        """  - name: totals
    description: {purpose: Sum the orders of one customer.}
    parameters:
      customer: {type: string, required: true, description: The customer.}
    caps:
      max_rows: {value: 5, description: Rows at most.}
    backend:
      result: one
      sql: "SELECT count(*) AS orders, sum(total) AS spent FROM orders WHERE customer = $customer\"""",
    )
    schema = tool_output(result, "totals")
    assert set(schema["properties"]) == {"orders", "spent"}
    assert result.value.sql.tools[0].wrapped.endswith("LIMIT 6")


def test_a_written_output_that_accepts_every_value_is_kept(tmp_path: Path) -> None:
    result = compile_text(
        tmp_path,
        """  - name: customers
    description: {purpose: List the customers.}
    backend: {sql: "SELECT DISTINCT customer FROM orders ORDER BY customer"}
    output:
      type: object
      properties:
        rows:
          type: array
          items:
            type: object
            properties:
              customer: {type: string, nullable: true, description: The customer's name.}
        row_count: {type: integer}
        truncated: {type: boolean}""",
    )
    schema = tool_output(result, "customers")
    customer = schema["properties"]["rows"]["items"]["properties"]["customer"]
    assert customer["description"] == "The customer's name."


def test_writes_compile_only_for_destructive_tools_of_servers_that_allow_them(tmp_path: Path) -> None:
    tool = """  - name: forget
    description: {purpose: Delete the orders of a customer.}
    annotations: {destructiveHint: true}
    parameters:
      customer: {type: string, required: true, description: The customer.}
    backend: {sql: "DELETE FROM orders WHERE customer = $customer"}"""
    refused = compile_text(tmp_path, tool)
    assert [d.rule_id for d in refused.diagnostics] == ["SQL_NOT_READ_ONLY"]
    allowed = compile_text(tmp_path, tool, allow_writes=True)
    assert allowed.value is not None, [d.render() for d in allowed.diagnostics]
    (forget,) = allowed.value.sql.tools
    assert (
        not forget.read_only
        and forget.wrapped == "DELETE FROM orders WHERE customer = CAST($customer AS VARCHAR)"
    )
    assert tool_output(allowed, "forget")["properties"]["rows"]["items"]["required"] == ["Count"]


def test_the_check_is_bounded_by_a_watchdog_that_interrupts_duckdb(tmp_path: Path) -> None:
    """Inferring the schema from every row of a large JSON sample takes longer than the budget
    given here: DuckDB is interrupted and the build reports it instead of waiting."""
    import duckdb

    rows = "SELECT range AS a, md5(range::VARCHAR) AS b FROM range(1000000)"
    with duckdb.connect() as connection:
        connection.execute(f"COPY ({rows}) TO '{tmp_path / 'big.json'}'")
    (tmp_path / "server.yaml").write_text(
        """lynxc: 1
server:
  name: slow
  version: 1.0.0
  settings:
    big: {type: string, default: big.json, description: The rows.}
  duckdb:
    views:
      big: {reader: read_json, setting: big, sample: big.json, options: {sample_size: -1}}
tools:
  - name: count_big
    description: {purpose: Count the rows.}
    backend: {sql: "SELECT count(*) AS n FROM big"}
"""
    )
    source = load_spec(tmp_path / "server.yaml").value
    assert source is not None
    sql_tools = [t for t in source.tools if is_sql_tool(t)]
    checked = check_sql(source, sql_tools, {}, cpu_seconds=0.05)
    assert [d.rule_id for d in checked.diagnostics] == ["SQL_TIMEOUT"]
    assert "used over 0.05 s of CPU time" in checked.diagnostics[0].message


def test_a_loaded_machine_does_not_trip_the_checks_budget(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The budget counts CPU time: while the build is not running (here stopped for 3 s in the
    middle of the check, as a machine busy with other work would leave it waiting), nothing is
    counted, so a check needing far less than its budget of work passes however long it waits.
    The spec is a small one (declared columns, two statements): its check needs a fraction of
    the 2 s budget even on a loaded machine, where a bundled server's can need more."""
    import os
    import sys

    from lynxc.compiler.lower import server

    def check_paused_by_load(*args, **kwargs):
        pid = os.getpid()
        subprocess.Popen(["sh", "-c", f"sleep 0.1; kill -STOP {pid}; sleep 3; kill -CONT {pid}"])
        return check_sql(*args, cpu_seconds=2.0, **kwargs)

    if sys.platform == "win32":
        pytest.skip("needs POSIX signals to pause the process")
    monkeypatch.setattr(server, "check_sql", check_paused_by_load)
    result = compile_text(
        tmp_path,
        """  - name: totals
    description: {purpose: Sum the orders of each customer.}
    backend: {sql: "SELECT customer, sum(total) AS spent FROM orders GROUP BY customer"}
  - name: order
    description: {purpose: Read one order by its id.}
    parameters:
      id: {type: integer, required: true, description: The order id.}
    backend: {sql: "SELECT * FROM orders WHERE id = $id", result: one}""",
    )
    assert result.value is not None, [d.render() for d in result.diagnostics]


def test_a_schema_describes_tables_and_never_fills_them(tmp_path: Path) -> None:
    (tmp_path / "schema.sql").write_text(
        "CREATE TABLE t (a INTEGER NOT NULL, b VARCHAR);\n"
        "CREATE TABLE filled AS SELECT content FROM read_text('/etc/hostname');\n"
    )
    (tmp_path / "server.yaml").write_text(
        """lynxc: 1
server:
  name: db
  version: 1.0.0
  settings:
    db: {type: string, default: x.duckdb, description: The database.}
  duckdb:
    database: {setting: db, schema: schema.sql}
tools:
  - name: count_t
    description: {purpose: Count the rows.}
    backend: {sql: "SELECT count(*) AS n FROM t"}
"""
    )
    refused = compile_spec(tmp_path / "server.yaml")
    (problem,) = refused.diagnostics
    assert problem.rule_id == "SQL_DATA_INVALID" and "CREATE TABLE ... AS" in problem.message
    assert (problem.span.line, problem.span.col) == (2, 1)
    (tmp_path / "schema.sql").write_text("CREATE TABLE t (a INTEGER NOT NULL, b VARCHAR);\n")
    built = compile_spec(tmp_path / "server.yaml")
    assert built.value is not None and built.value.sql.not_null == ("t.a",)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "specs").mkdir()
    shutil.copytree(ROOT / "specs" / "countries-sql", tmp_path / "specs" / "countries-sql")
    return tmp_path


def test_a_change_of_the_datas_types_shows_in_build_check_and_diff(project: Path, tmp_path: Path) -> None:
    """The sample stands for the data: when a column's type changes there, the tool's output
    schema changes, `build --check` says the generated files are stale and `lynxc diff` names it."""
    built = subprocess.run([LYNXC, "--project", str(project), "build"], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    old = tmp_path / "old"
    shutil.copytree(project / "specs" / "countries-sql", old)
    import duckdb

    sample = project / "specs" / "countries-sql" / "data" / "countries.jsonl.gz"
    with duckdb.connect() as connection:  # area in whole km² (BIGINT) instead of a DOUBLE
        connection.execute(
            f"COPY (SELECT * REPLACE (CAST(round(area) AS BIGINT) AS area) FROM read_json('{sample}')) "
            f"TO '{sample}' (FORMAT json, COMPRESSION gzip)"
        )
    check = subprocess.run(
        [LYNXC, "--project", str(project), "build", "--check"], capture_output=True, text=True
    )
    assert check.returncode == 1 and "tools.json" in check.stderr, check.stderr
    diff = subprocess.run(
        [LYNXC, "--project", str(project), "diff", str(old), str(project / "specs" / "countries-sql")],
        capture_output=True,
        text=True,
    )
    assert "find_countries" in diff.stdout and "area" in diff.stdout, diff.stdout + diff.stderr


def test_every_sql_rule_has_a_malformed_case() -> None:
    """Each SQL check is shown, with its golden diagnostic, by a case of the malformed corpus
    (the timeout, which needs a slow statement, is tested above)."""
    import re

    from lynxc.compiler.rules import RULES

    malformed = Path(__file__).parent / "malformed"
    reported = set()
    postgres = Path(__file__).parent / "sql" / "postgres" / "malformed"
    for expected in (*malformed.glob("sql-*.expected"), *postgres.glob("*.expected")):
        reported |= set(re.findall(r" error (SQL_[A-Z_]+):", expected.read_text()))
    # The timeout needs a slow statement, and a warning leaves the spec compiling: both tested here.
    rules = {rule_id for rule_id, rule in RULES.items() if rule.category == "sql"}
    rules -= {"SQL_TIMEOUT", "SQL_PARAM_CASTS_COLUMN", "SQL_LIMIT_UNBOUNDED", "SQL_TYPE_LOSSY"}
    # A build database that refuses the connection: tests/compiler/sql/postgres/test_build.py.
    rules -= {"SQL_DATABASE_UNREACHABLE"}
    assert rules and rules <= reported, sorted(rules - reported)


def test_the_spec_schema_describes_sql_tools_and_data() -> None:
    from lynxc.compiler.spec.models import SpecFile

    schema = SpecFile.model_json_schema(by_alias=True)
    assert {"sql", "sql_file", "result"} <= set(schema["$defs"]["SqlBackend"]["properties"])
    assert "schema" in schema["$defs"]["DuckDBDatabase"]["properties"]
    assert {"dsn", "schema", "allow_writes"} <= set(schema["$defs"]["PostgresData"]["properties"])
    assert "postgres" in schema["$defs"]["Server"]["properties"]
    assert {"reader", "setting", "columns", "sample", "options"} <= set(
        schema["$defs"]["DuckDBView"]["properties"]
    )


def test_a_parameter_type_that_makes_duckdb_cast_a_column_is_warned_about(tmp_path: Path) -> None:
    """`number` against a BIGINT column makes the filter CAST(id AS DOUBLE) = ..., which no
    scan can push down (bench/sql_speed.py: 11x slower on 10M Parquet rows); `integer` does not."""

    def lookup(kind: str) -> str:
        return f"""  - name: order_by_id
    description: {{purpose: Read one order.}}
    parameters:
      id: {{type: {kind}, required: true, description: The order id.}}
    backend: {{sql: "SELECT customer FROM orders WHERE id = $id", result: one}}"""

    warned = compile_text(tmp_path, lookup("number"))
    assert warned.value is not None
    (warning,) = warned.diagnostics
    assert warning.rule_id == "SQL_PARAM_CASTS_COLUMN" and warning.severity == "warning"
    assert "'id' to DOUBLE" in warning.message
    assert compile_text(tmp_path, lookup("integer")).diagnostics == ()


def test_a_final_semicolon_and_comment_stay_outside_the_row_cap(tmp_path: Path) -> None:
    result = compile_text(
        tmp_path,
        """  - name: customers
    description: {purpose: List the customers.}
    backend: {sql: "SELECT DISTINCT customer FROM orders; -- every one of them"}""",
    )
    assert result.value is not None, [d.render() for d in result.diagnostics]
    (customers,) = result.value.sql.tools
    assert customers.statement == "SELECT DISTINCT customer FROM orders"
    assert (
        customers.wrapped
        == "SELECT * FROM (\nSELECT DISTINCT customer FROM orders\n) AS lynxc_rows LIMIT 101"
    )


def test_writes_are_insert_update_or_delete_never_read_only_nor_returning(tmp_path: Path) -> None:
    def write(sql: str, annotations: str = "{destructiveHint: true}") -> list[str]:
        tools = f"""  - name: change
    description: {{purpose: Change the orders.}}
    annotations: {annotations}
    backend: {{sql: "{sql}"}}"""
        return [d.message for d in compile_text(tmp_path, tools, allow_writes=True).diagnostics]

    assert write("UPDATE orders SET customer = 'returning soon'") == []  # RETURNING in a string
    assert write("UPDATE orders SET customer = 'x' RETURNING id") == [
        "RETURNING is not supported: a write returns the count of rows it changed"
    ]
    assert write("CREATE TABLE t (a INTEGER)") == [
        "the statement is CREATE TABLE: SQL tools read, and only INSERT, UPDATE or DELETE may write"
    ]
    # Named as written, not as DuckDB files them (INSTALL under LOAD, USE and RESET under SET).
    named_as_written = (("INSTALL httpfs", "INSTALL"), ("USE memory", "USE"), ("RESET threads", "RESET"))
    for statement, named in named_as_written:
        assert write(statement) == [
            f"the statement is {named}: SQL tools read, and only INSERT, UPDATE or DELETE may write"
        ]
    assert write("UPDATE orders SET customer = current_setting('temp_directory')") == [
        "current_setting() reveals the server (its settings, paths, catalog or version)"
    ]
    assert write("UPDATE orders SET customer = upper(customer)") == []
    assert write("DELETE FROM orders", "{destructiveHint: true, readOnlyHint: true}") == [
        "the tool is annotated readOnlyHint: true but runs DELETE"
    ]


def test_a_type_nested_deeper_than_the_stack_is_a_diagnostic(tmp_path: Path) -> None:
    depth = 1500
    (tmp_path / "deep.json").write_text("[" * depth + "1" + "]" * depth + "\n")
    (tmp_path / "server.yaml").write_text(
        """lynxc: 1
server:
  name: deep
  version: 1.0.0
  settings:
    f: {type: string, default: deep.json, description: The data.}
  duckdb:
    views:
      deep: {reader: read_json, setting: f, sample: deep.json, options: {format: array}}
tools:
  - name: everything
    description: {purpose: Return everything.}
    backend: {sql: "SELECT * FROM deep"}
"""
    )
    result = compile_spec(tmp_path / "server.yaml")
    assert result.value is None
    assert {d.rule_id for d in result.diagnostics} <= {"SQL_TYPE_UNSUPPORTED", "SQL_DATA_INVALID"}


def test_a_written_output_is_checked_through_its_refs(tmp_path: Path) -> None:
    result = compile_text(
        tmp_path,
        """  - name: customers
    description: {purpose: List the customers.}
    backend: {sql: "SELECT DISTINCT customer FROM orders"}
    output:
      type: object
      properties:
        rows: {type: array, items: {$ref: "#/$defs/Row"}}
        row_count: {type: integer}
        truncated: {type: boolean}
      $defs:
        Row:
          type: object
          properties:
            customer: {type: string}""",
    )
    assert [d.rule_id for d in result.diagnostics] == ["SQL_OUTPUT_MISMATCH"]
    assert "does not accept null" in result.diagnostics[0].message


def test_a_limit_or_offset_parameter_without_a_maximum_is_warned_about(tmp_path: Path) -> None:
    def paged(limit: str, offset: str) -> list[tuple[str, str]]:
        tools = f"""  - name: page
    description: {{purpose: List a page of orders.}}
    parameters:
      n: {{type: integer, {limit} description: Rows wanted.}}
      skip: {{type: integer, {offset} description: Rows skipped.}}
    backend: {{sql: "SELECT id FROM orders ORDER BY id LIMIT least($n, 50) OFFSET $skip"}}"""
        result = compile_text(tmp_path, tools)
        assert result.value is not None, [d.render() for d in result.diagnostics]
        return [(d.rule_id, d.message) for d in result.diagnostics]

    warned = paged("", "")
    assert [rule for rule, _ in warned] == ["SQL_LIMIT_UNBOUNDED"] * 2
    assert "'n' sets the LIMIT" in warned[0][1] and "'skip' sets the OFFSET" in warned[1][1]
    assert paged("maximum: caps.max_rows,", "maximum: 1000,") == []


def test_an_integer_parameter_carries_bigints_range_unless_it_declares_its_own(tmp_path: Path) -> None:
    result = compile_text(
        tmp_path,
        """  - name: by_id
    description: {purpose: Read one order.}
    parameters:
      id: {type: integer, minimum: 1, nullable: true, description: The order id.}
    backend: {sql: "SELECT customer FROM orders WHERE id = $id", result: one}""",
    )
    assert result.value is not None, [d.render() for d in result.diagnostics]
    (tool,) = result.value.tools
    (integer, _) = json.loads(tool.input_schema_json)["properties"]["id"]["anyOf"]
    assert (integer["minimum"], integer["maximum"]) == (1, 2**63 - 1)


def test_the_readme_sql_example_names_one_file_for_serving_and_building() -> None:
    """A path setting is read where `lynxc serve` runs (the project), a sample beside the spec
    (specs/<server>/): the README's example must name the same file both ways, as the bundled
    countries-sql spec does."""
    import re

    from ruamel.yaml import YAML

    readme = (ROOT / "README.md").read_text()
    section = readme.split("### Declaring data: SQL tools", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert block is not None
    server = YAML(typ="safe").load(block.group(1))["server"]
    (view,) = server["duckdb"]["views"].values()
    default = server["settings"][view["setting"]]["default"]
    assert Path(default) == Path("specs", server["name"], view["sample"])


def test_a_value_that_would_arrive_with_a_loss_is_warned_about(tmp_path: Path) -> None:
    """Dates, timestamps and intervals are fetched as DuckDB's text, whole, except inside a
    UNION (the member is found again from the client's Python value): that is a warning."""

    def returning(expression: str) -> list[str]:
        tools = f"""  - name: lossy
    description: {{purpose: Return one value.}}
    backend: {{sql: "SELECT {expression} AS v", result: one}}"""
        result = compile_text(tmp_path, tools)
        assert result.value is not None, [d.render() for d in result.diagnostics]
        return [d.rule_id for d in result.diagnostics]

    assert returning("[{'i': INTERVAL 1 month}]") == []
    assert returning("union_value(i := INTERVAL 1 month)::UNION(s VARCHAR, i INTERVAL)") == ["SQL_TYPE_LOSSY"]
    assert returning("[union_value(d := DATE 'infinity')::UNION(n INTEGER, d DATE)]") == ["SQL_TYPE_LOSSY"]
