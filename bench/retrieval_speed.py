"""lynx-mcp speed: indexing a real code base (chunks per second), then search latency per mode
over MCP (p50/p95), dense search with the ANN index against an exact scan, and cold start
(process start -> tools/list answered, LanceDB not imported).

Corpus: the Python sources of installed packages (site-packages), one source per package,
enough for >= 20,000 chunks. Searches run over all of them fused, and over one source `all`
holding every package's rows (copied, not re-embedded), which is large enough for its ANN index.

    python bench/retrieval_speed.py [--embedder static|minilm] [--packages a,b,...] [--queries 40]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
import lancedb
from cold_start import time_to_tools_list  # bench/ is the script's folder, first on sys.path
from mcp import Client, StdioServerParameters

from lynxc.runtime.backends.lynx import retrieval
from lynxc.runtime.backends.lynx.indexer import index_source
from lynxc.runtime.backends.lynx.sources import Source
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


async def search_latencies(
    settings: dict, count: int, source: list[str] | None
) -> dict[str, tuple[float, float]]:
    out = {}
    for mode in ("sparse", "dense", "hybrid"):
        args = [
            "--project",
            str(ROOT),
            "serve",
            "lynx-mcp",
            "--set",
            f"sources={json.dumps(settings['sources'])}",
            "--set",
            f"index_dir={settings['index_dir']}",
            "--set",
            f"embedder={settings['embedder']}",
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
        times.sort()
        out[mode] = (statistics.median(times), times[int(0.95 * (len(times) - 1))])
    return out


def merge_into_one_source(store: Store, names: list[str]) -> int:
    """Source `all`: every package's rows with their vectors, paths prefixed with the package."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if store.table("all") is not None:
        return store.table("all").count_rows()
    parts = []
    for name in names:
        rows = store.table(name).to_arrow()
        for column in ("id", "path"):
            rows = rows.set_column(
                rows.schema.get_field_index(column),
                column,
                pc.binary_join_element_wise(name, rows[column], "/"),
            )
        parts.append(rows)
    store.db.create_table(TABLE_PREFIX + "all", pa.concat_tables(parts))
    store.finish("all", ANN_MIN_ROWS)
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
        found = await retrieval.dense_ranking(table, vector, None, 30)
        ann_times.append(time.perf_counter() - start)
        recalls.append(len(truth & {row["id"] for row in found}) / 30)
    return statistics.median(flat_times), statistics.median(ann_times), statistics.mean(recalls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="static", choices=("static", "minilm"))
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--keep", help="keep the index in this folder (and reuse it if it exists)")
    parser.add_argument(
        "--packages",
        default="pydantic,mcp,starlette,httpx,jsonschema,uvicorn,anyio,datamodel_code_generator,"
        "ruamel,jinja2,lancedb,pyarrow,numpy,setuptools,pip",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or scratch
        sources = [
            {"name": p, "root": str(SITE / p), "kind": "code", "include": ["**/*.py"]}
            for p in args.packages.split(",")
            if (SITE / p).is_dir()
        ]
        store = Store(f"{folder}/index")
        embedder = get_embedder(args.embedder)
        chunks = files = 0
        start = time.perf_counter()
        for item in sources:
            report = index_source(
                Source(item["name"], item["root"], "code", tuple(item["include"])), store, embedder
            )
            chunks += report.chunks
            files += report.files
        took = time.perf_counter() - start
        print(
            f"indexed {files} files of {len(sources)} packages into {chunks} chunks with {args.embedder} "
            f"in {took:.1f} s: {chunks / took:.0f} chunks/s"
        )
        total = merge_into_one_source(store, [item["name"] for item in sources])
        print(f"source `all`: {total} chunks, ANN index built (threshold {ANN_MIN_ROWS})")
        every = [*sources, {"name": "all", "root": str(SITE), "kind": "code"}]
        settings = {"sources": every, "index_dir": f"{folder}/index", "embedder": args.embedder}
        names = [item["name"] for item in sources]
        for label, source in ((f"{len(sources)} sources fused", names), ("one source of all", ["all"])):
            for mode, (p50, p95) in anyio.run(search_latencies, settings, args.queries, source).items():
                timing = f"p50 {p50 * 1e3:6.1f} ms  p95 {p95 * 1e3:6.1f} ms"
                print(f"  search over MCP, {mode:<6} ({label}): {timing}")
        flat, ann, recall = anyio.run(ann_against_flat, store, embedder)
        print(
            f"  dense top 30 in process on `all`: exact scan {flat * 1000:.1f} ms, ANN {ann * 1000:.1f} ms "
            f"({flat / ann:.1f}x), ANN recall of the exact top 30: {recall:.3f}"
        )
    lynx_mcp = [LYNXC, "--project", str(ROOT), "serve", "lynx-mcp"]
    runs = sorted(time_to_tools_list(lynx_mcp) for _ in range(7))
    median = statistics.median(runs) * 1000
    print(f"cold start (process start -> tools/list, LanceDB not imported): median {median:.0f} ms")


if __name__ == "__main__":
    main()
