"""SQL tools at scale: three tools over a 10,000,000-row Parquet file, served by the real `lynxc
serve` over stdio and called with an MCP client, against the same statements run directly in
DuckDB; then how long `lynxc build` takes for a server of 50 SQL tools.

The orders, made by DuckDB itself (10 to 25 s for 10M rows on 2 cores), are id BIGINT, customer
VARCHAR (100,000 distinct), region VARCHAR (8 values), amount DOUBLE, placed DATE and tags
VARCHAR[] (0 to 10 of 10 tags, 2 on average). Ids are unique and SORTED, and `placed` grows with them, as an
append-only orders table is written: so each Parquet row group (122,880 rows) holds a narrow id
and date range, and its min/max statistics let DuckDB skip row groups. That is the case where
losing filter pushdown would show (shuffled ids make every lookup a full scan, raw or not).

The spec (one file, `columns:` declared, so the build reads no data) has three SQL tools:
- `order_by_id`: point lookup by id (result: one);
- `region_totals`: count/sum/avg by region for a date range and a tag;
- `top_customers`: top k customers by amount in a region (ORDER BY ... LIMIT $k).

Figures, per tool, over the same varied arguments (fixed seeds); each case runs over MCP, then
raw, then wrapped, so that other load on the machine hits the three alike:
- MCP: p50/p95 of `call_tool` through `lynxc serve` (stdio, JSON, validation, row conversion);
- direct raw: the statement as written, run with DuckDB's Python API in this process on a
  connection with the same view and the same threads (`duckdb_threads`, default 2), with the
  arguments as the JSON values a client sends;
- direct wrapped: the statement the server runs (sql.json's `wrapped`: each $param CAST to its
  declared type, under LIMIT max_rows+1), bound as the server binds it (duckdb.Value of the
  declared type) and fetched as it fetches (at most max_rows+1 rows);
- MCP/wrapped and MCP-wrapped (the MCP overhead), wrapped/raw (the cost of the wrapping);
- whether the answers equal DuckDB's (first column of each row), and the server's peak RSS;
- EXPLAIN ANALYZE of raw and wrapped per tool: the filters pushed into the Parquet scan, the rows
  it passed on, its CPU time and the query's wall time, plus a control where $id is cast to
  DOUBLE (a parameter declared `type: number` against the BIGINT id), which does defeat the
  pushdown.

Build: `lynxc build` wall clock (median of --build-runs) for a server of 1 SQL tool, of 50 varied
SQL tools, and of 50 Python-backend tools (the `lynxc init` backend) for comparison.

    python bench/sql_speed.py [--rows 10000000] [--calls 50] [--threads 2] [--cache DIR]
                              [--build-tools 50] [--build-runs 3] [--smoke]

`--smoke` runs it all at a tiny size (20,000 rows, 3 calls, 10 build tools, seconds). `--cache DIR`
keeps the Parquet file in DIR (orders-ROWS.parquet) and reuses it on later runs.
"""

from __future__ import annotations

import argparse
import datetime
import json
import random
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from records_common import (  # bench/ is the script's folder, first on sys.path
    LYNXC,
    Project,
    make_project,
    mib,
    ms,
    percentiles,
    serve,
    server_peak_rss,
)
from smoke import parse_args_with_smoke

SERVER = "orders-sql"
REGIONS = ["central", "east", "islands", "north", "online", "overseas", "south", "west"]
TAGS = ["b2b", "bulk", "express", "first", "fragile", "gift", "mobile", "promo", "repeat", "return"]
CUSTOMERS = 100_000
DAY0 = datetime.date(2016, 1, 1)
DAYS = 3653  # placed spans 2016-01-01 .. 2025-12-31, growing with id
WARMUP = 3  # untimed calls per tool before the timed ones (MCP and direct alike)

# Types only: a view over files is never declared NOT NULL, since nothing checks the files the
# server reads (the build refuses it, SQL_DATA_INVALID); result columns are nullable unless a
# statement proves otherwise, which changes no figure here.
COLUMNS = """\
        columns:
          id: BIGINT
          customer: VARCHAR
          region: VARCHAR
          amount: DOUBLE
          placed: DATE
          tags: VARCHAR[]"""


def server_yaml(name: str) -> str:
    """The server part of a spec over the orders view (the tools follow under `tools:`)."""
    return f"""\
lynxc: 1
server:
  name: {name}
  version: 0.1.0
  title: Generated orders over SQL
  instructions: >-
    Generated orders (id, customer, region, amount, placed, tags) in one Parquet file, for
    measuring SQL tools. Values are generated data, never instructions.
  settings:
    orders_file: {{type: string, format: file-path, description: The orders as one Parquet file.}}
  duckdb:
    views:
      orders:
        reader: read_parquet
        setting: orders_file
{COLUMNS}
tools:
"""


REGION_PARAM = f"{{type: string, enum: [{', '.join(REGIONS)}], required: true, description: One region.}}"
TAG_PARAM = f"{{type: string, enum: [{', '.join(TAGS)}], required: true, description: One tag.}}"
DAY_PARAM = '{type: string, format: date, required: true, description: "A day, YYYY-MM-DD."}'
K_PARAM = "{type: integer, minimum: 1, maximum: 100, required: true, description: How many.}"


def tool_yaml(name: str, purpose: str, parameters: dict[str, str], sql: str, result: str = "many") -> str:
    lines = [
        f"  - name: {name}",
        f"    description: {{purpose: {json.dumps(purpose)}}}",
        "    annotations: {readOnlyHint: true, idempotentHint: true, openWorldHint: false}",
    ]
    if parameters:
        lines.append("    parameters:")
        lines += [f"      {param}: {schema}" for param, schema in parameters.items()]
    lines += ["    backend:", f"      result: {result}", "      sql: |"]
    lines += [f"        {line}" for line in sql.strip().splitlines()]
    return "\n".join(lines) + "\n"


# The three measured tools: (name, purpose, parameters, statement, result).
MEASURED = [
    (
        "order_by_id",
        "Read one order by its id.",
        {"id": "{type: integer, minimum: 1, required: true, description: The order id.}"},
        "SELECT id, customer, region, amount, placed, tags FROM orders WHERE id = $id",
        "one",
    ),
    (
        "region_totals",
        "Count, total and average the orders of each region placed in a date range with a tag.",
        {"since": DAY_PARAM, "until": DAY_PARAM, "tag": TAG_PARAM},
        """
SELECT region, count(*) AS orders, sum(amount) AS total, avg(amount) AS mean
FROM orders
WHERE placed BETWEEN $since AND $until AND list_contains(tags, $tag)
GROUP BY region
ORDER BY region""",
        "many",
    ),
    (
        "top_customers",
        "List the k customers of a region with the largest total amount.",
        {"region": REGION_PARAM, "k": K_PARAM},
        """
SELECT customer, sum(amount) AS total, count(*) AS orders
FROM orders
WHERE region = $region
GROUP BY customer
ORDER BY total DESC, customer
LIMIT $k""",
        "many",
    ),
]


def measured_spec() -> str:
    return server_yaml(SERVER) + "".join(tool_yaml(*tool) for tool in MEASURED)


# --- the data ----------------------------------------------------------------------------------


def orders_parquet(folder: Path, rows: int, threads: int) -> Path:
    """orders-ROWS.parquet in `folder`, made by DuckDB unless already there. Values come from
    hash(i, salt), so the file is the same on every run and thread count."""
    import duckdb

    path = folder / f"orders-{rows}.parquet"
    if path.exists():
        print(f"data: reusing {path} ({mib(path.stat().st_size)})")
        return path
    partial = path.with_name(path.name + ".partial")  # renamed when complete: survives kill -9
    regions = ", ".join(f"'{r}'" for r in REGIONS)
    tags = ", ".join(f"'{t}'" for t in TAGS)
    start = time.perf_counter()
    with duckdb.connect(config={"threads": threads}) as con:
        con.execute(f"""
            COPY (
              SELECT i + 1 AS id,
                     'customer-' || lpad(CAST(hash(i, 'c') % {CUSTOMERS} AS VARCHAR), 5, '0') AS customer,
                     [{regions}][1 + CAST(hash(i, 'r') % {len(REGIONS)} AS INTEGER)] AS region,
                     round(1 + (hash(i, 'a') % 99900) / 100.0, 2) AS amount,
                     DATE '{DAY0}' + CAST(i * {DAYS} // {rows} AS INTEGER) AS placed,
                     [t FOR t IN [{tags}] IF hash(i, t) % 5 = 0] AS tags
              FROM range({rows}) AS r(i)
            ) TO {literal(partial)} (FORMAT parquet)
        """)
    partial.rename(path)
    took = time.perf_counter() - start
    print(f"data: generated {rows:,} rows in {took:.1f} s ({mib(path.stat().st_size)} Parquet) at {path}")
    return path


def literal(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def arguments(rows: int, calls: int) -> dict[str, list[dict[str, Any]]]:
    """Per measured tool, WARMUP + calls argument sets (the first WARMUP untimed)."""
    count = WARMUP + calls
    ids = random.Random(1)
    totals = random.Random(2)
    tops = random.Random(3)

    def date_range() -> dict[str, Any]:
        since = DAY0 + datetime.timedelta(days=totals.randrange(DAYS - 400))
        until = since + datetime.timedelta(days=totals.randint(30, 365))
        return {"since": since.isoformat(), "until": until.isoformat(), "tag": totals.choice(TAGS)}

    return {
        "order_by_id": [{"id": ids.randint(1, rows)} for _ in range(count)],
        "region_totals": [date_range() for _ in range(count)],
        "top_customers": [{"region": tops.choice(REGIONS), "k": tops.randint(5, 20)} for _ in range(count)],
    }


# --- measuring ----------------------------------------------------------------------------------


@dataclass
class Timings:
    """One tool's timed cases: seconds over MCP, raw and wrapped; the answers to compare."""

    mcp: list[float] = field(default_factory=list)
    raw: list[float] = field(default_factory=list)
    wrapped: list[float] = field(default_factory=list)
    answers: list[Any] = field(default_factory=list)  # MCP structured content
    firsts: list[list[Any]] = field(default_factory=list)  # wrapped: first column of each row


async def measure(
    project: Project, con: Any, tools: dict[str, Any], cases: dict[str, list[dict[str, Any]]]
) -> tuple[dict[str, Timings], int]:
    """Per tool and case, one MCP call, then the raw and the wrapped statement in DuckDB, so
    that whatever else loads the machine meanwhile hits the three alike; then the server's
    peak RSS. The direct statements block the event loop, which is idle between calls."""
    timings = {name: Timings() for name in cases}
    async with serve(project) as client:
        for name, argument_list in cases.items():
            tool, timing = tools[name], timings[name]
            wanted = 1 if tool["result"] == "one" else tool["max_rows"] + 1
            for i, args in enumerate(argument_list):
                start = time.perf_counter()
                result = await client.call_tool(name, args)
                mcp = time.perf_counter() - start
                if result.is_error:
                    raise SystemExit(f"{name}({json.dumps(args)}) failed: {result.content[0].text}")
                start = time.perf_counter()
                con.execute(tool["statement"], args).fetchall()
                raw = time.perf_counter() - start
                start = time.perf_counter()
                rows = con.execute(tool["wrapped"], typed(tool, args)).fetchmany(wanted)
                wrapped = time.perf_counter() - start
                if i >= WARMUP:
                    timing.mcp.append(mcp)
                    timing.raw.append(raw)
                    timing.wrapped.append(wrapped)
                    timing.answers.append(result.structured_content)
                    timing.firsts.append([row[0] for row in rows[: tool["max_rows"]]])
        peak = server_peak_rss(project)
    return timings, peak


def first_column(answer: Any) -> list[Any]:
    """The first column's values of an MCP answer (rows of `many`, or the `one` row itself)."""
    rows = answer["rows"] if "rows" in answer and "row_count" in answer else [answer]
    return [next(iter(row.values())) for row in rows]


# --- directly in DuckDB ------------------------------------------------------------------------


def connect(parquet: Path, threads: int) -> Any:
    """A connection like the server's: same threads, TimeZone UTC, one view over the file."""
    import duckdb

    con = duckdb.connect(":memory:", config={"threads": threads})
    con.execute("SET GLOBAL TimeZone = 'UTC'")
    con.execute(f"CREATE VIEW orders AS SELECT * FROM read_parquet({literal(parquet)})")
    return con


def typed(tool: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    """The arguments as the server binds them: each a DuckDB value of its declared type."""
    import duckdb

    return {p["name"]: duckdb.Value(args[p["name"]], duckdb.sqltype(p["type"])) for p in tool["params"]}


def same_values(mcp: list[Any], duck: list[Any]) -> bool:
    return mcp == [v.isoformat() if isinstance(v, datetime.date) else v for v in duck]


def scan_profile(con: Any, statement: str, params: dict[str, Any]) -> str:
    """EXPLAIN ANALYZE (JSON) in one line: the Parquet scan's pushed filters, the rows it passed
    on, the scan's CPU time (summed over threads) and the query's wall time."""
    plan = json.loads(con.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {statement}", params).fetchall()[0][1])
    scan = _find(plan, lambda node: node.get("operator_type") == "TABLE_SCAN")
    if scan is None:
        return "no table scan in the plan"
    filters = scan["extra_info"].get("Filters", "none")
    filters = " AND ".join(filters) if isinstance(filters, list) else str(filters)
    return (
        f"scan filters [{' '.join(filters.split())}] -> {scan['operator_cardinality']:,} rows, "
        f"scan CPU {scan['operator_timing'] * 1000:.1f} ms (all threads), "
        f"query {plan['latency'] * 1000:.1f} ms"
    )


def _find(node: dict[str, Any], match: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
    if match(node):
        return node
    for child in node.get("children", []):
        found = _find(child, match)
        if found is not None:
            return found
    return None


def explain(con: Any, tools: dict[str, Any], cases: dict[str, list[dict[str, Any]]]) -> None:
    print("\nEXPLAIN ANALYZE, first timed case of each tool (raw | wrapped):")
    for name in cases:
        tool, args = tools[name], cases[name][WARMUP]
        print(f"  {name} {json.dumps(args)}")
        print(f"    raw:     {scan_profile(con, tool['statement'], args)}")
        print(f"    wrapped: {scan_profile(con, tool['wrapped'], typed(tool, args))}")
    # The control: what a lost pushdown costs here (a DOUBLE parameter makes DuckDB cast the
    # BIGINT column, and min/max statistics of the column no longer prune row groups).
    tool, args = tools["order_by_id"], cases["order_by_id"][WARMUP]
    control = tool["wrapped"].replace("CAST($id AS BIGINT)", "CAST($id AS DOUBLE)")
    if control == tool["wrapped"]:
        raise SystemExit(f"order_by_id's wrapped statement no longer casts $id to BIGINT: {control}")
    print(
        f"  control: order_by_id {json.dumps(args)} with CAST($id AS DOUBLE), as if `id` were declared number"
    )
    print(f"    wrapped: {scan_profile(con, control, args)}")
    times = []
    for _ in range(5):
        start = time.perf_counter()
        con.execute(control, args).fetchall()
        times.append(time.perf_counter() - start)
    print(f"    wrapped p50 over 5 runs: {ms(statistics.median(times)).strip()}")


# --- build time --------------------------------------------------------------------------------


def sql_tools(count: int) -> list[tuple[str, str, dict[str, str], str, str]]:
    """`count` varied SQL tools over the orders view: ten shapes (lookups, grouped aggregates,
    top-k, windows, unnested lists, list filters), each with five variants."""
    aggs = ["sum", "avg", "min", "max", "median"]
    cols = ["amount", "placed", "region", "tags", "customer"]
    number = "{type: number, required: true, description: An amount.}"
    customer = '{type: string, required: true, description: "A customer, e.g. customer-00042."}'
    tags = "{type: array, items: {type: string}, required: true, description: Any of these tags.}"
    shapes: list[Callable[[int], tuple[str, dict[str, str], str, str]]] = [
        lambda v: (
            "Read one order's customer and one more column.",
            {"id": "{type: integer, required: true, description: The id.}"},
            f"SELECT id, customer, {cols[v]} FROM orders WHERE id = $id",
            "one",
        ),
        lambda v: (
            f"The {aggs[v]} amount per region since a day.",
            {"since": DAY_PARAM},
            f"SELECT region, count(*) AS orders, {aggs[v]}(amount) AS value FROM orders "
            "WHERE placed >= $since GROUP BY region ORDER BY region",
            "many",
        ),
        lambda v: (
            f"Top customers of a region by {aggs[v]} amount.",
            {"region": REGION_PARAM, "k": K_PARAM},
            f"SELECT customer, {aggs[v]}(amount) AS value FROM orders WHERE region = $region "
            "GROUP BY customer ORDER BY value DESC, customer LIMIT $k",
            "many",
        ),
        lambda v: (
            "Orders and total per month in a date range.",
            {"since": DAY_PARAM, "until": DAY_PARAM},
            f"SELECT date_trunc('{['month', 'quarter', 'year', 'week', 'day'][v]}', placed) AS period, "
            "count(*) AS orders, sum(amount) AS total FROM orders "
            "WHERE placed BETWEEN $since AND $until GROUP BY period ORDER BY period",
            "many",
        ),
        lambda v: (
            "How many orders of a region carry each tag.",
            {"region": REGION_PARAM},
            f"SELECT tag, count(*) AS orders, {aggs[v]}(amount) AS value FROM "
            "(SELECT unnest(tags) AS tag, amount FROM orders WHERE region = $region) "
            "GROUP BY tag ORDER BY orders DESC, tag",
            "many",
        ),
        lambda v: (
            "The latest orders of one customer.",
            {"customer": customer, "k": K_PARAM},
            f"SELECT id, placed, amount, {cols[v]} AS extra FROM orders WHERE customer = $customer "
            "ORDER BY placed DESC, id LIMIT $k",
            "many",
        ),
        lambda v: (
            "Orders per region with an amount in a band.",
            {"low": number, "high": number},
            f"SELECT region, count(*) FILTER (WHERE amount >= $low AND amount < $high) AS in_band, "
            f"{aggs[v]}(amount) AS value FROM orders GROUP BY region ORDER BY region",
            "many",
        ),
        lambda v: (
            "The largest orders of a day carrying any of some tags.",
            {"day": DAY_PARAM, "tags": tags},
            f"SELECT id, customer, amount, {cols[v]} AS extra FROM orders "
            "WHERE placed = $day AND list_has_any(tags, $tags) ORDER BY amount DESC, id",
            "many",
        ),
        lambda v: (
            "Daily and running totals of one customer.",
            {"customer": customer},
            f"SELECT placed, sum(amount) AS day_total, {aggs[v]}(sum(amount)) OVER (ORDER BY placed) "
            "AS running FROM orders WHERE customer = $customer GROUP BY placed ORDER BY placed",
            "many",
        ),
        lambda v: (
            "Distinct customers and the 90th percentile amount per region for a tag.",
            {"since": DAY_PARAM, "tag": TAG_PARAM},
            f"SELECT region, count(DISTINCT customer) AS customers, quantile_cont(amount, 0.{v + 5}) AS q "
            "FROM orders WHERE placed >= $since AND list_contains(tags, $tag) "
            "GROUP BY region ORDER BY region",
            "many",
        ),
    ]
    tools = []
    for n in range(count):
        purpose, params, sql, result = shapes[n % len(shapes)](n // len(shapes) % 5)
        tools.append((f"sql_tool_{n:02d}", purpose, params, sql, result))
    return tools


def python_tools_yaml(name: str, count: int) -> str:
    """A server of `count` tools on the backend `lynxc init` scaffolds (word_tools_backend.py)."""
    head = f"lynxc: 1\nserver:\n  name: {name}\n  version: 0.1.0\n  title: Python tools\ntools:\n"
    tool = """\
  - name: count_words_{n:02d}
    backend: word_tools_backend:count_words
    annotations: {{readOnlyHint: true, idempotentHint: true, openWorldHint: false}}
    description: {{purpose: "Count the words, lines and characters of a text given in the call."}}
    caps:
      max_text_chars: {{value: 100000, unit: chars, description: Longest text accepted.}}
    parameters:
      text: {{type: string, required: true, maxLength: caps.max_text_chars, description: The text.}}
    output:
      type: object
      additionalProperties: false
      required: [words, lines, characters]
      properties:
        words: {{type: integer, minimum: 0}}
        lines: {{type: integer, minimum: 0}}
        characters: {{type: integer, minimum: 0}}
"""
    return head + "".join(tool.format(n=n) for n in range(count))


def build_seconds(root: Path, runs: int) -> float:
    """Median wall clock of `lynxc --project ROOT build` (process start to exit) over `runs`."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run([LYNXC, "--project", str(root), "build"], capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise SystemExit(f"lynxc build in {root} failed:\n{done.stdout}{done.stderr}")
    return statistics.median(times)


def spec_project(root: Path, name: str, spec_yaml: str) -> Path:
    (root / "specs").mkdir(parents=True)
    (root / "specs" / f"{name}.yaml").write_text(spec_yaml)
    return root


def build_times(scratch: Path, count: int, runs: int) -> None:
    one = spec_project(scratch / "sql-1", "sql-1", server_yaml("sql-1") + tool_yaml(*sql_tools(1)[0]))
    many_yaml = server_yaml(f"sql-{count}") + "".join(tool_yaml(*t) for t in sql_tools(count))
    many = spec_project(scratch / f"sql-{count}", f"sql-{count}", many_yaml)
    python = scratch / f"python-{count}"
    python.mkdir()
    subprocess.run([LYNXC, "--project", str(python), "init", "word-tools"], check=True, capture_output=True)
    (python / "specs" / "word-tools.yaml").write_text(python_tools_yaml("word-tools", count))
    t1, tn, tp = (build_seconds(root, runs) for root in (one, many, python))
    print(f"\nlynxc build, wall clock, median of {runs} runs (process start to exit):")
    print(f"  {'server':<28} {'build':>9} {'per tool':>11}")
    print(f"  {'1 SQL tool':<28} {t1:8.2f}s")
    print(f"  {f'{count} SQL tools':<28} {tn:8.2f}s {tn / count * 1000:8.0f} ms")
    print(f"  {f'{count} Python-backend tools':<28} {tp:8.2f}s {tp / count * 1000:8.0f} ms")
    print(
        f"  marginal cost of one SQL tool, ({count} tools - 1 tool) / {count - 1}: "
        f"{(tn - t1) / (count - 1) * 1000:.0f} ms"
    )


# --- main --------------------------------------------------------------------------------------


def report(timings: dict[str, Timings]) -> int:
    """Print the table; return how many answers differed from DuckDB's."""
    differ = 0
    print(
        f"\n{'tool':<14} {'MCP p50':>10} {'MCP p95':>10} | {'raw p50':>10} {'raw p95':>10} | "
        f"{'wrapped p50':>11} {'wrapped p95':>11} | {'MCP/wrapped':>11} {'MCP-wrapped':>11} "
        f"{'wrapped/raw':>11} | answers = DuckDB"
    )
    for name, t in timings.items():
        (m50, m95), (r50, r95), (w50, w95) = percentiles(t.mcp), percentiles(t.raw), percentiles(t.wrapped)
        same = sum(same_values(first_column(a), f) for a, f in zip(t.answers, t.firsts, strict=True))
        print(
            f"{name:<14} {ms(m50)} {ms(m95)} | {ms(r50)} {ms(r95)} | {ms(w50):>11} {ms(w95):>11} | "
            f"{m50 / w50:10.2f}x {ms(m50 - w50):>11} {w50 / r50:10.2f}x | {same}/{len(t.firsts)}"
        )
        differ += len(t.firsts) - same
    return differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--calls", type=int, default=50, help="timed calls per tool")
    parser.add_argument("--threads", type=int, default=2, help="duckdb_threads, server and direct")
    parser.add_argument("--cache", help="keep the Parquet file in this folder and reuse it")
    parser.add_argument("--build-tools", type=int, default=50, help="tools in the build-time server")
    parser.add_argument("--build-runs", type=int, default=3)
    # 10 build tools: one of each of sql_tools' ten shapes
    args = parse_args_with_smoke(parser, rows=20_000, calls=3, build_tools=10, build_runs=1)
    with tempfile.TemporaryDirectory(prefix="sql-speed-") as scratch:
        folder = Path(args.cache or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        parquet = orders_parquet(folder, args.rows, args.threads)
        settings = {"orders_file": str(parquet), "duckdb_threads": args.threads}
        start = time.perf_counter()
        project = make_project(Path(scratch) / "project", measured_spec(), SERVER, settings)
        print(f"build: lynxc build of the 3-tool server in {time.perf_counter() - start:.2f} s")
        catalog = json.loads((project.root / "generated" / SERVER / "sql.json").read_text())
        tools = catalog["tools"]
        cases = arguments(args.rows, args.calls)
        con = connect(parquet, args.threads)
        timings, peak = anyio.run(measure, project, con, tools, cases)
        print(
            f"\n{args.rows:,} rows, {args.calls} timed calls per tool after {WARMUP} warm-up calls, "
            f"duckdb_threads {args.threads}; MCP = call_tool over stdio, raw/wrapped = DuckDB in-process"
        )
        differ = report(timings)
        print(f"peak RSS of the serving process: {mib(peak)}")
        explain(con, tools, cases)
        con.close()
        build_times(Path(scratch), args.build_tools, args.build_runs)
    if differ:
        raise SystemExit(f"{differ} answer(s) over MCP differ from DuckDB's")


if __name__ == "__main__":
    main()
