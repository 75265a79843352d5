"""CLI start-up: `lynxc --help`, `lynxc diff` on two small tools/list files and `lynxc lint` on
one, against `python -c pass` (the floor any Python command pays), in the same run.

Every command runs as a fresh process; the commands are run alternately so machine noise hits
them alike. Medians, their excess over bare Python and their ratio to it are printed.

    python bench/cli_start.py [--runs 21] [--smoke]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from cold_start import alternated_medians  # bench/ is the script's folder, first on sys.path
from smoke import parse_args_with_smoke

ROOT = Path(__file__).resolve().parents[1]
LYNXC = str(Path(sys.executable).with_name("lynxc"))
VERSIONS = ROOT / "tests" / "data" / "mcp-tool-versions"
SMALL_BEFORE = str(VERSIONS / "server-memory_0.6.2.json")  # 9 tools, 6 KiB
SMALL_AFTER = str(VERSIONS / "server-memory_2026.8.31.json")  # 9 tools, 16 KiB
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "lynxc --help": [LYNXC, "--help"],
    "lynxc diff (two small tools/list)": [LYNXC, "diff", SMALL_BEFORE, SMALL_AFTER, "--fail-on", "never"],
    "lynxc lint (one small tools/list)": [LYNXC, "lint", SMALL_AFTER, "--fail-on", "never"],
    "lynxc lint specs/dot-harness": [LYNXC, "--project", str(ROOT), "lint", str(ROOT / "specs/dot-harness")],
}


def elapsed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    runs = parse_args_with_smoke(parser, runs=1).runs
    medians = alternated_medians(COMMANDS, runs, elapsed)
    floor = medians["python -c pass"]
    print(f"CLI start-up, process start -> exit, median of {runs} alternated runs")
    for name, median in medians.items():
        print(
            f"  {name:<36} {median * 1000:7.1f} ms   +{(median - floor) * 1000:6.1f} ms"
            f" over bare Python   ratio {median / floor:5.2f}x"
        )


if __name__ == "__main__":
    main()
