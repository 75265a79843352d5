"""`grep` over MCP against raw ripgrep, side by side on a real source tree.

Corpus: Debian's linux-source-6.1 (`apt-get download linux-source-6.1`, done here if missing),
the subset fs/ net/ include/ kernel/ mm/ unpacked into bench/.data/linux. Queries: (a) a rare
literal, (b) a regex with alternation, (c) a common word capped at max_results 100, (d) count
mode. lynxc runs as `lynxc serve agent-tool` behind a real `mcp.Client` over stdio (one session);
ripgrep runs as one process per query, as an agent's shell would. Runs alternate; medians and
ratios are printed.

    python bench/grep.py [--runs 7] [--smoke]

`--smoke` runs every query once over this checkout's runtime/ instead (nothing downloaded).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from smoke import parse_args_with_smoke  # bench/ is the script's folder, first on sys.path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / ".data"
CORPUS = DATA / "linux"
SUBSET = ("fs", "net", "include", "kernel", "mm")
SMOKE_CORPUS = ROOT / "runtime"  # real source, in every checkout
LYNXC = str(Path(sys.executable).with_name("lynxc"))
RG = str(Path(sys.executable).with_name("rg"))
QUERIES = {
    "(a) rare literal": ({"pattern": "ext4_fc_replay_inode"}, ["--fixed-strings", "ext4_fc_replay_inode"]),
    "(b) alternation regex": (
        {"pattern": r"\b(kvfree_rcu_mightsleep|xfs_attr3_leaf_compact)\b"},
        [r"\b(kvfree_rcu_mightsleep|xfs_attr3_leaf_compact)\b"],
    ),
    "(c) common word, 100 results": ({"pattern": "return", "max_results": 100}, ["return"]),
    "(d) count mode, first page": (
        {"pattern": "spin_lock", "output_mode": "count"},
        ["--count", "spin_lock"],
    ),
    # Every file's count in one page: the MCP client then validates ~1,300 structured items
    # against the output schema, a cost of delivering structured results, not of the search.
    "(d') count mode, one page of all": (
        {"pattern": "spin_lock", "output_mode": "count", "max_results": 100000},
        ["--count", "spin_lock"],
    ),
}


def ensure_corpus() -> Path:
    if CORPUS.is_dir():
        return CORPUS
    DATA.mkdir(parents=True, exist_ok=True)
    debs = sorted(DATA.glob("linux-source-6.1_*.deb"))
    if not debs:
        subprocess.run(["apt-get", "download", "linux-source-6.1"], cwd=DATA, check=True)
        debs = sorted(DATA.glob("linux-source-6.1_*.deb"))
    tarball = DATA / "linux-source-6.1.tar.xz"
    if not tarball.exists():
        fsys = subprocess.run(
            ["dpkg-deb", "--fsys-tarfile", str(debs[-1])], check=True, capture_output=True
        ).stdout
        with tarfile.open(fileobj=__import__("io").BytesIO(fsys)) as outer:
            member = next(m for m in outer.getmembers() if m.name.endswith("linux-source-6.1.tar.xz"))
            tarball.write_bytes(outer.extractfile(member).read())  # type: ignore[union-attr]
    with tarfile.open(tarball) as tar:
        wanted = [m for m in tar if m.name.split("/")[1:2] and m.name.split("/")[1] in SUBSET]
        tar.extractall(DATA, members=wanted, filter="data")
    (DATA / "linux-source-6.1").rename(CORPUS)
    return CORPUS


def size_mb(path: Path) -> float:
    done = subprocess.run(["du", "-sm", str(path)], capture_output=True, text=True, check=True)
    return float(done.stdout.split()[0])


def raw_rg(corpus: Path, args: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run([RG, "--no-config", "-n", *args, str(corpus)], capture_output=True)
    return time.perf_counter() - start, len(done.stdout.splitlines())


async def run(runs: int, smoke: bool) -> None:
    corpus = SMOKE_CORPUS if smoke else ensure_corpus()
    folders = "" if smoke else f" ({'/ '.join(SUBSET)}/)"
    print(f"corpus: {corpus.relative_to(ROOT)}{folders}, {size_mb(corpus):.0f} MB; rg {RG}")
    params = StdioServerParameters(
        command=LYNXC,
        args=["--project", str(ROOT), "serve", "agent-tool", "--set", f"roots={json.dumps([str(corpus)])}"],
    )
    async with Client(params) as client:

        async def ours(arguments: dict) -> tuple[float, dict]:
            start = time.perf_counter()
            result = await client.call_tool("grep", arguments, read_timeout_seconds=600)
            assert not result.is_error, result.content[0].text
            return time.perf_counter() - start, result.structured_content

        await ours({"pattern": "warm_up_the_page_cache"})
        raw_rg(corpus, ["warm_up_the_page_cache"])
        print(f"median of {runs} alternated runs")
        print(
            f"  {'query':<32} {'lynxc (MCP)':>12} {'raw rg':>10} {'ratio':>7}  results lynxc / raw rg lines"
        )
        for label, (arguments, rg_args) in QUERIES.items():
            mine, theirs = [], []
            for _ in range(runs):
                elapsed, out = await ours(arguments)
                mine.append(elapsed)
                rg_elapsed, rg_lines = raw_rg(corpus, rg_args)
                theirs.append(rg_elapsed)
            a, b = statistics.median(mine), statistics.median(theirs)
            shown = f"{out['total']}{'+' if out['has_more'] else ''} / {rg_lines}"
            print(f"  {label:<32} {a * 1000:9.1f} ms {b * 1000:7.1f} ms {a / b:6.2f}x  {shown}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parse_args_with_smoke(parser, runs=1)
    anyio.run(run, args.runs, args.smoke)


if __name__ == "__main__":
    main()
