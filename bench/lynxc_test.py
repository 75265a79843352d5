"""What `lynxc test` costs over the script a user would otherwise write, side by side in one run.

For a bundled server (default countries-sql), each round times:
- script: start `lynxc serve SERVER` and make each spec example's call through `mcp.Client`,
  judging nothing (what users wrote before `lynxc test`);
- lynxc test: the command itself, which also builds the server in memory, serves that build,
  judges every answer and reports;
- fuzz: `lynxc test SERVER --fuzz N -k ::fuzz`, every local read-only tool with N drawn
  argument sets and its near-misses, reported as calls per second.

Prints medians and the ratio of `lynxc test` to the script. Absolute times are noisy on a shared
machine; the ratio, measured in the same run, is the figure.

    python bench/lynxc_test.py [--server countries-sql] [--rounds 3] [--fuzz 25] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import anyio
from smoke import parse_args_with_smoke

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
LYNXC = str(Path(sys.executable).with_name("lynxc"))


def examples(server: str) -> list[tuple[str, dict]]:
    from lynxc.compiler.lower.server import compile_spec

    compiled = compile_spec(ROOT / "specs" / server)
    if compiled.value is None:
        raise SystemExit("\n".join(d.render() for d in compiled.diagnostics))
    return [(example.tool, example.arguments) for example in compiled.value.examples]


async def script_round(server: str, calls: list[tuple[str, dict]]) -> float:
    from mcp import Client, StdioServerParameters

    started = time.perf_counter()
    params = StdioServerParameters(
        command=LYNXC, args=["--project", str(ROOT), "serve", server], env=dict(os.environ), cwd=str(ROOT)
    )
    async with Client(params) as client:
        for tool, arguments in calls:
            await client.call_tool(tool, arguments)
    return time.perf_counter() - started


def command_round(*args: str) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([LYNXC, "test", *args], cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"lynxc test {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return seconds, done.stdout


def fuzz_calls(stdout: str) -> int:
    """Calls the fuzz cases made: drawn argument sets plus near-misses, per tool."""
    return sum(int(a) + int(b) for a, b in re.findall(r"fuzz \((\d+) drawn, (\d+) near-misses\)", stdout))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="countries-sql")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--fuzz", type=int, default=25, help="argument sets drawn per tool")
    args = parse_args_with_smoke(parser, rounds=1, fuzz=3)
    calls = examples(args.server)
    if not calls:
        raise SystemExit(f"{args.server} has no examples")
    script, command, fuzz, fuzz_rates = [], [], [], []
    for _ in range(args.rounds):  # interleaved, so that a busy moment hurts both alike
        script.append(anyio.run(script_round, args.server, calls))
        command.append(command_round(args.server)[0])
        seconds, out = command_round(args.server, "--fuzz", str(args.fuzz), "-k", "::fuzz")
        fuzz.append(seconds)
        fuzz_rates.append(fuzz_calls(out) / seconds)
    s, c, f = statistics.median(script), statistics.median(command), statistics.median(fuzz)
    print(f"{args.server}: {len(calls)} examples, {args.rounds} round(s), medians")
    print(f"{'':34}{'seconds':>10}{'ratio':>10}")
    print(f"{'script (serve + calls, no checks)':34}{s:>10.2f}{1:>10.2f}")
    print(f"{'lynxc test (build, serve, judge)':34}{c:>10.2f}{c / s:>10.2f}")
    print(f"{f'lynxc test --fuzz {args.fuzz}':34}{f:>10.2f}{f / s:>10.2f}")
    print(f"fuzz: {statistics.median(fuzz_rates):.1f} calls/s (drawn and near-miss arguments, checked)")
    print(json.dumps({"script_s": s, "test_s": c, "fuzz_s": f, "test_over_script": c / s}))


if __name__ == "__main__":
    main()
