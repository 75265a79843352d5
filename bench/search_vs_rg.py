"""`search_project_text` over MCP against `rg -F -i` (ripgrep) on the same capped tree.

The tree is real code: Python sources of installed packages, copied until just under the
server's caps (500 candidate files, 2000 entries, 16 MiB), so both tools search every file.
lynxc runs as a served process and is called through a real `mcp.Client` over stdio (the
session is opened once, as an agent would); ripgrep runs as one process per query, as an
agent's shell would. Runs alternate; medians and their ratio are printed.

    python bench/search_vs_rg.py [--runs 9] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from smoke import parse_args_with_smoke  # bench/ is the script's folder, first on sys.path

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / "bench" / ".data" / "capped-tree"
LYNXC = str(Path(sys.executable).with_name("lynxc"))
RG = shutil.which("rg") or str(Path(sys.executable).with_name("rg"))
QUERIES = {
    "rare literal": "model_validate_json",
    "common literal": "return",
    "absent literal": "zq_absent_xq",
}
MAX_FILES, MAX_ENTRIES, MAX_BYTES = 480, 1900, 15 * 1024 * 1024


def build_tree() -> tuple[int, int]:
    """Copy .py files of installed packages in sorted order until just under the caps."""
    if TREE.exists():
        shutil.rmtree(TREE)
    site = Path(anyio.__file__).resolve().parents[1]
    files = entries = size = 0
    folders: set[Path] = set()
    for package in ("pydantic", "mcp", "anyio", "starlette", "httpx", "jsonschema", "uvicorn"):
        for source in sorted((site / package).rglob("*.py")):
            relative = source.relative_to(site)
            new_folders = {p for p in relative.parents if p != Path(".")} - folders
            length = source.stat().st_size
            over_entries = entries + 1 + len(new_folders) > MAX_ENTRIES
            if files + 1 > MAX_FILES or over_entries or size + length > MAX_BYTES:
                return files, size
            target = TREE / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            folders |= new_folders
            files, entries, size = files + 1, entries + 1 + len(new_folders), size + length
    return files, size


def rg_lines(query: str) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run([RG, "-F", "-i", "-n", "--no-heading", query, str(TREE)], capture_output=True)
    elapsed = time.perf_counter() - start
    return elapsed, len(done.stdout.splitlines())


async def run(runs: int) -> None:
    files, size = build_tree()
    print(f"tree: {files} .py files, {size / 1024 / 1024:.1f} MiB (under the caps)  rg: {RG}")
    settings = json.dumps({"bench": str(TREE)})
    serve = ["--project", str(ROOT), "serve", "dot-harness", "--set", f"workspaces={settings}"]
    params = StdioServerParameters(command=LYNXC, args=serve)
    async with Client(params) as client:

        async def mcp_lines(query: str) -> tuple[float, dict]:
            start = time.perf_counter()
            result = await client.call_tool("search_project_text", {"workspace": "bench", "query": query})
            return time.perf_counter() - start, result.structured_content

        await mcp_lines("warm-up")
        rg_lines("warm-up")
        print(f"median of {runs} alternated runs per query")
        print(f"  {'query':<16} {'lynxc (MCP)':>12} {'rg -F -i':>10} {'ratio':>7}  matched lines lynxc/rg")
        for label, query in QUERIES.items():
            ours, theirs = [], []
            for _ in range(runs):
                elapsed, out = await mcp_lines(query)
                ours.append(elapsed)
                rg_elapsed, rg_count = rg_lines(query)
                theirs.append(rg_elapsed)
            assert out["scanComplete"], out["incompleteReasons"]
            a, b = statistics.median(ours), statistics.median(theirs)
            counts = f"{out['matchedLines']}/{rg_count}"
            print(f"  {label:<16} {a * 1000:9.1f} ms {b * 1000:7.1f} ms {a / b:6.2f}x  {counts}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    anyio.run(run, parse_args_with_smoke(parser, runs=1).runs)


if __name__ == "__main__":
    main()
