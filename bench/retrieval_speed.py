"""lynx-mcp speed and memory: indexing a real code base with the `lynxc index` command (chunks
per second and the process's peak RSS, then a second run, which must find nothing to do), search
latency per mode over MCP (p50/p95) with the serving process's peak RSS after those searches,
dense search with the ANN index against an exact scan, and cold start (process start ->
tools/list answered, LanceDB not imported).

Corpus: the Python sources of installed packages (a site-packages folder, by default this
environment's), one source per package. Searches run over all of them fused, and over one
source `all` holding every package's rows (copied, not re-embedded), which is large enough for
its ANN index.

    python bench/retrieval_speed.py [--embedder static|minilm] [--site DIR] [--packages a,b,...]
        [--queries 40] [--keep DIR] [--smoke]

`--smoke` is a tiny run: one package (anyio), 3 searches per mode, source `all` given its ANN
index however small it is, one cold start.

Issue 16's memory figures (6,093 files, minilm) come from the Python's own site-packages:
    python bench/retrieval_speed.py --embedder minilm \
        --site /root/.pyenv/versions/3.11.7/lib/python3.11/site-packages \
        --packages cfnlint,moto,networkx,pip,pygments,libcst,IPython,awscli,setuptools
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import anyio
import lancedb
from cold_start import time_to_tools_list  # bench/ is the script's folder, first on sys.path
from mcp import Client, StdioServerParameters
from smoke import parse_args_with_smoke

from lynxc.runtime.backends.lynx import ranking
from lynxc.runtime.backends.lynx.store import ANN_MIN_ROWS, TABLE_PREFIX, Store
from lynxc.runtime.backends.retrieval.embedders import get_embedder

ROOT = Path(__file__).resolve().parents[1]
LYNXC = str(Path(sys.executable).with_name("lynxc"))
SITE = Path(anyio.__file__).resolve().parents[1]
QUERIES = [
    "validate a model field",
    "open a network connection",
    "parse json text",
    "retry with backoff",
    "read a file in chunks",
    "compile a regular expression",
    "format a date as iso string",
    "start an http server",
    "cancel a running task",
    "hash a password",
    "convert a schema to json",
    "walk a directory tree",
    "encode base64",
    "load settings from the environment",
    "sort by key",
]
# What `lynxc index` prints for each source once it is done (compiler/cli.py).
INDEXED = re.compile(r"^(\S+): (\d+) files, (\d+) \(re\)indexed into (\d+) chunks, (\d+) removed")


@dataclass
class IndexRun:
    files: int
    changed: int
    chunks: int
    seconds: float
    peak_mb: float
    cpu_seconds: float


def settings_args(settings: dict) -> list[str]:
    return [
        "--set",
        f"sources={json.dumps(settings['sources'])}",
        "--set",
        f"index_dir={settings['index_dir']}",
        "--set",
        f"embedder={settings['embedder']}",
    ]


def run_index(settings: dict) -> IndexRun:
    """One `lynxc index lynx-mcp` process: its totals, wall time, CPU time and peak RSS (wait4's
    rusage of that very process, so earlier children do not count)."""
    command = [LYNXC, "--project", str(ROOT), "index", "lynx-mcp", *settings_args(settings)]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    output = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"lynxc index failed ({process.returncode}):\n{output[-2000:]}")
    totals = [0, 0, 0]
    for line in re.split(r"[\r\n]", output):
        if match := INDEXED.match(line.strip()):
            for i, group in enumerate((2, 3, 4)):
                totals[i] += int(match.group(group))
    return IndexRun(*totals, seconds, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime)


def child_pid(marker: str) -> int | None:
    """The process this one started whose command line holds `marker` (the MCP server)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                parent = int(handle.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                command = handle.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if parent == os.getpid() and marker in command:
            return int(entry)
    return None


def peak_rss_mb(pid: int | None) -> float:
    """A live process's peak RSS so far (VmHWM), in MB; nan without /proc."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            line = next(line for line in handle if line.startswith("VmHWM:"))
        return int(line.split()[1]) / 1024
    except (OSError, StopIteration):
        return float("nan")


async def search_latencies(
    settings: dict, count: int, source: list[str] | None
) -> dict[str, tuple[float, float, float]]:
    """Per mode: p50 and p95 of a search over MCP, and the server's peak RSS after the searches."""
    out = {}
    for mode in ("sparse", "dense", "hybrid"):
        args = [
            "--project",
            str(ROOT),
            "serve",
            "lynx-mcp",
            *settings_args(settings),
            "--set",
            f"mode={mode}",
        ]
        async with Client(StdioServerParameters(command=LYNXC, args=args)) as client:
            await client.call_tool("search", {"query": "warm up"})
            times = []
            for i in range(count):
                arguments = {"query": QUERIES[i % len(QUERIES)], **({"source": source} if source else {})}
                start = time.perf_counter()
                result = await client.call_tool("search", arguments)
                times.append(time.perf_counter() - start)
                assert not result.is_error, result.content[0].text
            peak = peak_rss_mb(child_pid(" serve lynx-mcp"))
        times.sort()
        out[mode] = (statistics.median(times), times[int(0.95 * (len(times) - 1))], peak)
    return out


def merge_into_one_source(store: Store, names: list[str], ann_min_rows: int) -> int:
    """Source `all`: every package's rows with their vectors, paths prefixed with the package,
    with an ANN index from `ann_min_rows` rows."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if store.table("all") is not None:
        return store.table("all").count_rows()
    parts = []
    for name in names:
        table = store.table(name)
        if table is None:  # a package without a chunk
            continue
        rows = table.to_arrow()
        for column in ("id", "path"):
            rows = rows.set_column(
                rows.schema.get_field_index(column),
                column,
                pc.binary_join_element_wise(name, rows[column], "/"),
            )
        parts.append(rows)
    store.db.create_table(TABLE_PREFIX + "all", pa.concat_tables(parts))
    store.finish("all", ann_min_rows)
    return store.table("all").count_rows()


async def ann_against_flat(store: Store, embedder) -> tuple[float, float, float]:
    """Median time of a dense top-30 query with the index and with an exact scan, and recall."""
    table = await (await lancedb.connect_async(store.directory)).open_table(TABLE_PREFIX + "all")
    vectors = embedder.embed(QUERIES)
    flat_times, ann_times, recalls = [], [], []
    for vector in vectors:
        exact = table.query().nearest_to(vector).distance_type("cosine").bypass_vector_index()
        start = time.perf_counter()
        truth = {row["id"] for row in await exact.select(["id", "_distance"]).limit(30).to_list()}
        flat_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        found = await ranking.dense_ranking(table, vector, None, 30)
        ann_times.append(time.perf_counter() - start)
        recalls.append(len(truth & {row["id"] for row in found}) / 30)
    return statistics.median(flat_times), statistics.median(ann_times), statistics.mean(recalls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="static", choices=("static", "minilm"))
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--keep", help="keep the index in this folder (and reuse it if it exists)")
    parser.add_argument("--site", default=str(SITE), help="the folder of the packages (site-packages)")
    parser.add_argument(
        "--packages",
        default="pydantic,mcp,starlette,httpx,jsonschema,uvicorn,anyio,datamodel_code_generator,"
        "ruamel,jinja2,lancedb,pyarrow,numpy,setuptools,pip",
    )
    parser.add_argument("--cold-starts", type=int, default=7, help="fresh starts of the server")
    args = parse_args_with_smoke(parser, packages="anyio", queries=3, cold_starts=1)
    ann_min_rows = 1 if args.smoke else ANN_MIN_ROWS  # the ANN path measured whatever the size
    site = Path(args.site)
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or scratch
        sources = [
            {"name": p, "root": str(site / p), "kind": "code", "include": ["**/*.py"]}
            for p in args.packages.split(",")
            if (site / p).is_dir()
        ]
        index_dir = f"{folder}/index"
        settings = {"sources": sources, "index_dir": index_dir, "embedder": args.embedder}
        first = run_index(settings)
        print(
            f"lynxc index: {first.files} files of {len(sources)} packages, {first.changed} (re)indexed "
            f"into {first.chunks} chunks with {args.embedder} in {first.seconds:.1f} s "
            f"({first.cpu_seconds:.0f} s CPU): {first.chunks / max(first.seconds, 1e-9):.1f} chunks/s, "
            f"peak RSS {first.peak_mb:.0f} MB"
        )
        again = run_index(settings)
        print(
            f"lynxc index again: {again.changed} (re)indexed, {again.chunks} chunks, "
            f"in {again.seconds:.1f} s, peak RSS {again.peak_mb:.0f} MB"
        )
        store = Store(index_dir)
        embedder = get_embedder(args.embedder)
        total = merge_into_one_source(store, [item["name"] for item in sources], ann_min_rows)
        print(f"source `all`: {total} chunks, ANN index built from {ann_min_rows} rows")
        every = [*sources, {"name": "all", "root": str(site), "kind": "code"}]
        serving = {**settings, "sources": every}
        names = [item["name"] for item in sources]
        for label, source in ((f"{len(sources)} sources fused", names), ("one source of all", ["all"])):
            for mode, (p50, p95, peak) in anyio.run(search_latencies, serving, args.queries, source).items():
                timing = f"p50 {p50 * 1e3:6.1f} ms  p95 {p95 * 1e3:6.1f} ms"
                print(
                    f"  search over MCP, {mode:<6} ({label}): {timing}  "
                    f"server peak RSS {peak:.0f} MB after {args.queries + 1} searches"
                )
        flat, ann, recall = anyio.run(ann_against_flat, store, embedder)
        print(
            f"  dense top 30 in process on `all`: exact scan {flat * 1000:.1f} ms, ANN {ann * 1000:.1f} ms "
            f"({flat / ann:.1f}x), ANN recall of the exact top 30: {recall:.3f}"
        )
    lynx_mcp = [LYNXC, "--project", str(ROOT), "serve", "lynx-mcp"]
    runs = sorted(time_to_tools_list(lynx_mcp) for _ in range(args.cold_starts))
    median = statistics.median(runs) * 1000
    print(f"cold start (process start -> tools/list, LanceDB not imported): median {median:.0f} ms")


if __name__ == "__main__":
    main()
