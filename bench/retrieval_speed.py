"""lynx-mcp speed: indexing a real code base (chunks per second), then search latency per mode
over MCP (p50/p95), and cold start (process start -> tools/list answered, LanceDB not imported).

Corpus: the Python sources of installed packages (site-packages), enough for >= 20,000 chunks.

    python bench/retrieval_speed.py [--embedder static|minilm] [--queries 40]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from lynxc.runtime.backends.lynx.embedders import get_embedder
from lynxc.runtime.backends.lynx.indexer import index_source
from lynxc.runtime.backends.lynx.sources import Source
from lynxc.runtime.backends.lynx.store import Store

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


async def search_latencies(settings: dict, count: int) -> dict[str, tuple[float, float]]:
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
                start = time.perf_counter()
                result = await client.call_tool("search", {"query": QUERIES[i % len(QUERIES)]})
                times.append(time.perf_counter() - start)
                assert not result.is_error, result.content[0].text
        times.sort()
        out[mode] = (statistics.median(times), times[int(0.95 * (len(times) - 1))])
    return out


def cold_start() -> float:
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "b", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
    ]
    start = time.perf_counter()
    process = subprocess.Popen(
        [LYNXC, "--project", str(ROOT), "serve", "lynx-mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin and process.stdout
    process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    process.stdin.flush()
    for line in process.stdout:
        if json.loads(line).get("id") == 2:
            break
    elapsed = time.perf_counter() - start
    process.terminate()
    process.wait()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="static", choices=("static", "minilm"))
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument(
        "--packages",
        default="pydantic,mcp,starlette,httpx,jsonschema,uvicorn,anyio,datamodel_code_generator,"
        "ruamel,jinja2,lancedb,pyarrow,numpy,setuptools,pip",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
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
        settings = {"sources": sources, "index_dir": f"{folder}/index", "embedder": args.embedder}
        latencies = anyio.run(search_latencies, settings, args.queries)
        for mode, (p50, p95) in latencies.items():
            print(
                f"  search over MCP, {mode:<6} ({len(sources)} sources fused): p50 {p50 * 1000:6.1f} ms  "
                f"p95 {p95 * 1000:6.1f} ms"
            )
    runs = sorted(cold_start() for _ in range(7))
    median = statistics.median(runs) * 1000
    print(f"cold start (process start -> tools/list, LanceDB not imported): median {median:.0f} ms")


if __name__ == "__main__":
    main()
