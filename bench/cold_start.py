"""Cold start: process start -> `tools/list` answered over stdio, lynxc against a bare mcp server.

Each run starts a fresh process, sends initialize, notifications/initialized and tools/list as
raw JSON-RPC lines, and stops the clock when the tools/list answer arrives. The servers are run
alternately so machine noise hits both alike; medians and their ratio are printed. lynx-mcp is
served over a real index (a few files, indexed by `lynxc index` first): its start-up check opens
that index, which must not stand in front of `tools/list`.

    python bench/cold_start.py [--runs 15] [--warm-ups 1] [--smoke]

`--smoke` is one run of each, without the warm-up run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from smoke import parse_args_with_smoke  # bench/ is the script's folder, first on sys.path

ROOT = Path(__file__).resolve().parents[1]
LYNXC = str(Path(sys.executable).with_name("lynxc"))
MESSAGES = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
]
SERVERS = {
    "bare mcp low-level server (1 tool)": [sys.executable, str(ROOT / "bench/servers/bare_server.py")],
    "lynxc serve dot-harness (3 tools)": [LYNXC, "--project", str(ROOT), "serve", "dot-harness"],
    "python generated/dot-harness/server.py": [sys.executable, str(ROOT / "generated/dot-harness/server.py")],
}


def lynx_over_an_index(folder: Path) -> list[str]:
    """The command serving lynx-mcp over an index of a few files, built here by `lynxc index`."""
    (folder / "code").mkdir()
    for i in range(20):
        (folder / "code" / f"m{i}.py").write_text(f"def handler_{i}(request):\n    return {i}\n")
    sources = [{"name": "code", "root": str(folder / "code")}]
    settings = ["--set", f"sources={json.dumps(sources)}", "--set", f"index_dir={folder / 'index'}"]
    settings += ["--set", "embedder=static"]
    subprocess.run(
        [LYNXC, "--project", str(ROOT), "index", "lynx-mcp", *settings], check=True, capture_output=True
    )
    return [LYNXC, "--project", str(ROOT), "serve", "lynx-mcp", *settings]


def time_to_tools_list(command: list[str]) -> float:
    start = time.perf_counter()
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.DEVNULL}
    process = subprocess.Popen(command, **pipes)
    assert process.stdin and process.stdout
    process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in MESSAGES))
    process.stdin.flush()
    for line in process.stdout:
        answer = json.loads(line)
        if answer.get("id") == 2:
            elapsed = time.perf_counter() - start
            assert answer["result"]["tools"], answer
            break
    else:
        raise RuntimeError(f"{command} closed without answering tools/list")
    process.stdin.close()
    process.terminate()
    process.wait()
    return elapsed


def alternated_medians(
    commands: dict[str, list[str]], runs: int, measure: Callable[[list[str]], float], warm_ups: int = 1
) -> dict[str, float]:
    """Median seconds per command over `runs` rounds, each round running every command once in
    turn, so machine noise hits them alike; `warm_ups` untimed runs each (one by default) fill the
    OS file cache first."""
    for _ in range(warm_ups):
        for command in commands.values():
            measure(command)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            times[name].append(measure(command))
    return {name: statistics.median(samples) for name, samples in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--warm-ups", type=int, default=1, help="untimed runs of each server first")
    args = parse_args_with_smoke(parser, runs=1, warm_ups=0)
    runs = args.runs
    with tempfile.TemporaryDirectory() as folder:
        servers = {
            **SERVERS,
            "lynxc serve lynx-mcp, with an index (3 tools)": lynx_over_an_index(Path(folder)),
        }
        medians = alternated_medians(servers, runs, time_to_tools_list, args.warm_ups)
    baseline = medians[next(iter(SERVERS))]
    print(f"cold start, process start -> tools/list answered, median of {runs} alternated runs")
    for name, median in medians.items():
        print(f"  {name:<46} {median * 1000:7.1f} ms   ratio {median / baseline:4.2f}x")


if __name__ == "__main__":
    main()
