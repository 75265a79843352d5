"""`--smoke`, which every benchmark takes: the whole benchmark, end to end through the same code,
at a size that runs in seconds, so that CI (tests/test_benchmarks.py) runs every one of them and
none can rot unnoticed. Its figures mean nothing; its exit status does.

What counts as a benchmark: a `bench/*.py` file with an `if __name__ == "__main__":` block; it
must take `--smoke`, through `parse_args_with_smoke`. A module without that block (this one,
records_common.py) is a helper that benchmarks import; a program a benchmark starts as a process
of its own (servers/bare_server.py, cold start's reference) lives in a folder below bench/.
"""

from __future__ import annotations

import argparse
from typing import Any


def parse_args_with_smoke(parser: argparse.ArgumentParser, **sizes: Any) -> argparse.Namespace:
    """Add `--smoke` to `parser` and parse the command line. With `--smoke`, each option named in
    `sizes` that was left at its default takes the smoke value instead (an option given on the
    command line keeps its value); `args.smoke` tells the script, for what is not an option."""
    shown = ", ".join(f"--{name.replace('_', '-')} {value}" for name, value in sizes.items())
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"a tiny run that checks the benchmark end to end in seconds{f' ({shown})' if shown else ''}",
    )
    args = parser.parse_args()
    if args.smoke:
        for name, value in sizes.items():
            if getattr(args, name) == parser.get_default(name):
                setattr(args, name, value)
    return args
